"""What the one training loop trains on, step by step, and when it validates and stops.

:mod:`.base` is the interface (``Trainer.train`` asks a :class:`Schedule` between steps); one
schedule per module: :mod:`.steps` (``steps`` plain steps), :mod:`.split` (epochs over a fixed
split with validation, early stopping and the best model), :mod:`.saturn` (SATURN's curriculum,
Algorithm 1, whose controller is :mod:`.curriculum`), :mod:`.sirl` (SIRL's reward stages, on top
of any of them). :mod:`.validation` evaluates the policy through ``solvergym.evaluation``.
"""
from __future__ import annotations

from typing import Any, Sequence

from .base import Schedule, ScheduleWrapper, Step, TrainerLike
from .saturn import SaturnSchedule
from .sirl import SirlStages
from .split import Epochs
from .steps import FixedSteps

__all__ = ["Schedule", "ScheduleWrapper", "Step", "TrainerLike", "FixedSteps", "Epochs", "SaturnSchedule",
           "SirlStages", "make_schedule"]


def make_schedule(cfg: Any, envs: Sequence[Any]) -> Schedule:
    """The schedule a ``TrainConfig`` asks for: SATURN's curriculum (``curriculum``), else epochs
    over a split (``data``), else ``steps`` steps; SIRL's stages on top (``bonus_from_step``, which
    sets the stage on ``envs``, the trainer's)."""
    if cfg.curriculum:
        schedule: Schedule = SaturnSchedule(cfg)
    elif cfg.data:
        schedule = Epochs(cfg)
    else:
        schedule = FixedSteps(cfg.steps)
    if cfg.bonus_from_step is not None:
        schedule = SirlStages(schedule, cfg.bonus_from_step, envs)
    return schedule
