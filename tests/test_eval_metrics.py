"""The evaluation's estimators against hand-computed values and brute-force enumeration."""
import itertools
import math

import pytest

from solvergym.evaluation.metrics import (avg_at_k, maj_at_k, mean_std, pass_at_k, pass_hat_k, standard_error,
                                          vote_key)


@pytest.mark.parametrize("n, c, k, expected", [
    (5, 2, 1, 0.4),                      # c / n
    (5, 2, 2, 1 - 3 / 10),               # 1 - C(3,2)/C(5,2)
    (10, 3, 5, 1 - 21 / 252),            # 1 - C(7,5)/C(10,5)
    (4, 1, 4, 1.0),                      # n = k: one correct sample is always drawn
    (4, 0, 4, 0.0),                      # n = k, none correct
    (8, 0, 3, 0.0),                      # c = 0
    (8, 8, 3, 1.0),                      # c = n
    (200, 1, 1, 1 / 200),
])
def test_pass_at_k_by_hand(n, c, k, expected):
    assert pass_at_k(n, c, k) == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize("n, c, k, expected", [
    (4, 3, 2, 3 / 6),                    # C(3,2)/C(4,2)
    (5, 5, 5, 1.0), (5, 4, 5, 0.0), (5, 0, 1, 0.0), (6, 3, 1, 0.5),
])
def test_pass_hat_k_by_hand(n, c, k, expected):
    assert pass_hat_k(n, c, k) == pytest.approx(expected, abs=1e-12)


def test_estimators_equal_enumerating_every_k_subset():
    for n in range(1, 8):
        for c in range(n + 1):
            samples = [True] * c + [False] * (n - c)
            for k in range(1, n + 1):
                subsets = list(itertools.combinations(samples, k))
                assert pass_at_k(n, c, k) == pytest.approx(sum(any(s) for s in subsets) / len(subsets), abs=1e-12)
                assert pass_hat_k(n, c, k) == pytest.approx(sum(all(s) for s in subsets) / len(subsets), abs=1e-12)
                # avg@k over a random order of the samples is, in expectation over orders, c/n
                orders = set(itertools.permutations(samples))
                mean_avg = sum(avg_at_k(list(o), k) for o in orders) / len(orders)
                assert mean_avg == pytest.approx(c / n, abs=1e-12)


def test_avg_and_maj_by_hand():
    assert avg_at_k([True, False, True, True], 2) == 0.5
    assert avg_at_k([True, False, True, True], 4) == 0.75
    # majority "a" (2 of 4) is wrong although half the samples are right
    assert maj_at_k(["a", "b", "a", "c"], [False, True, False, True], 4) == 0.0
    assert maj_at_k(["a", "b", "b", "c"], [False, True, True, True], 4) == 1.0
    # a tie goes to the answer given first; no answer at all: no vote
    assert maj_at_k(["b", "a"], [True, False], 2) == 1.0 and maj_at_k(["a", "b"], [False, True], 2) == 0.0
    assert maj_at_k([None, None], [False, False], 2) is None
    assert maj_at_k([None, "x"], [False, True], 2) == 1.0
    assert vote_key([1, 0]) == vote_key([1, 0]) != vote_key([0, 1]) and vote_key(None) is None


def test_bad_arguments_are_refused():
    for bad in ((3, 4, 1), (3, -1, 1), (3, 1, 0), (3, 1, 4)):
        with pytest.raises(ValueError):
            pass_at_k(*bad)
        with pytest.raises(ValueError):
            pass_hat_k(*bad)
    with pytest.raises(TypeError):
        pass_at_k(3.0, 1, 1)
    with pytest.raises(ValueError):
        avg_at_k([True], 2)


def test_mean_std_and_standard_error():
    assert mean_std([1.0, 2.0, 3.0]) == (2.0, 1.0)
    assert mean_std([0.25]) == (0.25, 0.0)
    assert standard_error([1.0, 2.0, 3.0]) == pytest.approx(1 / math.sqrt(3))
