"""``SolverOR-v0``: the ``or`` problem (:mod:`.problem`, SIRL) in the single-turn mode, SIRL's setting."""
from __future__ import annotations

from ..modes.single import SingleTurnEnv
from .problem import ORKnobs, ORProblem

__all__ = ["OREnv", "ORKnobs", "ORProblem"]


class OREnv(SingleTurnEnv):
    """``SolverOR-v0`` (see :class:`~..modes.single.SingleTurnEnv` and :class:`~.problem.ORProblem`)."""

    problem_cls = ORProblem
