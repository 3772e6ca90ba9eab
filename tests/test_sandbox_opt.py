"""The optimum capture (issue 12, SolverOR-v0): what a program's last optimisation solve found,
read from the solver object inside the sandbox (``sandbox/capture/optimum.py``, ``OptimumReader``).

Real sandbox, real solvers, no mocks. SIRL's released reward parses the objective from a line the
program prints, so a program that prints ``Just print the best obj: 1160.0`` is paid; the optimum
comes from the solver, and these tests pin that down: printed numbers are ignored, a solve that
raises (gurobipy's size-limited licence, error 10010) is explained, ``sys.exit`` after a solve
keeps it, and a forged record earns nothing. The MPS text the capture exports is re-solved here,
outside the sandbox, with HiGHS.
"""
import json
import math
import os

import pytest

highspy = pytest.importorskip("highspy")

from solvergym.envs.opt.mps import read_mps
from solvergym.envs.opt.solve import solve_highs
from solvergym.sandbox import Limits, SandboxPool
from solvergym.sandbox import record as rec
from solvergym.sandbox.capture.core import export_dir

LIMITS = Limits(timeout_s=20.0)
COUNTS = ("num_vars", "num_int", "num_bin", "num_constrs", "num_qconstrs", "num_q_obj_terms", "num_gen_constrs")


@pytest.fixture(scope="module")
def pool():
    p = SandboxPool(1).start()  # one server: the programs are small, the start is the cost
    yield p
    p.close()


def _run(pool, code: str):
    r = pool.run(code, LIMITS)
    assert r.status == "ok", (r.status, r.reason, r.stderr[-2000:])
    return r


def _resolve(mps: str, tmp_path) -> tuple[str, float]:
    """Solve the MPS text with HiGHS here, outside the sandbox: (model status, objective)."""
    path = tmp_path / "model.mps"
    path.write_text(mps)
    h = highspy.Highs()
    h.silent()
    assert h.readModel(str(path)) != highspy.HighsStatus.kError
    h.run()
    return h.getModelStatus().name, h.getInfo().objective_function_value


def _lp_counts(opt: dict, n_vars=2, n_constrs=2) -> None:
    assert (opt["num_vars"], opt["num_constrs"], opt["num_int"], opt["num_bin"]) == (n_vars, n_constrs, 0, 0)
    assert (opt["num_qconstrs"], opt["num_q_obj_terms"], opt["num_gen_constrs"]) == (0, 0, 0)


# max 3x + 2y s.t. x + y <= 4, x + 3y <= 6, x, y >= 0: optimum 12 at (4, 0)
GUROBI_LP = """
import gurobipy as gp
from gurobipy import GRB
m = gp.Model(); m.Params.OutputFlag = 0
x = m.addVar(name="x"); y = m.addVar(name="y")
m.addConstr(x + y <= 4); m.addConstr(x + 3 * y <= 6)
m.setObjective(3 * x + 2 * y, GRB.MAXIMIZE)
m.optimize()
"""
HIGHS_LP = """
import highspy
h = highspy.Highs()
x = h.addVariable(lb=0); y = h.addVariable(lb=0)
h.addConstr(x + y <= 4); h.addConstr(x + 3 * y <= 6)
h.maximize(3 * x + 2 * y)
print("names", list(h.getLp().col_names_), h.getInfo().objective_function_value)
"""
GLOP_LP = """
from ortools.linear_solver import pywraplp
s = pywraplp.Solver.CreateSolver("GLOP")
x = s.NumVar(0, s.infinity(), "x"); y = s.NumVar(0, s.infinity(), "y")
s.Add(x + y <= 4); s.Add(x + 3 * y <= 6)
s.Maximize(3 * x + 2 * y)
status = s.Solve()
"""


# ----------------------------------------------------------------------------- the three MPS solvers
@pytest.mark.parametrize("solver,call,code", [
    ("gurobipy", "Model.optimize", GUROBI_LP + "print('done', m.ObjVal)\n"),
    ("highspy", "Highs.run", HIGHS_LP + "print('done')\n"),
    ("ortools", "linear_solver.Solve", GLOP_LP + "print('done', s.Objective().Value())\n"),
], ids=["gurobipy", "highspy", "glop"])
def test_an_lp_optimum_is_captured_with_an_mps_that_highs_resolves(pool, tmp_path, solver, call, code):
    r = _run(pool, code)
    opt = r.optimum
    assert opt is not None and (opt["solver"], opt["call"]) == (solver, call)
    assert opt["status"] == "optimal" and opt["sense"] == "max" and opt["error"] is None
    assert type(opt["objective"]) is float and opt["objective"] == 12.0
    _lp_counts(opt)
    assert opt["mps_truncated"] is False and "ROWS" in opt["mps"]
    assert _resolve(opt["mps"], tmp_path) == ("kOptimal", 12.0)
    # the capture writes nothing to the program's output (HiGHS logs its exports) ...
    assert "Writing" not in r.stdout and r.stdout.splitlines()[-1].startswith("done")
    if solver == "highspy":  # ... nor changes its model (writeModel names an unnamed one)
        assert "names [] 12.0" in r.stdout


def test_a_mip_counts_general_integers_and_binaries(pool, tmp_path):
    r = _run(pool, """
from ortools.linear_solver import pywraplp
s = pywraplp.Solver.CreateSolver("SCIP")
x = s.IntVar(0, 1, "x")          # a 0/1 integer: binary
y = s.IntVar(0, 7, "y")          # a general integer
z = s.NumVar(0, 2.5, "z")        # continuous
b = s.BoolVar("b")               # binary
s.Add(x + y + z + b <= 4.5); s.Add(y <= 2.5)
s.Maximize(3 * x + 2 * y + z + b)
print(s.Solve(), s.Objective().Value())
""")
    opt = r.optimum
    assert (opt["status"], opt["objective"], opt["sense"]) == ("optimal", 8.5, "max"), opt
    assert (opt["num_vars"], opt["num_int"], opt["num_bin"], opt["num_constrs"]) == (4, 1, 2, 2)
    assert _resolve(opt["mps"], tmp_path) == ("kOptimal", 8.5)
    # gurobipy: type B and an I bounded to [0, 1] are binaries, an I in [0, 7] is not
    r = _run(pool, """
import gurobipy as gp
from gurobipy import GRB
m = gp.Model(); m.Params.OutputFlag = 0
a = m.addVar(vtype="I", lb=0, ub=1); b = m.addVar(vtype="B"); c = m.addVar(vtype="I", ub=7); d = m.addVar(ub=0.5)
m.addConstr(a + b + c + d <= 3.5)
m.setObjective(a + b + c + d, GRB.MAXIMIZE)
m.optimize()
""")
    opt = r.optimum
    assert (opt["num_vars"], opt["num_int"], opt["num_bin"], opt["objective"]) == (4, 1, 2, 3.5), opt
    assert _resolve(opt["mps"], tmp_path) == ("kOptimal", 3.5)


def test_cpsat_and_mathopt_objectives_are_captured(pool):
    r = _run(pool, """
from ortools.sat.python import cp_model
m = cp_model.CpModel()
a = m.new_int_var(0, 10, "a"); c = m.new_bool_var("c")
m.add(a + c <= 7); m.add_all_different([a, c])
m.maximize(a + 2 * c)
s = cp_model.CpSolver(); s.parameters.num_workers = 1
print(s.solve(m) == cp_model.OPTIMAL, s.objective_value)
""")
    opt = r.optimum
    assert r.solver_calls == [("ortools", "CpSolver.solve")]
    assert (opt["solver"], opt["call"], opt["status"], opt["raw_status"]) == ("ortools", "CpSolver.Solve", "optimal", "OPTIMAL")
    assert (opt["objective"], opt["sense"]) == (8.0, "max")
    assert (opt["num_vars"], opt["num_bin"], opt["num_int"], opt["num_constrs"], opt["num_gen_constrs"]) == (2, 1, 1, 1, 1)
    assert opt["mps"] is None and opt["mps_truncated"] is False
    # the deprecated spelling, on a model without an objective: a status, no objective
    r = _run(pool, """
from ortools.sat.python import cp_model
m = cp_model.CpModel(); a = m.NewIntVar(0, 3, "a"); m.Add(a >= 2)
s = cp_model.CpSolver(); s.parameters.num_workers = 1
s.Solve(m)
""")
    assert r.solver_calls == [("ortools", "CpSolver.Solve")]  # Solve calls solve: one call
    assert (r.optimum["status"], r.optimum["objective"], r.optimum["sense"]) == ("optimal", None, None)
    r = _run(pool, """
from ortools.math_opt.python import mathopt
m = mathopt.Model()
x = m.add_variable(lb=0); y = m.add_variable(lb=0); b = m.add_binary_variable(); i = m.add_integer_variable(lb=0, ub=9)
m.add_linear_constraint(x + y <= 4); m.add_linear_constraint(x + 3 * y <= 6)
m.minimize(-3 * x - 2 * y + b + i)
res = mathopt.solve(m, mathopt.SolverType.HIGHS)
print(res.termination.reason.name, res.objective_value())
""")
    opt = r.optimum
    assert r.solver_calls == [("ortools", "mathopt.solve")]
    assert (opt["call"], opt["status"], opt["objective"], opt["sense"]) == ("mathopt.solve", "optimal", -12.0, "min"), opt
    assert (opt["num_vars"], opt["num_int"], opt["num_bin"], opt["num_constrs"]) == (4, 1, 1, 2)


def test_infeasible_and_unbounded_models(pool):
    infeasible = """
import gurobipy as gp
m = gp.Model(); m.Params.OutputFlag = 0
x = m.addVar(ub=1); m.addConstr(x >= 2); m.setObjective(x)
m.Params.DualReductions = 0  # a definite answer, not INF_OR_UNBD
m.optimize()
"""
    opt = _run(pool, infeasible).optimum
    assert (opt["status"], opt["raw_status"], opt["objective"]) == ("infeasible", "INFEASIBLE", None)
    opt = _run(pool, """
import highspy
h = highspy.Highs(); h.silent()
x = h.addVariable(lb=0, ub=1); h.addConstr(x >= 2)
h.minimize(x)
""").optimum
    assert (opt["solver"], opt["status"], opt["objective"]) == ("highspy", "infeasible", None)
    for code in ("""
import gurobipy as gp
from gurobipy import GRB
m = gp.Model(); m.Params.OutputFlag = 0
x = m.addVar(); y = m.addVar(); m.addConstr(x - y <= 1)
m.setObjective(x + y, GRB.MAXIMIZE)
m.optimize()
""", """
import highspy
h = highspy.Highs(); h.silent()
x = h.addVariable(lb=0); y = h.addVariable(lb=0); h.addConstr(x - y <= 1)
h.maximize(x + y)
"""):
        opt = _run(pool, code).optimum
        assert opt["status"] in ("unbounded", "inf_or_unbd"), opt


def test_every_highs_entry_point_records_one_call(pool):
    """``run`` is patched on HiGHS's compiled base class and ``solve`` on the Python one; ``solve``
    calls ``run`` (from a helper thread when it handles Ctrl-C): one call each time."""
    r = _run(pool, """
import highspy
h = highspy.Highs(); h.silent()
x = h.addVariable(lb=0, ub=2); h.changeColCost(0, -1.0)
h.run()
h.HandleKeyboardInterrupt = True
h.changeColBounds(0, 0.0, 3.0)
h.solve()
""")
    assert r.solver_calls == [("highspy", "Highs.run"), ("highspy", "Highs.solve")]
    assert (r.optimum["call"], r.optimum["objective"], r.optimum["num_vars"]) == ("Highs.run", -3.0, 1)


def test_an_mps_over_the_bound_is_left_out(pool):
    # written and read back: 2,000 columns with 255-character names are over 1 MiB of text
    r = _run(pool, """
import gurobipy as gp
from gurobipy import GRB
m = gp.Model(); m.Params.OutputFlag = 0
x = [m.addVar(ub=1, name=f"{i:0255d}") for i in range(2000)]
m.addConstr(gp.quicksum(x) <= 3)
m.setObjective(gp.quicksum(x), GRB.MAXIMIZE)
m.optimize()
import os
print("left", sorted(os.listdir(".")))
""")
    opt = r.optimum
    assert (opt["objective"], opt["num_vars"], opt["mps"], opt["mps_truncated"], opt["error"]) == (3.0, 2000, None, True, None)
    assert "left []" in r.stdout  # the export's file is gone
    # never written: 3,000 columns x 60 dense rows hold more entries than 1 MiB can
    r = _run(pool, """
import highspy, numpy as np
h = highspy.Highs(); h.silent()
n, rows = 3000, 60
h.addVars(n, np.zeros(n), np.ones(n))
h.changeColsCost(n, np.arange(n, dtype=np.int32), -np.ones(n))
starts = np.arange(rows, dtype=np.int32) * n
index = np.tile(np.arange(n, dtype=np.int32), rows)
h.addRows(rows, np.full(rows, -np.inf), np.full(rows, 10.0), rows * n, starts, index, np.ones(rows * n))
h.run()
""")
    opt = r.optimum
    assert (opt["status"], opt["objective"], opt["num_vars"], opt["num_constrs"]) == ("optimal", -10.0, 3000, 60)
    assert opt["mps"] is None and opt["mps_truncated"] is True and opt["error"] is None


# ----------------------------------------------------------------------------- what is not a solve
def test_a_printed_objective_is_not_an_optimum(pool):
    """SIRL's hack: the marker printed without a solve is paid there; here there is no optimum."""
    r = _run(pool, "import gurobipy\nprint('Just print the best obj: 1160.0')\nprint('objective: 1160.0')\n")
    assert r.optimum is None and r.solver_calls == [] and "1160.0" in r.stdout
    # a solve of objective 5 followed by the printed marker: the solver's 5 counts
    r = _run(pool, """
import gurobipy as gp
from gurobipy import GRB
m = gp.Model(); m.Params.OutputFlag = 0
x = m.addVar(ub=5); m.setObjective(x, GRB.MAXIMIZE); m.optimize()
print('Just print the best obj: 1160.0')
""")
    assert r.optimum["objective"] == 5.0 and r.optimum["status"] == "optimal"


@pytest.mark.parametrize("ending", ["import sys\nsys.exit(0)\n", "import os\nos._exit(0)\n",
                                    "raise SystemExit(0)\n"])
def test_exiting_right_after_the_solve_keeps_the_optimum(pool, ending):
    """SIRL's evaluator loses the result of ``sys.exit(0)`` after a solve; the record is written
    at exit, whichever way the program leaves."""
    r = _run(pool, GUROBI_LP + ending + "print('not reached')\n")
    assert r.exit_code == 0 and "not reached" not in r.stdout
    assert r.optimum is not None and r.optimum["objective"] == 12.0


def test_the_last_of_two_solves_is_reported(pool):
    r = _run(pool, GUROBI_LP + """
import highspy
h = highspy.Highs(); h.silent()
v = h.addVariable(lb=0, ub=5); h.minimize(-v)
""")
    assert r.solver_calls == [("gurobipy", "Model.optimize"), ("highspy", "Highs.solve")]
    assert (r.optimum["solver"], r.optimum["objective"], r.optimum["sense"]) == ("highspy", -5.0, "min")
    # the same model re-solved after a change: the second solve's model and objective
    r = _run(pool, GUROBI_LP + "m.addConstr(x <= 1)\nm.optimize()\n")
    assert r.optimum["objective"] == pytest.approx(3 + 2 * 5 / 3) and r.optimum["num_constrs"] == 3


# ----------------------------------------------------------------------------- gurobipy specifics
def test_a_model_over_the_size_limited_licence_is_an_error_that_the_program_still_sees(pool, tmp_path):
    """§1.4: gurobipy's pip licence raises GurobiError 10010 at optimize() past 2,000 variables;
    the optimum explains it and carries the MPS that HiGHS can solve instead."""
    r = _run(pool, """
import gurobipy as gp
from gurobipy import GRB
m = gp.Model(); m.Params.OutputFlag = 0
x = m.addVars(2001, ub=1.0)
m.addConstr(x.sum() <= 10)
m.setObjective(x.sum(), GRB.MAXIMIZE)
try:
    m.optimize()
except gp.GurobiError as e:
    print("caught", e.errno)
""")
    assert "caught 10010" in r.stdout  # the program's own except clause got the exception
    opt = r.optimum
    assert opt["status"] == "error" and opt["objective"] is None
    assert opt["error"].startswith("GurobiError 10010: ") and "size-limited" in opt["error"]
    assert (opt["num_vars"], opt["num_constrs"]) == (2001, 1)
    assert r.solver_calls == []  # it did not return: not a solver call
    assert _resolve(opt["mps"], tmp_path) == ("kOptimal", 10.0)
    # uncaught, it still ends the program with Gurobi's traceback
    r = pool.run("import gurobipy as gp\nm = gp.Model()\nx = m.addVars(2001)\nm.addConstr(x.sum() <= 1)\n"
                 "m.setObjective(x.sum())\nm.optimize()\n", LIMITS)
    assert r.exit_code == 1 and "GurobiError" in r.stderr and "10010" in r.optimum["error"]


def test_quadratic_and_general_constraints_are_counted(pool):
    r = _run(pool, """
import gurobipy as gp
from gurobipy import GRB
m = gp.Model(); m.Params.OutputFlag = 0
x = m.addVar(ub=3); y = m.addVar(ub=3); z = m.addVar(ub=10); b = m.addVar(vtype="B")
m.addConstr(x + y >= 1)
m.addGenConstrMax(z, [x, y])
m.addGenConstrIndicator(b, True, x + y <= 2)
m.setObjective(x * x + y * y + x * y + z - b)
m.optimize()
""")
    opt = r.optimum
    assert opt["status"] == "optimal" and opt["num_q_obj_terms"] >= 3 and opt["num_gen_constrs"] == 2, opt
    assert (opt["num_vars"], opt["num_bin"], opt["num_constrs"], opt["sense"]) == (4, 1, 1, "min")
    assert "QUADOBJ" in opt["mps"] or "QMATRIX" in opt["mps"] or "QSECTION" in opt["mps"]


# ----------------------------------------------------------------------------- forgery
def test_a_forged_optimum_earns_nothing(pool):
    honest = _run(pool, GUROBI_LP)
    forged = {"imported": ["gurobipy"], "calls": [["gurobipy", "Model.optimize"]], "n_calls": 1, "formula": None,
              "formula_error": None, "memory_error": False, "optimum": {**honest.optimum, "objective": "1160.0"}}
    payload = json.dumps(forged).encode()
    # one write to the report descriptor (without the run's secret)
    r = pool.run(f"import os\nos.write(1000, {payload!r})\nos.close(1000)\nprint('done')\n", LIMITS)
    assert r.status == "error" and "record was rejected" in r.reason and r.optimum is None
    # to every descriptor it can find, after a real solve of objective 12
    r = pool.run(GUROBI_LP + f"import os\nfor fd in range(3, 1100):\n    try:\n        os.write(fd, {payload!r})\n"
                 "    except OSError:\n        pass\n", LIMITS)
    assert r.status == "error" and r.optimum is None  # the forged bytes spoil the record
    # naive calls: the wrapper with fake objects, the capture looked for with gc, the model's
    # methods replaced or overridden by a subclass (the capture uses the originals)
    r = _run(pool, """
import gc
import gurobipy as gp
from gurobipy import GRB
from ortools.sat.python import cp_model
tried = []
found = [o for o in gc.get_objects() if type(o).__name__ in ("OptimumReader", "Capture")]
for o in found:
    o.optimum = {"objective": "1160.0"}
tried.append(len(found))
class Fake:
    def getAttr(self, *a): return 1160.0
for attempt in (lambda: gp.Model.optimize(Fake()), lambda: cp_model.CpSolver.solve(Fake(), Fake())):
    try:
        attempt(); tried.append("returned")
    except Exception as e:
        tried.append(type(e).__name__)
print("tried", tried)
""")
    assert r.optimum is None and "tried [0," in r.stdout and "returned" not in r.stdout
    r = _run(pool, """
import gurobipy as gp
from gurobipy import GRB
class M(gp.Model):
    def getAttr(self, *a): return 1160.0
gp.Model.write = lambda self, path: open(path, "w").write("NAME FORGED\\nENDATA\\n")
m = M(); m.Params.OutputFlag = 0
x = m.addVar(ub=5); m.setObjective(x, GRB.MAXIMIZE)
m.optimize()
print("the program reads", m.ObjVal)
""")
    assert "the program reads 1160.0" in r.stdout
    assert r.optimum["objective"] == 5.0 and "FORGED" not in r.optimum["mps"]


# ----------------------------------------------------------------------------- the host's re-solve
# The reward re-solves the exported model (issue 23): every API's export must re-solve to the optimum.
HONEST = {
    "gurobipy": """
import gurobipy as gp
from gurobipy import GRB
m = gp.Model(); m.Params.OutputFlag = 0
x = m.addVar(ub=3.5, name="x"); y = m.addVar(vtype=GRB.INTEGER, ub=4, name="y"); b = m.addVar(vtype=GRB.BINARY)
m.addConstr(x + y + b <= 5.5); m.addConstr(x - y >= -2)
m.setObjective(3 * x + 2 * y + 4 * b + 5, GRB.MAXIMIZE); m.optimize()
""",
    "highspy": """
import highspy
h = highspy.Highs(); h.silent()
x = h.addVariable(lb=0, ub=3.5); y = h.addIntegral(lb=0, ub=4); b = h.addBinary()
h.addConstr(x + y + b <= 5.5); h.addConstr(x - y >= -2)
h.maximize(3 * x + 2 * y + 4 * b + 5)
""",
    "pywraplp": """
from ortools.linear_solver import pywraplp
s = pywraplp.Solver.CreateSolver("SCIP")
x = s.NumVar(0, 3.5, "x"); y = s.IntVar(0, 4, "y"); b = s.BoolVar("b")
s.Add(x + y + b <= 5.5); s.Add(x - y >= -2); s.BoolVar("unused")  # OR-Tools' own writer drops it
s.Maximize(3 * x + 2 * y + 4 * b + 5); s.Solve()
""",
    # names CP-SAT and MathOpt allow but MPS cannot hold (spaces, duplicates) are replaced
    "cpsat": """
from ortools.sat.python import cp_model
m = cp_model.CpModel()
x = m.new_int_var(-3, 6, "x"); y = m.new_int_var(0, 4, "y y"); b = [m.new_bool_var("b") for _ in range(3)]
m.new_int_var(0, 9, "unused")
m.add(x + 2 * y <= 9); m.add_linear_constraint(x - y, -1, 5); m.add(x + y + b[2] >= 3)
m.add_at_most_one(b); m.add_bool_or([b[0], ~b[1]]); m.add_exactly_one([b[1], b[2], ~b[0]]); m.add_bool_and([~b[1]])
m.maximize(3 * x + 2 * y + 5 * b[0] - 2 * b[1] + b[2] + 7)
s = cp_model.CpSolver(); s.parameters.num_workers = 1; s.solve(m)
""",
    "mathopt": """
from ortools.math_opt.python import mathopt
m = mathopt.Model(name="mix")
x = m.add_variable(lb=0, ub=3.5, name="x"); y = m.add_integer_variable(lb=0, ub=4, name="y y")
b = m.add_binary_variable(name="b"); m.add_variable(lb=-1, ub=1)
m.add_linear_constraint(x + y + b <= 5.5); m.add_linear_constraint((-2 <= x - y) <= 3)
m.maximize(3 * x + 2 * y + 4 * b + 5); mathopt.solve(m, mathopt.SolverType.HIGHS)
""",
}
#: each one's optimum: x = 3.5, y = 1, b = 1 (10.5 + 2 + 4 + 5); CP-SAT's x = 6, y = 1, no b (18 + 2 + 7)
HONEST_OPTIMUM = {"gurobipy": 21.5, "highspy": 21.5, "pywraplp": 21.5, "cpsat": 27.0, "mathopt": 21.5}


def _host_resolve(mps: str) -> tuple[str, float | None]:
    res = solve_highs(read_mps(mps).model)  # what the reward does with an exported model
    return res.status, res.objective


@pytest.mark.parametrize("api", sorted(HONEST))
def test_every_api_exports_a_model_the_host_resolves_to_the_same_optimum(pool, api):
    opt = _run(pool, HONEST[api]).optimum
    assert (opt["status"], opt["sense"], opt["error"]) == ("optimal", "max", None), opt
    assert opt["objective"] == pytest.approx(HONEST_OPTIMUM[api])
    assert _host_resolve(opt["mps"]) == ("optimal", pytest.approx(HONEST_OPTIMUM[api]))
    model = read_mps(opt["mps"]).model
    assert model.constant == 5.0 or api == "cpsat" and model.constant == 7.0  # the objective constant kept
    assert len(model.variables) == opt["num_vars"]  # an unused variable is still a column


@pytest.mark.parametrize("code,optimum", [
    ("from ortools.sat.python import cp_model\nm = cp_model.CpModel()\nx = m.new_int_var(1, 5, 'x'); "
     "y = m.new_int_var(0, 5, 'y')\nm.add(x + y >= 4)\nm.minimize(0.5 * x + 1.25 * y + 2.5)\n"
     "s = cp_model.CpSolver(); s.parameters.num_workers = 1\ns.solve(m)\n", 4.5),
    ("from ortools.math_opt.python import mathopt\nm = mathopt.Model()\nx = m.add_variable(lb=-5, ub=5); "
     "y = m.add_variable(lb=-5, ub=5)\nm.add_linear_constraint(x + y >= 1)\n"
     "m.minimize(x * x + 2 * y * y + x * y - 3 * x + 1)\nmathopt.solve(m, mathopt.SolverType.GSCIP)\n", -11 / 7),
], ids=["cpsat-floating-point-objective", "mathopt-qp-as-quadobj"])
def test_cpsat_and_mathopt_minimisations_are_exported(pool, code, optimum):
    opt = _run(pool, code).optimum
    assert (opt["status"], opt["sense"], opt["error"]) == ("optimal", "min", None), opt
    assert opt["objective"] == pytest.approx(optimum, abs=1e-5)  # SCIP's QP tolerance
    assert _host_resolve(opt["mps"]) == ("optimal", pytest.approx(optimum, abs=1e-5))


def test_a_cpsat_enforcement_literal_is_an_indicator_and_what_mps_cannot_say_is_explained(pool, tmp_path):
    opt = _run(pool, """
from ortools.sat.python import cp_model
m = cp_model.CpModel()
x = m.new_int_var(0, 10, "x"); y = m.new_int_var(0, 10, "y"); b = m.new_bool_var("b")
m.add(x + y <= 4).only_enforce_if(b); m.add(x >= 6).only_enforce_if(~b); m.maximize(x + y + 3 * b)
s = cp_model.CpSolver(); s.parameters.num_workers = 1; s.solve(m)
""").optimum
    assert opt["objective"] == 20.0 and "INDICATORS" in opt["mps"]
    gp = pytest.importorskip("gurobipy")  # Gurobi reads INDICATORS (HiGHS does not)
    (path := tmp_path / "ind.mps").write_text(opt["mps"])
    with gp.Env(params={"OutputFlag": 0}) as env, gp.read(str(path), env=env) as m:
        m.optimize()
        assert (m.NumGenConstrs, m.ObjVal) == (2, 20.0)
    for body, word in (("m.add_all_different([x, y])", "all_diff"), ("m.add(x != 3)", "domain"),
                       ("m.add(x + y <= 4).only_enforce_if([b, c])", "enforcement"),
                       ("m.add_multiplication_equality(x, [y, y])", "int_prod")):
        opt = _run(pool, "from ortools.sat.python import cp_model\nm = cp_model.CpModel(); s = cp_model.CpSolver()\n"
                   "x, y = m.new_int_var(0, 10, 'x'), m.new_int_var(0, 3, 'y'); b, c = m.new_bool_var('b'), "
                   f"m.new_bool_var('c')\n{body}\nm.maximize(x)\ns.parameters.num_workers = 1\ns.solve(m)\n").optimum
        assert opt["status"] == "optimal" and opt["mps"] is None and not opt["mps_truncated"]
        assert word in opt["error"], (body, opt["error"])


@pytest.mark.parametrize("api", ["gurobipy", "highspy"])
@pytest.mark.parametrize("before", [
    "import os\nos.chmod('.', 0o500)\n", "import os\nos.chmod('.', 0)\n", "import os\nos.chdir('/')\n",
    "import os, shutil\nd = os.getcwd()\nos.chdir('/')\nshutil.rmtree(d)\n",
], ids=["read-only-cwd", "no-access-cwd", "chdir", "cwd-removed"])
def test_the_export_survives_what_the_program_does_to_its_working_directory(pool, api, before):
    opt = _run(pool, before + HONEST[api]).optimum  # the export is in the capture's own directory
    assert opt["error"] is None and opt["mps"] is not None, opt["error"]
    assert _host_resolve(opt["mps"]) == ("optimal", pytest.approx(21.5))


def test_the_export_directory_is_the_working_directory_s_private_sibling(tmp_path, monkeypatch):
    (work := tmp_path / "sg-1").mkdir()
    monkeypatch.chdir(work)
    made = export_dir()  # a 0700 sibling, the same one when armed again (the rehearsal, then the program)
    assert made == str(work) + ".mps" and os.stat(made).st_mode & 0o777 == 0o700 and export_dir() == made
    os.rmdir(made), (tmp_path / "sg-1.mps").write_text("")  # no directory to be had there: the cwd itself
    assert export_dir() == str(work)


# ----------------------------------------------------------------------------- record validation
def _good_optimum(**kw) -> dict:
    opt = {"solver": "gurobipy", "call": "Model.optimize", "status": "optimal", "raw_status": "OPTIMAL",
           "objective": "12.0", "sense": "max", **{k: 2 for k in COUNTS}, "mps": "NAME\nENDATA\n",
           "mps_truncated": False, "error": None}
    opt.update(kw)
    return opt


def _record(opt) -> dict:
    return {"imported": [], "calls": [], "n_calls": 0, "formula": None, "formula_error": None,
            "memory_error": False, "optimum": opt}


def test_record_accepts_a_well_formed_optimum():
    assert rec.clean(_record(_good_optimum()))["optimum"] == _good_optimum()
    assert rec.clean(_record(None))["optimum"] is None
    assert "optimum" not in rec.clean({k: v for k, v in _record(None).items() if k != "optimum"})
    for text, value in (("12.0", 12.0), ("-0.0", 0.0), ("1e-05", 1e-05), ("1.5e+16", 1.5e16), ("inf", math.inf),
                        ("-inf", -math.inf), ("7", 7.0)):
        assert rec.objective_value(text) == value
        rec.clean(_record(_good_optimum(objective=text)))
    for n in (0, -1):
        rec.clean(_record(_good_optimum(num_vars=n)))
    rec.clean(_record(_good_optimum(status="error", objective=None, error="GurobiError 10010: too large")))
    rec.clean(_record(_good_optimum(mps=None, mps_truncated=True)))
    rec.clean(_record(_good_optimum(mps="x" * rec.MAX_MPS)))
    # and through parse (the server's side), with the secret
    s = "cd" * 16
    raw = json.dumps({**_record(_good_optimum()), "secret": s}).encode()
    assert rec.parse(raw, s)["optimum"]["objective"] == "12.0"


@pytest.mark.parametrize("change,word", [
    ({"objective": 12.0}, "objective"),
    ({"objective": "nan"}, "objective"),
    ({"objective": "NaN"}, "objective"),
    ({"objective": "infinity"}, "objective"),
    ({"objective": "1_000"}, "objective"),
    ({"objective": " 12"}, "objective"),
    ({"objective": "\u0663"}, "objective"),  # an Arabic-Indic 3: float() reads it
    ({"objective": "1e999"}, "overflows"),
    ({"objective": "1" * 41}, "objective"),
    ({"status": "solved"}, "status"),
    ({"status": "error", "error": None}, "error"),
    ({"num_vars": -2}, "num_vars"),
    ({"num_int": True}, "num_int"),
    ({"num_constrs": "3"}, "num_constrs"),
    ({"num_gen_constrs": 1.0}, "num_gen_constrs"),
    ({"mps": "x" * (rec.MAX_MPS + 1)}, "mps"),
    ({"mps": 7}, "mps"),
    ({"mps_truncated": True}, "mps_truncated"),
    ({"mps_truncated": 0}, "mps_truncated"),
    ({"extra": 1}, "unknown fields"),
    ({"solver": "z3"}, "solver"),
    ({"call": "Solver.check"}, "call"),
    ({"call": "Highs.run"}, "call"),  # a gurobipy optimum from HiGHS's entry point
    ({"solver": ["gurobipy"]}, "solver"),
    ({"sense": "maximize"}, "sense"),
    ({"raw_status": "x" * 101}, "raw_status"),
    ({"raw_status": 2}, "raw_status"),
    ({"error": "x" * 501}, "error"),
])
def test_record_rejects_a_malformed_optimum(change, word):
    with pytest.raises(rec.RecordError, match=word):
        rec.clean(_record(_good_optimum(**change)))


def test_record_rejects_a_missing_field_or_a_non_object():
    opt = _good_optimum()
    del opt["mps"]
    with pytest.raises(rec.RecordError, match="lacks mps"):
        rec.clean(_record(opt))
    with pytest.raises(rec.RecordError, match="optimum"):
        rec.clean(_record([1, 2]))
    # a JSON float anywhere in the record is rejected before the fields are looked at
    s = "ef" * 16
    raw = json.dumps({**_record(_good_optimum()), "secret": s}).replace('"12.0"', "12.0").encode()
    with pytest.raises(rec.RecordError, match="integers"):
        rec.parse(raw, s)
