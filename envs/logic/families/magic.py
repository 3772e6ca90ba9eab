"""Magic Square (App. B.1, puzzle): fill an N x N grid with the numbers 1..N^2, all different, so
that every row, every column and both main diagonals sum to the magic constant N(N^2+1)/2,
keeping the pre-filled cells. Hyper-parameters: order N, the value domain 1..N^2 (all different),
the pre-filled cells ``givens = [(r, c, v)]`` (here: how many).

The encoding is one-hot over the blank cells and the values no given holds (``x_r_c_v``: blank
cell (r, c) holds v), each line's sum a weighted linear constraint; a given cell is a constant and
needs no variable, so the count is the same as over the full grid's one-hot variables. The order-3
square has 8 solutions in all (the Lo Shu square's rotations and reflections), the order-4 one
7,040 (:func:`magic_squares` lists both, without a solver).

No reward without reading (issue 43). The prompt shows the given numbers in a grid; what a reader
counts without reading is which numbers are given (the grid's words), not where they stand. So an
instance's **shape** (:meth:`MagicSquareProblem.draw_shape`) is the set of given numbers (``givens``
of 1..N^2 drawn uniformly), drawn before the decision's label, and a draw at that shape
(:meth:`~MagicSquareProblem.random_data`) places them: at their cells in a uniformly drawn magic
square, each then moved to a random cell no other given holds with probability
``1 - 2^(-1/givens)`` (so that half the draws move none); the label is whether the numbers where
they stand still fit a magic square. Numbers dropped in uniformly random cells fit one in 8 of 72
placements of two (order 3) and almost never at order 4, so a decision took some 9 draws (each a
CP-SAT solve) for a yes, and none at all at 4 x 4 with 6 givens (before issue 43). The decision
keeps a shape whose label-free draws complete in :data:`~.latin.WINDOW` of
:data:`~.latin.SHAPE_SAMPLES` (looked up among the listed squares); every shape but the order-4 single given (which fits every cell) is in
it. A planted instance is cut from a uniformly drawn square (the generator used to reach 96 of the
7,040 order-4 squares, from three base squares), and the solving query's chance line is a uniform
guess among the N's magic squares (a guess that knows the rules, not the givens).

Counting at order 3 has few counts whatever the givens (0, 1, 2 or 8: the symmetries of the square
that fix them); the natural draws of one given count 0 (17%), 2 (75%) or 8 (8%), of two givens 0,
1 or 2 (each a third of the counting instances). Order 4 with 6 givens counts 0 (26%), 1 (63%) or
2..3 (11%); with 4 givens 0 (18%), 1 (22%), 2 (40%), 3 or 4 (9% each), up to 24, but a CP-SAT count
of 12 blank cells takes some 10 times as long as of 10, so the level has 6. With one given of
order 3 a constant square is right on 38% of the solving instances (2 of the 8 squares complete
most givens): no level has one.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from ...problem import Knobs
from ..family import LogicProblem
from ..model import BoolModel
from ..witness import parse_ints
from .graphs import int_knob
from .latin import TableIndex, grid_text, sampled_shape

__all__ = ["MagicKnobs", "MagicSquareProblem", "magic_lines", "magic_squares"]

#: the Lo Shu square, whose rotations and reflections are the 8 magic squares of order 3
_LO_SHU = [[2, 7, 6], [9, 5, 1], [4, 3, 8]]


@dataclass(frozen=True)
class MagicKnobs(Knobs):
    """Order ``n``, ``givens`` cells pre-filled (the given numbers are the instance's shape: the
    module docstring)."""

    n: int = 3
    givens: int = 2

    def validate(self) -> None:
        int_knob("n", self.n, 3, 4)
        int_knob("givens", self.givens, 0, self.n * self.n - 1)


def magic_lines(n: int) -> list[tuple[str, list[tuple[int, int]]]]:
    """Every line that must sum to the magic constant: the rows, the columns, both diagonals."""
    return ([(f"row {r}", [(r, c) for c in range(n)]) for r in range(n)]
            + [(f"column {c}", [(r, c) for r in range(n)]) for c in range(n)]
            + [("the main diagonal", [(i, i) for i in range(n)]),
               ("the anti-diagonal", [(i, n - 1 - i) for i in range(n)])])


def magic_constant(n: int) -> int:
    return n * (n * n + 1) // 2


@lru_cache(maxsize=None)
def magic_squares(n: int) -> np.ndarray:
    """Every magic square of order ``n`` (3 or 4), one per row (cells row by row, ``int8``): the 8
    rotations and reflections of the Lo Shu square; the 7,040 of order 4, without a solver. Order 4
    joins two halves: the ordered rows of four distinct numbers summing to 34 (2,064), every pair
    of them with no number in common as the top half, and a top half meets the bottom halves that
    hold the other eight numbers and bring each column to 34 (a sorted search on both); of the
    549,504 squares whose rows and columns add up, those whose diagonals do too are kept."""
    if n == 3:
        out, sq = [], _LO_SHU
        for _ in range(4):
            sq = [list(row) for row in zip(*sq[::-1])]
            out += [sq, [row[::-1] for row in sq]]
        return np.array(out, dtype=np.int8).reshape(-1, 9)
    if n != 4:
        raise ValueError(f"magic squares are listed for orders 3 and 4, not {n}")
    total, every = magic_constant(4), (1 << 16) - 1
    rows = np.array([p for s in itertools.combinations(range(1, 17), 4) if sum(s) == total
                     for p in itertools.permutations(s)], dtype=np.int64)
    masks = np.sum(1 << (rows - 1), axis=1)
    top, second = np.nonzero((masks[:, None] & masks[None, :]) == 0)
    sums, held = rows[top] + rows[second], masks[top] | masks[second]

    def key(mask, col):  # a half's numbers and column sums as one integer (a sum is below 2^7)
        return (mask << 28) | (col[:, 0] << 21) | (col[:, 1] << 14) | (col[:, 2] << 7) | col[:, 3]

    keys = key(held, sums)
    order = np.argsort(keys)
    want = key(every ^ held, total - sums)
    lo, hi = np.searchsorted(keys[order], want, "left"), np.searchsorted(keys[order], want, "right")
    upper = np.repeat(np.arange(len(keys)), hi - lo)
    lower = order[np.concatenate([np.arange(a, b) for a, b in zip(lo, hi) if b > a])]
    sq = np.concatenate([rows[top[upper]], rows[second[upper]], rows[top[lower]], rows[second[lower]]], axis=1)
    sq = sq.reshape(-1, 4, 4)
    diagonals = (sq[:, range(4), range(4)].sum(1) == total) & (sq[:, range(4), range(3, -1, -1)].sum(1) == total)
    return sq[diagonals].reshape(-1, 16).astype(np.int8)


@lru_cache(maxsize=None)
def _magic_index(n: int) -> TableIndex:
    return TableIndex(magic_squares(n))


def _grid(data: dict) -> list[list[int]]:
    n = data["n"]
    grid = [[0] * n for _ in range(n)]
    for r, c, v in data["givens"]:
        grid[r][c] = v
    return grid


class MagicSquareProblem(LogicProblem):
    """Magic Square completion as decision / solving / counting (``SolverLogic-v0(family="magic-square")``)."""

    name = "magic-square"
    category = "puzzle"
    Knobs = MagicKnobs
    # one given of order 3 has 2 or 8 completions, so a constant square was right on 38% of the
    # solving instances and a count was 0 or 2..8; order 4 with 4 givens spreads its counts wider
    # but CP-SAT takes 10x longer to count them (module docstring)
    levels = ({"n": 3, "givens": 2}, {"n": 4, "givens": 6})
    solvers = ("z3", "pysmt", "ortools")
    unfit = {"python-sat": "a line's sum of the values its cells hold is a weighted sum, which needs python-sat's pb "
                           "extra (pindakaas), which the sandbox does not hold",
             "sympy": "a line's sum of the values its cells hold is a weighted sum, which has no compact form in "
                      "sympy's Boolean algebra"}
    witness_noun = ("a completion of the grid with the numbers 1 to N^2, all different, in which every row, every "
                    "column and both main diagonals sum to the magic constant")
    count_noun = "such completions (magic squares that keep the given cells)"

    # -- generation (the module docstring) ---------------------------------------------------------
    def _values(self, knobs, rng) -> tuple[int, ...]:
        return tuple(sorted(int(v) + 1 for v in rng.choice(knobs.n * knobs.n, size=knobs.givens, replace=False)))

    def draw_shape(self, knobs, rng):
        """The given numbers (the module docstring); for the decision, a set whose label-free draws
        complete in :data:`~.latin.WINDOW` (:func:`~.latin.sampled_shape`)."""
        if self.query != "decision":
            return self._values(knobs, rng)
        return sampled_shape(lambda: self._values(knobs, rng),
                             lambda values: self._completes_data(self.random_data(knobs, rng, values)),
                             f"magic-square: at {knobs.as_dict()} no set of given numbers has both answers often "
                             f"enough; with no given, or one of order 4, every placement completes")

    @staticmethod
    def _completes_data(data: dict) -> bool:
        """Whether ``data`` completes, looked up among the listed squares (no solver)."""
        return _magic_index(data["n"]).completes([v for row in _grid(data) for v in row])

    def _placed(self, knobs, rng, values) -> list[int]:
        """The cells of ``values`` in a uniformly drawn magic square (the planted placement)."""
        table = magic_squares(knobs.n)
        square = table[int(rng.integers(len(table)))]
        return [int(np.flatnonzero(square == v)[0]) for v in values]

    def random_data(self, knobs, rng, shape=None):
        # SAT-RL App. B.1's givens [(r, c, v)]: the planted placement, each number then moved to a
        # random cell no other given holds with probability 1 - 2^(-1/givens) (the module docstring)
        n = knobs.n
        values = self._values(knobs, rng) if shape is None else shape
        cells = self._placed(knobs, rng, values)
        move = 1.0 - 0.5 ** (1.0 / max(len(values), 1))
        for i in range(len(cells)):
            if rng.random() < move:
                free = [c for c in range(n * n) if c not in cells]
                cells[i] = free[int(rng.integers(len(free)))]
        return {"n": n, "givens": sorted([c // n, c % n, v] for c, v in zip(cells, values))}

    def planted_data(self, knobs, rng, shape=None):
        n = knobs.n
        values = self._values(knobs, rng) if shape is None else shape
        return {"n": n, "givens": sorted([c // n, c % n, v] for c, v in zip(self._placed(knobs, rng, values), values))}

    def quick_label(self, data):
        return self._completes_data(data) if data["n"] in (3, 4) else None  # the orders listed

    @classmethod
    def check_data(cls, data):
        if set(data) != {"n", "givens"}:
            raise ValueError(f"a magic-square instance has the keys n, givens; got {sorted(data)}")
        n = data["n"]
        int_knob("n", n, 3, 4)
        g = data["givens"]
        if not isinstance(g, list) or len(g) >= n * n:
            raise ValueError(f"givens must be a list of fewer than {n * n} [row, column, value] triples")
        seen = set()
        for t in g:
            if not (isinstance(t, list) and len(t) == 3 and all(isinstance(x, int) and not isinstance(x, bool) for x in t)):
                raise ValueError(f"a given is [row, column, value], got {t!r}")
            r, c, v = t
            if not (0 <= r < n and 0 <= c < n and 1 <= v <= n * n):
                raise ValueError(f"a given is a cell of the {n} x {n} grid and a value 1 to {n * n}, got {t}")
            if (r, c) in seen:
                raise ValueError(f"the cell ({r}, {c}) is given twice")
            seen.add((r, c))

    @classmethod
    def encode(cls, data):
        n, grid = data["n"], _grid(data)
        blank = [(r, c) for r in range(n) for c in range(n) if not grid[r][c]]
        used = {v for _, _, v in data["givens"]}
        free = [v for v in range(1, n * n + 1) if v not in used]
        m = BoolModel([f"x_{r}_{c}_{v}" for r, c in blank for v in free])
        x = {(r, c, v): m.var(f"x_{r}_{c}_{v}") for r, c in blank for v in free}
        for r, c in blank:
            m.card([x[r, c, v] for v in free], "==", 1)  # a blank cell holds one of the values left
        for v in free:
            m.card([x[r, c, v] for r, c in blank], "==", 1)  # every value left is in exactly one blank cell
        contradiction = False
        for _, line in magic_lines(n):
            open_cells = [(r, c) for r, c in line if not grid[r][c]]
            rest = magic_constant(n) - sum(grid[r][c] for r, c in line)
            if open_cells:
                m.linear([v for _ in open_cells for v in free],  # the values of the line's blanks add up to the rest
                         [x[r, c, v] for r, c in open_cells for v in free], "==", rest)
            elif rest:
                contradiction = True
        if contradiction:  # a line of givens misses the constant: no completion (x_1 and not x_1)
            m.clause([1])
            m.clause([-1])
        return m

    def statement(self, data):
        n = data["n"]
        return (f"An {n} x {n} grid (rows and columns numbered 0 to {n - 1}) is partly filled; '.' is a blank cell:\n"
                f"{grid_text(_grid(data))}\nFill every blank with a whole number from 1 to {n * n} so that the "
                f"{n * n} numbers of the grid are all different and every row, every column, the main diagonal "
                f"(row i, column i) and the anti-diagonal (row i, column {n - 1} - i) each sum to "
                f"{magic_constant(n)}.")

    def mapping(self, data):
        n, grid = data["n"], _grid(data)
        used = {v for _, _, v in data["givens"]}
        return {f"x_{r}_{c}_{v}": f"the blank cell in row {r}, column {c} holds {v}"
                for r in range(n) for c in range(n) if not grid[r][c] for v in range(1, n * n + 1) if v not in used}

    def describe_data(self, data):
        return {"n": data["n"], "givens": len(data["givens"])}

    @classmethod
    def check_witness(cls, data, witness):
        n = data["n"]
        if not (isinstance(witness, list) and len(witness) == n
                and all(isinstance(row, list) and len(row) == n for row in witness)):
            return f"a completion here is {n} rows of {n} numbers"
        if any(not isinstance(v, int) or not 1 <= v <= n * n for row in witness for v in row):
            return f"every cell holds a whole number from 1 to {n * n}"
        for r, c, v in data["givens"]:
            if witness[r][c] != v:
                return f"the given {v} in row {r}, column {c} was changed"
        if len({v for row in witness for v in row}) != n * n:
            return "a number appears in two cells"
        for name, line in magic_lines(n):
            total = sum(witness[r][c] for r, c in line)
            if total != magic_constant(n):
                return f"{name} sums to {total}, not {magic_constant(n)}"
        return None

    def witness_from_true(self, data, true):
        n, grid = data["n"], _grid(data)
        return [[grid[r][c] or next((v for v in range(1, n * n + 1) if f"x_{r}_{c}_{v}" in true), 0)
                 for c in range(n)] for r in range(n)]

    def true_from_witness(self, data, witness):
        # a given cell kept has no variable; one changed names a variable the model lacks
        grid = _grid(data)
        return {f"x_{r}_{c}_{v}" for r, row in enumerate(witness) for c, v in enumerate(row)
                if not grid[r][c] or v != grid[r][c]}

    def parse_witness(self, data, text):
        n = data["n"]
        flat, why = parse_ints(text, length=n * n)
        return ([flat[r * n:(r + 1) * n] for r in range(n)], "") if flat is not None else (None, why)

    def format_witness(self, data, witness):
        return "\n".join(" ".join(str(v) for v in row) for row in witness)

    def witness_hint(self, data):
        return (f"```answer <the {data['n']} rows of the filled grid, givens included, one row per line, numbers "
                f"separated by spaces>```")

    def witness_space(self, data):
        """The magic squares of order N (a guess that knows the rules, not the givens): 8 of order
        3, 7,040 of order 4."""
        return len(magic_squares(data["n"]))

    def random_witness(self, data, rng):
        """Uniform over :meth:`witness_space`."""
        n = data["n"]
        table = magic_squares(n)
        flat = table[int(rng.integers(len(table)))]
        return "\n".join(" ".join(str(int(v)) for v in flat[r * n:(r + 1) * n]) for r in range(n))
