"""What the one training loop asks a schedule, and what a schedule may use of the trainer.

``Trainer.train`` is the only loop; a schedule decides, between steps, what the next step trains
on and when the run is over, validating the policy on the way when it is due::

    step = schedule.next(trainer)                # validations due now; None: the run is over
    while step is not None:
        trainer.train_step(step.instances)       # schedule.before_step, the rollouts (schedule.draw
                                                 # each round), the update, schedule.after_step, the row
        step = schedule.next(trainer)
        # a checkpoint every save_every steps, with schedule.state()
    schedule.end(trainer)                        # then a checkpoint (save_every > 0), the model (save_final)

A schedule's :meth:`~Schedule.state` goes in every checkpoint (``trainer_state.json``, beside the
step and the data position) and comes back through :meth:`~Schedule.load_state` on resume, so that
a resumed run goes on as the uninterrupted one did.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, Sequence

__all__ = ["Step", "Schedule", "ScheduleWrapper", "TrainerLike"]


class TrainerLike(Protocol):
    """The trainer's public members a schedule uses (:class:`~solvergym.algorithms.trainer.Trainer`)."""

    cfg: Any  # the run's TrainConfig
    step: int  # steps done
    data_pos: int  # instances drawn so far over every process (the data position)
    acc: Any  # the Accelerator: is_main_process
    policy: Any  # the sampling agent (its ``sampling`` is swapped while it validates)
    unwrapped: Any  # the model without its DDP wrapper (vLLM weight sync)

    def log(self, row: dict[str, Any]) -> None: ...

    def save_model(self, path: str | Path) -> None: ...

    def broadcast_scalar(self, value: float) -> float: ...


@dataclass(frozen=True)
class Step:
    """What one training step trains on: ``instances`` (``prompts_per_step`` of them, one group
    each), or ``None``: each rollout round draws its own through :meth:`Schedule.draw`, or from the
    env's generator when that gives ``None`` too."""

    instances: Sequence[Any] | None = None


class Schedule:
    """A run's plan of steps; these defaults add nothing: no instances, rows or state of their own."""

    #: the planned number of steps (the progress bar, the learning-rate schedule's horizon); None:
    #: decided as the run goes
    steps: int | None = None

    def next(self, trainer: TrainerLike) -> Step | None:
        """Between steps (and before the first): run what is due, then the next step, or ``None``
        when the run is over."""
        raise NotImplementedError

    def before_step(self, trainer: TrainerLike) -> dict[str, Any]:
        """Before a step's rollouts: set what the step's episodes depend on; returns keys for its row."""
        return {}

    def draw(self, pos: int, k: int) -> list[Any] | None:
        """The instances at data positions ``pos .. pos + k - 1`` for a rollout round of a step
        without instances of its own (``None``: the env's generator draws them)."""
        return None

    def after_step(self, trainer: TrainerLike) -> dict[str, Any]:
        """After a step's update (``trainer.step`` counts it): returns keys for its row."""
        return {}

    def end(self, trainer: TrainerLike) -> None:
        """After the last step, before the final checkpoint."""

    def state(self) -> dict[str, Any]:
        """What a checkpoint keeps (top-level keys of ``trainer_state.json``)."""
        return {}

    def load_state(self, state: dict[str, Any]) -> None:
        """Resume from a checkpoint's ``trainer_state.json``."""


class ScheduleWrapper(Schedule):
    """A schedule on top of another (as ``gymnasium.Wrapper`` for envs): every call goes to
    ``inner`` unless the wrapper overrides it."""

    def __init__(self, inner: Schedule):
        self.inner = inner
        self.steps = inner.steps

    def next(self, trainer: TrainerLike) -> Step | None:
        return self.inner.next(trainer)

    def before_step(self, trainer: TrainerLike) -> dict[str, Any]:
        return self.inner.before_step(trainer)

    def draw(self, pos: int, k: int) -> list[Any] | None:
        return self.inner.draw(pos, k)

    def after_step(self, trainer: TrainerLike) -> dict[str, Any]:
        return self.inner.after_step(trainer)

    def end(self, trainer: TrainerLike) -> None:
        self.inner.end(trainer)

    def state(self) -> dict[str, Any]:
        return self.inner.state()

    def load_state(self, state: dict[str, Any]) -> None:
        self.inner.load_state(state)
