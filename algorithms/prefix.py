"""The prompt a group's samples share, found so that it goes through the model once per group.

Rows of one group start from the same observation; a forward pass that runs their common prompt
once and indexes its key/value cache out to the rows computes the same function (gradients flow
back through the cache into the shared prompt, summed over the group) at a fraction of the work
when prompts are long and G is large. The trainer's ``_logits`` uses :func:`shared_prefix`.
"""
from __future__ import annotations

import torch

__all__ = ["first_logit_position", "shared_prefix"]


def first_logit_position(loss_mask: torch.Tensor) -> int:
    """The earliest position whose logits predict a policy token (one before the first one)."""
    on = loss_mask.any(dim=0).nonzero()
    return max(0, int(on[0]) - 1) if len(on) else max(0, loss_mask.shape[1] - 2)


def shared_prefix(ids: torch.Tensor, attn: torch.Tensor, group: torch.Tensor, limit: int,
                  min_len: int = 8) -> tuple[int, torch.Tensor, torch.Tensor] | None:
    """The prompt a group's samples share, so that it goes through the model once, not G times.

    Returns ``(L, first, inverse)``: every row equals the row ``first[inverse[i]]`` (the first row
    of its group) on positions ``0..L-1``, with ``L <= limit`` (the positions that need no logits)
    and no padding there; or ``None`` when no two rows share a group or the common part is shorter
    than ``min_len`` (not worth a second call). Rows of one group start from the same observation,
    so ``L`` is the prompt length (the shortest prompt of the micro-batch when groups differ).
    """
    uniq, inverse = torch.unique(group, return_inverse=True)
    if len(uniq) == len(group) or limit < min_len:
        return None
    first = torch.stack([(inverse == k).nonzero()[0, 0] for k in range(len(uniq))]).to(ids.device)
    inverse = inverse.to(ids.device)
    same = (ids[:, :limit] == ids[first[inverse], :limit]) & attn[:, :limit].bool()
    length = int(same.long().cumprod(dim=1).sum(dim=1).min())
    return (length, first, inverse) if length >= min_len else None
