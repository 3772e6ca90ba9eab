"""The golden file of every registered env and mode: what a behaviour-preserving redesign (issue
11's problem contract, issue 22's house plan) must leave unchanged, recorded by the code before it.

For each (env id, mode) and seeds 0..49: the sha256 of the first observation; the oracle's and
the random agent's episodes (every step's reward components and the sha256 of every observation
it got back); three malformed actions, each the first action of a fresh reset (its reward
components and observation's sha256); and, for the optimisation cases, a scripted pair (a program
that raises, then the oracle's next action), which exercises SolverOR-v0's revision turn. Components are rounded to 1e-9 so a float summed in
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
from solvergym.sandbox import SandboxPool

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
    ("or", "SolverOR-v0", {}),
    ("or-revise", "SolverOR-v0", {"max_turns": 2}),
    ("tool-or", "SolverTool-v0", {"task": "or"}),
    ("logic", "SolverLogic-v0", {}),
    ("logic-counting-sudoku", "SolverLogic-v0", {"family": "sudoku", "query": "counting"}),
    ("tool-logic-tsp", "SolverTool-v0", {"task": "tsp", "query": "solving"}),
)
#: envs whose constructor takes the sandbox pool the golden run shares
POOLED = ("SolverTool-v0", "SolverOR-v0")
#: a program that raises, then the oracle's next action: SolverOR-v0 with max_turns=2 sends the
#: first back for revision (SolverTool-v0: a failed tool call), single-turn scores it
ORACLE = object()
SEQUENCES: dict[str, tuple] = {
    name: (("<think>x</think><model>m</model><python>\nraise ValueError('boom')\n</python>"
            "<tool_call>\nraise ValueError('boom')\n</tool_call>"), ORACLE)
    for name in ("or", "or-revise", "tool-or")
}
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


def _scripted(env: gym.Env, actions: tuple, seed: int) -> list[dict[str, Any]]:
    obs, _ = env.reset(seed=seed)
    steps = []
    for action in actions:
        if action is ORACLE:
            action = OracleAgent().act([obs], [env])[0]
        obs, _, terminated, truncated, info = env.step(action)
        steps.append({"components": _components(info), "obs": _sha(obs), "done": bool(terminated or truncated)})
        if terminated or truncated:
            break
    return steps


def record_case(env_id: str, kwargs: dict[str, Any], seeds=SEEDS, pool: SandboxPool | None = None,
                name: str | None = None) -> dict[str, Any]:
    extra = {"pool": pool} if env_id in POOLED and pool is not None else {}
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
            if name in SEQUENCES:
                row["scripted"] = _scripted(env, SEQUENCES[name], seed)
            out[str(seed)] = row
    finally:
        env.close()
    return out


def record_all(seeds=SEEDS) -> dict[str, Any]:
    with SandboxPool(size=2) as pool:
        return {name: record_case(env_id, kwargs, seeds, pool, name) for name, env_id, kwargs in CASES}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--write", action="store_true", help=f"write {PATH} (else print the JSON)")
    ap.add_argument("--add", nargs="*", metavar="CASE",
                    help="record only these cases and add them to the existing file (the others stay as recorded)")
    args = ap.parse_args(argv)
    if args.add:
        data = json.loads(PATH.read_text())
        with SandboxPool(size=2) as pool:
            for name, env_id, kwargs in CASES:
                if name in args.add:
                    data[name] = record_case(env_id, kwargs, SEEDS, pool, name)
    else:
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
