"""Epochs over a fixed split, with validation, early stopping and the best model.

The papers train this way: SAT-RL on SAT-Bench's 1,575 training instances for 2 epochs, testing
every step (Table 8); Spring for up to 25 epochs with early stopping at a patience of 3 epochs,
reporting the checkpoint with the best validation score (§5.1(d)). With ``TrainConfig.data``:

- :class:`Split` is the data order: epoch ``e`` visits the instances in a permutation seeded by
  ``(seed, e)``, and the trainer's data position (instances consumed so far, saved in
  checkpoints) indexes the concatenation of the epochs. Every rollout round draws the next
  ``prompts_per_step`` instances, one group per instance; dynamic sampling's extra rounds draw
  theirs from the same order, so the replacements come from the split (as verl's dataloader
  gives them).
- :class:`Epochs` runs ``epochs`` passes and validates the policy on ``eval_data`` through
  ``solvergym.evaluation`` (:mod:`.validation`; greedy by default, ``eval_samples`` samples each,
  avg@k) into ``out_dir/validation/step_<N>``: every ``eval_every`` steps and after the last step
  (at each epoch's end with ``eval_every=0``), and before the first update with
  ``eval_before_train`` (verl's ``val_before_train``; logged at step -1).
- :class:`EarlyStopping` keeps the best validation score and its step; ``patience``
  validations without a better one end the run; the best model is saved as ``out_dir/best``.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from ...evaluation.runner import read_dataset
from .base import Schedule, Step, TrainerLike
from .validation import evaluate_policy

__all__ = ["Split", "EarlyStopping", "Epochs", "read_split"]


def read_split(path: str) -> list[Any]:
    """The instances of a JSONL file or directory (``--data``, ``--eval-data``)."""
    items = [inst for _, inst in read_dataset(path)]
    if not items:
        raise ValueError(f"{path} holds no instances")
    return items


class Split:
    """A training split in a seeded order per epoch (see the module docstring)."""

    def __init__(self, items: Sequence[Any], seed: int):
        self.items, self.seed = list(items), int(seed)
        self._orders: dict[int, np.ndarray] = {}

    def __len__(self) -> int:
        return len(self.items)

    def order(self, epoch: int) -> np.ndarray:
        if epoch not in self._orders:
            rng = np.random.default_rng(np.random.SeedSequence([self.seed, 7, epoch]))
            self._orders[epoch] = rng.permutation(len(self.items))
        return self._orders[epoch]

    def draw(self, pos: int, k: int) -> list[Any]:
        """The instances at data positions ``pos .. pos + k - 1``."""
        n = len(self.items)
        return [self.items[int(self.order(q // n)[q % n])] for q in range(pos, pos + k)]

    def epoch(self, pos: int) -> float:
        """Epochs completed at data position ``pos`` (fractional)."""
        return pos / len(self.items)


@dataclass
class EarlyStopping:
    """The best validation score so far, its step, and validations since it improved."""

    patience: int | None = None
    best: float | None = None
    best_step: int | None = None
    since_best: int = 0
    validations: int = 0

    def update(self, score: float, step: int) -> bool:
        """Record a validation; True when it is the best so far (strictly better)."""
        self.validations += 1
        if self.best is None or score > self.best:
            self.best, self.best_step, self.since_best = score, step, 0
            return True
        self.since_best += 1
        return False

    @property
    def stop(self) -> bool:
        return self.patience is not None and self.since_best >= self.patience

    def state(self) -> dict[str, Any]:
        return asdict(self)


class Epochs(Schedule):
    """``cfg.epochs`` passes over ``cfg.data``, validated on ``cfg.eval_data`` (module docstring).

    Checkpoints keep the early-stopping record (``stopping``); the data position is the trainer's.
    """

    def __init__(self, cfg: Any):
        self.cfg = cfg
        self.split = Split(read_split(cfg.data), cfg.seed)
        if cfg.eval_data:
            read_split(cfg.eval_data)  # a missing or empty validation split fails now, not after training
        if len(self.split) < cfg.prompts_per_step:
            raise ValueError(f"the training split has {len(self.split)} instances, fewer than "
                             f"prompts_per_step={cfg.prompts_per_step}")
        self.end_pos = cfg.epochs * len(self.split)
        self.steps = math.ceil(self.end_pos / cfg.prompts_per_step)
        self.stopping = EarlyStopping(cfg.patience)
        self._epoch_before = 0  # the epoch the step in progress started in
        self._due = False  # the step just done is to be validated

    def next(self, trainer: TrainerLike) -> Step | None:
        before_training = self.cfg.eval_before_train and trainer.step == 0 and self.stopping.validations == 0
        if self.cfg.eval_data and (self._due or before_training):
            self._validate(trainer)
        self._due = False
        if trainer.data_pos >= self.end_pos or self.stopping.stop:
            return None
        return Step()

    def before_step(self, trainer: TrainerLike) -> dict[str, Any]:
        self._epoch_before = trainer.data_pos // len(self.split)
        return {}

    def draw(self, pos: int, k: int) -> list[Any]:
        return self.split.draw(pos, k)

    def after_step(self, trainer: TrainerLike) -> dict[str, Any]:
        every = self.cfg.eval_every
        last = trainer.data_pos >= self.end_pos
        epoch_done = trainer.data_pos // len(self.split) > self._epoch_before or last
        # every eval_every steps and after the last one (as verl's test_freq), else at epoch ends;
        # dynamic sampling draws its replacements from the split, so the last step is not always
        # a multiple of eval_every
        self._due = bool(every and (trainer.step % every == 0 or last)) or (not every and epoch_done)
        return {"epoch": self.split.epoch(trainer.data_pos)}

    def end(self, trainer: TrainerLike) -> None:
        if self.stopping.stop:
            trainer.log({"step": trainer.step - 1, "early_stop": 1.0, "val_best_step": self.stopping.best_step})

    def state(self) -> dict[str, Any]:
        return {"stopping": self.stopping.state()}

    def load_state(self, state: dict[str, Any]) -> None:
        if state.get("stopping"):
            self.stopping = EarlyStopping(**state["stopping"])

    def _validate(self, trainer: TrainerLike) -> None:
        """Validate, keep the best model, log the row at the step just done (-1: before any update)."""
        cfg = self.cfg
        score = evaluate_policy(trainer, cfg.eval_data, Path(cfg.out_dir) / "validation" / f"step_{trainer.step:06d}",
                                samples=cfg.eval_samples, temperature=cfg.eval_temperature)
        better = self.stopping.update(score, trainer.step - 1)
        if better:
            trainer.save_model(Path(cfg.out_dir) / "best")
        trainer.log({"step": trainer.step - 1, "epoch": self.split.epoch(trainer.data_pos), "val_accuracy": score,
                     "val_best": self.stopping.best, "val_best_step": self.stopping.best_step,
                     "val_improved": float(better)})
