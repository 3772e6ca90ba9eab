"""A plain run: ``TrainConfig.steps`` steps, each on instances drawn from the env's generator."""
from __future__ import annotations

from .base import Schedule, Step, TrainerLike

__all__ = ["FixedSteps"]


class FixedSteps(Schedule):
    """``steps`` steps (counted from a resumed step, if any); nothing validated between them."""

    def __init__(self, steps: int):
        self.steps = steps

    def next(self, trainer: TrainerLike) -> Step | None:
        return Step() if trainer.step < self.steps else None
