"""Latin Square (App. B.1, puzzle): fill an N x N grid with the symbols 1..N so that each appears
once in every row and every column, keeping the cells given. Hyper-parameters: order N, the
partially filled grid (``given`` cells filled)."""
from __future__ import annotations

from dataclasses import dataclass

from ...problem import Knobs
from ..family import LogicProblem
from ..model import BoolModel
from ..witness import parse_ints
from .graphs import int_knob

__all__ = ["LatinKnobs", "LatinSquareProblem", "grid_text", "latin_violation"]


@dataclass(frozen=True)
class LatinKnobs(Knobs):
    """Order ``n``, ``given`` cells filled."""

    n: int = 4
    given: int = 6

    def validate(self) -> None:
        int_knob("n", self.n, 2, 9)
        int_knob("given", self.given, 0, self.n * self.n - 1)


def _x(r: int, c: int, s: int, n: int) -> int:
    return (r * n + c) * n + s + 1


def grid_text(grid: list[list[int]]) -> str:
    return "\n".join(" ".join(str(v) if v else "." for v in row) for row in grid)


def latin_violation(grid: list[list[int]]) -> str | None:
    """Why ``grid`` is not a latin square (a row or column without every symbol once), or ``None``."""
    n = len(grid)
    for i in range(n):
        if sorted(grid[i]) != list(range(1, n + 1)):
            return f"row {i} does not hold each symbol 1 to {n} once"
        if sorted(grid[r][i] for r in range(n)) != list(range(1, n + 1)):
            return f"column {i} does not hold each symbol 1 to {n} once"
    return None


class LatinSquareProblem(LogicProblem):
    """Latin Square completion as decision / solving / counting (``SolverLogic-v0(family="latin-square")``)."""

    name = "latin-square"
    category = "puzzle"
    Knobs = LatinKnobs
    levels = ({"n": 3, "given": 4}, {"n": 4, "given": 6}, {"n": 4, "given": 8})
    witness_noun = "a completion of the grid in which every row and every column holds each symbol exactly once"
    count_noun = "such completions"

    def _blank_out(self, full: list[list[int]], given: int, rng) -> list[list[int]]:
        n = len(full)
        keep = set(int(c) for c in rng.choice(n * n, size=given, replace=False))
        return [[full[r][c] if r * n + c in keep else 0 for c in range(n)] for r in range(n)]

    def random_data(self, knobs, rng, shape=None):
        n = knobs.n
        grid = [[0] * n for _ in range(n)]
        cells = rng.choice(n * n, size=knobs.given, replace=False)
        for cell in cells:  # symbols that clash with no given one in their row and column
            r, c = divmod(int(cell), n)
            free = [s for s in range(1, n + 1) if s not in grid[r] and s not in (grid[i][c] for i in range(n))]
            grid[r][c] = int(rng.choice(free)) if free else 0
        return {"n": n, "grid": grid}

    def planted_data(self, knobs, rng, shape=None):
        n = knobs.n
        rows, cols, syms = rng.permutation(n), rng.permutation(n), rng.permutation(n)
        full = [[int(syms[(rows[r] + cols[c]) % n]) + 1 for c in range(n)] for r in range(n)]
        return {"n": n, "grid": self._blank_out(full, knobs.given, rng)}

    @classmethod
    def check_data(cls, data):
        if set(data) != {"n", "grid"}:
            raise ValueError(f"a latin-square instance has the keys n, grid; got {sorted(data)}")
        n = data["n"]
        int_knob("n", n, 2, 9)
        g = data["grid"]
        if not (isinstance(g, list) and len(g) == n and all(isinstance(row, list) and len(row) == n for row in g)):
            raise ValueError(f"grid must be {n} rows of {n} cells")
        if any(not isinstance(v, int) or isinstance(v, bool) or not 0 <= v <= n for row in g for v in row):
            raise ValueError(f"a cell is 0 (blank) or a symbol 1 to {n}")

    @classmethod
    def encode(cls, data):
        n, g = data["n"], data["grid"]
        m = BoolModel([f"x_{r}_{c}_{s + 1}" for r in range(n) for c in range(n) for s in range(n)])
        for a in range(n):
            for b in range(n):
                m.card([_x(a, b, s, n) for s in range(n)], "==", 1)  # cell (a, b) holds one symbol
                m.card([_x(a, c, b, n) for c in range(n)], "==", 1)  # row a holds symbol b+1 once
                m.card([_x(r, a, b, n) for r in range(n)], "==", 1)  # column a holds symbol b+1 once
        for r in range(n):
            for c in range(n):
                if g[r][c]:
                    m.clause([_x(r, c, g[r][c] - 1, n)])
        return m

    def statement(self, data):
        n = data["n"]
        return (f"An {n} x {n} grid (rows and columns numbered 0 to {n - 1}) is partly filled with the symbols 1 to "
                f"{n}; '.' is a blank cell:\n{grid_text(data['grid'])}\nFill every blank so that each row and each "
                f"column holds every symbol exactly once.")

    def mapping(self, data):
        n = data["n"]
        return {f"x_{r}_{c}_{s}": f"the cell in row {r}, column {c} holds {s}"
                for r in range(n) for c in range(n) for s in range(1, n + 1)}

    def describe_data(self, data):
        return {"n": data["n"], "given": sum(1 for row in data["grid"] for v in row if v)}

    @classmethod
    def check_witness(cls, data, witness):
        n, g = data["n"], data["grid"]
        if not (isinstance(witness, list) and len(witness) == n and all(isinstance(row, list) and len(row) == n for row in witness)):
            return f"a completion here is {n} rows of {n} symbols"
        if any(not isinstance(v, int) for row in witness for v in row):
            return "a cell holds a whole number"
        for r in range(n):
            for c in range(n):
                if g[r][c] and witness[r][c] != g[r][c]:
                    return f"the given {g[r][c]} in row {r}, column {c} was changed"
        return latin_violation(witness)

    def witness_from_true(self, data, true):
        n = data["n"]
        return [[next((s for s in range(1, n + 1) if f"x_{r}_{c}_{s}" in true), 0) for c in range(n)] for r in range(n)]

    def true_from_witness(self, data, witness):
        return {f"x_{r}_{c}_{s}" for r, row in enumerate(witness) for c, s in enumerate(row)}

    def parse_witness(self, data, text):
        n = data["n"]
        flat, why = parse_ints(text, length=n * n)
        return ([flat[r * n:(r + 1) * n] for r in range(n)], "") if flat is not None else (None, why)

    def format_witness(self, data, witness):
        return "\n".join(" ".join(str(v) for v in row) for row in witness)

    def witness_hint(self, data):
        return f"```answer <the {data['n']} rows of the filled grid, one row per line, symbols separated by spaces>```"

    def random_witness(self, data, rng):
        n = data["n"]
        return "\n".join(" ".join(str(int(v)) for v in rng.integers(1, n + 1, size=n)) for _ in range(n))
