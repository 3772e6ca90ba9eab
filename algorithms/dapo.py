"""DAPO's extras (arXiv 2503.14476; SAT-RL trains with DAPO, Table 8).

- Dynamic sampling (eq. 11: 0 < |{o_i : is_equivalent(a, o_i)}| < G): a group whose episodes are
  all correct or all wrong is dropped and more groups generated until the batch is full (the
  trainer does the regeneration, with a retry cap that warns and trains on what it has). What is
  compared is :func:`filter_value` of each episode under ``filter_groups_metric`` (verl's
  ``algorithm.filter_groups.metric``): ``"acc"`` (the default, eq. 11) the env's correctness;
  ``"reward"`` the shaped reward (the overlong penalty included, so an all-wrong group of
  different lengths is kept and trained on a pure length signal); any reward component's name.
- Soft overlong punishment (eq. 13), on the number of tokens the policy generated (observation
  tokens of multi-turn episodes are not the policy's length: TRL, verl and OpenRLHF all count
  them)::

      0                              if |y| <= L_max - L_cache
      ((L_max - L_cache) - |y|) / L_cache   if L_max - L_cache < |y| <= L_max
      -1                             if |y| > L_max
"""
from __future__ import annotations

from typing import Any, Sequence

import torch

__all__ = ["FILTER_METRICS", "filter_value", "group_verdict", "filter_groups", "group_has_signal", "overlong_penalty"]

#: the named metrics of dynamic sampling's filter (any reward component's name works too)
FILTER_METRICS = ("acc", "reward")


def filter_value(episode: Any, metric: str) -> float:
    """What the filter compares for one episode: its correctness (``"acc"``: 1.0 or 0.0, from
    ``info["correct"]``), its shaped reward (``"reward"``) or one reward component. A component
    the episode does not have is a ``ValueError`` naming the ones it has."""
    if metric == "acc":
        return float(bool(episode.info.get("correct", False)))
    if metric == "reward":
        return float(episode.reward)
    if metric not in episode.components:
        raise ValueError(f"filter_groups_metric={metric!r} is neither 'acc', 'reward' nor one of this env's "
                         f"reward components {sorted(episode.components)}")
    return float(episode.components[metric])


def group_verdict(values: Sequence[float], metric: str, atol: float = 1e-9) -> str:
    """``"keep"`` when the group's values are not all equal; else why it is dropped: under
    ``"acc"`` ``"all_correct"`` or ``"none_correct"``, otherwise ``"equal"``."""
    if max(values) - min(values) > atol:
        return "keep"
    if metric == "acc":
        return "all_correct" if values[0] > 0.5 else "none_correct"
    return "equal"


def filter_groups(episodes: Sequence[Any], group_size: int, metric: str = "acc",
                  dropped: dict[str, int] | None = None) -> list:
    """The episodes of the groups (``group_size`` consecutive episodes each) that dynamic sampling
    keeps under ``metric``; ``dropped`` (when given) counts the others by :func:`group_verdict`'s
    reason."""
    out = []
    for k in range(0, len(episodes), group_size):
        grp = list(episodes[k:k + group_size])
        why = group_verdict([filter_value(e, metric) for e in grp], metric)
        if why == "keep":
            out += grp
        elif dropped is not None:
            dropped[why] = dropped.get(why, 0) + 1
    return out


def group_has_signal(rewards: torch.Tensor, group: torch.Tensor, atol: float = 1e-9) -> dict[int, bool]:
    """For each group id: whether its rewards are not all equal (std > 0)."""
    out = {}
    for g in torch.unique(group).tolist():
        r = rewards[group == g]
        out[int(g)] = bool((r.max() - r.min()).abs() > atol)
    return out


def overlong_penalty(lengths: torch.Tensor, max_len: int, cache_len: int, factor: float = 1.0) -> torch.Tensor:
    """Eq. 13 per episode (times ``factor``), ``lengths`` in policy tokens."""
    if not 0 < cache_len <= max_len:
        raise ValueError(f"need 0 < L_cache <= L_max, got L_cache={cache_len}, L_max={max_len}")
    L = lengths.to(torch.float64)
    soft = max_len - cache_len
    pen = torch.where(L <= soft, torch.zeros_like(L), (soft - L) / cache_len)
    pen = torch.where(L > max_len, torch.full_like(L, -1.0), pen)
    return (factor * pen).to(torch.float32)
