"""KL estimators between the policy and the reference policy, per sampled token.

With ``x = log pi(a) - log pi_ref(a)`` for the sampled token ``a`` (Schulman's estimators, as in
OpenRLHF and verl): ``k1 = x``; ``k2 = x^2 / 2``; ``k3 = exp(-x) - 1 + x``. The result is clamped
to ``[-clamp, clamp]`` (10 by default, as both references do) so one extreme token cannot blow
up the loss. ``k3`` is SATURN's (Table 8 "KL estimator k3"); ``k1`` is SIRL's in-reward KL.
"""
from __future__ import annotations

import torch

__all__ = ["kl_estimate", "KL_ESTIMATORS"]

KL_ESTIMATORS = ("k1", "k2", "k3")


def kl_estimate(logp: torch.Tensor, ref_logp: torch.Tensor, kind: str = "k3", clamp: float | None = 10.0) -> torch.Tensor:
    x = logp - ref_logp
    if kind == "k1":
        kl = x
    elif kind == "k2":
        kl = 0.5 * x * x
    elif kind == "k3":
        kl = torch.exp(-x) - 1.0 + x
    else:
        raise ValueError(f"KL estimator must be one of {KL_ESTIMATORS}, got {kind!r}")
    return kl.clamp(-clamp, clamp) if clamp is not None else kl
