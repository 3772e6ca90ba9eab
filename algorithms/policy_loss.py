"""The policy loss of one micro-batch: the clipped surrogate, plus beta KL when it is in the loss.

The pure pieces (:mod:`.losses`, :mod:`.kl`) wired to a :class:`~.config.TrainConfig`; the
per-token inputs travel as one :class:`LossInputs`. ``tests/test_trl_equivalence.py`` holds it
equal to TRL's ``GRPOTrainer._compute_loss`` in float64.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

from .config import TrainConfig
from .kl import KL_CLAMP, kl_estimate
from .losses import aggregate, clipped_surrogate, masked_mean, sequence_clipped_surrogate

__all__ = ["LossInputs", "policy_loss"]


@dataclass
class LossInputs:
    """Per-token tensors (N, T) of one micro-batch, aligned with ``input_ids``."""

    old_logp: torch.Tensor
    advantages: torch.Tensor
    loss_mask: torch.Tensor
    ref_logp: torch.Tensor | None = None
    kl_mask: torch.Tensor | None = None


def policy_loss(logp: torch.Tensor, inp: LossInputs, cfg: TrainConfig, normalizer: float) -> tuple[torch.Tensor, dict]:
    """The clipped surrogate (+ beta KL in the loss), aggregated as ``cfg.loss_agg``."""
    clip = {"eps_low": cfg.eps_low, "eps_high": cfg.eps_high, "dual_clip": cfg.dual_clip}
    if cfg.ratio == "sequence":
        per_token, clipped = sequence_clipped_surrogate(logp, inp.old_logp, inp.advantages, inp.loss_mask, **clip)
    else:
        per_token, clipped = clipped_surrogate(logp, inp.old_logp, inp.advantages, **clip)
    stats = {"clip_frac": masked_mean(clipped, inp.loss_mask).item()}
    if cfg.kl_coef > 0 and cfg.kl_in == "loss" and inp.ref_logp is not None:
        raw = kl_estimate(logp, inp.ref_logp, cfg.kl_estimator, clamp=None)
        kl = raw.clamp(-KL_CLAMP, KL_CLAMP)  # what the loss uses; the unclamped mean is logged beside it
        per_token = per_token + cfg.kl_coef * kl * inp.kl_mask.to(kl.dtype)
        stats["kl"], stats["kl_unclamped"] = (masked_mean(x.detach(), inp.kl_mask).item() for x in (kl, raw))
    loss = aggregate(per_token, inp.loss_mask, cfg.loss_agg, normalizer)
    return loss, stats
