"""The step mode: the agent reasons step by step inside its own loop, and every action is judged
as it arrives, by the session the problem's ``steps`` capability opens for the episode
(:class:`~solvergym.envs.capabilities.StepCapability`).

The Spring families (Zebra, Knights & Knaves, AR-LSAT) are its step-verified problems: premises
first, then one ``S<k>:`` step per action, verified against the premises and the steps accepted
so far and paid as they arrive (their capability, :mod:`solvergym.envs.logic_steps.steps`), then
the solution; ``gym.make("SolverZebra-v0", mode="step")`` is this mode.

Keywords: the problem's knobs and settings, the capability's settings (Spring: ``step_credit``),
and the mode's own: ``max_turns`` (default the capability's, 256 for the Spring families),
``max_action_chars``, ``render_mode``, ``reward_weights``.
"""
from __future__ import annotations

from typing import Any, Callable

from ..capabilities import StepSession
from ..problem import Gold, Problem
from .base import Outcome, ProblemEnv

__all__ = ["StepEnv"]


class StepEnv(ProblemEnv):
    """One session per episode; each action is one step of it (see the module docstring)."""

    mode = "step"
    capability_name = "steps"

    def __init__(self, *knob_args: Any, problem: str | Callable[..., Problem] | None = None,
                 max_turns: int | None = None, max_action_chars: int | None = None, render_mode: str | None = None,
                 reward_weights: dict[str, float] | None = None, **kwargs: Any):
        # the turn budget is the capability's unless given; ProblemEnv checks it once known
        super().__init__(problem, knob_args, max_turns=max_turns or 1, max_action_chars=max_action_chars,
                         render_mode=render_mode, reward_weights=reward_weights, **kwargs)
        self.steps = self.capability
        if max_turns is None:
            self.max_turns = self.steps.max_turns()
        self._session: StepSession | None = None

    @property
    def components(self) -> tuple[str, ...]:
        return self.capability.components

    @property
    def session(self) -> StepSession | None:
        """The current episode's session (``None`` before the first reset)."""
        return self._session

    def first_observation(self, instance):
        return self.steps.prompt(instance)

    def reset_info(self, instance):
        return self.steps.reset_info(instance)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        self._session = None
        obs, info = super().reset(seed=seed, options=options)
        self._session = self.steps.session(self.instance)
        return obs, info

    def respond(self, text: str) -> Outcome:
        return self._session.step(text)

    def refuse(self, reason: str) -> Outcome:
        return self._session.invalid(reason)

    def gold(self) -> Gold:
        """The gold episode: ``Gold.steps`` are its actions in order, ``Gold.answer`` the last."""
        return self.steps.gold(self.instance)

    def sample_answer(self, rng) -> str:
        return self._session.sample_answer(rng)
