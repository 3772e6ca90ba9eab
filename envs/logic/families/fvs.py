"""Directed Feedback Vertex Set (App. B.1 "Feedback Node Set", graph): remove at most K vertices of
a directed graph so that what remains has no directed cycle. Hyper-parameters: vertices N,
removal budget K, the directed edges (each pair of vertices joined with probability p, both ways
with probability ``mutual``: were most joined pairs two-way, K+1 disjoint two-way pairs would
answer most "no"s at a glance, without a search).

The encoding says "at most K removed" and, for every chordless directed cycle, "one of its
vertices is removed": every cycle's vertex set holds a chordless one (a chord and the cycle's
path around it close a shorter cycle), so hitting those hits all. Cycles are enumerated by depth
first search, bounded (:data:`MAX_CYCLES`). Every generated graph has a cycle, so a removal set is
never empty; the verifier checks acyclicity by a topological sort, without a solver."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...problem import Knobs
from ..family import LogicProblem
from ..model import BoolModel
from ..witness import format_ints, parse_ints
from .graphs import check_edges, edge_text, gnp_edges, int_knob

__all__ = ["FVSKnobs", "FeedbackVertexSetProblem", "chordless_cycles", "acyclic"]

#: the most chordless cycles an instance may have (each is one clause)
MAX_CYCLES = 2000


@dataclass(frozen=True)
class FVSKnobs(Knobs):
    """``n`` vertices, removal budget ``k``; each pair of vertices is joined with probability ``p``,
    both ways with probability ``mutual`` (else one way, at random)."""

    n: int = 8
    k: int = 2
    p: float = 0.8
    mutual: float = 0.05

    def validate(self) -> None:
        int_knob("n", self.n, 2, 16)
        int_knob("k", self.k, 1, self.n - 1)
        if not 0.0 < float(self.p) <= 1.0:
            raise ValueError(f"p must be in (0, 1], got {self.p}")
        if not 0.0 <= float(self.mutual) <= 1.0:
            raise ValueError(f"mutual must be in [0, 1], got {self.mutual}")


def chordless_cycles(n: int, edges: list[list[int]]) -> list[list[int]]:
    """Every directed cycle with no chord (no edge between two of its vertices besides its own),
    each once, starting at its smallest vertex. ``ValueError`` past :data:`MAX_CYCLES`."""
    out_adj = [set() for _ in range(n)]
    for u, v in edges:
        out_adj[u].add(v)
    cycles: list[list[int]] = []

    def extend(path: list[int]) -> None:
        s, last = path[0], path[-1]
        for w in sorted(out_adj[last]):
            if w <= s or w in path:
                continue
            # no edge between w and the path besides last -> w and a closing w -> s
            if len(path) > 1 and (w in out_adj[s] or last in out_adj[w]):
                continue
            if any(w in out_adj[x] or x in out_adj[w] for x in path[1:-1]):
                continue
            if s in out_adj[w]:
                cycles.append(path + [w])
                if len(cycles) > MAX_CYCLES:
                    raise ValueError(f"the graph has more than {MAX_CYCLES} chordless cycles")
            else:
                extend(path + [w])

    for s in range(n):
        extend([s])
    return cycles


def acyclic(n: int, edges, removed: set[int]) -> bool:
    """Whether the graph less ``removed`` has no directed cycle (Kahn's topological sort)."""
    keep = [v for v in range(n) if v not in removed]
    succ = {v: [] for v in keep}
    indeg = dict.fromkeys(keep, 0)
    for u, v in edges:
        if u in succ and v in succ:
            succ[u].append(v)
            indeg[v] += 1
    ready = [v for v in keep if indeg[v] == 0]
    seen = 0
    while ready:
        u = ready.pop()
        seen += 1
        for v in succ[u]:
            indeg[v] -= 1
            if indeg[v] == 0:
                ready.append(v)
    return seen == len(keep)


class FeedbackVertexSetProblem(LogicProblem):
    """Feedback Vertex Set as decision / solving / counting (``SolverLogic-v0(family="feedback-vertex-set")``)."""

    name = "feedback-vertex-set"
    category = "graph"
    Knobs = FVSKnobs
    solvers = ("z3", "pysmt", "python-sat", "ortools")
    unfit = {"sympy": "'at most K removed' is a cardinality bound above one, which has no compact form in "
                      "sympy's Boolean algebra"}
    witness_noun = "a set of at most K vertices whose removal leaves a graph with no directed cycle"
    count_noun = "sets of at most K vertices whose removal leaves a graph with no directed cycle"

    def _cyclic_edges(self, knobs, rng) -> list[list[int]]:
        for _ in range(20):  # an acyclic graph is no question: it needs no removal
            edges = []
            for u, v in gnp_edges(knobs.n, float(knobs.p), rng):
                both, flip = rng.random() < knobs.mutual, rng.random() < 0.5
                edges += [[u, v], [v, u]] if both else [[v, u] if flip else [u, v]]
            edges.sort()
            if not acyclic(knobs.n, edges, set()):
                return edges
        return sorted(edges + [e for e in ([0, 1], [1, 0]) if e not in edges])

    def random_data(self, knobs, rng, shape=None):
        return {"n": knobs.n, "k": knobs.k, "edges": self._cyclic_edges(knobs, rng)}

    def planted_data(self, knobs, rng, shape=None):
        n = knobs.n
        edges = self._cyclic_edges(knobs, rng)
        removed = {int(v) for v in rng.choice(n, size=knobs.k, replace=False)}
        rank = {int(v): i for i, v in enumerate(rng.permutation(n))}
        planted = set()
        for u, v in edges:  # among the kept vertices, every edge runs forward in a random order
            if u not in removed and v not in removed and rank[u] > rank[v]:
                u, v = v, u
            planted.add((u, v))
        if acyclic(n, planted, set()):  # a cycle through a removed vertex
            r, u = sorted(removed)[0], next(v for v in range(n) if v not in removed)
            planted |= {(r, u), (u, r)}
        return {"n": n, "k": knobs.k, "edges": [list(e) for e in sorted(planted)]}

    @classmethod
    def check_data(cls, data):
        if set(data) != {"n", "k", "edges"}:
            raise ValueError(f"a feedback-vertex-set instance has the keys n, k, edges; got {sorted(data)}")
        int_knob("n", data["n"], 2, 16)
        int_knob("k", data["k"], 1, data["n"] - 1)
        check_edges(data["edges"], data["n"], directed=True)
        chordless_cycles(data["n"], data["edges"])  # within the bound

    @classmethod
    def encode(cls, data):
        n = data["n"]
        m = BoolModel([f"r_{v}" for v in range(n)])
        m.card(range(1, n + 1), "<=", data["k"])
        for cycle in chordless_cycles(n, data["edges"]):
            m.clause([v + 1 for v in cycle])  # some vertex of every cycle is removed
        return m

    def statement(self, data):
        return (f"A directed graph has {data['n']} vertices, numbered 0 to {data['n'] - 1}, and these edges "
                f"(u->v runs from u to v): {edge_text(data['edges'], '->')}. K = {data['k']}. Removing a vertex "
                f"removes the edges at it.")

    def mapping(self, data):
        return {f"r_{v}": f"vertex {v} is removed" for v in range(data["n"])}

    def describe_data(self, data):
        return {"n": data["n"], "k": data["k"], "edges": len(data["edges"])}

    @classmethod
    def check_witness(cls, data, witness):
        n, k = data["n"], data["k"]
        if not isinstance(witness, list) or any(not isinstance(v, int) or not 0 <= v < n for v in witness):
            return f"the answer is a set of vertices numbered 0 to {n - 1}"
        removed = set(witness)
        if len(removed) != len(witness):
            return "a vertex is listed twice"
        if len(removed) > k:
            return f"{len(removed)} vertices are removed, more than K = {k}"
        if not acyclic(n, data["edges"], removed):
            return "the remaining graph still has a directed cycle"
        return None

    def witness_from_true(self, data, true):
        return [v for v in range(data["n"]) if f"r_{v}" in true]

    def true_from_witness(self, data, witness):
        return {f"r_{v}" for v in witness}

    def parse_witness(self, data, text):
        if text.strip().strip("`'\"[]()").strip().lower() in ("", "none"):
            return [], ""  # nothing removed
        return parse_ints(text)

    def format_witness(self, data, witness):
        return format_ints(sorted(witness)) if witness else "none"

    def witness_hint(self, data):
        return "```answer <the removed vertices, separated by spaces (none if no vertex is removed)>```"

    def random_witness(self, data, rng: np.random.Generator):
        size = int(rng.integers(1, data["k"] + 1))
        return format_ints(sorted(int(v) for v in rng.choice(data["n"], size=size, replace=False)))
