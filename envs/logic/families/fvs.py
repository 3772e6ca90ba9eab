"""Directed Feedback Vertex Set (App. B.1 "Feedback Node Set", graph): remove at most K vertices of
a directed graph so that what remains has no directed cycle. Hyper-parameters: vertices N,
removal budget K, the directed edges (J pairs of vertices joined, their number drawn with density
p within the critical window; a share ``mutual`` of them both ways: were most joined pairs
two-way, K+1 disjoint two-way pairs would answer most "no"s at a glance, without a search).

The encoding says "at most K removed" and, for every chordless directed cycle, "one of its
vertices is removed": every cycle's vertex set holds a chordless one (a chord and the cycle's
path around it close a shorter cycle), so hitting those hits all. Cycles are enumerated by depth
first search, bounded (:data:`MAX_CYCLES`). Every generated graph has a cycle, so a removal set is
never empty; the verifier checks acyclicity by a topological sort, without a solver.

Issue 43: yes instances were planted (edges run forward in a random order of the kept vertices,
a cycle through a removed one) and no instances drawn at density p, and on held-out prompts a
threshold on one counted quantity predicted the label 70% of the time (the majority class: 50%).
Now an instance's shape (:meth:`FeedbackVertexSetProblem.draw_shape`) is its number J of joined
pairs (of which round(``mutual`` J) two-way, so its edge count is fixed too) and the number R of
vertices they touch, drawn before its label, and both labels are uniform draws at that shape
(the pairs, which of them are two-way, the direction of the others), redrawn while acyclic and
then until the label holds: only the arrangement decides. (J, R) is drawn within the critical
window of (N, K, mutual): the counts J at which a removal of K vertices suffices in between 15%
and 85% of the cyclic draws (:func:`fvs_cells`, measured once per knobs on a fixed seed: J in
20..28 of 28 pairs for the defaults). After: the classifiers are within 0.03 of the majority
class on the test's seeds (0.01 on three other ranges of 800, -0.01 on 3000: sampling noise).

A solving instance is a draw at the shape that K removals make acyclic (rejection with
:func:`within_budget`), the same distribution as a decision's "yes". The uniform guess
(:meth:`FeedbackVertexSetProblem.random_witness`) removes K vertices, uniformly among the sets of
K: removing one more never brings a cycle back, so those are the answers a guess need consider
(it used to draw a size in 1..K first, uniform over no set of answers).
"""
from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations
from math import comb

import numpy as np

from ...problem import Knobs
from ...sat.verify import SATRL_FORMAT
from ..family import LogicProblem
from ..model import BoolModel
from ..witness import format_ints, parse_ints
from .graphs import (WINDOW_DRAWS, cell_table, check_edges, critical_window, draw_cell, edge_text, gnm_edges,
                     draw_yes, gnm_touching, int_knob, label_cells, shape_rng)

__all__ = ["FVSKnobs", "FeedbackVertexSetProblem", "chordless_cycles", "acyclic", "within_budget", "fvs_window",
           "fvs_cells"]

#: draws at a shape before one with a cycle is given up on (a shape of the window has one nearly
#: always; an acyclic graph needs no removal, so it is no question)
_CYCLIC_TRIES = 1000
#: (n, k, mutual) -> the critical window's numbers of joined pairs
_WINDOWS: dict[tuple[int, int, float], tuple[int, ...]] = {}
#: (n, k, mutual) -> the critical window's cells (joined pairs, touched vertices) and their weights
_CELLS: dict[tuple[int, int, float], dict[tuple[int, int], float]] = {}

#: the most chordless cycles an instance may have (each is one clause)
MAX_CYCLES = 2000


@dataclass(frozen=True)
class FVSKnobs(Knobs):
    """``n`` vertices, removal budget ``k``; ``p`` the density of joined pairs, which since issue 43
    only tilts their number J within the critical window (:func:`fvs_window`: the numbers at
    which K removals suffice neither rarely nor nearly always): J is drawn with the weights
    G(n, p) gives the window's numbers. ``mutual``: the share of joined pairs joined both ways
    (round(mutual * J) of them, chosen at random; the others one way, at random)."""

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


def within_budget(n: int, k: int, edges) -> bool:
    """Whether removing at most ``k`` vertices leaves no directed cycle, without a solver: peel off
    the vertices with no successor left until only the vertices on cycles remain (the core); if
    any do, walk successors within the core to a cycle, one of whose vertices every answer
    removes, and try each with one removal fewer (a search tree of depth ``k``). The window's and
    the solving draw's label."""
    succ = [0] * n
    for u, v in edges:
        succ[u] |= 1 << v

    def core(keep: int) -> int:
        while True:
            sinks, rest = 0, keep
            while rest:
                bit = rest & -rest
                rest ^= bit
                if succ[bit.bit_length() - 1] & keep == 0:
                    sinks |= bit
            if not sinks:
                return keep
            keep &= ~sinks

    def cycle(keep: int) -> list[int]:
        # in a core every vertex has a successor in it, so a walk along them must repeat a vertex
        v, at, path = (keep & -keep).bit_length() - 1, {}, []
        while v not in at:
            at[v] = len(path)
            path.append(v)
            nxt = succ[v] & keep
            v = (nxt & -nxt).bit_length() - 1
        return path[at[v]:]

    def solvable(keep: int, budget: int) -> bool:
        keep = core(keep)
        if not keep:
            return True
        return budget > 0 and any(solvable(keep & ~(1 << v), budget - 1) for v in cycle(keep))

    return solvable((1 << n) - 1, k)


def _orient(n: int, pairs, mutual: float, rng: np.random.Generator) -> list[list[int]]:
    """Directed edges over the joined ``pairs``: round(``mutual`` * len) of them, at random, both
    ways; each other one way, at random. Sorted."""
    both = set(rng.permutation(len(pairs))[:int(mutual * len(pairs) + 0.5)].tolist())
    flips = rng.random(len(pairs)) < 0.5
    edges = []
    for i, (u, v) in enumerate(pairs):
        edges += [[u, v], [v, u]] if i in both else [[v, u] if flips[i] else [u, v]]
    return sorted(edges)


def _cyclic_label(n: int, k: int, pairs, mutual: float, rng: np.random.Generator):
    """The label (:func:`within_budget`) of ``pairs`` oriented at random, None where acyclic (a
    shape's draws are redrawn while acyclic, so those are not among its labels)."""
    edges = _orient(n, pairs, mutual, rng)
    return None if within_budget(n, 0, edges) else within_budget(n, k, edges)


def fvs_window(n: int, k: int, mutual: float) -> tuple[int, ...]:
    """The numbers J of joined pairs at which a cyclic draw needs no more than ``k`` removals in
    15-85% of its cyclic draws (the critical window, :func:`.graphs.critical_window`; a shape
    whose draws are mostly acyclic counts as a "yes": its graphs need no removal). ``ValueError``
    where there is none."""
    key = (n, k, float(mutual))
    if key not in _WINDOWS:
        def share(j: int) -> float:
            rng = shape_rng((n, k, j))
            labels = [_cyclic_label(n, k, gnm_edges(n, j, rng), mutual, rng) for _ in range(WINDOW_DRAWS)]
            cyclic = [x for x in labels if x is not None]
            return sum(cyclic) / len(cyclic) if len(cyclic) >= len(labels) / 4 else 1.0

        _WINDOWS[key] = critical_window(share, 1, comb(n, 2))
    if not _WINDOWS[key]:
        raise ValueError(f"feedback-vertex-set: no number of joined pairs on n={n} vertices (mutual={mutual}) makes "
                         f"{k} removals suffice neither rarely nor nearly always, so a decision's answer would show in "
                         f"its number of edges; choose another k or mutual")
    return _WINDOWS[key]


def fvs_cells(n: int, k: int, mutual: float) -> dict[tuple[int, int], float]:
    """The shapes (J joined pairs, R vertices they touch) an instance is drawn at: the cells of
    the window's numbers (:func:`fvs_window`) where ``k`` removals suffice on 15-85% of the
    cyclic draws, each with its weight among its number's draws. ``ValueError`` where none is."""
    key = (n, k, float(mutual))
    if key not in _CELLS:
        table = cell_table(n, fvs_window(n, k, mutual), lambda pairs, rng: _cyclic_label(n, k, pairs, mutual, rng),
                           key=(n, k))
        labels = {c: [x for x in v if x is not None] for c, v in table.items()}
        weights = label_cells({c: v for c, v in labels.items() if len(v) >= len(table[c]) / 4})
        _CELLS[key] = weights
    if not _CELLS[key]:
        raise ValueError(f"feedback-vertex-set: no shape on n={n} vertices (mutual={mutual}) makes {k} removals "
                         f"suffice neither rarely nor nearly always")
    return _CELLS[key]


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

    def draw_shape(self, knobs, rng):
        """``(J, R)``: J joined pairs touching R vertices, a cell of the critical window (module
        docstring)."""
        return draw_cell(fvs_cells(knobs.n, knobs.k, float(knobs.mutual)), comb(knobs.n, 2), float(knobs.p), rng)

    def random_data(self, knobs, rng, shape=None):
        j, r = self.draw_shape(knobs, rng) if shape is None else shape
        for _ in range(_CYCLIC_TRIES):  # an acyclic graph is no question: it needs no removal
            edges = _orient(knobs.n, gnm_touching(knobs.n, j, r, rng), float(knobs.mutual), rng)
            if not acyclic(knobs.n, edges, set()):
                return {"n": knobs.n, "k": knobs.k, "edges": edges}
        raise RuntimeError(f"feedback-vertex-set: {j} joined pairs on {r} of {knobs.n} vertices hardly ever close a "
                           f"cycle; such a shape is outside any window")

    def planted_data(self, knobs, rng, shape=None):
        """A draw at the shape rejected until ``k`` removals make it acyclic: a decision's "yes"
        (no planted order, whose forward edges a reader could spot). The last draw if none in
        :data:`~.graphs.PLANT_TRIES` (the generator redraws)."""
        return draw_yes(self, knobs, rng, shape)

    def quick_label(self, data):
        return within_budget(data["n"], data["k"], data["edges"])

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

    def witness_space(self, data):
        """The sets of exactly K vertices, which :meth:`random_witness` draws from uniformly: removing
        a vertex more never brings a cycle back, so every answer of fewer vertices is inside a
        right one of K, and a guess loses nothing by spending the whole budget."""
        return comb(data["n"], data["k"])

    def random_witness(self, data, rng: np.random.Generator):
        """K vertices, uniformly among the sets of K (:meth:`witness_space`)."""
        return format_ints(sorted(int(v) for v in rng.choice(data["n"], size=data["k"], replace=False)))

    def chance_reward(self, inst):
        """The base class's line, but for the solving query a uniform guess among the sets of K
        vertices (:meth:`witness_space`) is right on the share of them that leave no cycle: the
        right answers of fewer vertices are not among its draws, so they are not counted (the base
        class counts every right answer, which here would credit the guess with them)."""
        if self.query != "solving":
            return super().chance_reward(inst)
        n, k, edges = inst.data["n"], inst.data["k"], inst.data["edges"]
        right = sum(acyclic(n, edges, set(removed)) for removed in combinations(range(n), k))
        p = right / comb(n, k)
        return SATRL_FORMAT + p * 1.0 + (1.0 - p) * self._correct(False)
