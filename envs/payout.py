"""Paying an episode's return as it changes: what has been paid so far, per reward component.

Used by every mode that pays before the episode ends: the single and tool modes under
``reward_timing="per_call"`` (:mod:`.modes.base`) and Spring's step mode (its running value).
"""
from __future__ import annotations

__all__ = ["Payout"]


class Payout:
    """What an episode has paid so far, per component, so that a step can pay the change in what
    stands (``reward_timing="per_call"``).

    An episode's return is a function of what stands at its end (the last answer, SAT-RL's *last*
    tool call, §3.4): paying each step ``standing_t - standing_{t-1}`` telescopes to exactly that
    return, whatever step the episode ends on, so a wrapper that truncates it keeps what its steps
    earned. The change may be negative: a later tool call that fails loses what the earlier one
    earned, as the end-of-episode reward would. With ``"end"`` timing nothing is paid before the
    last step, and :meth:`pay` of the final components pays them whole. Spring's step mode pays
    the change of its running value with it too (:mod:`~solvergym.envs.logic_steps.steps`).
    """

    def __init__(self) -> None:
        self.paid: dict[str, float] = {}

    def reset(self) -> None:
        self.paid = {}

    def pay(self, standing: dict[str, float]) -> dict[str, float]:
        """The components to pay now so that the episode has paid ``standing`` in all."""
        delta = {k: float(v) - self.paid.get(k, 0.0) for k, v in standing.items()}
        self.paid = {k: float(v) for k, v in standing.items()}
        return delta
