"""``SolverZebra-v0``: the ``zebra`` problem (:mod:`.problem`) in trace mode (Spring's setting) or
step mode, the step-verified env of :mod:`~..logic_steps.env`."""
from __future__ import annotations

from ..logic_steps.env import StepVerifiedEnv
from .problem import ZebraKnobs, ZebraProblem

__all__ = ["ZebraEnv", "ZebraKnobs", "ZebraProblem"]


class ZebraEnv(StepVerifiedEnv):
    """``SolverZebra-v0`` (see :class:`~..logic_steps.env.StepVerifiedEnv` and :class:`~.problem.ZebraProblem`)."""

    problem_cls = ZebraProblem
