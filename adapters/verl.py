"""verl (0.9): ``compute_score`` for its reward loop, and parquet rows in its layout.

    # verl config: reward.custom_reward_function.path=pkg://solvergym.adapters.verl
    #              reward.custom_reward_function.name=compute_score
    from solvergym.adapters.verl import write_verl_parquet
    write_verl_parquet("data/sat_train.parquet", "SolverSAT-v0", 1024, seed=0, n=3, k=5, l=6)

A row is ``{"data_source": env id, "prompt": [messages], "ability", "reward_model": {"style":
"rule", "ground_truth": instance JSON}, "extra_info": {"env_kwargs": JSON, "seed", "index",
"split"}}``; :func:`compute_score` (``compute_score_async`` for verl's async reward loop) poses the
ground truth in the env named by ``data_source`` (a registered id: a row imports no module) with
the row's keyword arguments and returns the env's reward. A row it cannot score is a score of 0.0
with the reason, never an exception (:func:`~.scoring.score_row`). Scorers are kept per (env,
keyword arguments): :func:`~.scoring.scorer_for_row`.

**The same keys on every row.** verl 0.9.1 collates the reward dicts of a batch by the first
row's keys and indexes every other row with them (``experimental/agent_loop/agent_loop.py``,
``AgentLoopWorker._postprocess``; ``experimental/reward_loop/reward_loop.py``,
``RewardLoopManager.compute_rm_score``): a row missing one of them ends the run with a
``KeyError``. So every row returns exactly ``score`` (the env's whole reward), ``status``,
``reason``, ``correct`` and ``component/<name>`` for each name of a fixed list, in that order,
whatever its env and whether or not it could be scored; a component the row's env does not pay,
or every component of a row that could not be scored, is 0.0. The list is :data:`COMPONENTS`,
the union of every built-in single-turn env's components, unless the dataset names its own with
verl's ``reward.custom_reward_function.reward_kwargs.components=[format,correct]`` (verl passes
``reward_kwargs`` to every call; ``components=`` here). Why a union and not each env's own: a
batch mixes envs and bad rows in any order, and the first row's keys must hold every other row's.
Why a fixed list and not whatever is registered: the set must not change with what a process
happens to have imported. A family of one's own whose components are not in the list names them
in ``components``; a component outside the list is not broken out, and is still in ``score``.

A tool rollout (:mod:`.verl_tool`) is scored by :func:`compute_tool_score` (``verl_tool``'s
``compute_score``): the :class:`EpisodeReturn` the tool recorded for the rollout, never a number
the row carries.
"""
from __future__ import annotations

import asyncio
from pathlib import Path
from dataclasses import dataclass
from typing import Any, Iterable

from .scoring import ENV_COLUMN, INSTANCE_COLUMN, KWARGS_COLUMN, score_row, task_rows

__all__ = ["COMPONENTS", "RETURN_FIELD", "EpisodeReturn", "compute_score", "compute_score_async", "compute_tool_score",
           "verl_rows", "write_verl_parquet"]

#: the components every row's dict carries by default (``component/<name>``): the union of the
#: built-in single-turn envs' (SAT and SAT-Bench and Synthetic-Logic: format, correct; the
#: Spring traces: parsed, format, accuracy, novel, consistency, contra; SIRL: format, execution,
#: accuracy, bonus), in the order the registry first lists them
COMPONENTS = ("format", "correct", "parsed", "accuracy", "novel", "consistency", "contra", "execution", "bonus")


def _names(components: Iterable[str] | None) -> tuple[str, ...]:
    """The component names a call returns: :data:`COMPONENTS`, or the dataset's own list (a list
    from verl's config, an OmegaConf ``ListConfig``, or one name)."""
    if components is None:
        return COMPONENTS
    if isinstance(components, str):
        return (components,)
    return tuple(dict.fromkeys(str(c) for c in components))  # a name given twice is one key


def compute_score(data_source: Any, solution_str: Any, ground_truth: Any, extra_info: Any = None,
                  components: Iterable[str] | None = None, **kwargs: Any) -> dict[str, Any]:
    """verl's reward signature: the env ``data_source``'s reward for ``solution_str`` on the
    instance ``ground_truth``, as ``{"score", "status", "reason", "correct", "component/<name>"
    for each of components}`` (:data:`COMPONENTS` by default); see the module docstring. Other
    keyword arguments (verl's ``reward_router_address``...) are ignored."""
    raw = extra_info.get("env_kwargs") if isinstance(extra_info, dict) else None
    row = {ENV_COLUMN: data_source, KWARGS_COLUMN: raw, INSTANCE_COLUMN: ground_truth}
    return score_row(solution_str, row).to_dict(_names(components))


async def compute_score_async(data_source: Any, solution_str: Any, ground_truth: Any, extra_info: Any = None,
                              components: Iterable[str] | None = None, **kwargs: Any) -> dict[str, Any]:
    """:func:`compute_score` in a worker thread (a sandboxed env waits on its programs)."""
    return await asyncio.to_thread(compute_score, data_source, solution_str, ground_truth, extra_info, components)


#: the key of a tool rollout's ``agent_data.extra_fields`` that holds its :class:`EpisodeReturn`
RETURN_FIELD = "solvergym_episode"


@dataclass(frozen=True)
class EpisodeReturn:
    """A tool rollout's episode as :class:`~.verl_tool.SolverGymTool` recorded it: its return so far
    (``value``), whether it ended, the final answer's ``correct``, its turns, and ``status`` /
    ``reason`` where it could not go on (``bad_row``, ``error``, ``evicted``...)."""

    value: float
    done: bool
    correct: bool | None
    turns: int
    status: str = "ok"
    reason: str = ""


def compute_tool_score(data_source: Any, solution_str: Any, ground_truth: Any, extra_info: Any = None,
                       **kwargs: Any) -> dict[str, Any]:
    """verl's reward signature for a tool rollout (``verl_tool.compute_score``): the rollout's
    :class:`EpisodeReturn`, which the tool put in ``agent_data.extra_fields`` and verl's reward
    loop merged into ``extra_info`` (``reward_manager/naive.py``:
    ``extra_info.update(tool_extra_fields.items())``). Nothing else in ``extra_info`` is read: a
    rollout that called no tool keeps the row's own ``extra_info``, and a number there
    (``{"solvergym_return": 2.2}``) is the row's, not an episode's; only the tool makes the object,
    and no row can hold one (parquet holds JSON types; Ray carries the object pickled, as its
    class). Without one, 0.0 and ``no_episode``. The keys are always ``score``, ``status`` (``ok``
    or why the episode stopped), ``reason``, ``correct`` and ``done``, for verl's collation."""
    record = extra_info.get(RETURN_FIELD) if isinstance(extra_info, dict) else None
    if isinstance(record, EpisodeReturn):
        return {"score": float(record.value), "status": record.status, "reason": record.reason,
                "correct": record.correct, "done": bool(record.done)}
    return {"score": 0.0, "status": "no_episode", "reason": "the rollout called no solvergym tool", "correct": None,
            "done": False}


def verl_rows(env_id: str, count: int, /, *, seed: int = 0, split: str = "train", ability: str = "logic",
              **env_kwargs: Any) -> list[dict[str, Any]]:
    """``count`` rows in verl's layout (see the module docstring) from :func:`~.scoring.task_rows`."""
    out = []
    for i, row in enumerate(task_rows(env_id, count, seed=seed, **env_kwargs)):
        out.append({"data_source": row["solvergym_env"], "prompt": row["prompt"], "ability": ability,
                    "reward_model": {"style": "rule", "ground_truth": row[INSTANCE_COLUMN]},
                    "extra_info": {"env_kwargs": row[KWARGS_COLUMN], "seed": row["seed"], "index": i, "split": split}})
    return out


def write_verl_parquet(path: str | Path, env_id: str, count: int, /, *, seed: int = 0, split: str = "train",
                       **env_kwargs: Any) -> Path:
    """:func:`verl_rows` written as parquet (``pyarrow``), the file verl's ``RLHFDataset`` reads."""
    return write_parquet(path, verl_rows(env_id, count, seed=seed, split=split, **env_kwargs))


def write_parquet(path: str | Path, rows: list[dict[str, Any]]) -> Path:
    """``rows`` as a parquet file at ``path`` (its folders made), the same rows the same bytes."""
    import pyarrow as pa  # lazy: only the exporters need it
    import pyarrow.parquet as pq

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(rows), path)
    return path
