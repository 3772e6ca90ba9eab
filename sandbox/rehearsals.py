"""The rehearsals: tiny fixed models a waiting child solves with each library a request named,
before its program arrives (``zygote.Zygote._rehearse``).

A program's first solve in a fresh child is slow for reasons that have nothing to do with its
model: each page of the shared image the solver and the capture write to is copied on that first
write, and the libraries' lazily built tables are built. A rehearsal pays that off the latency
path. Its models: an LP and a MIP for the optimisation libraries (OR-Tools: also CP-SAT), a small
satisfiable CNF checked and its model read for python-sat and sympy, as the SAT-RL programs do.
Only libraries whose answers depend on the model object alone: z3 (and pysmt, which solves
through it) keeps state in its global context that steers the search (a rehearsed child can
find another of a formula's models), and whether a child was rehearsed depends on timing, so a
program's output would too.

z3 and pysmt get the part of a rehearsal that changes no state instead (:data:`PROBES`): at
start-up the zygote runs each probe once in a throwaway child and notes which pages of the image
it wrote and which file pages it read; a waiting child asked to rehearse the library faults the
first in writable (``linux.populate_write``: the copy-on-write copies, no byte changed) and maps
the second (``linux.populate_read``), and runs nothing.

Text only (the models are executed in the child, never imported here).
"""
from __future__ import annotations

#: library name (the pool's ``REHEARSABLE``) -> the program a waiting child runs to rehearse it
REHEARSALS = {
    "python-sat": """from pysat.formula import CNF, IDPool
from pysat.solvers import Solver
pool = IDPool()
a, b, c = (pool.id(n) for n in "abc")
with Solver(name="g3", bootstrap_with=CNF(from_clauses=[[a, -b], [b, c], [-a, -c]]).clauses) as s:
    if s.solve():
        s.get_model()
""",
    "sympy": """from sympy import symbols
from sympy.logic.boolalg import And, Or, Not
from sympy.logic.inference import satisfiable
a, b, c = symbols("a b c")
satisfiable(And(Or(a, Not(b)), Or(b, c), Or(Not(a), Not(c))))
""",
    "gurobipy": """import gurobipy as gp
env = gp.Env(empty=True)
env.setParam("OutputFlag", 0)
env.start()
for vtype in (gp.GRB.CONTINUOUS, gp.GRB.INTEGER):
    m = gp.Model("rehearsal", env=env)
    m.Params.Threads = 1
    m.Params.TimeLimit = 10.0
    x = m.addVar(lb=0.0, ub=gp.GRB.INFINITY, vtype=gp.GRB.CONTINUOUS, name="x")
    y = m.addVar(lb=0.0, ub=3.0, vtype=vtype, name="y")
    m.addConstr(1.5 * x + 2.0 * y <= 4.5, name="c0")
    m.addConstr(x - y >= -1.0, name="c1")
    m.setObjective(3.0 * x + 2.0 * y, gp.GRB.MAXIMIZE)
    m.optimize()
    if m.Status == gp.GRB.OPTIMAL:
        m.ObjVal
    m.dispose()
env.dispose()
""",
    "highspy": """import highspy
for integer in (False, True):
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    h.setOptionValue("threads", 1)
    h.setOptionValue("time_limit", 10.0)
    inf = highspy.kHighsInf
    h.addVars(2, [0.0, 0.0], [inf, 3.0])
    if integer:
        h.changeColsIntegrality(1, [1], [highspy.HighsVarType.kInteger])
    h.changeColsCost(2, [0, 1], [3.0, 2.0])
    h.addRows(2, [-inf, -1.0], [4.5, inf], 4, [0, 2], [0, 1, 0, 1], [1.5, 2.0, 1.0, -1.0])
    h.changeObjectiveSense(highspy.ObjSense.kMaximize)
    h.run()
    h.getModelStatus()
    h.getInfo().objective_function_value
    del h
highspy.Highs.resetGlobalScheduler(True)  # its worker threads: a program starts its own
""",
    "ortools": """from ortools.linear_solver import pywraplp
for backend in ("GLOP", "SCIP"):
    solver = pywraplp.Solver.CreateSolver(backend)
    solver.SetTimeLimit(10000)
    solver.SetNumThreads(1)
    x = solver.NumVar(0.0, solver.infinity(), "x")
    y = (solver.IntVar if backend == "SCIP" else solver.NumVar)(0.0, 3.0, "y")
    solver.Add(1.5 * x + 2.0 * y <= 4.5, "c0")
    solver.Add(x - y >= -1.0, "c1")
    solver.Maximize(3.0 * x + 2.0 * y)
    if solver.Solve() == pywraplp.Solver.OPTIMAL:
        solver.Objective().Value()
from ortools.sat.python import cp_model
m = cp_model.CpModel()
a, b, c = (m.NewBoolVar(n) for n in "abc")
m.AddBoolOr([a, b.Not()]); m.AddBoolOr([b, c]); m.AddBoolOr([a.Not(), c.Not()])
x = m.NewIntVar(0, 10, "x")
m.Add(2 * x <= 7)
m.Maximize(x)
s = cp_model.CpSolver()
s.parameters.num_workers = 1
s.parameters.max_time_in_seconds = 10.0
if s.Solve(m) in (cp_model.OPTIMAL, cp_model.FEASIBLE):
    [s.BooleanValue(v) for v in (a, b, c)]
    s.ObjectiveValue()
""",
}

#: library name -> a small program whose written pages a waiting child copies ahead of time
#: (``zygote.Zygote.prepare`` runs it once, in a child thrown away); a CNF checked and its model
#: read, as the SAT-RL programs do
PROBES = {
    "z3": """from z3 import Bool, Not, Or, Solver, is_true, sat
x = [Bool(f"x_{i}") for i in range(8)]
s = Solver()
for a, b, c in ((0, 1, 2), (1, 3, 4), (2, 5, 6), (0, 6, 7), (3, 4, 7)):
    s.add(Or(x[a], Not(x[b]), x[c]))
if s.check() == sat:
    m = s.model()
    print([is_true(m.eval(v, model_completion=True)) for v in x])
""",
    "pysmt": """from pysmt.shortcuts import And, Not, Or, Solver, Symbol
x = [Symbol(f"x_{i}") for i in range(8)]
f = And(*[Or(x[a], Not(x[b]), x[c]) for a, b, c in ((0, 1, 2), (1, 3, 4), (2, 5, 6), (0, 6, 7), (3, 4, 7))])
with Solver(name="z3") as s:
    s.add_assertion(f)
    if s.solve():
        print([s.get_value(v).is_true() for v in x])
""",
}
