"""Futoshiki (App. B.1, puzzle): fill an N x N grid with the symbols 1..N so that each appears once
in every row and every column, keeping the cells given and meeting every inequality clue between
two neighbouring cells. Hyper-parameters: order N, the partially filled grid (``given`` cells
filled), the directed inequality edges ``ineq = [((r1, c1), (r2, c2))]`` between adjacent cells,
each meaning (r1, c1) < (r2, c2) (here: how many, ``inequalities``)."""
from __future__ import annotations

from dataclasses import dataclass

from ...problem import Knobs
from .graphs import int_knob
from .latin import LatinSquareProblem, grid_text

__all__ = ["FutoshikiKnobs", "FutoshikiProblem", "adjacent_pairs"]


@dataclass(frozen=True)
class FutoshikiKnobs(Knobs):
    """Order ``n``, ``given`` cells filled, ``inequalities`` clues."""

    n: int = 4
    given: int = 2
    inequalities: int = 5

    def validate(self) -> None:
        int_knob("n", self.n, 2, 9)
        int_knob("given", self.given, 0, self.n * self.n - 1)
        int_knob("inequalities", self.inequalities, 0, len(adjacent_pairs(self.n)))


def adjacent_pairs(n: int) -> list[tuple[tuple[int, int], tuple[int, int]]]:
    """Every pair of horizontally or vertically adjacent cells, the upper / left one first."""
    return ([((r, c), (r, c + 1)) for r in range(n) for c in range(n - 1)]
            + [((r, c), (r + 1, c)) for r in range(n - 1) for c in range(n)])


def _x(r: int, c: int, s: int, n: int) -> int:
    """The variable of cell (r, c) holding the symbol s (1-based)."""
    return (r * n + c) * n + s


def _cell(cell) -> str:
    return f"(row {cell[0]}, column {cell[1]})"


class FutoshikiProblem(LatinSquareProblem):
    """Futoshiki as decision / solving / counting (``SolverLogic-v0(family="futoshiki")``): a latin
    square with clues, so the latin square's variables, witness layout and verifier, plus the clues."""

    name = "futoshiki"
    category = "puzzle"
    Knobs = FutoshikiKnobs
    levels = ({"n": 3, "given": 1, "inequalities": 3}, {"n": 4, "given": 2, "inequalities": 5},
              {"n": 5, "given": 4, "inequalities": 12})
    # every cardinality bound is one and no sum is weighted: all five solvers state it
    solvers = ("z3", "pysmt", "python-sat", "ortools", "sympy")
    witness_noun = ("a completion of the grid in which every row and every column holds each symbol exactly once and "
                    "every inequality clue holds")
    count_noun = "such completions"

    def _clues(self, n: int, count: int, grid: list[list[int]], rng) -> list[list[list[int]]]:
        """``count`` distinct adjacent pairs, each directed so that the given cells do not break it at
        sight (no clue between two givens, or from a given to its largest / smallest symbol, is
        false by itself), at random where both directions are open."""
        pairs = adjacent_pairs(n)
        out = []
        for i in sorted(int(i) for i in rng.choice(len(pairs), size=count, replace=False)):
            a, b = pairs[i]
            lo_a, hi_a = (grid[a[0]][a[1]],) * 2 if grid[a[0]][a[1]] else (1, n)
            lo_b, hi_b = (grid[b[0]][b[1]],) * 2 if grid[b[0]][b[1]] else (1, n)
            forward, backward = lo_a < hi_b, lo_b < hi_a
            if backward and (not forward or rng.random() < 0.5):
                a, b = b, a
            out.append([list(a), list(b)])
        return out

    def random_data(self, knobs, rng, shape=None):
        grid = super().random_data(knobs, rng)["grid"]  # givens that clash with none
        return {"n": knobs.n, "grid": grid, "ineq": self._clues(knobs.n, knobs.inequalities, grid, rng)}

    def planted_data(self, knobs, rng, shape=None):
        n = knobs.n
        rows, cols, syms = rng.permutation(n), rng.permutation(n), rng.permutation(n)
        full = [[int(syms[(rows[r] + cols[c]) % n]) + 1 for c in range(n)] for r in range(n)]
        keep = set(int(c) for c in rng.choice(n * n, size=knobs.given, replace=False))
        grid = [[full[r][c] if r * n + c in keep else 0 for c in range(n)] for r in range(n)]
        ineq = self._clues(n, knobs.inequalities, full, rng)  # every cell "given": directed by the solution
        return {"n": n, "grid": grid, "ineq": ineq}

    @classmethod
    def check_data(cls, data):
        if set(data) != {"n", "grid", "ineq"}:
            raise ValueError(f"a futoshiki instance has the keys n, grid, ineq; got {sorted(data)}")
        LatinSquareProblem.check_data({"n": data["n"], "grid": data["grid"]})
        n, ineq = data["n"], data["ineq"]
        if not isinstance(ineq, list) or len(ineq) > len(adjacent_pairs(n)):
            raise ValueError("ineq must be a list of [[r1, c1], [r2, c2]] clues, each pair of cells once")
        seen = set()
        for e in ineq:
            if not (isinstance(e, list) and len(e) == 2 and all(
                    isinstance(p, list) and len(p) == 2 and all(isinstance(v, int) and not isinstance(v, bool)
                                                                and 0 <= v < n for v in p) for p in e)):
                raise ValueError(f"a clue is [[r1, c1], [r2, c2]] with cells of the {n} x {n} grid, got {e!r}")
            (r1, c1), (r2, c2) = e
            if abs(r1 - r2) + abs(c1 - c2) != 1:
                raise ValueError(f"the cells of the clue {e} are not adjacent")
            key = frozenset(((r1, c1), (r2, c2)))
            if key in seen:
                raise ValueError(f"the cells of the clue {e} are compared twice")
            seen.add(key)

    @classmethod
    def encode(cls, data):
        n = data["n"]
        m = LatinSquareProblem.encode({"n": n, "grid": data["grid"]})
        for (r1, c1), (r2, c2) in data["ineq"]:  # (r1, c1) < (r2, c2): no pair u >= w
            for u in range(1, n + 1):
                for w in range(1, u + 1):
                    m.clause([-_x(r1, c1, u, n), -_x(r2, c2, w, n)])
        return m

    def statement(self, data):
        n = data["n"]
        clues = "\n".join(f"- {_cell(a)} < {_cell(b)}" for a, b in data["ineq"]) or "- none"
        return (f"An {n} x {n} grid (rows and columns numbered 0 to {n - 1}) is partly filled with the symbols 1 to "
                f"{n}; '.' is a blank cell:\n{grid_text(data['grid'])}\nInequality clues between neighbouring cells "
                f"(the symbol in the first cell is smaller than the symbol in the second):\n{clues}\nFill every blank "
                f"so that each row and each column holds every symbol exactly once and every clue holds.")

    def describe_data(self, data):
        return {"n": data["n"], "given": sum(1 for row in data["grid"] for v in row if v),
                "inequalities": len(data["ineq"])}

    @classmethod
    def check_witness(cls, data, witness):
        bad = LatinSquareProblem.check_witness({"n": data["n"], "grid": data["grid"]}, witness)
        if bad:
            return bad
        for (r1, c1), (r2, c2) in data["ineq"]:
            if not witness[r1][c1] < witness[r2][c2]:
                return f"the clue {_cell((r1, c1))} < {_cell((r2, c2))} is broken ({witness[r1][c1]} >= {witness[r2][c2]})"
        return None
