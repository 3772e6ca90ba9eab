"""Generalised Sudoku (App. B.1, puzzle): fill an N x N grid, N = n^2, with the symbols 1..N so
that every row, every column and every n x n box holds each symbol once, keeping the cells given.
Hyper-parameters: grid size N (here the box size ``n``), the partially filled grid (``given``
cells filled; 0 or '.' is a blank).

The encoding is one-hot over the blank cells only (``x_r_c_s``: blank cell (r, c) holds s): a
given cell is a constant, so it needs no variable, and the count is the same as over the full
grid's one-hot variables (which the givens fix). It keeps a 4 x 4 instance with a dozen givens
small enough to enumerate."""
from __future__ import annotations

from dataclasses import dataclass

from ...problem import Knobs
from ..family import LogicProblem
from ..model import BoolModel
from ..witness import parse_ints
from .graphs import int_knob
from .latin import grid_text

__all__ = ["SudokuKnobs", "SudokuProblem", "sudoku_units"]

#: the most variables a generated instance may have (LogicInstance's bound)
MAX_VARS = 400


@dataclass(frozen=True)
class SudokuKnobs(Knobs):
    """Box size ``n`` (the grid is n^2 x n^2), ``given`` cells filled."""

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


def _unit_name(k: int, size: int) -> str:
    return ("row", "column", "box")[k // size] + f" {k % size}"


class SudokuProblem(LogicProblem):
    """Generalised Sudoku as decision / solving / counting (``SolverLogic-v0(family="sudoku")``)."""

    name = "sudoku"
    category = "puzzle"
    Knobs = SudokuKnobs
    levels = ({"n": 2, "given": 4}, {"n": 2, "given": 6}, {"n": 2, "given": 8})
    # every cardinality bound is one and no sum is weighted: all five solvers state it
    solvers = ("z3", "pysmt", "python-sat", "ortools", "sympy")
    witness_noun = ("a completion of the grid in which every row, every column and every box holds each symbol "
                    "exactly once")
    count_noun = "such completions"

    def random_data(self, knobs, rng, shape=None):
        n, size = knobs.n, knobs.n * knobs.n
        grid = [[0] * size for _ in range(size)]
        units = sudoku_units(n)
        peers = {(r, c): [u for u in units if (r, c) in u] for r in range(size) for c in range(size)}
        filled = 0
        for cell in rng.permutation(size * size):  # symbols that clash with no given one in a unit
            if filled == knobs.given:
                break
            r, c = divmod(int(cell), size)
            taken = {grid[i][j] for u in peers[(r, c)] for i, j in u}
            free = [s for s in range(1, size + 1) if s not in taken]
            if free:
                grid[r][c] = int(rng.choice(free))
                filled += 1
        return {"n": n, "grid": grid}

    def planted_data(self, knobs, rng, shape=None):
        n, size = knobs.n, knobs.n * knobs.n
        # the base pattern, its bands / rows in a band / stacks / columns in a stack and symbols shuffled
        rows = [int(b) * n + int(i) for b in rng.permutation(n) for i in rng.permutation(n)]
        cols = [int(b) * n + int(i) for b in rng.permutation(n) for i in rng.permutation(n)]
        syms = rng.permutation(size)
        full = [[int(syms[(n * (r % n) + r // n + c) % size]) + 1 for c in cols] for r in rows]
        if rng.random() < 0.5:
            full = [list(col) for col in zip(*full)]
        keep = set(int(c) for c in rng.choice(size * size, size=knobs.given, replace=False))
        return {"n": n, "grid": [[full[r][c] if r * size + c in keep else 0 for c in range(size)] for r in range(size)]}

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

    def random_witness(self, data, rng):
        size = data["n"] ** 2
        return "\n".join(" ".join(str(int(v)) for v in rng.integers(1, size + 1, size=size)) for _ in range(size))
