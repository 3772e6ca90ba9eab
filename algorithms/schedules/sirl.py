"""SIRL's two reward stages (``sirl.txt`` §3.3, eq. 6) on top of any schedule.

Stage 1 pays format, execution and accuracy; stage 2 adds the bonus read from the exported
``.lp`` model. The paper does not say when the switch happens ("Paper vs code"), so it is a
setting: stage 2 from ``TrainConfig.bonus_from_step`` on. The stage is a function of the step,
not a state, so a resumed run is in the right stage; every step's row carries ``sirl_stage``.
"""
from __future__ import annotations

from typing import Any, Sequence

from .base import Schedule, ScheduleWrapper, TrainerLike

__all__ = ["SirlStages"]


class SirlStages(ScheduleWrapper):
    """``inner``'s steps, each with the stage of its step set on every env's problem."""

    def __init__(self, inner: Schedule, bonus_from_step: int, envs: Sequence[Any]):
        super().__init__(inner)
        self.problems = [getattr(e.unwrapped, "problem", None) for e in envs]
        if not all(hasattr(p, "set_stage") for p in self.problems):
            raise ValueError(f"bonus_from_step needs an env whose problem has SIRL's stages (SolverOR-v0), "
                             f"not {envs[0].spec.id}")
        self.bonus_from_step = bonus_from_step

    def before_step(self, trainer: TrainerLike) -> dict[str, Any]:
        stage = 2 if trainer.step >= self.bonus_from_step else 1
        for problem in self.problems:
            problem.set_stage(stage)
        return {**self.inner.before_step(trainer), "sirl_stage": float(stage)}
