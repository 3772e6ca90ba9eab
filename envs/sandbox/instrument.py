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

This file runs in the sandbox's zygote, which must not import solvergym: it uses only the standard
library and the solvers, each optional. The patches are installed once in the zygote (before it
forks any child) and are inert there; :meth:`Capture.begin` arms them in a child.

Trust (what the ``tool`` reward can and cannot prove): the capture runs inside the program's own
process, so it is evidence, not proof. What the sandbox guarantees:

- a call counts only once the patched solver entry point *returned* (calling the wrapper with a
  fake object that makes the real solver raise records nothing);
- the capture's state lives in a :class:`Capture` object reachable only through the closures of
  the patched methods (no module-level state, this module is not in the program's
  ``sys.modules``), and the record carries a per-run secret the server sent with the program
  and checks before it believes a word of it: one write to the report descriptor, or one call of
  a function found by name, earns nothing;
- only the process that armed the capture reports (a forked helper that exits writes nothing).

What it cannot prove: a program that walks the interpreter's objects (``gc``, closure cells,
``ctypes`` reads of its own memory) can find the capture and its secret and forge a record; such
a record can claim only a formula the program could have handed to a solver anyway, so the
``equivalence`` reward it buys is the reward of writing that program honestly, and ``tool`` is
0.1. Nothing in the process can make in-process evidence unforgeable.
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
MAX_SYMPY_DEPTH = 100
MAX_PROTO_TEXT = 1 << 20


class Capture:
    """The capture of one process: what the patched entry points recorded, and the channel
    that reports it (armed by :meth:`begin` in a freshly forked child; inert before)."""

    #: this file, whose frames (the import hook) are left out of a program's tracebacks
    source_file = __file__

    def __init__(self):
        self.reset()
        self._fd: int | None = None
        self._writer = None

    def reset(self) -> None:
        self.active = False
        self.depth = 0
        self.imported: set[str] = set()
        self.calls: list[list[str]] = []
        self.n_calls = 0
        self.last = None  # (family, call, kind, snapshot)
        self.pools: list = []
        self.memory_error = False

    def record(self, family: str, call: str, kind: str, snapshot) -> None:
        self.n_calls += 1
        if len(self.calls) < MAX_CALLS:
            self.calls.append([family, call])
        self.last = (family, call, kind, snapshot)

    def begin(self, report_fd: int, secret: str) -> None:
        """Arm the capture in a freshly forked child: ``secret`` goes into every record (the
        server rejects a record without it), and only this process will report."""
        self.reset()
        self.active = True
        self._writer = _report_writer(self, report_fd, secret, os.getpid())
        builtins.__import__ = _tracking_import(self)
        os._exit = self._writer

    def note_memory_error(self) -> None:
        self.memory_error = True

    def exit(self, code: int):
        """Flush, report (once, from the armed process only) and end the process."""
        writer = self._writer
        if writer is None:
            _real_exit(code)
        writer(code)


def _report_writer(cap: "Capture", fd: int, secret: str, pid: int):
    """The exit function of an armed process; the secret lives only in this closure."""
    sent = []

    def exit_with_report(code):
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:
                pass
        # a forked helper inherits this function and the descriptor: it reports nothing
        if os.getpid() == pid and not sent:
            sent.append(True)
            try:
                rec = report(cap)
                rec["secret"] = secret
                data = json.dumps(rec, separators=(",", ":"), default=str).encode("utf-8", "replace")
            except Exception as e:
                data = json.dumps({"secret": secret, "formula_error": f"report failed: {type(e).__name__}"}).encode()
            view = memoryview(data)
            try:
                while view:
                    view = view[os.write(fd, view):]
                os.close(fd)
            except OSError:
                pass
        _real_exit(code)

    return exit_with_report


_real_exit = os._exit


def _wrap_call(cap: Capture, family: str, call: str, kind: str, fn, snapshot):
    """Record ``fn``'s outermost calls with ``snapshot(*args, **kwargs)`` taken before running;
    the call is recorded once ``fn`` returned."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        if not cap.active or cap.depth:
            return fn(*args, **kwargs)
        cap.depth += 1
        try:
            try:
                snap = snapshot(*args, **kwargs)
            except Exception as e:  # a snapshot must never break the program
                snap = _SnapshotError(f"{type(e).__name__}: {e}")
            out = fn(*args, **kwargs)
            cap.record(family, call, kind, snap)
            return out
        finally:
            cap.depth -= 1

    wrapper.__solvergym_wrapped__ = fn
    return wrapper


class _SnapshotError:
    def __init__(self, message: str):
        self.message = message


def _patch(cap: Capture, owner, name: str, family: str, call: str, kind: str, snapshot) -> bool:
    fn = owner.__dict__.get(name) if isinstance(owner, type) else getattr(owner, name, None)
    if fn is None or getattr(fn, "__solvergym_wrapped__", None) is not None:
        return False
    try:
        setattr(owner, name, _wrap_call(cap, family, call, kind, fn, snapshot))
        return True
    except (TypeError, AttributeError):  # extension types are immutable
        return False


# ----------------------------------------------------------------------------- z3
def _install_z3(cap: Capture) -> None:
    import z3

    def snap(self, *assumptions):
        return (list(self.assertions()), list(assumptions))

    _patch(cap, z3.Solver, "check", "z3", "Solver.check", "z3", snap)
    _patch(cap, z3.Optimize, "check", "z3", "Optimize.check", "z3", snap)


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
def _install_pysmt(cap: Capture) -> None:
    from pysmt.solvers.solver import IncrementalTrackingSolver

    def snap(self, assumptions=None):
        return (list(self.assertions), list(assumptions or []))

    _patch(cap, IncrementalTrackingSolver, "solve", "pysmt", "Solver.solve", "pysmt", snap)


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
def _install_pysat(cap: Capture) -> None:
    from pysat import formula as pf
    from pysat import solvers as ps

    orig_init = pf.IDPool.__init__
    if getattr(orig_init, "__solvergym_wrapped__", None) is None:

        @functools.wraps(orig_init)
        def init(self, *args, **kwargs):
            orig_init(self, *args, **kwargs)
            if cap.active:
                cap.pools.append(self)

        init.__solvergym_wrapped__ = orig_init
        pf.IDPool.__init__ = init

    backend = getattr(ps, "_SolverBackend", None)
    for cls in vars(ps).values():
        if not isinstance(cls, type) or cls is ps.Solver or "solve" not in cls.__dict__:
            continue
        if backend is not None and not issubclass(cls, backend):
            continue
        _patch_pysat_backend(cap, cls)


def _clauses_of(solver) -> list:
    return solver.__dict__.setdefault("_solvergym_clauses", [])


def _patch_pysat_backend(cap: Capture, cls) -> None:
    name = cls.__name__
    add = cls.__dict__.get("add_clause")
    if add is not None and getattr(add, "__solvergym_wrapped__", None) is None:

        @functools.wraps(add)
        def add_clause(self, clause, *args, **kwargs):
            if cap.active and not cap.depth:
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
            if cap.active and not cap.depth:
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

    _patch(cap, cls, "solve", "python-sat", f"{name}.solve", "pysat", snap)
    _patch(cap, cls, "solve_limited", "python-sat", f"{name}.solve_limited", "pysat", snap)

    enum = cls.__dict__.get("enum_models") or getattr(cls, "enum_models", None)
    if enum is not None and getattr(enum, "__solvergym_wrapped__", None) is None:

        @functools.wraps(enum)
        def enum_models(self, assumptions=(), *args, **kwargs):
            if not cap.active or cap.depth:
                return enum(self, assumptions, *args, **kwargs)
            before = snap(self, assumptions)
            inner = enum(self, assumptions, *args, **kwargs)
            cap.record("python-sat", f"{name}.enum_models", "pysat", before)

            def iterate():
                # the blocking clauses enum_models adds are the library's, not the program's
                while True:
                    cap.depth += 1
                    try:
                        model = next(inner)
                    except StopIteration:
                        return
                    finally:
                        cap.depth -= 1
                    yield model

            return iterate()

        enum_models.__solvergym_wrapped__ = enum
        cls.enum_models = enum_models


def _pysat_formula(snapshot, cap: Capture) -> dict:
    clauses, assumptions, overflow = snapshot
    plain = [c for c in clauses if isinstance(c, list)]
    atmost = [[c["atmost"], c["k"]] for c in clauses if isinstance(c, dict)]
    plain += [[a] for a in assumptions]
    used = {abs(x) for c in plain for x in c} | {abs(x) for lits, _ in atmost for x in lits}
    names: dict[str, str] = {}
    pools = list(cap.pools)
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
def _install_ortools(cap: Capture) -> None:
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
            _patch(cap, cp_model.CpSolver, name, "ortools", f"CpSolver.{name}", "cpsat", snap)
    try:
        from ortools.linear_solver import pywraplp
    except ImportError:
        return

    def lp_snap(self, *args, **kwargs):
        return self.ExportModelAsLpFormat(False)

    _patch(cap, pywraplp.Solver, "Solve", "ortools", "linear_solver.Solve", "lp", lp_snap)


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
def _install_sympy(cap: Capture) -> None:
    import sympy
    import sympy.logic
    import sympy.logic.inference as inf

    orig = inf.satisfiable
    if getattr(orig, "__solvergym_wrapped__", None) is not None:
        return

    def snap(expr, *args, **kwargs):
        return expr

    wrapped = _wrap_call(cap, "sympy", "satisfiable", "sympy", orig, snap)
    for mod in (inf, sympy.logic, sympy):
        if getattr(mod, "satisfiable", None) is orig:
            mod.satisfiable = wrapped


_SYMPY_OPS = {"And", "Or", "Not", "Implies", "Equivalent", "Xor", "ITE", "Nand", "Nor", "Xnor"}


def _sympy_formula(expr) -> dict:
    nodes = [0]

    def tree(e, depth=1):
        nodes[0] += 1
        if nodes[0] > MAX_SYMPY_NODES:
            raise ValueError(f"formula too large (more than {MAX_SYMPY_NODES} nodes)")
        if depth > MAX_SYMPY_DEPTH:  # the record is JSON, read with a bounded nesting depth
            raise ValueError(f"formula too deep (more than {MAX_SYMPY_DEPTH} levels)")
        if e is True or type(e).__name__ == "BooleanTrue":
            return True
        if e is False or type(e).__name__ == "BooleanFalse":
            return False
        if getattr(e, "is_Symbol", False):
            return {"var": str(e.name)}
        op = type(e).__name__
        if op in _SYMPY_OPS:
            return {"op": op, "args": [tree(a, depth + 1) for a in e.args]}
        return {"unsupported": op, "text": str(e)[:200]}

    return {"kind": "sympy", "tree": tree(expr)}


# ----------------------------------------------------------------------------- gurobipy
def _install_gurobipy(cap: Capture) -> None:
    import gurobipy

    def snap(self, *args, **kwargs):
        return None

    _patch(cap, gurobipy.Model, "optimize", "gurobipy", "Model.optimize", "none", snap)


# ----------------------------------------------------------------------------- imports
_orig_import = builtins.__import__


def _tracking_import(cap: Capture):
    def tracking_import(name, globals=None, locals=None, fromlist=(), level=0):
        if cap.active and level == 0 and name:
            top = name.partition(".")[0]
            if top in _SOLVER_TOPS:
                caller = (globals or {}).get("__name__") or ""
                if caller.partition(".")[0] not in _SOLVER_TOPS:  # not a solver importing itself
                    cap.imported.add(SOLVER_MODULES[top])
        return _orig_import(name, globals, locals, fromlist, level)

    return tracking_import


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


def install(modules=tuple(_INSTALLERS)) -> tuple[Capture, dict[str, str]]:
    """Patch every available solver (in the server, once, before it forks). Returns the
    capture the patches record into (inert until :meth:`Capture.begin`) and, per module, "ok"
    or the reason it is not instrumented. Nothing module-level refers to the capture."""
    cap = Capture()
    out = {}
    for mod in modules:
        try:
            _INSTALLERS[mod](cap)
            out[mod] = "ok"
        except Exception as e:  # a solver that is missing or changed its API
            out[mod] = f"{type(e).__name__}: {e}"
    return cap, out


def report(cap: Capture) -> dict:
    """The record of this program: imports, calls, and the formula of the last call."""
    out = {
        "imported": sorted(cap.imported),
        "calls": cap.calls,
        "n_calls": cap.n_calls,
        "formula": None,
        "formula_error": None,
        "memory_error": cap.memory_error,
    }
    if cap.last is not None:
        family, call, kind, snap = cap.last
        cap.active = False  # serialising must not record calls of its own
        cap.depth += 1
        try:
            if isinstance(snap, _SnapshotError):
                out["formula_error"] = "snapshot failed: " + snap.message
            elif kind in _FORMULA:
                formula = _pysat_formula(snap, cap) if kind == "pysat" else _FORMULA[kind](snap)
                formula.update(solver=family, call=call)
                out["formula"] = formula
        except MemoryError:
            out["formula_error"] = "out of memory while serialising the formula"
        except Exception as e:
            out["formula_error"] = f"{type(e).__name__}: {e}"[:500]
    return out
