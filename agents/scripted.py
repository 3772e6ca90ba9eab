"""Scripted agents: the oracle (the upper bound, and the source of SFT traces) and a random
baseline that answers in the right format with a uniformly random answer (the chance level that
``chance_success`` and the decision rewards are about).

Both delegate to the env family, which knows its answer format: ``env.oracle_action()`` and
``env.random_action(rng)`` on the unwrapped env.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

__all__ = ["OracleAgent", "RandomAgent", "SolverToolOracle"]


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


class SolverToolOracle:
    """The oracle of ``SolverTool-v0`` (SAT-RL §3.3-3.4): it writes a correct program for the
    sampled solver (the task's ground-truth encoding), sends it as a tool call, reads the tool
    response and answers; with one turn left it calls the tool and answers in the same turn.
    Its trajectories are the SFT warm-up data (``solvergym.envs.tool.datasets``).

    Works on the unwrapped :class:`~solvergym.envs.tool.env.SolverToolEnv` (or any wrapper of it):
    the next action depends on the episode's state, which the env keeps.
    """

    name = "tool-oracle"

    def act(self, observations: Sequence[str], envs: Sequence[Any] | None = None) -> list[str]:
        if envs is None or len(envs) != len(observations):
            raise ValueError("SolverToolOracle needs the env of every observation (envs=...)")
        out = []
        for e in envs:
            env = _unwrapped(e)
            if not hasattr(env, "oracle_action") or not hasattr(env, "task"):
                raise TypeError(f"SolverToolOracle drives SolverTool-v0 envs, got {type(env).__name__}")
            out.append(env.oracle_action())
        return out

    def episode(self, env: Any, *, seed: int | None = None, options: dict | None = None) -> dict[str, Any]:
        """Play one episode; returns the chat messages, the reward and its components."""
        env = _unwrapped(env)
        obs, info = env.reset(seed=seed, options=options)
        done = False
        reward = 0.0
        while not done:
            obs, r, terminated, truncated, info = env.step(self.act([obs], [env])[0])
            reward += r
            done = terminated or truncated
        return {"messages": info["messages"], "reward": reward, "reward_components": info["reward_components"],
                "info": info}
