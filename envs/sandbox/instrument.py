"""Solver-call instrumentation that runs inside every sandbox child (SAT-RL §3.4).

SAT-RL pays ``r_tool`` when "the final tool call executes without compilation errors and uses the
sampled solver", and ``r_equiv`` when "the proposed formula extracted from the last tool call" is
equivalent to the ground truth. Both need to know what the program *did* with a solver, not what
it imported: the reward hack of §4.3 (``from z3 import *; print('z3 imported')``) imports z3 and
never calls it. This module patches the solve/check entry points of the five solvers of §3.1 (and
Gurobi's ``optimize`` where its class allows it) and records, at every call:

- which solver family and function was called (``z3`` ``Solver.check``, ``python-sat``
  ``Glucose3.solve``, ``ortools`` ``CpSolver.Solve``, ...);
- a snapshot of what the solver was handed at that moment: z3 ``Solver``/``Optimize`` assertions
  (plus check-time assumptions), pysmt assertions (plus assumptions), the clauses a pysat solver
  received (constructor ``bootstrap_with``, ``add_clause``, ``append_formula``, native
  ``add_atmost``; assumptions become unit clauses) with the names of every ``IDPool`` the program
  created, a copy of the CP-SAT model, the LP text of a ``pywraplp`` model, and the argument of
  sympy's ``satisfiable``.

Only the snapshot of the *last* call is serialised, once, when the program ends (the snapshot is
taken at call time, so later ``add`` calls do not change it). Calls made by a solver library on
behalf of another (pysmt running z3, pysat's ``enum_models`` adding blocking clauses) are not
counted as the program's: a depth guard records only the outermost call.

This file runs in the fork server, which must not import solvergym: it uses only the standard
library and the solvers, each optional. The patches are installed once in the server (before it
forks) and are inert there; :func:`begin` arms them in a child.

Trust: the instrumentation lives in the child's address space, so a program can tamper with its
own record. That can only make it claim a formula it could have handed to a solver anyway; the
reward it buys is the reward of writing that program honestly.
"""
from __future__ import annotations

import builtins
import functools
import json
import os
import sys

#: top-level module -> solver family name used in prompts and rewards (SAT-RL §3.1's PyPI names
#: for python-sat; the others are their import names).
SOLVER_MODULES = {
    "z3": "z3",
    "pysmt": "pysmt",
    "pysat": "python-sat",
    "ortools": "ortools",
    "sympy": "sympy",
    "gurobipy": "gurobipy",
}
_SOLVER_TOPS = frozenset(SOLVER_MODULES)

MAX_CALLS = 200  # calls listed in the report (the count is always exact)
MAX_CLAUSES = 200_000  # clauses remembered per pysat solver
MAX_SYMPY_NODES = 200_000
MAX_PROTO_TEXT = 1 << 20


class _State:
    def __init__(self):
        self.active = False
        self.depth = 0
        self.imported: set[str] = set()
        self.calls: list[list[str]] = []
        self.n_calls = 0
        self.last = None  # (family, call, kind, snapshot)
        self.pools: list = []
        self.memory_error = False


STATE = _State()
_real_exit = os._exit
_report_fd: int | None = None


# ----------------------------------------------------------------------------- recording
def _record(family: str, call: str, kind: str, snapshot) -> None:
    STATE.n_calls += 1
    if len(STATE.calls) < MAX_CALLS:
        STATE.calls.append([family, call])
    STATE.last = (family, call, kind, snapshot)


def _wrap_call(family: str, call: str, kind: str, fn, snapshot):
    """Record ``fn``'s outermost calls with ``snapshot(*args, **kwargs)`` taken before running."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        if not STATE.active or STATE.depth:
            return fn(*args, **kwargs)
        STATE.depth += 1
        try:
            try:
                snap = snapshot(*args, **kwargs)
            except Exception as e:  # a snapshot must never break the program
                snap = _SnapshotError(f"{type(e).__name__}: {e}")
            _record(family, call, kind, snap)
            return fn(*args, **kwargs)
        finally:
            STATE.depth -= 1

    wrapper.__solvergym_wrapped__ = fn
    return wrapper


class _SnapshotError:
    def __init__(self, message: str):
        self.message = message


def _patch(owner, name: str, family: str, call: str, kind: str, snapshot) -> bool:
    fn = owner.__dict__.get(name) if isinstance(owner, type) else getattr(owner, name, None)
    if fn is None or getattr(fn, "__solvergym_wrapped__", None) is not None:
        return False
    try:
        setattr(owner, name, _wrap_call(family, call, kind, fn, snapshot))
        return True
    except (TypeError, AttributeError):  # extension types are immutable
        return False


# ----------------------------------------------------------------------------- z3
def _install_z3() -> None:
    import z3

    def snap(self, *assumptions):
        return (list(self.assertions()), list(assumptions))

    _patch(z3.Solver, "check", "z3", "Solver.check", "z3", snap)
    _patch(z3.Optimize, "check", "z3", "Optimize.check", "z3", snap)


def _z3_formula(snapshot) -> dict:
    import z3

    asserts, assumptions = snapshot
    extra = list(z3.z3._get_args(assumptions)) if assumptions else []
    items = list(asserts) + extra
    ctx = items[0].ctx if items else z3.main_ctx()
    formula = z3.And(*items) if items else z3.BoolVal(True, ctx)
    # Z3's own SMT-LIB2 printer: declarations and one assertion. (A fresh Solver to print with
    # would cost ~5 ms in a forked child: its construction writes to many shared pages.)
    text = z3.Z3_benchmark_to_smtlib_string(ctx.ref(), "", "", "unknown", "", 0, (z3.Ast * 0)(), formula.as_ast())
    return {"kind": "smt2", "text": text, "assertions": len(items)}


# ----------------------------------------------------------------------------- pysmt
def _install_pysmt() -> None:
    from pysmt.solvers.solver import IncrementalTrackingSolver

    def snap(self, assumptions=None):
        return (list(self.assertions), list(assumptions or []))

    _patch(IncrementalTrackingSolver, "solve", "pysmt", "Solver.solve", "pysmt", snap)


def _pysmt_formula(snapshot) -> dict:
    import io

    from pysmt.shortcuts import And
    from pysmt.smtlib.script import smtlibscript_from_formula

    asserts, assumptions = snapshot
    items = list(asserts) + list(assumptions)
    formula = And(items) if items else And([])
    buf = io.StringIO()
    smtlibscript_from_formula(formula).serialize(buf, daggify=False)
    return {"kind": "smt2", "text": buf.getvalue(), "assertions": len(items)}


# ----------------------------------------------------------------------------- pysat
def _install_pysat() -> None:
    from pysat import formula as pf
    from pysat import solvers as ps

    orig_init = pf.IDPool.__init__
    if getattr(orig_init, "__solvergym_wrapped__", None) is None:

        @functools.wraps(orig_init)
        def init(self, *args, **kwargs):
            orig_init(self, *args, **kwargs)
            if STATE.active:
                STATE.pools.append(self)

        init.__solvergym_wrapped__ = orig_init
        pf.IDPool.__init__ = init

    backend = getattr(ps, "_SolverBackend", None)
    for cls in vars(ps).values():
        if not isinstance(cls, type) or cls is ps.Solver or "solve" not in cls.__dict__:
            continue
        if backend is not None and not issubclass(cls, backend):
            continue
        _patch_pysat_backend(cls)


def _clauses_of(solver) -> list:
    return solver.__dict__.setdefault("_solvergym_clauses", [])


def _patch_pysat_backend(cls) -> None:
    name = cls.__name__
    add = cls.__dict__.get("add_clause")
    if add is not None and getattr(add, "__solvergym_wrapped__", None) is None:

        @functools.wraps(add)
        def add_clause(self, clause, *args, **kwargs):
            if STATE.active and not STATE.depth:
                store = _clauses_of(self)
                if len(store) < MAX_CLAUSES:
                    try:
                        store.append([int(x) for x in clause])
                    except (TypeError, ValueError):
                        pass  # the solver itself will reject it
                else:
                    self.__dict__["_solvergym_overflow"] = True
            return add(self, clause, *args, **kwargs)

        add_clause.__solvergym_wrapped__ = add
        cls.add_clause = add_clause

    atmost = cls.__dict__.get("add_atmost")
    if atmost is not None and getattr(atmost, "__solvergym_wrapped__", None) is None:

        @functools.wraps(atmost)
        def add_atmost(self, lits, k, *args, **kwargs):
            if STATE.active and not STATE.depth:
                try:
                    _clauses_of(self).append({"atmost": [int(x) for x in lits], "k": int(k)})
                except (TypeError, ValueError):
                    pass
            return atmost(self, lits, k, *args, **kwargs)

        add_atmost.__solvergym_wrapped__ = atmost
        cls.add_atmost = add_atmost

    def snap(self, assumptions=(), *args, **kwargs):
        return (list(_clauses_of(self)), [int(x) for x in (assumptions or ())],
                bool(self.__dict__.get("_solvergym_overflow")))

    _patch(cls, "solve", "python-sat", f"{name}.solve", "pysat", snap)
    _patch(cls, "solve_limited", "python-sat", f"{name}.solve_limited", "pysat", snap)

    enum = cls.__dict__.get("enum_models") or getattr(cls, "enum_models", None)
    if enum is not None and getattr(enum, "__solvergym_wrapped__", None) is None:

        @functools.wraps(enum)
        def enum_models(self, assumptions=(), *args, **kwargs):
            if not STATE.active or STATE.depth:
                return enum(self, assumptions, *args, **kwargs)
            _record("python-sat", f"{name}.enum_models", "pysat", snap(self, assumptions))
            inner = enum(self, assumptions, *args, **kwargs)

            def iterate():
                # the blocking clauses enum_models adds are the library's, not the program's
                while True:
                    STATE.depth += 1
                    try:
                        model = next(inner)
                    except StopIteration:
                        return
                    finally:
                        STATE.depth -= 1
                    yield model

            return iterate()

        enum_models.__solvergym_wrapped__ = enum
        cls.enum_models = enum_models


def _pysat_formula(snapshot) -> dict:
    clauses, assumptions, overflow = snapshot
    plain = [c for c in clauses if isinstance(c, list)]
    atmost = [[c["atmost"], c["k"]] for c in clauses if isinstance(c, dict)]
    plain += [[a] for a in assumptions]
    used = {abs(x) for c in plain for x in c} | {abs(x) for lits, _ in atmost for x in lits}
    names: dict[str, str] = {}
    pools = list(STATE.pools)
    try:
        from pysat.formula import Formula

        pools += [p for p in getattr(Formula, "_vpool", {}).values() if p not in pools]
    except Exception:
        pass
    for pool in pools:
        for vid, obj in list(getattr(pool, "id2obj", {}).items()):
            if isinstance(vid, int) and vid > 0 and vid in used and str(vid) not in names:
                names[str(vid)] = obj if isinstance(obj, str) else repr(obj)
    out = {"kind": "cnf", "clauses": plain, "atmost": atmost, "names": names}
    if overflow:
        out["truncated"] = True
    return out


# ----------------------------------------------------------------------------- OR-Tools
def _install_ortools() -> None:
    try:
        from ortools.sat.python import cp_model
    except ImportError:
        cp_model = None
    if cp_model is not None:

        def snap(self, model=None, *args, **kwargs):
            model = kwargs.get("model", model)
            clone = getattr(model, "clone", None) or getattr(model, "Clone", None)
            return clone() if clone is not None else model

        for name in ("Solve", "solve", "SolveWithSolutionCallback", "solve_with_solution_callback",
                     "SearchForAllSolutions", "search_for_all_solutions"):
            _patch(cp_model.CpSolver, name, "ortools", f"CpSolver.{name}", "cpsat", snap)
    try:
        from ortools.linear_solver import pywraplp
    except ImportError:
        return

    def lp_snap(self, *args, **kwargs):
        return self.ExportModelAsLpFormat(False)

    _patch(pywraplp.Solver, "Solve", "ortools", "linear_solver.Solve", "lp", lp_snap)


_CP_LITERAL_LISTS = ("bool_or", "bool_and", "at_most_one", "exactly_one", "bool_xor")


def _proto_has(msg, field: str) -> bool:
    has = getattr(msg, "has_" + field, None)
    if has is not None:
        return bool(has())
    try:
        return msg.HasField(field)
    except (ValueError, AttributeError):
        return False


def _cpsat_formula(model) -> dict:
    proto = model.proto if hasattr(model, "proto") else model.Proto()
    variables = [{"name": v.name, "domain": [int(d) for d in v.domain]} for v in proto.variables]
    constraints = []
    for c in proto.constraints:
        entry = {"enforcement": [int(x) for x in c.enforcement_literal]}
        for kind in _CP_LITERAL_LISTS:
            if _proto_has(c, kind):
                entry.update(type=kind, literals=[int(x) for x in getattr(c, kind).literals])
                break
        else:
            if _proto_has(c, "linear"):
                lin = c.linear
                entry.update(type="linear", vars=[int(x) for x in lin.vars],
                             coeffs=[int(x) for x in lin.coeffs], domain=[int(x) for x in lin.domain])
            elif _proto_has(c, "all_diff"):
                exprs = c.all_diff.exprs
                entry.update(type="all_diff", exprs=[
                    {"vars": [int(x) for x in e.vars], "coeffs": [int(x) for x in e.coeffs],
                     "offset": int(e.offset)} for e in exprs])
            else:
                text = str(c).strip().splitlines()
                entry.update(type="unsupported", text=" ".join(text[:3])[:200])
        constraints.append(entry)
    text = str(proto)
    # the proto itself (text format) rides along for consumers other than the equivalence check
    return {"kind": "cpsat", "variables": variables, "constraints": constraints,
            "proto_text": text if len(text) <= MAX_PROTO_TEXT else None}


# ----------------------------------------------------------------------------- sympy
def _install_sympy() -> None:
    import sympy
    import sympy.logic
    import sympy.logic.inference as inf

    orig = inf.satisfiable
    if getattr(orig, "__solvergym_wrapped__", None) is not None:
        return

    def snap(expr, *args, **kwargs):
        return expr

    wrapped = _wrap_call("sympy", "satisfiable", "sympy", orig, snap)
    for mod in (inf, sympy.logic, sympy):
        if getattr(mod, "satisfiable", None) is orig:
            mod.satisfiable = wrapped


_SYMPY_OPS = {"And", "Or", "Not", "Implies", "Equivalent", "Xor", "ITE", "Nand", "Nor", "Xnor"}


def _sympy_formula(expr) -> dict:
    nodes = [0]

    def tree(e):
        nodes[0] += 1
        if nodes[0] > MAX_SYMPY_NODES:
            raise ValueError("formula too large")
        if e is True or type(e).__name__ == "BooleanTrue":
            return True
        if e is False or type(e).__name__ == "BooleanFalse":
            return False
        if getattr(e, "is_Symbol", False):
            return {"var": str(e.name)}
        op = type(e).__name__
        if op in _SYMPY_OPS:
            return {"op": op, "args": [tree(a) for a in e.args]}
        return {"unsupported": op, "text": str(e)[:200]}

    return {"kind": "sympy", "tree": tree(expr)}


# ----------------------------------------------------------------------------- gurobipy
def _install_gurobipy() -> None:
    import gurobipy

    def snap(self, *args, **kwargs):
        return None

    _patch(gurobipy.Model, "optimize", "gurobipy", "Model.optimize", "none", snap)


# ----------------------------------------------------------------------------- imports
_orig_import = builtins.__import__


def _tracking_import(name, globals=None, locals=None, fromlist=(), level=0):
    if STATE.active and level == 0 and name:
        top = name.partition(".")[0]
        if top in _SOLVER_TOPS:
            caller = (globals or {}).get("__name__") or ""
            if caller.partition(".")[0] not in _SOLVER_TOPS:  # not a solver importing itself
                STATE.imported.add(SOLVER_MODULES[top])
    return _orig_import(name, globals, locals, fromlist, level)


# ----------------------------------------------------------------------------- lifecycle
_INSTALLERS = {
    "z3": _install_z3,
    "pysmt": _install_pysmt,
    "pysat": _install_pysat,
    "ortools": _install_ortools,
    "sympy": _install_sympy,
    "gurobipy": _install_gurobipy,
}
_FORMULA = {
    "z3": _z3_formula,
    "pysmt": _pysmt_formula,
    "pysat": _pysat_formula,
    "cpsat": _cpsat_formula,
    "sympy": _sympy_formula,
    "lp": lambda text: {"kind": "lp", "text": text},
}


def install(modules=tuple(_INSTALLERS)) -> dict[str, str]:
    """Patch every available solver (in the server, once). Returns module -> "ok" or the reason."""
    out = {}
    for mod in modules:
        try:
            _INSTALLERS[mod]()
            out[mod] = "ok"
        except Exception as e:  # a solver that is missing or changed its API
            out[mod] = f"{type(e).__name__}: {e}"
    return out


def begin(report_fd: int) -> None:
    """Arm the instrumentation in a freshly forked child."""
    global _report_fd
    STATE.__init__()
    STATE.active = True
    _report_fd = report_fd
    builtins.__import__ = _tracking_import
    os._exit = _exit_with_report


def report() -> dict:
    """The record of this program: imports, calls, and the formula of the last call."""
    out = {
        "imported": sorted(STATE.imported),
        "calls": STATE.calls,
        "n_calls": STATE.n_calls,
        "formula": None,
        "formula_error": None,
        "memory_error": STATE.memory_error,
    }
    if STATE.last is not None:
        family, call, kind, snap = STATE.last
        STATE.active = False  # serialising must not record calls of its own
        STATE.depth += 1
        try:
            if isinstance(snap, _SnapshotError):
                out["formula_error"] = "snapshot failed: " + snap.message
            elif kind in _FORMULA:
                formula = _FORMULA[kind](snap)
                formula.update(solver=family, call=call)
                out["formula"] = formula
        except MemoryError:
            out["formula_error"] = "out of memory while serialising the formula"
        except Exception as e:
            out["formula_error"] = f"{type(e).__name__}: {e}"[:500]
    return out


def write_report() -> None:
    """Send the report to the server (once; later calls do nothing)."""
    global _report_fd
    fd, _report_fd = _report_fd, None
    if fd is None:
        return
    try:
        data = json.dumps(report(), separators=(",", ":"), default=str).encode("utf-8", "replace")
    except Exception as e:
        data = json.dumps({"formula_error": f"report failed: {type(e).__name__}"}).encode()
    view = memoryview(data)
    try:
        while view:
            n = os.write(fd, view)
            view = view[n:]
        os.close(fd)
    except OSError:
        pass


def _exit_with_report(code):
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:
            pass
    write_report()
    _real_exit(code)
