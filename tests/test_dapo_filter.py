"""DAPO's dynamic sampling filters on correctness, as eq. 11 says (issue 25, item 1).

0 < |{o_i : is_equivalent(a, o_i)}| < G: a group is kept when some but not all of its answers are
right. Filtering on the shaped reward instead keeps an all-wrong group whose lengths differ (the
overlong penalty makes its rewards differ) and trains it on a pure length signal.
"""
from __future__ import annotations

import pytest
import torch

from solvergym.algorithms.config import make_config
from solvergym.algorithms.dapo import filter_groups, filter_value, group_verdict, overlong_penalty
from solvergym.algorithms.rollout import Episode


def _episode(correct: bool, length: int) -> Episode:
    """One finished episode of ``length`` policy tokens whose env reward is SAT-RL's 1 / 0, with
    DAPO's soft overlong punishment (L_max 8, L_cache 4) added as the trainer adds it."""
    env_reward = 1.0 if correct else 0.0
    pen = overlong_penalty(torch.tensor([length]), max_len=8, cache_len=4).item()
    return Episode(group=0, token_ids=[1] * length, loss_mask=[1] * length, logprobs=[0.0] * length, prompt_len=0,
                   step_rewards=[(length - 1, env_reward), (length - 1, pen)],
                   components={"correct": env_reward, "overlong": pen}, info={"correct": correct}, terminated=True)


def test_an_all_wrong_group_of_different_lengths_is_dropped_under_eq_11():
    wrong = [_episode(False, n) for n in (5, 7, 8, 3)]
    assert [e.reward for e in wrong] == [-0.25, -0.75, -1.0, 0.0]  # a pure length signal
    dropped: dict[str, int] = {}
    assert filter_groups(wrong, 4, "acc", dropped) == [] and dropped == {"none_correct": 1}
    assert filter_groups(wrong, 4, "reward") == wrong  # the old rule kept it
    assert filter_groups(wrong, 4, "correct") == []  # a component's name works too
    assert filter_groups(wrong, 4, "overlong") == wrong


def test_mixed_groups_are_kept_and_all_correct_ones_dropped():
    mixed = [_episode(True, 3), _episode(False, 3), _episode(False, 3), _episode(False, 3)]
    right = [_episode(True, n) for n in (3, 6, 7, 8)]  # all right, rewards differ by length only
    dropped: dict[str, int] = {}
    kept = filter_groups(mixed + right + mixed, 4, "acc", dropped)
    assert kept == mixed + mixed and dropped == {"all_correct": 1}
    assert filter_groups(right, 4, "reward") == right
    assert group_verdict([1.0, 1.0], "reward") == "equal" and group_verdict([0.0, 1.0], "acc") == "keep"


def test_the_metric_is_checked_and_the_presets_cite_it():
    with pytest.raises(ValueError, match=r"neither 'acc', 'reward' nor one of this env's reward components \['correct', 'overlong'\]"):
        filter_value(_episode(True, 3), "equivalence")
    with pytest.raises(ValueError, match="filter_groups_metric"):
        make_config("dapo", filter_groups_metric="")
    assert make_config("dapo").filter_groups_metric == "acc"
    assert make_config("satrl_dapo").filter_groups_metric == "acc"
    assert make_config("dapo", filter_groups_metric="reward").filter_groups_metric == "reward"
