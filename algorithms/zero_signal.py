"""Steps without a learning signal: noticed, said once, and not paid for.

A group whose G rewards are all equal has GRPO advantage 0 on every token (SATURN §2.4 eq. 3: the
reward minus the group's mean). When every group of a step is so, the step's gradient is 0 unless
a KL term is in the loss. Two things follow:

- :class:`ZeroSignalWatch` warns when that has lasted ``zero_signal_steps`` steps in a row: a
  model that never (or always) earns the reward will not learn from it. The usual cure for
  "never" is a supervised warm-up first (``solvergym sft`` on demonstrations), for
  "always" a harder level.
- :func:`no_gradient` says when a step's update can be skipped (``skip_zero_signal``): every
  advantage 0 on every process and no KL in the loss. TRL and verl still run the forward,
  backward and AdamW step, whose momentum and weight decay move the weights without a gradient.
"""
from __future__ import annotations

import warnings
from typing import Callable

import torch

__all__ = ["ZeroSignalWatch", "no_gradient"]


class ZeroSignalWatch:
    """Counts the steps in a row whose groups all had equal rewards; warns once per such run."""

    def __init__(self, steps: int):
        self.steps, self.run = steps, 0

    def observe(self, groups_with_signal: float, step: int, mean_reward: float | None = None) -> bool:
        """Record one step (``groups_with_signal``: over every process); ``True`` when it warned."""
        self.run = self.run + 1 if groups_with_signal == 0 else 0
        if not self.steps or self.run != self.steps:
            return False
        reward = "" if mean_reward is None else f" (mean reward {mean_reward:+.3f})"
        warnings.warn(
            f"step {step}: every group's rewards have been equal for {self.run} steps{reward}, so every "
            "advantage is 0 and the policy does not learn. If the model never earns the reward, warm it up "
            "first (`solvergym sft` on demonstrations, such as `solvergym dataset sat-rl-sft` writes); if it always "
            "does, train on a "
            "harder level. (zero_signal_steps=0 silences this.)", RuntimeWarning, stacklevel=3)
        return True


def no_gradient(advantages: torch.Tensor, kl_in_loss: bool, reduce: Callable[[torch.Tensor], torch.Tensor]) -> bool:
    """Whether the step's gradient is 0 on every process: no advantage off 0 anywhere (``reduce``
    sums over processes, so that all of them skip or none does: DDP's all-reduce needs each)."""
    if kl_in_loss:
        return False
    live = reduce(torch.tensor([float((advantages != 0).sum())], dtype=torch.float64))
    return float(live[0]) == 0.0
