"""Synthetic-Logic, SAT-RL's SFT warm-up data (§3.2-3.3, Table 3): ``solvergym dataset
synthetic-logic`` (also ``sat-rl-sft``).

"We randomly sample 10 instances for each fixed combination of task, query type, and solver
across different difficulty parameter settings ... discard instances that fail due to solver
timeouts during ground-truth execution ... split into 1,260 training and 139 test instances"
(§3.2). Here: for every family of :data:`~solvergym.envs.logic.FAMILIES`, every query and every
solver that fits the family, ``per_combo`` instances cycling through the family's difficulty
levels (``LogicProblem.levels``); each is played by the oracle in ``SolverTool-v0`` (a
``<tool_call>`` with the ground-truth program, the sandbox's output, then the answer) and kept
when it earned every reward (``equivalence`` too, for decision and solving) and its program
printed the truth; an episode whose program timed
out, failed or printed anything else is discarded and listed in the manifest (``discarded``). Decisions are exactly balanced within each
combination (labels alternate). The records are split ``test_fraction`` to test, the same seed
writing the same bytes.

Records: ``{"id", "split", "family", "category", "query", "solver", "instance_id",
"difficulty", "messages", "reward", "reward_components"}`` (``messages``: chat turns, as
:func:`~solvergym.algorithms.sft.train_sft` reads them).
"""
from __future__ import annotations

import json
import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Sequence

import numpy as np
from tqdm import tqdm

from ..envs.datafiles import write_jsonl
from ..envs.logic import FAMILIES, QUERIES
from ..envs.logic.family import family_class
from ..envs.logic.programs import read_output
from ..envs.modes.tool import SolverToolEnv
from ..sandbox import SandboxPool
from .scripted import SolverToolOracle, play_episode

__all__ = ["build_synthetic_logic", "logic_combinations", "output_agrees"]

_FULL_MARKS = {"format": 0.1, "correct": 1.0, "tool": 0.1}
#: what a decision or solving trajectory earns besides: its program states the instance's formula
_EQUIVALENT = {"equivalence": 1.0}


def logic_combinations(families: Sequence[str] | None = None) -> list[tuple[str, str, str]]:
    """Every (family, query, solver) the dataset samples: the solvers that fit each family."""
    names = list(FAMILIES) if families is None else list(families)
    return [(f, q, s) for f in names for q in QUERIES for s in family_class(f).solvers]


def output_agrees(problem, inst, messages: list[dict]) -> bool:
    """Whether the ground-truth program's output (the last tool response) is the truth the answer
    states: the oracle answers from the truth, so a trajectory whose program printed otherwise
    would teach a model to contradict its tool."""
    responses = [m["content"] for m in messages if m["role"] == "user" and "<tool_response>" in m["content"]]
    if not responses:
        return False
    out = read_output(responses[-1].split("stdout:", 1)[-1].split("</tool_response>")[0], inst.query)
    if out is None:
        return False
    if inst.query == "counting":
        return out["count"] == inst.count
    if out["sat"] != inst.satisfiable:
        return False
    return inst.query == "decision" or problem.check_witness(inst.data, problem.witness_from_true(inst.data, set(out["true"]))) is None


def _episode(family: str, query: str, solver: str, seed: int, level: dict, label: bool | None,
             pool: SandboxPool) -> dict[str, Any]:
    kwargs = {} if label is None else {"sat_ratio": 1.0 if label else 0.0}
    env = SolverToolEnv(family, pool=pool, max_turns=3, query=query, solver=solver, **kwargs)
    try:
        played = play_episode(env, SolverToolOracle(), seed=seed, options={"difficulty": level} if level else None)
        inst, info = env.instance, played["info"]
        components = {k: round(v, 6) for k, v in played["reward_components"].items()}
        if not output_agrees(env.problem, env.problem_instance(), played["messages"]):
            components["output"] = 0.0  # the program printed something else than the truth: discarded
        return {"family": family, "category": FAMILIES[family][1], "query": query, "solver": solver,
                "instance_id": inst.instance_id, "difficulty": info["difficulty"], "messages": played["messages"],
                "reward": round(played["reward"], 6), "reward_components": components}
    finally:
        env.close()


def build_synthetic_logic(
    out: str | os.PathLike,
    *,
    seed: int = 0,
    per_combo: int = 10,
    test_fraction: float = 0.1,
    families: Sequence[str] | None = None,
    progress: bool = True,
    pool: SandboxPool | None = None,
) -> dict[str, Any]:
    """Write ``train.jsonl``, ``test.jsonl`` and ``manifest.json`` into ``out``; return the
    manifest (sizes per split, family, query and solver; the discarded episodes and why)."""
    if not 0.0 <= test_fraction < 1.0:
        raise ValueError(f"test_fraction must be in [0, 1), got {test_fraction}")
    if per_combo < 1:
        raise ValueError(f"per_combo must be >= 1, got {per_combo}")
    combos = logic_combinations(families)
    rng = np.random.default_rng(np.random.SeedSequence([seed, 26]))
    jobs = []
    for family, query, solver in combos:
        levels = list(family_class(family).levels) or [{}]
        for j in range(per_combo):
            label = (j % 2 == 0) if query == "decision" else None  # balanced within the combination
            jobs.append((family, query, solver, int(rng.integers(1 << 31)), levels[j % len(levels)], label))
    own = pool is None
    pool = pool or SandboxPool()
    kept, discarded, seen = [], [], set()
    try:
        with ThreadPoolExecutor(max(1, pool.size)) as ex:
            results = ex.map(lambda j: _episode(*j, pool), jobs)
            for res in tqdm(results, total=len(jobs), desc="synthetic-logic", unit="ep", disable=not progress):
                full = _FULL_MARKS if res["query"] == "counting" else {**_FULL_MARKS, **_EQUIVALENT}
                if res["reward_components"] != full:  # a timeout or a failed run of the truth program
                    discarded.append({k: res[k] for k in ("family", "query", "solver", "instance_id", "reward_components")})
                elif res["instance_id"] not in seen:
                    seen.add(res["instance_id"])
                    kept.append(res)
    finally:
        if own:
            pool.close()
    order = rng.permutation(len(kept))
    n_test = int(round(test_fraction * len(kept)))
    test_ids = {int(i) for i in order[:n_test]}
    files: dict[str, Any] = {}
    for split in ("train", "test"):
        records = [{"id": n, "split": split, **r} for n, r in
                   enumerate(r for i, r in enumerate(kept) if (i in test_ids) == (split == "test"))]
        files[f"{split}.jsonl"] = {
            "count": len(records),
            "families": {f: sum(r["family"] == f for r in records) for f in dict.fromkeys(c[0] for c in combos)},
            "queries": {q: sum(r["query"] == q for r in records) for q in QUERIES},
            "solvers": {s: sum(r["solver"] == s for r in records) for s in sorted({c[2] for c in combos})},
            "sha256": write_jsonl(Path(out) / f"{split}.jsonl", records)}
    manifest = {"name": "synthetic-logic", "seed": seed, "per_combo": per_combo, "test_fraction": test_fraction,
                "combinations": len(combos), "episodes": len(jobs), "kept": len(kept), "discarded": discarded,
                "source": "SolverToolOracle trajectories of SolverTool-v0 on the Synthetic-Logic families "
                          "(SAT-RL §3.2-3.3), every reward earned", "files": files}
    Path(out).mkdir(parents=True, exist_ok=True)
    (Path(out) / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    return manifest
