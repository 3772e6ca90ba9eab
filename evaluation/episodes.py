"""Episodes of one agent on a registered env, summarised: what ``solvergym demo`` prints for the
oracle and random agents of every env.

One agent action per turn, one conversation at a time, seeds ``seed, seed + 1, ...``: the quick
sanity table (does the oracle solve everything, where does chance land). Several samples per
instance, pass@k, levels and resumable runs are ``solvergym eval`` (:mod:`.runner`).
"""
from __future__ import annotations

import math
import time
from dataclasses import asdict, dataclass
from typing import Any

import gymnasium as gym
from tqdm import tqdm

__all__ = ["EpisodeStats", "run_episodes"]


@dataclass
class EpisodeStats:
    """The means over the episodes of one (env, agent) pair."""

    env_id: str
    agent: str
    episodes: int
    mean_reward: float
    solved: float  # fraction of episodes whose final step reports info["correct"]
    format_failures: float  # steps with info["error"] per episode (a fraction where episodes are one step)
    episodes_per_s: float
    components: dict[str, float]  # mean of each reward component

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def run_episodes(env_id: str, agent, episodes: int = 100, *, seed: int = 0, env_kwargs: dict | None = None,
                 progress: bool = False) -> EpisodeStats:
    """Run ``episodes`` episodes (seeds ``seed, seed+1, ...``), one ``agent.act`` call per turn."""
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
