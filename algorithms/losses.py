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

import math

import torch

__all__ = ["clipped_surrogate", "sequence_clipped_surrogate", "aggregate", "AGG_MODES", "masked_mean",
           "MAX_SEQUENCE_LOG_RATIO", "bounded_ratio"]

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
    return _clipped_loss(torch.exp(logp - old_logp), advantages, eps_low, eps_high, dual_clip)


def _clipped_loss(ratio, advantages, eps_low, eps_high, dual_clip) -> tuple[torch.Tensor, torch.Tensor]:
    unclipped = -advantages * ratio
    clipped = -advantages * torch.clamp(ratio, 1.0 - eps_low, 1.0 + eps_high)
    loss = torch.maximum(unclipped, clipped)
    was_clipped = (clipped > unclipped).to(ratio.dtype)
    if dual_clip is not None:
        if dual_clip <= 1.0:
            raise ValueError(f"dual_clip c must be > 1, got {dual_clip}")
        bound = -dual_clip * advantages
        dual = (advantages < 0) & (loss > bound)
        loss = torch.where(dual, bound, loss)
        was_clipped = torch.where(dual, torch.ones_like(was_clipped), was_clipped)
    return loss, was_clipped


#: above this sequence log-ratio, rho_i = exp(log rho_i) continues as its tangent line (exp(20) ~ 5e8):
#: the product over hundreds of tokens would otherwise overflow
MAX_SEQUENCE_LOG_RATIO = 20.0


def bounded_ratio(log_ratio: torch.Tensor) -> torch.Tensor:
    """exp(log_ratio) up to :data:`MAX_SEQUENCE_LOG_RATIO` M, then exp(M) (1 + log_ratio - M):
    the same value and gradient up to M, past it a gradient of eq. 2's sign and magnitude exp(M).
    A clamp there made the gradient exactly 0: with A < 0 and no dual clip, Spring eq. 2's
    unclipped term decides the loss, and its gradient at log-ratio 21 is 1.3e9 A, not 0. Below
    there is no bound: exp underflows to 0 as eq. 2's ratio does."""
    m = MAX_SEQUENCE_LOG_RATIO
    tangent = math.exp(m) * (1.0 + (log_ratio - m))
    return torch.where(log_ratio > m, tangent, torch.exp(torch.clamp(log_ratio, max=m)))


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
    episode credit); the ratio is :func:`bounded_ratio` of the summed log-ratio."""
    m = mask.to(logp.dtype)
    log_ratio = ((logp - old_logp) * m).sum(dim=1)
    adv = (advantages * m).sum(dim=1) / m.sum(dim=1).clamp(min=1)
    loss, clipped = _clipped_loss(bounded_ratio(log_ratio), adv, eps_low, eps_high, dual_clip)
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
