"""Futoshiki (App. B.1, puzzle): fill an N x N grid with the symbols 1..N so that each appears once
in every row and every column, keeping the cells given and meeting every inequality clue between
two neighbouring cells. Hyper-parameters: order N, the partially filled grid (``given`` cells
filled), the directed inequality edges ``ineq = [((r1, c1), (r2, c2))]`` between adjacent cells,
each meaning (r1, c1) < (r2, c2) (here: how many, ``inequalities``).

No reward without reading (issue 43). A reader who does not read sees the given symbols (the
grid's words) and the cells the clues name (``(row 0, column 1) < (row 0, column 2)``: its
numbers); which way a clue points and where a symbol stands are not words. So the **shape**
(:meth:`FutoshikiProblem.draw_shape`) is the multiset of given symbols (as in :mod:`.latin`) and
the set of neighbouring pairs that carry a clue, drawn before the decision's label; a draw at
that shape (:meth:`~FutoshikiProblem.random_data`) puts the symbols in random cells where none
repeats in a row or column and points each clue at random, except where a given symbol decides it
at sight (between two givens, or from a given 1 or N), and the label is whether that completes.
The decision keeps a shape when :data:`~.latin.SHAPE_SAMPLES` label-free draws at it complete
between :data:`~.latin.WINDOW`'s bounds (the latin squares of order N <= 5 are listed, so a draw's label is
looked up without a solver); clue sets that no direction can break (or that almost every
direction does) are left out (the share of draws that complete, per level:
:attr:`FutoshikiProblem.levels`).

The solving query's chance line is the latin square's (a uniform guess among the latin squares of
order N: the clues and the givens are the instance), and a planted instance is cut from a
uniformly drawn latin square, its clues pointed the way that square reads.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...problem import Knobs
from .graphs import int_knob
from ..model import solve_count
from .latin import LISTED_ORDER, LatinSquareProblem, grid_text, latin_index, sampled_shape

__all__ = ["FutoshikiKnobs", "FutoshikiProblem", "adjacent_pairs"]



@dataclass(frozen=True)
class FutoshikiKnobs(Knobs):
    """Order ``n``, ``given`` cells filled, ``inequalities`` clues (the given symbols and the
    clued pairs of cells are the instance's shape: the module docstring)."""

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
    # the share of label-free draws that complete, over 150 shapes: 3 x 3 with 1 given and 3 clues 58%
    # (91% of the shapes in the window), 4 x 4 with 2 and 5: 59% (91%), 5 x 5 with 5 and 7: 42% (93%),
    # counting 0..20 (90% of the natural draws); 5 x 5 with 4 and 12 (the level before issue 43)
    # completed 12% of the time, 15% of its shapes in the window, so a decision drew 7 shapes
    levels = ({"n": 3, "given": 1, "inequalities": 3}, {"n": 4, "given": 2, "inequalities": 5},
              {"n": 5, "given": 5, "inequalities": 7})
    # every cardinality bound is one and no sum is weighted: all five solvers state it
    solvers = ("z3", "pysmt", "python-sat", "ortools", "sympy")
    witness_noun = ("a completion of the grid in which every row and every column holds each symbol exactly once and "
                    "every inequality clue holds")
    count_noun = "such completions"

    def draw_shape(self, knobs, rng):
        """``(given symbols, clued pairs)`` (the module docstring); for the decision, one whose
        label-free draws complete in :data:`~.latin.WINDOW` (:func:`~.latin.sampled_shape`)."""
        pairs = adjacent_pairs(knobs.n)

        def draw():
            symbols = self._symbols(knobs, rng)
            return symbols, tuple(pairs[int(i)] for i in sorted(rng.choice(len(pairs), size=knobs.inequalities,
                                                                         replace=False)))

        if self.query != "decision":
            return draw()
        return sampled_shape(draw, lambda shape: self._completes_data(self.random_data(knobs, rng, shape)),
                             f"futoshiki: at {knobs.as_dict()} no givens and clued cells have both answers often "
                             f"enough; more clues or givens complete less often, fewer more often")

    def _completes_data(self, data: dict) -> bool:
        """Whether ``data`` completes: looked up among the listed latin squares up to
        :data:`~.latin.LISTED_ORDER`, else the solver."""
        n = data["n"]
        if n > LISTED_ORDER:
            return solve_count(self.encode(data), limit=1)[0] > 0
        return latin_index(n).completes([v for row in data["grid"] for v in row],
                                        [(r1 * n + c1, r2 * n + c2) for (r1, c1), (r2, c2) in data["ineq"]])

    @staticmethod
    def _pointed(n: int, clued, grid: list[list[int]], rng) -> list[list[list[int]]]:
        """Each clued pair as a clue ``[smaller cell, larger cell]``, pointed so that the given
        symbols do not break it at sight (between two givens, the way they read; from a given 1
        or N, away from or towards it), at random where both ways are open. A full grid points
        every clue the way it reads (the planted instance)."""
        out = []
        for a, b in clued:
            lo_a, hi_a = (grid[a[0]][a[1]],) * 2 if grid[a[0]][a[1]] else (1, n)
            lo_b, hi_b = (grid[b[0]][b[1]],) * 2 if grid[b[0]][b[1]] else (1, n)
            forward, backward = lo_a < hi_b, lo_b < hi_a
            if backward and (not forward or rng.random() < 0.5):
                a, b = b, a
            out.append([list(a), list(b)])
        return out

    def random_data(self, knobs, rng, shape=None):
        # SAT-RL App. B.1's givens and directed inequality edges: the shape's symbols where none
        # clashes at sight, each clued pair pointed at random where the givens leave both ways open
        symbols, clued = self.draw_shape(knobs, rng) if shape is None else shape
        n = knobs.n
        flat = self._arranged(knobs, rng, symbols)
        grid = [flat[r * n:(r + 1) * n] for r in range(n)]
        return {"n": n, "grid": grid, "ineq": self._pointed(n, clued, grid, rng)}

    def planted_data(self, knobs, rng, shape=None):
        symbols, clued = self.draw_shape(knobs, rng) if shape is None else shape
        n = knobs.n
        solution = self._solution(n, rng)
        flat = self._cut(knobs, rng, solution, symbols)
        full = [solution[r * n:(r + 1) * n] for r in range(n)]
        return {"n": n, "grid": [flat[r * n:(r + 1) * n] for r in range(n)], "ineq": self._pointed(n, clued, full, rng)}

    def quick_label(self, data):  # not the latin square's: the clues count too
        return self._completes_data(data) if data["n"] <= LISTED_ORDER else None

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
