"""The modes: env classes built once on any :class:`~solvergym.envs.problem.Problem`, and
:func:`make_env`, which builds the one a problem's env id is asked for.

- :class:`~.single.SingleTurnEnv` (``"single"``; the step-verified families call it their trace
  mode, ``"trace"``): one prompt, one answer, scored by the problem.
- :class:`~.tool.SolverToolEnv` (``"tool"``): SAT-RL's multi-turn solver tool use over any problem
  with a ``tool`` capability (``SolverTool-v0(task=name)``).
- :class:`~.step.StepEnv` (``"step"``): one session per episode, an action per step, over any
  problem with a ``steps`` capability (the Spring families' step-verified mode).

All three are :class:`~.base.ProblemEnv`: one env contract, one assembly of an env from a
problem's knobs, settings and capability settings.
"""
from __future__ import annotations

from typing import Any, Callable

from ..problem import Problem
from .base import ProblemEnv, resolve_problem
from .single import SingleTurnEnv
from .step import StepEnv
from .tool import SolverToolEnv

__all__ = ["MODES", "ProblemEnv", "SingleTurnEnv", "SolverToolEnv", "StepEnv", "make_env", "mode_class", "modes_of"]

#: mode name -> env class (``"trace"`` is the single turn's name for a step-verified family)
MODES: dict[str, type[ProblemEnv]] = {"single": SingleTurnEnv, "trace": SingleTurnEnv, "tool": SolverToolEnv,
                                      "step": StepEnv}


def mode_class(mode: str) -> type[ProblemEnv]:
    if mode not in MODES:
        raise ValueError(f"mode must be one of {list(MODES)}, got {mode!r}")
    return MODES[mode]


def modes_of(problem: str | Callable[..., Problem]) -> tuple[str, ...]:
    """The modes ``problem`` has: the single turn always, ``tool`` and ``step`` where it has the
    capability."""
    factory = resolve_problem(problem)
    return ("single", *(["tool"] if getattr(factory, "tool", None) else []),
            *(["step"] if getattr(factory, "steps", None) else []))


def make_env(problem: str | Callable[..., Problem], *knob_args: Any, mode: str = "single", **kwargs: Any) -> ProblemEnv:
    """The env of ``mode`` posing ``problem`` (the entry point of a problem's env id:
    ``gym.make("SolverZebra-v0", mode="step")``). The tool mode takes no positional knobs.

    One id takes the keywords of every mode it offers, so one configuration serves them all: a
    setting of another mode's capability (``step_credit`` in trace mode) is validated and not
    passed on."""
    cls = mode_class(mode)
    own = cls.capability_of(resolve_problem(problem))
    for other in _capabilities(problem):
        if other is not own:
            theirs = {k: kwargs.pop(k) for k in list(kwargs) if k in other.settings_defaults()
                      and (own is None or k not in own.settings_defaults())}
            other.validate_settings(theirs)
    if cls is SolverToolEnv:
        if knob_args:
            raise TypeError("the tool mode takes its difficulty knobs as keywords")
        return SolverToolEnv(problem, **kwargs)
    return cls(*knob_args, problem=problem, **kwargs)


def _capabilities(problem: str | Callable[..., Problem]) -> list[type]:
    factory = resolve_problem(problem)
    return [c for c in (getattr(factory, "tool", None), getattr(factory, "steps", None)) if c is not None]


make_env.metadata = ProblemEnv.metadata  # gymnasium.make reads the entry point's render modes
