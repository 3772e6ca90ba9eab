"""reasoning-gym (0.1.25): solvergym's single-turn envs as reasoning-gym datasets.

    import reasoning_gym
    from solvergym.adapters.reasoning_gym import register

    register()                                        # every single-turn env id, as "solvergym/<id>"
    data = reasoning_gym.create_dataset("solvergym/SolverLogic-v0", size=100, seed=0,
                                        env_kwargs={"family": "clique"})
    entry = data[0]                                   # {"question", "answer", "metadata"}
    data.score_answer(model_response, entry)          # the env's reward for the response

reasoning-gym is what NeMo Gym's reasoning_gym server, OpenEnv's reasoning_gym env, verifiers and
reasoning-core read, so one registration reaches them. An entry's ``question`` is the env's
prompt, ``answer`` the oracle's response (an answer block in the env's format), and ``metadata``
the env id, its keyword arguments and the instance (JSON), which is all :func:`score_answer`
needs: it scores the response as the env does (:func:`~.scoring.score_row`), so the score is the
env's reward, SAT-RL's scale included (from -1-eps to 1 + the format's 0.1), not reasoning-gym's
usual [0, 1]; a response that is not text, or an entry that is not one of these (any metadata
that cannot be read or posed, an env id that is not registered: an entry imports no module),
scores 0.0 and never raises. The
response is the model's whole reply with its final answer block, as the question asks (the env
reads the answer out of it); an extracted bare answer such as ``yes`` carries no answer block and
earns what such a reply earns from the env.

Registration happens in the process that scores (reasoning-gym looks datasets up by name):
call :func:`register` there, or import this module with ``SOLVERGYM_REGISTER_RG=1``.
"""
from __future__ import annotations

import dataclasses
import json
import os
from typing import Any, Optional, Sequence

import gymnasium as gym

from ..registry import env_ids, resolve_env_id
from .scoring import ENV_COLUMN, INSTANCE_COLUMN, KWARGS_COLUMN, score_row

__all__ = ["register", "single_turn_ids", "PREFIX"]

PREFIX = "solvergym/"


def single_turn_ids() -> list[str]:
    """The registered env ids whose default env is single-turn (one completion is an episode)."""
    out = []
    for env_id in env_ids():
        env = gym.make(env_id).unwrapped
        if env.max_turns == 1:
            out.append(env_id)
        env.close()
    return out


def _dataset_class():
    from reasoning_gym.dataset import ProceduralDataset  # lazy: the adapter is optional

    class SolverGymDataset(ProceduralDataset):
        """A solvergym env as a reasoning-gym dataset (see the module docstring); ``env_id`` is set
        per registered subclass."""

        env_id = ""

        def __init__(self, config):
            super().__init__(config=config, seed=config.seed, size=config.size)
            self.env_kwargs = dict(config.env_kwargs)
            self._env = gym.make(self.env_id, **self.env_kwargs).unwrapped

        def __getitem__(self, idx: int) -> dict[str, Any]:
            obs, _ = self._env.reset(seed=int(self.seed) + int(idx))
            return {"question": obs, "answer": self._env.gold().answer,
                    "metadata": {"source_dataset": PREFIX + self.env_id, "source_index": int(idx),
                                 ENV_COLUMN: self.env_id, KWARGS_COLUMN: json.dumps(self.env_kwargs, sort_keys=True),
                                 INSTANCE_COLUMN: self._env.instance.to_json()}}

        def score_answer(self, answer: Optional[str], entry: dict[str, Any]) -> float:
            meta = entry.get("metadata") if isinstance(entry, dict) else None
            if not isinstance(meta, dict):
                return 0.0
            row = {ENV_COLUMN: meta.get(ENV_COLUMN, self.env_id), KWARGS_COLUMN: meta.get(KWARGS_COLUMN),
                   INSTANCE_COLUMN: meta.get(INSTANCE_COLUMN)}
            return score_row(answer, row).reward

    return SolverGymDataset


def register(env_ids_: Sequence[str] | None = None) -> list[str]:
    """Register ``env_ids_`` (default: :func:`single_turn_ids`) with reasoning-gym as
    ``solvergym/<id>``, each with a config dataclass ``(env_kwargs, seed, size)``; names already
    registered are kept. Returns the names."""
    from reasoning_gym.factory import DATASETS, register_dataset

    base = _dataset_class()
    names = []
    for env_id in (env_ids_ if env_ids_ is not None else single_turn_ids()):
        env_id = resolve_env_id(env_id)
        name = PREFIX + env_id
        names.append(name)
        if name in DATASETS:
            continue
        stem = env_id.replace("-", "_")
        config = dataclasses.make_dataclass(
            f"{stem}Config",
            [("env_kwargs", dict, dataclasses.field(default_factory=dict)), ("seed", Optional[int], None),
             ("size", int, 500)], namespace={"__module__": __name__})
        register_dataset(name, type(f"{stem}Dataset", (base,), {"env_id": env_id, "__module__": __name__}), config)
    return names


if os.environ.get("SOLVERGYM_REGISTER_RG") == "1":
    register()
