"""The host re-solve of the model a program exported: the reward's objective and status come from
here, never from the program's process (issue "Hardening 2" item 1; SIRL §3.3 pays accuracy for
the solved model's objective, which the program could otherwise forge).

Which solver: HiGHS (:func:`~.solve.solve_highs`) for an LP, a MIP and a continuous QP, the
model as :func:`~.audit.audit_mps` read it; gurobipy for what HiGHS cannot take, a MIQP or a
model with quadratic, indicator, general or SOS constraints, read from the exported MPS text
itself (``gp.read`` into :func:`~.solve.gurobi_env`'s one silent environment), since a
:class:`~.model.LinearModel` cannot hold those. A model neither can take (gurobipy's pip licence
stops at 2,000 variables or rows, and a model needing gurobipy without its text) is an
``"error"`` with the reason.

"Infeasible" only when proven: an infeasible (or infeasible-or-unbounded) verdict is confirmed by
solving again with presolve off (HiGHS ``presolve="off"``, then the LP relaxation for a MIP;
gurobipy ``Presolve=0`` and ``DualReductions=0``, then the model without its objective). GLOP's
and presolve's habit of calling an unbounded model infeasible (measured, or-modelling.md §1.4)
cannot pay an infeasible ground truth. The proof is in ``reason``.

Time limited (``time_limit_s`` for the whole re-solve, confirmation included) and never raises.
"""
from __future__ import annotations

import math
import os
import tempfile
import threading
import time

from .model import LinearModel
from .solve import SolveResult, gurobi_env, solve_highs

__all__ = ["resolve", "needs_gurobi"]

_INFINITE = 1e30  # solvers' infinity: an objective this large is no finite optimum
#: HiGHS's feasibility-jump heuristic costs ~10 ms on every MIP, however small (measured, HiGHS
#: 1.16: a 6-binary knapsack 11 ms with it, under 1 ms of LP work); the re-solve of an answer
#: runs once per episode, so it goes without
_HIGHS_OPTIONS = {"mip_heuristic_run_feasibility_jump": False}


def needs_gurobi(model: LinearModel, general: bool, mps_text: str | None) -> bool:
    """Whether HiGHS cannot re-solve the model: a MIQP, or general (indicator, GENCONS, SOS) or
    quadratic constraints, which :class:`LinearModel` does not hold."""
    return general or (model.is_quadratic and model.is_integer) or _has_qconstrs(mps_text)


def _has_qconstrs(text: str | None) -> bool:
    if not text:
        return False
    for line in text.splitlines():
        if line[:1] not in (" ", "\t") and line[:8].upper() in ("QCMATRIX", "QSECTION"):
            return True
    return False


def resolve(model: LinearModel, *, general: bool = False, mps_text: str | None = None,
            time_limit_s: float = 5.0) -> SolveResult:
    """Re-solve the exported ``model`` (``general``: its text holds INDICATORS / GENCONS / SOS;
    ``mps_text``: the text it was read from) within ``time_limit_s`` seconds; see the module
    docstring. Never raises: anything wrong is an ``"error"`` result with the reason."""
    start = time.perf_counter()
    if isinstance(time_limit_s, bool) or not isinstance(time_limit_s, (int, float)) \
            or not (time_limit_s > 0 and math.isfinite(time_limit_s)):
        return SolveResult("error", None, "none", 0.0, f"time_limit_s must be a positive number, got {time_limit_s!r}")
    try:
        if needs_gurobi(model, general, mps_text):
            if not mps_text:
                return SolveResult("error", None, "gurobi", time.perf_counter() - start,
                                   "the model needs gurobipy (a MIQP, or quadratic or general constraints) "
                                   "and its MPS text, which did not come")
            return _finite(_gurobi(mps_text, float(time_limit_s), start))
        return _finite(_highs(model, float(time_limit_s), start, mps_text))
    except Exception as e:  # a solver failure is a verdict, never an exception
        return SolveResult("error", None, "none", time.perf_counter() - start,
                           f"the re-solve raised {type(e).__name__}: {e}"[:500])


def _finite(result: SolveResult) -> SolveResult:
    """An "optimum" of infinite size is no optimum: gurobipy reports a non-convex MIQP that is
    unbounded as OPTIMAL with an objective of inf at values of 1e30 and more (measured, 13.0)."""
    if result.status == "optimal" and not (result.objective is not None and abs(result.objective) < _INFINITE):
        return SolveResult("unbounded", None, result.solver, result.seconds,
                           f"{result.solver} reported an optimum of {result.objective!r}: unbounded", None)
    return result


def _left(limit: float, start: float) -> float:
    return limit - (time.perf_counter() - start)


def _highs(model: LinearModel, limit: float, start: float, mps_text: str | None) -> SolveResult:
    first = solve_highs(model, limit, options=_HIGHS_OPTIONS)
    if first.status == "error" and model.is_quadratic and mps_text:
        # HiGHS takes convex QPs only; gurobipy solves a non-convex one
        other = _gurobi(mps_text, limit, start)
        other.reason = f"HiGHS: {first.reason}; gurobi: {other.reason}".rstrip("; ")
        return other
    if first.status != "infeasible":
        return _timed(first, start)
    left = _left(limit, start)
    if left <= 0:
        return SolveResult("time_limit", None, "highs", time.perf_counter() - start,
                           "HiGHS found the model infeasible with presolve, no time was left to confirm it without")
    second = solve_highs(model, left, presolve=False, options=_HIGHS_OPTIONS)
    if second.status == "infeasible":
        how = f" ({second.reason})" if second.reason else ""
        return _timed(SolveResult("infeasible", None, "highs", 0.0,
                                  f"HiGHS: infeasible with presolve, and again with presolve off{how}"), start)
    second.reason = (f"HiGHS's presolve found the model infeasible; without presolve it is {second.status}"
                     + (f" ({second.reason})" if second.reason else ""))
    return _timed(second, start)


def _timed(result: SolveResult, start: float) -> SolveResult:
    result.seconds = time.perf_counter() - start
    return result


#: one gurobipy re-solve at a time: the models share :func:`~.solve.gurobi_env`'s environment, and
#: a Gurobi environment is not safe to use from two threads at once (an evaluation scores answers
#: on several threads; ``ORProblem.thread_safe``)
_GUROBI_SOLVE = threading.Lock()


def _gurobi(text: str, limit: float, start: float) -> SolveResult:
    """gurobipy on the exported text (see the module docstring), one solve at a time; waiting for
    another thread's solve counts against this one's time limit."""
    if not _GUROBI_SOLVE.acquire(timeout=max(_left(limit, start), 0.0)):
        return SolveResult("time_limit", None, "gurobi", time.perf_counter() - start,
                           "the time limit passed while another thread's gurobipy re-solve ran")
    try:
        return _gurobi_locked(text, limit, start)
    finally:
        _GUROBI_SOLVE.release()


def _gurobi_locked(text: str, limit: float, start: float) -> SolveResult:
    def result(status, objective=None, reason="", values=None):
        return SolveResult(status, objective, "gurobi", time.perf_counter() - start, reason, values)

    try:
        import gurobipy as gp  # deferred: only models HiGHS cannot take need it
        from gurobipy import GRB
    except ImportError as e:
        return result("error", reason=f"gurobipy is not installed: {e}")
    m = None
    try:
        with tempfile.TemporaryDirectory(prefix="solvergym-resolve-") as tmp:
            path = os.path.join(tmp, "model.mps")
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
            m = gp.read(path, env=gurobi_env())
        m.Params.Threads = 1
        if m.IsMIP:
            m.Params.MIPGap = 0.0

        def run(**params):
            left = _left(limit, start)
            if left <= 0:
                return GRB.TIME_LIMIT
            m.Params.TimeLimit = left
            for k, v in params.items():
                setattr(m.Params, k, v)
            m.optimize()
            return m.Status

        st = run()
        if st in (GRB.INFEASIBLE, GRB.INF_OR_UNBD):
            first = "infeasible" if st == GRB.INFEASIBLE else "infeasible or unbounded"
            m.reset()  # or the presolved model is reused
            st = run(Presolve=0, DualReductions=0)
            if st == GRB.INFEASIBLE:
                return result("infeasible", reason=f"gurobi: {first}, and infeasible again with Presolve=0, "
                                                   "DualReductions=0")
            if st == GRB.INF_OR_UNBD:
                m.reset()
                m.setObjective(gp.LinExpr(), GRB.MINIMIZE)  # feasibility alone: cannot be unbounded
                st = run()
                if st == GRB.INFEASIBLE:
                    return result("infeasible", reason="gurobi: infeasible or unbounded, and infeasible "
                                                       "without its objective")
                if st == GRB.OPTIMAL:
                    return result("unbounded", reason="gurobi: feasible, and infeasible or unbounded with its objective")
                return result("time_limit" if st == GRB.TIME_LIMIT else "error",
                              reason=f"gurobi could not settle infeasible-or-unbounded (status {st})")
            if st == GRB.OPTIMAL:
                return result("optimal", float(m.ObjVal), f"gurobi: {first} with presolve, optimal without",
                              {v.VarName: float(v.X) for v in m.getVars()})
        if st == GRB.OPTIMAL:
            return result("optimal", float(m.ObjVal), values={v.VarName: float(v.X) for v in m.getVars()})
        if st == GRB.UNBOUNDED:
            return result("unbounded")
        if st in (GRB.TIME_LIMIT, GRB.ITERATION_LIMIT, GRB.NODE_LIMIT, GRB.SOLUTION_LIMIT, GRB.INTERRUPTED):
            return result("time_limit", reason=f"gurobi stopped with status {st}")
        return result("error", reason=f"gurobi status {st} (suboptimal, numeric trouble or similar)")
    except gp.GurobiError as e:
        return result("error", reason=f"GurobiError {getattr(e, 'errno', '?')}: {e}"[:500])
    except Exception as e:  # never raises
        return result("error", reason=f"gurobipy raised {type(e).__name__}: {e}"[:500])
    finally:
        if m is not None:
            m.dispose()
