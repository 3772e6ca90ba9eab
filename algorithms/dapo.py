"""DAPO's extras (arXiv 2503.14476; SAT-RL trains with DAPO, Table 8).

- Dynamic sampling: groups whose rewards are all equal carry no GRPO signal (every advantage is
  0); they are dropped and more groups generated until the batch is full (the trainer does the
  regeneration, with a retry cap that warns and trains on what it has).
- Soft overlong punishment (eq. 13), on the number of tokens the policy generated (observation
  tokens of multi-turn episodes are not the policy's length: TRL, verl and OpenRLHF all count
  them)::

      0                              if |y| <= L_max - L_cache
      ((L_max - L_cache) - |y|) / L_cache   if L_max - L_cache < |y| <= L_max
      -1                             if |y| > L_max
"""
from __future__ import annotations

import torch

__all__ = ["group_has_signal", "overlong_penalty"]


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
