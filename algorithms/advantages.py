"""Advantage estimators, in the papers' notation. Pure functions over tensors.

Shapes: ``rewards`` is ``(N,)`` (one outcome per episode) with ``group`` ``(N,)`` integer ids
(episodes that started from the same instance share an id); token tensors are ``(N, T)`` with a
``mask`` that is 1 on tokens the policy generated and 0 on prompt, observation and padding.

Cross-process statistics: when a ``reduce`` callable is given (``reduce(tensor) -> sum over all
processes``), batch-level statistics (GRPO ``std="batch"``, REINFORCE++ whitening) use the global
batch, as docs/design.md ("Training") requires; groups are always whole on one process.
"""
from __future__ import annotations

from typing import Callable

import torch

__all__ = [
    "grpo_advantages",
    "grpo_step_advantages",
    "reinforce_pp_token_rewards",
    "reinforce_pp_returns",
    "masked_whiten",
    "group_mean_baseline",
]

Reduce = Callable[[torch.Tensor], torch.Tensor]


def _identity(x: torch.Tensor) -> torch.Tensor:
    return x


def _group_stats(rewards: torch.Tensor, group: torch.Tensor, population: bool = False):
    """Per-episode mean and std of its group (unbiased, or ``population``: 1/G)."""
    ids, inverse, counts = torch.unique(group, return_inverse=True, return_counts=True)
    sums = torch.zeros(len(ids), dtype=rewards.dtype).index_add_(0, inverse, rewards)
    mean = sums / counts
    dev = (rewards - mean[inverse]) ** 2
    ss = torch.zeros(len(ids), dtype=rewards.dtype).index_add_(0, inverse, dev)
    var = ss / (counts if population else (counts - 1).clamp(min=1))
    return mean[inverse], var.sqrt()[inverse], counts[inverse]


def group_mean_baseline(rewards: torch.Tensor, group: torch.Tensor) -> torch.Tensor:
    """``r_i - mean_g(r)``: the REINFORCE++-baseline and Dr. GRPO centring."""
    mean, _, _ = _group_stats(rewards.double(), group)
    return (rewards.double() - mean).to(rewards.dtype)


def grpo_advantages(
    rewards: torch.Tensor,
    group: torch.Tensor,
    *,
    std: str = "group",
    eps: float = 1e-6,
    reduce: Reduce | None = None,
) -> torch.Tensor:
    """GRPO (SATURN §2.4 eq. 3): ``A_i = (r_i - mean_g r) / (std r + eps)``.

    ``std="group"``: the unbiased std of the episode's group (a group whose rewards are all equal
    gets A = 0: its numerator is 0). ``"group_population"``: the group's population std,
    ``sqrt(1/G sum (r_i - mean)^2)`` (Spring §4.4; on [1,0,0,0,1,1,0,0] the first advantage is
    1.291 where the unbiased std gives 1.208). ``"batch"``: the unbiased std of all rewards of the
    global batch. ``"none"``: no division (Dr. GRPO). Groups need at least 2 episodes.
    """
    if std not in ("group", "group_population", "batch", "none"):
        raise ValueError(f"std must be 'group', 'group_population', 'batch' or 'none', got {std!r}")
    r = rewards.double()
    mean, gstd, counts = _group_stats(r, group, population=std == "group_population")
    if bool((counts < 2).any()):
        raise ValueError("GRPO needs at least 2 episodes per group")
    centred = r - mean
    if std in ("group", "group_population"):
        return (centred / (gstd + eps)).to(rewards.dtype)
    if std == "batch":
        reduce = reduce or _identity
        n = reduce(torch.tensor([float(len(r))], dtype=torch.float64))
        total = reduce(r.sum().reshape(1))
        bmean = total / n
        ss = reduce(((r - bmean) ** 2).sum().reshape(1))
        bstd = (ss / (n - 1).clamp(min=1)).sqrt()
        return (centred / (bstd + eps)).to(rewards.dtype)
    return centred.to(rewards.dtype)


def grpo_step_advantages(
    token_rewards: torch.Tensor,
    step_mask: torch.Tensor,
    mask: torch.Tensor,
    group: torch.Tensor,
    *,
    eps: float = 1e-6,
) -> torch.Tensor:
    """GRPO with process supervision (DeepSeekMath §4.1.3) over an episode's turns.

    Every step (a turn, its reward at the turn's last token where ``step_mask`` is 1) is
    normalised by the mean and unbiased std of all step rewards of its group,
    ``r~ = (r - mean R_g) / (std R_g + eps)``, and a token's advantage is the sum of ``r~`` over
    its own step and the later ones (observation tokens carry it across). With one step per
    episode this is :func:`grpo_advantages` with ``std="group"``. ``(N, T)``, 0 off ``mask``."""
    steps = step_mask > 0
    rows = steps.nonzero(as_tuple=True)[0]
    r = token_rewards.double()[steps]
    g = group[rows]
    mean, std, _ = _group_stats(r, g)
    norm = torch.zeros_like(token_rewards, dtype=torch.float64)
    norm[steps] = (r - mean) / (std + eps)
    return reinforce_pp_returns(norm, mask, 1.0).to(token_rewards.dtype)


def reinforce_pp_token_rewards(
    outcome: torch.Tensor, mask: torch.Tensor, kl: torch.Tensor | None = None, beta: float = 0.0,
    *, turn_rewards: torch.Tensor | None = None,
) -> torch.Tensor:
    """REINFORCE++ per-token reward: ``r_t = -beta * KL_t`` on policy tokens, plus the outcome
    at the last policy token of each sequence (SIRL eq. 4; OpenRLHF ``reinforce``).

    ``turn_rewards`` ``(N, T)``: each turn's reward already at its last policy token (per-turn
    credit, OpenRLHF's token-level rewards); ``outcome`` is then added at the last policy token on
    top (a baseline shift, 0 without one)."""
    m = mask.to(outcome.dtype)
    rewards = torch.zeros_like(m) if turn_rewards is None else turn_rewards.to(outcome.dtype) * m
    if kl is not None and beta:
        rewards = rewards - beta * kl.to(outcome.dtype) * m
    has = m.sum(dim=1) > 0
    t = torch.arange(m.shape[1], device=m.device).expand_as(m)
    last = torch.where(m > 0, t, torch.full_like(t, -1)).max(dim=1).values
    rows = torch.nonzero(has).squeeze(1)
    rewards[rows, last[rows]] += outcome[rows]
    return rewards


def reinforce_pp_returns(token_rewards: torch.Tensor, mask: torch.Tensor, gamma: float = 1.0) -> torch.Tensor:
    """``G_t = sum over later policy tokens s >= t of gamma^(k) r_s``, k counting policy tokens.

    Observation and padding tokens neither receive a return nor reset it: the outcome paid at the
    end of turn 3 reaches the tokens of turn 1 (the bug of verl#7278 is that a 0 in the mask
    reset the running return).
    """
    m = mask.to(token_rewards.dtype)
    out = torch.zeros_like(token_rewards)
    running = torch.zeros(token_rewards.shape[0], dtype=token_rewards.dtype, device=token_rewards.device)
    for t in range(token_rewards.shape[1] - 1, -1, -1):
        on = m[:, t] > 0
        running = torch.where(on, token_rewards[:, t] + gamma * running, running)
        out[:, t] = torch.where(on, running, torch.zeros_like(running))
    return out


def masked_whiten(
    values: torch.Tensor, mask: torch.Tensor, *, eps: float = 1e-8, reduce: Reduce | None = None
) -> torch.Tensor:
    """``(x - mean) / sqrt(var + eps)`` over the masked entries of the global batch (unbiased var);
    masked-out entries are 0."""
    reduce = reduce or _identity
    m = mask.to(torch.float64)
    x = values.to(torch.float64)
    n = reduce(m.sum().reshape(1))
    mean = reduce((x * m).sum().reshape(1)) / n
    var = reduce((((x - mean) ** 2) * m).sum().reshape(1)) / (n - 1).clamp(min=1)
    return (((x - mean) * torch.rsqrt(var + eps)) * m).to(values.dtype)
