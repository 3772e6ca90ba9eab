"""KL estimators between the policy and the reference policy, per sampled token.

With ``x = log pi(a) - log pi_ref(a)`` for the sampled token ``a`` (Schulman's estimators, as in
OpenRLHF and verl): ``k1 = x``; ``k2 = x^2 / 2``; ``k3 = exp(-x) - 1 + x``; and SIRL's
``rho - log rho - 1`` with ``rho = pi / pi_ref = exp(x)`` (SIRL §3.2 eq. 5), ``k3_rho = exp(x) - x - 1``:
k3 with the ratio the other way up (both are >= 0, 0 only at x = 0; k3 penalises x < 0
exponentially, k3_rho x > 0). The result is clamped to ``[-clamp, clamp]`` (10 by default, as
both references do) so one extreme token cannot blow up the loss. ``k3`` is SATURN's (Table 8
"KL estimator k3"); ``k1`` is the in-reward KL of SIRL's shipped script (``use_kl_in_reward``
with verl's default ``kl`` estimator), ``k3_rho`` the paper's.
"""
from __future__ import annotations

import torch

from .config import KL_ESTIMATORS

__all__ = ["kl_estimate", "KL_ESTIMATORS"]



def kl_estimate(logp: torch.Tensor, ref_logp: torch.Tensor, kind: str = "k3", clamp: float | None = 10.0) -> torch.Tensor:
    x = logp - ref_logp
    if kind == "k1":
        kl = x
    elif kind == "k2":
        kl = 0.5 * x * x
    elif kind == "k3":
        kl = torch.exp(-x) - 1.0 + x
    elif kind == "k3_rho":  # SIRL §3.2 eq. 5: rho - log rho - 1
        kl = torch.exp(x) - x - 1.0
    else:
        raise ValueError(f"KL estimator must be one of {KL_ESTIMATORS}, got {kind!r}")
    return kl.clamp(-clamp, clamp) if clamp is not None else kl
