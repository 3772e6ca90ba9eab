"""What the model a program exported really is: a pure, host-side analysis of its MPS text.

The program runs in the same process as the capture, so nothing it reports about its model is
trusted (issue "Hardening 2"): the MPS text the capture exported is read here
(:func:`~.mps.read_mps`) and analysed without a solver, and :mod:`.resolve` solves it again.

- :func:`audit_mps` reads the text and applies presolve-style reductions (below), then says
  whether the objective still depends on a decision (``objective_free``: ``m.setObjective(1160)``,
  ``0*x + c``, ``c*y`` with ``y`` fixed to 1 or ``1e-9*x + c`` state the answer instead of
  computing it) and which of SIRL §10's stage-2 kinds ("Big-M, binary variables or non-linear
  forms") the model uses after them (``structure``).
- :func:`same_problem` compares an exported model with the reference model (an infeasible answer
  pays only when the infeasible model is the problem's, not a three-line dummy).

Reductions (each variable fixed at most once, each row emptied at most once, so linear in the
model's size whatever the order): a variable with equal bounds (integer ones rounded inwards at
1e-6) is fixed; a row left with one unfixed variable is a bound on it, and bounds that meet fix it,
which may leave further rows with one variable, to a fixpoint. Rows that are quadratic
constraints or indicator rows are never reduced (they are not always-enforced linear rows).

The objective (documented rules): fixed variables are folded into the constant; a variable that
appears in no row, no quadratic term and no other construct (an "empty column") sits at its best
bound, which presolve fixes it at when finite (``c + x``, ``x >= 0`` in no row, minimised); then a
linear or quadratic term whose coefficient is at most :data:`NEGLIGIBLE` times the objective's
scale (``max(1, |constant|, largest |coefficient|)``) is dropped; and when every remaining term's
variables have finite bounds and the terms together can move the objective by at most
:data:`RANGE_TOL` x (1 + |constant|) (ten times inside the 1e-6 answer tolerance), the objective
is a constant.

What counts for the bonus (documented rules): a row *survives* when, after reductions, it holds
two or more unfixed variables with non-negligible coefficients (at most :data:`NEGLIGIBLE` times
the row's largest is negligible) and is not redundant (its activity over the bounds cannot violate
either side). ``binary``: an unfixed binary in a surviving row. ``big_m``: a surviving row that
couples an unfixed binary with a big-M coefficient (:func:`~.model.is_big_m_row`, the rule of
:meth:`~.model.LinearModel.features`). ``quadratic``: a non-negligible quadratic objective term in
unfixed variables, one of which is in a surviving row or the objective's linear part; or a
quadratic constraint one of whose quadratic-part variables is unfixed and in a surviving row or
the objective. ``general``: an indicator whose binary and some variable of whose row are in a
surviving row or the objective; or a GENCONS / SOS constraint two of whose distinct unfixed
variables are (a dummy ``addGenConstrAbs`` on fresh variables does not count). A variable that
appears in no surviving row (an "empty column", which presolve would fix at its best bound) makes
no structure; but a variable in a one-term row is not an empty column for ``objective_free``: a
plain ``max 3x, x <= 4`` written as a row is a model, not a stated answer.

Bounded: :func:`audit_mps` looks at the clock while reading and every :data:`_CLOCK_EVERY` steps
after; past ``budget_s`` it returns no model and the reason.
"""
from __future__ import annotations

import math
import time
from collections import deque
from dataclasses import dataclass

import numpy as np

from .model import LinearModel, is_big_m_row
from .mps import MPSBudgetError, MPSError, MPSModel, read_mps

__all__ = ["ModelAudit", "audit_mps", "same_problem", "model_numbers", "STRUCTURE_KINDS", "NEGLIGIBLE",
           "RANGE_TOL", "SAME_COUNT_FACTOR", "SAME_NUMBER_SHARE", "SAME_NUMBER_RTOL"]

#: the stage-2 kinds (SIRL §10), in the order :attr:`ModelAudit.structure` lists them
STRUCTURE_KINDS = ("binary", "big_m", "quadratic", "general")
#: a coefficient at most this many times its scale is negligible (see the module docstring)
NEGLIGIBLE = 1e-9
#: terms that can move the objective by at most this x (1 + |constant|) leave it a constant
RANGE_TOL = 1e-7
FIX_TOL = 1e-9  # bounds this close (relative, floored at 1) fix a variable
INT_TOL = 1e-6  # an integer bound within this of an integer is that integer (solvers' tolerance)
_CLOCK_EVERY = 1024
#: :func:`same_problem`: variable and row counts within this factor of the reference's
SAME_COUNT_FACTOR = 2.0
#: :func:`same_problem`: the share of the reference's distinct numbers the model must contain
SAME_NUMBER_SHARE = 0.5
#: :func:`same_problem`: two numbers are the same at this relative tolerance
SAME_NUMBER_RTOL = 1e-9


@dataclass(frozen=True)
class ModelAudit:
    """The analysis of one exported model (see the module docstring).

    ``model``: the model as read from the MPS text (None: none came back, it does not read, or the
    analysis ran over its budget; ``reason`` says which, and is "" when a model was read).
    ``objective_free``: after the reductions the objective still depends on an unfixed variable
    (False whenever ``model`` is None). ``structure``: the stage-2 kinds that survive the
    reductions, in :data:`STRUCTURE_KINDS` order. ``general``: the MPS holds INDICATORS, GENCONS
    or SOS entries (HiGHS cannot re-solve it: :func:`~.resolve.resolve` needs the text).
    ``num_qconstrs``: the quadratic constraints (QCMATRIX / QSECTION blocks) in the text."""

    model: LinearModel | None
    reason: str
    objective_free: bool
    structure: tuple[str, ...]
    general: bool
    num_qconstrs: int


class _Budget(Exception):
    """The analysis ran past its deadline; the message says where."""


def _no_model(reason: str, parsed: MPSModel | None = None) -> ModelAudit:
    return ModelAudit(None, reason, False, (), bool(parsed and parsed.general),
                      parsed.num_qconstrs if parsed else 0)


def audit_mps(text: str | None, *, truncated: bool = False, budget_s: float = 1.0) -> ModelAudit:
    """Read and analyse the MPS text a program's solve exported (None: none came back;
    ``truncated``: the capture left it out for its size). Never raises for any ``text``; a
    ``budget_s`` that is not a positive number is the caller's error (``ValueError``)."""
    if isinstance(budget_s, bool) or not isinstance(budget_s, (int, float)) or not budget_s > 0 \
            or not math.isfinite(budget_s):
        raise ValueError(f"budget_s must be a positive number of seconds, got {budget_s!r}")
    deadline = time.perf_counter() + float(budget_s)
    over = f"the analysis exceeded its {float(budget_s):g} s budget at "
    if text is None or text == "":
        return _no_model("no model was exported" + (" (the MPS text was over its size bound)" if truncated else ""))
    try:
        parsed = read_mps(text, deadline=deadline)
    except MPSBudgetError as e:
        return _no_model(over + str(e))
    except MPSError as e:
        return _no_model(f"the exported MPS does not read: {e}")
    except Exception as e:  # a reader bug must not end an episode
        return _no_model(f"the exported MPS does not read: {type(e).__name__}: {e}"[:500])
    try:
        reduced = _Reduced(parsed, deadline)
        free = reduced.objective_free()
        structure = reduced.structure()
        if time.perf_counter() > deadline:
            raise _Budget("measuring the structure")
    except _Budget as e:
        return _no_model(over + str(e), parsed)
    except Exception as e:  # as above: never raise for hostile text
        return _no_model(f"the analysis of the exported model failed: {type(e).__name__}: {e}"[:500], parsed)
    return ModelAudit(parsed.model, "", free, structure, parsed.general, parsed.num_qconstrs)


def reference_objective_free(model: LinearModel, *, budget_s: float = 1.0) -> bool:
    """Whether a reference model's objective still depends on a free variable after the same
    reductions :func:`audit_mps` applies. A few generated instances are fully determined by
    their side constraints (assignment at size 2 with 4 of them: 16 of 1,052 draws at sizes 1-5),
    so a correct model of them has a constant objective too; the reward accepts a constant
    objective only for such a problem, and only from a model that is the problem's
    (:func:`same_problem`). ``True`` when the analysis runs out of budget (the strict reading)."""
    try:
        return _Reduced(MPSModel(model), time.perf_counter() + float(budget_s)).objective_free()
    except _Budget:
        return True


class _Reduced:
    """The presolve-style reductions of the module docstring, over index arrays."""

    def __init__(self, parsed: MPSModel, deadline: float):
        self.parsed, self.deadline, self.steps = parsed, deadline, 0
        model = parsed.model
        self.index = {v.name: j for j, v in enumerate(model.variables)}
        n = len(model.variables)
        self.lo, self.hi = [0.0] * n, [0.0] * n
        self.integer = [v.kind != "C" for v in model.variables]
        self.binary = [v.kind == "B" for v in model.variables]
        for j, v in enumerate(model.variables):
            lo, hi = v.bounds()
            if self.integer[j]:
                lo, hi = _round_in(lo, hi)
            self.lo[j], self.hi[j] = lo, hi
        self.fixed, self.value = [False] * n, [0.0] * n
        special = set(parsed.qconstrs) | {r for r, _, _ in parsed.indicators}
        #: variables of the constructs the reductions leave alone (quadratic and indicator rows,
        #: GENCONS, SOS): never a dominated column
        self.tied = {self.index[k] for c in model.constraints if c.name in special for k in c.coefs}
        self.tied |= {self.index[k] for e in parsed.qconstrs.values() for a, b, _ in e for k in (a, b)}
        self.tied |= {self.index[b] for _, b, _ in parsed.indicators}
        self.tied |= {self.index[k] for _, _, names in parsed.groups for k in names}
        self.rows: list[tuple[list[tuple[int, float]], float, float]] = []
        self.cols: list[list[tuple[int, float]]] = [[] for _ in range(n)]
        for c in model.constraints:
            if c.name in special:
                continue
            r = len(self.rows)
            entries = [(self.index[k], a) for k, a in c.coefs.items() if a != 0.0]
            self.rows.append((entries, -math.inf if c.lo is None else c.lo, math.inf if c.hi is None else c.hi))
            for j, a in entries:
                self.cols[j].append((r, a))
            self._tick("indexing the rows", 1 + len(entries))
        self.active = [len(e) for e, _, _ in self.rows]
        self.shift = [0.0] * len(self.rows)
        self.infeasible = False
        self.queue = deque(r for r, k in enumerate(self.active) if k == 1)
        for j in range(n):
            if self._meets(j):
                self._fix(j)
        self._propagate()

    def _tick(self, where: str, weight: int = 1) -> None:
        """Count ``weight`` steps of work; look at the clock every :data:`_CLOCK_EVERY`."""
        before = self.steps
        self.steps += weight
        if self.steps // _CLOCK_EVERY != before // _CLOCK_EVERY and time.perf_counter() > self.deadline:
            raise _Budget(where)

    def _meets(self, j: int) -> bool:
        lo, hi = self.lo[j], self.hi[j]
        return math.isfinite(lo) and math.isfinite(hi) and hi - lo <= FIX_TOL * max(1.0, abs(lo))

    def _fix(self, j: int) -> None:
        self.fixed[j] = True
        self.value[j] = v = self.lo[j]
        for r, a in self.cols[j]:
            self.active[r] -= 1
            self.shift[r] += a * v
            if self.active[r] == 1:
                self.queue.append(r)
            self._tick("fixing variables")

    def _propagate(self) -> None:
        """Singleton rows to bounds, bounds that meet to fixed variables, to a fixpoint; each row
        is a singleton at most once (its count of unfixed variables only falls)."""
        while self.queue:
            r = self.queue.popleft()
            if self.active[r] != 1:
                continue
            entries, lo, hi = self.rows[r]
            j, a = next((j, a) for j, a in entries if not self.fixed[j])
            lo, hi = lo - self.shift[r], hi - self.shift[r]
            new_lo, new_hi = (lo / a, hi / a) if a > 0 else (hi / a, lo / a)
            self._tighten(j, new_lo, new_hi)
            self._tick("reducing singleton rows", len(entries))

    def _tighten(self, j: int, lo: float, hi: float) -> None:
        if self.fixed[j] or math.isnan(lo) or math.isnan(hi):
            return
        if self.integer[j]:
            lo, hi = _round_in(lo, hi)
        lo, hi = max(lo, self.lo[j]), min(hi, self.hi[j])
        if lo > hi + FIX_TOL * max(1.0, abs(hi)):
            self.infeasible = True  # the re-solve proves it; the bounds stay as they were
            return
        self.lo[j], self.hi[j] = lo, max(lo, hi)
        if self._meets(j):
            self._fix(j)

    # ------------------------------------------------------------------ the objective
    def _objective(self) -> tuple[dict[int, float], list[tuple[int, int, float]], float]:
        """The objective over unfixed variables after folding fixed ones into the constant, with
        negligible terms dropped: ``(linear, quadratic, constant)``."""
        model = self.parsed.model
        const, lin = model.constant, {}
        for name, c in model.objective.items():
            j = self.index[name]
            if self.fixed[j]:
                const += c * self.value[j]
            else:
                lin[j] = lin.get(j, 0.0) + c
        quad = []
        for a, b, q in model.quadratic:
            i, j = self.index[a], self.index[b]
            if q == 0.0:
                continue
            if self.fixed[i] and self.fixed[j]:
                const += q * self.value[i] * self.value[j]
            elif self.fixed[i] or self.fixed[j]:
                k, v = (j, self.value[i]) if self.fixed[i] else (i, self.value[j])
                lin[k] = lin.get(k, 0.0) + q * v
            else:
                quad.append((i, j, q))
        # presolve's dominated column: a variable in no row and no quadratic term sits at its best
        # bound; a finite one makes its term a constant (``c + x``, x >= 0 in no row, minimised)
        in_quad = {k for i, j, _ in quad for k in (i, j)}
        sign = 1.0 if model.sense == "min" else -1.0
        for j in [j for j in lin if not self.cols[j] and j not in self.tied and j not in in_quad]:
            best = self.lo[j] if sign * lin[j] > 0 else self.hi[j]
            if math.isfinite(best):
                const += lin.pop(j) * best
        scale = max([1.0, abs(const)] + [abs(c) for c in lin.values()] + [abs(q) for _, _, q in quad])
        lin = {j: c for j, c in lin.items() if abs(c) > NEGLIGIBLE * scale}
        quad = [t for t in quad if abs(t[2]) > NEGLIGIBLE * scale]
        if lin or quad:
            reach = sum(abs(c) * self._magnitude(j) for j, c in lin.items()) + \
                sum(abs(q) * self._magnitude(i) * self._magnitude(j) for i, j, q in quad)
            if reach <= RANGE_TOL * (1.0 + abs(const)):
                lin, quad = {}, []
        return lin, quad, const

    def _magnitude(self, j: int) -> float:
        return max(abs(self.lo[j]), abs(self.hi[j]))

    def objective_free(self) -> bool:
        lin, quad, _ = self._objective()
        return bool(lin or quad)

    # ------------------------------------------------------------------ structure
    def structure(self) -> tuple[str, ...]:
        n = len(self.fixed)
        in_row = [False] * n
        big_m = False
        for r, (entries, lo, hi) in enumerate(self.rows):
            self._tick("measuring the rows")
            if self.active[r] < 2:
                continue
            live = [(j, a) for j, a in entries if not self.fixed[j]]
            top = max(abs(a) for _, a in live)
            live = [(j, a) for j, a in live if abs(a) > NEGLIGIBLE * top]
            if len(live) < 2 or self._redundant(live, lo - self.shift[r], hi - self.shift[r]):
                continue
            for j, _ in live:
                in_row[j] = True
            if not big_m:
                big_m = is_big_m_row([a for _, a in live], [self.binary[j] for j, _ in live])
            self._tick("measuring the rows", len(entries))
        lin, quad, _ = self._objective()
        in_obj = [False] * n
        for j in lin:
            in_obj[j] = True
        for i, j, _ in quad:
            in_obj[i] = in_obj[j] = True
        linked = [a or b for a, b in zip(in_row, in_obj)]
        general, switches = self._general(linked)
        out = []
        if any(self.binary[j] and in_row[j] for j in range(n)) or switches:
            out.append("binary")
        if big_m:
            out.append("big_m")
        if any(in_row[i] or in_row[j] or i in lin or j in lin for i, j, _ in quad) or self._quadratic_rows(linked):
            out.append("quadratic")
        if general:
            out.append("general")
        return tuple(out)

    def _redundant(self, live: list[tuple[int, float]], lo: float, hi: float) -> bool:
        """Whether the row holds whatever the bounds allow (a presolve removes it)."""
        low = sum(min(a * self.lo[j], a * self.hi[j]) for j, a in live)
        high = sum(max(a * self.lo[j], a * self.hi[j]) for j, a in live)
        return lo <= low and high <= hi

    def _quadratic_rows(self, linked: list[bool]) -> bool:
        for entries in self.parsed.qconstrs.values():
            for a, b, v in entries:
                self._tick("measuring the quadratic constraints")
                if v != 0.0 and any(not self.fixed[k] and linked[k] for k in (self.index[a], self.index[b])):
                    return True
        return False

    def _general(self, linked: list[bool]) -> tuple[bool, bool]:
        """``(general, switch)``: some indicator or GENCONS / SOS constraint counts; some counting
        indicator switches on a binary (a binary, though in no surviving row)."""
        rows = {c.name: c for c in self.parsed.model.constraints}
        general = switch = False
        for row, col, _ in self.parsed.indicators:
            self._tick("measuring the indicators")
            b = self.index[col]
            if self.fixed[b] or not linked[b]:
                continue
            if any(not self.fixed[self.index[k]] and linked[self.index[k]] for k, a in rows[row].coefs.items() if a):
                general = True
                switch = switch or self.binary[b]
        for _, _, names in self.parsed.groups:
            if general:
                break
            self._tick("measuring the general constraints")
            used = {j for j in (self.index[k] for k in names) if not self.fixed[j] and linked[j]}
            general = len(used) >= 2
        return general, switch


def _round_in(lo: float, hi: float) -> tuple[float, float]:
    """Integer bounds rounded inwards (a bound within :data:`INT_TOL` of an integer is it)."""
    if math.isfinite(lo):
        lo = float(math.ceil(lo - INT_TOL))
    if math.isfinite(hi):
        hi = float(math.floor(hi + INT_TOL))
    return lo, hi


# --------------------------------------------------------------------------- same problem
def model_numbers(model: LinearModel) -> np.ndarray:
    """The model's distinct nonzero data magnitudes, sorted: objective and row coefficients, row
    sides, finite (effective) variable bounds, quadratic coefficients and the objective constant, sign
    dropped, numbers within :data:`SAME_NUMBER_RTOL` of each other counted once. Linear in the
    model's size (plus a sort)."""
    vals: list[float] = list(model.objective.values())
    for c in model.constraints:
        vals.extend(c.coefs.values())
        vals.extend(x for x in (c.lo, c.hi) if x is not None)
    for v in model.variables:
        vals.extend(v.bounds())  # effective bounds: a binary's [0, 1] whether or not it is written
    vals.extend(q for _, _, q in model.quadratic)
    vals.append(model.constant)
    arr = np.abs(np.asarray(vals, dtype=float))
    arr = np.sort(arr[(arr != 0.0) & np.isfinite(arr)])
    if arr.size < 2:
        return arr
    keep = np.ones(arr.size, dtype=bool)
    keep[1:] = arr[1:] > arr[:-1] * (1.0 + SAME_NUMBER_RTOL)
    return arr[keep]


def _links(model: LinearModel) -> int:
    """Rows of two or more nonzero terms (a one-term row is a bound, however it is written)."""
    return sum(1 for c in model.constraints if sum(1 for a in c.coefs.values() if a != 0.0) >= 2)


def same_problem(model: LinearModel, reference: LinearModel) -> tuple[bool, str]:
    """Whether ``model`` (an exported, infeasible one) states the problem ``reference`` states:
    ``(ok, reason)``.

    The tolerance (SIRL has no such check; issue "Hardening 2" item 3): the number of variables,
    and of rows with two or more terms (one-term rows are bounds, which a model may write either
    way), each within a factor :data:`SAME_COUNT_FACTOR` of the reference's (at least 1 on the
    reference's side); and at least :data:`SAME_NUMBER_SHARE` of the reference's distinct nonzero
    numbers (:func:`model_numbers`) among the model's, compared at :data:`SAME_NUMBER_RTOL`
    relative and sign-insensitive, so a negated or sense-flipped model still counts. A three-line
    infeasible dummy fails both."""
    f = SAME_COUNT_FACTOR
    for what, got, want in (("variables", len(model.variables), len(reference.variables)),
                            ("rows of two or more terms", _links(model), _links(reference))):
        if not want / f <= got <= f * max(want, 1):
            return False, (f"the exported model has {got} {what}, the problem's has {want} "
                           f"(within a factor {f:g} is the same problem)")
    ref, mine = model_numbers(reference), model_numbers(model)
    if ref.size == 0:
        return True, "the problem states no numbers to compare; the sizes match"
    found = 0
    if mine.size:  # the first of the model's numbers at or above each reference number's window
        at = np.searchsorted(mine, ref * (1.0 - SAME_NUMBER_RTOL))
        inside = at < mine.size
        found = int(np.count_nonzero(mine[at[inside]] <= ref[inside] * (1.0 + SAME_NUMBER_RTOL)))
    share = found / ref.size
    ok = share >= SAME_NUMBER_SHARE
    return ok, (f"{found} of the problem's {ref.size} distinct numbers ({share:.0%}) appear in the exported "
                f"model ({SAME_NUMBER_SHARE:.0%} needed, compared at {SAME_NUMBER_RTOL:g} relative, sign ignored)")
