"""Oracle trajectories of ``SolverTool-v0`` on the RL tasks as chat JSONL (``solvergym dataset
sat-tool-sft``); SAT-RL's own warm-up data is Synthetic-Logic (:mod:`.logic_sft`, ``sat-rl-sft``).

SAT-RL warms the policy up on (prompt, response) pairs "that include a valid solver program
embedded within <tool_call>...</tool_call>" before RL (§3.3; 1,260 train / 139 test examples,
Table 3) drawn from its Synthetic-Logic families (:mod:`.logic_sft`); here the tasks are the two
RL tasks (SAT-Bench decision and SATURN SAT), at SAT-Bench's easy/medium/hard clause buckets and
SATURN's training levels, with the solver sampled uniformly per instance as in §3.4. Every
trajectory is played by the env's oracle (:class:`~solvergym.agents.scripted.SolverToolOracle`) through the real
sandbox and kept only when it earned all four rewards.

Records: ``{"id", "split", "task", "solver", "instance_id", "difficulty", "messages",
"reward", "reward_components"}``; ``messages`` alternate user (the prompt, then each
``<tool_response>``) and assistant turns. The same seed writes the same bytes (the programs'
output is deterministic; nothing time-dependent is recorded); sha256 in ``manifest.json``.
"""
from __future__ import annotations

import json
import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Sequence

import gymnasium as gym
import numpy as np
from tqdm import tqdm

from ..envs.modes.tool import SolverToolEnv
from ..sandbox import SandboxPool
from ..envs.sat.cnf import formula_key
from ..envs.datafiles import write_jsonl
from ..envs.sat.datasets import SATBENCH_BUCKETS, SATURN_TRAIN_LEVELS
from .scripted import OracleAgent, SolverToolOracle, play_episode

__all__ = ["build_sat_rl_sft", "oracle_conversations", "SFT_TASKS"]

SFT_TASKS = ("sat-bench", "sat")
_FULL_MARKS = {"format": 0.1, "correct": 1.0, "tool": 0.1, "equivalence": 1.0}


def oracle_conversations(env_id: str, seeds: Sequence[int], env_kwargs: dict | None = None) -> list[list[dict]]:
    """The oracle's episode on ``env_id`` for each seed, as the chat messages the policy sees
    (``info["messages"]``: the prompt, each turn, each observation): SFT data for
    :func:`~solvergym.algorithms.sft.train_sft` without a file. An episode the oracle does not
    solve is an error (the oracle is meant to be perfect), as in :func:`build_sat_rl_sft`."""
    env = gym.make(env_id, **(env_kwargs or {}))
    agent = SolverToolOracle() if getattr(env.unwrapped, "mode", None) == "tool" else OracleAgent()
    out = []
    try:
        for seed in seeds:
            played = play_episode(env, agent, seed=int(seed))
            if not played["info"].get("correct", False):
                raise RuntimeError(f"the oracle did not solve {env_id} at seed {seed}: {played['reward_components']}")
            out.append(played["messages"])
    finally:
        env.close()
    return out


def _difficulty(task: str, rng: np.random.Generator) -> dict[str, Any]:
    if task == "sat-bench":
        bucket = list(SATBENCH_BUCKETS)[int(rng.integers(len(SATBENCH_BUCKETS)))]
        (lo, hi), grids = SATBENCH_BUCKETS[bucket]
        return {"dims": list(grids[int(rng.integers(len(grids)))]), "num_clauses": int(rng.integers(lo, hi + 1))}
    (n, k, l), _ = SATURN_TRAIN_LEVELS[int(rng.integers(len(SATURN_TRAIN_LEVELS)))]
    return {"n": n, "k": k, "l": l}


def _episode(task: str, seed: int, difficulty: dict, pool: SandboxPool) -> dict[str, Any]:
    """One oracle episode (:func:`~solvergym.agents.scripted.play_episode`, the one episode loop)."""
    env = SolverToolEnv(task, pool=pool, max_turns=3)
    try:
        played = play_episode(env, SolverToolOracle(), seed=seed, options={"difficulty": difficulty})
        inst, info = env.instance, played["info"]
        return {"task": task, "solver": inst.solver, "instance_id": inst.instance_id,
                "key": formula_key(env.problem_instance().clauses), "difficulty": info["difficulty"],
                "messages": played["messages"], "reward": round(played["reward"], 6),
                "reward_components": {k: round(v, 6) for k, v in played["reward_components"].items()}}
    finally:
        env.close()


def build_sat_rl_sft(
    out: str | os.PathLike,
    *,
    seed: int = 0,
    n_train: int = 1260,
    n_test: int = 139,
    tasks: Sequence[str] = SFT_TASKS,
    progress: bool = True,
    pool: SandboxPool | None = None,
) -> dict[str, Any]:
    """Write ``train.jsonl`` and ``test.jsonl`` of oracle trajectories into ``out``; return the
    manifest (also written as ``manifest.json``). Tasks alternate; test formulas never repeat a
    training formula; a trajectory that does not earn every reward is an error (the oracle is
    meant to be perfect), not silently dropped."""
    out = Path(out)
    own = pool is None
    pool = pool or SandboxPool()
    files: dict[str, Any] = {}
    seen: set = set()
    try:
        for split_code, (split, size) in enumerate((("train", n_train), ("test", n_test))):
            rng = np.random.default_rng(np.random.SeedSequence([seed, 4, split_code]))
            records: list[dict] = []
            bar = tqdm(total=size, desc=f"sat-rl-sft {split}", unit="ep", disable=not progress)
            with ThreadPoolExecutor(max(1, pool.size)) as ex:
                while len(records) < size:
                    # draw a batch of jobs serially (deterministic), run them in parallel, keep in order
                    jobs = []
                    for _ in range(max(1, pool.size) * 4):
                        task = tasks[(len(records) + len(jobs)) % len(tasks)]
                        jobs.append((task, int(rng.integers(1 << 31)), _difficulty(task, rng)))
                    results = list(ex.map(lambda j: _episode(j[0], j[1], j[2], pool), jobs))
                    for res in results:
                        if len(records) >= size:
                            break
                        if res["key"] in seen:
                            continue
                        if res["reward_components"] != _FULL_MARKS:
                            raise RuntimeError(f"the oracle did not earn every reward on a {res['task']} instance "
                                               f"({res['instance_id']}): {res['reward_components']}")
                        seen.add(res["key"])
                        rec = {"id": len(records), "split": split, **{k: v for k, v in res.items() if k != "key"}}
                        records.append(rec)
                        bar.update(1)
            bar.close()
            counts = {t: sum(r["task"] == t for r in records) for t in tasks}
            solvers = {s: sum(r["solver"] == s for r in records) for s in sorted({r["solver"] for r in records})}
            files[f"{split}.jsonl"] = {"count": len(records), "tasks": counts, "solvers": solvers,
                                       "sha256": write_jsonl(out / f"{split}.jsonl", records)}
    finally:
        if own:
            pool.close()
    manifest = {"name": "sat-rl-sft", "seed": seed, "tasks": list(tasks),
                "source": "SolverToolOracle trajectories of SolverTool-v0 (SAT-RL §3.3), all four rewards earned",
                "files": files}
    out.mkdir(parents=True, exist_ok=True)
    (out / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    return manifest
