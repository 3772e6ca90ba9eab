"""The single-turn mode: the problem's prompt, one answer, the problem's score.

``SingleTurnEnv(problem=name, **knobs, **settings)`` poses any registered problem; a family's own
id subclasses it to fix the problem (``SATEnv`` is ``SolverSAT-v0``). Keyword arguments are the
problem's difficulty knobs (its ``Knobs`` fields; positional arguments fill them in order) and
its settings (its constructor's arguments); ``max_turns``, ``max_action_chars`` and
``render_mode`` are the env's own. ``options["difficulty"]`` changes knobs, validated by the
problem's ``Knobs``.

``max_turns > 1`` lets a problem that supports it (:meth:`~..problem.Problem.revise`) take a
revised answer: while turns remain, an answer the problem sends back (a program that did not run,
with its traceback) earns nothing yet and its feedback is the next observation; the last answer
is scored. An unparseable answer is a format failure on any turn, as before.
"""
from __future__ import annotations

from typing import Any, Callable, ClassVar

from ..base import Instance, Outcome, TextEnv, _signature_defaults
from ..problem import Knobs, Problem, Verdict, get_problem, settings_defaults

__all__ = ["SingleTurnEnv", "ProblemEnvMixin", "split_kwargs"]


def split_kwargs(factory: Callable[..., Problem], args: tuple, kwargs: dict[str, Any]) -> tuple[dict, dict]:
    """``(knobs, settings)`` of the keyword (and positional knob) arguments an env was given."""
    names = factory.Knobs.names()
    if len(args) > len(names):
        raise TypeError(f"{len(args)} positional arguments, but the difficulty knobs are {list(names)}")
    knobs = dict(zip(names, args))
    settings = settings_defaults(factory)
    for key, value in kwargs.items():
        if key in names:
            if key in knobs:
                raise TypeError(f"difficulty knob {key!r} given twice")
            knobs[key] = value
        elif key not in settings:
            fixed = getattr(factory, "fixed_settings", {})
            why = f" (the problem fixes {key}={fixed[key]!r})" if key in fixed else ""
            raise TypeError(f"unexpected keyword argument {key!r}{why}; the knobs are {list(names)}, "
                            f"the settings {sorted(settings)}")
    return knobs, {k: v for k, v in kwargs.items() if k not in names}


def resolve_problem(problem: str | Callable[..., Problem] | None, default: Callable[..., Problem] | None):
    if problem is None:
        if default is None:
            raise TypeError("give the problem: problem=<a registered name or a Problem class>")
        return default
    return get_problem(problem) if isinstance(problem, str) else problem


class ProblemEnvMixin:
    """Difficulty held as the problem's ``Knobs`` (for :class:`~..base.TextEnv` subclasses)."""

    problem: Problem
    knobs: Knobs

    @property
    def difficulty_keys(self) -> tuple[str, ...]:  # type: ignore[override]
        return self.knobs.names()

    @property
    def difficulty(self) -> dict[str, Any]:
        return self.knobs.as_dict()

    def set_difficulty(self, **kwargs: Any) -> None:
        self.knobs = self.knobs.replace(**kwargs)

    @property
    def concurrent_steps(self) -> bool:
        """Whether stepping several of these envs in threads is safe and pays: the problem's
        score is thread-safe and waits on the sandbox (:attr:`Problem.thread_safe`, ``sandboxed``)."""
        return self.problem.thread_safe and self.problem.sandboxed


class SingleTurnEnv(ProblemEnvMixin, TextEnv):
    """One prompt, one answer (see the module docstring)."""

    #: the problem a subclass poses; ``None``: named by the ``problem`` argument
    problem_cls: ClassVar[Callable[..., Problem] | None] = None

    def __init__(self, *knob_args: Any, problem: str | Callable[..., Problem] | None = None, max_turns: int = 1,
                 max_action_chars: int | None = None, render_mode: str | None = None,
                 reward_weights: dict[str, float] | None = None, **kwargs: Any):
        kw = {} if max_action_chars is None else {"max_action_chars": max_action_chars}
        super().__init__(max_turns=max_turns, render_mode=render_mode, reward_weights=reward_weights, **kw)
        factory = resolve_problem(problem, self.problem_cls)
        knobs, settings = split_kwargs(factory, knob_args, kwargs)
        self.knobs = factory.Knobs.make(**knobs)
        self.problem = factory(**settings)
        self.instance_cls = self.problem.instance_cls
        self.check_reward_weights(self.problem.components)

    @classmethod
    def knobs_class(cls) -> type[Knobs]:
        return resolve_problem(None, cls.problem_cls).Knobs

    @classmethod
    def kwargs_defaults(cls) -> dict[str, Any]:
        factory = resolve_problem(None, cls.problem_cls)
        return {**factory.Knobs.defaults(), **settings_defaults(factory),
                **_signature_defaults(SingleTurnEnv.__init__, skip=("problem",))}

    # -- TextEnv hooks -----------------------------------------------------------------------------
    def generate(self, rng) -> Instance:
        return self.problem.generate(self.knobs, rng)

    def coerce_instance(self, obj: Any) -> Instance:
        return self.problem.coerce(obj)

    def prompt(self, instance: Instance) -> str:
        return self.problem.prompt(instance)

    def describe(self, instance: Instance) -> dict[str, Any]:
        return self.problem.describe(instance)

    def reset_info(self, instance: Instance) -> dict[str, Any]:
        return self.problem.reset_info(instance)

    def evaluate(self, text: str) -> Outcome:
        v = self.problem.score(self.instance, text)
        if self._turn + 1 < self.max_turns:
            feedback = self.problem.revise(self.instance, v)
            if feedback is not None:  # turns remain and the problem lets this answer be revised: no reward yet
                info = {"correct": False, "reason": v.reason, "revise": True, **v.info}
                return Outcome(dict.fromkeys(v.components, 0.0), False, feedback, info)
        return self._outcome(v)

    def format_failure(self, reason: str) -> Outcome:
        return self._outcome(self.problem.unanswered(self.instance, reason))

    def gold(self):
        return self.problem.gold(self.instance)

    def sample_answer(self, rng) -> str:
        return self.problem.sample_answer(self.instance, rng)

    def close(self):
        self.problem.close()
        super().close()

    def _outcome(self, v: Verdict) -> Outcome:
        info = {"correct": v.correct, "answer": v.answer, "reason": v.reason, **v.info}
        obs = self.problem.feedback(self.instance, v)
        return Outcome(dict(v.components), v.answered, obs, info, error=None if v.answered else v.reason)
