"""The capture's core: what one process recorded, how a solver entry point is wrapped, and the
record written when the program exits.

Every library module of this package (``z3.py``, ``pysat.py``, ...) patches its solver's entry
points with :func:`patch` / :func:`wrap_call`; the wrappers record into one :class:`Capture`.
A wrapper records only the outermost call (a depth guard: pysmt running z3, or pysat's
``enum_models`` adding blocking clauses, are the library's calls, not the program's) and only
once the real entry point returned, with a snapshot of what the solver was handed taken before
the call (later ``add`` calls do not change it).

The record (:meth:`Capture.report`, written by the exit function :meth:`Capture.begin`
installs) lists the solver imports the program made (:func:`tracking_import`), its calls, the
formula of the *last* call (serialised once, at exit, by the library's formula function) and
the last optimum (``optimum.py``). It carries the run's secret, which lives only in the exit
function's closure; only the process that armed the capture writes one.
"""
from __future__ import annotations

import builtins
import functools
import json
import operator
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
    "highspy": "highspy",
}
_SOLVER_TOPS = frozenset(SOLVER_MODULES)

MAX_CALLS = 200  # calls listed in the report (the count is always exact)
#: the attribute a wrapper carries, pointing at what it wraps (so nothing is wrapped twice)
WRAPPED = "__sandbox_wrapped__"

_real_exit = os._exit
_orig_import = builtins.__import__


class Capture:
    """The capture of one process: what the patched entry points recorded, and the channel
    that reports it (armed by :meth:`begin` in a freshly forked child; inert before).

    ``formulas`` maps a snapshot's kind to the function that serialises it at exit
    (``formula(snapshot, capture) -> dict``); ``source_files`` are the capture's own files,
    whose frames (wrappers, the import hook) are left out of a program's tracebacks."""

    def __init__(self, formulas: dict, source_files: frozenset[str]):
        self.formulas = formulas
        self.source_files = source_files
        self.reset()
        self.tmpdir: str | None = None
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
        self.tmpdir = export_dir()
        self._writer = _report_writer(self, report_fd, secret, os.getpid())
        builtins.__import__ = tracking_import(self)
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

    def report(self) -> dict:
        """The record of this program: imports, calls, the formula of the last call, and the
        optimum of the last optimisation solve (built when that solve returned, see
        ``optimum.OptimumReader``)."""
        out = {
            "imported": sorted(self.imported),
            "calls": self.calls,
            "n_calls": self.n_calls,
            "formula": None,
            "formula_error": None,
            "memory_error": self.memory_error,
            "optimum": self.optimum,
        }
        if self.last is not None:
            family, call, kind, snap = self.last
            self.active = False  # serialising must not record calls of its own
            self.depth += 1
            try:
                if isinstance(snap, SnapshotError):
                    out["formula_error"] = "snapshot failed: " + snap.message
                elif kind in self.formulas:
                    formula = self.formulas[kind](snap, self)
                    formula.update(solver=family, call=call)
                    out["formula"] = formula
            except MemoryError:
                out["formula_error"] = "out of memory while serialising the formula"
            except Exception as e:
                out["formula_error"] = f"{type(e).__name__}: {e}"[:500]
        return out


def _report_writer(cap: Capture, fd: int, secret: str, pid: int):
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
                rec = cap.report()
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


#: the capture's own export directory is the working directory's name plus this suffix, beside it
#: (the supervisor removes both after the program; under the namespaces they go with its /tmp)
EXPORT_SUFFIX = ".mps"


def export_dir() -> str | None:
    """Where this process's MPS exports are written and read back, made when the capture is armed
    (before the program runs): the working directory's sibling ``<workdir>.mps``, mode 0700, so
    that a program that makes its working directory read-only or unreadable, removes it or chdirs
    away still exports its model (the name is the working directory's, unpredictable to the
    program). The working directory itself where the sibling cannot be made (under Landlock the
    working directory is the only place the program may write). ``None`` when there is no
    working directory. A program can still remove or lock the directory it finds: then no model
    comes back, and an answer without one earns no accuracy."""
    try:
        workdir = os.getcwd()
    except OSError:
        return None
    private = workdir + EXPORT_SUFFIX
    try:
        os.mkdir(private, 0o700)
        return private
    except FileExistsError:  # made by this child's rehearsal, before the program came
        return private if os.path.isdir(private) and not os.path.islink(private) else workdir
    except OSError:
        return workdir


def wrap_call(cap: Capture, family: str, call: str, kind: str, fn, snapshot, optimum=None):
    """Record ``fn``'s outermost calls with ``snapshot(*args, **kwargs)`` taken before running;
    the call is recorded once ``fn`` returned.

    ``optimum`` (an ``optimum.OptimumReader``, for optimisation solves) reads the solver object
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
                snap = SnapshotError(f"{type(e).__name__}: {e}")
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

    return mark_wrapped(wrapper, fn)


class SnapshotError:
    """What a snapshot that raised leaves in place of the snapshot (the record says why)."""

    def __init__(self, message: str):
        self.message = message


def is_wrapped(fn) -> bool:
    """Whether ``fn`` is already one of the capture's wrappers."""
    return getattr(fn, WRAPPED, None) is not None


def mark_wrapped(wrapper, fn):
    """``wrapper``, marked as the capture's wrapper of ``fn``."""
    setattr(wrapper, WRAPPED, fn)
    return wrapper


def patch(cap: Capture, owner, name: str, family: str, call: str, kind: str, snapshot, optimum=None) -> bool:
    """Replace ``owner.name`` (a class's own attribute, or a module's) by its :func:`wrap_call`
    wrapper; False where there is none, it is wrapped already, or ``owner`` is immutable."""
    fn = owner.__dict__.get(name) if isinstance(owner, type) else getattr(owner, name, None)
    if fn is None or is_wrapped(fn):
        return False
    try:
        setattr(owner, name, wrap_call(cap, family, call, kind, fn, snapshot, optimum))
        return True
    except (TypeError, AttributeError):  # extension types are immutable
        return False


def argument(args, kwargs, index: int, name: str):
    """A call's argument given by position ``index`` or by keyword ``name`` (``None`` if absent)."""
    if name in kwargs:
        return kwargs[name]
    return args[index] if len(args) > index else None


def tracking_import(cap: Capture):
    """An ``__import__`` that notes the solver libraries the program imports itself (not a
    solver importing its own modules)."""

    def tracking_import(name, globals=None, locals=None, fromlist=(), level=0):
        if cap.active and level == 0 and name:
            top = name.partition(".")[0]
            if top in _SOLVER_TOPS:
                caller = (globals or {}).get("__name__") or ""
                if caller.partition(".")[0] not in _SOLVER_TOPS:  # not a solver importing itself
                    cap.imported.add(SOLVER_MODULES[top])
        return _orig_import(name, globals, locals, fromlist, level)

    return tracking_import
