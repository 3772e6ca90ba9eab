"""Policy-gradient losses and their aggregation. Pure functions over ``(N, T)`` tensors.

The clipped surrogate (PPO; GRPO eq. 3 of SATURN; DAPO with decoupled ``eps_low``/``eps_high``),
per token, with ``rho = exp(logp - old_logp)``::

    l = max(-A rho, -A clip(rho, 1 - eps_low, 1 + eps_high))
    l = min(l, -c A)            where A < 0 (dual clip, c = 10 in SAT-RL Table 8)

``ratio="sequence"`` (:func:`sequence_clipped_surrogate`, Spring §4.4 eq. 2) clips one ratio per
sequence, ``rho_i = pi(o_i | x) / pi_old(o_i | x) = exp(sum_t (logp_t - old_logp_t))``, against the
sequence's advantage; every token of the sequence carries the sequence's loss, so that
``seq-mean-token-mean`` aggregates it as eq. 2 does, ``1/G sum_i``.

Aggregation (how per-token losses become one scalar) is a separate choice:

- ``token-mean``: sum of ``mask * l`` over every policy token of the optimizer step, divided by
  that global token count (DAPO; across processes and accumulation micro-batches: the
  normaliser is counted once per optimizer step and passed in as ``normalizer``).
- ``seq-mean-token-mean``: mean over sequences of each sequence's token mean (GRPO as SATURN
  writes it: ``1/G sum_i 1/|o_i| sum_t``); ``normalizer`` is the global number of sequences.
- ``seq-mean-token-sum-norm``: sum of ``mask * l`` divided by ``normalizer`` = number of
  sequences x a constant length (Dr. GRPO).

Each function returns the *contribution* of one micro-batch: summed over every micro-batch and
process, it gives exactly the global aggregate. (With DDP averaging gradients over ``W`` processes,
multiply by ``W``; the trainer does.)
"""
from __future__ import annotations

import torch

__all__ = ["clipped_surrogate", "sequence_clipped_surrogate", "aggregate", "AGG_MODES", "masked_mean",
           "MAX_SEQUENCE_LOG_RATIO"]

AGG_MODES = ("token-mean", "seq-mean-token-mean", "seq-mean-token-sum-norm")


def clipped_surrogate(
    logp: torch.Tensor,
    old_logp: torch.Tensor,
    advantages: torch.Tensor,
    *,
    eps_low: float = 0.2,
    eps_high: float = 0.2,
    dual_clip: float | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Per-token clipped policy loss and a 0/1 tensor marking where the clip was active."""
    ratio = torch.exp(logp - old_logp)
    unclipped = -advantages * ratio
    clipped = -advantages * torch.clamp(ratio, 1.0 - eps_low, 1.0 + eps_high)
    loss = torch.maximum(unclipped, clipped)
    was_clipped = (clipped > unclipped).to(logp.dtype)
    if dual_clip is not None:
        if dual_clip <= 1.0:
            raise ValueError(f"dual_clip c must be > 1, got {dual_clip}")
        bound = -dual_clip * advantages
        dual = (advantages < 0) & (loss > bound)
        loss = torch.where(dual, bound, loss)
        was_clipped = torch.where(dual, torch.ones_like(was_clipped), was_clipped)
    return loss, was_clipped


#: |log rho_i| is clamped here before exp (exp(20) ~ 5e8): past it the clip or the dual clip
#: already decides the loss, and the product over hundreds of tokens would overflow
MAX_SEQUENCE_LOG_RATIO = 20.0


def sequence_clipped_surrogate(
    logp: torch.Tensor,
    old_logp: torch.Tensor,
    advantages: torch.Tensor,
    mask: torch.Tensor,
    *,
    eps_low: float = 0.2,
    eps_high: float = 0.2,
    dual_clip: float | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """The clipped surrogate with one ratio per sequence (Spring eq. 2; module docstring), as
    ``(N, T)`` tensors: each policy token holds its sequence's loss and clip flag. The sequence's
    advantage is the mean of ``advantages`` over its policy tokens (one value per sequence with
    episode credit)."""
    m = mask.to(logp.dtype)
    log_ratio = ((logp - old_logp) * m).sum(dim=1).clamp(-MAX_SEQUENCE_LOG_RATIO, MAX_SEQUENCE_LOG_RATIO)
    adv = (advantages * m).sum(dim=1) / m.sum(dim=1).clamp(min=1)
    loss, clipped = clipped_surrogate(log_ratio, torch.zeros_like(log_ratio), adv, eps_low=eps_low,
                                      eps_high=eps_high, dual_clip=dual_clip)
    return loss[:, None] * m, clipped[:, None] * m


def aggregate(loss: torch.Tensor, mask: torch.Tensor, mode: str, normalizer: float) -> torch.Tensor:
    """This micro-batch's share of the global aggregate (see the module docstring)."""
    m = mask.to(loss.dtype)
    if mode == "token-mean" or mode == "seq-mean-token-sum-norm":
        return (loss * m).sum() / normalizer
    if mode == "seq-mean-token-mean":
        per_seq = (loss * m).sum(dim=1) / m.sum(dim=1).clamp(min=1)
        return per_seq.sum() / normalizer
    raise ValueError(f"aggregation must be one of {AGG_MODES}, got {mode!r}")


def masked_mean(x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    m = mask.to(x.dtype)
    return (x * m).sum() / m.sum().clamp(min=1)
