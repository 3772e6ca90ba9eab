"""SATURN's curriculum controller (``saturn.txt`` §2.1, App. A: Algorithm 1 and Table 6).

The controller owns the loop and the data; the model is two callables, so any trainer plugs in::

    evaluate(instances) -> pass@1 in [0, 1]      # Curriculum Estimation Loop
    train(instances) -> None                     # one GRPO (or DAPO, ...) step on a training set

Algorithm 1, literally::

    for t in range(iterations):
        val = SAT_Construction(n, k, l, Val_size); p = evaluate(val)
        if p >= epsilon: (n, k, l) = Increase_difficulty(n, k, l)      # l += D_step
        else:
            for i in range(max_steps_per_level):
                train(SAT_Construction(n, k, l, Train_size))           # disjoint from val
                val = SAT_Construction(n, k, l, Val_size); p = evaluate(val)
                if p >= epsilon: break

Note that a level mastered inside the training loop is only left at the next iteration's
estimation step, as in the paper. Every decision is recorded in :attr:`SaturnCurriculum.history`.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Sequence

import numpy as np

from .cnf import formula_key
from .generator import SATInstance, sat_construction

__all__ = ["CurriculumConfig", "CurriculumEvent", "SaturnCurriculum"]


@dataclass(frozen=True)
class CurriculumConfig:
    """Table 6. Defaults are SATURN-1.5B's column; :meth:`saturn_7b` gives the other."""

    initial: tuple[int, int, int] = (3, 5, 5)
    epsilon: float = 0.5  # pass@1 threshold
    train_size: int = 250
    val_size: int = 40
    d_step: int = 1  # Increase_difficulty: l += d_step
    iterations: int = 2  # curriculum iterations
    max_steps_per_level: int = 10  # max GRPO steps per level

    @classmethod
    def saturn_1_5b(cls) -> "CurriculumConfig":
        return cls()

    @classmethod
    def saturn_7b(cls) -> "CurriculumConfig":
        return cls(initial=(3, 5, 13), epsilon=0.75, d_step=2)

    def __post_init__(self):
        if not 0.0 <= self.epsilon <= 1.0:
            raise ValueError(f"epsilon must be in [0, 1], got {self.epsilon}")
        for name in ("train_size", "val_size", "d_step", "iterations", "max_steps_per_level"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1")


@dataclass(frozen=True)
class CurriculumEvent:
    kind: str  # "estimate" | "advance" | "train" | "validate"
    iteration: int
    level: tuple[int, int, int]
    pass_at_1: float | None = None
    step: int | None = None


@dataclass
class SaturnCurriculum:
    """Run Algorithm 1 with ``evaluate`` / ``train`` callables; see the module docstring."""

    evaluate: Callable[[Sequence[SATInstance]], float]
    train: Callable[[Sequence[SATInstance]], Any]
    config: CurriculumConfig = field(default_factory=CurriculumConfig)
    seed: int = 0
    history: list[CurriculumEvent] = field(default_factory=list)

    def __post_init__(self):
        self.level: tuple[int, int, int] = tuple(self.config.initial)
        self._rng = np.random.default_rng(self.seed)

    @staticmethod
    def increase_difficulty(level: tuple[int, int, int], d_step: int) -> tuple[int, int, int]:
        """App. A: ``Increase_difficulty(n, k, l) = (n, k, l + D_step)``."""
        n, k, l = level
        return n, k, l + d_step

    def _validate(self) -> tuple[list[SATInstance], float]:
        val = sat_construction(*self.level, self.config.val_size, self._rng)
        p = float(self.evaluate(val))
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"evaluate() must return pass@1 in [0, 1], got {p}")
        return val, p

    def run(self) -> tuple[int, int, int]:
        """Run every iteration; return the final level."""
        cfg = self.config
        for t in range(cfg.iterations):
            val, p = self._validate()
            self.history.append(CurriculumEvent("estimate", t, self.level, p))
            if p >= cfg.epsilon:
                self.level = self.increase_difficulty(self.level, cfg.d_step)
                self.history.append(CurriculumEvent("advance", t, self.level))
                continue
            for i in range(cfg.max_steps_per_level):
                exclude = {formula_key(x.clauses) for x in val}
                train_set = sat_construction(*self.level, cfg.train_size, self._rng, exclude=exclude)
                self.train(train_set)
                self.history.append(CurriculumEvent("train", t, self.level, step=i))
                val, p = self._validate()
                self.history.append(CurriculumEvent("validate", t, self.level, p, step=i))
                if p >= cfg.epsilon:
                    break
        return self.level

    def levels_visited(self) -> list[tuple[int, int, int]]:
        out: list[tuple[int, int, int]] = []
        for e in self.history:
            if not out or out[-1] != e.level:
                out.append(e.level)
        return out

    def history_dicts(self) -> list[dict[str, Any]]:
        return [asdict(e) for e in self.history]
