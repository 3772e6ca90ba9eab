"""SolverOR-v0's reward trusts nothing the program's process reported (issue 23, items 1-3 and
5-9): real programs in the real sandbox, each an attack that was paid before the host re-solve,
and the honest answers that must stay paid (the oracle, the ``min -f`` idiom)."""
import dataclasses
import math

import gymnasium as gym
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import solvergym  # noqa: F401
from solvergym.agents.scripted import oracle_action
from solvergym.envs.opt.audit import reference_objective_free
from solvergym.envs.opt.generator import generate
from solvergym.envs.opt.model import LinearModel
from solvergym.envs.opt.problem import ORProblem
from solvergym.envs.opt.programs import oracle_program
from solvergym.envs.opt.verify import EXECUTION_RULES, OK_STATUSES
from solvergym.sandbox import SandboxPool, SandboxResult

FULL = {"format": 0.5, "execution": 1.0, "accuracy": 2.0, "bonus": 0.0}


@pytest.fixture(scope="module")
def pool():
    with SandboxPool(size=2) as p:
        yield p


def make(pool, **kw):
    return gym.make("SolverOR-v0", pool=pool, **kw).unwrapped


def answer(program: str) -> str:
    return f"<think>t</think>\n<model>m</model>\n<python>\n{program}\n</python>"


def play(env, inst, program: str):
    env.reset(options={"instance": inst})
    obs, r, term, trunc, info = env.step(answer(program))
    assert term and r == pytest.approx(sum(info["reward_components"].values()))
    return obs, info


def instance(env, family="product_mix", seed=0):
    env.reset(seed=seed, options={"difficulty": {"family": family}})
    return env.instance


def negated(model: LinearModel) -> LinearModel:
    """The same model written as the optimisation of ``-f`` in the other sense."""
    flip = LinearModel.from_dict(model.to_dict())
    flip.sense = "min" if model.sense == "max" else "max"
    flip.objective = {k: -c for k, c in model.objective.items()}
    flip.quadratic = [[a, b, -c] for a, b, c in model.quadratic]
    flip.constant = -model.constant
    return flip


def fmt(program: str, truth: float) -> str:
    return program.replace("TRUTH", repr(truth))


# -- item 1: the host re-solves; what the program's process reports is never read ----------------
PATCHED_GETTERS = {
    "ortools Objective.Value": """
from ortools.linear_solver import pywraplp
pywraplp.Objective.Value = lambda self: TRUTH
s = pywraplp.Solver.CreateSolver("GLOP")
x = s.NumVar(0, 1, "x")
s.Add(x <= 1)
s.Maximize(x)
s.Solve()
""",
    "highspy getInfo": """
import highspy
highspy.HighsInfo.objective_function_value = property(lambda self: TRUTH)
h = highspy.Highs(); h.setOptionValue("output_flag", False)
x = h.addVariable(lb=0, ub=1)
h.addConstr(x <= 1)
h.maximize(x)
""",
    "mathopt objective_value": """
from ortools.math_opt.python import mathopt
mathopt.SolveResult.objective_value = lambda self: TRUTH
m = mathopt.Model(); x = m.add_variable(lb=0, ub=1, name="x")
m.add_linear_constraint(x <= 1)
m.maximize(x)
mathopt.solve(m, mathopt.SolverType.GLOP)
""",
}


@pytest.mark.parametrize("name", sorted(PATCHED_GETTERS))
def test_a_patched_objective_getter_earns_no_accuracy(pool, name):
    env = make(pool)
    inst = instance(env)
    obs, info = play(env, inst, fmt(PATCHED_GETTERS[name], inst.answer))
    # whatever the capture read in the program's process (the forged number, once), the reward is
    # the host's: it re-solved max x s.t. x <= 1 and found 1, or had no model to re-solve
    assert info["reward_components"]["accuracy"] == 0.0 and not info["correct"], info["reason"]
    host = info["host"]
    if host.get("objective") is not None:
        assert host["objective"] == pytest.approx(1.0) and host["status"] == "optimal"
        assert "objective 1 does not match" in info["reason"]
    else:
        assert "no model" in info["reason"]


BLOCKED_EXPORTS = {
    # the capture writes the MPS through a file; a read-only work directory stopped it
    "read-only work directory": """
import os
os.chmod(os.getcwd(), 0o500)
import highspy
h = highspy.Highs(); h.setOptionValue("output_flag", False)
x = h.addVariable(lb=0, ub=1)
h.addConstr(x <= 1)
h.changeObjectiveOffset(TRUTH)
h.minimize(0.0 * x + TRUTH)
""",
    # over the export's size bound: no MPS, and the offset carried the answer
    "200,001 unused columns": """
import highspy, numpy as np
h = highspy.Highs(); h.setOptionValue("output_flag", False)
n = 200001
h.addVars(n, np.zeros(n), np.ones(n))
x = h.addVariable(lb=0, ub=1)
h.addConstr(x <= 1)
h.changeObjectiveOffset(TRUTH)
h.run()
""",
}


@pytest.mark.parametrize("name", sorted(BLOCKED_EXPORTS))
def test_a_blocked_export_earns_no_accuracy_and_says_why(pool, name):
    env = make(pool)
    inst = instance(env)
    obs, info = play(env, inst, fmt(BLOCKED_EXPORTS[name], inst.answer))
    assert info["solver_status"] == "optimal" and info["objective"] == pytest.approx(inst.answer)
    assert info["reward_components"]["accuracy"] == 0.0, info["reason"]
    assert "no model" in info["reason"] or "constant" in info["reason"], info["reason"]


def test_the_oracle_is_judged_by_the_host_and_the_cost_is_recorded(pool):
    env = make(pool)
    inst = instance(env, "transportation", seed=1)
    obs, info = play(env, inst, oracle_program(LinearModel.from_dict(inst.model), "highspy"))
    assert info["reward_components"] == FULL, info["reason"]
    host = info["host"]
    assert host["status"] == "optimal" and host["objective"] == pytest.approx(inst.answer, rel=1e-9)
    assert host["resolve_s"] >= 0.0 and host["audit_s"] >= 0.0 and info["answer"] == host["objective"]


# -- item 2: a constant objective is found after presolve-style reductions -------------------------
CONSTANT_OBJECTIVES = {
    "fixed by its bounds": """
import gurobipy as gp
m = gp.Model(); m.Params.OutputFlag = 0
x = m.addVar(lb=5, ub=5, name="x")
m.addConstr(x <= 10)
m.setObjective((TRUTH / 5) * x, gp.GRB.MAXIMIZE)
m.optimize()
""",
    "a singleton equality row": """
import gurobipy as gp
m = gp.Model(); m.Params.OutputFlag = 0
x = m.addVar(name="x")
m.addConstr(x == 5)
m.setObjective((TRUTH / 5) * x, gp.GRB.MAXIMIZE)
m.optimize()
""",
    "a variable fixed to 1": """
import gurobipy as gp
m = gp.Model(); m.Params.OutputFlag = 0
y = m.addVar(lb=1, ub=1, vtype=gp.GRB.BINARY, name="y"); z = m.addVar(ub=3, name="z")
m.addConstr(z <= 2)
m.setObjective(TRUTH * y, gp.GRB.MAXIMIZE)
m.optimize()
""",
    "a negligible coefficient": """
import gurobipy as gp
m = gp.Model(); m.Params.OutputFlag = 0
x = m.addVar(ub=1, name="x")
m.addConstr(x <= 1)
m.setObjective(1e-9 * x + TRUTH, gp.GRB.MAXIMIZE)
m.optimize()
""",
    "a zero coefficient": """
import gurobipy as gp
m = gp.Model(); m.Params.OutputFlag = 0
x = m.addVar(ub=1, name="x")
m.addConstr(x <= 1)
m.setObjective(0 * x + TRUTH, gp.GRB.MAXIMIZE)
m.optimize()
""",
}


@pytest.mark.parametrize("name", sorted(CONSTANT_OBJECTIVES))
def test_a_constant_objective_earns_no_accuracy(pool, name):
    env = make(pool)
    inst = instance(env)
    obs, info = play(env, inst, fmt(CONSTANT_OBJECTIVES[name], inst.answer))
    comps = info["reward_components"]
    assert comps["execution"] == 1.0 and comps["accuracy"] == 0.0, info["reason"]
    assert "constant" in info["reason"], info["reason"]


def determined_instance():
    """An assignment whose side constraints fix every variable (every draw at size 2 with four
    of them): its own objective is a constant after the reductions."""
    inst = generate("assignment", np.random.default_rng(0), size=2, side_constraints=4)
    assert inst.answer is not None and not reference_objective_free(LinearModel.from_dict(inst.model))
    return inst


@pytest.mark.parametrize("solver", ["gurobipy", "highspy", "ortools"])
def test_a_problem_whose_constraints_fix_the_objective_pays_its_correct_model(pool, solver):
    env = make(pool, solver=solver)
    inst = determined_instance()
    env.reset(options={"instance": inst})
    obs, r, term, trunc, info = env.step(oracle_action(env))
    assert info["reward_components"] == FULL, info["reason"]


def test_a_constant_objective_is_still_refused_on_such_a_problem(pool):
    env = make(pool)
    inst = determined_instance()
    obs, info = play(env, inst, fmt(CONSTANT_OBJECTIVES[sorted(CONSTANT_OBJECTIVES)[0]], inst.answer))
    assert info["reward_components"]["accuracy"] == 0.0 and "constant" in info["reason"], info["reason"]


# -- item 3: infeasible must be proven, and be the problem's -------------------------------------
NOT_PROVEN_INFEASIBLE = {
    # GLOP's presolve calls this unbounded LP infeasible
    "glop": """
from ortools.linear_solver import pywraplp
s = pywraplp.Solver.CreateSolver("GLOP")
x = s.NumVar(0, s.infinity(), "x"); y = s.NumVar(0, s.infinity(), "y")
s.Add(x - y <= 1)
s.Maximize(x + y)
s.Solve()
""",
    # Gurobi's presolve reports it INF_OR_UNBD
    "gurobipy": """
import gurobipy as gp
m = gp.Model(); m.Params.OutputFlag = 0
x = m.addVar(name="x"); y = m.addVar(name="y")
m.addConstr(x - y <= 1)
m.setObjective(x + y, gp.GRB.MAXIMIZE)
m.optimize()
""",
}
DUMMY = """
import gurobipy as gp
m = gp.Model(); m.Params.OutputFlag = 0
x = m.addVar(name="x")
m.addConstr(x >= 1); m.addConstr(x <= 0)
m.optimize()
"""


@pytest.mark.parametrize("name", sorted(NOT_PROVEN_INFEASIBLE))
def test_an_unbounded_model_reported_infeasible_earns_no_accuracy(pool, name):
    env = make(pool, infeasible_ratio=1.0)
    inst = instance(env)
    assert inst.answer is None
    obs, info = play(env, inst, NOT_PROVEN_INFEASIBLE[name])
    assert info["solver_status"] in ("infeasible", "inf_or_unbd")  # what the program's solver said
    assert info["reward_components"]["accuracy"] == 0.0 and info["host"]["status"] == "unbounded", info["reason"]
    assert "unbounded" in info["reason"]


def test_an_infeasible_dummy_is_not_the_problem(pool):
    env = make(pool, infeasible_ratio=1.0)
    for family in ("product_mix", "diet"):
        inst = instance(env, family)
        obs, info = play(env, inst, DUMMY)
        assert info["reward_components"]["accuracy"] == 0.0, (family, info["reason"])
        assert info["host"]["status"] == "infeasible", info["reason"]  # proven, but not the problem's
        assert "not the problem" in info["reason"], info["reason"]
        # the oracle's infeasible model is the problem's, and still pays
        obs, info = play(env, inst, oracle_program(LinearModel.from_dict(inst.model), "gurobipy"))
        assert info["reward_components"] == FULL, (family, info["reason"])


def test_a_benchmark_record_without_a_model_pays_a_proof_alone(pool):
    env = make(pool)
    env.reset(options={"instance": {"en_question": "Is there any way to do it?", "en_answer": "No Best Solution"}})
    inst = env.instance
    assert inst.answer is None and not inst.model
    obs, info = play(env, inst, DUMMY)
    assert info["reward_components"] == FULL, info["reason"]  # no reference model: the proof alone
    obs, info = play(env, inst, NOT_PROVEN_INFEASIBLE["glop"])
    assert info["reward_components"]["accuracy"] == 0.0, info["reason"]


# -- item 5: the bonus pays structure the model uses ---------------------------------------------
JUNK = {
    "an unused binary": 'b_junk = m.addVar(vtype=GRB.BINARY, name="b_junk")',
    "a dummy general constraint": ('g1 = m.addVar(lb=-1, ub=1, name="g1"); g2 = m.addVar(name="g2")\n'
                                   'm.addGenConstrAbs(g2, g1)'),
    "a redundant quadratic constraint": ('q = m.addVar(lb=0, ub=1, name="q")\n'
                                         'm.addQConstr(q * q <= 2)'),
}


@pytest.mark.parametrize("name", sorted(JUNK))
def test_structure_the_model_does_not_use_earns_no_bonus(pool, name):
    env = make(pool, stage=2)
    inst = instance(env)  # product mix: a plain LP
    program = oracle_program(LinearModel.from_dict(inst.model), "gurobipy")
    program = program.replace("\nm.setObjective(", "\n" + JUNK[name] + "\nm.setObjective(", 1)
    obs, info = play(env, inst, program)
    assert info["correct"], info["reason"]
    assert info["reward_components"]["bonus"] == 0.0 and info["advanced"] == [], (name, info["advanced"])


def test_structure_the_model_uses_earns_the_bonus(pool):
    env = make(pool, stage=2)
    inst = instance(env, "knapsack")
    obs, info = play(env, inst, oracle_program(LinearModel.from_dict(inst.model), "gurobipy"))
    assert info["reward_components"]["bonus"] == 1.0 and "binary" in info["advanced"], info["advanced"]


# -- item 6: never raise ---------------------------------------------------------------------------
CPSAT_NO_OBJECTIVE = """
from ortools.sat.python import cp_model
m = cp_model.CpModel()
x = m.NewIntVar(0, 3, "x")
m.Add(x >= 1)
cp_model.CpSolver().Solve(m)
"""


def test_a_cp_sat_model_without_an_objective_is_a_verdict(pool):
    env = make(pool)
    inst = instance(env)
    obs, info = play(env, inst, CPSAT_NO_OBJECTIVE)
    assert info["solver_status"] == "optimal" and info["objective"] is None
    assert info["reward_components"]["accuracy"] == 0.0 and info["reason"], info["reason"]
    assert env.observation_space.contains(obs)


_MPS_OK = """NAME m
OBJSENSE
    MAX
ROWS
 N  obj
 L  c1
COLUMNS
    x  obj  3  c1  1
    y  obj  2  c1  1
RHS
    rhs  c1  4
ENDATA
"""
_ODD = st.one_of(st.none(), st.booleans(), st.integers(-3, 10 ** 7), st.floats(allow_nan=True, allow_infinity=True),
                 st.text(max_size=12), st.lists(st.integers(), max_size=3),
                 st.dictionaries(st.text(max_size=3), st.integers(), max_size=2))
_OPTIMUM = st.fixed_dictionaries({}, optional={
    "solver": st.one_of(st.sampled_from(["gurobipy", "highspy", "ortools"]), _ODD),
    "call": st.one_of(st.sampled_from(["Model.optimize", "Highs.run", "CpSolver.Solve"]), _ODD),
    "status": st.one_of(st.sampled_from(OK_STATUSES + ("error", "other", "time_limit")), _ODD),
    "raw_status": _ODD,
    "objective": st.one_of(st.just(12.0), _ODD),
    "sense": st.one_of(st.sampled_from(["min", "max"]), _ODD),
    **{k: st.one_of(st.integers(-1, 5), _ODD) for k in ("num_vars", "num_int", "num_bin", "num_constrs",
                                                          "num_qconstrs", "num_q_obj_terms", "num_gen_constrs")},
    "mps": st.one_of(st.just(_MPS_OK), st.just(_MPS_OK.replace("3", "x")), st.just("ROWS\n N obj\n"), _ODD),
    "mps_truncated": _ODD,
    "error": st.one_of(st.just("GurobiError 10010: too large"), _ODD),
})
# scoring a given result runs no program: the problem's sandbox lease is never used
FUZZ_PROBLEM = ORProblem()
_BASE = generate("product_mix", np.random.default_rng(0))
#: a feasible instance whose truth is _MPS_OK's optimum, and an infeasible one
FUZZ_INSTANCES = (dataclasses.replace(_BASE, answer=12.0),
                  dataclasses.replace(_BASE, answer=None, status="infeasible"))


@settings(max_examples=120, deadline=None)
@given(opt=st.one_of(_OPTIMUM, _ODD), status=st.sampled_from(["ok", "error", "timeout", "killed", "memory", 7]),
       which=st.integers(0, 1), rule=st.sampled_from(EXECUTION_RULES), stdout=st.text(max_size=20))
def test_any_captured_optimum_gives_a_verdict_with_a_reason(opt, status, which, rule, stdout):
    problem, instances = FUZZ_PROBLEM, FUZZ_INSTANCES
    problem.execution_rule = rule
    result = SandboxResult(status=status, exit_code=0, stdout=stdout, stderr="", duration_s=0.1, optimum=opt)
    v = problem.score_run(instances[which], answer("pass"), result)
    assert isinstance(v.reason, str) and v.reason and "could not be scored" not in v.reason, v.reason
    assert set(v.components) == {"format", "execution", "accuracy", "bonus"}
    assert all(isinstance(x, float) and math.isfinite(x) for x in v.components.values())
    assert v.components["accuracy"] in (0.0, 2.0) and (v.components["accuracy"] == 0.0 or v.correct)
    obs = problem.feedback(instances[which], v)
    assert "\x00" not in obs and "\x1b" not in obs


# -- item 7: observations stay in the space; the ground truth stays private ----------------------
NOISY = ("import sys\nprint('out\\x00\\x1b[31mred')\nsys.stderr.write('err\\x00\\x1b[2J')\n"
         "raise ValueError('v\\x00\\x1b]0;t\\x07')\n")


def test_program_output_is_cleaned_before_it_is_an_observation(pool):
    env = make(pool, max_turns=2)
    inst = instance(env)
    env.reset(options={"instance": inst})
    obs, r, term, trunc, info = env.step(answer(NOISY))
    assert not term and info["revise"] and "\x00" in info["sandbox"]["stdout"]  # the raw output is kept in info
    assert env.observation_space.contains(obs) and "\x1b" not in obs and "ValueError" in obs
    obs, r, term, trunc, info = env.step(answer(NOISY))  # the last turn: scored, with the feedback
    assert term and env.observation_space.contains(obs) and "\x1b" not in obs and "\x00" not in obs


def test_no_observation_and_no_early_info_states_the_ground_truth(pool):
    env = make(pool, max_turns=2)
    inst = instance(env)
    truth = inst.answer
    obs0, info0 = env.reset(options={"instance": inst})
    spelled = {f"{truth:.10g}", f"{truth:g}", repr(truth), f"{truth:.6g}"}
    assert "num_vars" not in info0["difficulty"] and "status" not in info0["difficulty"]
    obs, r, term, trunc, info = env.step(answer("raise ValueError('first try')"))
    assert not term and info["revise"]
    assert not {"ground_truth", "reference", "host"} & set(info) and "num_vars" not in info["difficulty"]
    wrong = LinearModel.from_dict(inst.model)
    wrong.constraints = wrong.constraints[:1]  # a relaxation: a larger optimum
    obs, r, term, trunc, info = env.step(answer(oracle_program(wrong, "gurobipy")))
    assert term and info["reward_components"]["accuracy"] == 0.0
    assert not any(s in obs for s in spelled), obs
    assert info["ground_truth"] == truth and info["reference"]["status"] == "optimal"  # kept for logging


# -- item 8: the min -f idiom --------------------------------------------------------------------
@pytest.mark.parametrize("family, sense", [("product_mix", "max"), ("diet", "min")])
def test_the_same_model_with_the_sense_flipped_is_accepted(pool, family, sense):
    env = make(pool)
    inst = instance(env, family)
    assert inst.sense == sense
    obs, info = play(env, inst, oracle_program(negated(LinearModel.from_dict(inst.model)), "highspy"))
    assert info["reward_components"] == FULL and "sense flipped" in info["reason"], info["reason"]
    assert info["host"]["objective"] == pytest.approx(-inst.answer, rel=1e-9)


def test_a_negated_objective_is_refused_where_it_is_not_the_idiom(pool):
    env = make(pool)
    inst = instance(env)
    flipped = negated(LinearModel.from_dict(inst.model))
    flipped.constraints = flipped.constraints[:1]  # another model, in the other sense
    obs, info = play(env, inst, oracle_program(flipped, "highspy"))
    assert info["reward_components"]["accuracy"] == 0.0 and "nor does its negation" in info["reason"], info["reason"]
    # a benchmark record states no sense: the negation is not accepted, and the reason says so
    record = {"en_question": inst.question, "en_answer": repr(inst.answer)}
    env.reset(options={"instance": record})
    obs, info = play(env, env.instance, oracle_program(negated(LinearModel.from_dict(inst.model)), "highspy"))
    assert info["reward_components"]["accuracy"] == 0.0 and "sense is unknown" in info["reason"], info["reason"]


# -- item 9: an empty model is not an execution --------------------------------------------------
EMPTY = {"no variable": "import gurobipy as gp\nm = gp.Model()\nm.optimize()\n",
         "a lone variable": "import gurobipy as gp\nm = gp.Model()\nm.addVar()\nm.optimize()\n"}


@pytest.mark.parametrize("name", sorted(EMPTY))
def test_an_empty_model_is_not_an_execution(pool, name):
    env = make(pool)
    inst = instance(env)
    obs, info = play(env, inst, EMPTY[name])
    assert info["reward_components"] == {**FULL, "execution": 0.0, "accuracy": 0.0}, info["reason"]
    assert "model" in info["reason"] and "execution_rule" in info["reason"]
    paper = make(pool, execution_rule="paper")
    obs, info = play(paper, inst, EMPTY[name])
    assert info["reward_components"] == {**FULL, "accuracy": 0.0}, info["reason"]


def test_the_new_settings_are_env_keywords_and_validated(pool):
    defaults = ORProblem.settings_defaults()
    assert defaults["execution_rule"] == "model" and defaults["resolve_time_limit_s"] == 5.0
    assert set(EXECUTION_RULES) == {"model", "paper"}
    for bad in ({"execution_rule": "sirl"}, {"resolve_time_limit_s": 0}, {"resolve_time_limit_s": float("nan")},
                {"resolve_time_limit_s": True}):
        with pytest.raises(ValueError):
            make(pool, **bad)
    env = make(pool, execution_rule="paper", resolve_time_limit_s=2.0)
    assert (env.problem.execution_rule, env.problem.resolve_time_limit_s) == ("paper", 2.0)
    env.reset(seed=0)
    obs, r, term, trunc, info = env.step(oracle_action(env))
    assert info["reward_components"] == FULL, info["reason"]
