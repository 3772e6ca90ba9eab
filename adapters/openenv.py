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

What a server takes from its clients (:func:`make_app`):

- **Sessions.** ``max_sessions`` bounds the envs that exist at once, on every route. OpenEnv's
  HTTP ``/reset``, ``/step`` and ``/state`` ("simulation mode") made a fresh env per request,
  outside the session cap (six concurrent ``POST /reset`` were all served under a cap of three)
  and closed it after, so ``/step`` always failed; they are off by default (OpenEnv's production
  mode). ``http_routes=True`` serves them over one shared HTTP episode, which holds one of the
  ``max_sessions`` slots (WebSocket sessions get the others) and runs one request at a time: a
  ``/reset`` then ``/step`` plays an episode with curl, and concurrent HTTP clients share it.
  The env behind a session is made at its first ``reset`` or ``step``: OpenEnv also makes one per
  ``/metadata`` and ``/mcp`` request, outside the cap, and those never pose an instance.
- **Instances.** By default a client chooses what it is posed: ``seed``, ``instance`` and
  ``difficulty`` (a trainer posing its dataset's instances, reproducibly). A server that a policy
  can reach as a client (an agent that drives the env itself) would let it pose its own trivial
  instance, or replay a seed whose answer it knows; ``client_instances=False`` (``solvergym serve
  --no-client-instances``) refuses all three, with a message, and every instance is drawn from the
  session env's own generator, seeded from the operating system's entropy.
"""
from __future__ import annotations

import asyncio
import json
import os
import uuid
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, Optional

import gymnasium as gym
from fastapi import Body, FastAPI, HTTPException
from gymnasium.error import ResetNeeded
from openenv.core.client_types import StepResult
from openenv.core.env_client import EnvClient
from openenv.core.env_server.http_server import HTTPEnvServer
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.serialization import deserialize_action, serialize_observation
from openenv.core.env_server.types import (
    Action,
    Observation,
    ResetRequest,
    ResetResponse,
    ServerMode,
    State,
    StepRequest,
    StepResponse,
)
from pydantic import Field, ValidationError

from ..registry import resolve_env_id

__all__ = ["TextAction", "SolverGymObservation", "SolverGymState", "environment_class", "make_app", "manifest",
           "SolverGymClient", "INFO_KEYS", "CLIENT_CHOICES", "SERVE_SETTINGS"]

#: the reset arguments that choose the instance a client is posed, refused when the server draws
#: every instance itself (``client_instances=False``): a seed replays a known instance as surely as
#: an instance does, and a difficulty can make it trivial
CLIENT_CHOICES = ("seed", "instance", "difficulty")

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


def environment_class(env_id: str, *, client_instances: bool = True, **env_kwargs: Any) -> type:
    """An OpenEnv ``Environment`` subclass posing ``env_id`` with ``env_kwargs`` (checked now).

    ``client_instances=False``: ``reset`` refuses a ``seed``, an ``instance`` and a ``difficulty``
    (:data:`CLIENT_CHOICES`) with a ``ValueError`` and draws every instance from the env's own
    generator (the module docstring, "Instances"). An instance makes its gym env at its first
    ``reset`` or ``step``, not when it is made: OpenEnv makes one for every ``/metadata`` and
    ``/mcp`` request, outside the session cap."""
    env_id = resolve_env_id(env_id)
    gym.make(env_id, **env_kwargs).close()  # a bad keyword fails here, not in a session

    class SolverGymEnvironment(Environment):
        SUPPORTS_CONCURRENT_SESSIONS = True

        def __init__(self) -> None:
            super().__init__()
            self._env: Any = None
            self._state = SolverGymState(env_id=env_id)

        @property
        def env(self) -> Any:
            """The session's gym env (unwrapped), made on first use."""
            if self._env is None:
                self._env = gym.make(env_id, **env_kwargs).unwrapped
            return self._env

        def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None, instance: Any = None,
                  difficulty: Optional[dict] = None, **kwargs: Any) -> SolverGymObservation:
            if not client_instances:
                chosen = {"seed": seed, "instance": instance, "difficulty": difficulty}
                given = [k for k in CLIENT_CHOICES if chosen[k] is not None]
                if given:
                    raise ValueError(f"this server draws every instance itself (solvergym serve "
                                     f"--no-client-instances): reset takes no {', '.join(given)}")
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
            if self._env is not None:
                self._env.close()

    SolverGymEnvironment.__name__ = SolverGymEnvironment.__qualname__ = f"{env_id.replace('-', '_')}Environment"
    return SolverGymEnvironment


def make_app(env_id: str, *, max_sessions: int = 8, http_routes: bool = False, client_instances: bool = True,
             **env_kwargs: Any) -> FastAPI:
    """The FastAPI app serving ``env_id``: OpenEnv's WebSocket ``/ws`` (one env per session), ``/health``,
    ``/schema``, ``/metadata`` and ``/mcp`` (its production mode), at most ``max_sessions`` envs at once.

    ``http_routes``: also ``POST /reset``, ``POST /step`` and ``GET /state`` over one shared episode
    that holds one of the ``max_sessions`` (so it needs at least 2); ``client_instances``: whether a
    client's ``reset`` may choose the instance (:func:`environment_class`). The module docstring
    says why each is what it is by default."""
    if isinstance(max_sessions, bool) or not isinstance(max_sessions, int) or max_sessions < 1:
        raise ValueError(f"max_sessions must be an int >= 1, got {max_sessions!r}")
    if http_routes and max_sessions < 2:
        raise ValueError("the HTTP routes' episode holds one of max_sessions, and WebSocket sessions need "
                         f"another: give max_sessions >= 2 with them, got {max_sessions}")
    cls = environment_class(env_id, client_instances=client_instances, **env_kwargs)
    app = FastAPI(title=f"solvergym {resolve_env_id(env_id)} (OpenEnv)", docs_url="/docs", redoc_url="/redoc",
                  openapi_url="/openapi.json")
    server = HTTPEnvServer(cls, TextAction, SolverGymObservation,
                           max_concurrent_envs=max_sessions - 1 if http_routes else max_sessions)
    # production mode: OpenEnv's own /reset, /step and /state make an env per request, past the cap
    server.register_routes(app, mode=ServerMode.PRODUCTION)
    if http_routes:
        _add_http_routes(app, cls)
    return app


class _HttpEpisode:
    """The one episode the HTTP routes drive: one :func:`environment_class` instance (its gym env
    made at the first ``/reset`` or ``/step``), whose calls run one at a time on one thread (Z3's
    main context, which the step-verified families use, is not thread-safe; a session's env never
    changes threads on the WebSocket path either). The env's own errors are HTTP errors, not 500s:
    409 for a step without a live episode, 422 for a refused seed, instance, difficulty or value."""

    def __init__(self, cls: Callable[[], Environment]):
        self.env = cls()
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="openenv-http-episode")

    async def call(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        loop = asyncio.get_running_loop()
        try:
            return await loop.run_in_executor(self._thread, lambda: fn(*args, **kwargs))
        except ResetNeeded as e:  # a step before a reset, or after the episode ended
            raise HTTPException(status_code=409, detail=str(e)) from None
        except (ValueError, TypeError) as e:  # a bad instance, difficulty or refused choice
            raise HTTPException(status_code=422, detail=str(e)) from None

    def close(self) -> None:
        self._thread.submit(self.env.close).result()
        self._thread.shutdown(wait=True)


def _add_http_routes(app: FastAPI, cls: Callable[[], Environment]) -> None:
    """``POST /reset``, ``POST /step`` and ``GET /state`` over one :class:`_HttpEpisode`, with
    OpenEnv's request and response types (so its HTTP clients and curl work as in simulation mode)."""
    episode = _HttpEpisode(cls)
    app.router.on_shutdown.append(episode.close)

    @app.post("/reset", response_model=ResetResponse, tags=["Environment Control"],
              summary="Reset the server's one HTTP episode (seed, episode_id, instance, difficulty)")
    async def reset(request: ResetRequest = Body(default_factory=ResetRequest)) -> ResetResponse:
        kwargs = request.model_dump(exclude_unset=True)
        return ResetResponse(**serialize_observation(await episode.call(episode.env.reset, **kwargs)))

    @app.post("/step", response_model=StepResponse, tags=["Environment Control"],
              summary="One turn of the server's one HTTP episode: {\"action\": {\"text\": ...}}")
    async def step(request: StepRequest) -> StepResponse:
        try:
            action = deserialize_action(request.action, TextAction)
        except ValidationError as e:
            raise HTTPException(status_code=422, detail=e.errors()) from None
        return StepResponse(**serialize_observation(await episode.call(episode.env.step, action)))

    @app.get("/state", response_model=SolverGymState, tags=["State Management"],
             summary="The HTTP episode's state")
    async def state() -> SolverGymState:
        return await episode.call(lambda: episode.env.state)


def manifest(env_id: str, port: int, *, max_sessions: int = 8, http_routes: bool = False,
             client_instances: bool = True, **env_kwargs: Any) -> str:
    """The ``openenv.yaml`` of a served env (OpenEnv's spec 1); its ``app`` is this module's
    :data:`app`, which reads the env from ``SOLVERGYM_ENV_ID`` / ``SOLVERGYM_ENV_KWARGS`` and the
    server's settings (:func:`make_app`'s) from ``SOLVERGYM_SERVE``, written here where they are not
    the defaults (a server started from the manifest keeps ``--no-client-instances``)."""
    env_id = resolve_env_id(env_id)
    name = env_id.lower().replace("-", "_")
    run = f"SOLVERGYM_ENV_ID={env_id} SOLVERGYM_ENV_KWARGS='{json.dumps(env_kwargs, sort_keys=True)}'"
    settings = {k: v for k, v, default in (("max_sessions", max_sessions, 8), ("http_routes", http_routes, False),
                                           ("client_instances", client_instances, True)) if v != default}
    flags = [f"--max-sessions {int(max_sessions)}"] * (max_sessions != 8) + ["--http-routes"] * bool(http_routes) \
        + ["--no-client-instances"] * (not client_instances)
    if settings:
        run += f" SOLVERGYM_SERVE='{json.dumps(settings, sort_keys=True)}'"
    return (f"# {run} uvicorn solvergym.adapters.openenv:app --port {int(port)}\n"
            f"# (or: solvergym serve {' '.join([env_id, '--port', str(int(port)), *flags])})\n"
            f"spec_version: 1\nname: {name}\ntype: space\nruntime: fastapi\n"
            f"app: solvergym.adapters.openenv:app\nport: {int(port)}\n"
            f"description: solvergym {env_id} (solver-verified rewards)\n")


#: the settings ``SOLVERGYM_SERVE`` may give :func:`make_app`
SERVE_SETTINGS = ("max_sessions", "http_routes", "client_instances")


def __getattr__(name: str) -> Any:
    """``app``: the env named by ``SOLVERGYM_ENV_ID`` (and ``SOLVERGYM_ENV_KWARGS``, JSON), served
    with the settings in ``SOLVERGYM_SERVE`` (JSON), for a server started from the manifest."""
    if name == "app":
        if "SOLVERGYM_ENV_ID" not in os.environ:
            raise AttributeError("set SOLVERGYM_ENV_ID (and SOLVERGYM_ENV_KWARGS) to the env to serve")
        settings = json.loads(os.environ.get("SOLVERGYM_SERVE") or "{}")
        unknown = sorted(set(settings) - set(SERVE_SETTINGS))
        if unknown:
            raise ValueError(f"SOLVERGYM_SERVE: unknown settings {unknown}; known: {list(SERVE_SETTINGS)}")
        return make_app(os.environ["SOLVERGYM_ENV_ID"], **settings,
                        **json.loads(os.environ.get("SOLVERGYM_ENV_KWARGS") or "{}"))
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
