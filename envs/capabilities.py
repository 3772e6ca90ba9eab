"""The optional capabilities of a problem: what the tool and step modes need beyond the core.

A problem names each capability it has by class (``Problem.tool``, ``Problem.steps``); a mode
instantiates it with the problem and the capability's own settings (``cls(problem, **settings)``)
and uses nothing else of the problem but its core. The defaults delegate to the core, so a family
whose tool mode scores as its single turn does overrides only what differs.

**Tool** (:class:`ToolCapability`, SAT-RL §3.4, App. C): the sandbox solver families whose
programs fit the problem, the problem as the tool prompt states it and its answer format, where
a turn's final answer is, whether ```idk``` is an answer, the tool rewards it takes (``tool``,
and ``equivalence`` when the family states a ground-truth formula, :meth:`ToolCapability.truth`),
the libraries the sandbox rehearses, and the family's own reward settings in tool mode
(:attr:`ToolCapability.settings`: SAT's ``eps`` and ``wrong_penalty``; every capability with the
``equivalence`` reward also takes :data:`EQUIVALENCE_SETTINGS`).

**Steps** (:class:`StepCapability`): one :class:`StepSession` per episode, which answers each
action with its :class:`Outcome` (a step-verified family verifies one reasoning step per action
and pays its process reward as it arrives), the step mode's prompt and its gold episode.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from .equivalence import AUXILIARY, DEFAULT_TIMEOUT_MS, EQUIVALENCE_RULES, EquivalenceVerdict, Truth, check_equivalence
from .instance import Instance
from .parsing import fenced_blocks, is_final_answer
from .problem import Gold, Problem, Verdict

__all__ = ["ToolCapability", "StepCapability", "StepSession", "Outcome", "EQUIVALENCE_SETTINGS",
           "check_capability_settings"]

#: the ``equivalence`` reward's settings: Z3's budget per check, and how a program variable that
#: aligns with no instance variable is read (``"reject"``: SAT-RL's aligned variables; ``"exists"``)
EQUIVALENCE_SETTINGS: dict[str, Any] = {"equivalence_timeout_ms": DEFAULT_TIMEOUT_MS, "auxiliary": "reject",
                                         "equivalence_rule": "exact"}


@dataclass
class Outcome:
    """What a mode makes of one action: the components it pays now, whether the episode ends on
    it (a final answer), the next observation, more ``info`` and the format error, if any."""

    reward_components: dict[str, float]
    answered: bool
    observation: str
    info: dict[str, Any] = field(default_factory=dict)
    error: str | None = None


def check_capability_settings(owner: str, defaults: dict[str, Any], given: dict[str, Any]) -> dict[str, Any]:
    """``given`` completed with ``defaults``; a name not among them is a ``TypeError``."""
    unknown = sorted(set(given) - set(defaults))
    if unknown:
        raise TypeError(f"{owner} got unexpected keyword argument(s) {unknown}; its settings are {sorted(defaults)}")
    return {**defaults, **given}


class ToolCapability:
    """What the tool mode needs of a problem (see the module docstring).

    Subclass it next to the problem, set the class attributes and override what differs from the
    single turn; name it as the problem's ``tool``. ``self.problem`` is the problem posed and
    ``self.settings`` the capability's settings (:meth:`settings_defaults`, completed).
    """

    #: the sandbox solver families whose programs fit this problem (SAT-RL §3.1's five, and the
    #: optimisation libraries); the mode samples one per instance and names it in the prompt
    solvers: ClassVar[tuple[str, ...]] = ()
    #: the tool mode's rewards added to the problem's (SAT-RL §3.4: ``tool``, and ``equivalence``,
    #: which needs :meth:`truth`)
    rewards: ClassVar[tuple[str, ...]] = ("tool", "equivalence")
    #: whether ```idk``` is an answer (SAT-RL eq. 1 pays it 0)
    allows_idk: ClassVar[bool] = True
    #: words a bare fence may hold as the final answer (```yes```, SAT-RL App. E.1)
    bare_answers: ClassVar[tuple[str, ...]] = ()
    #: the libraries the sandbox rehearses before this problem's programs arrive, when the
    #: episode's solver is not one (``SandboxPool.run(rehearse=...)``)
    rehearse: ClassVar[tuple[str, ...]] = ()
    #: what the prompt says the sandbox holds
    sandbox_text: ClassVar[str] = "z3, pysmt, python-sat (import pysat), ortools and sympy"
    #: the family's own reward settings in tool mode: name -> default
    settings: ClassVar[dict[str, Any]] = {}

    def __init__(self, problem: Problem, **settings: Any):
        self.problem = problem
        self.settings = self.validate_settings(settings)

    @classmethod
    def settings_defaults(cls) -> dict[str, Any]:
        """The settings the tool mode takes for this problem, with their defaults."""
        # a family's own default for an equivalence setting wins (Synthetic-Logic: auxiliary="exists")
        return {**(EQUIVALENCE_SETTINGS if "equivalence" in cls.rewards else {}), **cls.settings}

    @classmethod
    def validate_settings(cls, settings: dict[str, Any]) -> dict[str, Any]:
        """``settings`` completed with the defaults; ``TypeError`` for an unknown name,
        ``ValueError`` for a bad value (a subclass checks its own)."""
        out = check_capability_settings(f"{cls.__name__}", cls.settings_defaults(), settings)
        if "equivalence" in cls.rewards and out["auxiliary"] not in AUXILIARY:
            raise ValueError(f"auxiliary must be 'reject' or 'exists', got {out['auxiliary']!r}")
        if "equivalence" in cls.rewards and out["equivalence_rule"] not in EQUIVALENCE_RULES:
            raise ValueError(f"equivalence_rule must be one of {EQUIVALENCE_RULES}, got {out['equivalence_rule']!r}")
        return out

    @property
    def components(self) -> tuple[str, ...]:
        """The components of :meth:`score` (the mode adds :attr:`rewards`)."""
        return self.problem.components

    # -- the prompt --------------------------------------------------------------------------------
    def statement(self, instance: Instance) -> str:
        """The problem alone, as the tool prompt embeds it after "Problem Statement:"."""
        return self.problem.prompt(instance)

    def answer_hint(self, instance: Instance) -> str:
        """The answer format, as the tool prompt and format errors state it."""
        return self.problem.answer_hint(instance)

    def variable_mapping(self, instance: Instance) -> str | None:
        """The "Variable Mapping" block of the tool prompt (SAT-RL App. C), or ``None``."""
        return None

    def naming_hint(self, instance: Instance) -> str | None:
        """How the tool prompt asks programs to name the variables, or ``None``."""
        return None

    def reset_info(self, instance: Instance) -> dict[str, Any]:
        """Extra ``info`` keys at reset in tool mode."""
        return self.problem.reset_info(instance)

    # -- the answer --------------------------------------------------------------------------------
    def final_answer_span(self, text: str) -> tuple[int, int] | None:
        """Where a turn's final answer is (``(start, end)`` offsets), or ``None`` when the turn has
        none: by default the last ```answer``` / ```idk``` fence (and a bare fence of
        :attr:`bare_answers`); fences pair left to right, so one inside a program is part of it."""
        answers = [b for b in fenced_blocks(text) if is_final_answer(b, self.bare_answers)]
        return (answers[-1].start, answers[-1].end) if answers else None

    def score(self, instance: Instance, text: str) -> Verdict:
        """The final answer's components (the single turn's score unless the tool protocol asks
        for another answer format)."""
        return self.problem.score(instance, text)

    def unanswered(self, instance: Instance, reason: str) -> Verdict:
        return self.problem.unanswered(instance, reason)

    def truth(self, instance: Instance) -> Truth | None:
        """The ground-truth formula the ``equivalence`` reward proves the program's formula
        against, or ``None``."""
        return None

    def equivalence(self, instance: Instance, formula: dict[str, Any] | None) -> EquivalenceVerdict:
        """SAT-RL §3.4's check of a captured formula against :meth:`truth`, with this
        capability's settings (a verdict with a reason, never an exception)."""
        truth = self.truth(instance)
        if truth is None:
            return EquivalenceVerdict("unsupported", f"task {self.problem.name!r} has no Boolean ground truth")
        return check_equivalence(formula, truth, timeout_ms=int(self.settings["equivalence_timeout_ms"]),
                                 auxiliary=self.settings["auxiliary"], rule=self.settings["equivalence_rule"])

    # -- for agents --------------------------------------------------------------------------------
    def gold(self, instance: Instance) -> Gold:
        """The gold answer, with a correct program per solver (``Gold.program``)."""
        return self.problem.gold(instance)

    def sample_answer(self, instance: Instance, rng: np.random.Generator) -> str:
        return self.problem.sample_answer(instance, rng)


class StepSession:
    """One step-mode episode of one instance: :meth:`step` answers each action."""

    def step(self, text: str) -> Outcome:
        """The outcome of one well-formed text action (``answered``: the episode ends on it)."""
        raise NotImplementedError

    def invalid(self, reason: str) -> Outcome:
        """The outcome of an action that is not valid text at all (too long, not UTF-8)."""
        raise NotImplementedError

    def sample_answer(self, rng: np.random.Generator) -> str:
        """A uniformly random action of the form the session expects next."""
        raise NotImplementedError


class StepCapability:
    """What the step mode needs of a problem (see the module docstring). ``self.problem`` is the
    problem posed and ``self.settings`` the mode's settings for it (:attr:`settings`, completed)."""

    #: the step mode's settings for this problem: name -> default
    settings: ClassVar[dict[str, Any]] = {}
    #: the step mode's turn budget unless the caller gives ``max_turns``
    default_max_turns: ClassVar[int] = 256

    def __init__(self, problem: Problem, **settings: Any):
        self.problem = problem
        self.settings = self.validate_settings(settings)

    @classmethod
    def settings_defaults(cls) -> dict[str, Any]:
        return dict(cls.settings)

    @classmethod
    def validate_settings(cls, settings: dict[str, Any]) -> dict[str, Any]:
        """``settings`` completed with the defaults; ``TypeError`` for an unknown name,
        ``ValueError`` for a bad value (a subclass checks its own)."""
        return check_capability_settings(f"{cls.__name__}", cls.settings_defaults(), settings)

    @property
    def components(self) -> tuple[str, ...]:
        return self.problem.components

    def max_turns(self) -> int:
        """The turn budget of an episode unless the caller gives one."""
        return self.default_max_turns

    def prompt(self, instance: Instance) -> str:
        """The step mode's first observation."""
        return self.problem.prompt(instance)

    def reset_info(self, instance: Instance) -> dict[str, Any]:
        return self.problem.reset_info(instance)

    def session(self, instance: Instance) -> StepSession:
        """A new episode of ``instance``."""
        raise NotImplementedError

    def gold(self, instance: Instance) -> Gold:
        """The gold episode: ``Gold.steps`` are a full-reward episode's actions in order."""
        raise NotImplementedError
