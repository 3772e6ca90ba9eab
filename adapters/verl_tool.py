"""verl (0.9) multi-turn tools: a tool env's solver tools as a verl ``BaseTool`` whose programs run
in solvergym's sandbox, and the env's own return as the rollout's score.

    from solvergym.adapters.verl_tool import write_tool_config, write_verl_tool_parquet
    write_tool_config("config/solvergym_tools.yaml", "SolverTool-v0", task="sat-bench", solver="z3")
    write_verl_tool_parquet("data/sat_tools.parquet", "SolverTool-v0", 1024, seed=0, task="sat-bench", solver="z3")
    # verl: actor_rollout_ref.rollout.multi_turn.enable=True
    #       actor_rollout_ref.rollout.multi_turn.tool_config_path=config/solvergym_tools.yaml
    #       reward.custom_reward_function.path=pkg://solvergym.adapters.verl_tool
    #       reward.custom_reward_function.name=compute_score

The tools (:func:`tool_names`, one YAML entry each, every one a :class:`SolverGymTool`):
``run_<solver>`` per solver the env offers (``{"code": str}``), one ``<tool_call>`` turn of the
env: the program runs in the sandbox (isolated, limited, never in the rollout's process) and the
response is the env's observation; ``answer`` (``{"answer": str}``) ends the episode (a bare answer
goes in the env's ```` ```answer ...``` ```` fence). Each takes either parameter; the schemas offer
one each. The tools of one rollout share its episode.

Lifecycle. :meth:`~SolverGymTool.create` takes the row's ``create_kwargs`` (``ground_truth``: the
instance JSON :func:`verl_tool_rows` writes; ``env_kwargs``: the row's, over the YAML's), spread
or as verl 0.9's ``create_kwargs={...}``; the episode is posed on the first call. verl 0.9's
``ToolAgentLoop`` creates, executes and releases an instance per call and hands ``execute`` the
rollout (``agent_data``): the episode is then the rollout's (``agent_data.request_id``) and
outlives each call's instance; ``execute`` records it as an :class:`EpisodeReturn` in
``agent_data.extra_fields[RETURN_FIELD]``, which verl's reward loop merges into the row's
``extra_info`` (``reward_manager/naive.py``: ``extra_info.update(tool_extra_fields.items())``) for
:func:`compute_score`. A rollout that called no tool keeps the row's own ``extra_info``, so
:func:`compute_score` trusts only that object, which no row can hold (parquet holds JSON types; Ray
carries the object pickled, as its class): a row's ``{"solvergym_return": 2.2}`` scores 0.0,
``no_episode``. Without ``agent_data`` (one instance per rollout) the episode is the instance's,
closed by :meth:`~SolverGymTool.release`. ``execute``
returns the reward the env paid this step (under its default ``reward_timing="end"``, 0.0 for a
tool call, all on the answer); :meth:`~SolverGymTool.calc_reward` the return so far. Where a
rollout may end unanswered (verl's turn or length limits), ``reward_timing="per_call"`` keeps what
its calls earned, as a Gymnasium time limit's episode does (``envs/modes/tool.py``).

Bounds. A tool keeps at most ``max_episodes`` instances (YAML ``config``, default
:data:`MAX_EPISODES`; past it the oldest is released); the process keeps at most that many
episodes open (an ended one is closed at once, its return kept; past it the least recently used is
closed, and its later calls are told so and pay 0.0) and :data:`RECORDS_PER_EPISODE` times as many
ended ones' returns. A trainer that never releases leaks nothing unbounded.

Bad input (an unknown or released instance, parameters that are not a dict, a missing or non-text
``code``/``answer``, a call after the episode ended, a ground truth or keyword arguments the env
refuses) is a message, 0.0 and ``metrics["status"]``/``["reason"]``; the env is not stepped and
nothing raises into the rollout (the row is read by :mod:`.scoring`'s readers, behind their one
guard: a row nested too deep or with a keyword the env lacks is ``bad_row``). Steps wait on the
sandbox: they run in a worker thread (``asyncio.to_thread``), one at a time per episode, and an
env whose problem is not thread-safe steps under the lock every scorer shares.

With verl importable (``make install`` installs verl 0.9.1 with ``--no-deps``),
:class:`SolverGymTool` subclasses ``verl.tools.base_tool.BaseTool`` and uses verl's
``OpenAIFunctionToolSchema`` and ``ToolResponse``; without it (its requirements pin transformers <
5.11), a minimal local base, the same schema as a dict and a dataclass response with ``.text``.

Function tools (verl's ``@function_tool`` infers a schema from a typed function with ``Args:``):
:func:`function_tools` gives ``run_<solver>(code: str) -> str``, the same schemas. verl's function
tools are stateless by design (no ``create_kwargs``, no rollout): they carry no episode and pay no
reward, only run programs as the env's tool turns do. Training on the reward needs the class.
"""
from __future__ import annotations

import asyncio
import dataclasses
import json
import threading
import uuid
from collections import OrderedDict
from pathlib import Path
from typing import Any, Callable

import gymnasium as gym

from ..registry import resolve_env_id
from ..sandbox.result import ExecutorUnavailable
from . import scoring
from .scoring import MAX_INSTANCE_CHARS, BadRow, env_kwargs_of, make_row_env, pose
from .verl import RETURN_FIELD, EpisodeReturn, compute_tool_score, verl_rows, write_parquet

try:  # verl pins a CUDA stack: anything failing in its import leaves the local stand-ins
    from verl.tools.base_tool import BaseTool as _Base
    from verl.tools.schemas import OpenAIFunctionToolSchema as _Schema
    from verl.tools.schemas import ToolResponse
    HAVE_VERL = True
except Exception:  # noqa: BLE001
    HAVE_VERL = False
    _Schema = None

    @dataclasses.dataclass
    class ToolResponse:
        """verl's ``ToolResponse`` where verl is not installed."""

        text: str | None = None
        image: list | None = None
        video: list | None = None

    class _Base:
        """verl's ``BaseTool`` where verl is not installed: ``config``, ``tool_schema``, ``name``."""

        def __init__(self, config: dict, tool_schema: Any):
            self.config, self.tool_schema = config, tool_schema
            self.name = _schema_dict(tool_schema)["function"]["name"]

__all__ = ["SolverGymTool", "ToolResponse", "HAVE_VERL", "MAX_EPISODES", "RECORDS_PER_EPISODE", "RETURN_FIELD",
           "EpisodeReturn", "tool_names", "tool_schema", "tool_config", "write_tool_config", "verl_tool_rows",
           "write_verl_tool_parquet", "function_tools", "compute_score"]

#: the instances a tool keeps and the episodes a process keeps open (YAML ``config.max_episodes``)
MAX_EPISODES = 1024
#: ended episodes' returns kept per open episode allowed (each a few numbers)
RECORDS_PER_EPISODE = 8
ANSWER_TOOL = "answer"
_CLASS = f"{__name__}.SolverGymTool"
_ENDED = "The episode has ended; nothing was run."


def _schema_dict(schema: Any) -> dict[str, Any]:
    """A schema as the OpenAI function-tool dict (verl's pydantic model dumped)."""
    return schema.model_dump(exclude_unset=True, exclude_none=True) if hasattr(schema, "model_dump") else schema


def tool_names(env_id: str = "SolverTool-v0", /, **env_kwargs: Any) -> list[str]:
    """The tools of ``env_id`` (a multi-turn env with solver tools): ``run_<solver>`` for each solver
    its prompt may name, then ``answer``. A ``ValueError`` for an unknown id or an env without tools."""
    env_id = resolve_env_id(env_id)
    probe = gym.make(env_id, **env_kwargs).unwrapped
    fixed = getattr(probe, "fixed_solver", None)
    solvers = (fixed,) if fixed else tuple(getattr(probe, "solvers", ()) or ())
    probe.close()
    if not solvers:
        raise ValueError(f"{env_id} with {env_kwargs} offers no solver tools (a tool-mode env does: SolverTool-v0)")
    return [f"run_{s.replace('-', '_')}" for s in solvers] + [ANSWER_TOOL]


def _texts(name: str) -> tuple[str, str, str]:
    """(description, parameter, its description) of a tool: its schema and its function's docstring."""
    if name == ANSWER_TOOL:
        return ("Give the final answer and end the episode.", "answer",
                "the final answer in the format the problem asks for (for example ```answer yes```).")
    solver = name.removeprefix("run_").replace("_", "-")
    return (f"Run a Python program that uses {solver} in the sandbox and return its output.", "code",
            "the complete Python program; it must print what it finds.")


def tool_schema(name: str) -> dict[str, Any]:
    """The OpenAI function-tool schema of the tool ``name`` (``run_<solver>`` or ``answer``)."""
    description, param, about = _texts(name)
    return {"type": "function", "function": {
        "name": name, "description": description,
        "parameters": {"type": "object", "properties": {param: {"type": "string", "description": about}},
                       "required": [param]}}}


_tool_schema = tool_schema  # SolverGymTool's argument of that name hides it


def tool_config(env_id: str = "SolverTool-v0", /, **env_kwargs: Any) -> dict[str, Any]:
    """verl's tool config (``multi_turn.tool_config_path``) for ``env_id``: one entry per tool of
    :func:`tool_names`, each a :class:`SolverGymTool` with its schema."""
    names = tool_names(env_id, **env_kwargs)
    try:
        kwargs = json.loads(json.dumps(env_kwargs, sort_keys=True))
    except (TypeError, ValueError) as e:
        raise ValueError(f"a tool config carries JSON keyword arguments only: {e}") from None
    config = {"type": "native", "env_id": resolve_env_id(env_id), "env_kwargs": kwargs}
    return {"tools": [{"class_name": _CLASS, "config": {**config, "tool": name}, "tool_schema": tool_schema(name)}
                      for name in names]}


def write_tool_config(path: str | Path, env_id: str = "SolverTool-v0", /, **env_kwargs: Any) -> Path:
    """:func:`tool_config` written as the YAML file verl reads."""
    import yaml  # lazy: only the exporter needs it

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(tool_config(env_id, **env_kwargs), sort_keys=False, allow_unicode=True))
    return path


def verl_tool_rows(env_id: str, count: int, /, *, seed: int = 0, split: str = "train", ability: str = "logic",
                   agent_name: str = "tool_agent", **env_kwargs: Any) -> list[dict[str, Any]]:
    """:func:`~.verl.verl_rows` for the tool form: each row's ``extra_info`` also holds
    ``tools_kwargs`` (``{tool: {"create_kwargs": {"ground_truth", "env_kwargs"}}}`` for every tool
    of :func:`tool_names`) and ``need_tools_kwargs``, and the row names verl's ``agent_name``."""
    names = tool_names(env_id, **env_kwargs)
    rows = verl_rows(env_id, count, seed=seed, split=split, ability=ability, **env_kwargs)
    for row in rows:
        create = {"ground_truth": row["reward_model"]["ground_truth"], "env_kwargs": row["extra_info"]["env_kwargs"]}
        row["extra_info"]["tools_kwargs"] = {name: {"create_kwargs": dict(create)} for name in names}
        row["extra_info"]["need_tools_kwargs"] = True
        row["agent_name"] = agent_name
    return rows


def write_verl_tool_parquet(path: str | Path, env_id: str, count: int, /, *, seed: int = 0, split: str = "train",
                            **env_kwargs: Any) -> Path:
    """:func:`verl_tool_rows` written as parquet (``pyarrow``), the file verl's ``RLHFDataset`` reads."""
    return write_parquet(path, verl_tool_rows(env_id, count, seed=seed, split=split, **env_kwargs))


#: verl's reward function for a tool rollout (``reward.custom_reward_function.name=compute_score``
#: with this module's path): :func:`~.verl.compute_tool_score`, the rollout's :class:`EpisodeReturn`
compute_score = compute_tool_score


# ------------------------------------------------------------------------------------------- episodes
@dataclasses.dataclass(eq=False)
class _Episode:
    """One posed env and what it paid; ``env`` is ``None`` once it ended, failed or was closed, and
    ``live`` is whether it counts among the process's open episodes."""

    key: tuple
    env: Any = None
    total: float = 0.0
    done: bool = False
    turns: int = 0
    correct: bool | None = None
    status: str = "ok"  # else why it takes no turn: bad_row, error, evicted, released
    reason: str = ""
    posed: bool = False
    live: bool = False
    lock: threading.Lock = dataclasses.field(default_factory=threading.Lock)

    def close_env(self) -> None:  # under self.lock
        env, self.env = self.env, None
        if env is not None:
            env.close()


class _Episodes:
    """The process's episodes by (env id, keyword arguments, rollout or instance), least recently
    used first; ``live``: how many are open."""

    def __init__(self) -> None:
        self.records: OrderedDict[tuple, _Episode] = OrderedDict()
        self.live = 0
        self.lock = threading.Lock()

    def get(self, key: tuple | None, make: bool) -> _Episode | None:
        if key is None:
            return None
        with self.lock:
            ep = self.records.get(key)
            if ep is None and make:
                ep = self.records[key] = _Episode(key)
            if ep is not None:
                self.records.move_to_end(key)
            return ep

    def opened(self, ep: _Episode, cap: int) -> None:
        """``ep`` was posed: count it open, close the least recently used past ``cap`` open ones
        and forget the oldest ended ones past ``cap * RECORDS_PER_EPISODE``."""
        out = []
        with self.lock:
            if self.records.get(ep.key) is not ep:
                return  # released while it was posed: its stepping thread closes it
            ep.live = True
            self.live += 1
            over = self.live > cap or len(self.records) > cap * RECORDS_PER_EPISODE
            for old in list(self.records.values()) if over else ():
                if self.live <= cap and len(self.records) <= cap * RECORDS_PER_EPISODE:
                    break
                if old is ep or not old.posed:  # one being posed now is counted when it opens
                    continue
                if old.live and self.live > cap:
                    old.live, old.status = False, "evicted"
                    old.reason = f"the episode was closed: over {cap} episodes were open at once"
                    self.live -= 1
                    out.append(old)
                elif not old.live and len(self.records) > cap * RECORDS_PER_EPISODE:
                    del self.records[old.key]
        for old in out:
            _retire(old)

    def ended(self, ep: _Episode) -> None:
        with self.lock:
            self.live -= ep.live
            ep.live = False

    def drop(self, key: tuple) -> None:
        with self.lock:
            ep = self.records.pop(key, None)
            if ep is None:
                return
            self.live -= ep.live
            ep.live, ep.status, ep.reason = False, "released", "the instance was released"
        _retire(ep)


def _retire(ep: _Episode) -> None:
    """Close ``ep``'s env now, or leave it to the thread stepping it (which looks after its step)."""
    if ep.lock.acquire(blocking=False):
        try:
            ep.close_env()
        finally:
            ep.lock.release()


_EPISODES = _Episodes()


@dataclasses.dataclass
class _Handle:
    """An instance ``create`` made: the row's instance and env keyword arguments, or why not."""

    ground_truth: Any = None
    kwargs: dict = dataclasses.field(default_factory=dict)
    kwargs_json: str = "{}"
    error: str = ""
    episode: tuple | None = None  # the key of the episode its last call stepped


def _action(parameters: Any) -> tuple[str | None, str]:
    """The env action for a tool call's parameters, or (None, why not)."""
    if not isinstance(parameters, dict):
        return None, f"the parameters must be a JSON object, got {type(parameters).__name__}"
    has_code, has_answer = "code" in parameters, "answer" in parameters
    if has_code == has_answer:
        return None, ("give either 'code' (a program to run) or 'answer' (the final answer), not both" if has_code
                      else f"missing parameter 'code' or 'answer' (got {sorted(map(str, parameters))[:8]})")
    name = "code" if has_code else "answer"
    value = parameters[name]
    if not isinstance(value, str):
        return None, f"'{name}' must be text, got {type(value).__name__}"
    if has_code:
        return f"<tool_call>\n{value}\n</tool_call>", ""
    return (value if "```" in value else f"```answer\n{value}\n```"), ""


class SolverGymTool(_Base):
    """A solvergym tool env's tool for verl's multi-turn rollouts (see the module docstring).

    ``config``: ``env_id`` (default ``SolverTool-v0``), ``env_kwargs`` (dict or JSON text),
    ``tool`` (the schema offered: a name of :func:`tool_names`, default the first) and
    ``max_episodes``; ``tool_schema``: verl's, else :func:`tool_schema` of ``tool``. An unknown env
    or one without tools is an error here, before training starts.
    """

    def __init__(self, config: dict | None = None, tool_schema: Any = None):
        config = dict(config or {})
        self.env_id = resolve_env_id(config.get("env_id", "SolverTool-v0"))
        self.env_kwargs = env_kwargs_of(config.get("env_kwargs"))
        names = tool_names(self.env_id, **self.env_kwargs)
        if tool_schema is None:
            name = config.get("tool") or names[0]
            if name not in names:
                raise ValueError(f"{self.env_id} has no tool {name!r}; its tools: {names}")
            tool_schema = _tool_schema(name)
        if HAVE_VERL and isinstance(tool_schema, dict):
            tool_schema = _Schema.model_validate(tool_schema)
        self.max_episodes = max(1, int(config.get("max_episodes", MAX_EPISODES)))
        self._setup()
        super().__init__(config, tool_schema)

    def _setup(self) -> None:
        self._handles: OrderedDict[str, _Handle] = OrderedDict()
        self._lock = threading.Lock()

    def __getstate__(self) -> dict[str, Any]:  # a copy (verl deep-copies tool lists) holds no instances
        return {k: v for k, v in self.__dict__.items() if k not in ("_handles", "_lock")}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._setup()

    def get_openai_tool_schema(self) -> Any:
        return self.tool_schema

    # -- verl's calls ----------------------------------------------------------------------------
    async def create(self, instance_id: str | None = None, ground_truth: Any = None, env_kwargs: Any = None,
                     **kwargs: Any) -> tuple[str, ToolResponse]:
        """An instance for the row's ``ground_truth`` (and ``env_kwargs``), given spread or as
        ``create_kwargs={...}``: its id and an empty response (the reason, for a bad row). A
        created id again is a new instance (its own episode, if any, is closed)."""
        nested = kwargs.get("create_kwargs")
        if isinstance(nested, dict):
            ground_truth = nested.get("ground_truth") if ground_truth is None else ground_truth
            env_kwargs = nested.get("env_kwargs") if env_kwargs is None else env_kwargs
        if not isinstance(instance_id, str) or not instance_id:
            instance_id = uuid.uuid4().hex
        handle = _Handle(ground_truth, error=self._row_error(ground_truth))
        try:
            handle.kwargs = {**self.env_kwargs, **env_kwargs_of(env_kwargs)}
        except BadRow as e:
            handle.error = str(e)
        else:  # checked by env_kwargs_of (no deeper than the records' bound): serialises
            handle.kwargs_json = json.dumps(handle.kwargs, sort_keys=True, default=str)
        gone = []
        with self._lock:
            if instance_id in self._handles:
                gone.append((instance_id, self._handles.pop(instance_id)))
            self._handles[instance_id] = handle
            while len(self._handles) > self.max_episodes:
                gone.append(self._handles.popitem(last=False))
        for old_id, old in gone:
            self._drop(old_id, old)
        return instance_id, ToolResponse(text=handle.error or None)

    async def execute(self, instance_id: str, parameters: Any, **kwargs: Any) -> tuple[ToolResponse, float, dict]:
        """One turn of the episode (``{"code": ...}`` runs a program, ``{"answer": ...}`` answers):
        the env's observation, the reward it paid this step and metrics (``status``, ``reason``,
        ``return``, ``done``, the program's ``tool_status``...)."""
        try:
            text, reward, metrics = await self._execute(instance_id, parameters, kwargs.get("agent_data"))
        except ExecutorUnavailable:
            raise  # issue 43 item 8: an executor that is gone is an error, never a program's status
        except Exception as e:  # noqa: BLE001 - the last guard: nothing raises into the rollout
            text, reward, metrics = f"The tool failed: {type(e).__name__}", 0.0, {
                "status": "error", "reason": f"{type(e).__name__}: {str(e)[:300]}"}
        return ToolResponse(text=text), reward, metrics

    async def calc_reward(self, instance_id: str, **kwargs: Any) -> float:
        """The episode's return so far: every reward the env paid its turns (0.0 for an unknown id)."""
        handle = self._handle(instance_id)
        if handle is None:
            return 0.0
        rollout = _rollout(kwargs.get("agent_data"))
        ep = _EPISODES.get(self._key(instance_id, handle, rollout) if rollout else handle.episode, make=False)
        return float(ep.total) if ep is not None else 0.0

    async def release(self, instance_id: str, **kwargs: Any) -> None:
        """Forget the instance; an episode of its own (no rollout) is closed, a rollout's is kept
        (closed when it ends, or by the bound)."""
        if not isinstance(instance_id, str):
            return
        with self._lock:
            handle = self._handles.pop(instance_id, None)
        if handle is not None:
            await asyncio.to_thread(self._drop, instance_id, handle)

    # -- the work ---------------------------------------------------------------------------------
    @staticmethod
    def _row_error(ground_truth: Any) -> str:
        if isinstance(ground_truth, str) and len(ground_truth) > MAX_INSTANCE_CHARS:
            return f"the instance JSON is over {MAX_INSTANCE_CHARS} characters"
        if isinstance(ground_truth, (str, dict)):
            return ""
        return f"ground_truth must be the instance JSON (verl_tool_rows writes it), got {type(ground_truth).__name__}"

    def _handle(self, instance_id: Any) -> _Handle | None:
        return self._handles.get(instance_id) if isinstance(instance_id, str) else None

    def _key(self, instance_id: str, handle: _Handle, rollout: str | None) -> tuple:
        return (self.env_id, handle.kwargs_json, rollout or ("instance", instance_id))

    def _drop(self, instance_id: str, handle: _Handle) -> None:
        if handle.episode is not None and handle.episode == self._key(instance_id, handle, None):
            _EPISODES.drop(handle.episode)

    async def _execute(self, instance_id: Any, parameters: Any, agent_data: Any) -> tuple[str, float, dict]:
        handle = self._handle(instance_id)
        if handle is None:
            return (f"Unknown tool instance {str(instance_id)[:80]!r}; nothing was run.", 0.0,
                    {"status": "unknown_instance", "reason": "no such instance (never created, or released)"})
        if handle.error:
            return f"The row cannot be posed: {handle.error}", 0.0, {"status": "bad_row", "reason": handle.error}
        action, why = _action(parameters)
        if action is None:
            return f"Bad tool call: {why}; nothing was run.", 0.0, {"status": "bad_input", "reason": why}
        rollout = _rollout(agent_data)
        handle.episode = key = self._key(instance_id, handle, rollout)
        text, reward, metrics = await asyncio.to_thread(self._step, key, handle, action)
        fields = getattr(agent_data, "extra_fields", None)
        if rollout and isinstance(fields, dict) and "return" in metrics:  # verl's reward loop reads it
            failed = metrics["status"] not in ("ok", "ended")  # the episode stopped: why, for the score
            record = EpisodeReturn(float(metrics["return"]), bool(metrics["done"]), metrics.get("correct"),
                                   int(metrics["turn"]), metrics["status"] if failed else "ok",
                                   str(metrics["reason"]) if failed else "")
            # parallel calls of one turn step in order but may come back out of it: keep the latest
            held = fields.get(RETURN_FIELD)
            if not isinstance(held, EpisodeReturn) or held.turns <= record.turns:
                fields[RETURN_FIELD] = record
        return text, reward, metrics

    def _step(self, key: tuple, handle: _Handle, action: str) -> tuple[str, float, dict]:
        """In a worker thread: pose the episode on its first call, then step it once."""
        ep = _EPISODES.get(key, make=True)
        opened = False
        with ep.lock:
            if not ep.posed:
                ep.posed = True
                why = self._pose(ep, handle)
                if why:
                    ep.done, ep.status, ep.reason = True, "bad_row", why
                opened = not why
            out = self._turn(ep, action)
            ended = ep.done and ep.env is not None
            if ended:
                ep.close_env()  # the episode is over: its env (and sandbox lease) goes back now
        if opened:
            _EPISODES.opened(ep, self.max_episodes)
        if ended or ep.env is None:
            _EPISODES.ended(ep)
        if not ep.live and ep.env is not None:
            _retire(ep)  # closed (evicted, released) while this step held it
        return out

    def _pose(self, ep: _Episode, handle: _Handle) -> str:
        """Make the env and pose the row's instance (``reset(options={"instance": ...})``, as every
        adapter poses one; JSON text is parsed by the env, bounded); why not, if it refuses."""
        try:
            env = make_row_env(self.env_id, handle.kwargs)
        except BadRow as e:  # a row's bad keyword arguments: that row only
            return str(e)
        try:
            pose(env, handle.ground_truth)
        except BadRow as e:
            env.close()
            return str(e)
        ep.env = env
        return ""

    @staticmethod
    def _turn(ep: _Episode, action: str) -> tuple[str, float, dict]:
        """One env step of ``ep`` (under its lock)."""
        if ep.status != "ok":
            return (f"The tool cannot run: {ep.reason}", 0.0,
                    {"status": ep.status, "reason": ep.reason, "return": ep.total, "turn": ep.turns, "done": True})
        if ep.done or ep.env is None:
            return _ENDED, 0.0, {"status": "ended", "reason": "the episode has ended", "return": ep.total,
                                 "turn": ep.turns, "done": True, "correct": ep.correct}
        env = ep.env
        try:
            if getattr(env, "concurrent_steps", True):
                obs, reward, terminated, truncated, info = env.step(action)
            else:
                with scoring.NOT_THREAD_SAFE:  # the lock every scorer steps such an env under
                    obs, reward, terminated, truncated, info = env.step(action)
        except ExecutorUnavailable: raise  # noqa: E701 - as execute's: the executor, not the episode, failed
        except Exception as e:  # noqa: BLE001 - the env's own step failing ends this episode, not the rollout
            ep.done, ep.status, ep.reason = True, "error", f"{type(e).__name__}: {str(e)[:300]}"
            return (f"The tool failed: {type(e).__name__}", 0.0,
                    {"status": "error", "reason": ep.reason, "return": ep.total, "turn": ep.turns, "done": True})
        ep.total += float(reward)
        ep.turns += 1
        ep.done = bool(terminated or truncated)
        if ep.done:
            ep.correct = info.get("correct")
        metrics = {"status": "ok", "reason": str(info.get("error") or info.get("reason") or ""),
                   "step_reward": float(reward), "return": ep.total, "turn": ep.turns, "done": ep.done,
                   "terminated": bool(terminated), "truncated": bool(truncated), "correct": ep.correct,
                   "tool_status": (info.get("tool_result") or {}).get("status"),
                   "reward_components": {k: float(v) for k, v in info.get("reward_components", {}).items()}}
        return obs, float(reward), metrics


def _rollout(agent_data: Any) -> str | None:
    """The rollout a call belongs to (verl 0.9 hands ``execute`` its ``agent_data``)."""
    rid = getattr(agent_data, "request_id", None)
    return rid if isinstance(rid, str) and rid else None


# -------------------------------------------------------------------------------------- function tools
def function_tools(env_id: str = "SolverTool-v0", /, **env_kwargs: Any) -> list[Callable[[str], str]]:
    """verl's function-tool form: ``run_<solver>(code: str) -> str`` for each solver of
    :func:`tool_names`, typed and with an ``Args:`` docstring (``@function_tool`` infers
    :func:`tool_schema` from it). A call is one ``<tool_call>`` turn of an env of this thread's
    (posed again before its last turn): the program runs in the sandbox and the env's observation
    is returned. Stateless, as verl's function tools are: no episode, no reward (the module
    docstring). Register them in a ``function_tool_path`` file::

        from verl.tools.function_tool import function_tool
        from solvergym.adapters.verl_tool import function_tools
        for fn in function_tools("SolverTool-v0", task="sat-bench", solver="z3"):
            function_tool(fn)
    """
    env_id = resolve_env_id(env_id)
    names = [n for n in tool_names(env_id, **env_kwargs) if n != ANSWER_TOOL]
    local = threading.local()

    def run_program(code: Any) -> str:
        if not isinstance(code, str):
            return f"The argument must be text, got {type(code).__name__}; nothing was run."
        env = getattr(local, "env", None)
        if env is None:
            env = local.env = gym.make(env_id, **env_kwargs).unwrapped
            env.reset(seed=0)
            local.instance, local.ready = env.instance, True
        if not local.ready or (env.max_turns > 1 and env.turn + 1 >= env.max_turns):
            env.reset(options={"instance": local.instance})  # a tool turn, never the scored last one
            local.ready = True
        try:
            obs, _, terminated, truncated, _ = env.step(f"<tool_call>\n{code}\n</tool_call>")
        except Exception as e:  # noqa: BLE001
            local.ready = False
            return f"The tool failed: {type(e).__name__}: {str(e)[:300]}"
        local.ready = not (terminated or truncated)
        return obs

    out = []
    for name in names:
        description, param, about = _texts(name)

        def run(code: str) -> str:
            return run_program(code)

        run.__name__ = run.__qualname__ = name
        run.__doc__ = f"{description}\n\nArgs:\n    {param}: {about}\n"
        out.append(run)
    return out
