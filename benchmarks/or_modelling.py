"""SolverOR-v0 (SIRL optimisation modelling) benchmark: instance generation speed, ground-truth
solver agreement, sandbox latency of solver programs against a fresh
interpreter, and instance-enhanced self-consistency over K candidate programs.

    python benchmarks/or_modelling.py            # the default run (a few minutes on 2 cores)
    python benchmarks/or_modelling.py --quick    # under 2 minutes on 2 cores
    python benchmarks/or_modelling.py --parts latency --runs 100   # one part, more runs

Prints one table per part and writes ``benchmarks/results/or_modelling.json`` (machine info,
load average before and after, solver versions, git revision, arguments, every number printed)
and ``benchmarks/results/or_modelling.png`` (the latency comparison). Both sides of every ratio
are measured in the same run, interleaved; on a shared 2-core machine (a CI job next door) the
absolute times move by 10-30% between runs, the ratios less.

**1. Generation** (``--parts generation``). For every family of ``envs/opt/generator.FAMILIES``
and two sizes (``generate``'s default and ``--large-size``, default 6): ``generate(family,
np.random.default_rng(seed), size=...)`` for seeds ``0..N-1`` (``--seeds``, default 20;
``--quick`` 5), after one warm-up draw at an unused seed (imports, solver start-up). Reported:
instances/s; the mean ground-truth solve time per draw (``reference_solve``, both solvers, timed
by wrapping the generator's reference to it for the duration of the loop: the instance itself
holds no timings) and the share of generation time it takes; and the share of draws the
generator discarded (``extra["attempt"]`` counts the draws an instance took: a draw is discarded
when the two solvers time out, fail, disagree, or give another status than the one asked for).

**Agreement** (same part): for ``--agree-seeds`` seeds per family (default 100; ``--quick`` 10)
at the default size, the stored model is solved again with ``solve_highs`` and the family's second
solver (``solve_ortools``; ``solve_gurobi`` for the quadratic family); a seed agrees when both
report the same status and, when optimal, objectives within ``1e-6 * (1 + |b|)`` (SIRL's
accuracy test). Also counted: HiGHS reproduces the stored answer, and gurobipy as a third opinion
on the linear families. ``--infeasible-ratio`` exercises the status agreement (default 0).

**2. Sandbox latency** (``--parts latency``). The oracle program (``programs.oracle_program``)
of one small product_mix instance (seed 0, default size: 3 variables, 3 rows) for each library,
gurobipy, highspy and OR-Tools ``pywraplp``, run ``--runs`` times (default 50; ``--quick`` 10)
through a warm ``SandboxPool`` as ``SolverOR-v0`` runs them (``pool.run(code, limits,
rehearse=OR_SOLVERS)``: a child that solved a tiny model with each library before the
program came, fork from the zygote, run, capture the solve from the solver object, validate the
record), through a second pool that rehearses nothing ("unrehearsed"), and as many times as a
fresh interpreter, ``subprocess.run([sys.executable, "-c", program])``: how the published
evaluators execute model code (SIRL's ``check_result``, OptMATH, ORLM). The three are
interleaved, program by program and round by round (each side goes first, second and last
equally often), after three warm-up runs of each, with a :data:`PAUSE_S` pause before every
call (what a pool does after an answer, taking the program down and preparing the next child,
would otherwise land in whichever call comes next). The pools are idle for 2 s first (the
zygotes back their images with huge pages). A fourth row, ``print(1)``, is the floor of every
side (no imports, no solve). Wall time around the call, median and p95; ratio fresh/sandbox of
the medians. Targets: <= 30 ms median per program in the sandbox and >= 10x faster
than the fresh interpreter; each is printed as met or MISSED, never asserted.

**2b. Host re-solve** (``--parts host``): ``benchmarks/or_host.py``'s table, what the host adds
per oracle answer (read, reduce, re-solve the exported model) beside the sandbox's time.

**3. Self-consistency** (``--parts consistency``). For M instances (``--instances``, default 20;
``--quick`` 8; instance i is family ``FAMILY_NAMES[i % 11]`` at seed 1000 + i) K = 8 candidate
programs (``--k``) are built from the reference model: ``c`` unchanged copies, where ``c`` cycles
over ``--correct`` (default 2,3,4,5; the issue's 4-5 copies, plus fewer, where the votes can go
wrong), and ``K - c`` perturbed models, cycling over three modelling mistakes: ``coef`` (one
objective coefficient scaled by a factor in [0.3, 0.7] or [1.4, 2.0]), ``integrality`` (every
integer/binary variable made continuous, binaries keeping [0, 1]; in a continuous model every
variable made integer) and ``drop`` (one constraint left out). Each candidate's program uses
gurobipy, highspy or OR-Tools in turn (skipping a library that cannot solve the model), the K
programs are shuffled and run together with ``pool.run_many``; ``(objective, sense, num_bin,
num_int)`` of each is read from ``SandboxResult.optimum`` (the solver object, not the printout).
A candidate is correct when its optimum is optimal with an objective within ``objectives_agree``
of the stored answer (a perturbed model whose optimum did not move counts as correct: it is,
by value; for an infeasible instance, when it reports infeasible). All K captured optima go to
the selectors as they came back (``None`` for a program that did not finish ``ok``): which of
them count is the selector's rule (``consistency.features_of``). Reported per ``c`` and overall:
the share of correct candidates, how often ``envs/opt/consistency.select`` (instance-enhanced
self-consistency, SIRL §3.1 eq. 2-3) and ``value_vote`` (majority vote on the objective, SIRL
Table 2's baseline) pick a correct one, the expected accuracy of a uniform random pick among the
candidates with an answer (optimal or infeasible), and the wall time per instance for the K runs
(and K programs/s). A check on the sandbox: a correct copy's reported features (sense, num_bin,
num_int) must equal the reference model's; mismatches are counted and printed.

Reading the results: ``integrality`` changes ``num_bin``/``num_int``, so eq. 3 breaks a value tie
against it where the value vote takes the first tied candidate; ``coef`` and ``drop`` leave the
features unchanged and the two choose alike; the differences show at ``c = 2``.
"""
from __future__ import annotations

import argparse
import contextlib
import copy
import importlib.metadata
import inspect
import json
import math
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from tqdm import tqdm

try:
    import solvergym  # noqa: F401
except ImportError:  # run from a checkout without installing: the root is the package
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
import solvergym.envs.opt.generator as generator_module
from solvergym.evaluation.tables import format_table
from solvergym.envs.opt.consistency import select, value_vote
from solvergym.envs.opt.generator import FAMILIES, FAMILY_KIND, generate
from solvergym.envs.opt.model import LinearModel
from solvergym.envs.opt.tool import OR_SOLVERS
from solvergym.envs.opt.programs import oracle_program
from solvergym.benchmarks.or_host import COLUMNS as HOST_COLUMNS, bench_host
from solvergym.envs.opt.solve import objectives_agree, solve_gurobi, solve_highs, solve_ortools
from solvergym.sandbox import Limits, SandboxPool

FAMILY_NAMES = tuple(FAMILIES)
DEFAULT_SIZE = inspect.signature(generate).parameters["size"].default
LIBRARIES = ("gurobipy", "highspy", "ortools")
TARGET_MS = 30.0
TARGET_SPEEDUP = 10.0
PARTS = ("generation", "latency", "host", "consistency")
WRONG_KINDS = ("coef", "integrality", "drop")
REHEARSE = OR_SOLVERS  # what SolverOR-v0 asks the sandbox to rehearse
#: between two timed calls: what a pool does after answering (taking the program down, forking
#: and rehearsing the next child, ~10-40 ms of CPU) must not fall into the next call's time
PAUSE_S = 0.05


def machine_info() -> dict:
    cpu = ""
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    versions = {}
    for pkg in ("gurobipy", "highspy", "ortools", "numpy"):
        try:
            versions[pkg] = importlib.metadata.version(pkg)
        except importlib.metadata.PackageNotFoundError:
            versions[pkg] = None
    rev = None
    with contextlib.suppress(Exception):
        root = Path(__file__).resolve().parents[1]
        rev = subprocess.run(["git", "-C", str(root), "rev-parse", "--short", "HEAD"], capture_output=True,
                             text=True, check=True).stdout.strip()
    return {"python": platform.python_version(), "cpus": os.cpu_count(), "cpu_model": cpu,
            "platform": platform.platform(), "solver_versions": versions, "git_head": rev}


def _load() -> list[float]:
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return []


# --------------------------------------------------------------------------- 1. generation
@contextlib.contextmanager
def timed_reference_solve():
    """Wrap the generator's ``reference_solve`` to add up the time of every ground-truth solve."""
    acc = {"calls": 0, "seconds": 0.0}
    original = generator_module.reference_solve

    def wrapper(*a, **kw):
        t = time.perf_counter()
        try:
            return original(*a, **kw)
        finally:
            acc["calls"] += 1
            acc["seconds"] += time.perf_counter() - t

    generator_module.reference_solve = wrapper
    try:
        yield acc
    finally:
        generator_module.reference_solve = original


def bench_generation(seeds: int, sizes: list[int], progress: bool) -> list[dict]:
    rows = []
    for family in tqdm(FAMILY_NAMES, desc="generation", disable=not progress):
        for size in sizes:
            with contextlib.suppress(ValueError):
                generate(family, np.random.default_rng(10**6), size=size)  # warm: imports, solver start-up
            failures, attempts = 0, 0
            with timed_reference_solve() as acc:
                t = time.perf_counter()
                for seed in range(seeds):
                    try:
                        inst = generate(family, np.random.default_rng(seed), size=size)
                        attempts += inst.extra["attempt"]
                    except ValueError:  # MAX_ATTEMPTS draws discarded in a row
                        failures += 1
                        attempts += generator_module.MAX_ATTEMPTS
                dt = time.perf_counter() - t
            made = seeds - failures
            rows.append({
                "family": family, "kind": FAMILY_KIND[family], "size": size, "instances": made,
                "failed_seeds": failures, "seconds": dt, "instances_per_s": made / dt if dt > 0 else math.inf,
                "ms_per_instance": 1000 * dt / max(made, 1),
                "solve_ms_per_draw": 1000 * acc["seconds"] / max(acc["calls"], 1),
                "solve_share": acc["seconds"] / dt if dt > 0 else 0.0,
                "draws": attempts, "discarded_share": (attempts - made) / attempts if attempts else 0.0,
            })
    return rows


def _agree(a, b) -> bool:
    if a.status != b.status:
        return False
    return a.status != "optimal" or objectives_agree(a.objective, b.objective)


def bench_agreement(seeds: int, infeasible_ratio: float, progress: bool) -> list[dict]:
    rows = []
    for family in tqdm(FAMILY_NAMES, desc="agreement", disable=not progress):
        quadratic = FAMILY_KIND[family] == "QP"
        second_name = "gurobi" if quadratic else "ortools"
        second = solve_gurobi if quadratic else solve_ortools
        n = agree = stored = third = third_n = infeasible = 0
        t_first = t_second = 0.0
        disagreements = []
        for seed in range(seeds):
            try:
                inst = generate(family, np.random.default_rng(seed), infeasible_ratio=infeasible_ratio)
            except ValueError as e:
                disagreements.append({"seed": seed, "generate": str(e)[:300]})
                continue
            model = LinearModel.from_dict(inst.model)
            a, b = solve_highs(model), second(model)
            n += 1
            infeasible += inst.status == "infeasible"
            t_first += a.seconds
            t_second += b.seconds
            ok = _agree(a, b)
            agree += ok
            stored += a.status == inst.status and (a.status != "optimal" or objectives_agree(a.objective, inst.answer))
            if not quadratic:
                g = solve_gurobi(model)
                third_n += 1
                third += _agree(a, g)
            if not ok and len(disagreements) < 5:
                disagreements.append({"seed": seed, "highs": [a.status, a.objective, a.reason],
                                      second_name: [b.status, b.objective, b.reason]})
        rows.append({
            "family": family, "kind": FAMILY_KIND[family], "pair": f"highs+{second_name}", "seeds": n,
            "infeasible": infeasible, "agree": agree, "agree_str": f"{agree}/{n}",
            "stored_str": f"{stored}/{n}", "third_str": f"{third}/{third_n}" if third_n else "-",
            "agree_stored": stored, "gurobi_agrees": third if third_n else None,
            "highs_ms": 1000 * t_first / max(n, 1), "second_ms": 1000 * t_second / max(n, 1),
            "disagreements": disagreements,
        })
    return rows


# --------------------------------------------------------------------------- 2. latency
#: the floor: a program that imports nothing and solves nothing (no target applies to it)
TRIVIAL = "print(1)"


def latency_programs() -> tuple[dict[str, str], object]:
    inst = generate("product_mix", np.random.default_rng(0))
    codes = {lib: oracle_program(inst.model, lib) for lib in LIBRARIES}
    codes[TRIVIAL] = TRIVIAL + "\n"
    return codes, inst


def bench_latency(pool: SandboxPool, cold_pool: SandboxPool, runs: int, progress: bool) -> list[dict]:
    codes, inst = latency_programs()
    limits = Limits(timeout_s=30.0)
    workdir = tempfile.mkdtemp(prefix="sg-or-fresh-")

    def sandbox(lib, cold=False):
        t = time.perf_counter()
        r = cold_pool.run(codes[lib], limits) if cold else pool.run(codes[lib], limits, rehearse=REHEARSE)
        dt = time.perf_counter() - t
        opt = r.optimum or {}
        if lib == TRIVIAL:
            if r.status != "ok" or r.stdout.strip() != "1":
                raise RuntimeError(f"print(1) in the sandbox: {r.status} {r.reason}\n{r.stderr[-2000:]}")
        elif r.status != "ok" or opt.get("status") != "optimal" or not objectives_agree(opt["objective"], inst.answer):
            raise RuntimeError(f"{lib} in the sandbox: {r.status} {r.reason} optimum={opt}\n{r.stderr[-2000:]}")
        return dt

    def fresh(lib):
        t = time.perf_counter()
        p = subprocess.run([sys.executable, "-c", codes[lib]], capture_output=True, text=True, cwd=workdir)
        dt = time.perf_counter() - t
        if p.returncode != 0 or ("status: optimal" not in p.stdout and lib != TRIVIAL):
            raise RuntimeError(f"{lib} in a fresh interpreter: rc {p.returncode}\n{p.stderr[-2000:]}")
        return dt

    names = list(codes)
    for lib in names:  # warm: the server's first forks touch pages the later ones share; disk cache
        for _ in range(3):
            sandbox(lib)
            sandbox(lib, cold=True)
        fresh(lib)
    sides = ("sandbox", "cold", "fresh")
    times = {lib: {how: [] for how in sides} for lib in names}
    for i in tqdm(range(runs), desc="latency", disable=not progress):
        for lib in (names if i % 2 == 0 else names[::-1]):
            for how in sides[i % 3:] + sides[:i % 3]:  # every side goes first, second and last alike
                time.sleep(PAUSE_S)
                times[lib][how].append(fresh(lib) if how == "fresh" else sandbox(lib, cold=how == "cold"))
    rows = []
    for lib in names:
        s, c, f = (times[lib][how] for how in sides)
        med, cmed, fmed = statistics.median(s), statistics.median(c), statistics.median(f)
        rows.append({
            "library": lib, "runs": len(s),
            "sandbox_median_ms": 1000 * med, "sandbox_p95_ms": 1000 * float(np.percentile(s, 95)),
            "sandbox_min_ms": 1000 * min(s),
            "cold_median_ms": 1000 * cmed, "cold_p95_ms": 1000 * float(np.percentile(c, 95)),
            "fresh_median_ms": 1000 * fmed, "fresh_p95_ms": 1000 * float(np.percentile(f, 95)), "fresh_min_ms": 1000 * min(f),
            "speedup": fmed / med, "cold_speedup": fmed / cmed,
            "meets_ms": None if lib == TRIVIAL else 1000 * med <= TARGET_MS,
            "meets_speedup": None if lib == TRIVIAL else fmed / med >= TARGET_SPEEDUP,
            "sandbox_ms": [round(1000 * x, 3) for x in s], "cold_ms": [round(1000 * x, 3) for x in c],
            "fresh_ms": [round(1000 * x, 3) for x in f],
        })
    return rows


def plot_latency(rows: list[dict], path: Path, note: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    libs = [r["library"] for r in rows]
    x = np.arange(len(libs))
    w = 0.27
    fig, ax = plt.subplots(figsize=(7.5, 4.2))
    for off, key, label, color in ((-w, "sandbox", "SandboxPool, rehearsed (as SolverOR-v0 runs it)", "tab:blue"),
                                   (0.0, "cold", "SandboxPool, unrehearsed", "tab:cyan"),
                                   (w, "fresh", "fresh interpreter (python -c)", "tab:orange")):
        med = np.array([r[f"{key}_median_ms"] for r in rows])
        p95 = np.array([r[f"{key}_p95_ms"] for r in rows])
        ax.bar(x + off, med, w, label=label, color=color,
               yerr=np.vstack([np.zeros_like(med), p95 - med]), capsize=4, error_kw={"elinewidth": 1})
    for xi, r in zip(x, rows):
        ax.annotate(f"{r['speedup']:.1f}x", (xi, max(r["fresh_p95_ms"], r["sandbox_p95_ms"])),
                    textcoords="offset points", xytext=(0, 12), ha="center", fontsize=9, weight="bold")
    ax.axhline(TARGET_MS, color="tab:blue", ls="--", lw=0.8, label=f"target {TARGET_MS:.0f} ms (sandbox)")
    ax.set_xticks(x, [f"{r['library']}\n{r['sandbox_median_ms']:.0f} / {r['fresh_median_ms']:.0f} ms" for r in rows])
    ax.set_ylabel("wall ms per program (bar: median, whisker: p95)")
    ax.set_title(f"oracle program of a small product_mix instance\n{note}", fontsize=9)
    ax.set_ylim(0, max(r["fresh_p95_ms"] for r in rows) * 1.25)
    ax.legend(fontsize=8, loc="upper right")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


# --------------------------------------------------------------------------- 3. self-consistency
def perturb(model: dict, kind: str, rng: np.random.Generator) -> dict:
    """A copy of ``model`` with one modelling mistake of ``kind`` (see the module docstring)."""
    m = copy.deepcopy(model)
    if kind == "drop" and m["constraints"]:
        del m["constraints"][int(rng.integers(len(m["constraints"])))]
        return m
    if kind == "integrality":
        if any(v["kind"] != "C" for v in m["variables"]):
            for v in m["variables"]:
                if v["kind"] == "B":
                    v["lb"] = 0.0 if v["lb"] is None else max(v["lb"], 0.0)
                    v["ub"] = 1.0 if v["ub"] is None else min(v["ub"], 1.0)
                v["kind"] = "C"
        else:
            for v in m["variables"]:
                v["kind"] = "I"
        return m
    # "coef" (and the fallback of a model without rows to drop)
    factor = float(rng.uniform(0.3, 0.7) if rng.random() < 0.5 else rng.uniform(1.4, 2.0))
    linear = [k for k, c in m["objective"].items() if c != 0.0]
    if linear:
        k = linear[int(rng.integers(len(linear)))]
        m["objective"][k] *= factor
    elif m["quadratic"]:
        m["quadratic"][int(rng.integers(len(m["quadratic"])))][2] *= factor
    return m


def _libraries_for(model: LinearModel) -> list[str]:
    if model.is_quadratic and model.is_integer:
        return ["gurobipy"]
    if model.is_quadratic:
        return ["gurobipy", "highspy"]
    return list(LIBRARIES)


def build_candidates(inst, k: int, correct: int, rng: np.random.Generator, turn: int) -> list[dict]:
    """``k`` candidates ``{"kind", "library", "code"}``: ``correct`` copies, the rest perturbed, shuffled."""
    kinds = ["copy"] * correct + [WRONG_KINDS[j % len(WRONG_KINDS)] for j in range(k - correct)]
    out = []
    for j, kind in enumerate(kinds):
        model = inst.model if kind == "copy" else perturb(inst.model, kind, rng)
        libs = _libraries_for(LinearModel.from_dict(model))
        lib = libs[(turn + j) % len(libs)]
        out.append({"kind": kind, "library": lib, "code": oracle_program(model, lib)})
    order = rng.permutation(len(out))
    return [out[i] for i in order]


def bench_consistency(pool: SandboxPool, instances: int, k: int, correct_cycle: list[int], progress: bool) -> dict:
    limits = Limits(timeout_s=30.0)
    per_instance = []
    kinds: dict[str, dict] = {}
    feature_mismatch = 0
    pool.run_many(["print(1)"] * (2 * pool.size), limits)  # every server started and warm
    for i in tqdm(range(instances), desc="self-consistency", disable=not progress):
        family = FAMILY_NAMES[i % len(FAMILY_NAMES)]
        inst = generate(family, np.random.default_rng(1000 + i))
        c = correct_cycle[i % len(correct_cycle)]
        cands = build_candidates(inst, k, min(c, k), np.random.default_rng(10**6 + i), i)
        t = time.perf_counter()
        results = pool.run_many([x["code"] for x in cands], limits, rehearse=REHEARSE)
        dt = time.perf_counter() - t
        records, captured = [], []
        for cand, r in zip(cands, results):
            opt = (r.optimum if r.status == "ok" else None) or {}
            captured.append(opt or None)
            obj = opt.get("objective")
            ok = opt.get("status") == "optimal" and obj is not None and math.isfinite(obj)
            solved = ok or opt.get("status") in ("infeasible", "inf_or_unbd")
            right = bool(objectives_agree(obj, inst.answer) if ok and inst.status == "optimal"
                         else solved and not ok and inst.status == "infeasible")
            rec = {"kind": cand["kind"], "library": cand["library"], "run_status": r.status,
                   "solve_status": opt.get("status"), "objective": obj, "sense": opt.get("sense"),
                   "num_bin": opt.get("num_bin"), "num_int": opt.get("num_int"), "solved": solved,
                   "correct": right}
            records.append(rec)
            if cand["kind"] == "copy" and ok and (opt.get("sense"), opt.get("num_bin"), opt.get("num_int")) != (
                    inst.features["sense"], inst.features["num_bin"], inst.features["num_int"]):
                feature_mismatch += 1
            st = kinds.setdefault(cand["kind"], {"kind": cand["kind"], "candidates": 0, "correct": 0,
                                                 "wrong_answer": 0, "no_answer": 0})
            st["candidates"] += 1
            st["correct"] += right
            st["wrong_answer"] += bool(solved and not right)
            st["no_answer"] += not solved
        solved_recs = [r for r in records if r["solved"]]
        row = {"instance": i, "family": family, "seed": 1000 + i, "correct_copies": c, "seconds": dt,
               "solved": len(solved_recs), "correct_share": sum(r["correct"] for r in records) / len(records),
               "random_pick": (sum(r["correct"] for r in solved_recs) / len(solved_recs)) if solved_recs else 0.0,
               "select_index": select(captured), "vote_index": value_vote(captured), "candidates": records}
        row["select_correct"] = records[row["select_index"]]["correct"]
        row["vote_correct"] = records[row["vote_index"]]["correct"]
        per_instance.append(row)

    def summary(rows, label):
        def mean(key):
            xs = [r[key] for r in rows if r[key] is not None]
            return statistics.mean(float(x) for x in xs) if xs else None
        secs = [r["seconds"] for r in rows]
        return {"group": label, "instances": len(rows), "correct_share": mean("correct_share"),
                "random_pick": mean("random_pick"), "select_acc": mean("select_correct"),
                "vote_acc": mean("vote_correct"), "ms_per_instance": 1000 * statistics.mean(secs),
                "ms_per_instance_median": 1000 * statistics.median(secs),
                "programs_per_s": k * len(rows) / sum(secs)}

    groups = [summary([r for r in per_instance if r["correct_copies"] == c], f"{c} correct of {k}")
              for c in sorted({r["correct_copies"] for r in per_instance})]
    groups.append(summary(per_instance, "all"))
    return {"k": k, "pool_size": pool.size, "groups": groups,
            "by_kind": list(kinds.values()), "copy_feature_mismatches": feature_mismatch,
            "instances": per_instance}


# --------------------------------------------------------------------------- main
def _fmt(x, spec=".2f"):
    return "-" if x is None else format(x, spec)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true", help="small counts (under 2 minutes on 2 cores)")
    p.add_argument("--parts", default=",".join(PARTS), help=f"comma-separated subset of {','.join(PARTS)}")
    p.add_argument("--seeds", type=int, help="instances per family and size for the speed table (default 20; quick 5)")
    p.add_argument("--large-size", type=int, default=6, help=f"the second size (the default is {DEFAULT_SIZE})")
    p.add_argument("--agree-seeds", type=int, help="seeds per family for the solver agreement (default 100; quick 10)")
    p.add_argument("--infeasible-ratio", type=float, default=0.0, help="infeasible_ratio of the agreement instances")
    p.add_argument("--runs", type=int, help="runs per library and side for the latency (default 50; quick 10)")
    p.add_argument("--instances", type=int, help="instances for self-consistency (default 20; quick 8)")
    p.add_argument("--k", type=int, default=8, help="candidates per instance")
    p.add_argument("--correct", default="2,3,4,5", help="correct copies among the K, cycled over the instances")
    p.add_argument("--no-progress", action="store_true", help="no tqdm bars")
    p.add_argument("--out", default=str(Path(__file__).resolve().parent / "results"))
    args = p.parse_args(argv)
    q = args.quick
    args.seeds = args.seeds or (5 if q else 20)
    args.agree_seeds = args.agree_seeds or (10 if q else 100)
    args.runs = args.runs or (10 if q else 50)
    args.instances = args.instances or (8 if q else 20)
    parts = [x.strip() for x in args.parts.split(",") if x.strip()]
    bad = set(parts) - set(PARTS)
    if bad:
        p.error(f"unknown parts {sorted(bad)}; choose from {PARTS}")
    correct_cycle = [int(x) for x in args.correct.split(",")]
    progress = not args.no_progress

    started = time.strftime("%Y-%m-%dT%H:%M:%S%z")
    load_before = _load()
    t_all = time.perf_counter()
    result: dict = {"benchmark": "or_modelling", "started": started, "machine": machine_info(),
                    "load_before": load_before, "args": vars(args)}

    if "generation" in parts:
        sizes = [DEFAULT_SIZE] + ([args.large_size] if args.large_size != DEFAULT_SIZE else [])
        gen = bench_generation(args.seeds, sizes, progress)
        agr = bench_agreement(args.agree_seeds, args.infeasible_ratio, progress)
        result["generation"] = gen
        result["agreement"] = agr
        print(f"\n1. generation: {args.seeds} seeds per family and size (sizes {sizes})")
        print(format_table(gen, [("family", "family", "s"), ("kind", "kind", "s"), ("size", "size", "d"),
                                 ("instances_per_s", "instances/s", ".1f"), ("ms_per_instance", "ms/inst", ".1f"),
                                 ("solve_ms_per_draw", "solve ms/draw", ".1f"), ("solve_share", "solve share", ".0%"),
                                 ("discarded_share", "discarded", ".1%"), ("failed_seeds", "failed", "d")]))
        print(f"\nground-truth agreement: {args.agree_seeds} seeds per family at size {DEFAULT_SIZE}, "
              f"stored model re-solved (status equal, objectives within 1e-6*(1+|b|))"
              + (f", infeasible_ratio {args.infeasible_ratio}" if args.infeasible_ratio else ""))
        print(format_table(agr, [("family", "family", "s"), ("kind", "kind", "s"), ("pair", "pair", "s"),
                                 ("agree_str", "agree", "s"), ("stored_str", "= stored", "s"),
                                 ("third_str", "gurobi agrees", "s"), ("infeasible", "infeasible", "d"),
                                 ("highs_ms", "highs ms", ".1f"), ("second_ms", "2nd ms", ".1f")]))
        tot = sum(r["agree"] for r in agr), sum(r["seeds"] for r in agr)
        print(f"all families: {tot[0]}/{tot[1]} agree"
              + ("" if tot[0] == tot[1] else "  (disagreements listed in the JSON)"))

    pool = cold_pool = None
    try:
        if {"latency", "host", "consistency"} & set(parts):
            t = time.perf_counter()
            pool = SandboxPool().start()
            result["sandbox"] = {"servers": pool.size, "start_s": time.perf_counter() - t,
                                 "isolation": pool.isolation["active"], "rehearse": list(REHEARSE)}
        if "latency" in parts:
            cold_pool = SandboxPool().start()
            time.sleep(2.0)  # the zygotes back their images with huge pages while idle (zygote.py)
            lat = bench_latency(pool, cold_pool, args.runs, progress)
            result["latency"] = {"rows": lat, "target_ms": TARGET_MS, "target_speedup": TARGET_SPEEDUP}
            print(f"\n2. sandbox latency: oracle program of product_mix seed 0 (size {DEFAULT_SIZE}), {args.runs} runs "
                  f"per side, interleaved; {pool.size} fork servers, isolation: {', '.join(pool.isolation['active'])}")
            table = [{**r, "target": "(floor, no target)" if r["meets_ms"] is None else
                      f"{'met' if r['meets_ms'] else 'MISSED'} / {'met' if r['meets_speedup'] else 'MISSED'}"}
                     for r in lat]
            print(format_table(table, [("library", "library", "s"), ("sandbox_median_ms", "sandbox median ms", ".1f"),
                                       ("sandbox_p95_ms", "p95 ms", ".1f"),
                                       ("cold_median_ms", "unrehearsed median", ".1f"),
                                       ("fresh_median_ms", "python -c median ms", ".1f"),
                                       ("fresh_p95_ms", "p95 ms", ".1f"), ("speedup", "fresh/sandbox", ".1f"),
                                       ("target", f"<= {TARGET_MS:.0f} ms / >= {TARGET_SPEEDUP:.0f}x", "s")]))
        if "host" in parts:  # beside the latency: what the host adds per answer (benchmarks/or_host.py)
            result["host"] = bench_host(pool, 5 if q else 20, progress)
            print("\n2b. host re-solve per oracle answer (gurobipy), default size\n" + format_table(result["host"], HOST_COLUMNS))
        if "consistency" in parts:
            con = bench_consistency(pool, args.instances, args.k, correct_cycle, progress)
            result["consistency"] = con
            print(f"\n3. self-consistency: {args.instances} instances, K={args.k} candidates each "
                  f"(correct copies cycling over {correct_cycle}), run with pool.run_many on {pool.size} servers")
            rows = [{**g, **{f"{k}_s": _fmt(g[k], ".0%") for k in ("correct_share", "random_pick", "select_acc",
                                                                     "vote_acc")}} for g in con["groups"]]
            print(format_table(rows, [("group", "candidates", "s"), ("instances", "instances", "d"),
                                      ("correct_share_s", "correct cands", "s"), ("random_pick_s", "random pick", "s"),
                                      ("select_acc_s", "select (eq. 3)", "s"), ("vote_acc_s", "value vote", "s"),
                                      ("ms_per_instance", "ms/instance", ".0f"),
                                      ("programs_per_s", "programs/s", ".1f")]))
            print("   by candidate kind:")
            print(format_table(con["by_kind"], [("kind", "kind", "s"), ("candidates", "candidates", "d"),
                                                ("correct", "correct answer", "d"),
                                                ("wrong_answer", "wrong answer", "d"),
                                                ("no_answer", "no answer", "d")]))
            print(f"   correct copies whose sandbox-reported (sense, num_bin, num_int) differ from the model's: "
                  f"{con['copy_feature_mismatches']}")
    finally:
        for p in (pool, cold_pool):
            if p is not None:
                p.close()

    result["load_after"] = _load()
    result["seconds"] = time.perf_counter() - t_all
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "or_modelling.json").write_text(json.dumps(result, indent=2) + "\n")
    print(f"\nload average before {load_before}, after {result['load_after']} ({os.cpu_count()} cpus); "
          f"{result['seconds']:.0f} s in all")
    print(f"wrote {out / 'or_modelling.json'}")
    if "latency" in result:
        note = (f"{args.runs} runs per side, interleaved; {os.cpu_count()} cpus, load {load_before} -> "
                f"{result['load_after']}")
        plot_latency(result["latency"]["rows"], out / "or_modelling.png", note)
        print(f"wrote {out / 'or_modelling.png'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
