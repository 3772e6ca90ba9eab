"""What the graph families share: drawing G(n, p) and G(n, m), checking an edge list read from a
record, writing it in words, the integer knobs' check, and finding a family's critical window
(the shapes at which both decision labels are common, issue 43)."""
from __future__ import annotations

from itertools import combinations, permutations
from math import lgamma, log
from typing import Any

import numpy as np

__all__ = ["gnp_edges", "check_edges", "edge_text", "int_knob", "gnm_edges", "critical_window", "sat_share", "draw_until", "draw_yes",
           "property_window", "property_cells",
           "shape_rng", "lean", "touched", "gnm_touching", "cell_table", "draw_cell", "label_cells", "WINDOW_FLOOR",
           "WINDOW_LAST", "WINDOW_DRAWS", "CELL_DRAWS", "CELL_SHARE"]


def int_knob(name: str, value: Any, lo: int, hi: int) -> None:
    if not isinstance(value, (int, np.integer)) or isinstance(value, bool) or not lo <= value <= hi:
        raise ValueError(f"{name} must be an int in [{lo}, {hi}], got {value!r}")


def gnp_edges(n: int, p: float, rng: np.random.Generator, *, directed: bool = False) -> list[list[int]]:
    """Every pair (ordered pair, ``directed``) of ``n`` vertices an edge with probability ``p``;
    sorted ``[u, v]`` lists (u < v undirected)."""
    pairs = list(permutations(range(n), 2) if directed else combinations(range(n), 2))
    keep = rng.random(len(pairs)) < p
    return [[u, v] for (u, v), k in zip(pairs, keep) if k]


def check_edges(edges: Any, n: int, *, directed: bool) -> None:
    if not isinstance(edges, list) or len(edges) > n * n:
        raise ValueError("edges must be a list of [u, v] pairs")
    seen = set()
    for e in edges:
        if not (isinstance(e, list) and len(e) == 2 and all(isinstance(x, int) and not isinstance(x, bool) for x in e)):
            raise ValueError(f"an edge is a pair of vertex numbers, got {e!r}")
        u, v = e
        if not (0 <= u < n and 0 <= v < n) or u == v or (not directed and u > v):
            raise ValueError(f"edge {e} is not a pair of distinct vertices in [0, {n})" + ("" if directed else " with u < v"))
        if (u, v) in seen:
            raise ValueError(f"edge {e} is listed twice")
        seen.add((u, v))


def edge_text(edges: list[list[int]], arrow: str = "-") -> str:
    return ", ".join(f"{u}{arrow}{v}" for u, v in edges) if edges else "none"


# -- the decision's critical window (issue 43): shapes at which both labels are common -------------
# A decision instance is drawn at a shape (its edge count, a threshold...) chosen before its label
# and redrawn at that shape until the label holds (:meth:`..family.LogicProblem.generate`), so
# what a reader counts carries no information about the answer. A graph family therefore needs the
# shapes at which a uniformly random graph is a "yes" often and a "no" often: a property such as
# "has a K-clique" switches from rare to common within a few edges, and these helpers find those
# few edge counts once per knobs, on draws of their own fixed seed (pure: the same knobs give the
# same window in every process).

#: a shape is in the critical window when a uniform draw at it has each decision label at least
#: this often (the rarer label then needs about 1/0.15 < 7 draws, and :data:`MAX_TRIES` = 500
#: draws miss it with probability 0.85^500, about 1e-35)
WINDOW_FLOOR = 0.15
#: the least share of the rarer label a window of one shape may have where no shape reaches
#: :data:`WINDOW_FLOOR` (0.95^500 draws miss it: about 7e-12); below it the knobs have no window
WINDOW_LAST = 0.05
#: draws each shape's share of satisfiable instances is estimated on
WINDOW_DRAWS = 200
#: the seed of those draws (with the shape's value: each shape's estimate is its own)
_WINDOW_SEED = 20261207
#: (n, directed) -> every pair of n vertices, in the order G(n, m) numbers them
_PAIRS: dict[tuple[int, bool], list[list[int]]] = {}
#: (values, pairs, p) -> :func:`lean`'s weights
_LEAN: dict[tuple, np.ndarray] = {}


def gnm_edges(n: int, m: int, rng: np.random.Generator, *, directed: bool = False) -> list[list[int]]:
    """``m`` distinct pairs (ordered pairs, ``directed``) of ``n`` vertices, uniformly: G(n, m),
    the graph with exactly ``m`` edges; sorted ``[u, v]`` lists (u < v undirected)."""
    key = (n, directed)
    if key not in _PAIRS:
        _PAIRS[key] = [list(e) for e in (permutations(range(n), 2) if directed else combinations(range(n), 2))]
    pairs = _PAIRS[key]
    if not 0 <= m <= len(pairs):
        raise ValueError(f"{m} edges do not fit {n} vertices ({len(pairs)} pairs)")
    return [list(pairs[i]) for i in np.sort(rng.permutation(len(pairs))[:m])]


def shape_rng(value: Any) -> np.random.Generator:
    """The generator a window's estimate at shape ``value`` (an int or a tuple of ints) draws on:
    fixed, so the estimate does not depend on which shapes were looked at before it."""
    return np.random.default_rng([_WINDOW_SEED, *np.atleast_1d(value).tolist()])


def sat_share(value: Any, is_sat: Any, draws: int = WINDOW_DRAWS) -> float:
    """The share of ``draws`` calls ``is_sat(rng)`` (one random draw at shape ``value`` and its
    label, True for "yes") that are True, on :func:`shape_rng`'s generator."""
    rng = shape_rng(value)
    return sum(bool(is_sat(rng)) for _ in range(draws)) / draws


def critical_window(share: Any, lo: int, hi: int, floor: float = WINDOW_FLOOR) -> tuple[int, ...]:
    """The shape values ``v`` in ``[lo, hi]`` with ``floor <= share(v) <= 1 - floor``, where
    ``share`` (a monotone property's share of "yes" draws, rising or falling in ``v``) is looked
    at only near its crossing of one half: bisection finds the crossing, then the window grows
    outwards while both labels stay common. Where no value reaches ``floor``, the one value whose
    rarer label is commonest, if it reaches :data:`WINDOW_LAST`; else empty (the knobs have no
    critical window)."""
    seen: dict[int, float] = {}

    def s(v: int) -> float:
        if v not in seen:
            seen[v] = float(share(v))
        return seen[v]

    rising = s(hi) >= s(lo)
    up = (lambda v: s(v)) if rising else (lambda v: 1.0 - s(v))
    a, b = lo, hi  # the first value whose rising share is at least a half lies in [a, b]
    while a < b:
        mid = (a + b) // 2
        if up(mid) >= 0.5:
            b = mid
        else:
            a = mid + 1
    centre = min((v for v in (a - 1, a) if lo <= v <= hi), key=lambda v: abs(s(v) - 0.5))

    def common(v: int) -> bool:
        return floor <= s(v) <= 1.0 - floor

    if not common(centre):
        rarer = min(s(centre), 1.0 - s(centre))
        return (centre,) if rarer >= WINDOW_LAST else ()
    left = right = centre
    while left > lo and common(left - 1):
        left -= 1
    while right < hi and common(right + 1):
        right += 1
    return tuple(range(left, right + 1))


#: draws a graph family's solving draw makes at one shape before the generator redraws
PLANT_TRIES = 50


def draw_until(draw: Any, holds: Any, tries: int = PLANT_TRIES) -> dict:
    """``draw()`` until ``holds(data)``, at most ``tries`` times; the last draw otherwise (the
    generator checks the label with a solver and draws again). A graph family's "yes" is a draw
    at the shape kept by this, not a planted structure, whose extra edges a reader could spot."""
    for _ in range(tries):
        data = draw()
        if holds(data):
            break
    return data


def draw_yes(family: Any, knobs: Any, rng: np.random.Generator, shape: Any = None) -> dict:
    """``family``'s draws at one shape (drawn here when ``None``) until its exact
    ``quick_label`` says "yes": a graph family's ``planted_data``. No planted structure, whose
    extra edges a reader could spot; the last draw if none in ``PLANT_TRIES`` (the generator
    checks the label with a solver and draws again)."""
    shape = family.draw_shape(knobs, rng) if shape is None else shape
    return draw_until(lambda: family.random_data(knobs, rng, shape), family.quick_label)


def lean(values: Any, pairs: int, p: float, rng: np.random.Generator) -> int:
    """One of ``values`` (edge counts), each as likely as G(``pairs``, ``p``) makes it relative to
    the others (the binomial's weights, restricted to ``values``): the density knob ``p`` tilts
    the edge count within the window, towards its sparse or its dense end."""
    values = tuple(values)
    key = (values, pairs, float(p))
    if key not in _LEAN:
        q = min(max(float(p), 1e-12), 1.0 - 1e-12)
        logw = np.array([lgamma(pairs + 1) - lgamma(v + 1) - lgamma(pairs - v + 1) + v * log(q)
                         + (pairs - v) * log(1.0 - q) for v in values])
        w = np.exp(logw - logw.max())
        _LEAN[key] = w / w.sum()
    return int(values[int(rng.choice(len(values), p=_LEAN[key]))])


# -- the vertices an edge list touches: the other number a reader counts ----------------------------
# Within a window of edge counts, the number of vertices that some edge touches (the distinct
# numbers an edge list shows) still told a label: a triangle on 6 vertices and 5 edges leaves more
# vertices bare than a triangle-free graph does, and that count alone predicted clique's label on
# 62% of held-out prompts. So it is part of a graph family's shape: G(n, m) is drawn conditioned on
# exactly r touched vertices (:func:`gnm_touching`), and the window is made of (m, r) cells
# (:func:`cell_table`).

#: draws of G(n, m) per edge count that a window's (m, r) cells are measured on
CELL_DRAWS = 400
#: the least share of an edge count's draws a cell (m, r) must hold to be used: a rarer number of
#: touched vertices is left out, so every cell's estimate rests on at least 20 draws
CELL_SHARE = 0.05


def touched(edges) -> int:
    """How many vertices some edge (pair) of ``edges`` touches."""
    return len({v for e in edges for v in e})


def gnm_touching(n: int, m: int, r: int, rng: np.random.Generator) -> list[list[int]]:
    """``m`` distinct unordered pairs of ``n`` vertices that touch exactly ``r`` vertices,
    uniformly among such edge sets (G(n, m) conditioned on ``r`` touched vertices): ``r`` vertices
    uniformly, then ``m`` of their pairs until every one is touched. ``ValueError`` where no such
    set exists; ``RuntimeError`` where it is too rare to meet (a cell of a window never is)."""
    if not (m == 0 and r == 0) and not (2 <= r <= n and (r + 1) // 2 <= m <= r * (r - 1) // 2):
        raise ValueError(f"{m} edges cannot touch exactly {r} of {n} vertices")
    for _ in range(10_000):
        members = np.sort(rng.choice(n, size=r, replace=False))
        edges = [[int(members[a]), int(members[b])] for a, b in gnm_edges(r, m, rng)]
        if touched(edges) == r:
            return sorted(edges)
    raise RuntimeError(f"{m} edges touching exactly {r} of {n} vertices are too rare to draw")


def cell_table(n: int, ms, stat: Any, key: tuple = (), draws: int = CELL_DRAWS) -> dict[tuple[int, int], list]:
    """``(m, r) -> [stat(edges, rng), ...]`` over ``draws`` draws of G(n, m) for each ``m`` in
    ``ms``, grouped by the number ``r`` of vertices they touch; cells holding less than
    :data:`CELL_SHARE` of their edge count's draws are left out. ``stat`` gets the undirected
    pairs and the generator (a directed family orients them with it); each edge count draws on
    :func:`shape_rng` of ``(*key, m)``, so the table is a pure function of its arguments."""
    table: dict[tuple[int, int], list] = {}
    for m in ms:
        rng = shape_rng((*key, m))
        cells: dict[int, list] = {}
        for _ in range(draws):
            edges = gnm_edges(n, m, rng)
            cells.setdefault(touched(edges), []).append(stat(edges, rng))
        table.update({(m, r): v for r, v in cells.items() if len(v) >= CELL_SHARE * draws})
    return table


def draw_cell(cells: dict[tuple, float], pairs: int, p: float, rng: np.random.Generator) -> tuple:
    """One cell ``(m, r, ...)`` of a window, ``cells`` mapping each to its weight within its edge
    count m (how often G(n, m) falls in it): m by :func:`lean` among the counts that have a cell,
    then a cell of that count by its weight."""
    m = lean(sorted({c[0] for c in cells}), pairs, p, rng)
    mine = [c for c in sorted(cells) if c[0] == m]
    w = np.array([cells[c] for c in mine], dtype=float)
    return mine[int(rng.choice(len(mine), p=w / w.sum()))]


def label_cells(table: dict[tuple[int, int], list], floor: float = WINDOW_FLOOR) -> dict[tuple[int, int], float]:
    """The cells of a :func:`cell_table` of decision labels (True: "yes") where each label holds
    at least ``floor`` of the draws, each with its share of its edge count's draws (its weight for
    :func:`draw_cell`); where none does, the one whose rarer label is commonest, if that reaches
    :data:`WINDOW_LAST`; else empty."""
    def rarer(v: list) -> float:
        share = sum(map(bool, v)) / len(v)
        return min(share, 1.0 - share)

    draws = {m: sum(len(v) for (mm, _), v in table.items() if mm == m) for m, _ in table}
    cells = {c: len(v) / draws[c[0]] for c, v in table.items() if rarer(v) >= floor}
    if not cells and table:
        best = max(sorted(table), key=lambda c: rarer(table[c]))
        cells = {best: 1.0} if rarer(table[best]) >= WINDOW_LAST else {}
    return cells


#: (family, n, k) -> the critical window's edge counts of an undirected property (:func:`property_window`)
_PROPERTY_WINDOWS: dict[tuple[str, int, int], tuple[int, ...]] = {}
#: (family, n, k) -> its cells and their weights (:func:`property_cells`)
_PROPERTY_CELLS: dict[tuple[str, int, int], dict[tuple[int, int], float]] = {}


def property_window(family: str, n: int, k: int, holds: Any, what: str, hint: str) -> tuple[int, ...]:
    """The edge counts M at which ``holds(edges)`` (a monotone property of an undirected graph on
    ``n`` vertices with parameter ``k``: a k-clique, a k-colouring) is true of G(n, M) in 15-85% of
    draws (:func:`critical_window`, measured once per (family, n, k) on :func:`shape_rng` of
    ``(n, k, M)``). ``ValueError`` where there is none, naming ``what`` the property is and
    ``hint`` how to get a window."""
    key = (family, n, k)
    if key not in _PROPERTY_WINDOWS:
        share = lambda m: sat_share((n, k, m), lambda rng: holds(gnm_edges(n, m, rng)))  # noqa: E731
        _PROPERTY_WINDOWS[key] = critical_window(share, 0, n * (n - 1) // 2)
    if not _PROPERTY_WINDOWS[key]:
        raise ValueError(f"{family}: no edge count on n={n} vertices makes {what} neither rare nor near certain, "
                         f"so a decision's answer would show in its number of edges; {hint}")
    return _PROPERTY_WINDOWS[key]


def property_cells(family: str, n: int, k: int, holds: Any, what: str, hint: str) -> dict[tuple[int, int], float]:
    """The shapes (M edges, R vertices an edge touches) an instance of the property is drawn at:
    the cells of :func:`property_window`'s edge counts where ``holds`` in 15-85% of the draws of
    G(n, M) that touch R vertices, each with its weight among its count's draws
    (:func:`label_cells`). ``ValueError`` where there is none."""
    key = (family, n, k)
    if key not in _PROPERTY_CELLS:
        table = cell_table(n, property_window(family, n, k, holds, what, hint), lambda edges, rng: holds(edges),
                           key=(n, k))
        _PROPERTY_CELLS[key] = label_cells(table)
    if not _PROPERTY_CELLS[key]:
        raise ValueError(f"{family}: no shape on n={n} vertices makes {what} neither rare nor near certain")
    return _PROPERTY_CELLS[key]
