"""Magic Square (App. B.1, puzzle): fill an N x N grid with the numbers 1..N^2, all different, so
that every row, every column and both main diagonals sum to the magic constant N(N^2+1)/2,
keeping the pre-filled cells. Hyper-parameters: order N, the value domain 1..N^2 (all different),
the pre-filled cells ``givens = [(r, c, v)]`` (here: how many).

The encoding is one-hot over the blank cells and the values no given holds (``x_r_c_v``: blank
cell (r, c) holds v), each line's sum a weighted linear constraint; a given cell is a constant and
needs no variable, so the count is the same as over the full grid's one-hot variables. The order-3
square has 8 solutions in all (the Lo Shu square's rotations and reflections)."""
from __future__ import annotations

from dataclasses import dataclass

from ...problem import Knobs
from ..family import LogicProblem
from ..model import BoolModel
from ..witness import parse_ints
from .graphs import int_knob
from .latin import grid_text

__all__ = ["MagicKnobs", "MagicSquareProblem", "magic_lines"]

#: magic squares of each order, which the generator's symmetries vary
_BASE = {3: [[[2, 7, 6], [9, 5, 1], [4, 3, 8]]],
         4: [[[16, 3, 2, 13], [5, 10, 11, 8], [9, 6, 7, 12], [4, 15, 14, 1]],
             [[7, 12, 1, 14], [2, 13, 8, 11], [16, 3, 10, 5], [9, 6, 15, 4]],
             [[1, 15, 14, 4], [12, 6, 7, 9], [8, 10, 11, 5], [13, 3, 2, 16]]]}


@dataclass(frozen=True)
class MagicKnobs(Knobs):
    """Order ``n``, ``givens`` cells pre-filled."""

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
    levels = ({"n": 3, "givens": 1}, {"n": 3, "givens": 2}, {"n": 4, "givens": 6})
    solvers = ("z3", "pysmt", "ortools")
    unfit = {"python-sat": "a line's sum of the values its cells hold is a weighted sum, which needs python-sat's pb "
                           "extra (pindakaas), which the sandbox does not hold",
             "sympy": "a line's sum of the values its cells hold is a weighted sum, which has no compact form in "
                      "sympy's Boolean algebra"}
    witness_noun = ("a completion of the grid with the numbers 1 to N^2, all different, in which every row, every "
                    "column and both main diagonals sum to the magic constant")
    count_noun = "such completions (magic squares that keep the given cells)"

    def random_data(self, knobs, rng, shape=None):
        n = knobs.n
        cells = rng.choice(n * n, size=knobs.givens, replace=False)
        values = rng.choice(n * n, size=knobs.givens, replace=False) + 1  # distinct values: no trivial clash
        return {"n": n, "givens": sorted([int(c) // n, int(c) % n, int(v)] for c, v in zip(cells, values))}

    def planted_data(self, knobs, rng, shape=None):
        n = knobs.n
        sq = [row[:] for row in _BASE[n][int(rng.integers(len(_BASE[n])))]]
        for _ in range(int(rng.integers(4))):  # a rotation ...
            sq = [list(row) for row in zip(*sq[::-1])]
        if rng.random() < 0.5:  # ... a reflection ...
            sq = [row[::-1] for row in sq]
        if rng.random() < 0.5:  # ... the complement v -> N^2 + 1 - v ...
            sq = [[n * n + 1 - v for v in row] for row in sq]
        # ... and the same permutation of rows and columns, one that commutes with i -> n-1-i (it keeps both diagonals)
        perm = [0] * n
        for i, j in enumerate(rng.permutation(n // 2)):
            perm[i] = int(j) if rng.random() < 0.5 else n - 1 - int(j)
            perm[n - 1 - i] = n - 1 - perm[i]
        if n % 2:
            perm[n // 2] = n // 2
        sq = [[sq[perm[r]][perm[c]] for c in range(n)] for r in range(n)]
        cells = rng.choice(n * n, size=knobs.givens, replace=False)
        return {"n": n, "givens": sorted([int(c) // n, int(c) % n, sq[int(c) // n][int(c) % n]] for c in cells)}

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

    def random_witness(self, data, rng):
        n = data["n"]
        vals = rng.permutation(n * n) + 1
        return "\n".join(" ".join(str(int(v)) for v in vals[r * n:(r + 1) * n]) for r in range(n))
