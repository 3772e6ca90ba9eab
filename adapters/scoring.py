"""One completion, the env's own reward: what every adapter calls.

A trainer hands an adapter a completion and the dataset row it was generated from; the row names
the env (``env_id`` and its keyword arguments) and carries the instance as JSON (what
:func:`task_rows` writes). :class:`EnvScorer` poses that instance with
``reset(options={"instance": ...})`` and pays ``step(completion)``'s reward, so a score through an
adapter is the env's reward by construction. Anything wrong with one row (a completion that is not
text, a missing column, a row of another env, an instance the env refuses) is a :class:`Score`
of 0.0 with ``status`` and ``reason``, never an exception in the trainer's process; an env id
that no solvergym mode serves is an error when the adapter is built, before training starts.

Only single-turn envs score a completion (a multi-turn episode is not one completion: the tool
env goes through an environment adapter). Envs are kept one per thread (an env is not shared
between threads), and an env whose problem is not ``thread_safe`` steps under one process-wide
lock; a sandboxed env's programs run in the sandbox, bounded by its limits.
"""
from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from typing import Any, Iterator

import gymnasium as gym

from ..registry import resolve_env_id

__all__ = ["EnvScorer", "Score", "task_rows", "scorer_for", "completion_text", "env_kwargs_of", "posing_kwargs", "ENV_COLUMN", "KWARGS_COLUMN", "PLACEMENT_KWARGS",
           "NOT_THREAD_SAFE",
           "INSTANCE_COLUMN"]

#: the dataset columns a row carries (TRL passes them to a reward function by these names)
ENV_COLUMN = "solvergym_env"
KWARGS_COLUMN = "solvergym_env_kwargs"
#: keyword arguments that say where an env's programs run, not what it poses: a row does not
#: record them and a scorer does not compare them (a row written on one machine is scored on a
#: Ray cluster, or the other way round)
PLACEMENT_KWARGS = ("executor", "pool")
INSTANCE_COLUMN = "solvergym_instance"
#: the largest instance JSON a row may carry (a row is read like any record: bounded)
MAX_INSTANCE_CHARS = 4 << 20
#: held while an env whose problem is not thread-safe steps (Z3's default context is one per
#: process: two Knights envs checking in two threads crash it), shared by every scorer
NOT_THREAD_SAFE = threading.Lock()


@dataclass
class Score:
    """``reward``: what the env paid (0.0 when the row could not be scored); ``status``: ``ok``,
    ``bad_completion``, ``bad_row`` or ``error``; ``components``: the env's reward components."""

    reward: float
    status: str = "ok"
    reason: str = ""
    components: dict[str, float] = field(default_factory=dict)
    correct: bool | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"score": self.reward, "status": self.status, "reason": self.reason, "correct": self.correct,
                **{f"component/{k}": v for k, v in self.components.items()}}


def completion_text(completion: Any) -> str | None:
    """The text of a completion as trainers hand it: a string, a chat message ``{"role",
    "content"}`` or a list of them (TRL's conversational form: the last assistant message's
    content); ``None`` for anything else."""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, dict):
        content = completion.get("content")
        return content if isinstance(content, str) else None
    if isinstance(completion, (list, tuple)):
        for message in reversed(completion):
            if isinstance(message, dict) and message.get("role", "assistant") == "assistant":
                return completion_text(message)
    return None


def env_kwargs_of(value: Any) -> dict[str, Any]:
    """A row's env keyword arguments (a JSON object, as text or parsed; nothing: none)."""
    if value is None or value == "":
        return {}
    if isinstance(value, str):
        value = json.loads(value)
    if not isinstance(value, dict):
        raise ValueError(f"env keyword arguments must be a JSON object, got {type(value).__name__}")
    return value


def posing_kwargs(env_kwargs: dict[str, Any]) -> dict[str, Any]:
    """``env_kwargs`` without the :data:`PLACEMENT_KWARGS`: what decides the instance and its reward."""
    return {k: v for k, v in env_kwargs.items() if k not in PLACEMENT_KWARGS}


class EnvScorer:
    """Scores completions of ``env_id`` (with ``env_kwargs``) by the env's own ``step``."""

    def __init__(self, env_id: str, **env_kwargs: Any):
        self.env_id = resolve_env_id(env_id)  # an unknown id: a one-line error now, not mid-training
        self.env_kwargs = dict(env_kwargs)
        #: the keyword arguments as a row holds them (task_rows' JSON): most rows match it as text
        self._kwargs_json = json.dumps(posing_kwargs(self.env_kwargs), sort_keys=True)
        self._kwargs_plain = json.loads(self._kwargs_json)
        self._local = threading.local()
        self._envs: list[Any] = []
        self._lock = threading.Lock()
        env = self.env()
        if env.max_turns != 1:
            raise ValueError(f"{self.env_id} with {self.env_kwargs} is a multi-turn env (max_turns="
                             f"{env.max_turns}); one completion scores only a single-turn env")

    def env(self):
        """This thread's env (made on first use)."""
        env = getattr(self._local, "env", None)
        if env is None:
            env = gym.make(self.env_id, **self.env_kwargs).unwrapped
            self._local.env = env
            with self._lock:
                self._envs.append(env)
        return env

    def matches(self, env_id: Any, env_kwargs: Any) -> str | None:
        """Why a row of ``env_id`` / ``env_kwargs`` is not this scorer's (``None``: it is)."""
        if (env_id is None or env_id == self.env_id) and (env_kwargs is None or env_kwargs == self._kwargs_json):
            return None  # the common case, decided without parsing
        if env_id is not None and env_id != self.env_id:
            try:
                if resolve_env_id(str(env_id)) != self.env_id:
                    return f"the row is of {env_id!r}, this scorer's env is {self.env_id!r}"
            except ValueError as e:
                return f"the row's env: {e}"
        try:
            kwargs = env_kwargs_of(env_kwargs)
        except ValueError as e:
            return f"the row's env keyword arguments: {e}"
        if env_kwargs is not None and kwargs != self._kwargs_plain:
            return f"the row was made with {kwargs}, this scorer's env with {self._kwargs_plain}"
        return None

    def score(self, instance: Any, completion: Any) -> Score:
        """``completion`` against ``instance`` (its JSON text, dict or object); see the module docstring."""
        text = completion_text(completion)
        if text is None:
            return Score(0.0, "bad_completion", f"a completion is text or chat messages, got {type(completion).__name__}")
        if instance is None:
            return Score(0.0, "bad_row", f"the row has no {INSTANCE_COLUMN!r} column (write rows with task_rows)")
        if isinstance(instance, str):
            if len(instance) > MAX_INSTANCE_CHARS:
                return Score(0.0, "bad_row", f"the instance JSON is over {MAX_INSTANCE_CHARS} characters")
            try:
                instance = json.loads(instance)
            except ValueError as e:
                return Score(0.0, "bad_row", f"the instance is not JSON: {e}")
        env = self.env()
        if env.problem.thread_safe:
            return self._pose(env, instance, text)
        with NOT_THREAD_SAFE:
            return self._pose(env, instance, text)

    def _pose(self, env, instance: Any, text: str) -> Score:
        try:
            env.reset(options={"instance": instance})
        except (ValueError, TypeError, KeyError) as e:
            return Score(0.0, "bad_row", f"{self.env_id} refuses the row's instance: {str(e)[:300]}")
        try:
            _, reward, _, _, info = env.step(text)
        except Exception as e:  # the env's own step failing must not take the trainer down
            return Score(0.0, "error", f"{type(e).__name__}: {str(e)[:300]}")
        return Score(float(reward), "ok", str(info.get("reason", "")), dict(info.get("reward_components", {})),
                     info.get("correct"))

    def score_row(self, completion: Any, row: dict[str, Any]) -> Score:
        """``completion`` against a dataset row of :func:`task_rows` (its own env checked first)."""
        why = self.matches(row.get(ENV_COLUMN), row.get(KWARGS_COLUMN))
        if why is not None:
            return Score(0.0, "bad_row", why)
        return self.score(row.get(INSTANCE_COLUMN), completion)

    def close(self) -> None:
        with self._lock:
            envs, self._envs = self._envs, []
        for env in envs:
            env.close()


_scorers: dict[tuple[str, str], EnvScorer] = {}
_scorers_lock = threading.Lock()


def scorer_for(env_id: str, env_kwargs: dict[str, Any]) -> EnvScorer:
    """The process's scorer of ``env_id`` with ``env_kwargs`` (made once; adapters that get the env
    from each row, verl's and reasoning-gym's, share them)."""
    key = (str(env_id), json.dumps(env_kwargs, sort_keys=True))
    with _scorers_lock:
        if key not in _scorers:
            _scorers[key] = EnvScorer(str(env_id), **env_kwargs)
        return _scorers[key]


def task_rows(env_id: str, count: int, /, *, seed: int = 0, **env_kwargs: Any) -> Iterator[dict[str, Any]]:
    """``count`` instances of ``env_id`` from seeds ``seed .. seed + count - 1``: ``{"prompt": [the user
    message], "solvergym_env", "solvergym_env_kwargs" (JSON), "solvergym_instance" (JSON),
    "seed"}``, the row every exporter writes (the same seed, the same rows)."""
    if count < 0:
        raise ValueError(f"count must be >= 0, got {count}")
    env_id = resolve_env_id(env_id)
    env = gym.make(env_id, **env_kwargs).unwrapped
    kwargs_json = json.dumps(posing_kwargs(env_kwargs), sort_keys=True)
    try:
        for i in range(count):
            obs, _ = env.reset(seed=seed + i)
            yield {"prompt": [{"role": "user", "content": obs}], ENV_COLUMN: env_id, KWARGS_COLUMN: kwargs_json,
                   INSTANCE_COLUMN: env.instance.to_json(), "seed": seed + i}
    finally:
        env.close()
