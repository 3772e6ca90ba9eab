"""The golden file of every registered env and mode: what the problem-contract refactor (issue 11,
Part B) must leave unchanged, recorded by the code before it.

For each (env id, mode) and seeds 0..49: the sha256 of the first observation; the oracle's and
the random agent's episodes (every step's reward components and the sha256 of every observation
it got back); and three malformed actions, each the first action of a fresh reset (its reward
components and observation's sha256). Components are rounded to 1e-9 so a float summed in
another order does not count as a change.

``python tests/golden.py --write`` records ``tests/data/golden.json``; ``tests/test_golden.py``
replays it and compares.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path
from typing import Any

import gymnasium as gym

import solvergym  # noqa: F401
from solvergym.agents.scripted import OracleAgent, RandomAgent
from solvergym.envs.sandbox import SandboxPool

PATH = Path(__file__).resolve().parent / "data" / "golden.json"
SEEDS = range(50)
#: (name, env id, kwargs): every registered id, and each of its modes
CASES: tuple[tuple[str, str, dict[str, Any]], ...] = (
    ("sat", "SolverSAT-v0", {}),
    ("satbench", "SolverSATBench-v0", {}),
    ("tool-sat-bench", "SolverTool-v0", {"task": "sat-bench"}),
    ("tool-sat", "SolverTool-v0", {"task": "sat"}),
    ("zebra-trace", "SolverZebra-v0", {"mode": "trace"}),
    ("zebra-step", "SolverZebra-v0", {"mode": "step"}),
    ("knights-trace", "SolverKnights-v0", {"mode": "trace"}),
    ("knights-step", "SolverKnights-v0", {"mode": "step"}),
    ("lsat-trace", "SolverLSAT-v0", {"mode": "trace"}),
    ("lsat-step", "SolverLSAT-v0", {"mode": "step"}),
)
#: no answer at all; an answer of every family's shape cut short; a hostile mix of every format
MALFORMED = (
    "",
    "I think the answer is 42.",
    '<think>x</think><answer>{"solution": </answer> ```answer\n``` \\boxed{} <tool_call>',
)


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]  # 64 bits: a change, not a proof


def _components(info: dict[str, Any]) -> dict[str, float]:
    return {k: round(float(v), 9) for k, v in sorted(info["reward_components"].items())}


def _episode(env: gym.Env, agent: Any, seed: int) -> dict[str, Any]:
    obs, _ = env.reset(seed=seed)
    steps, done = [], False
    while not done:
        action = agent.act([obs], [env])[0]
        obs, _, terminated, truncated, info = env.step(action)
        steps.append({"components": _components(info), "obs": _sha(obs)})
        done = terminated or truncated
    return {"steps": steps, "correct": bool(info.get("correct", False))}


def record_case(env_id: str, kwargs: dict[str, Any], seeds=SEEDS, pool: SandboxPool | None = None) -> dict[str, Any]:
    extra = {"pool": pool} if env_id == "SolverTool-v0" and pool is not None else {}
    env = gym.make(env_id, **kwargs, **extra).unwrapped
    out: dict[str, Any] = {}
    try:
        for seed in seeds:
            obs, _ = env.reset(seed=seed)
            row: dict[str, Any] = {"obs": _sha(obs)}
            row["oracle"] = _episode(env, OracleAgent(), seed)
            # the agent's seed differs from the env's: with the same one its draws replay the generator's
            row["random"] = _episode(env, RandomAgent(seed=1_000_003 + seed), seed)
            row["malformed"] = []
            for action in MALFORMED:
                env.reset(seed=seed)
                obs, _, terminated, truncated, info = env.step(action)
                row["malformed"].append({"components": _components(info), "obs": _sha(obs),
                                         "done": bool(terminated or truncated)})
            out[str(seed)] = row
    finally:
        env.close()
    return out


def record_all(seeds=SEEDS) -> dict[str, Any]:
    with SandboxPool(size=2) as pool:
        return {name: record_case(env_id, kwargs, seeds, pool) for name, env_id, kwargs in CASES}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--write", action="store_true", help=f"write {PATH} (else print the JSON)")
    args = ap.parse_args(argv)
    data = record_all()
    text = json.dumps(data, sort_keys=True, indent=0) + "\n"
    if args.write:
        PATH.write_text(text)
        print(f"wrote {PATH} ({len(text)} bytes)")
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
