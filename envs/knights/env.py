"""``SolverKnights-v0``: the ``knights`` problem (:mod:`.problem`) in trace mode (Spring's setting) or
step mode, the step-verified env of :mod:`~..logic_steps.env`."""
from __future__ import annotations

from ..logic_steps.env import StepVerifiedEnv
from .problem import KnightsKnobs, KnightsProblem

__all__ = ["KnightsEnv", "KnightsKnobs", "KnightsProblem"]


class KnightsEnv(StepVerifiedEnv):
    """``SolverKnights-v0`` (see :class:`~..logic_steps.env.StepVerifiedEnv` and :class:`~.problem.KnightsProblem`)."""

    problem_cls = KnightsProblem
