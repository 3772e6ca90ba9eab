"""Solver-call instrumentation that runs inside every sandbox child (SAT-RL §3.4).

SAT-RL pays ``r_tool`` when "the final tool call executes without compilation errors and uses the
sampled solver", and ``r_equiv`` when "the proposed formula extracted from the last tool call" is
equivalent to the ground truth. Both need to know what the program *did* with a solver, not what
it imported: the reward hack of §4.3 (``from z3 import *; print('z3 imported')``) imports z3 and
never calls it. This module patches the solve/check entry points of the five solvers of §3.1 (and
Gurobi's ``optimize`` where its class allows it, HiGHS's ``run``/``solve``, MathOpt's ``solve``) and
records, at every call:

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

Optimisation solves (SolverOR-v0, after SIRL) get a second, separate part of the record, the
**optimum**: what the program's *last* optimisation solve found, read from the solver object right
*after* the solve call returned (gurobipy ``Model.optimize``, highspy ``Highs.run``/``solve``,
OR-Tools ``pywraplp.Solver.Solve``, CP-SAT ``CpSolver.Solve``/``solve``, MathOpt ``mathopt.solve``):
status, objective value, sense, model size counts and (where the solver can write it) the solved
model as free MPS text. It is built in the wrapper, in the program's process and time, because the
program may change or free the model after the solve; a solve that raises (gurobipy's size-limited
licence: ``GurobiError`` 10010) is recorded too, as status ``error``. SIRL's released reward parses
the objective from a line the program prints (``Just print the best obj: ...``), which a program
can print without solving; the optimum comes from the solver. See :class:`_OptimumReader` for the
shape and :data:`OPTIMUM_STATUSES`.

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

The optimum is held to the same rules: it is read off a real solver object (the wrapper records
none for a call on anything else) right after the real solver returned, with solver methods
looked up when the patch was installed (a program that replaces ``Model.write`` afterwards, or
subclasses the model, does not change what is read); a solve that raised gives an optimum of
status ``error``, which earns nothing.

What it cannot prove: a program that walks the interpreter's objects (``gc``, closure cells,
``ctypes`` reads of its own memory) can find the capture and its secret and forge a record; such
a record can claim only a formula the program could have handed to a solver anyway, so the
``equivalence`` reward it buys is the reward of writing that program honestly, and ``tool`` is
0.1. A forged optimum can claim an objective value the program never solved for, so a reward
built on it should re-solve the model it carries (``mps``) outside the sandbox where it matters.
Nothing in the process can make in-process evidence unforgeable.
"""
from __future__ import annotations

import builtins
import functools
import json
import operator
import os
import sys
import tempfile

#: top-level module -> solver family name used in prompts and rewards (SAT-RL §3.1's PyPI names
#: for python-sat; the others are their import names).
SOLVER_MODULES = {
    "z3": "z3",
    "pysmt": "pysmt",
    "pysat": "python-sat",
    "ortools": "ortools",
    "sympy": "sympy",
    "gurobipy": "gurobipy",
    "highspy": "highspy",
}
_SOLVER_TOPS = frozenset(SOLVER_MODULES)

MAX_CALLS = 200  # calls listed in the report (the count is always exact)
MAX_CLAUSES = 200_000  # clauses remembered per pysat solver
MAX_SYMPY_NODES = 200_000
MAX_SYMPY_DEPTH = 100
MAX_PROTO_TEXT = 1 << 20

#: the status vocabulary of an optimum; ``feasible`` is a limit hit with an incumbent, ``error``
#: a solve that raised or a solver that reported an error
OPTIMUM_STATUSES = ("optimal", "infeasible", "unbounded", "inf_or_unbd", "time_limit", "feasible", "error", "other")
MAX_MPS = 1 << 20  # bytes of MPS text an optimum carries (larger: ``mps`` None, ``mps_truncated``)
#: no MPS export for a model with more variables + constraints (the export and its read-back run
#: in the program's time and memory, and the text would be over MAX_MPS anyway)
MAX_MPS_MODEL = 200_000
#: every entry of an MPS file (row, column, nonzero) takes at least this many bytes: a model
#: whose entries alone exceed MAX_MPS is not written at all
MIN_MPS_ENTRY_BYTES = 6
MAX_OPT_ERROR = 500
MAX_RAW_STATUS = 100


class Capture:
    """The capture of one process: what the patched entry points recorded, and the channel
    that reports it (armed by :meth:`begin` in a freshly forked child; inert before)."""

    #: this file, whose frames (the import hook) are left out of a program's tracebacks
    source_file = __file__

    def __init__(self):
        self.reset()
        self.tmpdir: str | None = None
        self._fd: int | None = None
        self._writer = None

    def reset(self) -> None:
        self.active = False
        self.depth = 0
        self.imported: set[str] = set()
        self.calls: list[list[str]] = []
        self.n_calls = 0
        self.last = None  # (family, call, kind, snapshot)
        self.optimum: dict | None = None  # the last optimisation solve's result (JSON-ready)
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
        # where MPS exports are written and read back: the program's working directory (the
        # only place Landlock lets it write; the program may chdir away later)
        try:
            self.tmpdir = os.getcwd()
        except OSError:
            self.tmpdir = None
        self._writer = _report_writer(self, report_fd, secret, os.getpid())
        builtins.__import__ = _tracking_import(self)
        os._exit = self._writer

    def rehearse(self, tmpdir: str, run) -> None:
        """``run()`` with the capture recording, and exporting models into ``tmpdir``, as it will
        for a program; then everything it recorded is forgotten (a waiting child's rehearsal of
        the solvers' first calls: ``zygote.Zygote._rehearse``)."""
        self.reset()
        self.active = True
        self.tmpdir = tmpdir
        try:
            run()
        finally:
            self.reset()
            self.tmpdir = None

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
        code = operator.index(code) & 0xFF  # what the kernel keeps of it (os._exit's TypeError otherwise)
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
                rec["exit_code"] = code
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
            # The output is complete: closed now, the server has it (and the record) before the
            # kernel has torn the process down, which for a fork of the solvers' image takes
            # milliseconds; the exit status it reads meanwhile is the one reported above.
            for out in (1, 2):
                try:
                    os.close(out)
                except OSError:
                    pass
        _real_exit(code)

    return exit_with_report


_real_exit = os._exit


def _wrap_call(cap: Capture, family: str, call: str, kind: str, fn, snapshot, optimum=None):
    """Record ``fn``'s outermost calls with ``snapshot(*args, **kwargs)`` taken before running;
    the call is recorded once ``fn`` returned.

    ``optimum`` (an :class:`_OptimumReader`, for optimisation solves) reads the solver object
    right after the call returned and makes the result the capture's last optimum; a call that
    raises is recorded as an optimum of status ``error`` (it earns nothing, it only explains)
    and the exception propagates unchanged. The reading runs with the depth guard held, so
    nothing it calls is recorded as the program's."""

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
            if optimum is None:
                out = fn(*args, **kwargs)
                cap.record(family, call, kind, snap)
                return out
            try:
                out = fn(*args, **kwargs)
            except Exception as e:
                optimum.capture(cap, args, kwargs, None, e)
                raise
            cap.record(family, call, kind, snap)
            optimum.capture(cap, args, kwargs, out, None)
            return out
        finally:
            cap.depth -= 1

    wrapper.__solvergym_wrapped__ = fn
    return wrapper


class _SnapshotError:
    def __init__(self, message: str):
        self.message = message


def _patch(cap: Capture, owner, name: str, family: str, call: str, kind: str, snapshot, optimum=None) -> bool:
    fn = owner.__dict__.get(name) if isinstance(owner, type) else getattr(owner, name, None)
    if fn is None or getattr(fn, "__solvergym_wrapped__", None) is not None:
        return False
    try:
        setattr(owner, name, _wrap_call(cap, family, call, kind, fn, snapshot, optimum))
        return True
    except (TypeError, AttributeError):  # extension types are immutable
        return False


# ----------------------------------------------------------------------------- optimisation solves
class _OptimumReader:
    """How one optimisation entry point's result is read off the solver object after the call.

    The optimum it builds (JSON-ready: the record holds no floats, so every non-integer number is
    ``repr(float(x))``; ``record.py`` validates the shape, the client turns ``objective`` back
    into a float)::

        {"solver": "gurobipy" | "highspy" | "ortools",
         "call": "Model.optimize" | "Highs.run" | "linear_solver.Solve" | "CpSolver.Solve" | "mathopt.solve",
         "status": one of OPTIMUM_STATUSES, "raw_status": the solver's own status name,
         "objective": str | None (the incumbent's objective value), "sense": "min" | "max" | None,
         "num_vars", "num_int", "num_bin", "num_constrs", "num_qconstrs", "num_q_obj_terms",
         "num_gen_constrs": int (-1 where the solver cannot tell),
         "mps": str | None, "mps_truncated": bool, "error": str | None}

    ``call`` names the entry point family (``Highs.solve`` is reported as ``Highs.run``, every
    CP-SAT solve variant as ``CpSolver.Solve``); the exact function is in the call list.
    ``num_int`` counts general integers, ``num_bin`` binaries: integer variables bounded to
    exactly [0, 1] count as binary in every solver (what a binary becomes in MPS, whoever reads
    it). ``mps_truncated`` says the MPS text was left out for its size (over :data:`MAX_MPS`
    bytes, or a model over :data:`MAX_MPS_MODEL` variables + constraints); ``mps`` None without
    it means the solver cannot export (CP-SAT, MathOpt) or the export failed (``error`` says).

    The per-solver parts are functions given to the constructor, each of which may raise (every
    part is tried on its own and its failure goes into ``error``; a program never sees it):

    - ``owns(args, kwargs)``: whether the call was made on a real solver object (a call of the
      wrapper with anything else records no optimum);
    - ``status(opt, args, kwargs, out)``: fill ``status``/``raw_status``/``objective`` after a
      returned call;
    - ``model(opt, args, kwargs)``: fill ``sense`` and the counts (also after a call that raised);
    - ``export(cap, opt, args, kwargs)``: the MPS text (``None`` when the model is too large to
      be worth writing), or absent.

    Every solver method these parts use is looked up on the solver's class when the patch is
    installed, in the zygote: a program that later replaces ``Model.write`` or subclasses the
    model cannot make the capture read its own answers (see "Trust" for what it can still do).
    """

    def __init__(self, solver: str, call: str, owns, status, model, export=None):
        self.solver, self.call = solver, call
        self.owns, self.status, self.model, self.export = owns, status, model, export

    def capture(self, cap: Capture, args, kwargs, out, exc) -> None:
        """Make this call's optimum the capture's last one; never raises."""
        try:
            opt = self.read(cap, args, kwargs, out, exc)
        except Exception:  # the program must never break because of the capture
            return
        if opt is not None:
            cap.optimum = opt

    def read(self, cap: Capture, args, kwargs, out, exc) -> dict | None:
        if not self.owns(args, kwargs):
            return None
        opt = {"solver": self.solver, "call": self.call, "status": "other", "raw_status": "",
               "objective": None, "sense": None, "num_vars": -1, "num_int": -1, "num_bin": -1,
               "num_constrs": -1, "num_qconstrs": -1, "num_q_obj_terms": -1, "num_gen_constrs": -1,
               "mps": None, "mps_truncated": False, "error": None}
        errors: list[str] = []
        if exc is not None:
            opt["status"], opt["raw_status"] = "error", type(exc).__name__[:MAX_RAW_STATUS]
            errors.append(_exception_text(exc))
        else:
            with _Part(errors, "status"):
                self.status(opt, args, kwargs, out)
            if opt["status"] == "error":
                errors.insert(0, f"solver status {opt['raw_status']}")
        with _Part(errors, "model"):
            self.model(opt, args, kwargs)
        if self.export is not None:
            with _Part(errors, "mps"):
                _bounded_mps(opt, self.export(cap, opt, args, kwargs))
        opt["raw_status"] = str(opt["raw_status"])[:MAX_RAW_STATUS]
        opt["error"] = "; ".join(errors)[:MAX_OPT_ERROR] if errors else None
        return opt


class _Part:
    """One part of an optimum's reading: an exception in it is noted in ``errors`` and stops
    only that part (``MemoryError`` included: the program's memory is the program's)."""

    def __init__(self, errors: list, what: str):
        self.errors, self.what = errors, what

    def __enter__(self):
        return self

    def __exit__(self, etype, e, tb):
        if etype is None or not issubclass(etype, Exception):
            return False
        try:
            self.errors.append(f"{self.what}: {type(e).__name__}: {e}"[:MAX_OPT_ERROR])
        except Exception:
            self.errors.append(f"{self.what}: {etype.__name__}")
        return True


def _exception_text(e: BaseException) -> str:
    """``GurobiError 10010: <message>`` for an exception with an ``errno`` (Gurobi's), else
    ``<type>: <message>``; bounded."""
    name = type(e).__name__
    errno = getattr(e, "errno", None)
    msg = str(getattr(e, "message", None) or e)
    head = f"{name} {errno}" if type(errno) is int else name
    return f"{head}: {msg}"[:MAX_OPT_ERROR]


def _float_text(x) -> str | None:
    """A number as the record carries it (``repr`` of the float; ``None`` for NaN)."""
    f = float(x)
    return None if f != f else repr(f)


def _count(x) -> int:
    n = int(x)
    return n if n >= 0 else -1


def _is_binary(lb, ub) -> bool:
    return float(lb) == 0.0 and float(ub) == 1.0


def _too_large_for_mps(opt: dict, nonzeros: int = 0) -> bool:
    """Whether the model is not worth exporting: over MAX_MPS_MODEL variables + constraints, or
    with more entries than fit in MAX_MPS bytes at the shortest an MPS entry can be."""
    nv, nc = opt["num_vars"], opt["num_constrs"]
    rows_cols = max(nv, 0) + max(nc, 0) + max(opt["num_qconstrs"], 0)
    if rows_cols > MAX_MPS_MODEL:
        return True
    return (rows_cols + max(nonzeros, 0) + max(opt["num_q_obj_terms"], 0)) * MIN_MPS_ENTRY_BYTES > MAX_MPS


def _bounded_mps(opt: dict, text) -> None:
    if text is None:
        opt["mps_truncated"] = True
        return
    if isinstance(text, bytes):
        data = text
    else:
        data = str(text).encode("utf-8", "replace")
    if len(data) > MAX_MPS:
        opt["mps_truncated"] = True
        return
    opt["mps"] = data.decode("utf-8", "replace")


def _write_and_read(cap: Capture, write) -> bytes | None:
    """Have ``write(path)`` write the model to a fresh ``.mps`` file in the program's working
    directory, and read it back (at most MAX_MPS + 1 bytes: ``None`` past that); the file is
    removed whatever happens. It counts against the program's file size limit and /tmp."""
    directory = cap.tmpdir or tempfile.gettempdir()
    fd, path = tempfile.mkstemp(prefix=".solvergym-", suffix=".mps", dir=directory)
    try:
        os.close(fd)
        write(path)
        with open(path, "rb") as f:
            data = f.read(MAX_MPS + 1)
        return None if len(data) > MAX_MPS else data
    finally:
        try:
            os.unlink(path)
        except OSError:
            pass


def _arg(args, kwargs, index: int, name: str):
    if name in kwargs:
        return kwargs[name]
    return args[index] if len(args) > index else None


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

        reader = _cpsat_reader(cp_model)
        for name in ("Solve", "solve", "SolveWithSolutionCallback", "solve_with_solution_callback",
                     "SearchForAllSolutions", "search_for_all_solutions"):
            _patch(cap, cp_model.CpSolver, name, "ortools", f"CpSolver.{name}", "cpsat", snap, reader)
    try:
        _install_mathopt(cap)
    except Exception:  # MathOpt is optional: an OR-Tools without it (or changed) is still patched
        pass
    try:
        from ortools.linear_solver import pywraplp
    except ImportError:
        return

    def lp_snap(self, *args, **kwargs):
        return self.ExportModelAsLpFormat(False)

    _patch(cap, pywraplp.Solver, "Solve", "ortools", "linear_solver.Solve", "lp", lp_snap, _pywraplp_reader(pywraplp))


#: pywraplp.Solver.ResultStatus values
_LP_STATUS = {0: ("OPTIMAL", "optimal"), 1: ("FEASIBLE", "feasible"), 2: ("INFEASIBLE", "infeasible"),
              3: ("UNBOUNDED", "unbounded"), 4: ("ABNORMAL", "error"), 5: ("MODEL_INVALID", "error"),
              6: ("NOT_SOLVED", "other")}


def _pywraplp_reader(pywraplp) -> _OptimumReader:
    Solver = pywraplp.Solver
    objective_of, variables_of = Solver.Objective, Solver.variables
    num_constraints, export_mps = Solver.NumConstraints, Solver.ExportModelAsMpsFormat

    def owns(args, kwargs):
        return bool(args) and isinstance(args[0], Solver)

    def status(opt, args, kwargs, out):
        code = int(out)
        opt["raw_status"], opt["status"] = _LP_STATUS.get(code, (str(code), "other"))
        if code in (0, 1):
            opt["objective"] = _float_text(objective_of(args[0]).Value())

    def model(opt, args, kwargs):
        solver = args[0]
        opt["sense"] = "max" if objective_of(solver).maximization() else "min"
        n_vars = n_int = n_bin = 0
        for v in variables_of(solver):
            n_vars += 1
            if v.integer():
                if _is_binary(v.lb(), v.ub()):
                    n_bin += 1
                else:
                    n_int += 1
        opt["num_vars"], opt["num_int"], opt["num_bin"] = n_vars, n_int, n_bin
        opt["num_constrs"] = _count(num_constraints(solver))
        # pywraplp's Python API builds linear models only (no quadratic or general constraints)
        opt["num_qconstrs"] = opt["num_q_obj_terms"] = opt["num_gen_constrs"] = 0

    def export(cap, opt, args, kwargs):
        if _too_large_for_mps(opt):
            return None
        text = export_mps(args[0], False, False)  # free format, the model's own names
        if not text:
            raise RuntimeError("OR-Tools exported no MPS text")
        return text

    return _OptimumReader("ortools", "linear_solver.Solve", owns, status, model, export)


#: CpSolverStatus values
_CP_STATUS = {0: ("UNKNOWN", "other"), 1: ("MODEL_INVALID", "error"), 2: ("FEASIBLE", "feasible"),
              3: ("INFEASIBLE", "infeasible"), 4: ("OPTIMAL", "optimal")}


def _cpsat_reader(cp_model) -> _OptimumReader:
    CpSolver, CpModel = cp_model.CpSolver, cp_model.CpModel
    objective_value = CpSolver.__dict__.get("objective_value")
    objective_value = objective_value.fget if isinstance(objective_value, property) else CpSolver.ObjectiveValue

    def proto_of(args, kwargs):
        model = _arg(args, kwargs, 1, "model")
        return model.proto if isinstance(model, CpModel) else None

    def owns(args, kwargs):
        return bool(args) and isinstance(args[0], CpSolver) and proto_of(args, kwargs) is not None

    def has_objective(proto) -> bool:
        return _proto_has(proto, "objective") or _proto_has(proto, "floating_point_objective")

    def status(opt, args, kwargs, out):
        code = int(out)
        opt["raw_status"], opt["status"] = _CP_STATUS.get(code, (str(code), "other"))
        if code in (2, 4) and has_objective(proto_of(args, kwargs)):
            opt["objective"] = _float_text(objective_value(args[0]))

    def model(opt, args, kwargs):
        proto = proto_of(args, kwargs)
        if _proto_has(proto, "objective"):  # a maximisation is stored negated
            opt["sense"] = "max" if float(proto.objective.scaling_factor) < 0 else "min"
        elif _proto_has(proto, "floating_point_objective"):
            opt["sense"] = "max" if proto.floating_point_objective.maximize else "min"
        n_vars = n_bin = 0
        for v in proto.variables:
            n_vars += 1
            dom = list(v.domain)
            if dom and min(dom) >= 0 and max(dom) <= 1:
                n_bin += 1
        # every CP-SAT variable is an integer; every constraint but a linear one is "general"
        opt["num_vars"], opt["num_bin"], opt["num_int"] = n_vars, n_bin, n_vars - n_bin
        n_lin = n_all = 0
        for c in proto.constraints:
            n_all += 1
            n_lin += _proto_has(c, "linear")
        opt["num_constrs"], opt["num_gen_constrs"] = n_lin, n_all - n_lin
        opt["num_qconstrs"] = opt["num_q_obj_terms"] = 0

    return _OptimumReader("ortools", "CpSolver.Solve", owns, status, model)


#: MathOpt termination reasons that map directly
_MATHOPT_DIRECT = {"OPTIMAL": "optimal", "INFEASIBLE": "infeasible", "UNBOUNDED": "unbounded",
                   "INFEASIBLE_OR_UNBOUNDED": "inf_or_unbd", "FEASIBLE": "feasible",
                   "NUMERICAL_ERROR": "error", "OTHER_ERROR": "error", "IMPRECISE": "other"}


def _install_mathopt(cap: Capture) -> None:
    """``mathopt.solve`` is a module-level function (defined in ``ortools.math_opt.python.solve``
    and re-exported by ``mathopt``): it is replaced in every module that holds that function."""
    import ortools.math_opt.python.solve as solve_mod
    from ortools.math_opt.python import mathopt

    orig = solve_mod.solve
    if getattr(orig, "__solvergym_wrapped__", None) is not None:
        return
    Model = mathopt.Model

    def model_of(args, kwargs):
        m = _arg(args, kwargs, 0, "opt_model")
        return m if isinstance(m, Model) else None

    def owns(args, kwargs):
        return model_of(args, kwargs) is not None

    def status(opt, args, kwargs, out):
        term = out.termination
        opt["raw_status"] = raw = term.reason.name
        if raw == "NO_SOLUTION_FOUND":
            limit = getattr(term.limit, "name", None)
            opt["status"] = "time_limit" if limit == "TIME" else "other"
        else:
            opt["status"] = _MATHOPT_DIRECT.get(raw, "other")
        if out.has_primal_feasible_solution():
            opt["objective"] = _float_text(out.objective_value())

    def model(opt, args, kwargs):
        m = model_of(args, kwargs)
        opt["sense"] = "max" if m.objective.is_maximize else "min"
        n_vars = n_int = n_bin = 0
        for v in m.variables():
            n_vars += 1
            if v.integer:
                if _is_binary(v.lower_bound, v.upper_bound):
                    n_bin += 1
                else:
                    n_int += 1
        opt["num_vars"], opt["num_int"], opt["num_bin"] = n_vars, n_int, n_bin
        opt["num_constrs"] = _count(m.get_num_linear_constraints())
        opt["num_qconstrs"] = _count(m.get_num_quadratic_constraints())
        opt["num_gen_constrs"] = _count(m.get_num_indicator_constraints())
        opt["num_q_obj_terms"] = _count(sum(1 for _ in m.objective.quadratic_terms()))

    def snap(*args, **kwargs):
        return None

    reader = _OptimumReader("ortools", "mathopt.solve", owns, status, model)
    wrapped = _wrap_call(cap, "ortools", "mathopt.solve", "none", orig, snap, reader)
    for mod in (solve_mod, mathopt):
        if getattr(mod, "solve", None) is orig:
            mod.solve = wrapped


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
#: Gurobi statuses that mean "stopped at a limit": with an incumbent the optimum is ``feasible``
_GRB_LIMITS = frozenset({"ITERATION_LIMIT", "NODE_LIMIT", "TIME_LIMIT", "SOLUTION_LIMIT", "INTERRUPTED",
                         "SUBOPTIMAL", "USER_OBJ_LIMIT", "WORK_LIMIT", "MEM_LIMIT", "LOCALLY_OPTIMAL"})
_GRB_DIRECT = {"OPTIMAL": "optimal", "INFEASIBLE": "infeasible", "UNBOUNDED": "unbounded",
               "INF_OR_UNBD": "inf_or_unbd", "NUMERIC": "error"}


def _gurobi_status(raw: str, incumbent: bool) -> str:
    if raw in _GRB_DIRECT:
        return _GRB_DIRECT[raw]
    if raw in _GRB_LIMITS:
        if incumbent:
            return "feasible"
        return "time_limit" if raw in ("TIME_LIMIT", "WORK_LIMIT") else "other"
    return "other"


def _install_gurobipy(cap: Capture) -> None:
    import gurobipy

    def snap(self, *args, **kwargs):
        return None

    Model = gurobipy.Model
    get_attr, get_vars, write = Model.getAttr, Model.getVars, Model.write
    names = {getattr(gurobipy.GRB.Status, k): k for k in dir(gurobipy.GRB.Status) if k.isupper()}

    def owns(args, kwargs):
        return bool(args) and isinstance(args[0], Model)

    def status(opt, args, kwargs, out):
        m = args[0]
        code = int(get_attr(m, "Status"))
        opt["raw_status"] = raw = names.get(code, str(code))
        incumbent = int(get_attr(m, "SolCount")) > 0
        opt["status"] = _gurobi_status(raw, incumbent)
        if incumbent:
            opt["objective"] = _float_text(get_attr(m, "ObjVal"))

    def model(opt, args, kwargs):
        m = args[0]
        opt["sense"] = "max" if int(get_attr(m, "ModelSense")) == -1 else "min"
        opt["num_vars"] = _count(get_attr(m, "NumVars"))
        opt["num_constrs"] = _count(get_attr(m, "NumConstrs"))
        opt["num_qconstrs"] = _count(get_attr(m, "NumQConstrs"))
        opt["num_q_obj_terms"] = _count(get_attr(m, "NumQNZs"))
        # indicator, max, and, ... constraints and SOS constraints are all "general" ones
        opt["num_gen_constrs"] = _count(int(get_attr(m, "NumGenConstrs")) + int(get_attr(m, "NumSOS")))
        n_int, n_bin = int(get_attr(m, "NumIntVars")), int(get_attr(m, "NumBinVars"))
        if n_int > n_bin:  # Gurobi's NumBinVars counts type B only; an I in [0, 1] is binary too
            vs = get_vars(m)
            for t, lb, ub in zip(get_attr(m, "VType", vs), get_attr(m, "LB", vs), get_attr(m, "UB", vs)):
                if t == "I" and _is_binary(lb, ub):
                    n_bin += 1
        opt["num_bin"], opt["num_int"] = _count(n_bin), _count(n_int - n_bin)

    def export(cap, opt, args, kwargs):
        m = args[0]
        if _too_large_for_mps(opt, int(get_attr(m, "NumNZs"))):
            return None
        return _write_and_read(cap, lambda path: write(m, path))

    reader = _OptimumReader("gurobipy", "Model.optimize", owns, status, model, export)
    _patch(cap, Model, "optimize", "gurobipy", "Model.optimize", "none", snap, reader)


# ----------------------------------------------------------------------------- highspy
_HIGHS_DIRECT = {"kOptimal": "optimal", "kInfeasible": "infeasible", "kUnbounded": "unbounded",
                 "kUnboundedOrInfeasible": "inf_or_unbd"}
_HIGHS_ERRORS = frozenset({"kLoadError", "kModelError", "kPresolveError", "kSolveError", "kPostsolveError"})
_HIGHS_LIMITS = frozenset({"kTimeLimit", "kIterationLimit", "kSolutionLimit", "kInterrupt", "kHighsInterrupt",
                           "kMemoryLimit", "kObjectiveBound", "kObjectiveTarget", "kUnknown"})
_HIGHS_FEASIBLE = 2  # kSolutionStatusFeasible: the primal solution is feasible
_HIGHS_INTEGER = frozenset({1, 3})  # kInteger, kSemiInteger


def _highs_status(raw: str, incumbent: bool) -> str:
    if raw in _HIGHS_DIRECT:
        return _HIGHS_DIRECT[raw]
    if raw in _HIGHS_ERRORS:
        return "error"
    if raw in _HIGHS_LIMITS:
        if incumbent:
            return "feasible"
        return "time_limit" if raw == "kTimeLimit" else "other"
    return "other"  # kNotset, kModelEmpty


def _install_highspy(cap: Capture) -> None:
    import highspy

    Highs = highspy.Highs
    # ``run`` lives on the compiled base class (``_Highs``): patching it there catches every way
    # in (``Highs.solve`` calls ``super().run()``, from a helper thread when it handles Ctrl-C,
    # and ``minimize``/``maximize`` call ``solve``); the depth guard keeps solve -> run one call
    base = next(k for k in Highs.__mro__ if "run" in k.__dict__)
    get_status, get_info, get_lp = base.getModelStatus, base.getInfo, base.getLp
    get_model, get_nnz = base.getModel, base.getNumNz
    get_hessian_nnz = getattr(base, "getHessianNumNz", None)

    def snap(self, *args, **kwargs):
        return None

    def owns(args, kwargs):
        return bool(args) and isinstance(args[0], base)

    def status(opt, args, kwargs, out):
        h = args[0]
        st = get_status(h)
        opt["raw_status"] = raw = getattr(st, "name", None) or str(st)
        info = get_info(h)
        incumbent = int(info.primal_solution_status) == _HIGHS_FEASIBLE
        opt["status"] = _highs_status(raw, incumbent)
        if incumbent:
            opt["objective"] = _float_text(info.objective_function_value)

    def model(opt, args, kwargs):
        h = args[0]
        lp = get_lp(h)
        opt["sense"] = "max" if int(lp.sense_) == -1 else "min"
        opt["num_vars"], opt["num_constrs"] = _count(lp.num_col_), _count(lp.num_row_)
        n_int = n_bin = 0
        integrality = list(lp.integrality_)  # empty for an LP
        if integrality:
            for t, lb, ub in zip(integrality, lp.col_lower_, lp.col_upper_):
                if int(t) in _HIGHS_INTEGER:
                    if int(t) == 1 and _is_binary(lb, ub):
                        n_bin += 1
                    else:
                        n_int += 1
        opt["num_int"], opt["num_bin"] = n_int, n_bin
        opt["num_qconstrs"] = opt["num_gen_constrs"] = 0  # HiGHS has neither
        if get_hessian_nnz is not None:
            opt["num_q_obj_terms"] = _count(get_hessian_nnz(h))
        else:
            opt["num_q_obj_terms"] = _count(len(get_model(h).hessian_.index_))

    def export(cap, opt, args, kwargs):
        h = args[0]
        if _too_large_for_mps(opt, int(get_nnz(h))):
            return None
        # A copy writes the file: writeModel gives an unnamed model names (c0, r0, ...) and logs
        # to the program's stdout, and the program's own instance must not change.
        copy = base()
        copy.setOptionValue("output_flag", False)
        copy.passModel(get_model(h))
        return _write_and_read(cap, lambda path: _highs_write(copy, path))

    reader = _OptimumReader("highspy", "Highs.run", owns, status, model, export)
    _patch(cap, base, "run", "highspy", "Highs.run", "none", snap, reader)
    _patch(cap, Highs, "solve", "highspy", "Highs.solve", "none", snap, reader)


def _highs_write(h, path: str) -> None:
    st = h.writeModel(path)
    if getattr(st, "name", "") == "kError":
        raise RuntimeError("HiGHS could not write the model")


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
    "highspy": _install_highspy,
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
    """The record of this program: imports, calls, the formula of the last call, and the
    optimum of the last optimisation solve (built when that solve returned, see
    :class:`_OptimumReader`)."""
    out = {
        "imported": sorted(cap.imported),
        "calls": cap.calls,
        "n_calls": cap.n_calls,
        "formula": None,
        "formula_error": None,
        "memory_error": cap.memory_error,
        "optimum": cap.optimum,
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
