"""The single-turn mode: the problem's prompt, one answer, the problem's score.

``SingleTurnEnv(problem=name, *knobs, **knobs_and_settings)`` poses any registered problem
(``SolverSAT-v0``, ``SolverSATBench-v0`` and ``SolverOR-v0`` are it with the problem fixed, and
so is the trace mode of the step-verified families). Keyword arguments are the problem's
difficulty knobs (its ``Knobs`` fields; positional arguments fill them in order) and its settings
(its constructor's arguments); ``max_turns``, ``max_action_chars``, ``render_mode``,
``reward_weights``, ``reward_timing`` and ``retry_penalty`` are the env's own. ``options["difficulty"]`` changes knobs, validated by the
problem's ``Knobs``.

**Retries** (``max_turns > 1``, the one rule of every mode with retries; base.py's contract): while
turns remain, an answer that fails to parse (a format failure) or that the problem sends back
(:meth:`~..problem.Problem.revise`: SolverOR-v0's program that did not run, with its traceback)
is *retried*: its feedback is the next observation and the agent answers again; any other answer,
and whatever the last turn holds, is final. The episode's return is the verdict of the answer
that stands, the last one: a retried turn's own verdict counts for nothing (its components are in
``info["verdict_components"]``, not paid), so ``max_turns=2`` pays a wrong-format-then-correct
SAT episode +1 and a failed-then-failed one the second failure's reward, on the same scale as
``max_turns=1``. Why: a retry replaces its answer, so paying the replaced one would make the
return depend on how many tries it took rather than on what was answered (a format failure's -1
and a correct retry's +1 summed to 0, below a first-try ```idk```), and would pay one problem's
retries and not another's. ``retry_penalty`` (default 0.0: none) pays ``-retry_penalty`` per
retry as the extra component ``retry``, for who wants tries to cost. A retried step leaves out of
its ``info`` the keys the problem names private (``private_info``: the ground truth and what the
host knows of it); only the step that ends the episode carries them, for logging.

``reward_timing``: ``"end"`` (default) pays the return on the step that ends the episode and 0
before; ``"per_call"`` pays every turn the change in the standing verdict
(:class:`~solvergym.envs.payout.Payout`), the same sum, which a ``TimeLimit`` wrapper that cuts the episode short
keeps.
"""
from __future__ import annotations

import math
from typing import Any, Callable

from ..problem import Problem, Verdict
from ..payout import Payout
from .base import Outcome, ProblemEnv, check_reward_timing

__all__ = ["SingleTurnEnv", "RETRY"]

#: the component a retry pays ``-retry_penalty`` in (present only with a ``retry_penalty``)
RETRY = "retry"


class SingleTurnEnv(ProblemEnv):
    """One prompt, one answer, retried while turns remain (see the module docstring)."""

    mode = "single"

    def __init__(self, *knob_args: Any, problem: str | Callable[..., Problem] | None = None, max_turns: int = 1,
                 max_action_chars: int | None = None, render_mode: str | None = None,
                 reward_weights: dict[str, float] | None = None, reward_timing: str = "end",
                 retry_penalty: float = 0.0, **kwargs: Any):
        self.reward_timing = check_reward_timing(reward_timing)
        if isinstance(retry_penalty, bool) or not isinstance(retry_penalty, (int, float)) \
                or not math.isfinite(retry_penalty) or retry_penalty < 0:
            raise ValueError(f"retry_penalty must be a finite number >= 0, got {retry_penalty!r}")
        self.retry_penalty = float(retry_penalty)
        self.payout = Payout()
        super().__init__(problem, knob_args, max_turns=max_turns, max_action_chars=max_action_chars,
                         render_mode=render_mode, reward_weights=reward_weights, **kwargs)
        if self.retry_penalty and RETRY in self.problem.components:
            raise ValueError(f"problem {self.problem.name!r} has a component named {RETRY!r}: no retry_penalty")

    @property
    def components(self) -> tuple[str, ...]:
        return (*self.problem.components, *((RETRY,) if self.retry_penalty else ()))

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        self.payout.reset()
        return super().reset(seed=seed, options=options)

    def respond(self, text: str) -> Outcome:
        return self._judged(self.problem.score(self.instance, text))

    def refuse(self, reason: str) -> Outcome:
        return self._judged(self.problem.unanswered(self.instance, reason))

    def _judged(self, v: Verdict) -> Outcome:
        """The retry rule, once for every problem: retried while turns remain, else final."""
        if self._turn + 1 < self.max_turns:
            feedback = self.problem.feedback(self.instance, v) if not v.answered else self.problem.revise(self.instance, v)
            if feedback is not None:
                return self._retried(v, feedback)
        return self._final(v)

    def _retried(self, v: Verdict, feedback: str) -> Outcome:
        private = getattr(self.problem, "private_info", ())
        info = {"correct": False, "answer": v.answer, "reason": v.reason, "revise": True,
                "verdict_components": {k: float(x) for k, x in v.components.items()},
                **{k: x for k, x in v.info.items() if k not in private}}
        if self.reward_timing == "per_call":  # the retried answer stands until the next one
            components = self.payout.pay(dict(v.components))
        else:
            components = dict.fromkeys(v.components, 0.0)
        if self.retry_penalty:
            components[RETRY] = -self.retry_penalty
        return Outcome(components, False, feedback, info, error=None if v.answered else v.reason)

    def _final(self, v: Verdict) -> Outcome:
        info = {"correct": v.correct, "answer": v.answer, "reason": v.reason, **v.info}
        obs = self.problem.feedback(self.instance, v)
        components = self.payout.pay(dict(v.components))  # "end": nothing paid yet, the whole verdict
        if self.retry_penalty:
            components[RETRY] = 0.0
        return Outcome(components, v.answered, obs, info, error=None if v.answered else v.reason)
