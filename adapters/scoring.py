"""One completion, the env's own reward: what every adapter calls.

A trainer hands an adapter a completion and the dataset row it was generated from; the row names
the env (``env_id`` and its keyword arguments) and carries the instance as JSON (what
:func:`task_rows` writes). :class:`EnvScorer` poses that instance with
``reset(options={"instance": ...})`` and pays ``step(completion)``'s reward, so a score through an
adapter is the env's reward by construction. An env id that no solvergym mode serves is an error
when the adapter is built, before training starts.

A row is data, read here once for every adapter:

- **A bad row is a zero with its reason.** :func:`score_row` is the completion adapters' one entry
  (TRL's reward function, verl's ``compute_score``, reasoning-gym's ``score_answer``), and the row
  readers (:func:`row_env_id`, :func:`env_kwargs_of`, :func:`scorer_for_row`, :func:`make_row_env`,
  :func:`pose`) are what the episode adapters (verl's tools, TRL's ``environment_factory``) read a
  row with. All of them sit behind one guard, :func:`reads_row`: whatever reading or posing a row
  raises (a ``RecursionError`` from a row nested 100,000 levels deep, a ``TypeError`` from a
  keyword its env does not take, an instance the env refuses) becomes :class:`BadRow`, a
  ``ValueError`` whose message is the reason, and :func:`score_row` a :class:`Score` of 0.0 with
  ``status="bad_row"``; a completion that is not text is ``bad_completion``, and the env's own
  ``step`` failing is ``error``. Nothing raises into the trainer's process.
- **A row imports no code.** Its env id is looked up among the registered ids only
  (``resolve_env_id(imports=False)``): ``this:SolverSAT-v0`` or a module in the working directory
  is refused, not imported. Modules are imported where the user names them: ``--import``, or an
  id such as ``mymodule:MyEnv-v0`` given to an adapter's constructor (:class:`EnvScorer`,
  ``reward_fn``, ``environment_factory``, ``SolverGymTool``'s config, reasoning-gym's
  ``register``); rows may then name that id.

Only single-turn envs score a completion (a multi-turn episode is not one completion: the tool
env goes through an environment adapter). Envs are kept one per thread (an env is not shared
between threads), and an env whose problem is not ``thread_safe`` steps under one process-wide
lock; a sandboxed env's programs run in the sandbox, bounded by its limits.
"""
from __future__ import annotations

import functools
import json
import threading
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Sequence, TypeVar

import gymnasium as gym

from ..envs.records import check_value, parse_json
from ..sandbox.result import ExecutorUnavailable
from ..registry import resolve_env_id

__all__ = ["EnvScorer", "Score", "BadRow", "reads_row", "score_row", "task_rows", "scorer_for", "scorer_for_row",
           "row_env_id", "make_row_env", "pose", "completion_text", "env_kwargs_of", "posing_kwargs", "ENV_COLUMN",
           "KWARGS_COLUMN", "PLACEMENT_KWARGS", "NOT_THREAD_SAFE", "INSTANCE_COLUMN", "MAX_INSTANCE_CHARS",
           "MAX_ENV_ID_CHARS"]

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
#: the longest env id a row may name (ids are short; a long one is refused before it is looked up
#: and quoted in a "did you mean")
MAX_ENV_ID_CHARS = 200
#: held while an env whose problem is not thread-safe steps (Z3's default context is one per
#: process: two Knights envs checking in two threads crash it), shared by every scorer
NOT_THREAD_SAFE = threading.Lock()
#: the most characters of an exception's message a reason quotes
_REASON_CHARS = 300

T = TypeVar("T")


class BadRow(ValueError):
    """A row that cannot be read or posed; its message is the reason (a ``ValueError``, so code
    that reports bad input in one line reports it too)."""


def reads_row(what: str) -> Callable[[Callable[..., T]], Callable[..., T]]:
    """The one guard of the adapters' row reading (the module docstring): the decorated reader
    raises :class:`BadRow` and nothing else. A ``ValueError`` (bad input, said so) keeps its
    message; anything else, which no reader means to raise (``RecursionError``, ``TypeError``,
    ``MemoryError``...), is named by its type; both after ``what`` (the part of the row read). An
    executor the user named that cannot run programs (posing an instance may run one) is not the
    row's fault and passes through."""
    def guard(read: Callable[..., T]) -> Callable[..., T]:
        @functools.wraps(read)
        def guarded(*args: Any, **kwargs: Any) -> T:
            try:
                return read(*args, **kwargs)
            except (BadRow, ExecutorUnavailable):
                raise
            except Exception as e:  # noqa: BLE001 - a row is data: nothing it holds may raise into a trainer
                # str() of a message, never repr() of the value: a deep value's repr would recurse again
                said = str(e)[:_REASON_CHARS]
                raise BadRow(f"{what}: {said}" if isinstance(e, ValueError) else
                             f"{what}: {type(e).__name__}: {said}") from None
        return guarded
    return guard


@dataclass
class Score:
    """``reward``: what the env paid (0.0 when the row could not be scored); ``status``: ``ok``,
    ``bad_completion``, ``bad_row`` or ``error``; ``components``: the env's reward components."""

    reward: float
    status: str = "ok"
    reason: str = ""
    components: dict[str, float] = field(default_factory=dict)
    correct: bool | None = None

    def to_dict(self, components: Sequence[str] | None = None) -> dict[str, Any]:
        """``{"score", "status", "reason", "correct", "component/<name>"...}``. With ``components``,
        exactly those names, in that order, each 0.0 where the env did not pay it (a row that
        could not be scored pays none): the same keys for every row, whatever its env (what verl
        needs, :mod:`.verl`). Without, the env's own components."""
        names = self.components if components is None else components
        return {"score": self.reward, "status": self.status, "reason": self.reason, "correct": self.correct,
                **{f"component/{k}": float(self.components.get(k, 0.0)) for k in names}}


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


@reads_row("the row's env keyword arguments")
def env_kwargs_of(value: Any) -> dict[str, Any]:
    """A row's env keyword arguments (a JSON object, as text or parsed; nothing: none), checked
    as any record is (no deeper than the records' bound, finite numbers)."""
    if value is None or value == "":
        return {}
    if isinstance(value, str):
        value = parse_json(value, max_chars=MAX_INSTANCE_CHARS, what="the text")
    if not isinstance(value, dict):
        raise ValueError(f"env keyword arguments must be a JSON object, got {type(value).__name__}")
    check_value(value)  # iterative: a value too deep to compare or serialise is refused here
    return value


@reads_row("the row's env")
def row_env_id(env_id: Any) -> str:
    """The registered id a row names; never an import (``resolve_env_id(imports=False)``)."""
    if isinstance(env_id, str) and len(env_id) > MAX_ENV_ID_CHARS:
        raise ValueError(f"an env id of {len(env_id)} characters (at most {MAX_ENV_ID_CHARS})")
    return resolve_env_id(env_id, imports=False)


@reads_row("the env cannot be made with the row's keyword arguments")
def make_row_env(env_id: str, env_kwargs: dict[str, Any]) -> Any:
    """``gym.make(env_id, **env_kwargs)`` (unwrapped) for a row's keyword arguments: a keyword
    the env does not take is the row's fault, a :class:`BadRow`."""
    return gym.make(env_id, **env_kwargs).unwrapped


@reads_row("the env refuses the row's instance")
def pose(env: Any, instance: Any) -> tuple[str, dict[str, Any]]:
    """``env.reset(options={"instance": instance})``: the row's instance (JSON text, at most
    :data:`MAX_INSTANCE_CHARS`, parsed by the env with the records' bounds; or its dict) posed on
    ``env``; the first observation and info."""
    if instance is None:  # reset would draw an instance of its own: never a row's score
        raise ValueError(f"there is none (no {INSTANCE_COLUMN!r} column; write rows with task_rows)")
    if isinstance(instance, str) and len(instance) > MAX_INSTANCE_CHARS:
        raise ValueError(f"the instance JSON is over {MAX_INSTANCE_CHARS} characters")
    return env.reset(options={"instance": instance})


def posing_kwargs(env_kwargs: dict[str, Any]) -> dict[str, Any]:
    """``env_kwargs`` without the :data:`PLACEMENT_KWARGS`: what decides the instance and its reward."""
    return {k: v for k, v in env_kwargs.items() if k not in PLACEMENT_KWARGS}


class EnvScorer:
    """Scores completions of ``env_id`` (with ``env_kwargs``) by the env's own ``step``. ``env_id``
    is the user's (``mymodule:MyEnv-v0`` imports ``mymodule``); a row's is checked against it."""

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

    @reads_row("the row")
    def matches(self, env_id: Any, env_kwargs: Any) -> str | None:
        """Why a row of ``env_id`` / ``env_kwargs`` is not this scorer's (``None``: it is)."""
        if (env_id is None or env_id == self.env_id) and (env_kwargs is None or env_kwargs == self._kwargs_json):
            return None  # the common case, decided without parsing
        if env_id is not None and env_id != self.env_id:
            try:
                if row_env_id(env_id) != self.env_id:
                    return f"the row is of {env_id!r}, this scorer's env is {self.env_id!r}"
            except BadRow as e:
                return str(e)
        try:
            kwargs = env_kwargs_of(env_kwargs)
        except BadRow as e:
            return str(e)
        if env_kwargs is not None and kwargs != self._kwargs_plain:
            return f"the row was made with {kwargs}, this scorer's env with {self._kwargs_plain}"
        return None

    def score(self, instance: Any, completion: Any) -> Score:
        """``completion`` against ``instance`` (its JSON text, dict or object): :func:`score_row`."""
        return score_row(completion, {INSTANCE_COLUMN: instance}, self)

    def score_row(self, completion: Any, row: dict[str, Any]) -> Score:
        """``completion`` against a dataset row of :func:`task_rows` (its own env checked first):
        :func:`score_row`."""
        return score_row(completion, row, self)

    def _pay(self, instance: Any, text: str) -> Score:
        env = self.env()
        if env.problem.thread_safe:
            return self._step(env, instance, text)
        with NOT_THREAD_SAFE:
            return self._step(env, instance, text)

    def _step(self, env, instance: Any, text: str) -> Score:
        pose(env, instance)  # a BadRow: the row's fault
        try:
            _, reward, _, _, info = env.step(text)
        except ExecutorUnavailable:
            raise  # the executor the user named is gone: every later reward would be wrong too
        except Exception as e:  # noqa: BLE001 - the env's own step failing must not take the trainer down
            return Score(0.0, "error", f"{type(e).__name__}: {str(e)[:_REASON_CHARS]}")
        return Score(float(reward), "ok", str(info.get("reason", "")), dict(info.get("reward_components", {})),
                     info.get("correct"))

    def close(self) -> None:
        with self._lock:
            envs, self._envs = self._envs, []
        for env in envs:
            env.close()


def score_row(completion: Any, row: Any, scorer: EnvScorer | None = None) -> Score:
    """``completion`` against a dataset ``row`` (``{ENV_COLUMN, KWARGS_COLUMN, INSTANCE_COLUMN}``,
    any of them missing), never an exception for anything a row or completion holds (an executor
    the user named that cannot run programs, :class:`~solvergym.sandbox.ExecutorUnavailable`, is
    raised: every later reward would be wrong too): the completion adapters' one entry. With
    ``scorer`` (the adapter's own env), a row of another env or keyword arguments is refused;
    without, the row's env and keyword arguments choose the scorer (:func:`scorer_for_row`).
    A row that cannot be read or posed is 0.0 with ``status="bad_row"`` and the reason."""
    try:
        return _score_row(completion, row, scorer)
    except BadRow as e:
        return Score(0.0, "bad_row", str(e))


@reads_row("the row")
def _score_row(completion: Any, row: Any, scorer: EnvScorer | None) -> Score:
    if not isinstance(row, dict):
        raise ValueError(f"a row is a mapping of its columns, got {type(row).__name__}")
    if scorer is None:
        scorer = scorer_for_row(row.get(ENV_COLUMN), row.get(KWARGS_COLUMN))
    else:
        why = scorer.matches(row.get(ENV_COLUMN), row.get(KWARGS_COLUMN))
        if why is not None:
            raise BadRow(why)
    text = completion_text(completion)
    if text is None:
        return Score(0.0, "bad_completion", f"a completion is text or chat messages, got {type(completion).__name__}")
    if row.get(INSTANCE_COLUMN) is None:
        raise BadRow(f"the row has no {INSTANCE_COLUMN!r} column (write rows with task_rows)")
    return scorer._pay(row[INSTANCE_COLUMN], text)


_scorers: dict[tuple[str, str], EnvScorer] = {}
_scorers_lock = threading.Lock()
#: (a row's env id, its keyword arguments' JSON text) -> its scorer: a dataset's rows repeat the same
#: text row after row, which is then parsed once (dict reads and writes are atomic under the GIL)
_by_row_text: dict[tuple[str, str | None], EnvScorer] = {}


def scorer_for(env_id: str, env_kwargs: dict[str, Any]) -> EnvScorer:
    """The process's scorer of ``env_id`` with ``env_kwargs`` (made once; adapters that get the env
    from each row, verl's and reasoning-gym's, share them). ``env_id`` is imported as the user's:
    a row's goes through :func:`scorer_for_row`."""
    key = (str(env_id), json.dumps(env_kwargs, sort_keys=True))
    with _scorers_lock:
        if key not in _scorers:
            _scorers[key] = EnvScorer(str(env_id), **env_kwargs)
        return _scorers[key]


@reads_row("the row's env")
def scorer_for_row(env_id: Any, env_kwargs: Any) -> EnvScorer:
    """:func:`scorer_for` the env a row names (a registered id: :func:`row_env_id`) with the row's
    keyword arguments (:func:`env_kwargs_of`); a :class:`BadRow` for an env or keyword
    arguments it cannot be (an unknown keyword, a multi-turn env)."""
    key = (env_id, env_kwargs) if isinstance(env_id, str) and (env_kwargs is None or isinstance(env_kwargs, str)) \
        else None
    scorer = _by_row_text.get(key) if key is not None else None
    if scorer is None:
        scorer = scorer_for(row_env_id(env_id), env_kwargs_of(env_kwargs))
        if key is not None:
            _by_row_text[key] = scorer
    return scorer


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
