"""The constraint model every Synthetic-Logic family encodes its instances in (SAT-RL §3.1's
P = (T, V, Phi, q) with T pseudo-Boolean arithmetic over named Boolean variables).

One small language serves the five solvers' programs (:mod:`.programs`), the in-process ground
truth (:func:`solve_count`) and the brute force that checks it (:func:`brute_force_count`):

- ``Clause(lits)``: at least one literal true (DIMACS literals over the model's variables, 1-based);
- ``Card(lits, op, k)``: the number of true literals ``op`` ``k`` (``op`` in ``<=``, ``>=``, ``==``);
- ``Linear(coefs, vars, op, rhs)``: sum of ``coef * var`` over positive variables ``op`` ``rhs``;
- ``Threshold(var, lits, k)``: ``var`` is true exactly when at least ``k`` literals are (a
  threshold gate, the neuron of a binarised network).

Every variable is a decision variable: a model is an assignment of all of them, and a count is
the number of assignments of exactly these variables that satisfy every constraint
(|M_T(Phi, V)| of §3.1), so the programs must never add an unconstrained variable of their own to
the count (an auxiliary of a cardinality encoding is projected away, :mod:`.programs`).
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Iterator, Sequence

__all__ = ["Clause", "Card", "Linear", "Threshold", "BoolModel", "OPS", "brute_force_count", "solve_count",
           "pysat_count", "cpsat_count", "MAX_BRUTE_VARS"]

OPS = ("<=", ">=", "==")
#: the largest model :func:`brute_force_count` enumerates (2^20 assignments)
MAX_BRUTE_VARS = 20
#: the most literals a bound of one is written for as pairwise clauses (n(n-1)/2 of them) rather
#: than by a sequential counter in :func:`pysat_count`
PAIRWISE_MAX = 16


@dataclass(frozen=True)
class Clause:
    lits: tuple[int, ...]


@dataclass(frozen=True)
class Card:
    lits: tuple[int, ...]
    op: str
    k: int


@dataclass(frozen=True)
class Linear:
    coefs: tuple[int, ...]
    vars: tuple[int, ...]
    op: str
    rhs: int


@dataclass(frozen=True)
class Threshold:
    var: int
    lits: tuple[int, ...]
    k: int


def _compare(total: int, op: str, bound: int) -> bool:
    return total <= bound if op == "<=" else total >= bound if op == ">=" else total == bound


@dataclass
class BoolModel:
    """Named Boolean variables and the constraints over them (see the module docstring)."""

    names: list[str]
    clauses: list[Clause] = field(default_factory=list)
    cards: list[Card] = field(default_factory=list)
    linears: list[Linear] = field(default_factory=list)
    thresholds: list[Threshold] = field(default_factory=list)

    def var(self, name: str) -> int:
        """The DIMACS index of ``name`` (1-based)."""
        return self.names.index(name) + 1

    def clause(self, lits: Sequence[int]) -> None:
        self.clauses.append(Clause(tuple(int(x) for x in lits)))

    def card(self, lits: Sequence[int], op: str, k: int) -> None:
        if op not in OPS:
            raise ValueError(f"op must be one of {OPS}, got {op!r}")
        self.cards.append(Card(tuple(int(x) for x in lits), op, int(k)))

    def linear(self, coefs: Sequence[int], variables: Sequence[int], op: str, rhs: int) -> None:
        if op not in OPS:
            raise ValueError(f"op must be one of {OPS}, got {op!r}")
        if len(coefs) != len(variables) or any(v < 1 for v in variables):
            raise ValueError("a linear constraint is one coefficient per positive variable")
        self.linears.append(Linear(tuple(int(c) for c in coefs), tuple(int(v) for v in variables), op, int(rhs)))

    def threshold(self, var: int, lits: Sequence[int], k: int) -> None:
        if var < 1:
            raise ValueError("a threshold gate's output is a positive variable")
        self.thresholds.append(Threshold(int(var), tuple(int(x) for x in lits), int(k)))

    # -- what the model says about an assignment ---------------------------------------------------
    def holds(self, values: Sequence[bool]) -> bool:
        """Whether ``values`` (one bool per variable, in order) satisfies every constraint."""
        def lit(x: int) -> bool:
            return values[x - 1] if x > 0 else not values[-x - 1]

        return (all(any(lit(x) for x in c.lits) for c in self.clauses)
                and all(_compare(sum(lit(x) for x in c.lits), c.op, c.k) for c in self.cards)
                and all(_compare(sum(a for a, v in zip(c.coefs, c.vars) if values[v - 1]), c.op, c.rhs)
                        for c in self.linears)
                and all(values[g.var - 1] == (sum(lit(x) for x in g.lits) >= g.k) for g in self.thresholds))

    # -- which solvers' languages hold it ----------------------------------------------------------
    @property
    def weighted(self) -> bool:
        """Whether a linear constraint has a coefficient other than 1 (python-sat's cardinality
        encodings and sympy's Boolean algebra do not state it without an extra package)."""
        return bool(self.linears)

    @property
    def wide_cards(self) -> bool:
        """Whether a cardinality bound needs counting beyond one (sympy states at most / exactly /
        at least one as clauses; larger bounds have no compact Boolean form there)."""
        return any(c.k > 1 for c in self.cards)

    def fits(self, solver: str) -> bool:
        """Whether :mod:`.programs` can state this model for ``solver`` (a threshold gate is an
        equivalence with a cardinality bound, which python-sat's encodings state one way only)."""
        if solver == "python-sat":
            return not self.weighted and not self.thresholds
        if solver == "sympy":
            return not self.weighted and not self.wide_cards and not self.thresholds
        return True


def _assignments(n: int) -> Iterator[tuple[bool, ...]]:
    return itertools.product((False, True), repeat=n)


def brute_force_count(model: BoolModel) -> int:
    """The number of satisfying assignments, by enumerating all 2^n (n <= :data:`MAX_BRUTE_VARS`):
    the check of every solver's count, written without one."""
    n = len(model.names)
    if n > MAX_BRUTE_VARS:
        raise ValueError(f"{n} variables is too many to enumerate (at most {MAX_BRUTE_VARS})")
    return sum(model.holds(v) for v in _assignments(n))


def solve_count(model: BoolModel, *, limit: int | None = None, time_limit_s: float = 30.0,
                models: list | None = None) -> tuple[int, list[bool] | None, bool]:
    """``(count, a model or None, exact)`` in this process (the generator's ground truth; the
    programs of :mod:`.programs` are the sandbox's): python-sat (Glucose 4, cardinality by
    sequential counters, models blocked on the decision variables) where it states the model, a
    few microseconds per solve; CP-SAT, single-threaded and seeded, for weighted sums and
    threshold gates. Both are checked against :func:`brute_force_count` (tests).

    ``limit``: stop counting after that many (``exact`` False when reached); a time limit that
    runs out (CP-SAT) also gives ``exact`` False. The witness is the first model found; ``models``
    (a list) receives every model counted."""
    if model.fits("python-sat"):
        return pysat_count(model, limit, models)
    return cpsat_count(model, limit, time_limit_s, models)


def pysat_count(model: BoolModel, limit: int | None, models: list | None = None) -> tuple[int, list[bool] | None, bool]:
    from pysat.card import CardEnc, EncType
    from pysat.formula import IDPool
    from pysat.solvers import Solver

    n = len(model.names)
    pool = IDPool(start_from=n + 1)
    clauses = [list(c.lits) for c in model.clauses]
    enc = {"<=": CardEnc.atmost, ">=": CardEnc.atleast, "==": CardEnc.equals}
    for c in model.cards:
        if c.op in (">=", "==") and c.k > len(c.lits):
            return 0, None, True  # more true literals than there are
        if c.op == ">=" and c.k <= 0:
            continue
        if c.op in ("<=", "==") and c.k == 0:
            clauses += [[-x] for x in c.lits]
            continue
        if c.k == 1 and len(c.lits) <= PAIRWISE_MAX:
            # a bound of one as clauses (no counter variables): half the generators' time went to
            # CardEnc on the grid families' one-per-cell constraints; the count is the same
            lits = list(c.lits)
            if c.op in ("<=", "=="):
                clauses += [[-a, -b] for a, b in itertools.combinations(lits, 2)]
            if c.op in (">=", "=="):
                clauses.append(lits)
            continue
        clauses += enc[c.op](lits=list(c.lits), bound=c.k, vpool=pool, encoding=EncType.seqcounter).clauses
    if any(not c for c in clauses):
        return 0, None, True
    count, first = 0, None
    with Solver(name="g4", bootstrap_with=clauses) as solver:
        while solver.solve():
            true = {lit for lit in solver.get_model() if lit > 0}  # a variable in no clause is absent: false
            values = [v in true for v in range(1, n + 1)]
            count += 1
            if first is None:
                first = values
            if models is not None:
                models.append(values)
            if limit is not None and count >= limit:
                return count, first, False
            solver.add_clause([-(i + 1) if v else i + 1 for i, v in enumerate(values)])
    return count, first, True


def cpsat_count(model: BoolModel, limit: int | None, time_limit_s: float,
                models: list | None = None) -> tuple[int, list[bool] | None, bool]:
    from ortools.sat.python import cp_model

    m = cp_model.CpModel()
    xs = [m.NewBoolVar(f"v{i}") for i in range(len(model.names))]

    def lit(x: int):
        return xs[x - 1] if x > 0 else xs[-x - 1].Not()

    def add(expr, op: str, bound: int) -> None:
        m.Add(expr <= bound) if op == "<=" else m.Add(expr >= bound) if op == ">=" else m.Add(expr == bound)

    for c in model.clauses:
        m.AddBoolOr([lit(x) for x in c.lits])
    for c in model.cards:
        add(sum(lit(x) for x in c.lits), c.op, c.k)
    for c in model.linears:
        add(sum(a * xs[v - 1] for a, v in zip(c.coefs, c.vars)), c.op, c.rhs)
    for g in model.thresholds:
        total = sum(lit(x) for x in g.lits)
        m.Add(total >= g.k).OnlyEnforceIf(xs[g.var - 1])
        m.Add(total <= g.k - 1).OnlyEnforceIf(xs[g.var - 1].Not())

    class _Count(cp_model.CpSolverSolutionCallback):
        def __init__(self):
            super().__init__()
            self.count, self.first = 0, None

        def on_solution_callback(self):
            self.count += 1
            if self.first is None or models is not None:
                values = [bool(self.Value(x)) for x in xs]
                self.first = values if self.first is None else self.first
                if models is not None:
                    models.append(values)
            if limit is not None and self.count >= limit:
                self.StopSearch()

    solver = cp_model.CpSolver()
    solver.parameters.num_workers = 1
    solver.parameters.random_seed = 0
    # one model is a plain solve (presolve on); counting enumerates them all (presolve off)
    solver.parameters.enumerate_all_solutions = limit != 1
    solver.parameters.max_time_in_seconds = float(time_limit_s)
    cb = _Count()
    status = solver.Solve(m, cb)
    exact = status in (cp_model.OPTIMAL, cp_model.INFEASIBLE) and not (limit is not None and cb.count >= limit)
    return cb.count, cb.first, exact
