"""Partial N-Queens (App. B.1, puzzle): place one queen in each row of an N x N board so that no
two attack each other (same column or diagonal), keeping the queens already placed.
Hyper-parameters: board size N, the pre-placed queens (``pre`` of them).

No reward without reading (issue 43). The prompt names each placed queen's row and column, so
what a reader counts without reading is the multiset of those numbers; which column goes with
which row is the instance. An instance's **shape** (:meth:`NQueensProblem.draw_shape`) is the set
of rows and the set of columns of its placed queens (``pre`` of each, uniformly), drawn before the
decision's label; a draw at that shape
(:meth:`~NQueensProblem.random_data`) pairs the rows with the columns at random among the pairings
in which no two placed queens attack each other (no contradiction at sight), and the label is
whether that pairing extends to a full placement. The decision keeps the shapes whose pairings
extend in :data:`WINDOW` of them (exact: the pairings are enumerated and looked up among the
cached solutions). With one queen (``pre`` = 1, the default before issue 43) there is one
pairing, so the label was a function of the cell the prompt names: a classifier over the prompt's
numbers predicted it with 0.76 held-out accuracy (n = 6), and the count was 0 or 1 only.

Measured (200 shapes): the share of non-attacking pairings that extend is 37% at n = 8 with 3
queens (62% of the shapes in the window), 65% at n = 9 with 3 (50%), 29% at n = 10 with 4 (67%);
the natural counting draws count 0 (43%), 1 (45%), 2 or 3 (12%) at n = 8, 0..6 at n = 9 (4 or more
on 4%), 0..4 at n = 10. Boards of 5 to 7 have too few solutions (10, 4, 40): their draws count 0 or
1 (7 x 7 with 3 queens: 2 on 2% of them), so no level has one.

The solving query's chance line (:meth:`~NQueensProblem.witness_space`): a uniform guess among
the placements of N non-attacking queens on the empty board (a guess that knows the rules, not
the placed queens).
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from ...problem import Knobs
from ..family import LogicProblem
from ..model import BoolModel
from ..witness import format_ints, parse_ints
from .graphs import int_knob

__all__ = ["NQueensKnobs", "NQueensProblem", "queens_solutions", "WINDOW"]

#: the share of a shape's non-attacking pairings that extend, for the decision to draw the shape
#: (the critical window: each label is met in a few draws)
WINDOW = (0.2, 0.8)
#: shapes a decision draws before it gives up on knobs with no critical window
SHAPE_TRIES = 200
#: the most placed queens whose pairings are enumerated (7! = 5040); beyond, they are sampled
ENUMERATED_PRE = 7
#: random pairings tried (beyond :data:`ENUMERATED_PRE`) before a shape is taken to have none
PAIRING_TRIES = 2000


@dataclass(frozen=True)
class NQueensKnobs(Knobs):
    """Board size ``n``, ``pre`` queens placed (their rows and columns are the instance's shape:
    the module docstring)."""

    n: int = 8
    pre: int = 3

    def validate(self) -> None:
        int_knob("n", self.n, 4, 12)
        int_knob("pre", self.pre, 0, self.n - 1)


def _attack(a: tuple[int, int], b: tuple[int, int]) -> bool:
    return a[0] == b[0] or a[1] == b[1] or abs(a[0] - b[0]) == abs(a[1] - b[1])


@lru_cache(maxsize=None)
def queens_solutions(n: int) -> tuple[tuple[int, ...], ...]:
    """Every placement of n non-attacking queens (column per row), by backtracking: no solver
    (cached: 14,200 of them at n = 12)."""
    out: list[tuple[int, ...]] = []

    def place(cols: list[int]) -> None:
        r = len(cols)
        if r == n:
            out.append(tuple(cols))
            return
        for c in range(n):
            if all(not _attack((r, c), (i, ci)) for i, ci in enumerate(cols)):
                cols.append(c)
                place(cols)
                cols.pop()

    place([])
    return tuple(out)


@lru_cache(maxsize=None)
def _solution_array(n: int) -> np.ndarray:
    return np.array(queens_solutions(n), dtype=np.int8).reshape(-1, n)


def _peaceful(rows, cols) -> bool:
    """Whether queens at ``zip(rows, cols)`` (distinct rows and columns) share no diagonal."""
    cells = list(zip(rows, cols))
    return all(abs(r1 - r2) != abs(c1 - c2) for (r1, c1), (r2, c2) in itertools.combinations(cells, 2))


def _q(r: int, c: int, n: int) -> int:
    return r * n + c + 1


class NQueensProblem(LogicProblem):
    """Partial N-Queens as decision / solving / counting (``SolverLogic-v0(family="n-queens")``)."""

    name = "n-queens"
    category = "puzzle"
    Knobs = NQueensKnobs
    # one placed queen decides the answer by its cell, and boards of 5 to 7 count 0 or 1 (2 on 2%
    # of the draws): the levels place 3 or 4 queens on boards of 8 to 10 (module docstring)
    levels = ({"n": 8, "pre": 3}, {"n": 9, "pre": 3}, {"n": 10, "pre": 4})
    witness_noun = "a placement of N queens, one in each row, no two in the same column or diagonal, keeping the placed ones"
    count_noun = "such placements"

    # -- generation (the module docstring) ---------------------------------------------------------
    def _pairings(self, n: int, rows: tuple, cols: tuple, rng) -> list[tuple[int, ...]]:
        """The columns in row order of the non-attacking pairings of ``rows`` with ``cols``: every one
        up to :data:`ENUMERATED_PRE` queens, beyond that the distinct ones among
        :data:`PAIRING_TRIES` uniform permutations (a uniform sample of them)."""
        if len(rows) <= ENUMERATED_PRE:
            return [p for p in itertools.permutations(cols) if _peaceful(rows, p)]
        found = {tuple(int(c) for c in p) for p in (rng.permutation(cols) for _ in range(PAIRING_TRIES))
                 if _peaceful(rows, p)}
        return sorted(found)

    def _extending(self, n: int, rows: tuple, cols: tuple) -> list[tuple[int, ...]]:
        """The pairings (columns in row order) that some solution holds: the planted ones."""
        sols = _solution_array(n)
        picked = sols[:, list(rows)]
        hit = np.all(np.sort(picked, axis=1) == np.asarray(cols, dtype=np.int8), axis=1)
        return sorted({tuple(int(c) for c in row) for row in picked[hit]})

    def _shape(self, knobs, rng) -> tuple[tuple[int, ...], tuple[int, ...]]:
        rows = tuple(sorted(int(r) for r in rng.choice(knobs.n, size=knobs.pre, replace=False)))
        return rows, tuple(sorted(int(c) for c in rng.choice(knobs.n, size=knobs.pre, replace=False)))

    def extending_share(self, knobs, shape, rng) -> float:
        """The share of ``shape``'s non-attacking pairings that extend to a full placement."""
        rows, cols = shape
        pairings = self._pairings(knobs.n, rows, cols, rng)
        if not pairings:
            return 0.0
        good = set(self._extending(knobs.n, rows, cols))
        return sum(p in good for p in pairings) / len(pairings)

    def draw_shape(self, knobs, rng):
        """``(rows, columns)`` of the placed queens (the module docstring), ``pre`` of each drawn
        uniformly; for the decision, a shape whose pairings extend in :data:`WINDOW` of them, for
        the solving query one that some pairing extends, for counting one with a pairing of no
        attack (``RuntimeError`` when :data:`SHAPE_TRIES` draws find none)."""
        for _ in range(SHAPE_TRIES):
            shape = self._shape(knobs, rng)
            if self.query == "counting":
                if self._pairings(knobs.n, *shape, rng):
                    return shape
            elif self.query == "solving":
                if self._extending(knobs.n, *shape):
                    return shape
            elif WINDOW[0] <= self.extending_share(knobs, shape, rng) <= WINDOW[1]:
                return shape
        wanted = {"decision": f"both answers often enough (extending in {WINDOW[0]:.0%} to {WINDOW[1]:.0%} of their "
                              f"pairings)", "solving": "a pairing that extends",
                  "counting": "a pairing without an attack"}[self.query]
        raise RuntimeError(f"n-queens: at {knobs.as_dict()} no rows and columns of placed queens have {wanted} in "
                           f"{SHAPE_TRIES} draws: with one queen (or none) the cell decides the answer; more queens "
                           f"extend less often, a larger board more often")

    def random_data(self, knobs, rng, shape=None):
        # SAT-RL App. B.1's pre-placed queens: the shape's rows and columns paired at random, no two attacking
        rows, cols = self._shape(knobs, rng) if shape is None else shape
        pairings = self._pairings(knobs.n, rows, cols, rng)
        if not pairings:
            raise RuntimeError(f"n-queens: the rows {rows} and columns {cols} have no pairing without an attack")
        picked = pairings[int(rng.integers(len(pairings)))]
        return {"n": knobs.n, "pre": [[r, c] for r, c in zip(rows, picked)]}

    def planted_data(self, knobs, rng, shape=None):
        """A pairing of the shape's rows and columns that extends, drawn uniformly; a shape with
        none (the counting query's draw takes any shape) has nothing to plant: its draw is then
        :meth:`random_data`'s."""
        rows, cols = self._shape(knobs, rng) if shape is None else shape
        good = self._extending(knobs.n, rows, cols)
        if not good:
            return self.random_data(knobs, rng, (rows, cols))
        picked = good[int(rng.integers(len(good)))]
        return {"n": knobs.n, "pre": [[r, c] for r, c in zip(rows, picked)]}

    def quick_label(self, data):
        """Whether a listed solution keeps the placed queens (boards of up to 10 rows: 724 solutions)."""
        if data["n"] > 10:
            return None
        return any(all(sol[r] == c for r, c in data["pre"]) for sol in queens_solutions(data["n"]))

    @classmethod
    def check_data(cls, data):
        if set(data) != {"n", "pre"}:
            raise ValueError(f"an n-queens instance has the keys n, pre; got {sorted(data)}")
        int_knob("n", data["n"], 4, 12)
        if not isinstance(data["pre"], list) or len(data["pre"]) >= data["n"]:
            raise ValueError("pre must be a list of fewer than n [row, column] pairs")
        for q in data["pre"]:
            if not (isinstance(q, list) and len(q) == 2 and all(isinstance(x, int) and 0 <= x < data["n"] for x in q)):
                raise ValueError(f"a placed queen is [row, column] on the board, got {q!r}")

    @classmethod
    def encode(cls, data):
        n = data["n"]
        m = BoolModel([f"q_{r}_{c}" for r in range(n) for c in range(n)])
        for r in range(n):
            m.card([_q(r, c, n) for c in range(n)], "==", 1)
        for c in range(n):
            m.card([_q(r, c, n) for r in range(n)], "<=", 1)
        for d in range(-(n - 1), n):  # r - c = d
            cells = [_q(r, r - d, n) for r in range(n) if 0 <= r - d < n]
            if len(cells) > 1:
                m.card(cells, "<=", 1)
        for s in range(2 * n - 1):  # r + c = s
            cells = [_q(r, s - r, n) for r in range(n) if 0 <= s - r < n]
            if len(cells) > 1:
                m.card(cells, "<=", 1)
        for r, c in data["pre"]:
            m.clause([_q(r, c, n)])
        return m

    def statement(self, data):
        n = data["n"]
        placed = ", ".join(f"row {r} column {c}" for r, c in data["pre"]) or "none"
        return (f"An {n} x {n} chessboard has rows and columns numbered 0 to {n - 1}. Queens already placed: "
                f"{placed}. Place one queen in every row so that no two queens share a column or a diagonal, "
                f"keeping the queens already placed.")

    def mapping(self, data):
        n = data["n"]
        return {f"q_{r}_{c}": f"a queen stands in row {r}, column {c}" for r in range(n) for c in range(n)}

    def describe_data(self, data):
        return {"n": data["n"], "pre": len(data["pre"])}

    @classmethod
    def check_witness(cls, data, witness):
        n = data["n"]
        if not isinstance(witness, list) or len(witness) != n:
            return f"a placement here is the column of the queen in each of the {n} rows"
        if any(not isinstance(c, int) or not 0 <= c < n for c in witness):
            return f"columns are numbered 0 to {n - 1}"
        for r, c in data["pre"]:
            if witness[r] != c:
                return f"the queen placed in row {r}, column {c} was moved"
        for i in range(n):
            for j in range(i + 1, n):
                if _attack((i, witness[i]), (j, witness[j])):
                    return f"the queens in rows {i} and {j} attack each other"
        return None

    def witness_from_true(self, data, true):
        n = data["n"]
        return [next((c for c in range(n) if f"q_{r}_{c}" in true), -1) for r in range(n)]

    def true_from_witness(self, data, witness):
        return {f"q_{r}_{c}" for r, c in enumerate(witness)}

    def parse_witness(self, data, text):
        return parse_ints(text, length=data["n"])

    def format_witness(self, data, witness):
        return format_ints(witness)

    def witness_hint(self, data):
        return f"```answer <the column of the queen in row 0, row 1, ..., row {data['n'] - 1}, separated by spaces>```"

    def witness_space(self, data):
        """The placements of N non-attacking queens on the empty board (a guess that knows the
        rules, not the placed queens): 10 at N = 5, 92 at N = 8, 724 at N = 10."""
        return len(queens_solutions(data["n"]))

    def random_witness(self, data, rng):
        """Uniform over :meth:`witness_space`."""
        sols = queens_solutions(data["n"])
        return format_ints(sols[int(rng.integers(len(sols)))])
