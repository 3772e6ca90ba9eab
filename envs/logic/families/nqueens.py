"""Partial N-Queens (App. B.1, puzzle): place one queen in each row of an N x N board so that no
two attack each other (same column or diagonal), keeping the queens already placed.
Hyper-parameters: board size N, the pre-placed queens (``pre`` of them)."""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from ...problem import Knobs
from ..family import LogicProblem
from ..model import BoolModel
from ..witness import format_ints, parse_ints
from .graphs import int_knob

__all__ = ["NQueensKnobs", "NQueensProblem", "queens_solutions"]


@dataclass(frozen=True)
class NQueensKnobs(Knobs):
    """Board size ``n``, ``pre`` queens placed."""

    n: int = 6
    pre: int = 1

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


def _q(r: int, c: int, n: int) -> int:
    return r * n + c + 1


class NQueensProblem(LogicProblem):
    """Partial N-Queens as decision / solving / counting (``SolverLogic-v0(family="n-queens")``)."""

    name = "n-queens"
    category = "puzzle"
    Knobs = NQueensKnobs
    levels = ({"n": 5, "pre": 2}, {"n": 6, "pre": 1}, {"n": 7, "pre": 2})
    witness_noun = "a placement of N queens, one in each row, no two in the same column or diagonal, keeping the placed ones"
    count_noun = "such placements"

    def random_data(self, knobs, rng, shape=None):
        cells = rng.choice(knobs.n * knobs.n, size=knobs.pre, replace=False)
        pre = sorted([int(c) // knobs.n, int(c) % knobs.n] for c in cells)
        return {"n": knobs.n, "pre": pre}

    def planted_data(self, knobs, rng, shape=None):
        sols = queens_solutions(knobs.n)
        cols = sols[int(rng.integers(len(sols)))]
        rows = sorted(int(r) for r in rng.choice(knobs.n, size=knobs.pre, replace=False))
        return {"n": knobs.n, "pre": [[r, cols[r]] for r in rows]}

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

    def random_witness(self, data, rng):
        return format_ints(rng.integers(data["n"], size=data["n"]))
