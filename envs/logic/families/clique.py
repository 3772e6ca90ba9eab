"""K-Clique (App. B.1, graph): choose K vertices of an undirected graph every two of which are
joined by an edge. Hyper-parameters: vertices N, clique size K, edges (their number drawn with
density p, within the critical window).

Issue 43: the decision's answer must not be readable off the prompt's surface. Yes instances used
to be G(N, p) with a planted clique and no instances G(N, p) rejected until clique-free, so yes
graphs had more edges, and on held-out prompts a threshold on one counted quantity (the prompt's
length, its numbers) predicted the label 76-84% of the time and a ridge classifier over those and
the words 76-83% (the majority class: 50%). Now an instance's shape
(:meth:`CliqueProblem.draw_shape`) is its edge count M and the number R of vertices its edges
touch (the distinct vertex numbers the edge list shows: at N = 6, M = 5 a triangle leaves more
vertices bare, and that count alone told the label 62% of the time), drawn before its label, and
both labels are uniform draws of G(N, M) with R touched vertices, redrawn until the label holds:
by the symmetry of such draws under renaming vertices every edge has the same chance under both
labels, and only how the edges are arranged decides. The shape is a cell of the critical window
of (N, K): M where a K-clique is present in 15-85% of the draws of G(N, M) (e.g. 13..16 of 28
pairs for N = 8, K = 4), split by R, each (M, R) kept where both answers stay that common
(:func:`clique_cells`, measured once per (N, K) on a fixed seed). After: the classifiers are
within 0.02 of the majority class at every level.

The solving and counting queries draw at the same shapes; a solving instance is a draw of
G(N, M) that has a K-clique (rejection with :func:`has_clique`), the same distribution as a
decision's "yes", so every K-set is a clique equally often and a constant answer is right as
often as a uniform guess (up to picking the luckiest of the 70 sets on a sample). The dataset
levels are (N, K) = (8, 3), (8, 4), (10, 4): at (6, 3) the window (M = 4..6) admits almost only
counts 0 and 1, so a count was a coin flip between two answers.
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
from .graphs import (check_edges, draw_cell, draw_yes, edge_text, gnm_touching, int_knob, property_cells,
                     property_window)

__all__ = ["CliqueKnobs", "CliqueProblem", "has_clique", "clique_window", "clique_cells"]


@dataclass(frozen=True)
class CliqueKnobs(Knobs):
    """``n`` vertices, clique size ``k``; ``p`` the edge density, which since issue 43 only tilts
    the edge count within the critical window (:func:`clique_window`: the counts at which a
    K-clique is neither rare nor near certain): M is drawn with the weights G(n, p) gives the
    window's counts, so ``p`` = 0.5 leans to the window's middle for n = 8, k = 4 and a small ``p``
    to its sparse end."""

    n: int = 8
    k: int = 4
    p: float = 0.5

    def validate(self) -> None:
        int_knob("n", self.n, 2, 30)
        int_knob("k", self.k, 2, self.n)
        if not 0.0 < float(self.p) < 1.0:
            raise ValueError(f"p must be in (0, 1), got {self.p}")


def has_clique(n: int, k: int, edges) -> bool:
    """Whether the graph has ``k`` vertices every two of which are joined (branch and bound over
    neighbourhood bitmasks, no solver): the window's and the solving draw's label."""
    adj = [0] * n
    for u, v in edges:
        adj[u] |= 1 << v
        adj[v] |= 1 << u

    def grow(candidates: int, size: int) -> bool:
        if size == k:
            return True
        while candidates and candidates.bit_count() >= k - size:
            v = candidates.bit_length() - 1
            candidates &= ~(1 << v)  # cliques through v are tried now; the rest never use it
            if grow(candidates & adj[v], size + 1):
                return True
        return False

    return grow((1 << n) - 1, 0)


def clique_window(n: int, k: int) -> tuple[int, ...]:
    """The edge counts M at which G(n, M) has a k-clique in 15-85% of draws (the critical window,
    :func:`.graphs.property_window`); ``ValueError`` where there is none (k = 2: one edge is a
    2-clique, so every count but 0 answers yes)."""
    return property_window("clique", n, k, *_clique_property(n, k))


def clique_cells(n: int, k: int) -> dict[tuple[int, int], float]:
    """The shapes (M edges, R vertices an edge touches) a clique instance on ``n`` vertices is
    drawn at (:func:`.graphs.property_cells`). ``ValueError`` where there is none."""
    return property_cells("clique", n, k, *_clique_property(n, k))


def _clique_property(n: int, k: int) -> tuple:
    return lambda edges: has_clique(n, k, edges), f"a {k}-clique", "choose a larger k"


class CliqueProblem(LogicProblem):
    """K-Clique as decision / solving / counting (``SolverLogic-v0(family="clique")``)."""

    name = "clique"
    category = "graph"
    Knobs = CliqueKnobs
    levels = ({"n": 8, "k": 3}, {"n": 8, "k": 4}, {"n": 10, "k": 4})
    solvers = ("z3", "pysmt", "python-sat", "ortools")
    unfit = {"sympy": "'exactly K vertices' is a cardinality bound above one, which has no compact form in "
                      "sympy's Boolean algebra"}

    witness_noun = "a clique of exactly K vertices (K vertices every two of which are joined by an edge)"
    count_noun = "cliques of exactly K vertices (sets of vertices, not orderings)"

    def draw_shape(self, knobs, rng):
        """``(M, R)``: M edges touching R vertices, a cell of the critical window (module docstring)."""
        return draw_cell(clique_cells(knobs.n, knobs.k), comb(knobs.n, 2), float(knobs.p), rng)

    def random_data(self, knobs, rng, shape=None):
        m, r = self.draw_shape(knobs, rng) if shape is None else shape
        return {"n": knobs.n, "k": knobs.k, "edges": gnm_touching(knobs.n, m, r, rng)}

    def planted_data(self, knobs, rng, shape=None):
        """G(n, M) drawn until it has a k-clique: a decision's "yes" (no planted clique, whose
        vertices' extra edges a reader could spot). The last draw if none in :data:`~.graphs.PLANT_TRIES`
        (the generator redraws)."""
        return draw_yes(self, knobs, rng, shape)

    def quick_label(self, data):
        return has_clique(data["n"], data["k"], data["edges"])

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

    def witness_space(self, data):
        """The k-subsets of the vertices, which :meth:`random_witness` draws from uniformly."""
        return comb(data["n"], data["k"])

    def random_witness(self, data, rng):
        return format_ints(sorted(int(v) for v in rng.choice(data["n"], size=data["k"], replace=False)))
