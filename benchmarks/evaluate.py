"""Evaluation harness: run an agent over episodes of a registered env and summarise the rewards.

For several samples per instance, pass@k and the rest, by level and resumable, see
``solvergym eval`` (``solvergym.evaluation``); ``pass_at_k`` is re-exported from there.
"""
from __future__ import annotations

import math
import time
from dataclasses import asdict, dataclass
from typing import Any

import gymnasium as gym
from tqdm import tqdm

from ..evaluation.metrics import pass_at_k

__all__ = ["EpisodeStats", "run_episodes", "pass_at_k", "format_table"]


@dataclass
class EpisodeStats:
    env_id: str
    agent: str
    episodes: int
    mean_reward: float
    solved: float  # fraction of episodes whose final step reports info["correct"]
    format_failures: float  # fraction of episodes with info["error"]
    episodes_per_s: float
    components: dict[str, float]  # mean of each reward component

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def run_episodes(env_id: str, agent, episodes: int = 100, *, seed: int = 0, env_kwargs: dict | None = None,
                 progress: bool = False) -> EpisodeStats:
    """Run ``episodes`` episodes (seeds ``seed, seed+1, ...``), one agent action per turn."""
    env = gym.make(env_id, **(env_kwargs or {}))
    total, solved, failures = 0.0, 0, 0
    comp: dict[str, float] = {}
    t0 = time.perf_counter()
    for ep in tqdm(range(episodes), desc=f"{env_id} / {agent.name}", disable=not progress):
        obs, info = env.reset(seed=seed + ep)
        done = False
        while not done:
            action = agent.act([obs], envs=[env])[0]
            obs, reward, terminated, truncated, info = env.step(action)
            total += reward
            for k, v in info["reward_components"].items():
                comp[k] = comp.get(k, 0.0) + v
            failures += "error" in info
            done = terminated or truncated
        solved += bool(info.get("correct", False))
    dt = time.perf_counter() - t0
    env.close()
    return EpisodeStats(env_id, agent.name, episodes, total / episodes, solved / episodes, failures / episodes,
                        episodes / dt if dt > 0 else math.inf, {k: v / episodes for k, v in comp.items()})


def format_table(rows: list[dict[str, Any]], columns: list[tuple[str, str, str]]) -> str:
    """A plain-text table; ``columns`` are ``(key, header, format spec)``."""
    cells = [[h for _, h, _ in columns]] + [[format(r[k], f) for k, _, f in columns] for r in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(columns))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(row, widths)) for row in cells]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)
