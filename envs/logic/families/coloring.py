"""Graph K-Colouring (App. B.1, graph): give each vertex one of K colours so that no edge joins two
vertices of one colour. Hyper-parameters: vertices N, colours K, edges (density p). A colouring is
counted as an assignment of colours to numbered vertices (renaming the colours gives another)."""
from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations

from ...problem import Knobs
from ..family import LogicProblem
from ..model import BoolModel
from ..witness import format_ints, parse_ints
from .graphs import check_edges, edge_text, gnp_edges, int_knob

__all__ = ["ColoringKnobs", "ColoringProblem"]


@dataclass(frozen=True)
class ColoringKnobs(Knobs):
    """``n`` vertices, ``k`` colours, edge density ``p``."""

    n: int = 6
    k: int = 3
    p: float = 0.5

    def validate(self) -> None:
        int_knob("n", self.n, 2, 30)
        int_knob("k", self.k, 2, 8)
        if not 0.0 < float(self.p) < 1.0:
            raise ValueError(f"p must be in (0, 1), got {self.p}")


def _var(v: int, c: int, k: int) -> int:
    return v * k + c + 1


class ColoringProblem(LogicProblem):
    """Graph K-Colouring as decision / solving / counting (``SolverLogic-v0(family="graph-coloring")``)."""

    name = "graph-coloring"
    category = "graph"
    Knobs = ColoringKnobs
    levels = ({"n": 5, "k": 3}, {"n": 6, "k": 3}, {"n": 7, "k": 3})
    witness_noun = "a colouring of the vertices with the K colours in which no edge joins two vertices of the same colour"
    count_noun = "such colourings (assignments of a colour to each numbered vertex)"

    def random_data(self, knobs, rng, shape=None):
        return {"n": knobs.n, "k": knobs.k, "edges": gnp_edges(knobs.n, float(knobs.p), rng)}

    def planted_data(self, knobs, rng, shape=None):
        colour = rng.integers(knobs.k, size=knobs.n)
        edges = [e for e in gnp_edges(knobs.n, float(knobs.p), rng) if colour[e[0]] != colour[e[1]]]
        return {"n": knobs.n, "k": knobs.k, "edges": edges}

    @classmethod
    def check_data(cls, data):
        if set(data) != {"n", "k", "edges"}:
            raise ValueError(f"a colouring instance has the keys n, k, edges; got {sorted(data)}")
        int_knob("n", data["n"], 2, 30)
        int_knob("k", data["k"], 2, 8)
        check_edges(data["edges"], data["n"], directed=False)

    @classmethod
    def encode(cls, data):
        n, k = data["n"], data["k"]
        m = BoolModel([f"c_{v}_{c}" for v in range(n) for c in range(k)])
        for v in range(n):
            m.card([_var(v, c, k) for c in range(k)], "==", 1)  # one colour per vertex
        for u, v in data["edges"]:
            for c in range(k):
                m.clause([-_var(u, c, k), -_var(v, c, k)])
        return m

    def statement(self, data):
        return (f"An undirected graph has {data['n']} vertices, numbered 0 to {data['n'] - 1}, and these edges: "
                f"{edge_text(data['edges'])}. There are K = {data['k']} colours, numbered 0 to {data['k'] - 1}.")

    def mapping(self, data):
        return {f"c_{v}_{c}": f"vertex {v} has colour {c}" for v in range(data["n"]) for c in range(data["k"])}

    def describe_data(self, data):
        return {"n": data["n"], "k": data["k"]}

    @classmethod
    def check_witness(cls, data, witness):
        n, k = data["n"], data["k"]
        if not isinstance(witness, list) or len(witness) != n:
            return f"a colouring here is one colour for each of the {n} vertices"
        if any(not isinstance(c, int) or not 0 <= c < k for c in witness):
            return f"colours are numbered 0 to {k - 1}"
        for u, v in data["edges"]:
            if witness[u] == witness[v]:
                return f"the edge {u}-{v} joins two vertices of colour {witness[u]}"
        return None

    def witness_from_true(self, data, true):
        k = data["k"]
        return [next((c for c in range(k) if f"c_{v}_{c}" in true), -1) for v in range(data["n"])]

    def true_from_witness(self, data, witness):
        return {f"c_{v}_{c}" for v, c in enumerate(witness)}

    def parse_witness(self, data, text):
        return parse_ints(text, length=data["n"])

    def format_witness(self, data, witness):
        return format_ints(witness)

    def witness_hint(self, data):
        return f"```answer <the colour of vertex 0, vertex 1, ..., vertex {data['n'] - 1}, separated by spaces>```"

    def random_witness(self, data, rng):
        return format_ints(rng.integers(data["k"], size=data["n"]))
