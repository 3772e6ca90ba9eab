"""The solver-call record a sandboxed program sends back, and its validation.

The record is written inside the program's own process (``capture/``), so it is hostile
input like everything else a program produces. The server (:func:`parse`) checks the run's
secret, the size, the nesting depth and the type of every field before it forwards anything; the
client checks the fields again (:func:`clean`). A record that fails is that program's failure,
status ``error`` with the reason: nothing here raises anything but :class:`RecordError`, and the
formula's contents are left to their consumer (the equivalence check), which bounds its own work.
The optimum (the last optimisation solve's result) is checked completely, field by field; its
MPS text is bounded here and parsed only by its consumer.

Standard library only: the pool (the client checks) and the server (which loads it with the rest
of the package, by path) share it.
"""
from __future__ import annotations

import hmac
import json
import re
from typing import Any

__all__ = ["RecordError", "parse", "clean", "clean_optimum", "objective_value", "MAX_BYTES", "MAX_DEPTH"]

SOLVER_NAMES = frozenset({"z3", "pysmt", "python-sat", "ortools", "sympy", "gurobipy", "highspy"})
FORMULA_KINDS = frozenset({"smt2", "cnf", "cpsat", "sympy", "lp"})
MAX_BYTES = 16 << 20
#: JSON nesting: a sympy formula tree is two levels per connective and the capture stops at 100
#: connectives (``MAX_SYMPY_DEPTH``); everything else is at most five deep
MAX_DEPTH = 256
MAX_CALLS = 200  # calls listed (``n_calls`` counts all)
MAX_COUNT = 1 << 53
MAX_NAME = 100
MAX_MESSAGE = 500
_KEYS = frozenset({"imported", "calls", "n_calls", "formula", "formula_error", "memory_error", "optimum",
                   "exit_code"})
#: top-level fields of each formula kind and their types (``None`` allowed where listed)
_FORMULA_FIELDS: dict[str, dict[str, tuple[type, ...]]] = {
    "smt2": {"text": (str,), "assertions": (int,)},
    "cnf": {"clauses": (list,), "atmost": (list,), "names": (dict,), "truncated": (bool,)},
    "cpsat": {"variables": (list,), "constraints": (list,), "proto_text": (str, type(None))},
    "sympy": {"tree": (dict, bool)},
    "lp": {"text": (str,)},
}
_REQUIRED = {"smt2": ("text",), "cnf": ("clauses",), "cpsat": ("variables", "constraints"), "sympy": ("tree",),
             "lp": ("text",)}


# -- the optimum (``capture/optimum.py``, ``OptimumReader``): the last optimisation solve's result
#: the optimisation entry points (as the optimum names them) of each solver
OPTIMUM_CALLS = {"gurobipy": frozenset({"Model.optimize"}), "highspy": frozenset({"Highs.run"}),
                 "ortools": frozenset({"linear_solver.Solve", "CpSolver.Solve", "mathopt.solve"})}
#: the status vocabulary of an optimum (solvergym's reference solves report a subset of it):
#: ``feasible`` is a limit hit with an incumbent, ``error`` a solve that raised or a solver that
#: reported an error
OPTIMUM_STATUSES = ("optimal", "infeasible", "unbounded", "inf_or_unbd", "time_limit", "feasible", "error", "other")
OPTIMUM_COUNTS = ("num_vars", "num_int", "num_bin", "num_constrs", "num_qconstrs", "num_q_obj_terms",
                  "num_gen_constrs")
MAX_MPS = 1 << 20  # MPS text an optimum carries, in UTF-8 bytes (so no more characters); larger: ``mps`` None
MAX_NUMBER_TEXT = 40
#: what ``repr(float(x))`` writes for a finite float: digits, one point, an exponent
_FLOAT_TEXT = re.compile(r"-?(?:[0-9]+\.[0-9]*|\.[0-9]+|[0-9]+)(?:[eE][-+]?[0-9]+)?")  # ASCII digits only
_OPTIMUM_KEYS = frozenset({"solver", "call", "status", "raw_status", "objective", "sense", *OPTIMUM_COUNTS,
                           "mps", "mps_truncated", "error"})


class RecordError(ValueError):
    """A record that cannot be believed; the message is the reason."""


def _no_float(text: str):
    raise RecordError(f"a record holds only integers, not {text[:20]!r}")


def _no_constant(text: str):
    raise RecordError(f"a record holds no {text}")


def parse(raw: bytes, secret: str) -> dict[str, Any] | None:
    """The validated record in ``raw`` (``None`` when the program sent none).

    Raises :class:`RecordError` when it is too large, not UTF-8 JSON, nested too deeply, not
    written with ``secret`` (the per-run secret the server gave the child's capture), or of the
    wrong shape."""
    if not raw:
        return None
    if len(raw) > MAX_BYTES:
        raise RecordError(f"the record is larger than {MAX_BYTES >> 20} MiB")
    try:
        obj = json.loads(raw.decode("utf-8"), parse_float=_no_float, parse_constant=_no_constant)
    except RecordError:
        raise
    except (ValueError, RecursionError) as e:  # UnicodeDecodeError and JSONDecodeError are ValueErrors
        raise RecordError(f"the record is not one JSON object ({type(e).__name__})") from None
    if not isinstance(obj, dict):
        raise RecordError(f"the record is a JSON {type(obj).__name__}, not an object")
    given = obj.pop("secret", None)
    if not (isinstance(given, str) and given.isascii() and secret and hmac.compare_digest(given, secret)):
        raise RecordError("the record was not written by the sandbox's capture (wrong or missing run secret)")
    return clean(obj)


def clean(obj: Any) -> dict[str, Any]:
    """``obj`` checked field by field (a new dict; messages truncated)."""
    if not isinstance(obj, dict):
        raise RecordError(f"the record is a {type(obj).__name__}, not an object")
    _check_depth(obj)
    extra = sorted(str(k)[:40] for k in obj if k not in _KEYS)
    if extra:
        raise RecordError(f"the record has unknown fields: {', '.join(extra[:5])}")
    imported = obj.get("imported", [])
    if not (isinstance(imported, list) and len(imported) <= len(SOLVER_NAMES)
            and all(isinstance(x, str) and x in SOLVER_NAMES for x in imported)):
        raise RecordError("'imported' must list solver names")
    calls = obj.get("calls", [])
    if not (isinstance(calls, list) and len(calls) <= MAX_CALLS and all(
            isinstance(c, list) and len(c) == 2 and c[0] in SOLVER_NAMES and isinstance(c[1], str)
            and 0 < len(c[1]) <= MAX_NAME for c in calls)):
        raise RecordError(f"'calls' must be at most {MAX_CALLS} [solver, function] pairs")
    n_calls = obj.get("n_calls", len(calls))
    if not (type(n_calls) is int and len(calls) <= n_calls <= MAX_COUNT):
        raise RecordError("'n_calls' must be an integer no smaller than the calls listed")
    if len(calls) < min(n_calls, MAX_CALLS):
        raise RecordError("'calls' lists fewer calls than 'n_calls' counts")
    memory_error = obj.get("memory_error", False)
    if type(memory_error) is not bool:
        raise RecordError("'memory_error' must be true or false")
    error = obj.get("formula_error")
    if error is not None and not isinstance(error, str):
        raise RecordError("'formula_error' must be a string")
    formula = obj.get("formula")
    if formula is not None:
        formula = _clean_formula(formula)
        if not calls:
            raise RecordError("the record has a formula but no solver call")
    out = {"imported": list(imported), "calls": [list(c) for c in calls], "n_calls": n_calls,
           "formula": formula, "formula_error": None if error is None else error[:MAX_MESSAGE],
           "memory_error": memory_error}
    # the status the capture passed to the kernel's exit (the server reads it, and forwards none)
    if "exit_code" in obj:
        code = obj["exit_code"]
        if not (type(code) is int and 0 <= code <= 255):
            raise RecordError("'exit_code' must be an exit status, 0 to 255")
        out["exit_code"] = code
    # only where the record has one: a record of the SAT capture alone stays what it was
    if "optimum" in obj:
        out["optimum"] = None if obj["optimum"] is None else clean_optimum(obj["optimum"])
    return out


def objective_value(text: Any) -> float | None:
    """The float an optimum's ``objective`` stands for (``None`` for ``None``): ``repr`` of a
    finite float, ``"inf"`` or ``"-inf"``; anything else (``"nan"``, ``"1_0"``, ``" 1"``,
    ``"infinity"``, a number that overflows to infinity) raises :class:`RecordError`."""
    if text is None:
        return None
    if not isinstance(text, str) or len(text) > MAX_NUMBER_TEXT:
        raise RecordError("the optimum's 'objective' must be a number written as a short string")
    if text in ("inf", "-inf"):
        return float(text)
    if not _FLOAT_TEXT.fullmatch(text):
        raise RecordError(f"the optimum's 'objective' {text[:20]!r} is not a finite number, 'inf' or '-inf'")
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise RecordError(f"the optimum's 'objective' {text[:20]!r} overflows")
    return value


def clean_optimum(opt: Any) -> dict[str, Any]:
    """An optimum checked field by field (every field present, nothing else; a new dict). The
    ``objective`` stays a string here (the record format has no floats); the client converts it
    with :func:`objective_value`."""
    if not isinstance(opt, dict):
        raise RecordError("'optimum' must be an object")
    extra = sorted(str(k)[:40] for k in opt if k not in _OPTIMUM_KEYS)
    if extra:
        raise RecordError(f"the optimum has unknown fields: {', '.join(extra[:5])}")
    missing = sorted(k for k in _OPTIMUM_KEYS if k not in opt)
    if missing:
        raise RecordError(f"the optimum lacks {', '.join(missing[:5])}")
    solver, call = opt["solver"], opt["call"]
    if not (isinstance(solver, str) and isinstance(call, str) and call in OPTIMUM_CALLS.get(solver, ())):
        raise RecordError("the optimum must name an optimisation solver and one of its calls")
    if opt["status"] not in OPTIMUM_STATUSES:
        raise RecordError(f"unknown optimum status {str(opt['status'])[:20]!r}")
    raw = opt["raw_status"]
    if not (isinstance(raw, str) and len(raw) <= MAX_NAME):
        raise RecordError(f"the optimum's 'raw_status' must be a string of at most {MAX_NAME} characters")
    objective_value(opt["objective"])
    if opt["sense"] not in ("min", "max", None):
        raise RecordError("the optimum's 'sense' must be 'min', 'max' or null")
    for key in OPTIMUM_COUNTS:
        n = opt[key]
        if not (type(n) is int and -1 <= n <= MAX_COUNT):
            raise RecordError(f"the optimum's {key!r} must be a count (or -1: unknown)")
    mps, truncated = opt["mps"], opt["mps_truncated"]
    if mps is not None and not (isinstance(mps, str) and len(mps) <= MAX_MPS):
        raise RecordError(f"the optimum's 'mps' must be text of at most {MAX_MPS >> 20} MiB")
    if type(truncated) is not bool or (truncated and mps is not None):
        raise RecordError("the optimum's 'mps_truncated' must be true or false (and true only without 'mps')")
    error = opt["error"]
    if error is not None and not (isinstance(error, str) and len(error) <= MAX_MESSAGE):
        raise RecordError(f"the optimum's 'error' must be a string of at most {MAX_MESSAGE} characters")
    if opt["status"] == "error" and error is None:
        raise RecordError("an optimum of status 'error' must say what the error was")
    return dict(opt)


def _clean_formula(f: Any) -> dict[str, Any]:
    if not isinstance(f, dict):
        raise RecordError("'formula' must be an object")
    kind = f.get("kind")
    if kind not in FORMULA_KINDS:
        raise RecordError(f"unknown formula kind {str(kind)[:20]!r}")
    if f.get("solver") not in SOLVER_NAMES or not isinstance(f.get("call"), str) or len(f["call"]) > MAX_NAME:
        raise RecordError("the formula must name its solver and call")
    fields = _FORMULA_FIELDS[kind]
    for key in f:
        if key in ("kind", "solver", "call"):
            continue
        types = fields.get(key)
        if types is None:
            raise RecordError(f"a {kind} formula has no field {str(key)[:40]!r}")
        if not isinstance(f[key], types) or (types == (int,) and isinstance(f[key], bool)):
            raise RecordError(f"the {kind} formula's {key!r} has the wrong type")
    missing = [k for k in _REQUIRED[kind] if k not in f]
    if missing:
        raise RecordError(f"the {kind} formula lacks {', '.join(missing)}")
    return dict(f)


def _check_depth(obj: Any) -> None:
    stack = [(obj, 1)]
    while stack:
        x, d = stack.pop()
        if d > MAX_DEPTH:
            raise RecordError(f"the record nests more than {MAX_DEPTH} levels")
        if isinstance(x, dict):
            stack.extend((v, d + 1) for v in x.values())
        elif isinstance(x, list):
            stack.extend((v, d + 1) for v in x)
