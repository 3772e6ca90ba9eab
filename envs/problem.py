"""The problem contract: what a family provides, once. The modes (:mod:`solvergym.envs.modes`)
are env classes built once on any problem. See ``docs/design.md``, "Problems and modes".

A family writes a :class:`Problem` subclass, its core:

- ``name``: how modes and the registry know it (``SolverTool-v0(task=name)``);
- ``instance_cls``: its instance dataclass (JSON types only, :class:`~solvergym.envs.instance.Instance`);
- ``Knobs``: a frozen dataclass whose fields are the difficulty knobs, with their defaults, and
  whose ``validate`` raises ``ValueError`` for a bad setting (the env's ``options["difficulty"]``
  and the registry read them from here; nothing re-lists them);
- ``components``: the reward components :meth:`~Problem.score` returns, named as in its paper;
- ``generate(knobs, rng)``: a new instance, pure and seeded (all randomness from ``rng``); a
  problem with ``stratified = True`` also takes ``stratum`` (:func:`seed_stratum`), for labels
  balanced over consecutive seeds rather than only on average;
- ``prompt(instance)``: the single-turn prompt;
- ``score(instance, text) -> Verdict``: the reward components, whether a final answer was found,
  whether it is correct, why, and the parsed answer;
- ``gold(instance) -> Gold``: ground truth, for oracles only; never shown to a policy;
- ``sample_answer(instance, rng)``: a uniformly random answer in the answer format (the chance
  level a random baseline measures).

Optional capabilities are small objects a problem names, one per mode beyond the single turn
(:mod:`.capabilities`): ``tool`` (what SAT-RL's solver tool use needs: solvers, the statement and
answer format, where a final answer is, the ground-truth formula, the tool rewards and the
family's own reward settings there) and ``steps`` (the session a step-verified episode runs). A
mode checks for the capability it needs and says so when a problem lacks it.

Settings that are not difficulty (a reward's epsilon, a label ratio) are the problem's
constructor arguments. :func:`register_problem` makes a problem available by name to every mode
and, given an env id, registers its env with Gymnasium.
"""
from __future__ import annotations

import dataclasses
import importlib
import inspect
from dataclasses import dataclass, field
from typing import Any, Callable, ClassVar

import gymnasium as gym
import numpy as np

from .instance import Instance

__all__ = [
    "Knobs",
    "NoKnobs",
    "Verdict",
    "Gold",
    "Problem",
    "PROBLEMS",
    "register_problem",
    "get_problem",
    "make_problem",
    "settings_defaults",
    "signature_defaults",
    "seed_stratum",
]

#: 2^64 / the golden ratio: the step of the Weyl sequence :func:`seed_stratum` walks
_GOLDEN_STEP = 0x9E3779B97F4A7C15


def seed_stratum(seed: int, episode: int = 0) -> float:
    """A number in [0, 1) for the ``episode``-th reset after ``reset(seed=seed)`` (0: that one):
    ``frac((seed + episode) / golden ratio)``, a low-discrepancy sequence, so that ``stratum <
    ratio`` holds on within about one instance of ``ratio`` x N of any N consecutive seeds (and of
    N episodes after one seed). A Bernoulli draw from each seed's generator is only right on
    average: seeds 0-199 give 83 of 200 heads (0.415). The label is the seed's; the instance is
    still drawn from the generator, so no policy sees it (SAT-RL §3.1: balanced decisions)."""
    return ((int(seed) + int(episode)) * _GOLDEN_STEP % (1 << 64)) / float(1 << 64)


@dataclass(frozen=True)
class Knobs:
    """Base of a problem's difficulty knobs (subclasses are frozen dataclasses)."""

    def validate(self) -> None:
        """Raise ``ValueError`` for an invalid setting (called by :meth:`make` and :meth:`replace`)."""

    @classmethod
    def names(cls) -> tuple[str, ...]:
        return tuple(f.name for f in dataclasses.fields(cls))

    @classmethod
    def defaults(cls) -> dict[str, Any]:
        return {f.name: f.default for f in dataclasses.fields(cls)}

    @classmethod
    def make(cls, **values: Any) -> "Knobs":
        """Knobs from keyword values (the rest default), normalised and validated."""
        unknown = set(values) - set(cls.names())
        if unknown:
            raise ValueError(f"unknown difficulty keys {sorted(unknown)}; this problem takes {list(cls.names())}")
        knobs = cls(**values)
        knobs = dataclasses.replace(knobs, **knobs.normalise())
        knobs.validate()
        return knobs

    def normalise(self) -> dict[str, Any]:
        """Values to store instead of the given ones (e.g. a tuple of ints as a list)."""
        return {}

    def replace(self, **changes: Any) -> "Knobs":
        """These knobs with ``changes`` (validated); unknown keys are an error."""
        return type(self).make(**{**self.as_dict(), **changes})

    def as_dict(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}


@dataclass(frozen=True)
class NoKnobs(Knobs):
    """A problem without difficulty knobs."""


@dataclass
class Verdict:
    """The score of one answer text: what every family's verifier returns."""

    components: dict[str, float]  # reward components, named as in the family's paper
    answered: bool  # a final answer in the problem's format was found
    correct: bool
    reason: str
    answer: Any = None  # the parsed answer (JSON types)
    info: dict[str, Any] = field(default_factory=dict)  # more info keys (a family's signals)


@dataclass
class Gold:
    """Ground truth of one instance, for oracles only.

    ``answer``: a final answer text that earns the full reward. ``program(solver)``: a correct
    program for that sandbox solver family (tool mode). ``after_tool(stdout)``: the oracle's final
    turn in tool mode once the program's output is back (``None``: ``answer``); ``plan``: its
    thought before the call. ``steps``: for the step mode, the actions of a full-reward episode
    in order.
    """

    answer: str
    program: Callable[[str], str] | None = None
    after_tool: Callable[[str | None], str] | None = None
    #: the oracle's thought before its tool call (``{solver}`` is filled in)
    plan: str = "I will write a program for {solver} and run it."
    steps: list[str] | None = None

    def final_after_tool(self, stdout: str | None) -> str:
        return self.answer if self.after_tool is None else self.after_tool(stdout)


def signature_defaults(fn: Callable[..., Any], skip: tuple[str, ...] = ()) -> dict[str, Any]:
    """The keyword parameters of ``fn`` that have defaults, and the defaults (``self`` and
    ``**kwargs`` excluded): a constructor's settings, a mode's own keywords."""
    return {name: p.default for name, p in inspect.signature(fn).parameters.items()
            if name not in ("self", *skip) and p.default is not inspect.Parameter.empty
            and p.kind is not p.VAR_KEYWORD}


class Problem:
    """One family of problems (see the module docstring). Subclasses set the class attributes and
    implement :meth:`generate`, :meth:`prompt`, :meth:`score`, :meth:`gold`, :meth:`sample_answer`."""

    #: the name modes and the tool env know it by (``SolverTool-v0(task=name)``)
    name: ClassVar[str] = ""
    instance_cls: ClassVar[type[Instance]] = Instance
    Knobs: ClassVar[type[Knobs]] = NoKnobs
    #: reward components of :meth:`score`, in order
    components: ClassVar[tuple[str, ...]] = ()
    #: the tool mode's capability (a :class:`~.capabilities.ToolCapability` subclass; ``None``: no tool mode)
    tool: ClassVar[type | None] = None
    #: the step mode's capability (a :class:`~.capabilities.StepCapability` subclass; ``None``: no step mode)
    steps: ClassVar[type | None] = None
    #: :meth:`score` keeps no shared in-process state, so episodes may be stepped in threads
    #: (Z3's main context, which the step-verified families use, is not thread-safe)
    thread_safe: ClassVar[bool] = False
    #: :meth:`score` runs the answer's program in the sandbox (so threads overlap the waits)
    sandboxed: ClassVar[bool] = False
    #: :meth:`generate` takes ``stratum=`` (:func:`seed_stratum`, from the mode): its labels are
    #: balanced over consecutive seeds
    stratified: ClassVar[bool] = False
    #: settings a problem fixes and a caller may not give (name -> the value it uses)
    fixed_settings: ClassVar[dict[str, Any]] = {}

    @classmethod
    def settings_defaults(cls) -> dict[str, Any]:
        """The settings (constructor keywords) and their defaults: those of ``__init__``'s
        signature unless a subclass takes them another way."""
        return signature_defaults(cls.__init__)

    # -- instances ---------------------------------------------------------------------------------
    def generate(self, knobs: Knobs, rng: np.random.Generator) -> Instance:
        """A new instance at ``knobs``; every draw from ``rng`` (pure, seeded)."""
        raise NotImplementedError

    def coerce(self, obj: Any) -> Instance:
        """The instance dataclass (validated once), its ``dict`` or its JSON text -> an instance."""
        return self.instance_cls.coerce(obj)

    def describe(self, instance: Instance) -> dict[str, Any]:
        """``info["difficulty"]``: the knob values of ``instance`` (it may come from a dataset)."""
        return {}

    def reset_info(self, instance: Instance) -> dict[str, Any]:
        """Extra ``info`` keys at reset (a variable mapping...). Never the ground truth."""
        return {}

    # -- text --------------------------------------------------------------------------------------
    def prompt(self, instance: Instance) -> str:
        """The single-turn prompt (the problem and how to answer it)."""
        raise NotImplementedError

    def answer_hint(self, instance: Instance) -> str:
        """The answer format, as feedback on a format failure states it."""
        return "```answer ...```"

    def feedback(self, instance: Instance, verdict: Verdict) -> str:
        """The single-turn env's observation after ``verdict`` (answered or not)."""
        if not verdict.answered:
            return f"Format error: {verdict.reason}. Answer in the format {self.answer_hint(instance)}."
        return ("Correct: " if verdict.correct else "Incorrect: ") + verdict.reason + "."

    # -- scoring -----------------------------------------------------------------------------------
    def score(self, instance: Instance, text: str) -> Verdict:
        raise NotImplementedError

    def revise(self, instance: Instance, verdict: Verdict) -> str | None:
        """In a multi-turn single-turn-mode episode (``max_turns > 1``) with turns left: the
        observation that sends ``verdict``'s answer back for revision, or ``None`` to score it now
        (the default: every answer is final)."""
        return None

    def unanswered(self, instance: Instance, reason: str) -> Verdict:
        """The verdict for an action that is not valid text at all (too long, not UTF-8): what
        :meth:`score` gives a text with no answer in it (every component 0 unless overridden)."""
        return Verdict(dict.fromkeys(self.components, 0.0), False, False, reason)

    # -- for agents --------------------------------------------------------------------------------
    def gold(self, instance: Instance) -> Gold:
        raise NotImplementedError

    def sample_answer(self, instance: Instance, rng: np.random.Generator) -> str:
        """A uniformly random answer in the problem's format."""
        raise NotImplementedError

    def close(self) -> None:
        """Release what the problem holds (a sandbox lease); the env's ``close`` calls it."""


#: name -> factory of the problem (its keyword arguments are the problem's settings), or the
#: ``"module:attribute"`` path of one (imported when first asked for, so that ``import solvergym``
#: does not import every family's solvers)
PROBLEMS: dict[str, Callable[..., Problem] | str] = {}


def register_problem(factory: Callable[..., Problem] | str, *, name: str | None = None, env_id: str | None = None,
                     **env_kwargs: Any) -> None:
    """Make ``factory`` (a :class:`Problem` subclass, a callable returning one, or its
    ``"module:attribute"`` path) available by ``name`` (default ``factory.name``) to every mode;
    with ``env_id``, also register its env with Gymnasium: ``gym.make(env_id, **knobs,
    **settings)`` is its single-turn mode, and ``mode="step"`` / ``mode="tool"`` its other modes
    where it has the capability (:func:`~solvergym.envs.modes.make_env`)."""
    if isinstance(factory, str):
        if not name or ":" not in factory:
            raise ValueError("a problem given by path needs a name and the form 'module:attribute'")
    else:
        name = name or getattr(factory, "name", "")
        if not name or not callable(factory):
            raise ValueError("register_problem needs a Problem factory with a name")
    PROBLEMS[name] = factory
    if env_id is not None and env_id not in gym.registry:
        gym.register(id=env_id, entry_point="solvergym.envs.modes:make_env", kwargs={"problem": name, **env_kwargs})


def get_problem(name: str) -> Callable[..., Problem]:
    """The factory registered as ``name``."""
    if name not in PROBLEMS:
        raise ValueError(f"unknown problem {name!r}; known: {sorted(PROBLEMS)}")
    factory = PROBLEMS[name]
    if isinstance(factory, str):
        module, _, attr = factory.partition(":")
        factory = PROBLEMS[name] = getattr(importlib.import_module(module), attr)
    return factory


def make_problem(name: str, **settings: Any) -> Problem:
    return get_problem(name)(**settings)


def settings_defaults(factory: Callable[..., Problem]) -> dict[str, Any]:
    """The settings a problem's constructor takes, with their defaults (a :class:`Problem`
    subclass says so itself; any other factory by its signature)."""
    if isinstance(factory, type) and issubclass(factory, Problem):
        return factory.settings_defaults()
    return signature_defaults(factory)
