"""Max Cut, threshold formulation (App. B.1, graph): put each vertex of an undirected graph on
side 0 or side 1 so that at least T edges join the two sides. Hyper-parameters: vertices N,
threshold T (the required number of crossing edges), the edges (their number drawn with density p).

Sides are per numbered vertex, so a partition and its mirror (every side swapped) are two
answers and the count says so.

Issue 43: T used to be drawn from the instance's own maximum cut (at most it for a yes, on either
side of it for a no), so T's place between half the edges and all of them told the label: a
ridge classifier over the prompt's numbers and words predicted it on 89% of held-out prompts
(the majority class: 50%). Now T is part of the instance's shape (:meth:`MaxCutProblem.draw_shape`),
drawn before its label with the edge count M and the number R of vertices the edges touch, and
both labels are uniform draws of G(N, M) with R touched vertices, redrawn until the label holds.
The shape is drawn where the answer is uncertain: M as in G(N, p), then R as G(N, M) has it, then
T among the thresholds that the maximum cut of such a graph reaches on 15-85% of draws
(:func:`maxcut_cells`, measured once per (N, M) on a fixed seed: for N = 10 and M = 22, T = 17).
T is then above half the edges (every graph has a cut that large, no search needed) and at most
the edge count. After: the classifiers are within 0.02 of the majority class. The maximum cut is
found by enumerating the 2^(N-1) partitions (no solver); a solving instance is a draw at the
shape whose maximum cut reaches T (rejection), the same distribution as a decision's "yes".

The default N grew from 8 to 10 (the family has no other levels): a balanced partition reaches T
more often than a uniformly drawn one, and at N = 8 the best constant partition was right on 5.0%
of 400 solving instances against a uniform guess's 1.2%, beyond what the sample explains; at
N = 10 on 2.0% against 0.4%, within it. The ``spread`` knob (T within ``spread`` of the
instance's own maximum cut) is gone with the rule it set.
"""
from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations
from math import comb

import numpy as np

from ...problem import Knobs
from ..family import LogicProblem
from ..model import BoolModel
from ..witness import format_ints, parse_ints
from .graphs import (CELL_DRAWS, CELL_SHARE, WINDOW_FLOOR, WINDOW_LAST, check_edges, edge_text, gnm_touching, int_knob,
                     draw_yes, lean, shape_rng)

__all__ = ["MaxCutKnobs", "MaxCutProblem", "cut_size", "max_cut", "maxcut_cells"]

#: edge counts drawn (each as likely as in G(n, p)) before one with a window is an error
_SHAPE_TRIES = 200
#: (n, m) -> the window's cells at m edges (touched vertices, threshold) and their weights
_CELLS: dict[tuple[int, int], dict[tuple[int, int], float]] = {}
#: n -> every partition of n vertices with vertex n-1 on side 0, one row of sides each
_PARTITIONS: dict[int, np.ndarray] = {}


@dataclass(frozen=True)
class MaxCutKnobs(Knobs):
    """``n`` vertices, edge density ``p`` (the edge count M is drawn as G(n, p) has it). T is
    not a knob: it is drawn where a graph of that shape reaches it about as often as not
    (:func:`maxcut_cells`); issue 43 removed ``spread`` (T within ``spread`` of the instance's own
    maximum cut), which let T tell the answer."""

    n: int = 10
    p: float = 0.5

    def validate(self) -> None:
        int_knob("n", self.n, 3, 14)
        if not 0.0 < float(self.p) < 1.0:
            raise ValueError(f"p must be in (0, 1), got {self.p}")


def cut_size(edges, sides) -> int:
    return sum(1 for u, v in edges if sides[u] != sides[v])


def max_cut(n: int, edges) -> int:
    """The largest cut, over every partition with vertex n-1 on side 0 (numpy, no solver)."""
    if not edges:
        return 0
    if n not in _PARTITIONS:
        _PARTITIONS[n] = ((np.arange(2 ** (n - 1))[:, None] >> np.arange(n)) & 1).astype(bool)  # column n-1: 0
    bits = _PARTITIONS[n]
    u, v = np.array(edges).T
    return int((bits[:, u] != bits[:, v]).sum(axis=1).max())


def _cut_cells(n: int, m: int) -> dict[int, np.ndarray]:
    """``r -> maximum cuts``: :data:`~.graphs.CELL_DRAWS` draws of G(n, m) (a uniform m-subset of
    the pairs each: the first m of a random order, on :func:`.graphs.shape_rng` of ``(n, m)``),
    their maximum cuts, grouped by the number r of vertices they touch; groups under
    :data:`~.graphs.CELL_SHARE` of the draws left out (:func:`.graphs.cell_table`, in numpy: with
    sides x = +-1 an edge crosses when x_u x_v = -1, so a cut is (m - sum over its edges of
    x_u x_v) / 2, and every partition's sums over every draw are one matrix product)."""
    pairs = np.array(list(combinations(range(n), 2)))
    rng = shape_rng((n, m))
    chosen = np.argsort(rng.random((CELL_DRAWS, len(pairs))), axis=1)[:, :m]
    member = np.zeros((CELL_DRAWS, len(pairs)), dtype=np.float32)  # which pairs each draw joins
    member[np.arange(CELL_DRAWS)[:, None], chosen] = 1.0
    max_cut(n, [[0, 1]])  # the partitions of n vertices, cached
    spins = np.where(_PARTITIONS[n], 1.0, -1.0).astype(np.float32)  # (partitions, n)
    agree = spins[:, pairs[:, 0]] * spins[:, pairs[:, 1]]  # (partitions, pairs): +1 same side, -1 across
    best = np.rint((m - (agree @ member.T).min(axis=0)) / 2).astype(int)  # (draws,)
    u, v = pairs[chosen, 0], pairs[chosen, 1]
    adj = np.zeros((CELL_DRAWS, n), dtype=bool)
    adj[np.arange(CELL_DRAWS)[:, None], u] = adj[np.arange(CELL_DRAWS)[:, None], v] = True
    r = adj.sum(axis=1)
    return {int(x): best[r == x] for x in np.unique(r) if (r == x).sum() >= CELL_SHARE * CELL_DRAWS}


def maxcut_cells(n: int, m: int) -> dict[tuple[int, int], float]:
    """The shapes (R vertices an edge touches, threshold T) a max-cut instance with ``m`` edges is
    drawn at, each with its weight: the draws of G(n, m) grouped by R (:func:`_cut_cells`), and
    for each group the thresholds T its maximum cut reaches on 15-85% of the draws (where none
    does, the one closest to even if its rarer answer holds 5%), the group's share of the draws
    split among them. Empty where no threshold leaves the answer uncertain (a few edges: their
    maximum cut is nearly always all of them). Measured once per (n, m), on a fixed seed."""
    if (n, m) not in _CELLS:
        groups = _cut_cells(n, m)
        total = sum(len(c) for c in groups.values())
        cells = {}
        for r, cuts in sorted(groups.items()):
            rarer = {t: min(x, 1.0 - x) for t in range(1, m + 1) for x in [float(np.mean(cuts >= t))]}
            ts = [t for t, x in rarer.items() if x >= WINDOW_FLOOR]
            if not ts:
                best = max(rarer, key=lambda t: rarer[t])
                ts = [best] if rarer[best] >= WINDOW_LAST else []
            cells.update({(r, t): len(cuts) / total / len(ts) for t in ts})
        _CELLS[n, m] = cells
    return _CELLS[n, m]


class MaxCutProblem(LogicProblem):
    """Max Cut (threshold) as decision / solving / counting (``SolverLogic-v0(family="max-cut")``)."""

    name = "max-cut"
    category = "graph"
    Knobs = MaxCutKnobs
    solvers = ("z3", "pysmt", "python-sat", "ortools")
    unfit = {"sympy": "'at least T crossing edges' is a cardinality bound above one, which has no compact form "
                      "in sympy's Boolean algebra"}
    witness_noun = "an assignment of each vertex to side 0 or side 1 with at least T edges joining the two sides"
    count_noun = ("assignments of each vertex to side 0 or side 1 with at least T crossing edges (a partition and "
                  "its mirror, every side swapped, count as two)")

    def draw_shape(self, knobs, rng):
        """``(M, R, T)``: M edges (as likely as in G(n, p), among the counts that have a window)
        touching R vertices, and the threshold T (:func:`maxcut_cells`; module docstring)."""
        pairs = comb(knobs.n, 2)
        for _ in range(_SHAPE_TRIES):  # the counts without a window are a few tiny ones
            m = lean(range(2, pairs + 1), pairs, float(knobs.p), rng)
            cells = maxcut_cells(knobs.n, m)
            if cells:
                keys = sorted(cells)
                w = np.array([cells[c] for c in keys])
                r, t = keys[int(rng.choice(len(keys), p=w / w.sum()))]
                return m, r, t
        raise ValueError(f"max-cut: at n={knobs.n}, p={knobs.p} no edge count drawn in {_SHAPE_TRIES} tries has a "
                         f"threshold that some of its graphs' maximum cuts reach and others do not (with few "
                         f"vertices or few edges the maximum cut is nearly always the same), so the answer would "
                         f"show in T; choose a larger n or p")

    def random_data(self, knobs, rng, shape=None):
        m, r, t = self.draw_shape(knobs, rng) if shape is None else shape
        return {"n": knobs.n, "t": t, "edges": gnm_touching(knobs.n, m, r, rng)}

    def planted_data(self, knobs, rng, shape=None):
        """A draw at the shape rejected until its maximum cut reaches T: a decision's "yes" (no
        planted partition, whose crossing edges a reader could count). The last draw if none in
        :data:`~.graphs.PLANT_TRIES` (the generator redraws)."""
        return draw_yes(self, knobs, rng, shape)

    def quick_label(self, data):
        return max_cut(data["n"], data["edges"]) >= data["t"]

    @classmethod
    def check_data(cls, data):
        if set(data) != {"n", "t", "edges"}:
            raise ValueError(f"a max-cut instance has the keys n, t, edges; got {sorted(data)}")
        int_knob("n", data["n"], 2, 14)
        check_edges(data["edges"], data["n"], directed=False)
        int_knob("t", data["t"], 1, max(1, len(data["edges"])))

    @classmethod
    def encode(cls, data):
        n, edges = data["n"], data["edges"]
        # y_u_v says edge u-v crosses: it is fixed by the sides (y <-> s_u xor s_v), so these
        # auxiliary variables do not change the count, which stays the number of side assignments
        m = BoolModel([f"s_{v}" for v in range(n)] + [f"y_{u}_{v}" for u, v in edges])
        for i, (u, v) in enumerate(edges):
            y, a, b = n + i + 1, u + 1, v + 1
            m.clause([-y, a, b])
            m.clause([-y, -a, -b])
            m.clause([y, -a, b])
            m.clause([y, a, -b])
        m.card(range(n + 1, n + len(edges) + 1), ">=", data["t"])
        return m

    def statement(self, data):
        return (f"An undirected graph has {data['n']} vertices, numbered 0 to {data['n'] - 1}, and these "
                f"{len(data['edges'])} edges: {edge_text(data['edges'])}. T = {data['t']}. An edge crosses when its "
                f"two vertices are on different sides.")

    def mapping(self, data):
        out = {f"s_{v}": f"vertex {v} is on side 1 (false: side 0)" for v in range(data["n"])}
        out.update({f"y_{u}_{v}": f"the edge {u}-{v} crosses (its vertices are on different sides)"
                    for u, v in data["edges"]})
        return out

    def describe_data(self, data):
        return {"n": data["n"], "t": data["t"], "edges": len(data["edges"])}

    @classmethod
    def check_witness(cls, data, witness):
        n = data["n"]
        if not isinstance(witness, list) or len(witness) != n:
            return f"the answer is one side for each of the {n} vertices"
        if any(not isinstance(s, int) or isinstance(s, bool) or s not in (0, 1) for s in witness):
            return "a side is 0 or 1"
        cut = cut_size(data["edges"], witness)
        return None if cut >= data["t"] else f"{cut} edges cross, fewer than T = {data['t']}"

    def witness_from_true(self, data, true):
        return [int(f"s_{v}" in true) for v in range(data["n"])]

    def true_from_witness(self, data, witness):
        sides = {f"s_{v}" for v, s in enumerate(witness) if s == 1}
        return sides | {f"y_{u}_{v}" for u, v in data["edges"] if witness[u] != witness[v]}

    def parse_witness(self, data, text):
        sides, why = parse_ints(text, length=data["n"])
        if sides is not None and any(s not in (0, 1) for s in sides):
            return None, "a side is 0 or 1"
        return sides, why

    def format_witness(self, data, witness):
        return format_ints(witness)

    def witness_hint(self, data):
        return f"```answer <the side (0 or 1) of vertex 0, vertex 1, ..., vertex {data['n'] - 1}, separated by spaces>```"

    def witness_space(self, data):
        """A side for every vertex, which :meth:`random_witness` draws from uniformly."""
        return 2 ** data["n"]

    def random_witness(self, data, rng):
        return format_ints(rng.integers(2, size=data["n"]))
