"""Set cover, set packing and NFA path (issue 43): what a reader counts is drawn before the label,
from the knobs' critical window, and only the structure decides it. Here the generators' own
promises: both sides' counts of a set family are even, an automaton names every state and has
no waiting loop, the shape does not move with the label, the solver-free checks agree with the
encoding, a guess is uniform over the witness space it is charged against, and knobs without a
window are a clear error. (The classifiers and the constant answers: ``test_blind_policies.py``;
the verifiers and the programs: ``test_logic_suite.py``.)"""
from __future__ import annotations

from collections import Counter
from math import comb

import numpy as np
import pytest

from solvergym.envs.logic.family import family_class
from solvergym.envs.logic.families.set_cover import even_sizes, sets_of_sizes
from solvergym.envs.logic.model import brute_force_count, solve_count

SETS = ("set-cover", "set-packing")


def _gen(family: str, query: str, seed: int, stratum: float | None = None, **knobs):
    cls = family_class(family)
    problem = cls(query=query)
    k = cls.Knobs.make(**knobs)
    return problem, k, problem.generate(k, np.random.default_rng(seed), stratum=stratum)


@pytest.mark.parametrize("family", SETS)
def test_a_set_family_has_even_counts_on_both_sides_at_a_total_in_its_window(family):
    for seed in range(40):
        problem, knobs, inst = _gen(family, "decision", seed)
        sets = inst.data["sets"]
        sizes = [len(s) for s in sets]
        held = Counter(e for s in sets for e in s)
        assert sum(sizes) in problem.window(knobs)
        assert max(sizes) - min(sizes) <= 1, sizes
        assert set(held) == set(range(knobs.u)) and max(held.values()) - min(held.values()) <= 1, held


@pytest.mark.parametrize("u,sizes", [(10, (4, 3, 4, 3, 3, 4, 3, 3)), (8, (5, 5, 4, 5)), (10, (9, 9, 10, 9, 9, 9, 9, 9)),
                                     (30, (2,) * 15), (6, (1, 1, 1, 1, 1, 1))])
def test_sets_of_sizes_meets_both_counts_exactly(u, sizes):
    rng = np.random.default_rng(3)
    for _ in range(30):
        sets = sets_of_sizes(u, sizes, rng)
        assert [len(s) for s in sets] == list(sizes)
        held = Counter(e for s in sets for e in s)
        assert set(held) == set(range(u)) and sorted(held.values()) == sorted(even_sizes(sum(sizes), u))
    with pytest.raises(ValueError, match="cannot hold"):
        sets_of_sizes(10, (3, 3), rng)  # 6 places for 10 elements


def test_sets_of_sizes_treats_every_set_and_element_alike():
    # symmetric in the set numbers and the elements: each (set, element) pair equally often
    rng = np.random.default_rng(0)
    pairs = Counter((i, e) for _ in range(3000) for i, s in enumerate(sets_of_sizes(5, (2, 2, 2), rng)) for e in s)
    share = np.array([pairs[i, e] for i in range(3) for e in range(5)]) / 3000
    assert np.allclose(share, 2 / 5, atol=0.04), share


@pytest.mark.parametrize("family,query", [(f, q) for f in (*SETS, "nfa-path") for q in ("decision", "solving")])
def test_the_shape_is_drawn_before_the_label(family, query):
    # the same seed asked for "yes" and for "no" poses the same counted quantities
    count = (lambda d: sum(len(s) for s in d["sets"])) if family in SETS else (lambda d: len(d["transitions"]))
    for seed in range(12):
        shapes = {count(_gen(family, query, seed, stratum=u)[2].data) for u in (0.1, 0.9)}
        if query == "decision":
            assert len(shapes) == 1, (seed, shapes)
        labels = {_gen(family, query, seed, stratum=u)[2].satisfiable for u in (0.1, 0.9)}
        assert labels == ({True, False} if query == "decision" else {True})


@pytest.mark.parametrize("knobs", [{}, {"states": 5, "length": 4}, {"states": 5, "alphabet": 3, "length": 5},
                                   {"states": 2, "alphabet": 2, "length": 3}, {"states": 6, "accepting": 2}])
def test_an_automaton_names_every_state_and_has_no_waiting_loop(knobs):
    for seed in range(30):
        problem, k, inst = _gen("nfa-path", "decision", seed, **knobs)
        d = inst.data
        start, accepts, moves = d["start"], set(d["accepts"]), [tuple(t) for t in d["transitions"]]
        assert len(moves) in problem.window(k) and len(set(moves)) == len(moves)
        assert start not in accepts and len(accepts) == k.accepting
        assert any(q == start for q, _, _ in moves) and any(r in accepts for _, _, r in moves)
        assert {q for q, _, _ in moves} | {r for _, _, r in moves} | {start} | accepts == set(range(k.states))
        assert not any(q == r and (q == start or q in accepts) for q, _, r in moves), moves


def test_has_run_agrees_with_the_encoding():
    cls = family_class("nfa-path")
    problem = cls()
    rng = np.random.default_rng(7)
    for knobs in ({}, {"states": 3, "alphabet": 1, "length": 2}, {"states": 5, "alphabet": 3, "length": 5},
                  {"states": 2, "alphabet": 2, "length": 3}):
        k = cls.Knobs.make(**knobs)
        seen = set()
        for _ in range(60):
            data = problem.random_data(k, rng)
            model = cls.encode(data)
            sat = problem.has_run(data)
            assert sat == (solve_count(model, limit=1)[0] > 0), data
            if len(model.names) <= 14:
                assert sat == (brute_force_count(model) > 0)
            seen.add(sat)
        assert seen == {True, False}, knobs  # the window's draws have both labels


@pytest.mark.parametrize("family", (*SETS, "nfa-path"))
def test_a_guess_is_uniform_over_the_witness_space(family):
    problem, knobs, inst = _gen(family, "solving", 0, **({"m": 5, "k": 2, "u": 6} if family in SETS else
                                                         {"states": 3, "alphabet": 1, "length": 2}))
    space = problem.witness_space(inst.data)
    assert space == (comb(5, 2) if family in SETS else 3 ** 3 * 1 ** 2)
    rng = np.random.default_rng(1)
    drawn = Counter(problem.random_witness(inst.data, rng) for _ in range(200 * space))
    assert len(drawn) == space  # every answer of the space, and nothing else
    assert all(problem.parse_witness(inst.data, w)[0] is not None for w in drawn)
    assert max(drawn.values()) < 1.3 * 200 and min(drawn.values()) > 0.7 * 200, drawn
    # the chance line counts the right answers among them
    right = sum(problem.check_witness(inst.data, problem.parse_witness(inst.data, w)[0]) is None for w in drawn)
    assert problem.chance_reward(inst) == pytest.approx(0.1 + right / space * 1.0 + (1 - right / space) * -1.1)


@pytest.mark.parametrize("family,knobs,match", [
    ("nfa-path", {"states": 2, "alphabet": 1, "length": 8}, "no number of transitions"),
    ("set-cover", {"u": 2, "m": 3, "k": 2}, "no total of set sizes"),
    ("set-packing", {"u": 3, "m": 30, "k": 2}, "no total of set sizes"),
])
def test_knobs_without_a_critical_window_are_a_clear_error(family, knobs, match):
    with pytest.raises(ValueError, match=match):
        _gen(family, "decision", 0, **knobs)


@pytest.mark.parametrize("family,knob", [("set-cover", {"q": 0.3}), ("set-packing", {"q": 0.35}),
                                         ("nfa-path", {"p": 0.15}), ("nfa-path", {"states": 4, "accepting": 4})])
def test_a_density_is_no_knob_and_the_start_is_not_accepting(family, knob):
    with pytest.raises(ValueError):
        family_class(family).Knobs.make(**knob)
