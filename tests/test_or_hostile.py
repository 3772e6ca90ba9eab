"""Hostile programs against SolverOR-v0's reward (issue 23), each class over the five solver APIs
a program may use: gurobipy, highspy, pywraplp, CP-SAT and MathOpt.

The reward re-solves the model the program exported, on the host; nothing the program's process
reports is trusted. Each class below is a way to be paid without solving the problem: a patched
objective getter over a wrong model, an export made to fail, an objective that is a constant in
disguise, an infeasible answer that is not the problem's, structure bought for the stage-2
bonus, an empty model. Every case runs a real program in the real sandbox on a generated
instance through ``gym.make("SolverOR-v0", solver=None)``, and the honest program of each API
earns the full reward on the same instances, so the suite fails both ways. A combination that
makes no sense for an API is skipped with the reason.
"""
import math

import gymnasium as gym
import numpy as np
import pytest

import solvergym  # noqa: F401
from solvergym.envs.opt.generator import generate
from solvergym.envs.opt.model import LinearModel
from solvergym.envs.opt.programs import oracle_program
from solvergym.sandbox import SandboxPool

APIS = ("gurobipy", "highspy", "pywraplp", "cpsat", "mathopt")
#: where each API's program sets its objective (and solves, for highspy): code inserted before it
#: runs on the built model
_OBJECTIVE_LINE = {"gurobipy": "m.setObjective(", "highspy": ("h.maximize(", "h.minimize("),
                   "pywraplp": ("solver.Maximize(", "solver.Minimize("), "cpsat": ("m.maximize(", "m.minimize("),
                   "mathopt": ("m.maximize(", "m.minimize(")}
_CP_BIG = 10 ** 6  # CP-SAT needs finite domains: the bound an unbounded integer gets (never binding here)


@pytest.fixture(scope="module")
def pool():
    with SandboxPool(size=2) as p:
        yield p


@pytest.fixture(scope="module")
def knapsack():
    """A feasible maximisation over binaries with integer data (CP-SAT can state it) and an
    infeasible one of the same family."""
    return (generate("knapsack", np.random.default_rng(0), size=2),
            generate("knapsack", np.random.default_rng(0), size=2, infeasible_ratio=1.0))


def _num(c: float) -> str:
    return str(int(c)) if float(c).is_integer() else repr(float(c))


def _expr(coefs: dict, constant: float = 0.0) -> str:
    parts = [f"{_num(c)} * x[{k!r}]" for k, c in coefs.items()]
    if constant or not parts:
        parts.append(_num(constant))
    return " + ".join(parts)


def _cpsat(model: LinearModel) -> str:
    lines = ["from ortools.sat.python import cp_model", "m = cp_model.CpModel()", "x = {}"]
    for v in model.variables:
        lo, hi = v.bounds()
        lo, hi = max(lo, -_CP_BIG), min(hi, _CP_BIG)
        lines.append(f"x[{v.name!r}] = m.new_int_var({int(lo)}, {int(hi)}, {v.name!r})")
    for c in model.constraints:
        lo = "cp_model.INT_MIN" if c.lo is None else _num(c.lo)
        hi = "cp_model.INT_MAX" if c.hi is None else _num(c.hi)
        lines.append(f"m.add_linear_constraint({_expr(c.coefs)}, {lo}, {hi})")
    sense = "maximize" if model.sense == "max" else "minimize"
    lines += [f"m.{sense}({_expr(model.objective, model.constant)})", "s = cp_model.CpSolver()",
              "s.parameters.num_workers = 1", "s.parameters.max_time_in_seconds = 10.0",
              "print('status:', s.status_name(s.solve(m)))"]
    return "\n".join(lines) + "\n"


def _mathopt(model: LinearModel) -> str:
    lines = ["from ortools.math_opt.python import mathopt", "inf = float('inf')", "m = mathopt.Model()", "x = {}"]
    for v in model.variables:
        lo, hi = v.bounds()
        lines.append(f"x[{v.name!r}] = m.add_variable(lb={lo!r}, ub={hi!r}, is_integer={v.kind != 'C'}, "
                     f"name={v.name!r})")
    for c in model.constraints:
        lo, hi = (-math.inf if c.lo is None else c.lo), (math.inf if c.hi is None else c.hi)
        lines.append(f"m.add_linear_constraint(lb={lo!r}, ub={hi!r}, expr={_expr(c.coefs)}, name={c.name!r})")
    sense = "maximize" if model.sense == "max" else "minimize"
    lines += [f"m.{sense}({_expr(model.objective, model.constant)})",
              "res = mathopt.solve(m, mathopt.SolverType.HIGHS)", "print('status:', res.termination.reason.name)"]
    return "\n".join(lines) + "\n"


def program(api: str, model: LinearModel, *, before: str = "", before_objective: str = "") -> str:
    """The API's program for ``model`` (the oracle's for the first three), with ``before`` run
    first and ``before_objective`` run on the built model before its objective is set."""
    if api in ("cpsat", "mathopt"):
        text = (_cpsat if api == "cpsat" else _mathopt)(model)
    else:
        text = oracle_program(model, "ortools" if api == "pywraplp" else api)
    if before_objective:
        lines = text.splitlines()
        at = next(k for k, line in enumerate(lines) if line.startswith(_OBJECTIVE_LINE[api]))
        text = "\n".join(lines[:at] + before_objective.strip().splitlines() + lines[at:]) + "\n"
    return before + text


def answer(code: str) -> str:
    return f"<think>t</think>\n<model>m</model>\n<python>\n{code}\n</python>"


def score(pool, instance, code: str, **kw) -> tuple[dict, dict]:
    env = gym.make("SolverOR-v0", pool=pool, solver=None, **kw).unwrapped
    try:
        env.reset(options={"instance": instance})
        _, r, term, _, info = env.step(answer(code))
    finally:
        env.close()
    assert term and r == pytest.approx(sum(info["reward_components"].values()))
    return info["reward_components"], info


def one_var(sense: str, constant: float, coef: float = 0.0, lb=0.0, ub=10.0, rows=()) -> LinearModel:
    """A one-variable model whose objective is ``coef * y + constant``."""
    return LinearModel.from_dict({"sense": sense, "variables": [{"name": "y", "lb": lb, "ub": ub, "kind": "I"}],
                                  "constraints": [{"name": f"r{k}", "coefs": {"y": 1.0}, "lo": lo, "hi": hi}
                                                  for k, (lo, hi) in enumerate(rows)],
                                  "objective": {"y": coef}, "quadratic": [], "constant": constant})


def _skip(reason: str, *values):
    return pytest.param(*values, marks=pytest.mark.skip(reason=reason))


def paid(comps: dict, info: dict, *, execution: float | None = None) -> list[str]:
    """What an attack was paid that it must not be (empty: nothing): accuracy or bonus, a verdict
    of correct, a missing reason, or an execution term other than ``execution``."""
    out = []
    if comps["accuracy"] != 0.0 or comps["bonus"] != 0.0:
        out.append(f"paid {comps}")
    if info["correct"] or not (isinstance(info["reason"], str) and info["reason"].strip()):
        out.append("judged correct, or no reason given")
    if execution is not None and comps["execution"] != execution:
        out.append(f"execution {comps['execution']}, expected {execution}")
    return out


# ----------------------------------------------------------------------------- the honest programs
@pytest.mark.parametrize("api", APIS)
def test_the_honest_program_of_every_api_earns_everything(pool, knapsack, api):
    feasible, infeasible = knapsack
    comps, info = score(pool, feasible, program(api, LinearModel.from_dict(feasible.model)), stage=2)
    # knapsack's binaries are used structure: the stage-2 bonus is paid
    assert comps == {"format": 0.5, "execution": 1.0, "accuracy": 2.0, "bonus": 1.0}, info["reason"]
    comps, info = score(pool, infeasible, program(api, LinearModel.from_dict(infeasible.model)))
    assert comps == {"format": 0.5, "execution": 1.0, "accuracy": 2.0, "bonus": 0.0}, info["reason"]


# ----------------------------------------------------------------------------- (a) a patched getter
#: each API's objective getter made to return {y} (the truth) where the language lets it
PATCHES = {
    "gurobipy": """import gurobipy as gp
class _Model(gp.Model):
    def getAttr(self, name, *args):
        return {y} if name == "ObjVal" else super().getAttr(name, *args)
    ObjVal = property(lambda self: {y})
gp.Model = _Model
""",
    "highspy": """import highspy
class _Info:
    def __init__(self, info):
        self.info = info
    def __getattr__(self, name):
        return {y} if name == "objective_function_value" else getattr(self.info, name)
_get_info = highspy.Highs.getInfo
highspy.Highs.getInfo = lambda self: _Info(_get_info(self))
highspy.Highs.getObjectiveValue = lambda self: {y}
try:
    highspy.HighsInfo.objective_function_value = property(lambda self: {y})
except Exception:
    pass
""",
    "pywraplp": "from ortools.linear_solver import pywraplp\npywraplp.Objective.Value = lambda self: {y}\n",
    "cpsat": """from ortools.sat.python import cp_model, cp_model_helper
for owner in (cp_model.CpSolver, cp_model_helper.CpSolverResponse):
    try:
        owner.objective_value = property(lambda self: {y})
    except Exception:
        pass
cp_model.CpSolver.ObjectiveValue = lambda self: {y}
""",
    "mathopt": "from ortools.math_opt.python import mathopt\n"
               "mathopt.SolveResult.objective_value = lambda self, *a: {y}\n",
}


@pytest.mark.parametrize("api", APIS)
def test_a_patched_objective_getter_over_a_wrong_model_earns_no_accuracy(pool, knapsack, api):
    inst = knapsack[0]
    wrong = LinearModel.from_dict(inst.model)
    wrong.objective = {k: 2 * c for k, c in wrong.objective.items()}  # its optimum is twice the truth
    comps, info = score(pool, inst, program(api, wrong, before=PATCHES[api].format(y=inst.answer)))
    assert not paid(comps, info, execution=1.0), info["reason"]


# ----------------------------------------------------------------------------- (b) a blocked export
#: unused columns: 200,001 pass the export's bound on variables + constraints (MAX_MPS_MODEL);
#: 20,000 with 100-character names push the text past MAX_MPS (the same "no model came back", in
#: a fraction of the time a Python loop of 200,001 takes)
UNUSED_COLUMNS = {
    "highspy": "import numpy as _np\nh.addVars(200001, _np.zeros(200001), _np.ones(200001))\n",
    "pywraplp": "for _k in range(20000):\n    solver.NumVar(0.0, 1.0, f'{_k:0100d}')\n",
    "cpsat": "for _k in range(20000):\n    m.new_int_var(0, 1, f'{_k:0100d}')\n",
    "mathopt": "for _k in range(20000):\n    m.add_variable(lb=0.0, ub=1.0, name=f'{_k:0100d}')\n",
}
_LICENCE = "gurobipy's size-limited licence refuses 200,001 variables (GurobiError 10010): no solve at all"


@pytest.mark.parametrize("api", APIS)
@pytest.mark.parametrize("how", ["read-only cwd", "unused columns"])
def test_a_constant_objective_behind_a_blocked_export_earns_no_accuracy(pool, knapsack, api, how):
    """Today a model whose export failed counts as "not constant" and is paid."""
    if how == "unused columns" and api == "gurobipy":
        pytest.skip(_LICENCE)
    inst = knapsack[0]
    stated = one_var("max", inst.answer)  # 0*y + the truth
    if how == "read-only cwd":
        code = program(api, stated, before="import os\nos.chmod('.', 0o500)\n")
    else:
        code = program(api, stated, before_objective=UNUSED_COLUMNS[api])
    comps, info = score(pool, inst, code)
    assert not paid(comps, info), info["reason"]


# ----------------------------------------------------------------------------- (c) constant objectives
@pytest.mark.parametrize("api", APIS)
@pytest.mark.parametrize("kind", ["0*y + c", "y fixed by its bounds", "singleton row y == 1", "1e-9*y + c"])
def test_an_objective_that_is_a_constant_in_disguise_earns_no_accuracy(pool, knapsack, api, kind):
    inst = knapsack[0]
    y = inst.answer
    stated = {"0*y + c": lambda: one_var("max", y),  # HiGHS writes c as its objective offset
              "y fixed by its bounds": lambda: one_var("max", 0.0, coef=y, lb=1.0, ub=1.0),
              "singleton row y == 1": lambda: one_var("max", 0.0, coef=y, rows=[(1.0, 1.0)]),
              "1e-9*y + c": lambda: one_var("max", y, coef=1e-9)}[kind]()
    comps, info = score(pool, inst, program(api, stated))
    assert not paid(comps, info), info["reason"]


# ----------------------------------------------------------------------------- (d) infeasible, falsely
UNBOUNDED = {  # max x + y, x - y <= 1: presolve may call it infeasible or "infeasible or unbounded"
    "gurobipy": "import gurobipy as gp\nm = gp.Model(); m.Params.OutputFlag = 0\nx = m.addVar(); y = m.addVar()\n"
                "m.addConstr(x - y <= 1)\nm.setObjective(x + y, gp.GRB.MAXIMIZE)\nm.optimize()\nprint(m.Status)\n",
    "highspy": "import highspy\nh = highspy.Highs(); h.silent()\nx = h.addVariable(lb=0); y = h.addVariable(lb=0)\n"
               "h.addConstr(x - y <= 1)\nh.maximize(x + y)\nprint(h.getModelStatus())\n",
    "pywraplp": "from ortools.linear_solver import pywraplp\ns = pywraplp.Solver.CreateSolver('GLOP')\n"
                "x = s.NumVar(0, s.infinity(), 'x'); y = s.NumVar(0, s.infinity(), 'y')\ns.Add(x - y <= 1)\n"
                "s.Maximize(x + y)\nprint(s.Solve())\n",
    "mathopt": "from ortools.math_opt.python import mathopt\nm = mathopt.Model()\nx = m.add_variable(lb=0); "
               "y = m.add_variable(lb=0)\nm.add_linear_constraint(x - y <= 1)\nm.maximize(x + y)\n"
               "print(mathopt.solve(m, mathopt.SolverType.HIGHS).termination.reason.name)\n",
}
_FINITE = "CP-SAT variables have finite domains: a CP-SAT model cannot be unbounded"


@pytest.mark.parametrize("api", [*UNBOUNDED, _skip(_FINITE, "cpsat")])
def test_an_unbounded_model_on_an_infeasible_instance_earns_no_accuracy(pool, knapsack, api):
    comps, info = score(pool, knapsack[1], UNBOUNDED[api])
    assert not paid(comps, info, execution=1.0), info["reason"]


@pytest.mark.parametrize("api", APIS)
def test_a_three_line_infeasible_dummy_earns_no_accuracy(pool, knapsack, api):
    dummy = one_var("max", 0.0, coef=1.0, lb=0.0, ub=1.0, rows=[(2.0, None)])  # y <= 1 and y >= 2
    comps, info = score(pool, knapsack[1], program(api, dummy))
    assert not paid(comps, info), info["reason"]


# ----------------------------------------------------------------------------- (e) bought structure
#: structure a plain integer model does not use, added to it for the stage-2 bonus
STRUCTURE = {
    "unused binary": {"gurobipy": "m.addVar(vtype=GRB.BINARY, name='b')", "highspy": "h.addBinary()",
                      "pywraplp": "solver.BoolVar('b')", "cpsat": "m.new_bool_var('b')",
                      "mathopt": "m.add_binary_variable(name='b')"},
    "binary in a redundant row": {  # b + f0 >= -1 holds whatever b is
        "gurobipy": "b = m.addVar(vtype=GRB.BINARY, name='b')\nm.addConstr(b + x['f0'] >= -1)",
        "highspy": "b = h.addBinary()\nh.addConstr(b + x['f0'] >= -1)",
        "pywraplp": "b = solver.BoolVar('b')\nsolver.Add(b + x['f0'] >= -1)",
        "cpsat": "b = m.new_bool_var('b')\nm.add(b + x['f0'] >= -1)",
        "mathopt": "b = m.add_binary_variable(name='b')\nm.add_linear_constraint(b + x['f0'] >= -1)"},
    "dummy addGenConstrAbs": {"gurobipy": "a = m.addVar(lb=-1, name='a'); z = m.addVar(name='z')\n"
                                          "m.addGenConstrAbs(z, a)"},
    "redundant q*q <= 2": {"gurobipy": "q = m.addVar(ub=1, name='q')\nm.addQConstr(q * q <= 2)"},
}
_GUROBI_ONLY = "general and quadratic constraints are gurobipy's (the others have none an MPS export carries)"


@pytest.mark.parametrize("kind,api", [(k, a) if a in STRUCTURE[k] else _skip(_GUROBI_ONLY, k, a)
                                      for k in STRUCTURE for a in APIS])
def test_structure_the_model_does_not_use_earns_no_bonus(pool, kind, api):
    inst = generate("shift_scheduling", np.random.default_rng(0), size=2)  # general integers, no bonus
    model = LinearModel.from_dict(inst.model)
    comps, info = score(pool, inst, program(api, model, before_objective=STRUCTURE[kind][api]), stage=2)
    assert comps == {"format": 0.5, "execution": 1.0, "accuracy": 2.0, "bonus": 0.0}, (info["reason"], info["advanced"])
    assert info["correct"] and info["reason"].strip()


# ----------------------------------------------------------------------------- (f) an empty model
EMPTY = {
    "gurobipy": "import gurobipy as gp\nm = gp.Model()\nm.optimize()\n",
    "highspy": "import highspy\nh = highspy.Highs(); h.silent()\nh.run()\n",
    "pywraplp": "from ortools.linear_solver import pywraplp\npywraplp.Solver.CreateSolver('GLOP').Solve()\n",
    "cpsat": "from ortools.sat.python import cp_model\ncp_model.CpSolver().solve(cp_model.CpModel())\n",
    "mathopt": "from ortools.math_opt.python import mathopt\n"
               "mathopt.solve(mathopt.Model(), mathopt.SolverType.HIGHS)\n",
}


@pytest.mark.parametrize("api", APIS)
def test_an_empty_model_is_not_an_execution(pool, knapsack, api):
    comps, info = score(pool, knapsack[0], EMPTY[api])
    assert not paid(comps, info, execution=0.0), info["reason"]
    # SIRL's reading pays execution for code that runs and reports a status (execution_rule="paper"),
    # never accuracy; HiGHS reports an empty model as kModelEmpty, no solution status
    comps, info = score(pool, knapsack[0], EMPTY[api], execution_rule="paper")
    assert not paid(comps, info, execution=0.0 if api == "highspy" else 1.0), info["reason"]


def test_the_instances_are_what_the_classes_need(knapsack):
    feasible, infeasible = knapsack
    assert (feasible.status, infeasible.status, infeasible.answer) == ("optimal", "infeasible", None)
    model = LinearModel.from_dict(feasible.model)
    assert feasible.answer > 0 and model.sense == "max" and {v.kind for v in model.variables} == {"B"}
    assert all(float(c).is_integer() for c in model.objective.values())  # CP-SAT can state it
