"""The prompt a group's samples share, found so that it goes through the model once per group.

Rows of one group start from the same observation; a forward pass that runs their common prompt
once and indexes its key/value cache out to the rows computes the same function (gradients flow
back through the cache into the shared prompt, summed over the group) at a fraction of the work
when prompts are long and G is large. Groups share more than their rows do with each other: the
env's instructions (about 300 of a SATURN or tool prompt's ~340 tokens) are the same for every
instance, so :func:`prefix_cache` runs that part once per micro-batch, each group's own rest once
per group, and only then hands the cache to the rows. The trainer's ``_logits`` uses them.
"""
from __future__ import annotations

from typing import Any

import torch

__all__ = ["first_logit_position", "shared_prefix", "common_length", "prefix_cache"]


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


def common_length(ids: torch.Tensor, attn: torch.Tensor, limit: int) -> int:
    """How many leading positions every row of ``ids`` shares (unpadded), at most ``limit``."""
    same = (ids[:, :limit] == ids[:1, :limit]) & attn[:, :limit].bool()
    return int(same.long().cumprod(dim=1).sum(dim=1).min())


def prefix_cache(model: Any, ids: torch.Tensor, attn: torch.Tensor, share: tuple[int, torch.Tensor, torch.Tensor],
                 cache_kw: str, min_len: int = 8) -> Any:
    """The key/value cache of positions ``0..L-1`` for every row, from :func:`shared_prefix`'s
    ``share = (L, first, inverse)``, or ``None`` when ``model`` gives no cache that can be indexed.

    The part every group shares (at least ``min_len`` tokens) runs once and is repeated to the
    groups; each group's own rest runs once from there; the cache is then indexed out to the rows.
    The same function as running each row whole: gradients flow back through the repeats and the
    index into the one shared computation."""
    length, first, inverse = share
    cache, done = None, 0
    if len(first) > 1:
        common = common_length(ids[first], attn[first], length)
        if common >= min_len:
            out = model(input_ids=ids[first[:1], :common], attention_mask=attn[first[:1], :common], use_cache=True,
                        logits_to_keep=1)
            cache = getattr(out, cache_kw, None)
            if cache is not None and hasattr(cache, "batch_repeat_interleave"):
                cache.batch_repeat_interleave(len(first))
                done = common
            else:
                cache = None
    if done < length:
        out = model(input_ids=ids[first, done:length], attention_mask=attn[first, :length], use_cache=True,
                    logits_to_keep=1, **({cache_kw: cache} if cache is not None else {}))
        cache = getattr(out, cache_kw, None)
    if cache is None or not hasattr(cache, "batch_select_indices"):
        return None
    cache.batch_select_indices(inverse)
    return cache
