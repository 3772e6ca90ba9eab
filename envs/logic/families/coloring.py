"""Graph K-Colouring (App. B.1, graph): give each vertex one of K colours so that no edge joins two
vertices of one colour. Hyper-parameters: vertices N, colours K, edges (their number drawn with
density p, within the critical window). A colouring is counted as an assignment of colours to
numbered vertices (renaming the colours gives another).

Issue 43: yes instances used to be G(N, p) less the edges a random colouring made monochromatic
(so sparser) and no instances G(N, p) rejected until uncolourable (so denser), and on held-out
prompts a threshold on one counted quantity predicted the label 80-96% of the time (the majority
class: 50%). Now an instance's shape (:meth:`ColoringProblem.draw_shape`) is its edge count M and
the number R of vertices its edges touch, drawn before its label, and both labels are uniform
draws of G(N, M) with R touched vertices, redrawn until the label holds: only the arrangement of
the edges decides. The shape is a cell of the critical window of (N, K): M where a uniform graph
is K-colourable in 15-85% of draws (e.g. 13..16 of 28 pairs for N = 8, K = 3), split by R
(:func:`colouring_cells`, measured once per (N, K) on a fixed seed). After: the classifiers are
within 0.02 of the majority class at every level.

A solving instance is a draw at the same shapes that is colourable (rejection with
:func:`colourable`), the same distribution as a "yes". The defaults and levels grew from
N = 6 (levels 5, 6, 7) to N = 8 (levels 8, 9, 10): a colouring with equal classes is proper more
often than a uniformly drawn one (fewer same-coloured pairs), so the best constant answer beats a
uniform guess by as much as the instances leave it. On small graphs that is a lot: at N = 5, 6,
7 one colouring was right on 10.5%, 7.0%, 3.7% of 400 solving instances against a uniform
guess's 3.0%, 1.1%, 0.6%, beyond what the sample explains; from N = 8 the constant is right on
2% or less, within the sampling slack of the guess's line.
"""
from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations
from math import comb

from ...problem import Knobs
from ..family import LogicProblem
from ..model import BoolModel
from ..witness import format_ints, parse_ints
from .graphs import (check_edges, draw_cell, draw_yes, edge_text, gnm_touching, int_knob, property_cells,
                     property_window)

__all__ = ["ColoringKnobs", "ColoringProblem", "colourable", "colouring_window", "colouring_cells"]


@dataclass(frozen=True)
class ColoringKnobs(Knobs):
    """``n`` vertices, ``k`` colours; ``p`` the edge density, which since issue 43 only tilts the
    edge count within the critical window (:func:`colouring_window`: the counts at which a
    colouring is neither rare nor near certain to exist): M is drawn with the weights G(n, p)
    gives the window's counts, so ``p`` = 0.5 leans to the middle of n = 8, k = 3's window (13..16
    of 28 pairs) and a small ``p`` to its sparse end."""

    n: int = 8
    k: int = 3
    p: float = 0.5

    def validate(self) -> None:
        int_knob("n", self.n, 2, 30)
        int_knob("k", self.k, 2, 8)
        if not 0.0 < float(self.p) < 1.0:
            raise ValueError(f"p must be in (0, 1), got {self.p}")


def _var(v: int, c: int, k: int) -> int:
    return v * k + c + 1


def colourable(n: int, k: int, edges) -> bool:
    """Whether the graph has a proper ``k``-colouring, without a solver: backtracking over the
    vertices from the most joined down (they constrain the most), each taking a colour none of its
    coloured neighbours has, a new colour only one above the highest used so far (colour renamings
    are tried once). The window's and the solving draw's label."""
    adj = [0] * n
    for u, v in edges:
        adj[u] |= 1 << v
        adj[v] |= 1 << u
    order = sorted(range(n), key=lambda v: -adj[v].bit_count())
    colour = [0] * n  # a bitmask of one colour per vertex once coloured
    done = 0  # the coloured vertices

    def place(i: int, used: int) -> bool:
        nonlocal done
        if i == n:
            return True
        v = order[i]
        taken = 0
        rest = adj[v] & done
        while rest:
            bit = rest & -rest
            rest ^= bit
            taken |= colour[bit.bit_length() - 1]
        for c in range(min(k, used + 1)):
            if not taken >> c & 1:
                colour[v] = 1 << c
                done |= 1 << v
                if place(i + 1, max(used, c + 1)):
                    return True
                done &= ~(1 << v)
        return False

    return place(0, 0)


def colouring_window(n: int, k: int) -> tuple[int, ...]:
    """The edge counts M at which G(n, M) is k-colourable in 15-85% of draws (the critical window,
    :func:`.graphs.property_window`); ``ValueError`` where there is none (k >= n: every graph is)."""
    return property_window("graph-coloring", n, k, *_colouring_property(n, k))


def colouring_cells(n: int, k: int) -> dict[tuple[int, int], float]:
    """The shapes (M edges, R vertices an edge touches) a colouring instance is drawn at
    (:func:`.graphs.property_cells`). ``ValueError`` where none is."""
    return property_cells("graph-coloring", n, k, *_colouring_property(n, k))


def _colouring_property(n: int, k: int) -> tuple:
    return lambda edges: colourable(n, k, edges), f"a {k}-colouring", "choose k < n"


class ColoringProblem(LogicProblem):
    """Graph K-Colouring as decision / solving / counting (``SolverLogic-v0(family="graph-coloring")``)."""

    name = "graph-coloring"
    category = "graph"
    Knobs = ColoringKnobs
    levels = ({"n": 8, "k": 3}, {"n": 9, "k": 3}, {"n": 10, "k": 3})
    witness_noun = "a colouring of the vertices with the K colours in which no edge joins two vertices of the same colour"
    count_noun = "such colourings (assignments of a colour to each numbered vertex)"

    def draw_shape(self, knobs, rng):
        """``(M, R)``: M edges touching R vertices, a cell of the critical window (module docstring)."""
        return draw_cell(colouring_cells(knobs.n, knobs.k), comb(knobs.n, 2), float(knobs.p), rng)

    def random_data(self, knobs, rng, shape=None):
        m, r = self.draw_shape(knobs, rng) if shape is None else shape
        return {"n": knobs.n, "k": knobs.k, "edges": gnm_touching(knobs.n, m, r, rng)}

    def planted_data(self, knobs, rng, shape=None):
        """A draw at the shape rejected until k-colourable: a decision's "yes" (no planted
        colouring, whose classes' missing edges a reader could spot). The last draw if none in
        :data:`~.graphs.PLANT_TRIES` (the generator redraws)."""
        return draw_yes(self, knobs, rng, shape)

    def quick_label(self, data):
        return colourable(data["n"], data["k"], data["edges"])

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

    def witness_space(self, data):
        """Every colour for every vertex, which :meth:`random_witness` draws from uniformly."""
        return data["k"] ** data["n"]

    def random_witness(self, data, rng):
        return format_ints(rng.integers(data["k"], size=data["n"]))
