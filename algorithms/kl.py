"""KL estimators between the policy and the reference policy, per sampled token.

With ``x = log pi(a) - log pi_ref(a)`` for the sampled token ``a`` (Schulman's estimators, as in
OpenRLHF and verl): ``k1 = x``; ``k2 = x^2 / 2``; ``k3 = exp(-x) - 1 + x``; and SIRL's
``rho - log rho - 1`` with ``rho = pi / pi_ref = exp(x)`` (SIRL §3.2 eq. 5), ``k3_rho = exp(x) - x - 1``:
k3 with the ratio the other way up (both are >= 0, 0 only at x = 0; k3 penalises x < 0
exponentially, k3_rho x > 0). The result is clamped to ``[-clamp, clamp]`` (10 by default, as
both references do) so one extreme token cannot blow up the loss. ``k3`` is SATURN's (Table 8
"KL estimator k3"); ``k1`` is the in-reward KL of SIRL's shipped script (``use_kl_in_reward``
with verl's default ``kl`` estimator), ``k3_rho`` the paper's.

The clamp can hide how far the policy went: with a far reference the unclamped k3 mean reached
895,906 while 2.45 was logged. :func:`kl_means` gives both means (the trainer logs ``kl`` and
``kl_unclamped``) and :func:`warn_if_clamp_hides` warns when they differ by more than 10x.
"""
from __future__ import annotations

import warnings

import torch

from .config import KL_ESTIMATORS

__all__ = ["kl_estimate", "kl_means", "warn_if_clamp_hides", "KL_ESTIMATORS", "KL_CLAMP"]

#: the clamp of every estimate, as OpenRLHF's and verl's
KL_CLAMP = 10.0


def kl_estimate(logp: torch.Tensor, ref_logp: torch.Tensor, kind: str = "k3",
                clamp: float | None = KL_CLAMP) -> torch.Tensor:
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


def kl_means(logp: torch.Tensor, ref_logp: torch.Tensor, kind: str, mask: torch.Tensor) -> tuple[float, float]:
    """The masked mean of the clamped estimate (what the loss uses) and of the unclamped one."""
    x = kl_estimate(logp.detach(), ref_logp, kind, clamp=None)
    m = mask.to(x.dtype)
    n = m.sum().clamp(min=1)
    return float((x.clamp(-KL_CLAMP, KL_CLAMP) * m).sum() / n), float((x * m).sum() / n)


def warn_if_clamp_hides(clamped: float, unclamped: float, ratio: float = 10.0) -> bool:
    """Warn (and return True) when the unclamped KL mean is more than ``ratio`` times the clamped
    one in size: the logged KL then understates how far the policy is from its reference."""
    if abs(unclamped) > ratio * abs(clamped) and abs(unclamped - clamped) > 1e-6:
        warnings.warn(f"KL: the unclamped mean {unclamped:.4g} is over {ratio:g}x the clamped {clamped:.4g} "
                      f"(each token's estimate is clamped to +-{KL_CLAMP:g}): the policy is far from its reference",
                      RuntimeWarning, stacklevel=2)
        return True
    return False
