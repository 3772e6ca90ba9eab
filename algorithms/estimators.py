"""The advantage estimators a config names (``advantage``), one function each, in one registry.

Each takes the step's batch, the old and reference log-probs, the KL mask, the config and the
cross-process ``reduce`` (a sum over processes), and returns (N, T) advantages that are 0 off the
policy's tokens. The arithmetic is :mod:`.advantages`' (pure, in the papers' notation); this module
only says which pieces each estimator chains.

- ``grpo``: the outcome normalised within its group (SATURN §2.4 eq. 3), or with turn credit each
  turn's reward normalised over the group's step rewards (DeepSeekMath §4.1.3's process supervision).
- ``reinforce_pp``: REINFORCE++ token rewards (outcome, or each turn's reward at its last token;
  KL in the reward when ``kl_in="reward"``), returns, whitened over the global batch (SIRL §3.2 eq. 4).
- ``reinforce_pp_baseline``: the same after the group's mean reward is subtracted.
"""
from __future__ import annotations

from typing import Any, Callable

import torch

from .advantages import (grpo_advantages, grpo_step_advantages, group_mean_baseline, masked_whiten,
                         reinforce_pp_returns, reinforce_pp_token_rewards)
from .kl import kl_estimate

__all__ = ["ESTIMATORS", "estimate"]


def grpo(batch: Any, old_logp, ref_logp, kl_mask, cfg: Any, reduce: Callable) -> torch.Tensor:
    mask = batch.loss_mask.float()
    if cfg.turn_credit:
        if cfg.adv_std != "group":
            raise ValueError("credit='turn' with GRPO normalises step rewards within the group "
                             "(DeepSeekMath §4.1.3): it needs adv_std='group'")
        return grpo_step_advantages(batch.token_rewards, batch.step_mask, batch.loss_mask, batch.group,
                                    eps=cfg.adv_eps) * mask
    a = grpo_advantages(batch.rewards, batch.group, std=cfg.adv_std, eps=cfg.adv_eps, reduce=reduce)
    return a[:, None] * mask


def reinforce_pp(batch: Any, old_logp, ref_logp, kl_mask, cfg: Any, reduce: Callable,
                 baseline: bool = False) -> torch.Tensor:
    outcome = group_mean_baseline(batch.rewards, batch.group) if baseline else batch.rewards
    kl = None
    if cfg.kl_coef > 0 and cfg.kl_in == "reward" and ref_logp is not None:
        kl = kl_estimate(old_logp, ref_logp, cfg.kl_estimator) * kl_mask
    if cfg.turn_credit:
        # each turn's reward at its last token; the baseline (if any) comes off at the end
        rewards = reinforce_pp_token_rewards(outcome - batch.rewards, batch.loss_mask, kl, cfg.kl_coef,
                                             turn_rewards=batch.token_rewards)
    else:
        rewards = reinforce_pp_token_rewards(outcome, batch.loss_mask, kl, cfg.kl_coef)
    returns = reinforce_pp_returns(rewards, batch.loss_mask, cfg.gamma)
    return masked_whiten(returns, batch.loss_mask, reduce=reduce)


def reinforce_pp_baseline(batch: Any, old_logp, ref_logp, kl_mask, cfg: Any, reduce: Callable) -> torch.Tensor:
    return reinforce_pp(batch, old_logp, ref_logp, kl_mask, cfg, reduce, baseline=True)


#: ``advantage`` (TrainConfig) -> its estimator
ESTIMATORS: dict[str, Callable[..., torch.Tensor]] = {
    "grpo": grpo, "reinforce_pp": reinforce_pp, "reinforce_pp_baseline": reinforce_pp_baseline,
}


def estimate(batch: Any, old_logp, ref_logp, kl_mask, cfg: Any, reduce: Callable) -> torch.Tensor:
    """(N, T) advantages by the estimator ``cfg.advantage`` names."""
    return ESTIMATORS[cfg.advantage](batch, old_logp, ref_logp, kl_mask, cfg, reduce)
