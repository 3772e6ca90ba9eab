"""SATURN's curriculum controller (``saturn.txt`` §2.1, App. A: Algorithm 1 and Table 6).

Algorithm 1 is written out once, literally, as a generator (:meth:`SaturnCurriculum._algorithm_1`)
that asks for what it needs instead of calling a model: an :class:`Evaluate` request (pass@1 on a
validation set: the Curriculum Estimation Loop, and the re-validation after each training step)
or a :class:`Train` request (one GRPO step on a training set disjoint from the validation set).
Whoever holds the model answers them: :meth:`SaturnCurriculum.run` with two callables, or the
training loop through :class:`~solvergym.algorithms.schedules.saturn.SaturnSchedule`::

    for t in range(iterations):
        val = SAT_Construction(n, k, l, Val_size); p = evaluate(val)
        if p >= epsilon: (n, k, l) = Increase_difficulty(n, k, l)      # l += D_step
        else:
            for i in range(max_steps_per_level):
                train(SAT_Construction(n, k, l, Train_size))           # disjoint from val
                val = SAT_Construction(n, k, l, Val_size); p = evaluate(val)
                if p >= epsilon: break

A level mastered inside the training loop is only left at the next iteration's estimation step,
as in the paper. Every decision is recorded in :attr:`SaturnCurriculum.history`; the controller
draws its instances from its own seeded stream, so the history alone rebuilds it
(:meth:`SaturnCurriculum.replay`, what a resumed run does). Pure: no model, no trainer.
"""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from typing import Any, Callable, Generator, Sequence

import numpy as np

from ...envs.sat.cnf import formula_key
from ...envs.sat.generator import SATInstance, sat_construction

__all__ = ["CurriculumConfig", "CurriculumEvent", "Evaluate", "Train", "SaturnCurriculum"]

Level = tuple[int, int, int]


@dataclass(frozen=True)
class CurriculumConfig:
    """Table 6. Defaults are SATURN-1.5B's column; :meth:`saturn_7b` gives the other."""

    initial: Level = (3, 5, 5)
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
    level: Level
    pass_at_1: float | None = None
    step: int | None = None


@dataclass(frozen=True)
class Evaluate:
    """Algorithm 1 asks for pass@1 on ``instances``: ``kind`` "estimate" (Step 1, the Curriculum
    Estimation Loop) or "validate" (Step 2, after a training step)."""

    instances: list[SATInstance]
    kind: str


@dataclass(frozen=True)
class Train:
    """Algorithm 1 asks for one GRPO step on ``instances`` (``LLM = GRPO(LLM, D_train)``)."""

    instances: list[SATInstance]


class SaturnCurriculum:
    """Algorithm 1 as a sequence of requests; see the module docstring.

    :attr:`request` is the pending request (``None`` once Algorithm 1 has returned); answer it
    with :meth:`advance`.
    """

    def __init__(self, config: CurriculumConfig = CurriculumConfig(), seed: int = 0):
        self.config = config
        self.level: Level = tuple(config.initial)
        self.history: list[CurriculumEvent] = []
        self._rng = np.random.default_rng(seed)
        self._loop = self._algorithm_1()
        self.request: Evaluate | Train | None = next(self._loop)

    @staticmethod
    def increase_difficulty(level: Level, d_step: int) -> Level:
        """App. A: ``Increase_difficulty(n, k, l) = (n, k, l + D_step)``."""
        n, k, l = level
        return n, k, l + d_step

    def _algorithm_1(self) -> Generator[Evaluate | Train, float | None, None]:
        """SATURN Alg. 1; each ``yield`` is a request, an Evaluate one answered with pass@1."""
        cfg = self.config
        for t in range(cfg.iterations):
            # Step 1: Curriculum Estimation Loop
            val = sat_construction(*self.level, cfg.val_size, self._rng)
            p = yield Evaluate(val, "estimate")
            self.history.append(CurriculumEvent("estimate", t, self.level, p))
            if p >= cfg.epsilon:
                self.level = self.increase_difficulty(self.level, cfg.d_step)
                self.history.append(CurriculumEvent("advance", t, self.level))
                continue
            # Step 2: LLM Training Loop (only if pass@1 < epsilon)
            for i in range(cfg.max_steps_per_level):
                exclude = {formula_key(x.clauses) for x in val}
                yield Train(sat_construction(*self.level, cfg.train_size, self._rng, exclude=exclude))
                self.history.append(CurriculumEvent("train", t, self.level, step=i))
                val = sat_construction(*self.level, cfg.val_size, self._rng)
                p = yield Evaluate(val, "validate")
                self.history.append(CurriculumEvent("validate", t, self.level, p, step=i))
                if p >= cfg.epsilon:
                    break

    def advance(self, pass_at_1: float | None = None) -> Evaluate | Train | None:
        """Answer the pending request (pass@1 for an :class:`Evaluate`, nothing for a
        :class:`Train` once the step is done); returns the next one, ``None`` at the end."""
        if self.request is None:
            raise RuntimeError("Algorithm 1 has ended: there is no request to answer")
        answer = None
        if isinstance(self.request, Evaluate):
            answer = float(pass_at_1)
            if not 0.0 <= answer <= 1.0:
                raise ValueError(f"pass@1 must be in [0, 1], got {answer}")
        try:
            self.request = self._loop.send(answer)
        except StopIteration:
            self.request = None
        return self.request

    def run(self, evaluate: Callable[[Sequence[SATInstance]], float],
            train: Callable[[Sequence[SATInstance]], Any]) -> Level:
        """Answer every request with ``evaluate(instances) -> pass@1`` and ``train(instances)``
        until Algorithm 1 returns; returns the final level."""
        while self.request is not None:
            if isinstance(self.request, Evaluate):
                self.advance(evaluate(self.request.instances))
            else:
                train(self.request.instances)
                self.advance()
        return self.level

    @classmethod
    def replay(cls, config: CurriculumConfig, seed: int, history: list[dict[str, Any]]) -> "SaturnCurriculum":
        """The controller that recorded ``history`` (:meth:`history_dicts`), at the request that
        followed it: Algorithm 1 again on the same stream, each evaluation answered with its
        recorded pass@1 and each training step taken as done, so nothing is evaluated or trained."""
        cur = cls(config, seed)
        answers = iter([e["pass_at_1"] for e in history if e["kind"] in ("estimate", "validate")])
        while len(cur.history) < len(history) and cur.request is not None:
            cur.advance(next(answers) if isinstance(cur.request, Evaluate) else None)
        if _plain(cur.history_dicts()) != _plain(history):
            raise ValueError("the recorded curriculum history is not what this configuration and seed give")
        return cur

    def levels_visited(self) -> list[Level]:
        out: list[Level] = []
        for e in self.history:
            if not out or out[-1] != e.level:
                out.append(e.level)
        return out

    def history_dicts(self) -> list[dict[str, Any]]:
        return [asdict(e) for e in self.history]


def _plain(x: Any) -> Any:
    """``x`` as JSON gives it back (tuples become lists), to compare with a checkpoint's copy."""
    return json.loads(json.dumps(x))
