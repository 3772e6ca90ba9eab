"""The env contract every mode keeps, and the one assembly of an env from a problem.

A mode is a ``gymnasium.Env[str, str]`` built on any :class:`~solvergym.envs.problem.Problem`
(docs/design.md, "Contracts"):

- ``reset(seed=None, options=None) -> (obs, info)``. The same seed gives the same instance, byte
  for byte (all randomness flows from ``self.np_random``). ``options`` may hold
  ``"instance"`` (evaluate a given instance: the family's dataclass, its ``dict`` or its JSON
  text) and ``"difficulty"`` (a ``dict`` of the problem's difficulty knobs; the change persists
  for later resets, which is what a curriculum wants). Any other key is an error. A dataclass
  that was already validated and is unchanged since (:meth:`~solvergym.envs.instance.Instance.coerce`),
  or that an env's own generator made, is not validated again.
- ``step(action) -> (obs, reward, terminated, truncated, info)``. ``reward`` is the sum of
  ``info["reward_components"]``; with ``reward_weights`` (every env's keyword: component ->
  weight, 1 for the others) each component is paid times its weight and the values as computed
  are in ``info["reward_components_computed"]`` (``{"equivalence": 0.0}``: computed and logged,
  not paid). ``terminated`` when a final answer was given, and always with ``max_turns=1`` (the
  one response is the answer, whatever its form); ``truncated`` when a multi-turn episode used
  its ``max_turns`` without a final answer. Bad input (not a ``str``, non-UTF-8 ``bytes``,
  control characters, over the size bound, unparseable) never raises: it is a format failure
  with the problem's reward, an explanatory observation and ``info["error"]``. Stepping a
  finished episode raises :class:`gymnasium.error.ResetNeeded`.
- ``max_turns`` is a multi-turn episode's budget; the ids are registered without a Gymnasium step
  limit. With ``max_turns > 1`` the single and tool modes keep one retry rule (:mod:`.single`):
  an episode's return (the sum of its rewards) is the reward of the answer that stands, the last
  one; a verdict that a retry replaces counts for nothing in it. ``reward_timing`` (single and tool modes) says *when* the return
  is paid: ``"end"`` (default, the papers') on the step that ends the episode, which a
  ``TimeLimit`` wrapper (``max_episode_steps``) that cuts the episode short never reaches;
  ``"per_call"`` on every step the change in what stands (:class:`~solvergym.envs.payout.Payout`), so the episode's sum
  is the same and a truncated episode keeps what its steps earned.
- ``info`` always carries ``instance_id``, ``difficulty``, ``turn`` and ``messages`` (the
  conversation as chat messages), the reset's also ``mode``; the step that ends an episode also carries ``correct`` (bool:
  the final answer is right), which evaluation and training metrics read whatever the
  problem's reward components are called.

:class:`ProblemEnv` is that contract, once. A mode subclasses it and answers actions
(:meth:`ProblemEnv.respond`, :meth:`ProblemEnv.refuse`); the constructor assembles the env from
a problem: positional arguments fill the difficulty knobs in order, keyword arguments are knobs
(the problem's ``Knobs`` fields), the problem's settings (its constructor's arguments), the
mode's capability's settings (:mod:`~solvergym.envs.capabilities`) and the mode's own keywords.
These hooks are for modes, not families: a family writes a problem.
"""
from __future__ import annotations

import copy
from typing import Any, Callable, ClassVar

import gymnasium as gym
import numpy as np
from gymnasium.error import ResetNeeded

from ..capabilities import Outcome
from ..instance import Instance
from ..parsing import DEFAULT_MAX_ACTION_CHARS
from ..problem import Knobs, Problem, get_problem, seed_stratum, settings_defaults, signature_defaults
from ..text import DEFAULT_MAX_OBSERVATION_CHARS, TextSpace, validate_action

__all__ = ["ProblemEnv", "Outcome", "REWARD_TIMINGS", "resolve_problem", "split_kwargs", "check_weights",
           "check_reward_timing"]

#: when a multi-turn episode's return is paid: on its last step (the papers'), or as it changes
REWARD_TIMINGS = ("end", "per_call")


def resolve_problem(problem: str | Callable[..., Problem] | None) -> Callable[..., Problem]:
    """A registered problem's name or a problem factory -> the factory."""
    if problem is None:
        raise TypeError("give the problem: problem=<a registered name or a Problem class>")
    return get_problem(problem) if isinstance(problem, str) else problem


def split_kwargs(factory: Callable[..., Problem], capability: type | None, args: tuple,
                 kwargs: dict[str, Any]) -> tuple[dict, dict, dict]:
    """``(knobs, problem settings, capability settings)`` of the arguments an env was given:
    positional arguments fill the knobs in order; a keyword is a knob, else one of the problem's
    settings, else one of the capability's; anything else is a ``TypeError`` that lists them."""
    names = factory.Knobs.names()
    if len(args) > len(names):
        raise TypeError(f"{len(args)} positional arguments, but the difficulty knobs are {list(names)}")
    knobs = dict(zip(names, args))
    settings = settings_defaults(factory)
    own = capability.settings_defaults() if capability is not None else {}
    problem_kw: dict[str, Any] = {}
    capability_kw: dict[str, Any] = {}
    for key, value in kwargs.items():
        if key in names:
            if key in knobs:
                raise TypeError(f"difficulty knob {key!r} given twice")
            knobs[key] = value
        elif key in settings:
            problem_kw[key] = value
        elif key in own:
            capability_kw[key] = value
        else:
            fixed = getattr(factory, "fixed_settings", {})
            why = f" (the problem fixes {key}={fixed[key]!r})" if key in fixed else ""
            raise TypeError(f"unexpected keyword argument {key!r}{why}; the knobs are {list(names)}, "
                            f"the settings {sorted({**settings, **own})}")
    return knobs, problem_kw, capability_kw


def check_weights(weights: Any) -> dict[str, float]:
    """``reward_weights``: component name -> a finite weight its computed value is paid times."""
    if weights is None:
        return {}
    if not isinstance(weights, dict) or not all(isinstance(k, str) for k in weights):
        raise ValueError(f"reward_weights must map component names to numbers, got {weights!r}")
    out = {}
    for k, w in weights.items():
        if isinstance(w, bool) or not isinstance(w, (int, float)) or not np.isfinite(w):
            raise ValueError(f"reward_weights[{k!r}] must be a finite number, got {w!r}")
        out[k] = float(w)
    return out


def check_reward_timing(timing: Any) -> str:
    """``reward_timing``: one of :data:`REWARD_TIMINGS`."""
    if timing not in REWARD_TIMINGS:
        raise ValueError(f"reward_timing must be one of {list(REWARD_TIMINGS)}, got {timing!r}")
    return timing


class ProblemEnv(gym.Env[str, str]):
    """A mode's env over one problem (see the module docstring)."""

    metadata: ClassVar[dict[str, Any]] = {"render_modes": ["ansi", "human"], "render_fps": 4}
    #: the mode's name (``info["mode"]``; ``make_env(mode=...)``)
    mode: ClassVar[str] = ""
    #: the problem attribute naming the capability this mode needs (``"tool"``, ``"steps"``), or
    #: ``None``: the core contract is enough
    capability_name: ClassVar[str | None] = None

    def __init__(self, problem: str | Callable[..., Problem] | None, knob_args: tuple = (), *,
                 max_turns: int, max_action_chars: int | None = None, render_mode: str | None = None,
                 reward_weights: dict[str, float] | None = None, max_observation_chars: int = DEFAULT_MAX_OBSERVATION_CHARS,
                 **kwargs: Any):
        if max_turns < 1:
            raise ValueError(f"max_turns must be >= 1, got {max_turns}")
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be one of {self.metadata['render_modes']}, got {render_mode!r}")
        self.max_turns = int(max_turns)
        self.render_mode = render_mode
        self.observation_space = TextSpace(max_observation_chars)
        self.action_space = TextSpace(DEFAULT_MAX_ACTION_CHARS if max_action_chars is None else max_action_chars)
        self.reward_weights = check_weights(reward_weights)
        factory = resolve_problem(problem)
        cap_cls = self.capability_of(factory)
        knobs, settings, cap_settings = split_kwargs(factory, cap_cls, knob_args, kwargs)
        self.knobs: Knobs = factory.Knobs.make(**knobs)
        self.problem: Problem = factory(**settings)
        self.capability = cap_cls(self.problem, **cap_settings) if cap_cls is not None else None
        self.check_reward_weights()
        self.instance: Instance | None = None
        self._turn = 0
        self._since_seed = -1  # resets since the generator was last seeded (reset adds one)
        self._done = True
        self._messages: list[dict[str, str]] = []
        self._last_obs = ""
        self._instance_info: dict[str, Any] = {}

    def check_reward_weights(self) -> None:
        """Refuse ``reward_weights`` naming a component this env does not compute (a typo would
        otherwise silently pay everything)."""
        unknown = sorted(set(self.reward_weights) - set(self.components))
        if unknown:
            raise ValueError(f"reward_weights names {unknown}, which {type(self).__name__} does not compute; "
                             f"its components are {list(self.components)}")

    # -- assembly ----------------------------------------------------------------------------------
    @classmethod
    def capability_of(cls, factory: Callable[..., Problem]) -> type | None:
        """The capability class this mode needs of ``factory``'s problems (``ValueError`` when
        they lack it)."""
        if cls.capability_name is None:
            return None
        cap = getattr(factory, cls.capability_name, None)
        if cap is None:
            name = getattr(factory, "name", None) or getattr(factory, "__name__", repr(factory))
            raise ValueError(f"problem {name!r} has no {cls.mode} mode (no {cls.capability_name!r} capability)")
        return cap

    @classmethod
    def own_kwargs(cls) -> dict[str, Any]:
        """The mode's own keywords and their defaults (its constructor's, problem excluded)."""
        return signature_defaults(cls.__init__, skip=("problem",))

    @classmethod
    def kwargs_defaults(cls, problem: str | Callable[..., Problem]) -> dict[str, Any]:
        """Every keyword argument the mode takes posing ``problem``, and its default: the
        difficulty knobs, the problem's settings, the capability's settings, the mode's own."""
        factory = resolve_problem(problem)
        cap = cls.capability_of(factory)
        return {**factory.Knobs.defaults(), **settings_defaults(factory),
                **(cap.settings_defaults() if cap is not None else {}), **cls.own_kwargs()}

    @property
    def components(self) -> tuple[str, ...]:
        """The reward components every step of this env reports, in order."""
        return self.problem.components

    @property
    def difficulty(self) -> dict[str, Any]:
        """The current difficulty knobs as a dict (``options["difficulty"]`` changes them)."""
        return self.knobs.as_dict()

    @property
    def turn(self) -> int:
        """Steps taken in the current episode."""
        return self._turn

    @property
    def concurrent_steps(self) -> bool:
        """Whether stepping several of these envs in threads is safe and pays: the problem's
        score is thread-safe and waits on the sandbox (:attr:`Problem.thread_safe`, ``sandboxed``)."""
        return self.problem.thread_safe and self.problem.sandboxed

    # -- what a mode answers -----------------------------------------------------------------------
    def generate(self, rng: np.random.Generator) -> Instance:
        """A new instance at the current knobs, every draw from ``rng``."""
        return self.generate_problem(rng)

    def generate_problem(self, rng: np.random.Generator) -> Instance:
        """The problem's instance at the current knobs; a stratified problem also gets the
        stratum of this seed and episode (:func:`~solvergym.envs.problem.seed_stratum`)."""
        if not self.problem.stratified:
            return self.problem.generate(self.knobs, rng)
        stratum = seed_stratum(self.np_random_seed, self._since_seed)
        return self.problem.generate(self.knobs, rng, stratum=stratum)

    def coerce_instance(self, obj: Any) -> Instance:
        """``options["instance"]`` as an instance (validated once)."""
        return self.problem.coerce(obj)

    def describe(self, instance: Instance) -> dict[str, Any]:
        return self.problem.describe(instance)

    def first_observation(self, instance: Instance) -> str:
        return self.problem.prompt(instance)

    def reset_info(self, instance: Instance) -> dict[str, Any]:
        return self.problem.reset_info(instance)

    def respond(self, text: str) -> Outcome:
        """The outcome of one well-formed text action against ``self.instance``."""
        raise NotImplementedError

    def refuse(self, reason: str) -> Outcome:
        """The outcome of an action that is not valid text at all (``validate_action`` failed)."""
        raise NotImplementedError

    # -- for agents --------------------------------------------------------------------------------
    def gold(self):
        """The ground truth of the current instance (:class:`~solvergym.envs.problem.Gold`), for
        oracles only (``agents/scripted.py``); never part of an observation or ``info``."""
        return self.problem.gold(self.instance)

    def sample_answer(self, rng: np.random.Generator) -> str:
        """A uniformly random answer in the format the env expects next (a random baseline)."""
        return self.problem.sample_answer(self.instance, rng)

    # -- gymnasium API -----------------------------------------------------------------------------
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        super().reset(seed=seed)
        # the episodes since the generator was seeded: a stratified problem's label stream
        self._since_seed = 0 if seed is not None else self._since_seed + 1
        options = dict(options or {})
        unknown = set(options) - {"instance", "difficulty"}
        if unknown:
            raise ValueError(f"unknown reset options {sorted(unknown)}; use 'instance' or 'difficulty'")
        if options.get("difficulty") is not None:
            if not isinstance(options["difficulty"], dict):
                raise TypeError("options['difficulty'] must be a dict of difficulty knobs")
            self.knobs = self.knobs.replace(**options["difficulty"])
        if options.get("instance") is not None:
            self.instance = self.coerce_instance(options["instance"])
        else:
            self.instance = self.generate(self.np_random)
            # valid by construction: handed to another env (a group follower), it is not checked
            self.instance.mark_validated()
        self._instance_info = {"instance_id": self.instance.instance_id, "difficulty": self.describe(self.instance)}
        self._turn = 0
        self._done = False
        obs = self.first_observation(self.instance)
        self._messages = [{"role": "user", "content": obs}]
        self._last_obs = obs
        info = self._base_info()
        info["mode"] = self.mode
        info.update(self.reset_info(self.instance))
        return obs, info

    def step(self, action: Any):
        if self.instance is None:
            raise ResetNeeded("Cannot call step() before reset().")
        if self._done:
            raise ResetNeeded("This episode has ended (terminated or truncated); call reset() before step().")
        text, error = validate_action(action, self.action_space.max_length)
        outcome = self.refuse(error) if error is not None else self.respond(text)
        self._turn += 1
        # A single-turn task's one response is its final answer, whatever its form; only a
        # multi-turn episode can run out of turns without one (a truncation).
        terminated = bool(outcome.answered) or self.max_turns == 1
        truncated = not terminated and self._turn >= self.max_turns
        self._done = terminated or truncated
        obs = outcome.observation
        self._messages.append({"role": "assistant", "content": text})
        if not self._done:
            self._messages.append({"role": "user", "content": obs})
        self._last_obs = obs
        components = {k: float(v) for k, v in outcome.reward_components.items()}
        info = self._base_info()
        if self.reward_weights:  # every component is computed; each is paid times its weight
            info["reward_components_computed"] = components
            components = {k: v * self.reward_weights.get(k, 1.0) for k, v in components.items()}
        info["reward_components"] = components
        info.update(outcome.info)
        if outcome.error is not None:
            info["error"] = outcome.error
        if self.render_mode == "human":
            self.render()
        return obs, float(sum(components.values())), terminated, truncated, info

    def render(self):
        if self.render_mode == "ansi":
            return self._last_obs
        if self.render_mode == "human":
            print(self._last_obs)
        return None

    def close(self):
        self.problem.close()
        super().close()

    def _base_info(self) -> dict[str, Any]:
        return {
            **copy.deepcopy(self._instance_info),  # fresh objects: callers keep and mutate infos
            "turn": self._turn,
            "messages": [dict(m) for m in self._messages],
        }
