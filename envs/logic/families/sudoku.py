"""Generalised Sudoku (App. B.1, puzzle): fill an N x N grid, N = n^2, with the symbols 1..N so
that every row, every column and every n x n box holds each symbol once, keeping the cells given.
Hyper-parameters: grid size N (here the box size ``n``), the partially filled grid (``given``
cells filled; 0 or '.' is a blank).

The encoding is one-hot over the blank cells only (``x_r_c_s``: blank cell (r, c) holds s): a
given cell is a constant, so it needs no variable, and the count is the same as over the full
grid's one-hot variables (which the givens fix). It keeps a 4 x 4 instance with a dozen givens
small enough to enumerate.

No reward without reading (issue 43): as for the latin square (:mod:`.latin`, whose
:class:`~.latin.GridShapes` this family shares), the shape is the multiset of given symbols, drawn
before the decision's label; the label is whether their arrangement (random cells where no symbol
repeats in a row, column or box) completes, and the decision keeps the multisets whose profile
completes in :data:`~.latin.WINDOW` of its arrangements. Measured on 4 x 4 grids (600 shapes per
level): 4 givens complete 77% of the time, 5: 59%, 6: 41%, 7: 30%, 8: 22%; natural counts spread
over 0..6 (4 givens), 0..4 (6), 0..3 (7). A planted grid is cut from one of the 288 4 x 4 Sudoku
grids drawn uniformly (the pattern this module used to plant from, its bands, stacks and symbols
permuted, reaches 192 of them, so a constant grid was the answer more often than a uniform
guess), and the solving query's chance line is a uniform guess among those 288 (a guess that
knows the rules, not the givens); 9 x 9 grids are not listed, so there the guess is any grid of
symbols and the planted grid is the permuted pattern.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from ...problem import Knobs
from ..family import LogicProblem
from ..model import BoolModel
from ..witness import parse_ints
from .graphs import int_knob
from .latin import GridShapes, TableIndex, grid_text, unit_peers

__all__ = ["SudokuKnobs", "SudokuProblem", "sudoku_units", "sudoku_grids"]

#: the most variables a generated instance may have (LogicInstance's bound)
MAX_VARS = 400


@dataclass(frozen=True)
class SudokuKnobs(Knobs):
    """Box size ``n`` (the grid is n^2 x n^2), ``given`` cells filled (their symbols are the
    instance's shape: the module docstring)."""

    n: int = 2
    given: int = 6

    def validate(self) -> None:
        int_knob("n", self.n, 2, 3)
        size = self.n * self.n
        int_knob("given", self.given, 0, size * size - 1)
        if (size * size - self.given) * size > MAX_VARS:
            raise ValueError(f"a {size} x {size} grid with {self.given} givens has more than {MAX_VARS} variables; "
                             f"give at least {size * size - MAX_VARS // size}")


def sudoku_units(n: int) -> list[list[tuple[int, int]]]:
    """The rows, the columns and the boxes of the n^2 x n^2 grid, each a list of cells."""
    size = n * n
    rows = [[(r, c) for c in range(size)] for r in range(size)]
    cols = [[(r, c) for r in range(size)] for c in range(size)]
    boxes = [[(br * n + i, bc * n + j) for i in range(n) for j in range(n)] for br in range(n) for bc in range(n)]
    return rows + cols + boxes


@lru_cache(maxsize=None)
def sudoku_grids(n: int) -> np.ndarray:
    """Every Sudoku grid of box size ``n`` = 2 (the 288 4 x 4 grids; cells row by row, ``int8``),
    by backtracking without a solver. 9 x 9 grids are too many to list (``ValueError``)."""
    if n != 2:
        raise ValueError("only the 4 x 4 Sudoku grids (box size 2) are listed")
    size = n * n
    peers = _peers(n)
    grids: list[list[int]] = []
    grid = [0] * (size * size)

    def fill(i: int) -> None:
        if i == len(grid):
            grids.append(grid[:])
            return
        for s in range(1, size + 1):
            if all(grid[p] != s for p in peers[i]):
                grid[i] = s
                fill(i + 1)
        grid[i] = 0

    fill(0)
    return np.array(grids, dtype=np.int8)


@lru_cache(maxsize=None)
def _sudoku_index() -> TableIndex:
    return TableIndex(sudoku_grids(2))


@lru_cache(maxsize=None)
def _peers(n: int) -> list[tuple[int, ...]]:
    size = n * n
    return unit_peers([[r * size + c for r, c in unit] for unit in sudoku_units(n)], size * size)


def _unit_name(k: int, size: int) -> str:
    return ("row", "column", "box")[k // size] + f" {k % size}"


class SudokuProblem(GridShapes, LogicProblem):
    """Generalised Sudoku as decision / solving / counting (``SolverLogic-v0(family="sudoku")``)."""

    name = "sudoku"
    category = "puzzle"
    Knobs = SudokuKnobs
    # 8 givens complete 22% of the time (most multisets outside the window) and count 0..2 only
    levels = ({"n": 2, "given": 4}, {"n": 2, "given": 5}, {"n": 2, "given": 6})
    # every cardinality bound is one and no sum is weighted: all five solvers state it
    solvers = ("z3", "pysmt", "python-sat", "ortools", "sympy")
    witness_noun = ("a completion of the grid in which every row, every column and every box holds each symbol "
                    "exactly once")
    count_noun = "such completions"

    # -- the shape's grid (latin.GridShapes) ------------------------------------------------------
    def _size(self, knobs) -> int:
        return knobs.n * knobs.n

    def _peers(self, knobs) -> list[tuple[int, ...]]:
        return _peers(knobs.n)

    def _index(self, knobs) -> TableIndex | None:
        return _sudoku_index() if knobs.n == 2 else None

    def _grid_data(self, knobs, flat: list[int]) -> dict:
        size = knobs.n * knobs.n
        return {"n": knobs.n, "grid": [list(flat[r * size:(r + 1) * size]) for r in range(size)]}

    def _solution(self, n: int, rng) -> list[int]:
        """A Sudoku grid, flattened: uniform over the 288 of box size 2; for box size 3 the base
        pattern with its bands, rows in a band, stacks, columns in a stack and symbols shuffled,
        transposed at even odds."""
        if n == 2:
            table = sudoku_grids(n)
            return [int(v) for v in table[int(rng.integers(len(table)))]]
        size = n * n
        rows = [int(b) * n + int(i) for b in rng.permutation(n) for i in rng.permutation(n)]
        cols = [int(b) * n + int(i) for b in rng.permutation(n) for i in rng.permutation(n)]
        syms = rng.permutation(size)
        full = [[int(syms[(n * (r % n) + r // n + c) % size]) + 1 for c in cols] for r in rows]
        if rng.random() < 0.5:
            full = [list(col) for col in zip(*full)]
        return [v for row in full for v in row]

    def random_data(self, knobs, rng, shape=None):
        # SAT-RL App. B.1's partially filled grid: the shape's symbols where none clashes at sight
        return self._grid_data(knobs, self._arranged(knobs, rng, shape))

    def planted_data(self, knobs, rng, shape=None):
        return self._grid_data(knobs, self._cut(knobs, rng, self._solution(knobs.n, rng), shape))

    def quick_label(self, data):
        return _sudoku_index().completes([v for row in data["grid"] for v in row]) if data["n"] == 2 else None

    @classmethod
    def check_data(cls, data):
        if set(data) != {"n", "grid"}:
            raise ValueError(f"a sudoku instance has the keys n, grid; got {sorted(data)}")
        n = data["n"]
        int_knob("n", n, 2, 3)
        size, g = n * n, data["grid"]
        if not (isinstance(g, list) and len(g) == size and all(isinstance(row, list) and len(row) == size for row in g)):
            raise ValueError(f"grid must be {size} rows of {size} cells")
        if any(not isinstance(v, int) or isinstance(v, bool) or not 0 <= v <= size for row in g for v in row):
            raise ValueError(f"a cell is 0 (blank) or a symbol 1 to {size}")
        if all(v for row in g for v in row):
            raise ValueError("the grid has no blank cell")

    @classmethod
    def encode(cls, data):
        n, g = data["n"], data["grid"]
        size = n * n
        blank = [(r, c) for r in range(size) for c in range(size) if not g[r][c]]
        m = BoolModel([f"x_{r}_{c}_{s}" for r, c in blank for s in range(1, size + 1)])
        x = {(r, c, s): m.var(f"x_{r}_{c}_{s}") for r, c in blank for s in range(1, size + 1)}
        for r, c in blank:
            m.card([x[r, c, s] for s in range(1, size + 1)], "==", 1)  # a blank cell holds one symbol
        contradiction, banned = False, set()
        for unit in sudoku_units(n):
            open_cells = [(r, c) for r, c in unit if not g[r][c]]
            for s in range(1, size + 1):
                times = sum(1 for r, c in unit if g[r][c] == s)
                if times == 0 and open_cells:  # the unit's blanks hold s once
                    m.card([x[r, c, s] for r, c in open_cells], "==", 1)
                elif times == 1:  # s is given in the unit: no blank of it holds s
                    banned.update(x[r, c, s] for r, c in open_cells)
                else:  # s given twice, or missing from a unit with no blank
                    contradiction = True
        for v in sorted(banned):
            m.clause([-v])
        if contradiction:  # the givens break a unit: no completion (x_1 and not x_1)
            m.clause([1])
            m.clause([-1])
        return m

    def statement(self, data):
        n, size = data["n"], data["n"] ** 2
        return (f"A {size} x {size} Sudoku grid (rows and columns numbered 0 to {size - 1}) is split into {size} "
                f"boxes of {n} x {n} cells (the cell in row r, column c lies in box {n} * (r // {n}) + c // {n}). "
                f"It is partly filled with the symbols 1 to {size}; '.' is a blank cell:\n"
                f"{grid_text(data['grid'])}\nFill every blank so that each row, each column and each box holds "
                f"every symbol exactly once.")

    def mapping(self, data):
        size, g = data["n"] ** 2, data["grid"]
        return {f"x_{r}_{c}_{s}": f"the blank cell in row {r}, column {c} holds {s}"
                for r in range(size) for c in range(size) if not g[r][c] for s in range(1, size + 1)}

    def describe_data(self, data):
        return {"n": data["n"], "given": sum(1 for row in data["grid"] for v in row if v)}

    @classmethod
    def check_witness(cls, data, witness):
        n, g = data["n"], data["grid"]
        size = n * n
        if not (isinstance(witness, list) and len(witness) == size
                and all(isinstance(row, list) and len(row) == size for row in witness)):
            return f"a completion here is {size} rows of {size} symbols"
        if any(not isinstance(v, int) for row in witness for v in row):
            return "a cell holds a whole number"
        for r in range(size):
            for c in range(size):
                if g[r][c] and witness[r][c] != g[r][c]:
                    return f"the given {g[r][c]} in row {r}, column {c} was changed"
        for k, unit in enumerate(sudoku_units(n)):
            if sorted(witness[r][c] for r, c in unit) != list(range(1, size + 1)):
                return f"{_unit_name(k, size)} does not hold each symbol 1 to {size} once"
        return None

    def witness_from_true(self, data, true):
        size, g = data["n"] ** 2, data["grid"]
        return [[g[r][c] or next((s for s in range(1, size + 1) if f"x_{r}_{c}_{s}" in true), 0)
                 for c in range(size)] for r in range(size)]

    def true_from_witness(self, data, witness):
        # a given cell kept has no variable; one changed names a variable the model lacks
        g = data["grid"]
        return {f"x_{r}_{c}_{s}" for r, row in enumerate(witness) for c, s in enumerate(row)
                if not g[r][c] or s != g[r][c]}

    def parse_witness(self, data, text):
        size = data["n"] ** 2
        flat, why = parse_ints(text, length=size * size)
        return ([flat[r * size:(r + 1) * size] for r in range(size)], "") if flat is not None else (None, why)

    def format_witness(self, data, witness):
        return "\n".join(" ".join(str(v) for v in row) for row in witness)

    def witness_hint(self, data):
        size = data["n"] ** 2
        return (f"```answer <the {size} rows of the filled grid, givens included, one row per line, symbols "
                f"separated by spaces>```")

    def witness_space(self, data):
        """The 288 4 x 4 Sudoku grids (a guess that knows the rules, not the givens); for 9 x 9,
        every grid of the symbols 1..9."""
        size = data["n"] ** 2
        return len(sudoku_grids(2)) if data["n"] == 2 else size ** (size * size)

    def random_witness(self, data, rng):
        """Uniform over :meth:`witness_space`."""
        size = data["n"] ** 2
        if data["n"] == 2:
            flat = sudoku_grids(2)[int(rng.integers(len(sudoku_grids(2))))]
        else:
            flat = rng.integers(1, size + 1, size=size * size)
        return "\n".join(" ".join(str(int(v)) for v in flat[r * size:(r + 1) * size]) for r in range(size))
