"""OpenEnv (openenv-core 0.3): any solvergym env served as an OpenEnv environment.

    solvergym serve SolverTool-v0 --port 8000 --kwargs task=sat-bench solver=z3   # localhost, WebSocket /ws

    from solvergym.adapters.openenv import SolverGymClient
    with SolverGymClient(base_url="http://127.0.0.1:8000").sync() as env:
        first = env.reset(seed=0)                 # deterministic: the same seed, the same instance
        result = env.step({"text": "<tool_call>...</tool_call>"})
        result.observation["text"], result.reward, result.done

Each WebSocket session gets its own env (``SUPPORTS_CONCURRENT_SESSIONS``; at most
``max_sessions`` at once). ``reset(seed=..., instance=..., difficulty=...)`` is the env's own
``reset`` (``instance`` and ``difficulty`` are its ``options``), so ``reset(seed)`` is
deterministic, OpenEnv's known weak spot; ``step({"text": ...})`` is the env's ``step``. The
observation carries ``text`` (the env's observation) and ``info`` (the env's info without the
chat history: reward components, correctness, the reason, the instance id and difficulty), beside
OpenEnv's ``reward`` and ``done``. An action that is not text is refused by the schema; a step
before a reset is the env's own error, sent to the client as the server's error message.
:func:`manifest` is the ``openenv.yaml`` of a served env.
"""
from __future__ import annotations

import json
import os
import uuid
from typing import Any, Optional

import gymnasium as gym
from openenv.core.client_types import StepResult
from openenv.core.env_client import EnvClient
from openenv.core.env_server.http_server import create_fastapi_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State
from pydantic import Field

from ..registry import resolve_env_id

__all__ = ["TextAction", "SolverGymObservation", "SolverGymState", "environment_class", "make_app", "manifest",
           "SolverGymClient", "INFO_KEYS"]

#: the info keys an observation carries (the chat history stays on the server)
INFO_KEYS = ("instance_id", "difficulty", "turn", "mode", "reward_components", "correct", "reason", "answer",
             "error", "mapping", "variables")


class TextAction(Action):
    """One turn of the policy: its text."""

    text: str = Field(description="the model's response for this turn")


class SolverGymObservation(Observation):
    """The env's observation text and the info that explains the reward."""

    text: str = Field(default="", description="the env's observation")
    info: dict[str, Any] = Field(default_factory=dict, description="the env's info (no chat history)")


class SolverGymState(State):
    env_id: str = ""
    instance_id: Optional[str] = None


def _plain(info: dict[str, Any]) -> dict[str, Any]:
    return json.loads(json.dumps({k: info[k] for k in INFO_KEYS if k in info}, default=str))


def environment_class(env_id: str, **env_kwargs: Any) -> type:
    """An OpenEnv ``Environment`` subclass posing ``env_id`` with ``env_kwargs`` (checked now)."""
    env_id = resolve_env_id(env_id)
    gym.make(env_id, **env_kwargs).close()  # a bad keyword fails here, not in a session

    class SolverGymEnvironment(Environment):
        SUPPORTS_CONCURRENT_SESSIONS = True

        def __init__(self) -> None:
            super().__init__()
            self.env = gym.make(env_id, **env_kwargs).unwrapped
            self._state = SolverGymState(env_id=env_id)

        def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None, instance: Any = None,
                  difficulty: Optional[dict] = None, **kwargs: Any) -> SolverGymObservation:
            options = {k: v for k, v in (("instance", instance), ("difficulty", difficulty)) if v is not None}
            obs, info = self.env.reset(seed=seed, options=options or None)
            self._state = SolverGymState(env_id=env_id, episode_id=episode_id or uuid.uuid4().hex, step_count=0,
                                         instance_id=info.get("instance_id"))
            return SolverGymObservation(text=obs, info=_plain(info), done=False, reward=None)

        def step(self, action: TextAction, timeout_s: Optional[float] = None, **kwargs: Any) -> SolverGymObservation:
            obs, reward, terminated, truncated, info = self.env.step(action.text)
            self._state.step_count += 1
            return SolverGymObservation(text=obs, info=_plain(info), done=bool(terminated or truncated),
                                        reward=float(reward))

        @property
        def state(self) -> SolverGymState:
            return self._state

        def close(self) -> None:
            self.env.close()

    SolverGymEnvironment.__name__ = SolverGymEnvironment.__qualname__ = f"{env_id.replace('-', '_')}Environment"
    return SolverGymEnvironment


def make_app(env_id: str, *, max_sessions: int = 8, **env_kwargs: Any):
    """The FastAPI app serving ``env_id`` (OpenEnv's ``/ws``, ``/health``, ``/schema``, ``/metadata``)."""
    cls = environment_class(env_id, **env_kwargs)
    return create_fastapi_app(cls, TextAction, SolverGymObservation, max_concurrent_envs=max_sessions)


def manifest(env_id: str, port: int, **env_kwargs: Any) -> str:
    """The ``openenv.yaml`` of a served env (OpenEnv's spec 1); its ``app`` is this module's
    :data:`app`, which reads the env from ``SOLVERGYM_ENV_ID`` / ``SOLVERGYM_ENV_KWARGS``."""
    env_id = resolve_env_id(env_id)
    name = env_id.lower().replace("-", "_")
    run = f"SOLVERGYM_ENV_ID={env_id} SOLVERGYM_ENV_KWARGS='{json.dumps(env_kwargs, sort_keys=True)}'"
    return (f"# {run} uvicorn solvergym.adapters.openenv:app --port {int(port)}\n"
            f"# (or: solvergym serve {env_id} --port {int(port)})\n"
            f"spec_version: 1\nname: {name}\ntype: space\nruntime: fastapi\n"
            f"app: solvergym.adapters.openenv:app\nport: {int(port)}\n"
            f"description: solvergym {env_id} (solver-verified rewards)\n")


def __getattr__(name: str) -> Any:
    """``app``: the env named by ``SOLVERGYM_ENV_ID`` (and ``SOLVERGYM_ENV_KWARGS``, JSON), for a
    server started from the manifest."""
    if name == "app":
        if "SOLVERGYM_ENV_ID" not in os.environ:
            raise AttributeError("set SOLVERGYM_ENV_ID (and SOLVERGYM_ENV_KWARGS) to the env to serve")
        return make_app(os.environ["SOLVERGYM_ENV_ID"], **json.loads(os.environ.get("SOLVERGYM_ENV_KWARGS") or "{}"))
    raise AttributeError(name)


class SolverGymClient(EnvClient):
    """An OpenEnv client of a served solvergym env: actions ``{"text": ...}`` (or a
    :class:`TextAction`), observations as plain dicts ``{"text", "info"}``."""

    def _step_payload(self, action: Any) -> dict[str, Any]:
        return action.model_dump() if isinstance(action, TextAction) else dict(action)

    def _parse_result(self, payload: dict[str, Any]) -> StepResult:
        return StepResult(observation=payload.get("observation", {}), reward=payload.get("reward"),
                          done=bool(payload.get("done", False)))

    def _parse_state(self, payload: dict[str, Any]) -> dict[str, Any]:
        return dict(payload)
