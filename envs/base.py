"""The text-environment contract every solvergym env keeps (docs/design.md, "Contracts").

An env is a ``gymnasium.Env[str, str]``:

- ``reset(seed=None, options=None) -> (obs, info)``. The same seed gives the same instance, byte
  for byte (all randomness flows from ``self.np_random``). ``options`` may hold
  ``"instance"`` (evaluate a given instance: the family's dataclass, its ``dict`` or its JSON
  text) and ``"difficulty"`` (a ``dict`` of the family's difficulty knobs; the change persists
  for later resets, which is what a curriculum wants). Any other key is an error. A dataclass
  that was already validated and is unchanged since (see :meth:`Instance.coerce`), or that an
  env's own generator made, is not validated again.
- ``step(action) -> (obs, reward, terminated, truncated, info)``. ``reward`` is the sum of
  ``info["reward_components"]``; with ``reward_weights`` (every env's keyword: component ->
  weight, 1 for the others) each component is paid times its weight and the values as computed
  are in ``info["reward_components_computed"]`` (``{"equivalence": 0.0}``: computed and logged,
  not paid). ``terminated`` when a final answer was given, and always in a
  single-turn env (``max_turns=1``: the one response is the answer, whatever its form);
  ``truncated`` when a multi-turn episode used its ``max_turns`` without a final answer (a
  format failure there gets its reward and an explanatory observation, and the agent may retry). Bad input (not a ``str``, non-UTF-8 ``bytes``,
  control characters, over the size bound, unparseable) never raises: it is a format failure
  with the family's reward, an explanatory observation and ``info["error"]``. Stepping a
  finished episode raises :class:`gymnasium.error.ResetNeeded`.
- ``info`` always carries ``instance_id``, ``difficulty``, ``turn`` and ``messages`` (the
  conversation as chat messages); the step that ends an episode also carries ``correct`` (bool:
  the final answer is right), which evaluation and training metrics read whatever the family's
  reward components are called.

A family implements five hooks: :meth:`TextEnv.generate`, :meth:`TextEnv.prompt`,
:meth:`TextEnv.evaluate`, :meth:`TextEnv.format_failure` and the class attributes
``instance_cls`` / ``difficulty_keys``.
"""
from __future__ import annotations

import copy
import inspect
import dataclasses
import hashlib
import json
import re
from dataclasses import dataclass, field
from typing import Any, ClassVar

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from gymnasium.error import ResetNeeded

from .parsing import DEFAULT_MAX_ACTION_CHARS

__all__ = [
    "Instance",
    "canonical_json",
    "Outcome",
    "TextEnv",
    "TextSpace",
    "validate_action",
    "DEFAULT_MAX_OBSERVATION_CHARS",
]

DEFAULT_MAX_OBSERVATION_CHARS = 1 << 20

# Characters a text may not hold: C0/C1 control characters other than tab, newlines, vertical tab
# and form feed, and lone surrogates (what ``errors="surrogateescape"`` makes of non-UTF-8 bytes).
# Everything else, including non-ASCII spaces, zero-width joiners and unassigned code points, is
# text: ``str.isprintable`` would reject U+00A0 and the ZWJ in emoji sequences, which models emit.
_NOT_TEXT = re.compile("[\x00-\x08\x0e-\x1f\x7f-\x9f\ud800-\udfff]")

# What ``TextSpace.sample`` draws from: printable ASCII, whitespace and the logic/maths symbols the
# envs print. Membership is wider than this (any text character, see ``_NOT_TEXT``).
_SAMPLE_CHARSET = (
    "".join(chr(c) for c in range(0x20, 0x7F))
    + "\n\t"
    + "¬∧∨→↔⊕≠≤≥∀∃∈∉⊆∅×·−±√πλθεαβγδ…‘’“”éüñçßøåæ中文日本語한국어→←⇒⇔⊤⊥✓✗"
)


class TextSpace(spaces.Text):
    """A Gymnasium text space whose members are any text up to ``max_length`` characters.

    ``spaces.Text`` checks membership against a finite charset (alphanumerics by default, which
    rejects ``"hello world"``); LLM input and output is arbitrary Unicode. This space accepts every
    ``str`` of ``min_length..max_length`` characters that holds no control character other than
    whitespace and no lone surrogate, so every observation an env emits and every action it
    accepts is a member. ``sample()`` draws from a representative charset (ASCII, whitespace,
    logic symbols, a few scripts); batching and ``make_vec(vectorization_mode="sync")`` work as
    for ``spaces.Text``. ``flatten`` is not supported (it needs a finite charset).
    """

    def __init__(self, max_length: int, *, min_length: int = 0, seed: Any = None):
        super().__init__(max_length, min_length=min_length, charset=_SAMPLE_CHARSET, seed=seed)

    def contains(self, x: Any) -> bool:
        return (
            isinstance(x, str)
            and self.min_length <= len(x) <= self.max_length
            and _NOT_TEXT.search(x) is None
        )

    def __repr__(self) -> str:
        return f"TextSpace(min_length={self.min_length}, max_length={self.max_length})"

    def __eq__(self, other: Any) -> bool:
        return (
            isinstance(other, TextSpace)
            and self.min_length == other.min_length
            and self.max_length == other.max_length
        )

    def __hash__(self) -> int:
        return hash((TextSpace, self.min_length, self.max_length))


def validate_action(action: Any, max_chars: int) -> tuple[str, str | None]:
    """Turn any action into ``(text, error)``; ``error`` is ``None`` for a valid action.

    ``bytes`` are decoded as UTF-8. ``text`` is always a ``str`` safe to log (invalid characters
    replaced, cut to ``max_chars``), so a failed action can still go into ``info["messages"]``.
    Cost is linear in the input and bounded: a huge action is rejected on its length first.
    """
    if isinstance(action, (bytes, bytearray, memoryview)):
        raw = bytes(action)
        if len(raw) > 4 * max_chars:  # a UTF-8 character is at most 4 bytes
            return _preview(raw[: 4 * max_chars].decode("utf-8", "replace"), max_chars), (
                f"action is {len(raw)} bytes; the limit is {max_chars} characters"
            )
        try:
            action = raw.decode("utf-8")
        except UnicodeDecodeError as e:
            return _preview(raw.decode("utf-8", "replace"), max_chars), (
                f"action is not valid UTF-8: {e.reason} at byte {e.start}"
            )
    if not isinstance(action, str):
        return "", f"action must be a str, got {type(action).__name__}"
    if len(action) > max_chars:
        return _preview(action, max_chars), (
            f"action is {len(action)} characters; the limit is {max_chars}"
        )
    bad = _NOT_TEXT.search(action)
    if bad is not None:
        return _preview(action, max_chars), (
            f"action holds the non-text character U+{ord(bad.group()):04X} at index {bad.start()}"
        )
    return action, None


def canonical_json(data: Any) -> str:
    """The canonical JSON of an instance's dict (``Instance.to_json``, ``instance_id``)."""
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=_asdict_or_fail)


def _asdict_or_fail(obj: Any) -> Any:
    # a dataclass nested in a field serialises as asdict would have made it
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return dataclasses.asdict(obj)
    raise TypeError(f"{type(obj).__name__} is not JSON serialisable")


def _signature_defaults(fn: Any, skip: tuple[str, ...] = ()) -> dict[str, Any]:
    """The keyword parameters of ``fn`` that have defaults, and the defaults."""
    return {name: p.default for name, p in inspect.signature(fn).parameters.items()
            if name not in ("self", *skip) and p.default is not inspect.Parameter.empty}


def _preview(text: str, max_chars: int) -> str:
    return _NOT_TEXT.sub("\ufffd", text[:max_chars])


@dataclass
class Instance:
    """Base of every family's instance: a plain dataclass of JSON types that round-trips exactly.

    ``Instance.from_json(inst.to_json()) == inst`` holds because fields use lists, dicts, str,
    int, float, bool and None only (no tuples). ``instance_id`` is a hash of the canonical JSON.

    :meth:`mark_validated` remembers the canonical JSON an instance was found valid as (in a plain
    attribute, not a field, so ``to_dict``, ``to_json``, equality and ``instance_id`` ignore it);
    :meth:`coerce` skips :meth:`validate` while the instance still has that JSON.
    """

    @property
    def instance_id(self) -> str:
        return hashlib.sha256(self.to_json().encode()).hexdigest()[:16]

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    def to_json(self) -> str:
        # The same text as canonical_json(self.to_dict()), without asdict's deep copy: that copy
        # cost more than the DRUP check the validation mark saves (300 clauses: 2.1 ms vs 0.3 ms)
        # and every reset and every mark check serialises the instance.
        return canonical_json({f.name: getattr(self, f.name) for f in dataclasses.fields(self)})

    @classmethod
    def from_dict(cls, data: dict[str, Any]):
        names = {f.name for f in dataclasses.fields(cls)}
        unknown = set(data) - names
        if unknown:
            raise ValueError(f"{cls.__name__}: unknown fields {sorted(unknown)}")
        missing = {
            f.name
            for f in dataclasses.fields(cls)
            if f.name not in data
            and f.default is dataclasses.MISSING
            and f.default_factory is dataclasses.MISSING
        }
        if missing:
            raise ValueError(f"{cls.__name__}: missing fields {sorted(missing)}")
        inst = cls(**data)
        inst.validate()
        inst.mark_validated()
        return inst

    @classmethod
    def from_json(cls, text: str):
        return cls.from_dict(json.loads(text))

    @classmethod
    def coerce(cls, obj: Any):
        """The dataclass itself (validated unless it is unchanged since it last was), its ``dict``
        or its JSON text -> an instance."""
        if isinstance(obj, cls):
            # The followers of a GRPO group are reset with the leader's instance object; checking
            # it again (for SAT-Bench, re-running the DRUP proof) would be once per member for the
            # same answer. A mutated instance no longer matches its mark and is checked.
            if not obj.is_validated():
                obj.validate()
                obj.mark_validated()
            return obj
        if isinstance(obj, str):
            return cls.from_json(obj)
        if isinstance(obj, dict):
            return cls.from_dict(obj)
        raise TypeError(f"a {cls.__name__} must be given as the dataclass, a dict or JSON text, "
                        f"got {type(obj).__name__}")

    def validate(self) -> None:
        """Raise ``ValueError`` when the instance is inconsistent (called by ``from_dict``)."""

    def mark_validated(self) -> None:
        """Record that the instance, as it is now, is valid: validated, or made by a generator."""
        self._validated_as = self.to_json()

    def is_validated(self) -> bool:
        """Whether the instance is unchanged since :meth:`mark_validated`."""
        return self.validated_json() is not None

    def validated_json(self) -> str | None:
        """The canonical JSON the instance was marked valid as, if it still is that; else None."""
        marked = getattr(self, "_validated_as", None)
        return marked if marked is not None and marked == self.to_json() else None


@dataclass
class Outcome:
    """What a family's :meth:`TextEnv.evaluate` returns for one action."""

    reward_components: dict[str, float]
    answered: bool  # a final answer was given: the episode terminates
    observation: str  # feedback shown to the agent
    info: dict[str, Any] = field(default_factory=dict)
    error: str | None = None


def _check_weights(weights: Any) -> dict[str, float]:
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


class TextEnv(gym.Env[str, str]):
    """Base class of solvergym's text environments (see the module docstring for the contract)."""

    metadata: ClassVar[dict[str, Any]] = {"render_modes": ["ansi", "human"], "render_fps": 4}
    instance_cls: ClassVar[type[Instance]] = Instance
    #: names of the keyword arguments ``options["difficulty"]`` may change
    difficulty_keys: ClassVar[tuple[str, ...]] = ()

    def __init__(
        self,
        *,
        max_turns: int = 1,
        max_action_chars: int = DEFAULT_MAX_ACTION_CHARS,
        max_observation_chars: int = DEFAULT_MAX_OBSERVATION_CHARS,
        render_mode: str | None = None,
        reward_weights: dict[str, float] | None = None,
    ):
        if max_turns < 1:
            raise ValueError(f"max_turns must be >= 1, got {max_turns}")
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(
                f"render_mode must be one of {self.metadata['render_modes']}, got {render_mode!r}"
            )
        self.max_turns = int(max_turns)
        self.render_mode = render_mode
        self.observation_space = TextSpace(max_observation_chars)
        self.action_space = TextSpace(max_action_chars)
        self.instance: Instance | None = None
        self._turn = 0
        self._done = True
        self._messages: list[dict[str, str]] = []
        self._last_obs = ""
        self._instance_info: dict[str, Any] = {}
        self.reward_weights = _check_weights(reward_weights)

    def check_reward_weights(self, components: tuple[str, ...] | list[str]) -> None:
        """Refuse ``reward_weights`` naming a component this env does not compute (a typo would
        otherwise silently pay everything)."""
        unknown = sorted(set(self.reward_weights) - set(components))
        if unknown:
            raise ValueError(f"reward_weights names {unknown}, which {type(self).__name__} does not compute; "
                             f"its components are {list(components)}")

    # ------------------------------------------------------------------ family hooks
    def generate(self, rng: np.random.Generator) -> Instance:
        """Draw a new instance at the current difficulty from ``rng`` (and nothing else)."""
        raise NotImplementedError

    def prompt(self, instance: Instance) -> str:
        """The first observation for ``instance``."""
        raise NotImplementedError

    def evaluate(self, text: str) -> Outcome:
        """Score one well-formed text action against ``self.instance``."""
        raise NotImplementedError

    def format_failure(self, reason: str) -> Outcome:
        """The outcome of an action that is not valid text at all (``validate_action`` failed)."""
        raise NotImplementedError

    def describe(self, instance: Instance) -> dict[str, Any]:
        """``info["difficulty"]``: the difficulty parameters of ``instance`` (which may come from a
        dataset rather than from the env's current knobs)."""
        return self.difficulty

    def reset_info(self, instance: Instance) -> dict[str, Any]:
        """Extra ``info`` keys at reset (e.g. a variable mapping). Never the ground truth."""
        return {}

    def coerce_instance(self, obj: Any) -> Instance:
        """Accept the family's dataclass, its ``dict`` or its JSON text."""
        return self.instance_cls.coerce(obj)

    # ------------------------------------------------------------------ for agents
    def gold(self):
        """The ground truth of the current instance (:class:`~solvergym.envs.problem.Gold`), for
        oracles only (``agents/scripted.py``); never part of an observation or ``info``."""
        raise NotImplementedError

    def sample_answer(self, rng: np.random.Generator) -> str:
        """A uniformly random answer in the format the env expects next (a random baseline)."""
        raise NotImplementedError

    @classmethod
    def kwargs_defaults(cls) -> dict[str, Any]:
        """Every keyword argument the constructor takes and its default (for the registry)."""
        return _signature_defaults(cls.__init__)

    @property
    def turn(self) -> int:
        """Steps taken in the current episode."""
        return self._turn

    @property
    def difficulty(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self.difficulty_keys}

    def set_difficulty(self, **kwargs: Any) -> None:
        """Change difficulty knobs (validated by the family's ``_check_difficulty``)."""
        unknown = set(kwargs) - set(self.difficulty_keys)
        if unknown:
            raise ValueError(
                f"unknown difficulty keys {sorted(unknown)}; this env takes {list(self.difficulty_keys)}"
            )
        new = {**self.difficulty, **kwargs}
        self._check_difficulty(**new)
        for k, v in new.items():
            setattr(self, k, v)

    def _check_difficulty(self, **kwargs: Any) -> None:
        """Raise ``ValueError`` for an invalid difficulty setting."""

    # ------------------------------------------------------------------ gymnasium API
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        super().reset(seed=seed)
        options = dict(options or {})
        unknown = set(options) - {"instance", "difficulty"}
        if unknown:
            raise ValueError(f"unknown reset options {sorted(unknown)}; use 'instance' or 'difficulty'")
        if options.get("difficulty") is not None:
            if not isinstance(options["difficulty"], dict):
                raise TypeError("options['difficulty'] must be a dict of difficulty knobs")
            self.set_difficulty(**options["difficulty"])
        if options.get("instance") is not None:
            self.instance = self.coerce_instance(options["instance"])
        else:
            self.instance = self.generate(self.np_random)
            # valid by construction: handed to another env (a group follower), it is not checked
            self.instance.mark_validated()
        self._instance_info = {
            "instance_id": self.instance.instance_id,
            "difficulty": self.describe(self.instance),
        }
        self._turn = 0
        self._done = False
        obs = self.prompt(self.instance)
        self._messages = [{"role": "user", "content": obs}]
        self._last_obs = obs
        info = self._base_info()
        info.update(self.reset_info(self.instance))
        return obs, info

    def step(self, action: Any):
        if self.instance is None:
            raise ResetNeeded("Cannot call step() before reset().")
        if self._done:
            raise ResetNeeded(
                "This episode has ended (terminated or truncated); call reset() before step()."
            )
        text, error = validate_action(action, self.action_space.max_length)
        outcome = self.format_failure(error) if error is not None else self.evaluate(text)
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
        reward = float(sum(components.values()))
        info["reward_components"] = components
        info.update(outcome.info)
        if outcome.error is not None:
            info["error"] = outcome.error
        if self.render_mode == "human":
            self.render()
        return obs, reward, terminated, truncated, info

    def render(self):
        if self.render_mode == "ansi":
            return self._last_obs
        if self.render_mode == "human":
            print(self._last_obs)
        return None

    def _base_info(self) -> dict[str, Any]:
        return {
            **copy.deepcopy(self._instance_info),  # fresh objects: callers keep and mutate infos
            "turn": self._turn,
            "messages": [dict(m) for m in self._messages],
        }
