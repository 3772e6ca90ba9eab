"""SFT warm-up data for ``SolverOR-v0``: oracle answers to generated optimisation word problems as
chat JSONL (the OR counterpart of :func:`~solvergym.agents.sft_data.build_sat_rl_sft`).

SIRL starts RL from a model already fine-tuned to answer in its format (SIRL §3.2-3.3: reasoning,
a mathematical model, then a solver program); its own SFT data is ORLM's OR-Instruct, which is
not solver-checked. Here every trace is the env's oracle (:class:`~.scripted.OracleAgent`, which
reads only ``env.gold()``: the reference model rendered as ``<think>``/``<model>`` and a program
for the asked-for solver in ``<python>``) played through :func:`~.scripted.play_episode` (the one
episode loop) against the real sandbox, and a trace is kept only when it earned format, execution
and accuracy (0.5 + 1 + 2 = 3.5, SIRL eq. 6 at stage 1), i.e. when the program ran and the
solver's own objective matched the two-solver ground truth.

Instances: generated (:func:`~solvergym.envs.opt.generator.generate`), the families taken in
turn in :data:`~solvergym.envs.opt.generator.FAMILIES` order (without the QP one for
``solver="ortools"``: pywraplp has no QP, and a trace whose program used another library than
the prompt names would teach the wrong thing), with drawn knobs: ``size`` 1-4,
``side_constraints`` 0-2, one in ten infeasible by construction (public benchmarks have "No Best
Solution" items, or-modelling.md §1), one in four with irrelevant facts. Questions never repeat,
so no test question is a training one.

Records: ``{"id", "split", "family", "solver", "instance_id", "status", "difficulty",
"messages", "reward", "reward_components"}``; ``messages`` is the user prompt and the
assistant's answer. ``train.jsonl`` holds the first ``n - round(n * test_fraction)`` records,
``test.jsonl`` the rest. The same seed writes the same bytes (instances are seeded, the oracle's
text is a function of the instance, the rewards are exact; nothing time-dependent is recorded);
sha256 in ``manifest.json``. The only source of variation is a trace dropped because the machine
was too slow for the sandbox's time limit, which the manifest reports.
"""
from __future__ import annotations

import json
import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
from tqdm import tqdm

from ..envs.modes.single import SingleTurnEnv
from ..envs.opt.generator import FAMILIES, FAMILY_KIND
from ..envs.opt.tool import OR_SOLVERS
from ..sandbox import SandboxPool
from ..envs.datafiles import write_jsonl
from .scripted import OracleAgent, play_episode

__all__ = ["build_or_sft", "OR_SFT_FULL_MARKS"]

#: what a kept trace earned (stage 1: the bonus is 0)
OR_SFT_FULL_MARKS = {"format": 0.5, "execution": 1.0, "accuracy": 2.0, "bonus": 0.0}
_SIZES = (1, 2, 3, 4)
_INFEASIBLE_P = 0.1
_FACTS_P = 0.25
_MAX_REPORTED_DROPS = 20


def _families(solver: str) -> list[str]:
    return [f for f in FAMILIES if not (solver == "ortools" and FAMILY_KIND[f] == "QP")]


def _draw(family: str, rng: np.random.Generator) -> tuple[int, dict[str, Any]]:
    """``(episode seed, knobs)`` of one job, every draw from ``rng`` in a fixed order."""
    knobs = {"family": family, "size": int(rng.choice(_SIZES)), "side_constraints": int(rng.integers(3)),
             # the generator draws feasibility at this ratio: a job at ratio 0 or 1 would state the
             # pivot requirement on infeasible prompts only, and its presence would tell (issue 23)
             "infeasible_ratio": _INFEASIBLE_P,
             "irrelevant_facts": bool(rng.random() < _FACTS_P)}
    return int(rng.integers(1 << 31)), knobs


def _episode(seed: int, knobs: dict[str, Any], solver: str, pool: SandboxPool) -> dict[str, Any]:
    """One oracle episode; ``{"error": ...}`` when the generator gives up on the draw."""
    env = SingleTurnEnv(problem="or", pool=pool, solver=solver)
    try:
        try:
            played = play_episode(env, OracleAgent(), seed=seed, options={"difficulty": knobs})
        except ValueError as e:  # generate(): no usable draw in MAX_ATTEMPTS (see its docstring)
            return {"error": str(e)}
        inst = env.instance
        return {"family": inst.family, "solver": solver, "instance_id": inst.instance_id, "status": inst.status,
                "difficulty": {k: v for k, v in knobs.items() if k != "family"},
                "messages": played["messages"], "reward": round(played["reward"], 6),
                "reward_components": {k: round(v, 6) for k, v in played["reward_components"].items()},
                "question": inst.question, "reason": played["info"].get("reason")}
    finally:
        env.close()


def build_or_sft(
    out_dir: str | os.PathLike,
    *,
    n: int = 1000,
    seed: int = 0,
    solver: str = "gurobipy",
    test_fraction: float = 0.1,
    progress: bool = True,
    pool: SandboxPool | None = None,
) -> dict[str, Any]:
    """Write ``train.jsonl`` and ``test.jsonl`` (``n`` oracle traces in all) into ``out_dir``; return
    the manifest (also written as ``manifest.json``). ``solver`` is the library the prompts ask
    for and the oracle's programs use (gurobipy, as SIRL, highspy or ortools); ``pool`` a sandbox
    pool to run the programs in (default: a new one of one server per core, closed at the end).
    A trace that does not earn 3.5 is dropped and counted; ``RuntimeError`` when more than
    ``n + 50`` are dropped (the sandbox is broken, not the oracle)."""
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"n must be an int >= 1, got {n!r}")
    if solver not in OR_SOLVERS:
        raise ValueError(f"solver must be one of {OR_SOLVERS}, got {solver!r}")
    if isinstance(test_fraction, bool) or not isinstance(test_fraction, (int, float)) or not 0 <= test_fraction < 1:
        raise ValueError(f"test_fraction must be a number in [0, 1), got {test_fraction!r}")
    out = Path(out_dir)
    families = _families(solver)
    n_test = int(round(n * test_fraction))
    rng = np.random.default_rng(np.random.SeedSequence([seed, 12]))  # 12: this builder's stream
    own = pool is None
    pool = pool or SandboxPool()
    records: list[dict[str, Any]] = []
    seen: set[str] = set()
    drops: list[str] = []
    n_dropped = drawn = 0
    try:
        bar = tqdm(total=n, desc=f"or-sft ({solver})", unit="ep", disable=not progress)
        width = max(1, pool.size)
        with ThreadPoolExecutor(width) as ex:
            while len(records) < n:
                # jobs drawn serially (deterministic), run in parallel, kept in order
                jobs = [_draw(families[(drawn + j) % len(families)], rng) for j in range(min(width * 2, n - len(records)))]
                drawn += len(jobs)
                for res in ex.map(lambda job: _episode(job[0], job[1], solver, pool), jobs):
                    if len(records) >= n:
                        break
                    if "error" in res or res["reward_components"] != OR_SFT_FULL_MARKS:
                        n_dropped += 1
                        if len(drops) < _MAX_REPORTED_DROPS:
                            drops.append(res.get("error") or f"{res['family']} {res['instance_id']}: "
                                                               f"{res['reward_components']} ({res['reason']})")
                        if n_dropped > n + 50:
                            raise RuntimeError(f"or-sft: {n_dropped} traces dropped; the first: {drops[:3]}")
                        continue
                    if res["question"] in seen:  # a repeat (small sizes): neither split gets it twice
                        continue
                    seen.add(res["question"])
                    split = "train" if len(records) < n - n_test else "test"
                    rec = {"id": len(records), "split": split,
                           **{k: v for k, v in res.items() if k not in ("question", "reason")}}
                    records.append(rec)
                    bar.update(1)
        bar.close()
    finally:
        if own:
            pool.close()
    files: dict[str, Any] = {}
    for split in ("train", "test"):
        recs = [r for r in records if r["split"] == split]
        fam_counts = {f: sum(r["family"] == f for r in recs) for f in families}
        files[f"{split}.jsonl"] = {"count": len(recs), "families": fam_counts,
                                   "infeasible": sum(r["status"] == "infeasible" for r in recs),
                                   "sha256": write_jsonl(out / f"{split}.jsonl", recs)}
    manifest = {"name": "or-sft", "seed": seed, "solver": solver, "n": n, "test_fraction": test_fraction,
                "families": families,
                "knobs": {"size": list(_SIZES), "side_constraints": [0, 1, 2], "infeasible_p": _INFEASIBLE_P,
                          "irrelevant_facts_p": _FACTS_P},
                "source": "OracleAgent traces of SolverOR-v0 through the sandbox, format + execution + accuracy "
                          "earned (3.5, SIRL eq. 6 stage 1)",
                "dropped": n_dropped, "drop_reasons": drops, "files": files}
    out.mkdir(parents=True, exist_ok=True)
    (out / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    return manifest
