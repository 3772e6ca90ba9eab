"""Learning beyond the format: SAT-RL's recipe on the CPU, against the random agent's level.

    python benchmarks/learning_sat_rl.py [--preset satrl_dapo] [--lr 5e-6] [--n-sft 256] [--n-train 48] [--n-val 48]
        [--equivalence-rule partial] [--filter-metric acc|reward] [--kl-coef 0.01]
    python benchmarks/learning_sat_rl.py --pipeline paper [--sft-max-tokens 1536] [--logic-instances 2]
        [--logic-families clique ...]

SAT-RL (§3.3-3.4) warms the policy up on oracle solver-tool traces, then trains it with DAPO on
``SolverTool-v0``, testing on a held-out split. This script runs that pipeline at a size two CPU
cores finish in about two hours, on one task where guessing does badly: SATURN's planted 2-SAT at
(n,k,l) = (2,5,8) with ``max_chance_success`` 0.125 (a uniformly random assignment satisfies at most
one in eight of these formulas), posed through the tool env with the solver fixed to sympy (its
program is the shortest of the five, which is what a CPU can afford to generate).

1. Data (seeded, formulas disjoint across the three files): ``sft.jsonl`` (oracle trajectories that
   earned every reward), ``train.jsonl`` and ``val.jsonl`` (instances for ``--data`` /
   ``--eval-data``).
2. The random agent's level on the validation split: exactly the mean ``chance_success`` of its
   instances (a uniform assignment is correct with that probability), and measured by ``solvergym
   eval --agent random`` with many samples as a check.
3. The embedded model as released, greedy on the validation split (no warm-up): what it can do alone.
4. SFT warm-up on the oracle traces (:func:`~solvergym.algorithms.sft.train_sft`).
5. RL from the warmed-up model with ``--preset`` on the training split, validating greedily before
   the first update and every ``--eval-every`` steps (:mod:`solvergym.algorithms.schedules.split`).
6. What the model wrote, per validation: the share of the true clauses its last program states, of
   its clauses that are true, and of formulas written exactly (:func:`transcription`). A correct
   answer here is the sandbox's model of the formula the policy wrote, so these say why.

``--pipeline paper`` is SAT-RL's own data choice (§3.2-3.3, Table 3): the warm-up on Synthetic-Logic
traces (``solvergym dataset synthetic-logic``, drawn among those whose chat fits ``--sft-max-tokens``,
the context a CPU affords), RL on SAT-Bench decisions (:data:`PAPER_ENV_KWARGS`: 6 conditions over 8
variables, z3) and validation on held-out SAT-Bench formulas and, after the warm-up and after the
last update, on held-out Synthetic-Logic instances in tool mode (:func:`logic_validation`); the
random agent's level is 0.5 there. Its results go to ``benchmarks/results/learning_sat_rl_paper``.

The preset's algorithm values are the paper's; the scale (prompts, group size, tokens) and the
learning rate are set here for a 135M model on two cores and written into the JSON (``--lr`` 5e-6,
the paper's 1e-6 being for 4-9B models; 2e-5 broke the policy's tool-call format within 8 updates,
under either wrong-answer penalty: the README's "Does it learn?" has the curves). Writes
``learning_sat_rl.json`` (every number below, the settings, timings) and ``learning_sat_rl.png``
(validation accuracy with its standard error against the step, the random agent's level, the
model before warm-up, training accuracy). Every stage is skipped when its output exists, so a
stopped run continues. Evidence, not a test: the README quotes the numbers with this command.
"""
from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

import solvergym  # noqa: F401  (registers the envs)
from solvergym.agents.logic_sft import build_synthetic_logic
from solvergym.agents.models import load_tokenizer
from solvergym.agents.scripted import SolverToolOracle, play_episode
from solvergym.algorithms.config import make_config
from solvergym.algorithms.sft import SFTConfig, assistant_token_mask, train_sft
from solvergym.algorithms.trainer import Trainer
from solvergym.evaluation.tables import format_table
from solvergym.envs.sat.cnf import formula_key
from solvergym.envs.sat.verify import WRONG_PENALTIES
from solvergym.envs.logic import FAMILIES
from solvergym.evaluation.logic_suite import run_logic_suite
from solvergym.evaluation.report import build_report
from solvergym.evaluation.runner import EvalConfig, load_records, run_eval

HERE = Path(__file__).resolve()
ENV = "SolverTool-v0"
#: the task: SATURN (2,5,8)-SAT through the tool env, sympy fixed, at most 1 in 8 assignments satisfy
ENV_KWARGS = {"task": "sat", "n": 2, "k": 5, "l": 8, "solver": "sympy", "max_chance_success": 0.125,
              "max_turns": 2}
#: ``--pipeline paper``: SAT-RL's own data (§3.2-3.3): RL and validation on SAT-Bench decisions
#: (SAT-Bench's easy bucket, 6 conditions over 8 variables) through the tool env, the solver fixed
#: to z3 (python-sat, z3, pysmt and ortools are what the Synthetic-Logic traces that fit a CPU's
#: context use; z3's SAT-Bench program is the shortest of those)
PAPER_ENV_KWARGS = {"task": "sat-bench", "dims": [2, 2, 2], "num_clauses": 6, "solver": "z3", "max_turns": 2}
PIPELINES = {"task": ENV_KWARGS, "paper": PAPER_ENV_KWARGS}
_FULL_MARKS = {"format": 0.1, "correct": 1.0, "tool": 0.1, "equivalence": 1.0}


def build_data(out: Path, n_sft: int, n_train: int, n_val: int, seed: int, env_kwargs: dict | None = None,
               sft_max_tokens: int | None = None) -> dict[str, Any]:
    """``sft.jsonl``, ``train.jsonl``, ``val.jsonl`` with pairwise disjoint formulas (val first).
    With ``sft_max_tokens`` the warm-up is SAT-RL's instead of the task's own traces:
    :func:`synthetic_logic_sft`."""
    env_kwargs = ENV_KWARGS if env_kwargs is None else env_kwargs
    env = gym.make(ENV, **env_kwargs).unwrapped
    seen: set = set()
    files: dict[str, Any] = {}
    rng = np.random.default_rng(np.random.SeedSequence([seed, 11]))
    try:
        splits = (("val", n_val), ("train", n_train)) + ((("sft", n_sft),) if sft_max_tokens is None else ())
        for name, size in splits:
            rows, chances = [], []
            while len(rows) < size:
                s = int(rng.integers(1 << 31))
                if name == "sft":
                    played = play_episode(env, SolverToolOracle(), seed=s)
                    if played["reward_components"] != _FULL_MARKS:
                        raise RuntimeError(f"the oracle did not earn every reward: {played['reward_components']}")
                else:
                    env.reset(seed=s)
                inst = env.problem_instance()
                key = formula_key(inst.clauses)
                if key in seen:
                    continue
                seen.add(key)
                chances.append(getattr(inst, "chance_success", 0.5))  # a yes/no guess is right half the time
                rows.append({"messages": played["messages"]} if name == "sft" else env.instance.to_dict())
            (out / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
            files[name] = {"count": len(rows), "mean_chance_success": float(np.mean(chances))}
    finally:
        env.close()
    if sft_max_tokens is not None:
        files["sft"] = synthetic_logic_sft(out, n_sft, sft_max_tokens, seed)
    return files


def synthetic_logic_sft(out: Path, n_sft: int, max_tokens: int, seed: int) -> dict[str, Any]:
    """SAT-RL's warm-up data (§3.2-3.3, Table 3): ``solvergym dataset synthetic-logic`` into
    ``out/synthetic-logic``, then ``n_sft`` of its training traces drawn uniformly among those whose
    chat fits ``max_tokens`` tokens (a CPU-sized context: a cut trace would teach a program without
    its end), written as ``sft.jsonl``. Returns what was drawn, by family, query and solver."""
    manifest = build_synthetic_logic(out / "synthetic-logic", seed=seed, progress=True)
    tok = load_tokenizer()
    records = [json.loads(line) for line in (out / "synthetic-logic" / "train.jsonl").read_text().splitlines()]
    fits = [r for r in records if len(assistant_token_mask(tok, r["messages"])[0]) <= max_tokens]
    if len(fits) < n_sft:
        raise RuntimeError(f"only {len(fits)} Synthetic-Logic traces fit {max_tokens} tokens; asked for {n_sft}")
    rng = np.random.default_rng(np.random.SeedSequence([seed, 26, 1]))
    drawn = [fits[i] for i in sorted(rng.choice(len(fits), n_sft, replace=False))]
    (out / "sft.jsonl").write_text("".join(json.dumps({"messages": r["messages"]}) + "\n" for r in drawn))
    count = lambda key: dict(sorted(Counter(r[key] for r in drawn).items()))  # noqa: E731
    return {"count": len(drawn), "source": "synthetic-logic train split", "dataset_train": len(records),
            "dataset_test": manifest["files"]["test.jsonl"]["count"], "fit_max_tokens": len(fits),
            "max_tokens": max_tokens, "families": count("family"), "queries": count("query"),
            "solvers": count("solver"), "instance_ids": sorted({r["instance_id"] for r in records})}


def logic_validation(out: Path, model: str, families: list[str], instances: int, solver: str,
                     max_new_tokens: int, known_ids: set[str]) -> dict[str, Any]:
    """The held-out Synthetic-Logic check: ``model`` greedy on every (family, query) of
    ``families`` in tool mode with ``solver`` (:func:`~solvergym.evaluation.logic_suite.run_logic_suite`,
    resumable), its mean accuracy with the standard error over cells, per query, and how many of
    its instances the warm-up data holds (the suite's seeds are not the dataset's: 0 expected)."""
    summary = run_logic_suite(f"hf:{model}", out, mode="tool", instances=instances, families=families,
                              solvers=[solver], temperature=0.0, max_new_tokens=max_new_tokens)
    cells = summary["cells"]
    accs = np.array([c["accuracy"] for c in cells])
    seen = sum(r["instance_id"] in known_ids for c in cells for r in load_records(out / c["run"]))
    return {"accuracy": float(accs.mean()), "se": float(accs.std(ddof=1) / np.sqrt(len(accs))) if len(accs) > 1 else 0.0,
            "cells": len(cells), "episodes": sum(c["instances"] for c in cells), "in_sft_data": seen,
            "queries": {q: float(np.mean([c["accuracy"] for c in cells if c["query"] == q]))
                        for q in dict.fromkeys(c["query"] for c in cells)},
            "reward": float(np.mean([c["reward"] for c in cells]))}


def evaluate(out: Path, agent: str, env_kwargs: dict, dataset: Path, n_samples: int, temperature: float,
             max_new_tokens: int, seed: int) -> dict[str, Any]:
    """Run ``solvergym eval`` over the dataset (resumable) and :func:`summarise` it."""
    cfg = EvalConfig(ENV, agent=agent, env_kwargs=env_kwargs, dataset=str(dataset), n_samples=n_samples,
                     ks=[1], seeds=[seed], temperature=temperature, max_new_tokens=max_new_tokens)
    return summarise(run_eval(cfg, out, progress=True))


def summarise(run_dir: Path) -> dict[str, Any]:
    """Accuracy over all n samples of an evaluation run (the trainer's validations are ones too), its standard error over
    instances and the reward components' means, as the evaluation report computes them."""
    rep = build_report(run_dir)
    avg = rep["overall"]["metrics"]["pass@1"]  # c/n per instance: every sample counts (avg@1 is the first)
    return {"agent": rep["agent"], "n_instances": rep["instances"], "n_samples": rep["n_samples"],
            "accuracy": avg["mean"], "se": avg["se_over_instances"], "components": rep["overall"]["components"]}


_OR = re.compile(r"Or\(([^()]*(?:\([^()]*\)[^()]*)*)\)")
_LIT = re.compile(r"(Not\(\s*)?\b([A-Z])\b")


def written_clauses(program: str) -> set[frozenset[int]]:
    """The clauses a sympy program states as ``Or(A, Not(B))`` (variables A, B, ... as 1, 2, ...)."""
    out = set()
    for body in _OR.findall(program):
        lits = [(-1 if neg else 1) * (ord(v) - ord("A") + 1) for neg, v in _LIT.findall(body)]
        if lits:
            out.add(frozenset(lits))
    return out


def transcription(records: list[dict], instances: list[dict]) -> dict[str, float]:
    """How much of each formula the model wrote into its last program (``records``: a run's
    records, ``load_records(run_dir)``, which checks them): the share of the true clauses
    present (recall), of the written ones that are true (precision), and of episodes with exactly the
    true clause set. Why a copied solver answer is right or wrong; the ``equivalence`` reward is the
    exact case up to logical equivalence."""
    recall, precision, exact = [], [], []
    for r in records:
        truth = {frozenset(c) for c in instances[r["instance"]]["problem"]["clauses"]}
        calls = [m["content"] for m in r["messages"] if m["role"] == "assistant" and "<tool_call>" in m["content"]]
        written = written_clauses(calls[-1]) if calls else set()
        recall.append(len(truth & written) / len(truth))
        precision.append(len(truth & written) / len(written) if written else 0.0)
        exact.append(float(written == truth))
    return {"clause_recall": float(np.mean(recall)), "clause_precision": float(np.mean(precision)),
            "exact_formula": float(np.mean(exact))}


def z_score(acc: float, level: float, se: float) -> float | None:
    """How many standard errors ``acc`` lies above the random agent's level (None without spread:
    every answer equal, as a model that never answers)."""
    return (acc - level) / se if se > 0 else None


def plot(path: Path, val: list[dict], train: list[dict], random_level: float, base: dict, title: str,
         logic: list[tuple[int, dict]] = ()) -> None:
    """``val``: the table's validation rows (``updates``, ``acc``, ``se``, ``clause_recall`` where
    measured); ``logic``: (updates, held-out Synthetic-Logic result) points (the released model at 0)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7.5, 4.2))
    x = [r["updates"] for r in val]
    ax.errorbar(x, [r["acc"] for r in val], yerr=[r["se"] for r in val], fmt="o-", color="tab:blue", capsize=3, lw=2, label="validation (greedy) ± SE")
    if train:
        tx = np.array([r["step"] + 1 for r in train])
        ty = np.array([r.get("accuracy", np.nan) for r in train])
        k = min(5, len(ty))
        ax.plot(tx, ty, color="tab:green", alpha=0.25)
        ax.plot(tx[k - 1:], np.convolve(ty, np.ones(k) / k, mode="valid"), color="tab:green", lw=1.5,
                label=f"training samples (T=1, {k}-step mean)")
    if all("clause_recall" in r for r in val):
        ax.plot(x, [r["clause_recall"] for r in val], "s--", color="tab:purple", alpha=0.7,
                label="validation: share of true clauses written")
    if logic:
        ax.errorbar([u for u, _ in logic[1:]], [r["accuracy"] for _, r in logic[1:]],
                    yerr=[r["se"] for _, r in logic[1:]], fmt="D-", color="tab:orange", capsize=3,
                    label="held-out Synthetic-Logic (greedy) ± SE")
        ax.axhline(logic[0][1]["accuracy"], color="tab:orange", ls=":", alpha=0.6,
                   label=f"Synthetic-Logic before warm-up ({logic[0][1]['accuracy']:.3f})")
    ax.axhline(random_level, color="tab:red", ls="--", label=f"random agent ({random_level:.3f})")
    ax.axhline(base["accuracy"], color="gray", ls=":", label=f"model before warm-up ({base['accuracy']:.3f})")
    ax.set_xlabel("RL updates (0: after the SFT warm-up)")
    ax.set_ylabel("accuracy")
    ax.set_ylim(-0.02, 1.02)
    ax.set_title(title, fontsize=10)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="best")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--preset", default="satrl_dapo")
    p.add_argument("--n-sft", type=int, default=256, help="oracle traces for the warm-up")
    p.add_argument("--n-train", type=int, default=48, help="RL training instances (one epoch: n-train / prompts steps)")
    p.add_argument("--n-val", type=int, default=48, help="validation instances")
    p.add_argument("--sft-lr", type=float, default=5e-5)
    p.add_argument("--lr", type=float, default=5e-6, help="RL learning rate (2e-5 collapsed; see the docstring)")
    p.add_argument("--prompts", type=int, default=2)
    p.add_argument("--group", type=int, default=8)
    p.add_argument("--tokens", type=int, default=320, help="new tokens per turn")
    p.add_argument("--epochs", type=int, default=1)
    p.add_argument("--eval-every", type=int, default=8)
    p.add_argument("--random-samples", type=int, default=256, help="samples per instance for the random agent")
    p.add_argument("--wrong-penalty", default="chance", choices=WRONG_PENALTIES,
                   help="eq. 1's penalty for a wrong assignment (binary: -1 - eps, as for yes/no)")
    p.add_argument("--equivalence-rule", default="exact", choices=("exact", "partial"),
                   help="the equivalence reward: SAT-RL's 1 / 0, or the clause shares (a deviation; the "
                        "'equivalent' column is then the mean share)")
    p.add_argument("--filter-metric", default=None,
                   help="dynamic sampling's filter_groups_metric (default: the preset's, acc for the DAPO presets)")
    p.add_argument("--kl-coef", type=float, default=None, help="KL to the warm-up model (default: the preset's)")
    p.add_argument("--pipeline", choices=sorted(PIPELINES), default="task",
                   help="task: warm up on the RL task's own oracle traces (2-SAT, sympy); paper: SAT-RL's data "
                        "choice, warm-up on Synthetic-Logic traces, RL on SAT-Bench (z3), validation on held-out "
                        "SAT-Bench and Synthetic-Logic")
    p.add_argument("--sft-max-tokens", type=int, default=1536,
                   help="paper pipeline: draw the warm-up among the Synthetic-Logic traces that fit this many tokens")
    p.add_argument("--logic-instances", type=int, default=2,
                   help="paper pipeline: held-out Synthetic-Logic instances per (family, query)")
    p.add_argument("--logic-families", nargs="+", default=None, choices=list(FAMILIES),
                   help="paper pipeline: the held-out Synthetic-Logic families (default: every family the warm-up drew)")
    p.add_argument("--report-only", action="store_true",
                   help="report the stages that finished (an RL stage stopped early: its validations and training "
                        "steps so far) without running the rest")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", type=Path, default=None,
                   help="default: benchmarks/results/learning_sat_rl (task) or learning_sat_rl_paper (paper)")
    a = p.parse_args(argv)
    paper = a.pipeline == "paper"
    out = a.out or HERE.parent / "results" / ("learning_sat_rl_paper" if paper else "learning_sat_rl")
    base_kwargs = PIPELINES[a.pipeline]
    data = out / "data"
    data.mkdir(parents=True, exist_ok=True)
    timings_file = out / "timings.json"
    timings: dict[str, float] = json.loads(timings_file.read_text()) if timings_file.exists() else {}

    def stage(name: str, done: bool, fn) -> None:
        """Run a stage unless its output exists; keep how long it took when it ran."""
        if done:
            return
        t = time.perf_counter()
        fn()
        timings[name] = round(time.perf_counter() - t, 1)
        timings_file.write_text(json.dumps(timings, indent=2) + "\n")

    manifest = data / "manifest.json"
    stage("data_s", manifest.exists(), lambda: manifest.write_text(
        json.dumps(build_data(data, a.n_sft, a.n_train, a.n_val, a.seed, base_kwargs,
                              a.sft_max_tokens if paper else None), indent=2) + "\n"))
    files = json.loads(manifest.read_text())
    # the env's default rule is left out of the kwargs (they name what differs from the defaults)
    env_kwargs = base_kwargs if a.wrong_penalty == "chance" else {**base_kwargs, "wrong_penalty": a.wrong_penalty}
    if a.equivalence_rule != "exact":
        env_kwargs = {**env_kwargs, "equivalence_rule": a.equivalence_rule}
    random = evaluate(out / "eval_random", "random", env_kwargs, data / "val.jsonl", a.random_samples, 1.0,
                      a.tokens, a.seed)
    t = time.perf_counter()
    base = evaluate(out / "eval_base", "hf:default", env_kwargs, data / "val.jsonl", 1, 0.0, a.tokens, a.seed)
    if "base_eval_s" not in timings:
        timings["base_eval_s"] = round(time.perf_counter() - t, 1)
        timings_file.write_text(json.dumps(timings, indent=2) + "\n")

    sft_dir = out / "sft"
    stage("sft_s", (sft_dir / "final" / "config.json").exists(), lambda: train_sft(
        SFTConfig(data=str(data / "sft.jsonl"), out_dir=str(sft_dir), lr=a.sft_lr, seed=a.seed,
                  **({"max_length": a.sft_max_tokens} if paper else {}))))
    logic: dict[str, Any] = {}
    if paper:  # held-out Synthetic-Logic, on the families the warm-up drew from, before and after it
        drawn = files["sft"]
        families = a.logic_families or [f for f in FAMILIES if f in drawn["families"]]
        known = set(drawn["instance_ids"])

        def check(name: str, model: str) -> None:
            t0 = time.perf_counter()
            logic[name] = logic_validation(out / f"logic_{name}", model, families, a.logic_instances,
                                           env_kwargs["solver"], a.tokens, known)
            timings.setdefault(f"logic_{name}_s", round(time.perf_counter() - t0, 1))
            timings_file.write_text(json.dumps(timings, indent=2) + "\n")

        check("base", "default")
        check("sft", str(sft_dir / "final"))

    rl_dir = out / "rl"
    metrics = rl_dir / "metrics.jsonl"

    def rl() -> None:
        cfg = make_config(a.preset, env=ENV, env_kwargs=env_kwargs, model=str(sft_dir / "final"),
                          data=str(data / "train.jsonl"), eval_data=str(data / "val.jsonl"), epochs=a.epochs,
                          eval_every=a.eval_every, eval_before_train=True, prompts_per_step=a.prompts,
                          group_size=a.group, max_new_tokens=a.tokens, max_total_tokens=4 * a.tokens + 512,
                          lr=a.lr, seed=a.seed, out_dir=str(rl_dir), resume="auto", save_every=a.eval_every,
                          **({"filter_groups_metric": a.filter_metric} if a.filter_metric else {}),
                          **({"kl_coef": a.kl_coef} if a.kl_coef is not None else {}))
        Trainer(cfg).train()

    rl_done = (rl_dir / "final" / "config.json").exists()
    if not a.report_only:
        stage("rl_s", rl_done, rl)
        rl_done = True
    if paper and rl_done:
        check("rl", str(rl_dir / "final"))
    rows = [json.loads(line) for line in metrics.read_text().splitlines() if line.strip()]
    val = [r for r in rows if "val_accuracy" in r]
    train = [r for r in rows if "reward" in r]

    val_instances = [json.loads(line) for line in (data / "val.jsonl").read_text().splitlines() if line.strip()]
    level = files["val"]["mean_chance_success"]
    n_val = files["val"]["count"]

    def row(name: str, run: dict[str, Any], run_dir: Path | None, **extra) -> dict[str, Any]:
        line = {"model": name, "acc": run["accuracy"], "se": run["se"], "z": z_score(run["accuracy"], level, run["se"]),
                **extra}
        if run_dir is not None:  # what the policy wrote; equivalence pays 1, so its mean is a share
            if not paper:  # the clause shares read sympy's Or(...); SAT-Bench is written for z3 here
                line.update(transcription(load_records(run_dir), val_instances))
            line["equivalent"] = run["components"].get("equivalence", 0.0)
        return line

    table = [{"model": "random agent (exact: mean chance_success)", "acc": level, "se": 0.0, "z": None},
             row(f"random agent (measured, {a.random_samples} samples each)", random, None),
             row("SmolLM2-135M as released (greedy)", base, out / "eval_base", **({"logic": logic["base"]} if paper else {}))]
    for r in val:
        run_dir = rl_dir / "validation" / f"step_{r['step'] + 1:06d}"
        name = "after SFT warm-up (RL update 0)" if r["step"] < 0 else f"after RL update {r['step'] + 1}"
        table.append(row(name, summarise(run_dir), run_dir, updates=r["step"] + 1))
    if paper:  # the held-out Synthetic-Logic check was run after the warm-up and after the last update
        table[3]["logic"] = logic["sft"]
        if "rl" in logic:
            table[-1]["logic"] = logic["rl"]
    written_cols = {"clause_recall": "true clauses written", "clause_precision": "written clauses true",
                    "exact_formula": "formula exact", "equivalent": "formula equivalent (paid)"}
    if paper:
        written_cols = {"equivalent": "formula equivalent (paid)"}
    shown = [{**r, "z": "-" if r["z"] is None else f"{r['z']:+.1f}",
              **{k: f"{r[k]:.2f}" if k in r else "-" for k in written_cols},
              "logic_acc": f"{r['logic']['accuracy']:.3f} ± {r['logic']['se']:.3f}" if "logic" in r else "-"}
             for r in table]
    logic_col = [("logic_acc", "Synthetic-Logic held-out ± SE", "s")] if paper else []
    print(format_table(shown, [("model", "validation", "s"), ("acc", "accuracy", ".3f"), ("se", "SE", ".3f"),
                               ("z", "(acc - random) / SE", "s"), *((k, h, "s") for k, h in written_cols.items()),
                               *logic_col]))
    task = ("sat-bench (6 conditions, 8 variables) z3" if paper else "sat (2,5,8) sympy")
    source = "Synthetic-Logic" if paper else "oracle"
    title = (f"{ENV} {task}, {n_val} validation formulas\nSmolLM2-135M: {a.n_sft} {source} SFT traces, "
             f"then {a.preset} (lr {a.lr:g}"
             + (f", equivalence_rule={a.equivalence_rule}" if a.equivalence_rule != "exact" else "")
             + (f", filter on {a.filter_metric}" if a.filter_metric else "")
             + (f", kl_coef {a.kl_coef:g}" if a.kl_coef is not None else "") + "), CPU")
    plot(out / "learning_sat_rl.png", [r for r in table if "updates" in r], train, level, base, title,
         logic=[(r.get("updates", 0), r["logic"]) for r in table[2:] if "logic" in r])
    summary = {"settings": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(a).items()},
               "env": ENV, "env_kwargs": env_kwargs, "data": files, "random": random, "random_exact": level,
               "base": base, "logic": logic, "validation": [{k: r[k] for k in ("step", "val_accuracy", "val_best_step")} for r in val],
               "table": table, "train_steps": len(train), "rl_finished": rl_done,
               "train_rows": train,
               "train_accuracy": [r.get("accuracy") for r in train], "timings_s": timings}
    (out / "learning_sat_rl.json").write_text(json.dumps(summary, indent=2, default=float) + "\n")
    print(f"wrote {out / 'learning_sat_rl.json'} and {out / 'learning_sat_rl.png'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
