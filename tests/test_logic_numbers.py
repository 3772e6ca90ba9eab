"""Subset sum, partition, TSP and BNN robustness (issue 43): what a reader counts is drawn before
the label and only the structure decides it. Here the generators' own promises: the same seed
asked for yes and for no poses the same numbers (TSP and BNN: the same bag of words), the
solver-free computations the shapes are built from agree with the encodings, a guess is uniform
over the witness space it is charged against and the chance line counts its right answers, and
knobs with no balanced decision are a clear error. (The classifiers and the constant answers:
``test_blind_policies.py``; the verifiers and the programs: ``test_logic_suite.py``.)"""
from __future__ import annotations

from collections import Counter
from itertools import combinations, permutations
from math import comb, factorial

import numpy as np
import pytest

from solvergym.envs.logic.family import family_class
from solvergym.envs.logic.families.bnn import _layer, flippable, forward, truth_table
from solvergym.envs.logic.families.partition import partition_density
from solvergym.envs.logic.families.subset_sum import critical_max_value, reachable_sums, subset_density
from solvergym.envs.logic.families.tsp import optimum, tour_cost
from solvergym.envs.logic.model import brute_force_count, solve_count
from solvergym.evaluation.blind import _TOKEN, surface_features

FAMILIES = ("subset-sum", "partition", "tsp", "bnn-robustness")


def _gen(family: str, query: str, seed: int, stratum: float | None = None, **knobs):
    cls = family_class(family)
    problem = cls(query=query)
    k = cls.Knobs.make(**knobs)
    return problem, k, problem.generate(k, np.random.default_rng(seed), stratum=stratum)


def _bag(problem, inst) -> tuple:
    text = problem.prompt(inst)
    return Counter(_TOKEN.findall(text.lower())), surface_features(text)


@pytest.mark.parametrize("family", FAMILIES)
def test_the_shape_is_drawn_before_the_label(family):
    # the same seed asked for "yes" and for "no": the same counted quantities, the other label
    for knobs in family_class(family).knob_levels():
        for seed in range(8):
            (p, _, yes), (_, _, no) = (_gen(family, "decision", seed, stratum=u, **knobs.as_dict()) for u in (0.1, 0.9))
            assert (yes.satisfiable, no.satisfiable) == (True, False)
            a, b = yes.data, no.data
            if family == "subset-sum":  # the values, and T in one window about half their total
                half, sd = sum(a["values"]) / 2, np.sqrt(sum(v * v for v in a["values"])) / 2
                assert a["values"] == b["values"] and all(abs(t - half) <= sd / 4 + 1 for t in (a["target"], b["target"]))
            elif family == "partition":  # all values but the last one, which has the total's parity
                assert sum((Counter(a["values"]) - Counter(b["values"])).values()) <= 1
                assert sum(a["values"]) % 2 == sum(b["values"]) % 2 == 0
            else:  # every number and word: TSP's weights and T, BNN's network and its seed's ones
                assert _bag(p, yes) == _bag(p, no), seed
            if family == "tsp":
                assert a["threshold"] == b["threshold"] and sorted(sum(a["weights"], [])) == sorted(sum(b["weights"], []))
            if family == "bnn-robustness":
                assert a["layers"] == b["layers"] and a["y_seed"] == b["y_seed"] and sum(a["seed"]) == sum(b["seed"])


def test_critical_values_and_knobs_without_a_balanced_decision():
    sub, part = family_class("subset-sum").Knobs, family_class("partition").Knobs
    # None is the value at which a target near half the total is reached half the time
    assert [critical_max_value(n) for n in (6, 8, 10)] == [52, 180, 645]
    assert [critical_max_value(n, partition_density) for n in (6, 8, 10)] == [28, 96, 340]
    assert sub.make().max_value is None and part.make(n=10).max_value is None
    assert 0.6 < subset_density(8, 180) < 0.75 and 0.6 < partition_density(10, 340) < 0.75
    # App. B.1's old 30: at n = 8 nearly every middle target is reached, at n = 10 every draw splits
    with pytest.raises(ValueError, match=r"subset-sum with n=8, max_value=30: .*no balanced window.*\[89, 357\]"):
        sub.make(max_value=30)
    with pytest.raises(ValueError, match=r"partition with n=10, max_value=30: .*has one.*\[168, 674\]"):
        part.make(n=10, max_value=30)
    with pytest.raises(ValueError, match="has none"):
        part.make(n=6, max_value=400)
    with pytest.raises(ValueError, match=r"n must be an int in \[3, 18\]"):
        sub.make(n=22)
    assert sub.make(n=8, max_value=100).max_value == 100
    with pytest.raises(RuntimeError, match="raise max_weight"):  # every placement of weights all 1 costs n
        _gen("tsp", "decision", 0, n=4, max_weight=1)
    with pytest.raises(RuntimeError, match="within eps = 6"):  # the ball is every input: all flip
        _gen("bnn-robustness", "decision", 0, n_in=6, eps=6)


def test_subset_sum_and_partition_shapes_agree_with_the_encoding():
    for family in ("subset-sum", "partition"):
        cls = family_class(family)
        problem = cls(query="decision")
        rng = np.random.default_rng(5)
        for knobs in cls.knob_levels():
            shape = problem.draw_shape(knobs, rng)
            if family == "subset-sum":  # the window's reached targets are those a subset reaches
                values = shape["values"]
                sums = {sum(c) for k in range(1, len(values) + 1) for c in combinations(values, k)}
                assert shape["reached"] == [t for t in range(shape["lo"], shape["hi"] + 1) if t in sums]
                assert 0.2 <= len(shape["reached"]) / (shape["hi"] - shape["lo"] + 1) <= 0.8
            else:
                assert 0.2 <= len(shape["splits"]) / len(shape["lasts"]) <= 0.8
            for _ in range(6):
                data = problem.random_data(knobs, rng, shape)
                planted = problem.planted_data(knobs, rng, shape)
                assert solve_count(cls.encode(planted), limit=1)[0] == 1
                if family == "partition":
                    last = (Counter(data["values"]) - Counter(shape["rest"])).most_common(1)[0][0]
                    assert (solve_count(cls.encode(data), limit=1)[0] == 1) == (last in shape["splits"])
                else:
                    assert (solve_count(cls.encode(data), limit=1)[0] == 1) == (data["target"] in shape["reached"])
    bits = reachable_sums([3, 5, 9])
    assert [s for s in range(20) if bits >> s & 1] == [0, 3, 5, 8, 9, 12, 14, 17]


@pytest.mark.parametrize("n", [3, 4, 5, 6, 7])
def test_tsp_counts_every_tour_once_and_reads_it_back(n):
    problem = family_class("tsp")(query="counting")
    knobs = problem.Knobs.make(n=n)
    rng = np.random.default_rng(n)
    for _ in range(4):
        data = problem.random_data(knobs, rng, problem.draw_shape(knobs, rng))
        data["threshold"] += int(rng.integers(0, 4))
        w = data["weights"]
        tours = [[0, *p] for p in permutations(range(1, n))]
        within = {frozenset(frozenset((t[i], t[(i + 1) % n])) for i in range(n)) for t in tours
                  if tour_cost(w, t) <= data["threshold"]}
        model = problem.encode(data)
        assert solve_count(model)[0] == len(within)  # a tour and its reverse are one tour
        if len(model.names) <= 15:
            assert brute_force_count(model) == len(within)
        assert optimum(w) == min(tour_cost(w, t) for t in tours)
        for t in tours:  # each way round reads back as the tour from 0 towards its lower neighbour
            back = problem.witness_from_true(data, problem.true_from_witness(data, t))
            assert back == (t if t[1] < t[-1] else [0, *t[:0:-1]])


def test_bnn_tables_agree_with_the_forward_pass():
    rng = np.random.default_rng(2)
    for n, eps in ((5, 1), (6, 2), (7, 3)):
        for _ in range(3):
            layers = [_layer(3, n, 3, rng), _layer(1, 3, 3, rng)]
            table = truth_table(layers, n)
            flips = flippable(table, n, eps)
            for code in range(1 << n):
                x = [(code >> i) & 1 for i in range(n)]
                assert table[code] == forward(layers, x)[-1][0]
                near = [c for c in range(1 << n) if bin(c ^ code).count("1") <= eps]
                assert flips[code] == any(table[c] != table[code] for c in near)


@pytest.mark.parametrize("family,knobs,space", [
    ("subset-sum", {"n": 6}, comb(6, 3)), ("subset-sum", {"n": 7}, 2 * comb(7, 3)), ("partition", {"n": 6}, comb(6, 3)),
    ("tsp", {"n": 5}, factorial(4) // 2), ("tsp", {"n": 3}, 1), ("bnn-robustness", {"n_in": 6, "eps": 1}, 2 ** 6)])
def test_a_guess_is_uniform_over_the_witness_space(family, knobs, space):
    for seed in range(3):
        problem, _, inst = _gen(family, "solving", seed, **knobs)
        assert problem.witness_space(inst.data) == space
        rng = np.random.default_rng(seed)
        drawn = Counter(problem.random_witness(inst.data, rng) for _ in range(200 * space))
        assert len(drawn) == space  # every answer of the space, and nothing else
        # each written as the generator writes a witness (so the constant baseline sees it as one)
        assert all(problem.format_witness(inst.data, problem.parse_witness(inst.data, w)[0]) == w for w in drawn)
        assert max(drawn.values()) < 1.3 * 200 and min(drawn.values()) > 0.7 * 200, drawn
        # the chance line counts the right answers among them
        right = sum(problem.check_witness(inst.data, problem.parse_witness(inst.data, w)[0]) is None for w in drawn)
        assert problem.chance_reward(inst) == pytest.approx(0.1 + right / space * 1.0 + (1 - right / space) * -1.1)
