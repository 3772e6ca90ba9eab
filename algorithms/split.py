"""Training on a fixed split for epochs, with validation, early stopping and the best checkpoint.

The papers train this way: SAT-RL on SAT-Bench's 1,575 training instances for 2 epochs, testing
every step (Table 8); Spring for up to 25 epochs with early stopping at a patience of 3 epochs,
reporting the checkpoint with the best validation score (§5.1(d)). With ``TrainConfig.data``:

- :class:`Split` is the data order: epoch ``e`` visits the instances in a permutation seeded by
  ``(seed, e)``, and the trainer's data position (instances consumed so far, saved in
  checkpoints) indexes the concatenation of the epochs. Every rollout round draws the next
  ``prompts_per_step`` instances, one group per instance; dynamic sampling's extra rounds draw
  theirs from the same order, so the replacements come from the split.
- :func:`validate` runs the validation split through ``solvergym.evaluation`` (the same runner,
  records and report as ``solvergym eval``; greedy by default, ``eval_samples`` samples each, avg@k),
  into ``out_dir/validation/step_<N>``, on the main process: every ``eval_every`` steps and after
  the last step (at each epoch's end with ``eval_every=0``), and before the first update with
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

from ..agents.hf import SamplingConfig
from ..evaluation.report import write_report
from ..evaluation.runner import EvalConfig, load_records, read_dataset, run_eval

__all__ = ["Split", "EarlyStopping", "read_split", "validate", "train_epochs"]


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


def validate(trainer: Any) -> float:
    """avg@k of the policy on the validation split (main process; every process gets the score)."""
    cfg = trainer.cfg
    score = 0.0
    if trainer.acc.is_main_process:
        if cfg.rollout_backend == "vllm":
            trainer.policy.sync_weights(trainer.unwrapped)
        t = cfg.eval_temperature
        saved = trainer.policy.sampling
        trainer.policy.sampling = SamplingConfig(max_new_tokens=cfg.max_new_tokens, temperature=max(t, 1e-6),
                                                 greedy=t == 0.0, top_p=cfg.top_p,
                                                 repetition_penalty=cfg.repetition_penalty)
        try:
            ecfg = EvalConfig(cfg.env, agent=f"policy@step{trainer.step}", env_kwargs=dict(cfg.env_kwargs),
                              dataset=cfg.eval_data, n_samples=cfg.eval_samples, ks=[cfg.eval_samples],
                              seeds=[cfg.seed], temperature=t, max_new_tokens=cfg.max_new_tokens)
            run = run_eval(ecfg, Path(cfg.out_dir) / "validation" / f"step_{trainer.step:06d}",
                           agent=trainer.policy, progress=False)
        finally:
            trainer.policy.sampling = saved
        write_report(run, png=False)
        records = load_records(run)
        score = sum(r["correct"] for r in records) / max(1, len(records))
    return float(trainer.broadcast_scalar(score))


def _validate_and_log(trainer: Any, split: Split) -> None:
    """Validate, keep the best model, log the row at the step just done (-1: before any update)."""
    score = validate(trainer)
    better = trainer.stopping.update(score, trainer.step - 1)
    if better:
        trainer.save_model(Path(trainer.cfg.out_dir) / "best")
    trainer._log({"step": trainer.step - 1, "epoch": split.epoch(trainer.data_pos),
                 "val_accuracy": score, "val_best": trainer.stopping.best,
                 "val_best_step": trainer.stopping.best_step, "val_improved": float(better)})


def train_epochs(trainer: Any) -> list[dict[str, Any]]:
    """``cfg.epochs`` passes over the split, validating every ``eval_every`` steps (0: at each
    epoch's end), stopping early with ``patience``; the final and the best model are saved."""
    from tqdm import tqdm

    cfg, split = trainer.cfg, trainer.split
    end = cfg.epochs * len(split)
    bar = tqdm(total=math.ceil(end / cfg.prompts_per_step), initial=trainer.step, unit="step",
               desc=f"{cfg.algo} {cfg.env} ({cfg.epochs} epochs of {len(split)})",
               disable=not (cfg.progress and trainer.acc.is_main_process))
    if cfg.eval_before_train and trainer.val_items is not None and trainer.step == 0:
        _validate_and_log(trainer, split)
    while trainer.data_pos < end and not trainer.stopping.stop:
        epoch_before = trainer.data_pos // len(split)
        s = trainer.train_step()
        bar.update(1)
        bar.set_postfix(reward=f"{s.get('reward', float('nan')):.3f}", epoch=f"{split.epoch(trainer.data_pos):.2f}")
        last = trainer.data_pos >= end
        epoch_done = trainer.data_pos // len(split) > epoch_before or last
        # every eval_every steps and after the last one (as verl's test_freq), else at epoch ends;
        # dynamic sampling draws its replacements from the split, so the last step is not always
        # a multiple of eval_every
        due = cfg.eval_every and (trainer.step % cfg.eval_every == 0 or last)
        if trainer.val_items is not None and (due or (not cfg.eval_every and epoch_done)):
            _validate_and_log(trainer, split)
        if cfg.save_every and trainer.step % cfg.save_every == 0 and trainer.data_pos < end:
            trainer.save_checkpoint()
    bar.close()
    if trainer.stopping.stop:
        trainer._log({"step": trainer.step - 1, "early_stop": 1.0, "val_best_step": trainer.stopping.best_step})
    trainer.save_checkpoint()
    trainer.save_model(Path(cfg.out_dir) / "final")
    return trainer.history
