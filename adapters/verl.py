"""verl (0.9): ``compute_score`` for its reward loop, and parquet rows in its layout.

    # verl config: reward.custom_reward_function.path=pkg://solvergym.adapters.verl
    #              reward.custom_reward_function.name=compute_score
    from solvergym.adapters.verl import write_verl_parquet
    write_verl_parquet("data/sat_train.parquet", "SolverSAT-v0", 1024, seed=0, n=3, k=5, l=6)

A row is ``{"data_source": env id, "prompt": [messages], "ability", "reward_model": {"style":
"rule", "ground_truth": instance JSON}, "extra_info": {"env_kwargs": JSON, "seed", "index",
"split"}}``; :func:`compute_score` (``compute_score_async`` for verl's async reward loop) poses the
ground truth in the env named by ``data_source`` with the row's keyword arguments and returns the
env's reward as ``{"score", "status", "reason", "correct", "component/<name>"...}``: a row it
cannot score is a score of 0.0 with the reason (:mod:`.scoring`). Scorers are kept per (env,
keyword arguments): :func:`~.scoring.scorer_for`.
"""
from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from .scoring import INSTANCE_COLUMN, KWARGS_COLUMN, Score, env_kwargs_of, scorer_for, task_rows

__all__ = ["compute_score", "compute_score_async", "verl_rows", "write_verl_parquet"]

#: (data_source, env_kwargs text) -> its scorer (dict reads and writes are atomic under the GIL)
_by_row: dict[tuple[str, str | None], Any] = {}


def compute_score(data_source: Any, solution_str: Any, ground_truth: Any, extra_info: Any = None,
                  **kwargs: Any) -> dict[str, Any]:
    """verl's reward signature: the env ``data_source``'s reward for ``solution_str`` on the
    instance ``ground_truth``; see the module docstring."""
    raw = extra_info.get("env_kwargs") if isinstance(extra_info, dict) else None
    key = (str(data_source), raw if isinstance(raw, str) else None)
    scorer = _by_row.get(key)  # a row's kwargs are the same JSON text row after row: parsed once
    if scorer is None:
        try:
            scorer = scorer_for(key[0], env_kwargs_of(raw))
        except ValueError as e:  # an unknown env or bad keyword arguments: this row only
            return Score(0.0, "bad_row", str(e)[:300]).to_dict()
        if key[1] is not None or raw is None:
            _by_row[key] = scorer
    return scorer.score(ground_truth, solution_str).to_dict()


async def compute_score_async(data_source: Any, solution_str: Any, ground_truth: Any, extra_info: Any = None,
                              **kwargs: Any) -> dict[str, Any]:
    """:func:`compute_score` in a worker thread (a sandboxed env waits on its programs)."""
    return await asyncio.to_thread(compute_score, data_source, solution_str, ground_truth, extra_info)


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
