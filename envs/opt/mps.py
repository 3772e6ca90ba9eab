"""Reading the model a program solved, as the sandbox exported it (free MPS), into a
:class:`~.model.LinearModel`, so its structure can be measured (SIRL §3.3's stage-2 bonus reads the
``.lp`` file for binaries, big-M and non-linear forms; §3.1's self-consistency reads direction and
variable counts from it).

MPS, not LP: HiGHS cannot read gurobipy's LP files with bracketed names (``x[0]``), while
gurobipy's, HiGHS's and OR-Tools' MPS exports all read the same way. The text is hostile (the
program built the model): its size is bounded by the sandbox's capture, every line is checked, and
anything this reader does not understand is a :class:`MPSError`, never another exception.

Sections read: NAME, OBJSENSE (``MAX``/``MIN``, on its line or the next), ROWS (N, L, G, E),
COLUMNS (with ``MARKER INTORG``/``INTEND`` integer markers), RHS (the objective row's RHS is minus
the objective's constant), RANGES, BOUNDS (UP, LO, FX, FR, MI, PL, BV, LI, UI), QUADOBJ / QMATRIX
(the objective's quadratic part), and the quadratic-constraint and general-constraint sections
(QCMATRIX, QSECTION, INDICATORS, GENCONS, SOS), which are not modelled in the
:class:`LinearModel` but kept as plain lists on :class:`MPSModel` (:mod:`.audit` asks whether
their variables are used elsewhere; the re-solve hands such a text to gurobipy whole).

Linear in the text's size: each line is read once and each entry filed under its row as it is
read (a row-by-column scan cost seconds on a model of empty rows). ``deadline`` (a
``time.perf_counter()`` value) bounds the time: past it, :class:`MPSBudgetError`.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

from .model import Constraint, LinearModel, Var

__all__ = ["MPSError", "MPSBudgetError", "MPSModel", "read_mps", "MAX_MPS_CHARS", "INFINITE"]

MAX_MPS_CHARS = 1 << 20  # the capture's bound on an exported model
MAX_ENTRIES = 400_000  # columns x rows entries a model may list
#: a bound or side at least this large in absolute value is infinite (Gurobi's and CPLEX's 1e30;
#: HiGHS writes infinite sides as ``inf``)
INFINITE = 1e30
_CLOCK_EVERY = 4096  # lines between two looks at the deadline

_COUNTED = ("QCMATRIX", "QSECTION", "INDICATORS", "GENCONS", "SOS")


class MPSError(ValueError):
    """An exported model this reader cannot read; the message says where."""


class MPSBudgetError(MPSError):
    """The read ran past its deadline (the message says where it was)."""


@dataclass
class MPSModel:
    """The model and what MPS says beyond a :class:`LinearModel`."""

    model: LinearModel
    num_qconstrs: int = 0  # QCMATRIX / QSECTION blocks: one per quadratic constraint
    general: bool = False  # an INDICATORS, GENCONS or SOS section with entries
    name: str = ""
    notes: list[str] = field(default_factory=list)
    #: quadratic constraints: row name -> its ``[col_a, col_b, value]`` entries (the row's linear
    #: part is the row of the same name in ``model``)
    qconstrs: dict[str, list] = field(default_factory=dict)
    #: INDICATORS entries ``(row, binary column, value)``: ``row`` holds only when the binary
    #: takes ``value`` (the row of that name in ``model`` is conditional, not always enforced)
    indicators: list[tuple[str, str, float]] = field(default_factory=list)
    #: GENCONS and SOS constraints, ``(section, header tokens, column names mentioned)`` each
    groups: list[tuple[str, tuple[str, ...], tuple[str, ...]]] = field(default_factory=list)


def _num(tok: str, where: str) -> float:
    """A number; one of size :data:`INFINITE` or more is an infinity (bounds and sides only:
    :func:`_coef` refuses it)."""
    try:
        v = float(tok)
    except ValueError:
        raise MPSError(f"{where}: {tok[:30]!r} is not a number") from None
    if math.isnan(v):
        raise MPSError(f"{where}: NaN")
    return math.copysign(math.inf, v) if abs(v) >= INFINITE else v


def _coef(tok: str, where: str) -> float:
    v = _num(tok, where)
    if math.isinf(v):
        raise MPSError(f"{where}: an infinite coefficient {tok[:30]!r}")
    return v


def read_mps(text: str, *, deadline: float | None = None) -> MPSModel:
    """Parse free-format MPS ``text`` (see the module docstring). Raises :class:`MPSError`
    (:class:`MPSBudgetError` past ``deadline``, a ``time.perf_counter()`` value)."""
    if not isinstance(text, str):
        raise MPSError("the model is not text")
    if len(text) > MAX_MPS_CHARS:
        raise MPSError(f"the model is longer than {MAX_MPS_CHARS} characters")
    sense, name, obj_row = "min", "", None
    rows: dict[str, str] = {}  # name -> N/L/G/E
    row_coefs: dict[str, dict[str, float]] = {}  # filed as read: no row-by-column scan
    objective: dict[str, float] = {}
    columns: dict[str, None] = {}  # first-appearance order
    kinds: dict[str, str] = {}
    rhs: dict[str, float] = {}
    ranges: dict[str, float] = {}
    bounds: dict[str, list] = {}
    quadratic: list[list] = []
    qconstrs: dict[str, list] = {}
    indicators: list[tuple[str, str, float]] = []
    groups: list[list] = []  # [section, header tokens, columns]
    free: set[str] = set()  # N rows after the objective's
    counted = {k: 0 for k in _COUNTED}
    section, integer, entries, qrow = None, False, 0, None
    for lineno, raw in enumerate(text.splitlines(), 1):
        if deadline is not None and lineno % _CLOCK_EVERY == 0 and time.perf_counter() > deadline:
            raise MPSBudgetError(f"reading the MPS text (line {lineno})")
        line = raw.strip()
        if not line or line.startswith("*"):
            continue
        where = f"line {lineno}"
        head = raw[:1] not in (" ", "\t")
        toks = line.split()
        if head:
            key = toks[0].upper()
            if key == "NAME":
                section, name = "NAME", " ".join(toks[1:])[:100]
                continue
            if key == "OBJSENSE":
                section = "OBJSENSE"
                if len(toks) > 1:
                    sense = _sense(toks[1], where)
                continue
            if key == "ENDATA":
                break
            if key in ("ROWS", "COLUMNS", "RHS", "RANGES", "BOUNDS", "QUADOBJ", "QMATRIX") or key in _COUNTED:
                section = key
                if key in ("QCMATRIX", "QSECTION"):
                    counted[key] += 1
                    if len(toks) < 2 or toks[1] not in rows:
                        raise MPSError(f"{where}: {key} names no known row")
                    qrow = toks[1]
                    qconstrs.setdefault(qrow, [])
                continue
            raise MPSError(f"{where}: unknown section {key[:30]!r}")
        entries += 1
        if entries > MAX_ENTRIES:
            raise MPSError(f"the model has more than {MAX_ENTRIES} entries")
        if section == "OBJSENSE":
            sense = _sense(toks[0], where)
        elif section == "ROWS":
            if len(toks) != 2 or toks[0].upper() not in ("N", "L", "G", "E"):
                raise MPSError(f"{where}: a row is '<N|L|G|E> name'")
            kind, rname = toks[0].upper(), toks[1]
            if kind == "N":
                if obj_row is None:
                    obj_row = rname
                elif rname != obj_row:
                    free.add(rname)
                continue  # further free rows are ignored, as solvers do
            if rname in rows or rname == obj_row:
                raise MPSError(f"{where}: row {rname[:40]!r} twice")
            rows[rname] = kind
            row_coefs[rname] = {}
        elif section == "COLUMNS":
            if len(toks) >= 3 and toks[1].strip("'").upper() == "MARKER":
                mark = toks[2].strip("'").upper()
                if mark not in ("INTORG", "INTEND"):
                    raise MPSError(f"{where}: unknown marker {mark[:20]!r}")
                integer = mark == "INTORG"
                continue
            if len(toks) not in (3, 5):
                raise MPSError(f"{where}: a column line is 'col row value [row value]'")
            col = toks[0]
            columns[col] = None
            if integer:
                kinds[col] = "I"
            else:
                kinds.setdefault(col, "C")
            for rname, val in zip(toks[1::2], toks[2::2]):
                if rname == obj_row:
                    target = objective
                elif rname in rows:
                    target = row_coefs[rname]
                elif rname in free:
                    continue
                else:
                    raise MPSError(f"{where}: column {col[:40]!r} names unknown row {rname[:40]!r}")
                target[col] = target.get(col, 0.0) + _coef(val, where)
        elif section in ("RHS", "RANGES"):
            pairs = toks[1:] if len(toks) in (3, 5) else toks if len(toks) in (2, 4) else None
            if pairs is None:
                raise MPSError(f"{where}: an {section} line is '[set] row value [row value]'")
            target = rhs if section == "RHS" else ranges
            for rname, val in zip(pairs[0::2], pairs[1::2]):
                if rname in free:
                    continue
                if rname != obj_row and rname not in rows:
                    raise MPSError(f"{where}: {section} names unknown row {rname[:40]!r}")
                target[rname] = _num(val, where)
        elif section == "BOUNDS":
            if len(toks) < 3:
                raise MPSError(f"{where}: a bound is 'type set column [value]'")
            btype = toks[0].upper()
            if btype in ("FR", "MI", "PL", "BV"):
                col, val = toks[2], None
            elif len(toks) == 4:
                col, val = toks[2], _num(toks[3], where)
            elif len(toks) == 3 and btype in ("UP", "LO", "FX", "LI", "UI"):
                col, val = toks[1], _num(toks[2], where)  # no bound-set name
            else:
                raise MPSError(f"{where}: bound {btype[:4]!r} needs a value")
            if col not in columns:
                raise MPSError(f"{where}: bound on unknown column {col[:40]!r}")
            if btype not in ("UP", "LO", "FX", "FR", "MI", "PL", "BV", "LI", "UI"):
                raise MPSError(f"{where}: unsupported bound type {btype[:4]!r}")
            bounds.setdefault(col, []).append((btype, val))
        elif section in ("QUADOBJ", "QMATRIX"):
            if len(toks) != 3:
                raise MPSError(f"{where}: a {section} line is 'col col value'")
            a, b, v = toks[0], toks[1], _coef(toks[2], where)
            if a not in columns or b not in columns:
                raise MPSError(f"{where}: {section} names an unknown column")
            if section == "QMATRIX" and a > b:
                continue  # QMATRIX lists both triangles; keep one
            # both sections state 0.5 x'Qx: a diagonal entry q is 0.5 q x^2, an off-diagonal one q x_a x_b
            quadratic.append([a, b, 0.5 * v if a == b else v])
        elif section in ("QCMATRIX", "QSECTION"):
            if len(toks) != 3 or toks[0] not in columns or toks[1] not in columns:
                raise MPSError(f"{where}: a {section} line is 'col col value' of known columns")
            qconstrs[qrow].append([toks[0], toks[1], _coef(toks[2], where)])
        elif section == "INDICATORS":
            counted[section] += 1
            if len(toks) != 4 or toks[0].upper() != "IF" or toks[1] not in rows or toks[2] not in columns:
                raise MPSError(f"{where}: an indicator is 'IF row column value' of a known row and column")
            indicators.append((toks[1], toks[2], _coef(toks[3], where)))
        elif section in ("GENCONS", "SOS"):
            counted[section] += 1
            # a constraint's header line is indented by one space (' ABS name', ' S1 name'), its
            # operands by more; a hostile layout only changes how the operands are grouped
            if raw[:1] == " " and raw[1:2] not in (" ", "\t") or not groups or groups[-1][0] != section:
                groups.append([section, tuple(t[:40] for t in toks[:4]), []])
            else:
                groups[-1][2].extend(t.split(":")[0] for t in toks if t.split(":")[0] in columns)
        else:
            raise MPSError(f"{where}: data outside a section")
    if obj_row is None and not columns:
        raise MPSError("no ROWS or COLUMNS: not an MPS model")
    variables = [_var(col, kinds.get(col, "C"), bounds.get(col, [])) for col in columns]
    objective = {col: c for col, c in objective.items() if c != 0.0}
    constraints = []
    for rname, kind in rows.items():
        lo, hi = _row_bounds(kind, rhs.get(rname, 0.0), ranges.get(rname))
        constraints.append(Constraint(name=rname, coefs=row_coefs[rname], lo=lo, hi=hi))
    constant = -rhs.get(obj_row, 0.0) if obj_row is not None else 0.0
    if not math.isfinite(constant):
        raise MPSError("the objective's constant (minus the objective row's RHS) is infinite")
    model = LinearModel(sense=sense, variables=variables, constraints=constraints, objective=objective,
                        quadratic=quadratic, constant=constant)
    return MPSModel(model, num_qconstrs=counted["QCMATRIX"] + counted["QSECTION"],
                    general=bool(counted["INDICATORS"] or counted["GENCONS"] or counted["SOS"]), name=name,
                    qconstrs=qconstrs, indicators=indicators,
                    groups=[(g[0], g[1], tuple(dict.fromkeys(g[2]))) for g in groups])


def _sense(tok: str, where: str) -> str:
    t = tok.upper()
    if t in ("MAX", "MAXIMIZE", "MAXIMISE"):
        return "max"
    if t in ("MIN", "MINIMIZE", "MINIMISE"):
        return "min"
    raise MPSError(f"{where}: OBJSENSE {tok[:20]!r}")


def _var(col: str, kind: str, given: list) -> Var:
    lb, ub = 0.0, None
    for btype, val in given:
        if btype == "UP":
            ub = val
            if val is not None and val < 0 and lb == 0.0:
                lb = None  # MPS: a negative upper bound with no lower bound frees the lower one
        elif btype == "LO":
            lb = val
        elif btype == "FX":
            lb = ub = val
        elif btype == "FR":
            lb, ub = None, None
        elif btype == "MI":
            lb = None
        elif btype == "PL":
            ub = None
        elif btype == "BV":
            # gurobipy writes a fixed binary as FX then BV: the bounds given before stay, within [0, 1]
            kind = "B"
            lb = 0.0 if lb is None else min(max(lb, 0.0), 1.0)
            ub = 1.0 if ub is None else max(min(ub, 1.0), 0.0)
        elif btype == "LI":
            lb, kind = val, "I"
        elif btype == "UI":
            ub, kind = val, "I"
    lb = None if lb is not None and math.isinf(lb) else lb
    ub = None if ub is not None and math.isinf(ub) else ub
    if kind == "I" and lb is not None and ub is not None and lb >= 0.0 and ub <= 1.0 and lb <= ub:
        kind = "B"  # an integer column bounded to {0, 1} is a binary, as every solver counts it
    return Var(name=col, lb=lb, ub=ub, kind=kind)


def _row_bounds(kind: str, rhs: float, rng: float | None) -> tuple[float | None, float | None]:
    lo, hi = _row_sides(kind, rhs, rng)  # an infinite (or inf - inf) side is no side
    return (lo if lo is not None and math.isfinite(lo) else None), (hi if hi is not None and math.isfinite(hi) else None)


def _row_sides(kind: str, rhs: float, rng: float | None) -> tuple[float | None, float | None]:
    if kind == "L":
        return (None if rng is None else rhs - abs(rng)), rhs
    if kind == "G":
        return rhs, (None if rng is None else rhs + abs(rng))
    if rng is None:
        return rhs, rhs
    return (rhs, rhs + rng) if rng >= 0 else (rhs + rng, rhs)
