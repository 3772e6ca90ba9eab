"""TRL (``GRPOTrainer``, 1.16): a solvergym env as a reward function, and its dataset rows.

    from trl import GRPOConfig, GRPOTrainer
    from solvergym.adapters.trl import reward_fn, trl_dataset

    train = trl_dataset("SolverSAT-v0", 512, seed=0, n=3, k=5, l=6)
    trainer = GRPOTrainer(model=..., reward_funcs=reward_fn("SolverSAT-v0", n=3, k=5, l=6),
                          train_dataset=train, args=GRPOConfig(...))

TRL calls a reward function with ``prompts``, ``completions`` and every dataset column as a list
(one entry per completion); :func:`reward_fn` reads the row's ``solvergym_*`` columns that
:func:`trl_rows` wrote and returns the env's own reward per completion
(:func:`~.scoring.score_row`). A row it cannot score (a row of another env or keyword
arguments, one nested too deep, an instance the env refuses) gets 0.0, and the reasons of the
last call are kept on the function (``fn.last_scores``) and warned about once per kind, so a
misconfigured run says why its rewards are zero instead of crashing. ``asynchronous=True`` returns a coroutine function (TRL awaits
several concurrently), each completion scored in a worker thread with ``timeout_s``.
"""
from __future__ import annotations

import asyncio
import warnings
from typing import Any, Callable

from .scoring import ENV_COLUMN, INSTANCE_COLUMN, KWARGS_COLUMN, EnvScorer, Score, score_row, task_rows

__all__ = ["reward_fn", "trl_rows", "trl_dataset"]


def _as_list(values: Any) -> list | None:
    """A column as a list: TRL passes lists; a ``datasets`` ``Column``, a numpy array or a pandas
    Series (what ``dataset[name]`` gives a user scoring by hand) is read into one; text, a mapping
    or anything without a length is not a column (``None``)."""
    if isinstance(values, (list, tuple)):
        return list(values)
    if isinstance(values, (str, bytes, dict)) or not (hasattr(values, "__len__") and hasattr(values, "__iter__")):
        return None
    try:
        return list(values)
    except Exception:
        return None


def _rows(n: int, columns: dict[str, Any]) -> list[dict[str, Any]]:
    """Per-completion rows from TRL's column lists (a column that is not a list of n is left out)."""
    keys = (ENV_COLUMN, KWARGS_COLUMN, INSTANCE_COLUMN)
    out: list[dict[str, Any]] = [{} for _ in range(n)]
    for key in keys:
        values = _as_list(columns.get(key))
        if values is not None and len(values) == n:
            for row, value in zip(out, values):
                row[key] = value
    return out


def reward_fn(env_id: str, *, asynchronous: bool = False, timeout_s: float | None = 120.0,
              **env_kwargs: Any) -> Callable[..., Any]:
    """A TRL reward function paying ``env_id``'s reward (with ``env_kwargs``); see the module
    docstring. ``timeout_s`` (async only): a completion still being scored after it gets 0.0."""
    scorer = EnvScorer(env_id, **env_kwargs)
    warned: set[str] = set()

    def _finish(scores: list[Score]) -> list[float]:
        fn.last_scores = scores
        for s in scores:
            if s.status != "ok" and s.status not in warned:
                warned.add(s.status)
                warnings.warn(f"solvergym reward {scorer.env_id}: {s.status}: {s.reason} (scored 0.0)",
                              RuntimeWarning, stacklevel=3)
        return [s.reward for s in scores]

    def score_all(completions, columns) -> list[Score]:
        listed = _as_list(completions)
        if listed is None:
            return [Score(0.0, "bad_completion", f"completions must be a list, got {type(completions).__name__}")]
        completions = listed
        rows = _rows(len(completions), columns)
        return [score_row(c, r, scorer) for c, r in zip(completions, rows)]

    if not asynchronous:
        def fn(prompts=None, completions=None, **columns) -> list[float]:
            return _finish(score_all(completions, columns))
    else:
        async def fn(prompts=None, completions=None, **columns) -> list[float]:
            if _as_list(completions) is None:
                return _finish(score_all(completions, columns))
            completions = _as_list(completions)
            rows = _rows(len(completions), columns)

            async def one(c, r) -> Score:
                try:
                    return await asyncio.wait_for(asyncio.to_thread(score_row, c, r, scorer), timeout_s)
                except asyncio.TimeoutError:
                    return Score(0.0, "error", f"scoring took longer than {timeout_s} s")
            return _finish(list(await asyncio.gather(*(one(c, r) for c, r in zip(completions, rows)))))

    fn.__name__ = f"solvergym_{scorer.env_id.replace('-', '_')}"  # TRL logs each reward under its name
    fn.__qualname__ = fn.__name__
    fn.last_scores = []
    fn.scorer = scorer
    return fn


def trl_rows(env_id: str, count: int, /, *, seed: int = 0, **env_kwargs: Any) -> list[dict[str, Any]]:
    """``count`` rows TRL reads (``{"prompt": [{"role": "user", ...}], "solvergym_env", ...}``, a
    conversational prompt) from seeds ``seed``..: :func:`~.scoring.task_rows`."""
    return list(task_rows(env_id, count, seed=seed, **env_kwargs))


def trl_dataset(env_id: str, count: int, /, *, seed: int = 0, **env_kwargs: Any):
    """:func:`trl_rows` as a ``datasets.Dataset`` (what ``GRPOTrainer(train_dataset=...)`` takes)."""
    from datasets import Dataset  # lazy: a TRL user has it; scoring does not need it

    return Dataset.from_list(trl_rows(env_id, count, seed=seed, **env_kwargs))
