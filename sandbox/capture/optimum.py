"""The optimum: what a program's last optimisation solve found, read off the solver object.

SIRL scores a model by its objective value. Its released reward parses the objective from a
line the program prints (``Just print the best obj: ...``), which a program can print without
solving; here the optimum is read from the solver object right *after* the solve call returned
(gurobipy ``Model.optimize``, highspy ``Highs.run``/``solve``, OR-Tools ``pywraplp.Solver.Solve``,
CP-SAT ``CpSolver.Solve``/``solve``, MathOpt ``mathopt.solve``), in the program's process and
time, because the program may change or free the model afterwards: status, objective value,
sense, model size counts and the solved model as free MPS text. A solve that raises (gurobipy's
size-limited licence: ``GurobiError`` 10010) is an optimum too, of status ``error``.

The MPS text is what a reward should trust (the process that reports the rest is the
program's): the host reads and re-solves it. So every API exports one, where the program cannot
block it: gurobipy and HiGHS write a file into the capture's own directory (``core.export_dir``),
the OR-Tools APIs are written in memory (:func:`free_mps`). No MPS (too large, or a model MPS
cannot state) is said in ``mps_truncated`` or ``error``.

This module holds what every optimisation library shares: :class:`OptimumReader` (the shape of
an optimum and the rules of reading one; each library module gives it its own parts), the
number formats of the record, the MPS export's bounds and round trip through a file, and
:func:`free_mps`, the MPS text of a model given by its parts.
"""
from __future__ import annotations

import math
import os
import re
import tempfile

from ..record import MAX_MPS  # the bound the supervisor validates a record against
from .core import Capture
#: no MPS export for a model with more variables + constraints (the export and its read-back run
#: in the program's time and memory, and the text would be over MAX_MPS anyway)
MAX_MPS_MODEL = 200_000
#: every entry of an MPS file (row, column, nonzero) takes at least this many bytes: a model
#: whose entries alone exceed MAX_MPS is not written at all
MIN_MPS_ENTRY_BYTES = 6
MAX_OPT_ERROR = 500
MAX_RAW_STATUS = 100


class OptimumReader:
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
    it means the export failed or the model holds what MPS cannot state (``error`` says why:
    a CP-SAT ``all_different``, a domain of several intervals, ...).

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
    model cannot make the capture read its own answers (the package's "Trust" says what it can
    still do).
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


def float_text(x) -> str | None:
    """A number as the record carries it (``repr`` of the float; ``None`` for NaN)."""
    f = float(x)
    return None if f != f else repr(f)


def count(x) -> int:
    """A count as an optimum carries it (a negative one is -1: unknown)."""
    n = int(x)
    return n if n >= 0 else -1


def is_binary(lb, ub) -> bool:
    """Whether an integer variable with these bounds is a binary one."""
    return float(lb) == 0.0 and float(ub) == 1.0


def too_large_for_mps(opt: dict, nonzeros: int = 0) -> bool:
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


def write_and_read(cap: Capture, write) -> bytes | None:
    """Have ``write(path)`` write the model to a fresh ``.mps`` file in the capture's export
    directory (``core.export_dir``, chosen when the capture was armed), and read it back (at most
    MAX_MPS + 1 bytes: ``None`` past that); the file is removed whatever happens. It counts
    against the program's file size limit and /tmp."""
    directory = cap.tmpdir or tempfile.gettempdir()
    fd, path = tempfile.mkstemp(prefix=".sandbox-", suffix=".mps", dir=directory)
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


#: a name MPS text can carry as it is (one token, printable ASCII, not a comment or a marker);
#: a model with any other, or with one twice, is written with generated names
_MPS_NAME = re.compile(r"[A-Za-z0-9_][!-~]{0,99}")
_OBJ_ROW = "OBJ"


def free_mps(*, name: str, sense: str, columns: list, rows: list, objective: dict, constant: float = 0.0,
             quadratic=(), indicators=()) -> str | None:
    """Free-format MPS text of a model given by its parts, in the dialect the host reads
    (``envs/opt/mps.py``) and HiGHS and Gurobi read; ``None`` when it is over :data:`MAX_MPS`
    bytes (it stops writing there).

    ``columns``: ``(name, lb, ub, integer)`` per variable (infinite bounds as ``+-inf``);
    ``rows``: ``(name, lo, hi, {column index: coefficient})`` per linear row (a free row is left
    out); ``objective``: ``{column index: coefficient}`` plus ``constant`` (written as the
    objective row's RHS, ``-constant``, the Gurobi/HiGHS convention); ``quadratic``: ``(i, j, q)``
    for the objective term ``q * x_i * x_j`` (a QUADOBJ section, which states ``0.5 x'Qx``);
    ``indicators``: ``(row index, column index, value)``: the row holds only while the binary
    column equals the value (an INDICATORS section, Gurobi's syntax). Every column is listed in
    COLUMNS, one in no row with a zero objective entry. Raises ``ValueError`` for a model MPS
    cannot state (a lower bound above an upper one, a non-binary indicator, NaN)."""
    col_names = _mps_names([c[0] for c in columns], "C", ())
    row_names = _mps_names([r[0] for r in rows], "R", (_OBJ_ROW,))
    out = ["NAME " + (name if isinstance(name, str) and _MPS_NAME.fullmatch(name) else "")]
    if sense == "max":
        out.append("OBJSENSE\n    MAX")
    out.append("ROWS\n N  " + _OBJ_ROW)
    entries: list[list] = [[] for _ in columns]
    rhs, ranges, written = [], [], [None] * len(rows)
    size = 0  # bytes of ROWS and COLUMNS so far: every name and number is ASCII
    for r, (_, lo, hi, coefs) in enumerate(rows):
        lo, hi = float(lo), float(hi)
        if not lo <= hi:  # NaN too
            raise ValueError(f"row {r} has bounds [{lo}, {hi}]")
        if lo == -math.inf and hi == math.inf:
            continue  # a free row constrains nothing (and the host reads one N row only)
        rname = written[r] = row_names[r]
        kind, value = ("E", lo) if lo == hi else ("L", hi) if lo == -math.inf else ("G", lo) if hi == math.inf \
            else ("L", hi)
        out.append(f" {kind}  {rname}")
        if kind == "L" and lo != -math.inf:
            ranges.append(f"    RNG {rname} {_mps_num(hi - lo)}")
        if value:
            rhs.append(f"    RHS {rname} {_mps_num(value)}")
        for c, a in coefs.items():
            if a:
                entries[c].append(f" {rname} {_mps_num(a)}")
        size += len(rname) + 5 + 12 * len(coefs)
        if size > MAX_MPS:
            return None
    out.append("COLUMNS")
    integer_run = False
    for c, (_, lb, ub, integer) in enumerate(columns):
        if bool(integer) != integer_run:
            integer_run = bool(integer)
            out.append("    MARKER 'MARKER' " + ("'INTORG'" if integer_run else "'INTEND'"))
        head, a = "    " + col_names[c], objective.get(c, 0.0)
        if a or not entries[c]:
            out.append(f"{head} {_OBJ_ROW} {_mps_num(a)}")  # a column in no row is still a variable
        for entry in entries[c]:
            out.append(head + entry)
        size += (len(head) + 1) * (len(entries[c]) + 1) + sum(map(len, entries[c]))
        if size > MAX_MPS:
            return None
    if integer_run:
        out.append("    MARKER 'MARKER' 'INTEND'")
    out.append("RHS")
    if constant:
        out.append(f"    RHS {_OBJ_ROW} {_mps_num(-constant)}")
    out += rhs
    if ranges:
        out.append("RANGES")
        out += ranges
    out.append("BOUNDS")
    for c, (_, lb, ub, integer) in enumerate(columns):
        out += _mps_bounds(col_names[c], float(lb), float(ub), bool(integer))
    if quadratic:
        terms: dict[tuple[int, int], float] = {}
        for i, j, q in quadratic:
            key = (i, j) if i <= j else (j, i)
            terms[key] = terms.get(key, 0.0) + float(q)
        out.append("QUADOBJ")
        # QUADOBJ lists one triangle of Q in 0.5 x'Qx: q x_i^2 is 2q on the diagonal
        out += (f"    {col_names[i]} {col_names[j]} {_mps_num(2 * q if i == j else q)}"
                for (i, j), q in terms.items() if q)
    if indicators:
        out.append("INDICATORS")
        for r, c, value in indicators:
            _, lb, ub, integer = columns[c]
            if not (integer and float(lb) >= 0 and float(ub) <= 1):
                raise ValueError(f"indicator column {c} is not binary")
            if written[r] is not None:
                out.append(f" IF {written[r]} {col_names[c]} {int(value)}")
    out.append("ENDATA\n")
    text = "\n".join(out)
    return text if len(text) <= MAX_MPS else None


def _mps_names(given: list, prefix: str, reserved: tuple) -> list[str]:
    seen = set(reserved)
    for n in given:
        if not (isinstance(n, str) and _MPS_NAME.fullmatch(n)) or n in seen or n.strip("'").upper() == "MARKER":
            return [f"{prefix}{i}" for i in range(len(given))]
        seen.add(n)
    return list(given)


def _mps_num(v) -> str:
    text = repr(float(v))
    if text in ("inf", "-inf", "nan"):
        raise ValueError(f"a coefficient of {text}")
    return text[:-2] if text.endswith(".0") else text


def _mps_bounds(name: str, lb: float, ub: float, integer: bool) -> list[str]:
    """A column's BOUNDS lines. UP comes before LO: a negative UP alone frees the lower bound in
    MPS, and LO after it sets that bound again. An integer column gets an explicit upper bound
    (``PL`` for none): some readers bound a bare integer column to 1."""
    if lb != lb or ub != ub or lb > ub:
        raise ValueError(f"column {name} has bounds [{lb}, {ub}]")
    if lb == ub:
        return [f" FX BND {name} {_mps_num(lb)}"]
    if lb == -math.inf and ub == math.inf:
        return [f" FR BND {name}"]
    out = []
    if ub != math.inf:
        out.append(f" UP BND {name} {_mps_num(ub)}")
    elif integer:
        out.append(f" PL BND {name}")
    if lb == -math.inf:
        out.append(f" MI BND {name}")
    elif lb != 0 or ub < 0:
        out.append(f" LO BND {name} {_mps_num(lb)}")
    return out
