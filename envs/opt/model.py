"""The reference model of an optimisation word problem: plain data that any solver can be fed.

A :class:`LinearModel` is what a correct formulation of a generated problem amounts to:
variables with bounds and a kind, linear rows ``lo <= sum(coef * x) <= hi``, a linear objective
and, for the quadratic families, a list of ``coef * x_i * x_j`` objective terms. It holds JSON
types only, so an instance can carry it (``ORInstance.model``) and a later re-solve audit (the
check or-modelling.md §1.5 asks of every benchmark item) can rebuild exactly the model the
ground truth came from.

Names are plain identifiers (``x0``, ``x_1_2``): HiGHS cannot read LP files with bracketed
names (or-modelling.md §1.4) and the oracle programs (:mod:`.programs`) spell them as string
keys. :meth:`LinearModel.features` reports the structural features SIRL's instance-enhanced
self-consistency votes on (SIRL §3.1 eq. 3: direction, number of binary and of general integer
variables) and whether the model uses a big-M link, which the stage-2 bonus rewards (SIRL §10).
"""
from __future__ import annotations

import bisect
import math
import re
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Var", "Constraint", "LinearModel", "KINDS", "SENSES", "NAME_RE", "BIG_M_RATIO", "BIG_M_ABS",
           "is_big_m_row"]

KINDS = ("C", "I", "B")
SENSES = ("min", "max")
#: a variable or constraint name: an identifier without brackets or dots (LP-file safe)
NAME_RE = re.compile(r"^[A-Za-z][A-Za-z0-9_]{0,63}$")
#: a binary's coefficient at least this many times the median of the row's other coefficients
BIG_M_RATIO = 1e3
#: ... or at least this large in absolute value, marks a big-M row
BIG_M_ABS = 1e4


def _number(value: Any, what: str, *, optional: bool = False) -> float | None:
    """A finite float, or None where ``optional`` (an infinite bound)."""
    if value is None and optional:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"{what} must be a number, got {value!r}")
    value = float(value)
    if not math.isfinite(value):
        raise ValueError(f"{what} must be finite (use None for an infinite bound), got {value!r}")
    return value


def _name(value: Any, what: str) -> str:
    if not isinstance(value, str) or not NAME_RE.match(value):
        raise ValueError(f"{what} must be an identifier of letters, digits and '_' (no brackets), got {value!r}")
    return value


@dataclass
class Var:
    """A decision variable. ``None`` bounds are infinite; a binary (``kind="B"``) lies in [0, 1]
    whatever its bounds say beyond that (``ub=None`` means 1)."""

    name: str
    lb: float | None = 0.0
    ub: float | None = None
    kind: str = "C"

    def bounds(self) -> tuple[float, float]:
        """The effective bounds, infinities as ``math.inf``."""
        lo = -math.inf if self.lb is None else float(self.lb)
        hi = math.inf if self.ub is None else float(self.ub)
        if self.kind == "B":
            lo, hi = max(lo, 0.0), min(hi, 1.0)
        return lo, hi


@dataclass
class Constraint:
    """``lo <= sum(coefs[name] * x[name]) <= hi``; a ``None`` side is absent, ``lo == hi`` is an
    equation."""

    name: str
    coefs: dict[str, float]
    lo: float | None = None
    hi: float | None = None


@dataclass
class LinearModel:
    """A (mixed-integer) linear or quadratic-objective model; see the module docstring.

    ``quadratic`` holds ``[name_i, name_j, coef]`` terms of the objective, each meaning
    ``coef * x_i * x_j`` (``name_i == name_j`` is a square); ``constant`` is added to the
    objective. Construct freely, then :meth:`validate` (``from_dict`` always does).
    """

    sense: str
    variables: list[Var]
    constraints: list[Constraint]
    objective: dict[str, float]
    quadratic: list[list] = field(default_factory=list)
    constant: float = 0.0

    # ------------------------------------------------------------------ (de)serialisation
    def to_dict(self) -> dict[str, Any]:
        """JSON types only, numbers as floats, so that ``from_dict(to_dict())`` round-trips and
        the canonical JSON of an instance does not depend on int-vs-float spellings."""

        def num(v):
            return None if v is None else float(v)

        return {
            "sense": self.sense,
            "variables": [{"name": v.name, "lb": num(v.lb), "ub": num(v.ub), "kind": v.kind} for v in self.variables],
            "constraints": [{"name": c.name, "coefs": {k: float(x) for k, x in c.coefs.items()},
                             "lo": num(c.lo), "hi": num(c.hi)} for c in self.constraints],
            "objective": {k: float(x) for k, x in self.objective.items()},
            "quadratic": [[str(i), str(j), float(q)] for i, j, q in self.quadratic],
            "constant": float(self.constant),
        }

    @classmethod
    def from_dict(cls, d: Any) -> LinearModel:
        """Parse and validate; ``ValueError`` for anything malformed (unknown keys or names, a bad
        sense or kind, a non-finite number)."""
        if not isinstance(d, dict):
            raise ValueError(f"a model must be a dict, got {type(d).__name__}")
        unknown = set(d) - {"sense", "variables", "constraints", "objective", "quadratic", "constant"}
        if unknown:
            raise ValueError(f"unknown model keys {sorted(unknown)}")
        for key in ("sense", "variables", "constraints", "objective"):
            if key not in d:
                raise ValueError(f"model is missing {key!r}")
        if not isinstance(d["variables"], list) or not isinstance(d["constraints"], list):
            raise ValueError("variables and constraints must be lists")
        variables = []
        for v in d["variables"]:
            if not isinstance(v, dict) or set(v) - {"name", "lb", "ub", "kind"} or "name" not in v:
                raise ValueError(f"a variable must be a dict with name, lb, ub, kind; got {v!r}")
            variables.append(Var(v["name"], v.get("lb", 0.0), v.get("ub"), v.get("kind", "C")))
        constraints = []
        for c in d["constraints"]:
            if not isinstance(c, dict) or set(c) - {"name", "coefs", "lo", "hi"} or not {"name", "coefs"} <= set(c):
                raise ValueError(f"a constraint must be a dict with name, coefs, lo, hi; got {c!r}")
            if not isinstance(c["coefs"], dict):
                raise ValueError(f"constraint {c['name']!r}: coefs must be a dict")
            constraints.append(Constraint(c["name"], dict(c["coefs"]), c.get("lo"), c.get("hi")))
        if not isinstance(d["objective"], dict):
            raise ValueError("objective must be a dict of name -> coefficient")
        quadratic = d.get("quadratic", [])
        if not isinstance(quadratic, list) or not all(isinstance(t, list) and len(t) == 3 for t in quadratic):
            raise ValueError("quadratic must be a list of [name_i, name_j, coef] lists")
        model = cls(d["sense"], variables, constraints, dict(d["objective"]), [list(t) for t in quadratic],
                    d.get("constant", 0.0))
        model.validate()
        return model

    def validate(self) -> None:
        """Raise ``ValueError`` for an inconsistent model; normalises numbers to floats."""
        if self.sense not in SENSES:
            raise ValueError(f"sense must be one of {SENSES}, got {self.sense!r}")
        names: set[str] = set()
        for v in self.variables:
            if not isinstance(v, Var):
                raise ValueError(f"variables must be Var, got {type(v).__name__}")
            _name(v.name, "a variable name")
            if v.name in names:
                raise ValueError(f"duplicate variable name {v.name!r}")
            names.add(v.name)
            if v.kind not in KINDS:
                raise ValueError(f"variable {v.name!r}: kind must be one of {KINDS}, got {v.kind!r}")
            v.lb = _number(v.lb, f"variable {v.name!r} lb", optional=True)
            v.ub = _number(v.ub, f"variable {v.name!r} ub", optional=True)
            lo, hi = v.bounds()
            if lo > hi:
                raise ValueError(f"variable {v.name!r}: empty bounds [{lo}, {hi}]")
        rows: set[str] = set()
        for c in self.constraints:
            if not isinstance(c, Constraint):
                raise ValueError(f"constraints must be Constraint, got {type(c).__name__}")
            _name(c.name, "a constraint name")
            if c.name in rows:
                raise ValueError(f"duplicate constraint name {c.name!r}")
            rows.add(c.name)
            c.coefs = self._coefs(c.coefs, names, f"constraint {c.name!r}")
            c.lo = _number(c.lo, f"constraint {c.name!r} lo", optional=True)
            c.hi = _number(c.hi, f"constraint {c.name!r} hi", optional=True)
            if c.lo is None and c.hi is None:
                raise ValueError(f"constraint {c.name!r} has neither a lower nor an upper side")
            if c.lo is not None and c.hi is not None and c.lo > c.hi:
                raise ValueError(f"constraint {c.name!r}: lo {c.lo} > hi {c.hi}")
        self.objective = self._coefs(self.objective, names, "objective")
        quadratic = []
        for t in self.quadratic:
            if not isinstance(t, (list, tuple)) or len(t) != 3:
                raise ValueError(f"a quadratic term must be [name_i, name_j, coef], got {t!r}")
            i, j, q = t
            for n in (i, j):
                if n not in names:
                    raise ValueError(f"quadratic term names unknown variable {n!r}")
            quadratic.append([i, j, _number(q, f"quadratic coefficient of {i}*{j}")])
        self.quadratic = quadratic
        self.constant = _number(self.constant, "objective constant")

    @staticmethod
    def _coefs(coefs: Any, names: set[str], what: str) -> dict[str, float]:
        if not isinstance(coefs, dict):
            raise ValueError(f"{what}: coefficients must be a dict")
        out = {}
        for k, x in coefs.items():
            if k not in names:
                raise ValueError(f"{what} names unknown variable {k!r}")
            out[k] = _number(x, f"{what} coefficient of {k}")
        return out

    # ------------------------------------------------------------------ structure
    @property
    def is_quadratic(self) -> bool:
        return any(q != 0.0 for _, _, q in self.quadratic)

    @property
    def is_integer(self) -> bool:
        """Some variable is integer or binary (a MIP rather than an LP or QP)."""
        return any(v.kind != "C" for v in self.variables)

    def var(self, name: str) -> Var:
        for v in self.variables:
            if v.name == name:
                return v
        raise KeyError(name)

    def evaluate(self, values: dict[str, float]) -> float:
        """The objective at a point (missing names are 0): for checking a solution by hand."""
        obj = self.constant + sum(c * values.get(k, 0.0) for k, c in self.objective.items())
        return obj + sum(q * values.get(i, 0.0) * values.get(j, 0.0) for i, j, q in self.quadratic)

    def features(self) -> dict[str, Any]:
        """Structural features of the model (SIRL §3.1 eq. 3 votes on sense, ``num_bin`` and
        ``num_int``; the stage-2 bonus of SIRL §10 looks for binaries and big-M links).

        ``big_m``: some row couples a binary with a coefficient at least :data:`BIG_M_RATIO` times
        the median absolute coefficient of the row's other (nonzero) terms, or at least
        :data:`BIG_M_ABS` in absolute value. A row holding the binary alone is a bound, not a
        link, and does not count.
        """
        kinds = {v.name: v.kind for v in self.variables}
        return {
            "sense": self.sense,
            "num_vars": len(self.variables),
            "num_continuous": sum(k == "C" for k in kinds.values()),
            "num_int": sum(k == "I" for k in kinds.values()),
            "num_bin": sum(k == "B" for k in kinds.values()),
            "num_constrs": len(self.constraints),
            "num_q_obj_terms": sum(q != 0.0 for _, _, q in self.quadratic),
            "big_m": any(is_big_m_row(c.coefs.values(), [kinds.get(k) == "B" for k in c.coefs])
                         for c in self.constraints),
        }


def is_big_m_row(coefs, binary) -> bool:
    """Whether a row with coefficients ``coefs`` couples a binary (``binary[k]`` true for the
    k-th coefficient) with a big-M coefficient: at least :data:`BIG_M_ABS`, or at least
    :data:`BIG_M_RATIO` times the median absolute value of the row's other nonzero coefficients
    (a row whose binary stands alone is a bound and does not count).

    One sort per row: the median without the binary's own value is read off the sorted values by
    index (``statistics.median`` per binary made a 12,000-binary row cost minutes)."""
    coefs = [float(x) for x in coefs]
    mags = sorted(abs(x) for x in coefs if x != 0.0)
    for k, coef in enumerate(coefs):
        if not binary[k] or coef == 0.0 or len(mags) < 2:
            continue
        if abs(coef) >= BIG_M_ABS or abs(coef) >= BIG_M_RATIO * _median_without(mags, abs(coef)):
            return True
    return False


def _median_without(mags: list[float], value: float) -> float:
    """``statistics.median`` of sorted ``mags`` with one occurrence of ``value`` removed."""
    at = bisect.bisect_left(mags, value)  # the removed one; equal values are interchangeable
    m = len(mags) - 1

    def kth(i: int) -> float:  # the i-th of the remaining values
        return mags[i] if i < at else mags[i + 1]

    return kth(m // 2) if m % 2 else (kth(m // 2 - 1) + kth(m // 2)) / 2
