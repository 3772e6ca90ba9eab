"""SATURN's curriculum as the training loop's schedule (``saturn.txt`` App. A, Algorithm 1; the
controller is :mod:`.curriculum`).

``TrainConfig.curriculum`` holds :class:`~.curriculum.CurriculumConfig`'s fields (Table 6). The
schedule answers the controller's requests between steps:

- an evaluation request is pass@1 of the policy on the validation set, one sample per instance at
  the training temperature, through ``solvergym.evaluation`` (:mod:`.validation`): the set is
  written to ``out_dir/curriculum/<NNN>_<kind>.jsonl`` and evaluated into the run directory of
  the same name;
- a training request (SATURN's "GRPO step" on ``Train_size`` instances) is one pass over the set,
  ``prompts_per_step`` instances per trainer step (a last part smaller than that is not trained).

Each step's row carries the level it trained at; the last row, the level reached. Checkpoints keep
the controller's history and the steps done on the pending training set (``curriculum``); a
resumed run rebuilds the controller from the history and goes on with that set.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from .base import Schedule, Step, TrainerLike
from .curriculum import CurriculumConfig, Evaluate, SaturnCurriculum
from .validation import evaluate_policy

__all__ = ["SaturnSchedule"]


class SaturnSchedule(Schedule):
    """Steps as SATURN's Algorithm 1 asks for them; see the module docstring."""

    steps = None  # Algorithm 1 decides as it goes

    def __init__(self, cfg: Any):
        settings = dict(cfg.curriculum)
        if "initial" in settings:
            settings["initial"] = tuple(settings["initial"])
        self.settings = CurriculumConfig(**settings)
        self.cfg = cfg
        self.curriculum = SaturnCurriculum(self.settings, seed=cfg.seed)
        self.trained = 0  # trainer steps done on the pending training set

    def next(self, trainer: TrainerLike) -> Step | None:
        cur, per_step = self.curriculum, self.cfg.prompts_per_step
        while cur.request is not None:
            request = cur.request
            if isinstance(request, Evaluate):
                cur.advance(self._pass_at_1(trainer, request))
            elif (self.trained + 1) * per_step <= len(request.instances):
                start = self.trained * per_step
                return Step(request.instances[start:start + per_step])
            else:  # the pass over the training set is done: so is Algorithm 1's GRPO step
                self.trained = 0
                cur.advance()
        return None

    def before_step(self, trainer: TrainerLike) -> dict[str, Any]:
        return {"curriculum_level": list(self.curriculum.level)}

    def after_step(self, trainer: TrainerLike) -> dict[str, Any]:
        self.trained += 1
        return {}

    def end(self, trainer: TrainerLike) -> None:
        trainer.log({"step": trainer.step, "curriculum_level": list(self.curriculum.level)})

    def state(self) -> dict[str, Any]:
        return {"curriculum": {"level": list(self.curriculum.level), "history": self.curriculum.history_dicts(),
                               "trained": self.trained}}

    def load_state(self, state: dict[str, Any]) -> None:
        saved = state.get("curriculum")
        if saved:
            self.curriculum = SaturnCurriculum.replay(self.settings, self.cfg.seed, saved["history"])
            self.trained = saved.get("trained", 0)

    def _pass_at_1(self, trainer: TrainerLike, request: Evaluate) -> float:
        """pass@1 on the request's validation set (one sample each, at the training temperature)."""
        done = sum(e.kind in ("estimate", "validate") for e in self.curriculum.history)
        name = f"{done:03d}_{request.kind}"
        root = Path(self.cfg.out_dir) / "curriculum"
        if trainer.acc.is_main_process:
            root.mkdir(parents=True, exist_ok=True)
            (root / f"{name}.jsonl").write_text("".join(inst.to_json() + "\n" for inst in request.instances))
        return evaluate_policy(trainer, str(root / f"{name}.jsonl"), root / name, samples=1,
                               temperature=self.cfg.temperature)
