"""Scripted agents: the oracle (the upper bound, and the source of SFT traces) and a random
baseline that answers in the right format with a uniformly random answer (the chance level that
``chance_success`` and the decision rewards are about).

Both delegate to the env family, which knows its answer format: ``env.oracle_action()`` and
``env.random_action(rng)`` on the unwrapped env.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

__all__ = ["OracleAgent", "RandomAgent"]


def _unwrapped(env: Any) -> Any:
    return getattr(env, "unwrapped", env)


class OracleAgent:
    """Answers every episode with its ground truth."""

    name = "oracle"

    def act(self, observations: Sequence[str], envs: Sequence[Any] | None = None) -> list[str]:
        if envs is None or len(envs) != len(observations):
            raise ValueError("OracleAgent needs the env of every observation (envs=...)")
        return [_unwrapped(e).oracle_action() for e in envs]


class RandomAgent:
    """A well-formed, uniformly random answer (a random bit string, a random yes/no, ...)."""

    name = "random"

    def __init__(self, seed: int | None = None):
        self.rng = np.random.default_rng(seed)

    def act(self, observations: Sequence[str], envs: Sequence[Any] | None = None) -> list[str]:
        if envs is None or len(envs) != len(observations):
            raise ValueError("RandomAgent needs the env of every observation (envs=...)")
        return [_unwrapped(e).random_action(self.rng) for e in envs]
