"""K-Clique (App. B.1, graph): choose K vertices of an undirected graph every two of which are
joined by an edge. Hyper-parameters: vertices N, clique size K, edges (drawn with density p)."""
from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations

import numpy as np

from ...problem import Knobs
from ..family import LogicProblem
from ..model import BoolModel
from ..witness import format_ints, parse_ints
from .graphs import check_edges, edge_text, gnp_edges, int_knob

__all__ = ["CliqueKnobs", "CliqueProblem"]


@dataclass(frozen=True)
class CliqueKnobs(Knobs):
    """``n`` vertices, clique size ``k``, edge density ``p``."""

    n: int = 8
    k: int = 4
    p: float = 0.5

    def validate(self) -> None:
        int_knob("n", self.n, 2, 30)
        int_knob("k", self.k, 2, self.n)
        if not 0.0 < float(self.p) < 1.0:
            raise ValueError(f"p must be in (0, 1), got {self.p}")


class CliqueProblem(LogicProblem):
    """K-Clique as decision / solving / counting (``SolverLogic-v0(family="clique")``)."""

    name = "clique"
    category = "graph"
    Knobs = CliqueKnobs
    levels = ({"n": 6, "k": 3}, {"n": 8, "k": 4}, {"n": 10, "k": 4})
    solvers = ("z3", "pysmt", "python-sat", "ortools")
    unfit = {"sympy": "'exactly K vertices' is a cardinality bound above one, which has no compact form in "
                      "sympy's Boolean algebra"}

    witness_noun = "a clique of exactly K vertices (K vertices every two of which are joined by an edge)"
    count_noun = "cliques of exactly K vertices (sets of vertices, not orderings)"

    def random_data(self, knobs, rng, shape=None):
        return {"n": knobs.n, "k": knobs.k, "edges": gnp_edges(knobs.n, float(knobs.p), rng)}

    def planted_data(self, knobs, rng, shape=None):
        data = self.random_data(knobs, rng)
        members = sorted(int(v) for v in rng.choice(knobs.n, size=knobs.k, replace=False))
        edges = {tuple(e) for e in data["edges"]} | set(combinations(members, 2))
        return {**data, "edges": [list(e) for e in sorted(edges)]}

    @classmethod
    def check_data(cls, data):
        int_knob("n", data.get("n"), 2, 30)
        int_knob("k", data.get("k"), 2, data["n"])
        check_edges(data.get("edges"), data["n"], directed=False)
        if set(data) != {"n", "k", "edges"}:
            raise ValueError(f"a clique instance has the keys n, k, edges; got {sorted(data)}")

    @classmethod
    def encode(cls, data):
        n = data["n"]
        m = BoolModel([f"x_{v}" for v in range(n)])
        m.card(range(1, n + 1), "==", data["k"])
        edges = {tuple(e) for e in data["edges"]}
        for u, v in combinations(range(n), 2):
            if (u, v) not in edges:
                m.clause([-(u + 1), -(v + 1)])  # two vertices with no edge are not both in it
        return m

    def statement(self, data):
        return (f"An undirected graph has {data['n']} vertices, numbered 0 to {data['n'] - 1}, and these edges: "
                f"{edge_text(data['edges'])}. K = {data['k']}.")

    def mapping(self, data):
        return {f"x_{v}": f"vertex {v} is in the clique" for v in range(data["n"])}

    def describe_data(self, data):
        return {"n": data["n"], "k": data["k"]}

    @classmethod
    def check_witness(cls, data, witness):
        if not isinstance(witness, list) or len(witness) != data["k"] or len(set(witness)) != data["k"]:
            return f"a clique here is {data['k']} distinct vertices"
        if any(not isinstance(v, int) or not 0 <= v < data["n"] for v in witness):
            return f"vertices are numbered 0 to {data['n'] - 1}"
        edges = {tuple(e) for e in data["edges"]}
        for u, v in combinations(sorted(witness), 2):
            if (u, v) not in edges:
                return f"vertices {u} and {v} are not joined by an edge"
        return None

    def witness_from_true(self, data, true):
        return sorted(v for v in range(data["n"]) if f"x_{v}" in true)

    def true_from_witness(self, data, witness):
        return {f"x_{v}" for v in witness}

    def parse_witness(self, data, text):
        return parse_ints(text, length=data["k"])

    def format_witness(self, data, witness):
        return format_ints(sorted(witness))

    def witness_hint(self, data):
        return f"```answer <the {data['k']} vertices, separated by spaces>```"

    def random_witness(self, data, rng):
        return format_ints(sorted(int(v) for v in rng.choice(data["n"], size=data["k"], replace=False)))
