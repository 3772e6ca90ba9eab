"""Max Cut, threshold formulation (App. B.1, graph): put each vertex of an undirected graph on
side 0 or side 1 so that at least T edges join the two sides. Hyper-parameters: vertices N,
threshold T (the required number of crossing edges), the edges (drawn with density p).

Sides are per numbered vertex, so a partition and its mirror (every side swapped) are two
answers and the count says so. T is drawn within ``spread`` of the maximum cut (found by
enumerating the 2^(N-1) partitions, no solver): at most it for a planted instance, on either side
of it for a random one, which is where the question is hard. T stays above half the edges (every
graph has a cut of at least that: no search) and at most the number of edges (above it no answer
exists by counting alone)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...problem import Knobs
from ..family import LogicProblem
from ..model import BoolModel
from ..witness import format_ints, parse_ints
from .graphs import check_edges, edge_text, gnp_edges, int_knob

__all__ = ["MaxCutKnobs", "MaxCutProblem", "cut_size", "max_cut"]


@dataclass(frozen=True)
class MaxCutKnobs(Knobs):
    """``n`` vertices, edge density ``p``, T within ``spread`` of the maximum cut."""

    n: int = 8
    p: float = 0.5
    spread: int = 2

    def validate(self) -> None:
        int_knob("n", self.n, 3, 14)
        int_knob("spread", self.spread, 1, 10)
        if not 0.0 < float(self.p) < 1.0:
            raise ValueError(f"p must be in (0, 1), got {self.p}")


def cut_size(edges, sides) -> int:
    return sum(1 for u, v in edges if sides[u] != sides[v])


def max_cut(n: int, edges) -> int:
    """The largest cut, over every partition with vertex n-1 on side 0 (numpy, no solver)."""
    if not edges:
        return 0
    bits = (np.arange(2 ** (n - 1))[:, None] >> np.arange(n)) & 1  # column n-1 is always 0
    u, v = np.array(edges).T
    return int((bits[:, u] != bits[:, v]).sum(axis=1).max())


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

    def _edges(self, knobs, rng) -> list[list[int]]:
        edges = gnp_edges(knobs.n, float(knobs.p), rng)
        return edges if len(edges) >= 2 else [[0, 1], [1, 2]]  # T = 1 would be no question

    def _threshold(self, knobs, rng, edges, above: int) -> int:
        best = max_cut(knobs.n, edges)
        lo = max(len(edges) // 2 + 1, best - knobs.spread)
        hi = min(len(edges), best + above)
        return int(rng.integers(min(lo, best), max(hi, best) + 1))

    def random_data(self, knobs, rng, shape=None):
        edges = self._edges(knobs, rng)
        return {"n": knobs.n, "t": self._threshold(knobs, rng, edges, knobs.spread), "edges": edges}

    def planted_data(self, knobs, rng, shape=None):
        edges = self._edges(knobs, rng)
        return {"n": knobs.n, "t": self._threshold(knobs, rng, edges, 0), "edges": edges}

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

    def random_witness(self, data, rng):
        return format_ints(rng.integers(2, size=data["n"]))
