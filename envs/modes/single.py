"""The single-turn mode: the problem's prompt, one answer, the problem's score.

``SingleTurnEnv(problem=name, *knobs, **knobs_and_settings)`` poses any registered problem
(``SolverSAT-v0``, ``SolverSATBench-v0`` and ``SolverOR-v0`` are it with the problem fixed, and
so is the trace mode of the step-verified families). Keyword arguments are the problem's
difficulty knobs (its ``Knobs`` fields; positional arguments fill them in order) and its settings
(its constructor's arguments); ``max_turns``, ``max_action_chars``, ``render_mode`` and
``reward_weights`` are the env's own. ``options["difficulty"]`` changes knobs, validated by the
problem's ``Knobs``.

``max_turns > 1`` lets a problem that supports it (:meth:`~..problem.Problem.revise`) take a
revised answer: while turns remain, an answer the problem sends back (a program that did not run,
with its traceback) earns nothing yet and its feedback is the next observation; the last answer
is scored. An unparseable answer is a format failure on any turn. A step that sends an answer back
leaves out of its ``info`` the keys the problem names private (``private_info``: the ground truth
and what the host knows of it); only the step that ends the episode carries them, for logging.
"""
from __future__ import annotations

from typing import Any, Callable

from ..problem import Problem, Verdict
from .base import Outcome, ProblemEnv

__all__ = ["SingleTurnEnv"]


class SingleTurnEnv(ProblemEnv):
    """One prompt, one answer (see the module docstring)."""

    mode = "single"

    def __init__(self, *knob_args: Any, problem: str | Callable[..., Problem] | None = None, max_turns: int = 1,
                 max_action_chars: int | None = None, render_mode: str | None = None,
                 reward_weights: dict[str, float] | None = None, **kwargs: Any):
        super().__init__(problem, knob_args, max_turns=max_turns, max_action_chars=max_action_chars,
                         render_mode=render_mode, reward_weights=reward_weights, **kwargs)

    def respond(self, text: str) -> Outcome:
        v = self.problem.score(self.instance, text)
        if self._turn + 1 < self.max_turns:
            feedback = self.problem.revise(self.instance, v)
            if feedback is not None:  # turns remain and the problem lets this answer be revised: no reward yet
                private = getattr(self.problem, "private_info", ())
                info = {"correct": False, "reason": v.reason, "revise": True,
                        **{k: x for k, x in v.info.items() if k not in private}}
                return Outcome(dict.fromkeys(v.components, 0.0), False, feedback, info)
        return self._outcome(v)

    def refuse(self, reason: str) -> Outcome:
        return self._outcome(self.problem.unanswered(self.instance, reason))

    def _outcome(self, v: Verdict) -> Outcome:
        info = {"correct": v.correct, "answer": v.answer, "reason": v.reason, **v.info}
        obs = self.problem.feedback(self.instance, v)
        return Outcome(dict(v.components), v.answered, obs, info, error=None if v.answered else v.reason)
