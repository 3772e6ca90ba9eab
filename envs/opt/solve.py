"""Ground truth for a :class:`~.model.LinearModel`: three solver back-ends and a two-solver vote.

SIRL labels its synthetic problems by executing candidate code and voting on the results
(SIRL §3.1, instance-enhanced self-consistency); the public benchmarks it trains and tests on
still carry wrong answers (or-modelling.md §4). A generator that owns the model can do better: it
solves the one reference model with two independent solvers and keeps the answer only when both
report the same status and, when optimal, the same objective (:func:`reference_solve`). A
disagreement, a timeout or a solver error is reported as such, never guessed at; the generator
discards those draws.

- :func:`solve_highs`: HiGHS (LP, MIP, and QP for continuous models), through its low-level
  ``passModel`` so the numbers reach the solver unchanged.
- :func:`solve_ortools`: OR-Tools ``pywraplp``, GLOP for LPs and SCIP for MIPs (no QP).
- :func:`solve_gurobi`: gurobipy on one reused, silent ``Env`` (the second opinion for QPs, a
  third for the rest). The pip licence is size-limited (2,000 variables and rows; 200 variables
  with a quadratic objective, or-modelling.md §1.4): a larger model is an ``"error"`` result
  carrying GurobiError 10010's message, not an exception.

Every solve runs with a time limit and one thread: random small MIPs can hang without one
(or-modelling.md §1.4), and one thread makes a solve reproducible and polite to the other jobs
on the machine. MIP gaps are set to zero because the two answers are compared at
``1e-6 * (1 + |b|)`` (SIRL's own accuracy test, or-modelling.md §1.3), tighter than the solvers'
default relative gap of ``1e-4``.
"""
from __future__ import annotations

import math
import os
import threading
import time
from dataclasses import dataclass

import numpy as np

from .model import LinearModel

__all__ = ["SolveResult", "STATUSES", "solve_highs", "solve_ortools", "solve_gurobi", "reference_solve",
           "objectives_agree", "clean_objective", "hessian_lower", "gurobi_env"]

#: what a reference solve reports: a subset of the sandbox's solver-status vocabulary
#: (:data:`solvergym.sandbox.record.OPTIMUM_STATUSES`), so a program's optimum and the ground truth
#: speak the same words (``time_limit`` for a solver stopped by its limit)
STATUSES = ("optimal", "infeasible", "unbounded", "time_limit", "error")


@dataclass
class SolveResult:
    """One solver's verdict on a model. ``objective`` is set only when ``status == "optimal"``;
    ``reason`` explains a non-optimal status; ``values`` is the primal solution (optimal only),
    kept for checking a solution by hand and for tests that need to know which variables are
    used."""

    status: str
    objective: float | None
    solver: str
    seconds: float
    reason: str = ""
    values: dict[str, float] | None = None


def objectives_agree(a: float, b: float) -> bool:
    """SIRL's accuracy test (or-modelling.md §1.3), used between the two reference solvers."""
    return abs(a - b) <= 1e-6 * (1 + abs(b))


def clean_objective(value: float) -> float:
    """The objective at 12 significant digits and without a negative zero: removes float noise
    (``15.499999999999998`` -> ``15.5``) that would otherwise make stored answers look arbitrary,
    while staying a million times inside the 1e-6 answer tolerance."""
    return float(f"{value:.12g}") + 0.0


def _as_model(model: LinearModel | dict) -> LinearModel:
    return model if isinstance(model, LinearModel) else LinearModel.from_dict(model)


def _check_limit(time_limit_s: float) -> float:
    if isinstance(time_limit_s, bool) or not isinstance(time_limit_s, (int, float)) or not time_limit_s > 0:
        raise ValueError(f"time_limit_s must be a positive number, got {time_limit_s!r}")
    return float(time_limit_s)


# --------------------------------------------------------------------------- HiGHS
_HIGHS_BANNER_LOCK = threading.Lock()
_HIGHS_BANNER_DONE = False


def _new_highs():
    """A silent ``highspy.Highs``. HiGHS prints its copyright banner to file descriptor 1 when the
    first instance of a process is built, before any option can switch output off; that line
    would land in the middle of an env's or a CLI's stdout, so the first construction runs with
    fd 1 pointed at /dev/null."""
    global _HIGHS_BANNER_DONE
    import highspy  # deferred: 0.15 s to import (or-modelling.md §1.4), only solving needs it

    with _HIGHS_BANNER_LOCK:
        if _HIGHS_BANNER_DONE:
            h = highspy.Highs()
        else:
            saved = None
            try:
                saved = os.dup(1)
                with open(os.devnull, "wb") as null:
                    os.dup2(null.fileno(), 1)
            except OSError:
                saved = None
            try:
                h = highspy.Highs()
            finally:
                if saved is not None:
                    os.dup2(saved, 1)
                    os.close(saved)
                _HIGHS_BANNER_DONE = True
    h.setOptionValue("output_flag", False)
    h.setOptionValue("threads", 1)
    return h


def _highs_model(model: LinearModel, negate: bool):
    """The model as a ``HighsLp`` (or a ``HighsModel`` with a Hessian). HiGHS minimises
    ``c'x + 1/2 x'Qx`` with ``Q`` given as its lower triangle column by column; a maximised QP is
    passed negated, because HiGHS only accepts a convex QP as a minimisation."""
    import highspy  # deferred, as in _new_highs

    inf = highspy.kHighsInf
    index = {v.name: k for k, v in enumerate(model.variables)}
    n = len(model.variables)
    sign = -1.0 if negate else 1.0
    lp = highspy.HighsLp()
    lp.num_col_ = n
    lp.num_row_ = len(model.constraints)
    cost = np.zeros(n)
    for name, c in model.objective.items():
        cost[index[name]] += sign * c
    lp.col_cost_ = cost
    lp.offset_ = sign * model.constant
    lo = np.empty(n)
    hi = np.empty(n)
    for k, v in enumerate(model.variables):
        a, b = v.bounds()
        lo[k] = -inf if a == -math.inf else a
        hi[k] = inf if b == math.inf else b
    lp.col_lower_ = lo
    lp.col_upper_ = hi
    starts, cols, vals = [0], [], []
    for c in model.constraints:
        for name, x in c.coefs.items():
            cols.append(index[name])
            vals.append(x)
        starts.append(len(cols))
    lp.row_lower_ = np.array([-inf if c.lo is None else c.lo for c in model.constraints], dtype=float)
    lp.row_upper_ = np.array([inf if c.hi is None else c.hi for c in model.constraints], dtype=float)
    lp.a_matrix_.format_ = highspy.MatrixFormat.kRowwise
    lp.a_matrix_.num_col_ = n
    lp.a_matrix_.num_row_ = len(model.constraints)
    lp.a_matrix_.start_ = np.array(starts, dtype=np.int32)
    lp.a_matrix_.index_ = np.array(cols, dtype=np.int32)
    lp.a_matrix_.value_ = np.array(vals, dtype=float)
    if model.is_integer:
        kinds = {"C": highspy.HighsVarType.kContinuous, "I": highspy.HighsVarType.kInteger,
                 "B": highspy.HighsVarType.kInteger}
        lp.integrality_ = [kinds[v.kind] for v in model.variables]
    lp.sense_ = highspy.ObjSense.kMinimize if negate or model.sense == "min" else highspy.ObjSense.kMaximize
    if not model.is_quadratic:
        return lp
    hstart, hindex, hvalue = hessian_lower(model, sign)
    hess = highspy.HighsHessian()
    hess.dim_ = n
    hess.format_ = highspy.HessianFormat.kTriangular
    hess.start_ = np.array(hstart, dtype=np.int32)
    hess.index_ = np.array(hindex, dtype=np.int32)
    hess.value_ = np.array(hvalue, dtype=float)
    full = highspy.HighsModel()
    full.lp_ = lp
    full.hessian_ = hess
    return full


def hessian_lower(model: LinearModel, sign: float = 1.0) -> tuple[list[int], list[int], list[float]]:
    """HiGHS's Hessian of ``sign`` times the quadratic objective terms: ``(start, index, value)``
    of the lower triangle, column by column, with each column's diagonal entry first.

    HiGHS minimises ``c'x + 1/2 x'Qx``, and ``coef * x_i * x_j`` is ``1/2 (Q_ij + Q_ji) x_i x_j``:
    a square's ``Q_ii`` is ``2 * coef``, a product's lower-triangle entry is ``coef`` (its mirror
    is implied). Shared with the highspy oracle program, so both pass the same matrix.
    """
    index = {v.name: k for k, v in enumerate(model.variables)}
    q: dict[tuple[int, int], float] = {}
    for a, b, coef in model.quadratic:
        i, j = index[a], index[b]
        r, col = max(i, j), min(i, j)
        q[(r, col)] = q.get((r, col), 0.0) + sign * (2.0 * coef if i == j else coef)
    for col in {col for _, col in q}:
        q.setdefault((col, col), 0.0)
    start, rows, values = [0], [], []
    for col in range(len(model.variables)):
        for r in sorted(r for (r, c) in q if c == col):
            rows.append(r)
            values.append(q[(r, col)])
        start.append(len(rows))
    return start, rows, values


def solve_highs(model: LinearModel | dict, time_limit_s: float = 10.0, *, presolve: bool = True,
                options: dict | None = None) -> SolveResult:
    """Solve with HiGHS: LP, MIP, and QP when every variable is continuous (HiGHS has no MIQP).

    "Infeasible or unbounded" (what presolve reports when it cannot tell) is settled by solving
    again without presolve, and for a MIP then by its relaxation: an infeasible relaxation is an
    infeasible MIP, anything else is reported as ``"unbounded"`` with the reason. ``presolve=False``
    solves without presolve from the start (the host re-solve confirms an infeasible verdict so);
    ``options`` are further HiGHS options, set before the solve.
    """
    limit = _check_limit(time_limit_s)
    model = _as_model(model)
    start = time.perf_counter()

    def result(status, objective=None, reason="", values=None):
        return SolveResult(status, objective, "highs", time.perf_counter() - start, reason, values)

    if model.is_quadratic and model.is_integer:
        return result("error", reason="HiGHS solves QPs with continuous variables only (no MIQP)")
    if not model.variables:
        return _empty_model(model, "highs", start)
    try:
        import highspy  # deferred, as in _new_highs

        negate = model.is_quadratic and model.sense == "max"
        h = _new_highs()
        h.setOptionValue("mip_rel_gap", 0.0)
        h.setOptionValue("mip_abs_gap", 1e-9)
        if not presolve:
            h.setOptionValue("presolve", "off")
        for key, value in (options or {}).items():
            h.setOptionValue(key, value)
        status = h.passModel(_highs_model(model, negate))
        if status == highspy.HighsStatus.kError:
            return result("error", reason="HiGHS rejected the model (passModel returned an error)")
        M = highspy.HighsModelStatus

        def run_once():
            left = limit - (time.perf_counter() - start)
            if left <= 0:
                return M.kTimeLimit
            h.setOptionValue("time_limit", float(left))
            h.run()
            if h.getModelStatus() == M.kNotset:
                # threads=1 is refused once another Highs in this process started HiGHS's global
                # scheduler with more threads (the solve never starts): reset it and solve again
                h.resetGlobalScheduler(True)
                h.run()
            return h.getModelStatus()

        ms = run_once()
        if ms == M.kUnboundedOrInfeasible:
            h.setOptionValue("presolve", "off")
            ms = run_once()
        if ms == M.kUnboundedOrInfeasible and model.is_integer:
            h.setOptionValue("solve_relaxation", True)
            relaxed = run_once()
            if relaxed == M.kInfeasible:
                return result("infeasible", reason="the LP relaxation is infeasible")
            if relaxed in (M.kTimeLimit, M.kIterationLimit):
                return result("time_limit", reason=f"HiGHS stopped on {h.modelStatusToString(relaxed)}")
            return result("unbounded", reason="HiGHS: infeasible or unbounded, relaxation "
                                              f"{h.modelStatusToString(relaxed)}")
        if ms == M.kOptimal:
            value = h.getInfo().objective_function_value
            cols = h.getSolution().col_value
            values = {v.name: float(cols[k]) for k, v in enumerate(model.variables)}
            return result("optimal", -value if negate else float(value), values=values)
        if ms == M.kInfeasible:
            return result("infeasible")
        if ms == M.kUnbounded:
            return result("unbounded")
        if ms == M.kUnboundedOrInfeasible:
            return result("unbounded", reason="HiGHS: infeasible or unbounded")
        if ms in (M.kTimeLimit, M.kIterationLimit, M.kSolutionLimit, M.kInterrupt, M.kHighsInterrupt):
            return result("time_limit", reason=f"HiGHS stopped on {h.modelStatusToString(ms)}")
        return result("error", reason=f"HiGHS model status {h.modelStatusToString(ms)}")
    except Exception as e:  # a solver failure is a verdict, never an exception
        return result("error", reason=f"HiGHS raised {type(e).__name__}: {e}")


def _empty_model(model: LinearModel, solver: str, start: float) -> SolveResult:
    """A model without variables: its objective is the constant, feasible iff 0 fits every row."""
    ok = all((c.lo is None or c.lo <= 0.0) and (c.hi is None or 0.0 <= c.hi) for c in model.constraints)
    return SolveResult("optimal" if ok else "infeasible", model.constant if ok else None, solver,
                       time.perf_counter() - start, "" if ok else "a row excludes 0 and there are no variables",
                       {} if ok else None)


# --------------------------------------------------------------------------- OR-Tools
def solve_ortools(model: LinearModel | dict, time_limit_s: float = 10.0) -> SolveResult:
    """Solve with OR-Tools ``pywraplp``: GLOP for a pure LP, SCIP for a MIP; a quadratic
    objective is ``"error"`` (neither handles one).

    GLOP's presolve reports an unbounded LP as infeasible (measured, OR-Tools 9.15); an
    infeasible verdict is therefore confirmed by solving again with presolve off.
    """
    limit = _check_limit(time_limit_s)
    model = _as_model(model)
    start = time.perf_counter()

    def result(status, objective=None, reason="", values=None):
        return SolveResult(status, objective, "ortools", time.perf_counter() - start, reason, values)

    if model.is_quadratic:
        return result("error", reason="OR-Tools pywraplp (GLOP/SCIP) does not solve quadratic objectives")
    if not model.variables:
        return _empty_model(model, "ortools", start)
    try:
        from ortools.linear_solver import pywraplp  # deferred: only solving needs it

        backend = "SCIP" if model.is_integer else "GLOP"
        solver = pywraplp.Solver.CreateSolver(backend)
        if solver is None:
            return result("error", reason=f"OR-Tools has no {backend} backend in this build")
        solver.SetNumThreads(1)  # GLOP is single-threaded and says so by returning False
        inf = solver.infinity()
        xs = {}
        for v in model.variables:
            lo, hi = v.bounds()
            lo = -inf if lo == -math.inf else lo
            hi = inf if hi == math.inf else hi
            xs[v.name] = solver.NumVar(lo, hi, v.name) if v.kind == "C" else solver.IntVar(lo, hi, v.name)
        for c in model.constraints:
            row = solver.Constraint(-inf if c.lo is None else c.lo, inf if c.hi is None else c.hi, c.name)
            for name, x in c.coefs.items():
                row.SetCoefficient(xs[name], row.GetCoefficient(xs[name]) + x)
        obj = solver.Objective()
        for name, x in model.objective.items():
            obj.SetCoefficient(xs[name], obj.GetCoefficient(xs[name]) + x)
        obj.SetOffset(model.constant)
        if model.sense == "max":
            obj.SetMaximization()
        else:
            obj.SetMinimization()
        S = pywraplp.Solver

        def run_once(presolve: bool):
            left = limit - (time.perf_counter() - start)
            if left <= 0:
                return S.NOT_SOLVED
            solver.SetTimeLimit(max(1, int(left * 1000)))
            params = pywraplp.MPSolverParameters()
            if backend == "SCIP":
                params.SetDoubleParam(params.RELATIVE_MIP_GAP, 0.0)
            if not presolve:
                params.SetIntegerParam(params.PRESOLVE, params.PRESOLVE_OFF)
            return solver.Solve(params)

        st = run_once(True)
        if st == S.INFEASIBLE:
            st = run_once(False)
        if st == S.OPTIMAL:
            values = {name: float(x.solution_value()) for name, x in xs.items()}
            return result("optimal", float(obj.Value()), values=values)
        if st == S.INFEASIBLE:
            return result("infeasible")
        if st == S.UNBOUNDED:
            return result("unbounded")
        if st in (S.FEASIBLE, S.NOT_SOLVED):
            return result("time_limit", reason=f"{backend} stopped before proving optimality (status {st})")
        return result("error", reason=f"{backend} returned status {st} (abnormal or invalid model)")
    except Exception as e:  # a solver failure is a verdict, never an exception
        return result("error", reason=f"OR-Tools raised {type(e).__name__}: {e}")


# --------------------------------------------------------------------------- gurobipy
_GUROBI_ENV = None
_GUROBI_LOCK = threading.Lock()


def gurobi_env():
    """One silent gurobipy environment for the process: starting an ``Env`` checks the licence
    and would print its "Restricted license" banner each time without ``OutputFlag 0``."""
    global _GUROBI_ENV
    import gurobipy  # deferred: only the QP family and third opinions need it

    with _GUROBI_LOCK:
        if _GUROBI_ENV is None:
            env = gurobipy.Env(empty=True)
            env.setParam("OutputFlag", 0)
            env.start()
            _GUROBI_ENV = env
        return _GUROBI_ENV


def solve_gurobi(model: LinearModel | dict, time_limit_s: float = 10.0) -> SolveResult:
    """Solve with gurobipy (LP, MIP, QP, MIQP). Any ``GurobiError`` (a model over the pip
    licence's size limit is errno 10010, raised at ``optimize()``) is an ``"error"`` result with
    the message. A ranged row becomes two rows rather than ``addRange``, whose slack variable
    would count against the licence's 2,000-variable limit."""
    limit = _check_limit(time_limit_s)
    model = _as_model(model)
    start = time.perf_counter()

    def result(status, objective=None, reason="", values=None):
        return SolveResult(status, objective, "gurobi", time.perf_counter() - start, reason, values)

    if not model.variables:
        return _empty_model(model, "gurobi", start)
    try:
        import gurobipy as gp  # deferred, as in gurobi_env
        from gurobipy import GRB
    except ImportError as e:
        return result("error", reason=f"gurobipy is not installed: {e}")
    m = None
    try:
        m = gp.Model(env=gurobi_env())
        m.Params.Threads = 1
        m.Params.TimeLimit = limit
        if model.is_integer:
            m.Params.MIPGap = 0.0
        vtype = {"C": GRB.CONTINUOUS, "I": GRB.INTEGER, "B": GRB.BINARY}
        xs = {}
        for v in model.variables:
            lo, hi = v.bounds()
            xs[v.name] = m.addVar(lb=-GRB.INFINITY if lo == -math.inf else lo,
                                  ub=GRB.INFINITY if hi == math.inf else hi, vtype=vtype[v.kind], name=v.name)
        for c in model.constraints:
            expr = gp.LinExpr(list(c.coefs.values()), [xs[k] for k in c.coefs])
            if c.lo is not None and c.hi is not None and c.lo == c.hi:
                m.addLConstr(expr, GRB.EQUAL, c.lo, name=c.name)
                continue
            if c.lo is not None:
                m.addLConstr(expr, GRB.GREATER_EQUAL, c.lo, name=c.name if c.hi is None else f"{c.name}_lo")
            if c.hi is not None:
                m.addLConstr(expr, GRB.LESS_EQUAL, c.hi, name=c.name if c.lo is None else f"{c.name}_hi")
        objective = gp.QuadExpr(gp.LinExpr(list(model.objective.values()), [xs[k] for k in model.objective]))
        objective.addConstant(model.constant)
        if model.quadratic:
            objective.addTerms([q for _, _, q in model.quadratic], [xs[i] for i, _, _ in model.quadratic],
                               [xs[j] for _, j, _ in model.quadratic])
        m.setObjective(objective, GRB.MAXIMIZE if model.sense == "max" else GRB.MINIMIZE)
        m.optimize()
        st = m.Status
        if st == GRB.INF_OR_UNBD:
            # decide without dual reductions; reset, or the presolved model is reused (measured:
            # an infeasible QP stays INF_OR_UNBD without the reset)
            m.reset()
            m.Params.DualReductions = 0
            m.Params.TimeLimit = max(1e-3, limit - (time.perf_counter() - start))
            m.optimize()
            st = m.Status
        if st == GRB.INF_OR_UNBD:
            # still undecided: the model is infeasible iff it is without its objective
            m.reset()
            m.setObjective(gp.LinExpr(), GRB.MINIMIZE)
            m.Params.TimeLimit = max(1e-3, limit - (time.perf_counter() - start))
            m.optimize()
            if m.Status == GRB.INFEASIBLE:
                return result("infeasible")
            if m.Status == GRB.OPTIMAL:
                return result("unbounded", reason="gurobi: feasible, and infeasible or unbounded with the objective")
            st = m.Status
        if st == GRB.OPTIMAL:
            return result("optimal", float(m.ObjVal), values={k: float(x.X) for k, x in xs.items()})
        if st == GRB.INFEASIBLE:
            return result("infeasible")
        if st == GRB.UNBOUNDED:
            return result("unbounded")
        if st == GRB.INF_OR_UNBD:
            return result("unbounded", reason="gurobi: infeasible or unbounded")
        if st in (GRB.TIME_LIMIT, GRB.ITERATION_LIMIT, GRB.NODE_LIMIT, GRB.SOLUTION_LIMIT, GRB.INTERRUPTED):
            return result("time_limit", reason=f"gurobi stopped with status {st}")
        return result("error", reason=f"gurobi status {st} (suboptimal, numeric trouble or similar)")
    except gp.GurobiError as e:
        return result("error", reason=f"GurobiError {getattr(e, 'errno', '?')}: {e}")
    except Exception as e:  # a solver failure is a verdict, never an exception
        return result("error", reason=f"gurobipy raised {type(e).__name__}: {e}")
    finally:
        if m is not None:
            m.dispose()


# --------------------------------------------------------------------------- the vote
def reference_solve(model: LinearModel | dict, time_limit_s: float = 10.0) -> SolveResult:
    """The ground truth of a model: two independent solvers must agree (see the module docstring).

    HiGHS and OR-Tools for a linear model, HiGHS and gurobipy for a quadratic one. Both must
    report the same status and, when optimal, objectives within ``1e-6 * (1 + |b|)``; otherwise
    the result is ``"error"`` with a reason naming the disagreement. A time limit hit by either is
    ``"time_limit"`` (its own status: or-modelling.md §1.4), a solver error is ``"error"``. The
    returned objective is HiGHS's, cleaned by :func:`clean_objective`; ``values`` is HiGHS's
    solution. Each solver gets the full ``time_limit_s``.
    """
    model = _as_model(model)
    first = solve_highs(model, time_limit_s)
    second = (solve_gurobi if model.is_quadratic else solve_ortools)(model, time_limit_s)
    pair = f"{first.solver}+{second.solver}"
    seconds = first.seconds + second.seconds

    def verdict(status, objective=None, reason="", values=None):
        return SolveResult(status, objective, pair, seconds, reason, values)

    said = f"{first.solver}: {first.status}{' (' + first.reason + ')' if first.reason else ''}; " \
           f"{second.solver}: {second.status}{' (' + second.reason + ')' if second.reason else ''}"
    if "time_limit" in (first.status, second.status):
        return verdict("time_limit", reason=said)
    if "error" in (first.status, second.status):
        return verdict("error", reason=said)
    if first.status != second.status:
        return verdict("error", reason=f"the solvers disagree on the status: {said}")
    if first.status != "optimal":
        return verdict(first.status, reason=said)
    if not objectives_agree(first.objective, second.objective):
        return verdict("error", reason=f"the solvers disagree on the objective: {first.solver} "
                                       f"{first.objective!r}, {second.solver} {second.objective!r}")
    return verdict("optimal", clean_objective(first.objective), values=first.values)
