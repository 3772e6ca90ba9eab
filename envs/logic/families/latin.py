"""Latin Square (App. B.1, puzzle): fill an N x N grid with the symbols 1..N so that each appears
once in every row and every column, keeping the cells given. Hyper-parameters: order N, the
partially filled grid (``given`` cells filled).

No reward without reading (issue 43). What a reader counts without reading a grid is how many
symbols it shows and how often each (the bag of words of ``2 . 1 .`` is its symbols; where they
stand is not a word). So an instance's **shape** (:meth:`LatinSquareProblem.draw_shape`) is the
multiset of its given symbols, drawn before the decision's label as the symbols of ``given``
random cells of a latin square; a draw at that shape (:meth:`~LatinSquareProblem.random_data`)
puts those symbols in random cells where none repeats in a row or a column (no contradiction at
sight), and the label is whether that arrangement completes. Both labels share one shape
distribution, so the prompt's length, its numbers and its words do not show the label. The
decision draws shapes in the critical window only: a multiset whose arrangements complete in
:data:`WINDOW` of them (measured once per knobs and *profile*, the sorted multiplicities: relabelling
the symbols maps arrangements onto arrangements and keeps completability, so the share depends on
the profile alone). Measured (600 shapes per level, before the window): 4 x 4 with 5 givens
completes 80% of the time, 6 givens 52%, 8 givens 26%; 5 x 5 with 10 givens 33%, 12 givens 12%;
single profiles range from 0% to 100% (four 1s among 5 givens always complete), which the window
leaves out.

Counting needs counts that differ: a 3 x 3 grid (12 squares in all) with 3 or 4 givens has 0, 1 or
2 completions, 1 on 77-79% of the natural draws (the 3 x 3 level before issue 43 counted 0 or 1),
so the levels are 4 x 4 (576 squares; 5 givens: counts 0 to 8, 6 givens: 0 to 4) and 5 x 5
(161,280; 10 givens: 0 to 8 and beyond).

The solving query's chance line (:meth:`~LatinSquareProblem.witness_space`): a uniform guess that
knows what a latin square is but not the givens, one of the L(N) latin squares of order N, listed
up to :data:`LISTED_ORDER` (beyond it, any N x N grid of symbols). A planted instance is cut from
a uniformly drawn latin square (below the listed order), so no square is the answer more often
than a uniform guess's would be.
"""
from __future__ import annotations

import itertools
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Callable, Sequence

import numpy as np

from ...problem import Knobs
from ..family import LogicProblem
from ..model import BoolModel, solve_count
from ..witness import parse_ints
from .graphs import int_knob

__all__ = ["LatinKnobs", "LatinSquareProblem", "grid_text", "latin_violation", "latin_squares", "LISTED_ORDER",
           "WINDOW", "GridShapes", "place_symbols", "unit_peers", "TableIndex", "latin_index", "sampled_shape",
           "SHAPE_SAMPLES"]

#: the largest order whose latin squares are listed (order 5: 161,280 squares, built in 0.1 s)
LISTED_ORDER = 5
#: the share of a shape's arrangements that complete, for the decision to draw the shape (the
#: critical window: each label is met in a few draws)
WINDOW = (0.2, 0.8)
#: label-free arrangements a shape's share is measured on (once per knobs and profile)
WINDOW_SAMPLES = 64
#: shapes a decision draws before it gives up on knobs with no critical window
SHAPE_TRIES = 200
#: label-free draws a shape is measured on where it is measured per draw (:func:`sampled_shape`)
SHAPE_SAMPLES = 16
#: random placements tried before a multiset is taken to have no arrangement without a clash
PLACE_TRIES = 200
#: the seed of the window's measurements
_WINDOW_SEED = 20261207


@dataclass(frozen=True)
class LatinKnobs(Knobs):
    """Order ``n``, ``given`` cells filled (their symbols are the instance's shape: the module
    docstring)."""

    n: int = 4
    given: int = 6

    def validate(self) -> None:
        int_knob("n", self.n, 2, 9)
        int_knob("given", self.given, 0, self.n * self.n - 1)


def sampled_shape(draw: Callable[[], Any], completes: Callable[[Any], bool], why: str) -> Any:
    """The first of up to :data:`SHAPE_TRIES` shapes ``draw()`` gives whose :data:`SHAPE_SAMPLES`
    label-free draws (``completes(shape)``: one draw at the shape, and whether it completes) complete
    within :data:`WINDOW`; ``RuntimeError`` saying ``why`` none did. A puzzle whose shapes are too
    many to measure once per knobs (futoshiki's clued cells, magic squares' given numbers)
    measures each one as it draws it, from the same generator."""
    for _ in range(SHAPE_TRIES):
        shape = draw()
        share = float(np.mean([completes(shape) for _ in range(SHAPE_SAMPLES)]))
        if WINDOW[0] <= share <= WINDOW[1]:
            return shape
    raise RuntimeError(f"{why} (completing in {WINDOW[0]:.0%} to {WINDOW[1]:.0%} of {SHAPE_SAMPLES} draws) in "
                       f"{SHAPE_TRIES} shapes")


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


@lru_cache(maxsize=None)
def latin_squares(n: int) -> np.ndarray:
    """Every latin square of order ``n`` <= :data:`LISTED_ORDER`, one per row (cells row by row,
    ``int8``): 1, 2, 12, 576, 161,280. Built without a solver from the reduced squares (first row
    and first column 1..n, by backtracking: 1, 1, 1, 4, 56 of them): a square is one reduced
    square with its columns permuted and then its rows other than the first, in exactly one way
    (permuting the columns to sort the first row, then the other rows to sort the first column,
    undoes it), so all n! (n-1)! of each are distinct and together they are every square."""
    if not 1 <= n <= LISTED_ORDER:
        raise ValueError(f"latin squares are listed up to order {LISTED_ORDER}, not {n}")
    reduced: list[list[int]] = []
    grid = [[c + 1 if r == 0 else r + 1 if c == 0 else 0 for c in range(n)] for r in range(n)]
    open_cells = [(r, c) for r in range(1, n) for c in range(1, n)]

    def fill(i: int) -> None:
        if i == len(open_cells):
            reduced.append([v for row in grid for v in row])
            return
        r, c = open_cells[i]
        used = set(grid[r][:c]) | {grid[k][c] for k in range(r)}
        for s in range(1, n + 1):
            if s not in used:
                grid[r][c] = s
                fill(i + 1)
        grid[r][c] = 0

    fill(0)
    base = np.array(reduced, dtype=np.int8).reshape(-1, n, n)
    out = [base[:, [0, *rows]][:, :, list(cols)]
           for rows in itertools.permutations(range(1, n)) for cols in itertools.permutations(range(n))]
    return np.concatenate(out).reshape(-1, n * n)


class TableIndex:
    """Bit sets over the rows of a listed solution table, for completes-or-not without a solver in
    a few microseconds: one per (cell, symbol) (the rows that hold the symbol there) and, on
    demand, one per ordered pair of cells (the rows whose first cell holds the smaller symbol).
    An instance completes when the AND of its givens' and its clues' sets is not empty."""

    def __init__(self, table: np.ndarray):
        self.table = table
        self.cells = table.shape[1]
        symbols = int(table.max())
        self.held = np.stack([np.stack([np.packbits(table[:, c] == s) for s in range(symbols + 1)])
                              for c in range(self.cells)])
        self._less: dict[tuple[int, int], np.ndarray] = {}

    def less(self, a: int, b: int) -> np.ndarray:
        if (a, b) not in self._less:
            self._less[(a, b)] = np.packbits(self.table[:, a] < self.table[:, b])
        return self._less[(a, b)]

    def completes(self, flat: Sequence[int], less: Sequence[tuple[int, int]] = ()) -> bool:
        """Whether some listed solution holds the non-zero cells of ``flat`` and puts the smaller
        symbol first in each pair of ``less``."""
        sets = [self.held[c, v] for c, v in enumerate(flat) if v] + [self.less(a, b) for a, b in less]
        if not sets:
            return len(self.table) > 0
        return bool(np.bitwise_and.reduce(np.stack(sets), axis=0).any())


@lru_cache(maxsize=None)
def latin_index(n: int) -> TableIndex:
    """:class:`TableIndex` over :func:`latin_squares` (order ``n`` <= :data:`LISTED_ORDER`)."""
    return TableIndex(latin_squares(n))


def unit_peers(units: Sequence[Sequence[int]], cells: int) -> list[tuple[int, ...]]:
    """For each cell, the other cells that share a unit (row, column, box) with it."""
    peers: list[set[int]] = [set() for _ in range(cells)]
    for unit in units:
        for a in unit:
            peers[a].update(unit)
    return [tuple(sorted(p - {a})) for a, p in enumerate(peers)]


def place_symbols(symbols: Sequence[int], peers: Sequence[Sequence[int]], rng: np.random.Generator) -> list[int]:
    """The ``symbols`` (a multiset) in random cells, one each, so that no symbol repeats among a
    cell's ``peers``: each symbol in turn (in a random order) in a uniformly random cell open to it,
    starting over when one has none (``RuntimeError`` after :data:`PLACE_TRIES`). Flattened grid, 0
    blank."""
    cells = len(peers)
    order = np.asarray(symbols, dtype=int)
    for _ in range(PLACE_TRIES):
        grid = [0] * cells
        barred: list[set[int]] = [set() for _ in range(cells)]  # the symbols a cell's peers hold
        for s in rng.permutation(order).tolist():
            open_ = [c for c in range(cells) if not grid[c] and s not in barred[c]]
            if not open_:
                break
            c = open_[int(rng.integers(len(open_)))]
            grid[c] = s
            for p in peers[c]:
                barred[p].add(s)
        else:
            return grid
    raise RuntimeError(f"no placement of the symbols {sorted(symbols)} without a clash in {PLACE_TRIES} tries")


def profile(symbols: Sequence[int]) -> tuple[int, ...]:
    """How often each symbol of a multiset appears, most first (what relabelling keeps)."""
    return tuple(sorted(Counter(int(s) for s in symbols).values(), reverse=True))


#: (family class, knobs, profile) -> the share of arrangements that complete
_SHARES: dict[tuple, float] = {}


class GridShapes:
    """The shape logic of a grid family whose symbols are interchangeable (latin square, sudoku):
    the shape is the multiset of given symbols, drawn as the symbols of ``given`` random cells of a
    solution (each symbol fills ``size`` cells of every solution); the decision keeps it when its
    profile's share of completing arrangements lies in :data:`WINDOW`. A subclass gives
    ``_size(knobs)``, ``_peers(knobs)`` (the cells that may not repeat a symbol), ``_index(knobs)``
    (a :class:`TableIndex` over its listed solutions, or None: the solver decides),
    ``_grid_data(knobs, flat)`` and ``_solution(knobs.n, rng)`` (a solution, flattened)."""

    def _symbols(self, knobs, rng) -> tuple[int, ...]:
        size = self._size(knobs)
        pool = np.repeat(np.arange(1, size + 1), size)
        return tuple(sorted(int(v) for v in rng.choice(pool, size=knobs.given, replace=False)))

    def _completes(self, knobs, flat: list[int]) -> bool:
        index = self._index(knobs)
        if index is not None:
            return index.completes(flat)
        return solve_count(self.encode(self._grid_data(knobs, flat)), limit=1)[0] > 0

    def completing_share(self, knobs, prof: tuple[int, ...]) -> float:
        """The share of arrangements of a multiset with profile ``prof`` that complete, measured
        on :data:`WINDOW_SAMPLES` label-free placements (a fixed seed per knobs and profile)."""
        key = (type(self), knobs, prof)
        if key not in _SHARES:
            rng = np.random.default_rng([_WINDOW_SEED, *knobs.as_dict().values(), *prof])
            symbols = [s + 1 for s, k in enumerate(prof) for _ in range(k)]
            peers = self._peers(knobs)
            _SHARES[key] = float(np.mean([self._completes(knobs, place_symbols(symbols, peers, rng))
                                          for _ in range(WINDOW_SAMPLES)]))
        return _SHARES[key]

    def knob_share(self, knobs) -> float:
        """The share of natural draws at ``knobs`` (a fresh multiset, then an arrangement) that
        complete, on :data:`WINDOW_SAMPLES` draws of a fixed seed: 0 or 1 means these knobs have no
        critical window (no decision can be posed at them)."""
        key = (type(self), knobs, None)
        if key not in _SHARES:
            rng = np.random.default_rng([_WINDOW_SEED, *knobs.as_dict().values()])
            _SHARES[key] = float(np.mean([self._completes(knobs, self._arranged(knobs, rng, None))
                                          for _ in range(WINDOW_SAMPLES)]))
        return _SHARES[key]

    def draw_shape(self, knobs, rng):
        """The multiset of given symbols (see the module docstring); for the decision, one in the
        critical window (``RuntimeError`` at knobs where none is, or when :data:`SHAPE_TRIES` draws
        find none)."""
        symbols = self._symbols(knobs, rng)
        if self.query != "decision":
            return symbols
        share = self.knob_share(knobs)
        if share in (0.0, 1.0):
            raise RuntimeError(f"{self.name}: at {knobs.as_dict()} {'every' if share else 'no'} arrangement of the givens "
                               f"completes ({WINDOW_SAMPLES} draws), so a decision has one answer only: these knobs "
                               f"have no critical window")
        for _ in range(SHAPE_TRIES):
            if WINDOW[0] <= self.completing_share(knobs, profile(symbols)) <= WINDOW[1]:
                return symbols
            symbols = self._symbols(knobs, rng)
        raise RuntimeError(f"{self.name}: at {knobs.as_dict()} no multiset of givens has both answers often enough "
                           f"(completing in {WINDOW[0]:.0%} to {WINDOW[1]:.0%} of its arrangements) in {SHAPE_TRIES} "
                           f"draws: fewer givens complete more often, more givens less often")

    def _arranged(self, knobs, rng, shape) -> list[int]:
        """``shape``'s symbols (a fresh shape when None) in random cells, none repeated in a unit
        (:func:`place_symbols`); a grid so full that random placement keeps clashing (a 9 x 9 Sudoku
        with 60 givens) takes them from a solution instead."""
        symbols = self._symbols(knobs, rng) if shape is None else shape
        try:
            return place_symbols(symbols, self._peers(knobs), rng)
        except RuntimeError:
            return self._cut(knobs, rng, self._solution(knobs.n, rng), symbols)

    def _cut(self, knobs, rng, solution: Sequence[int], shape) -> list[int]:
        """The cells of ``solution`` (flattened) that keep the shape's symbols: for each symbol,
        as many of its cells as the shape holds, chosen at random (a fresh shape when None)."""
        symbols = self._symbols(knobs, rng) if shape is None else shape
        sol = np.asarray(solution)
        flat = [0] * len(sol)
        for s, k in Counter(symbols).items():
            for cell in rng.choice(np.flatnonzero(sol == s), size=k, replace=False):
                flat[int(cell)] = int(s)
        return flat


class LatinSquareProblem(GridShapes, LogicProblem):
    """Latin Square completion as decision / solving / counting (``SolverLogic-v0(family="latin-square")``)."""

    name = "latin-square"
    category = "puzzle"
    Knobs = LatinKnobs
    # 4 x 4 with 5 and 6 givens, 5 x 5 with 10: counts spread over 0..8, 0..4 and 0..8 (module docstring)
    levels = ({"n": 4, "given": 5}, {"n": 4, "given": 6}, {"n": 5, "given": 10})
    witness_noun = "a completion of the grid in which every row and every column holds each symbol exactly once"
    count_noun = "such completions"

    # -- the shape's grid (GridShapes) ------------------------------------------------------------
    def _size(self, knobs) -> int:
        return knobs.n

    def _peers(self, knobs) -> list[tuple[int, ...]]:
        return _latin_peers(knobs.n)

    def _index(self, knobs) -> TableIndex | None:
        return latin_index(knobs.n) if knobs.n <= LISTED_ORDER else None

    def _grid_data(self, knobs, flat: list[int]) -> dict:
        n = knobs.n
        return {"n": n, "grid": [list(flat[r * n:(r + 1) * n]) for r in range(n)]}

    def _solution(self, n: int, rng) -> list[int]:
        """A latin square of order ``n``, flattened: uniform over all of them up to
        :data:`LISTED_ORDER`; beyond, the cyclic square with its rows, columns and symbols permuted."""
        if n <= LISTED_ORDER:
            table = latin_squares(n)
            return [int(v) for v in table[int(rng.integers(len(table)))]]
        rows, cols, syms = rng.permutation(n), rng.permutation(n), rng.permutation(n)
        return [int(syms[(rows[r] + cols[c]) % n]) + 1 for r in range(n) for c in range(n)]

    def random_data(self, knobs, rng, shape=None):
        # SAT-RL App. B.1's partially filled grid: the shape's symbols in cells where none clashes at sight
        return self._grid_data(knobs, self._arranged(knobs, rng, shape))

    def planted_data(self, knobs, rng, shape=None):
        return self._grid_data(knobs, self._cut(knobs, rng, self._solution(knobs.n, rng), shape))

    def quick_label(self, data):
        n = data["n"]
        return latin_index(n).completes([v for row in data["grid"] for v in row]) if n <= LISTED_ORDER else None

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

    def witness_space(self, data):
        """The latin squares of order N (a guess that knows the rules, not the givens) up to
        :data:`LISTED_ORDER`; beyond, every N x N grid of the symbols 1..N."""
        n = data["n"]
        return len(latin_squares(n)) if n <= LISTED_ORDER else n ** (n * n)

    def random_witness(self, data, rng):
        """Uniform over :meth:`witness_space`."""
        n = data["n"]
        if n <= LISTED_ORDER:
            flat = latin_squares(n)[int(rng.integers(len(latin_squares(n))))]
        else:
            flat = rng.integers(1, n + 1, size=n * n)
        return "\n".join(" ".join(str(int(v)) for v in flat[r * n:(r + 1) * n]) for r in range(n))


@lru_cache(maxsize=None)
def _latin_peers(n: int) -> list[tuple[int, ...]]:
    units = [[r * n + c for c in range(n)] for r in range(n)] + [[r * n + c for r in range(n)] for c in range(n)]
    return unit_peers(units, n * n)
