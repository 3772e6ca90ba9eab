"""``SolverLSAT-v0``: the ``lsat`` problem (:mod:`.problem`) in trace mode (Spring's setting) or
step mode, the step-verified env of :mod:`~..logic_steps.env`."""
from __future__ import annotations

from ..logic_steps.env import StepVerifiedEnv
from .problem import LSATKnobs, LSATProblem

__all__ = ["LSATEnv", "LSATKnobs", "LSATProblem"]


class LSATEnv(StepVerifiedEnv):
    """``SolverLSAT-v0`` (see :class:`~..logic_steps.env.StepVerifiedEnv` and :class:`~.problem.LSATProblem`)."""

    problem_cls = LSATProblem
