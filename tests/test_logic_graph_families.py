"""The graph families' generators (clique, graph-coloring, max-cut, feedback-vertex-set; issue 43):
an instance's shape (edge count, touched vertices, max-cut's threshold) is drawn before its
decision label, so a yes and a no drawn from one seed have the same shape; the shapes are cells of
a critical window, where a draw is a yes often and a no often; the checks the generators draw by
(written without a solver) agree with the solver's truth; a uniform guess draws from exactly
``witness_space`` answers; knobs without a window are refused with a reason. The blind-baseline
measurements themselves are ``tests/test_blind_policies.py``'s."""
from __future__ import annotations

import itertools
from collections import Counter

import numpy as np
import pytest

from solvergym.envs.logic.family import family_class
from solvergym.envs.logic.families.clique import clique_cells, has_clique
from solvergym.envs.logic.families.coloring import colourable, colouring_cells
from solvergym.envs.logic.families.fvs import _orient, acyclic, fvs_cells, within_budget
from solvergym.envs.logic.families.graphs import (WINDOW_FLOOR, critical_window, gnm_edges, gnm_touching, label_cells,
                                                  touched)
from solvergym.envs.logic.families.maxcut import _cut_cells, max_cut, maxcut_cells
from solvergym.envs.logic.model import solve_count

GRAPHS = ("clique", "graph-coloring", "max-cut", "feedback-vertex-set")


def _shape(family: str, data: dict) -> tuple:
    """What a reader counts in an instance of ``family``: its edges (joined pairs for the directed
    family), the vertices they touch, and max-cut's T."""
    if family == "feedback-vertex-set":
        pairs = {tuple(sorted(e)) for e in data["edges"]}
        return len(pairs), touched(pairs), len(data["edges"])
    return len(data["edges"]), touched(data["edges"]), data.get("t"), data.get("k")


@pytest.mark.parametrize("family", GRAPHS)
def test_a_yes_and_a_no_from_one_seed_have_one_shape(family):
    cls = family_class(family)
    for knobs in cls.knob_levels():
        yes, no = cls(query="decision", sat_ratio=1.0), cls(query="decision", sat_ratio=0.0)
        for seed in range(6):
            a = yes.generate(knobs, np.random.default_rng(seed))
            b = no.generate(knobs, np.random.default_rng(seed))
            assert (a.satisfiable, b.satisfiable) == (True, False)
            assert _shape(family, a.data) == _shape(family, b.data), (knobs, seed)
            assert a.data["edges"] != b.data["edges"]


def test_the_shapes_are_cells_of_the_window():
    # clique: a shape's (edges, touched) is a cell where both answers are common
    cells = clique_cells(8, 4)
    clique = family_class("clique")
    inst = clique(query="decision").generate(clique.Knobs.make(), np.random.default_rng(0))
    assert (len(inst.data["edges"]), touched(inst.data["edges"])) in cells
    # the window of 8 vertices and 4-cliques: some thirteen to sixteen of the 28 pairs
    assert {m for m, _ in cells} <= set(range(12, 18)) and len({m for m, _ in cells}) >= 3
    maxcut = family_class("max-cut")
    mc = maxcut(query="decision").generate(maxcut.Knobs.make(), np.random.default_rng(0))
    m = len(mc.data["edges"])
    assert (touched(mc.data["edges"]), mc.data["t"]) in maxcut_cells(mc.data["n"], m)
    assert m // 2 < mc.data["t"] <= m  # above what every graph's cut reaches, within the edges
    assert colouring_cells(8, 3) and fvs_cells(8, 2, 0.05)


def test_a_critical_window_is_where_a_monotone_share_crosses_one_half():
    share = {v: min(1.0, max(0.0, (v - 10) / 8)) for v in range(0, 31)}  # 0 until 10, 1 from 18
    window = critical_window(share.__getitem__, 0, 30)
    assert window == tuple(v for v in range(31) if WINDOW_FLOOR <= share[v] <= 1 - WINDOW_FLOOR)
    assert critical_window(lambda v: 1.0 - share[v], 0, 30) == window  # falling shares too
    assert critical_window(lambda v: float(v >= 12), 0, 30) == ()  # a step: no value has both answers
    assert critical_window(lambda v: 0.1 if v == 12 else float(v > 12), 0, 30) == (12,)  # the best, rare but not too
    table = {(5, 4): [True] * 10, (5, 5): [True] * 6 + [False] * 4, (6, 5): [False] * 9 + [True]}
    assert label_cells(table) == {(5, 5): 0.5}  # half of its edge count's draws; (6, 5) has a 10% no only


def test_gnm_touching_draws_uniformly_among_the_edge_sets_of_that_shape():
    rng = np.random.default_rng(1)
    # 3 edges touching all 4 of 4 vertices: every 3 of K4's 6 edges but the 4 triangles (16 sets)
    seen = Counter(tuple(map(tuple, gnm_touching(4, 3, 4, rng))) for _ in range(3200))
    assert len(seen) == 16 and max(seen.values()) < 1.4 * 200 and min(seen.values()) > 0.6 * 200
    for m, r in ((5, 6), (9, 7), (3, 6)):
        edges = gnm_touching(8, m, r, rng)
        assert len(edges) == m == len({tuple(e) for e in edges}) and touched(edges) == r
        assert all(0 <= u < v < 8 for u, v in edges)
    with pytest.raises(ValueError, match="cannot touch"):
        gnm_touching(8, 2, 6, rng)


def _brute(n: int, holds) -> bool:
    return any(holds(bits) for bits in itertools.product((0, 1), repeat=n))


def test_the_generators_checks_agree_with_brute_force_and_the_solver():
    rng = np.random.default_rng(2)
    for _ in range(300):
        n = int(rng.integers(3, 8))
        edges = gnm_edges(n, int(rng.integers(0, n * (n - 1) // 2 + 1)), rng)
        k = int(rng.integers(2, n + 1))
        adjacent = {tuple(e) for e in edges}
        assert has_clique(n, k, edges) == any(all(p in adjacent for p in itertools.combinations(c, 2))
                                              for c in itertools.combinations(range(n), k))
        c = int(rng.integers(1, 4))
        assert colourable(n, c, edges) == any(all(col[u] != col[v] for u, v in edges)
                                              for col in itertools.product(range(c), repeat=n))
        best = max((sum(s[u] != s[v] for u, v in edges) for s in itertools.product((0, 1), repeat=n)), default=0)
        assert max_cut(n, edges) == best
        directed = _orient(n, edges, float(rng.choice([0.0, 0.3])), rng)
        b = int(rng.integers(0, n))
        assert within_budget(n, b, directed) == any(acyclic(n, directed, set(r)) for size in range(b + 1)
                                                    for r in itertools.combinations(range(n), size))
    # and with the solver's truth on generated instances, whichever label they were drawn for
    for family, check in (("clique", lambda d: has_clique(d["n"], d["k"], d["edges"])),
                          ("graph-coloring", lambda d: colourable(d["n"], d["k"], d["edges"])),
                          ("max-cut", lambda d: max_cut(d["n"], d["edges"]) >= d["t"]),
                          ("feedback-vertex-set", lambda d: within_budget(d["n"], d["k"], d["edges"]))):
        p = family_class(family)(query="decision")
        for seed in range(8):
            inst = p.generate(p.Knobs.make(), np.random.default_rng(seed))
            assert check(inst.data) == inst.satisfiable == (solve_count(p.encode(inst.data), limit=1)[0] > 0)


def test_the_batched_maximum_cuts_are_the_enumerated_ones():
    from solvergym.envs.logic.families.graphs import CELL_DRAWS, shape_rng

    n, m = 7, 10
    pairs = np.array(list(itertools.combinations(range(n), 2)))
    chosen = np.argsort(shape_rng((n, m)).random((CELL_DRAWS, len(pairs))), axis=1)[:, :m]  # _cut_cells' draws
    direct: dict[int, list[int]] = {}
    for c in chosen:
        direct.setdefault(touched(pairs[c].tolist()), []).append(max_cut(n, pairs[c].tolist()))
    batched = _cut_cells(n, m)
    assert batched and all(sorted(batched[r].tolist()) == sorted(direct[r]) for r in batched)


@pytest.mark.parametrize("family,data,space", [
    ("clique", {"n": 6, "k": 3, "edges": [[0, 1]]}, 20),
    ("graph-coloring", {"n": 4, "k": 2, "edges": [[0, 1]]}, 16),
    ("max-cut", {"n": 4, "t": 1, "edges": [[0, 1]]}, 16),
    ("feedback-vertex-set", {"n": 6, "k": 2, "edges": [[0, 1], [1, 0]]}, 15),
])
def test_a_uniform_guess_draws_from_exactly_witness_space_answers(family, data, space):
    p = family_class(family)(query="solving")
    assert p.witness_space(data) == space
    rng = np.random.default_rng(3)
    drawn = Counter(p.random_witness(data, rng) for _ in range(100 * space))
    assert len(drawn) == space  # every answer of the space, and nothing else
    assert max(drawn.values()) < 1.4 * 100 and min(drawn.values()) > 0.6 * 100
    assert all(p.parse_witness(data, text)[0] is not None for text in drawn)


def test_the_feedback_guess_is_right_on_its_share_of_the_budget_sized_sets():
    p = family_class("feedback-vertex-set")(query="solving")
    inst = p.generate(p.Knobs.make(), np.random.default_rng(4))
    n, k = inst.data["n"], inst.data["k"]
    right = [c for c in itertools.combinations(range(n), k) if p.check_witness(inst.data, list(c)) is None]
    q = len(right) / len(list(itertools.combinations(range(n), k)))
    assert right and p.chance_reward(inst) == pytest.approx(0.1 + q - (1 - q) * (1 + p.eps))


@pytest.mark.parametrize("family,knobs,why", [
    ("clique", {"n": 8, "k": 2}, "no edge count"),
    ("graph-coloring", {"n": 4, "k": 4}, "no edge count"),
    ("max-cut", {"n": 3}, "no edge count drawn in 200 tries has a threshold"),
    ("feedback-vertex-set", {"n": 5, "k": 4}, "no number of joined pairs"),
])
def test_knobs_without_a_window_are_refused_with_the_reason(family, knobs, why):
    cls = family_class(family)
    with pytest.raises(ValueError, match=why):
        cls(query="decision").generate(cls.Knobs.make(**knobs), np.random.default_rng(0))


@pytest.mark.parametrize("family", GRAPHS)
def test_every_level_counts_three_or_more_bins(family):
    # a count common to nearly every instance would pay a constant: each level's natural counts
    # spread over at least three bins, so a constant count is right on a third of them at most
    cls = family_class(family)
    for knobs in cls.knob_levels():
        assert len(cls(query="counting").count_support(knobs)) >= 3, knobs
