"""SAT family speed: generation, verification, env steps, and the SATURN-2.6k build.

    python benchmarks/sat_generation.py [--repeat 3] [--saturn-code PATH] [--out benchmarks/results]
    python benchmarks/sat_generation.py --quick     # a tenth of the items, one round (``make bench`` in the tests)

Prints a table and writes ``sat_generation.json``. With ``--saturn-code`` pointing at a checkout
of SATURN's code (gtxygyzb/Saturn-code), its published build scripts (``single_clause.py`` then
``combine.py`` for the 4 released training configs and the 10 test levels, 2,580 instances) run in
the same process tree, alternating with ours, and the ratio of the two medians is reported.
"""
from __future__ import annotations

import argparse
import json
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

try:
    import solvergym  # noqa: F401
except ImportError:  # run from a checkout without installing: the root is the package
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from solvergym.agents.scripted import oracle_action
from solvergym.evaluation.tables import format_table
from solvergym.envs.sat.datasets import SATURN_HARD_LEVELS, build_saturn_2_6k
from solvergym.envs.sat.cnf import first_violated
from solvergym.envs.sat.decision import decision_instance
from solvergym.envs.sat.generator import plant, sat_construction
from solvergym.envs.sat.verify import satisfies_batch


def rate(fn, count: int, repeat: int) -> float:
    """Best-of-``repeat`` items per second of ``fn()`` producing ``count`` items."""
    best = min(_timed(fn) for _ in range(repeat))
    return count / best


def _timed(fn) -> float:
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def bench_generation(repeat: int, scale: float = 1.0) -> list[dict]:
    rows = []
    for level in [(3, 5, 5), (3, 5, 13), (3, 7, 40), (4, 8, 40), (5, 8, 40), (3, 16, 60)]:
        m = _items(200, scale)
        rows.append({"what": f"plant{level}", "per_s": rate(lambda: [plant(*level, s) for s in range(m)], m, repeat)})
    for level in [(3, 5, 13), (4, 8, 40)]:
        m = _items(500, scale)
        rows.append({"what": f"SAT_Construction{level} m={m}",
                     "per_s": rate(lambda: sat_construction(*level, m, 0), m, repeat)})
    for dims, nc in [([3, 2, 2], 8), ([4, 3, 2], 30)]:
        m = _items(100, scale)
        rows.append({"what": f"decision{tuple(dims)} {nc} clauses (certified)",
                     "per_s": rate(lambda: [decision_instance(dims, nc, s, satisfiable=s % 2 == 0) for s in range(m)],
                                   m, repeat)})
    return rows


def _items(m: int, scale: float) -> int:
    return max(2, int(m * scale))


def bench_verify(repeat: int, scale: float = 1.0) -> list[dict]:
    inst = plant(3, 20, 90, 0)
    rng = np.random.default_rng(0)
    masks = rng.integers(0, 2**20, size=_items(20000, scale))
    bits = ["".join("1" if (int(a) >> i) & 1 else "0" for i in range(20)) for a in masks]
    loop = rate(lambda: [first_violated(inst.clauses, b) for b in bits], len(bits), repeat)
    vec = rate(lambda: satisfies_batch(inst.clauses, masks), len(bits), repeat)
    return [{"what": "verify (3,20,90) python loop", "per_s": loop},
            {"what": "verify (3,20,90) numpy batch", "per_s": vec, "ratio_vs_loop": vec / loop}]


def bench_env(repeat: int, scale: float = 1.0) -> list[dict]:
    import gymnasium as gym

    rows = []
    for env_id in ("SolverSAT-v0", "SolverSATBench-v0"):
        env = gym.make(env_id).unwrapped
        m = _items(300, scale)

        def episodes():
            for s in range(m):
                env.reset(seed=s)
                env.step(oracle_action(env))
        rows.append({"what": f"{env_id} reset+step", "per_s": rate(episodes, m, repeat)})
    return rows


def bench_build(repeat: int, saturn_code: Path | None = None) -> tuple[dict, dict | None]:
    """Our build ``repeat`` times; with ``saturn_code``, SATURN's scripts after each of ours (the two
    alternate, so a slow spell of the machine falls on both), medians on both sides."""
    times, theirs = [], []
    with tempfile.TemporaryDirectory() as d:
        for i in range(repeat):
            times.append(_timed(lambda: build_saturn_2_6k(Path(d) / str(i), progress=False)))
            if saturn_code is not None:
                theirs.append(bench_saturn_code(saturn_code))
    ours = {"what": "saturn-2.6k build (2,660 instances, written)", "seconds": statistics.median(times),
            "seconds_all": times}
    if saturn_code is None:
        return ours, None
    ref = {"what": "SATURN published scripts (2,580 instances, 28 launches)", "seconds": statistics.median(theirs),
           "seconds_all": theirs, "ratio_to_solvergym": statistics.median(theirs) / ours["seconds"]}
    return ours, ref


# SATURN's released data: 4 training configs (N_SAMPLE 270/520) and 10 test levels of 100.
SATURN_CODE_CONFIGS = [((3, 5, 5), 270), ((3, 5, 6), 270), ((3, 5, 13), 520), ((3, 5, 15), 520)] + [
    (lvl, 100) for lvl in SATURN_HARD_LEVELS]


def bench_saturn_code(path: Path) -> float:
    """Seconds for SATURN's published scripts to build its released data (14 levels, 28 launches)."""
    scripts = path / "src" / "Build_SAT_Datasets"
    if not (scripts / "single_clause.py").exists():
        raise SystemExit(f"--saturn-code: no src/Build_SAT_Datasets/single_clause.py under {path}")
    with tempfile.TemporaryDirectory() as d:
        t = time.perf_counter()
        for (n, k, l), size in SATURN_CODE_CONFIGS:
            res = Path(d) / f"{n}_{k}_{l}_{size}"
            subprocess.run([sys.executable, str(scripts / "single_clause.py"), "--n_sat", str(n), "--k", str(k),
                            "--result_dir", str(res)], check=True, capture_output=True)
            subprocess.run([sys.executable, str(scripts / "combine.py"), "--n_sat", str(n), "--k", str(k),
                            "--length", str(l), "--n_sample", str(size), "--result_dir", str(res)],
                           check=True, capture_output=True)
        return time.perf_counter() - t


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--saturn-code", type=Path, default=None)
    p.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "results")
    p.add_argument("--quick", action="store_true", help="a tenth of the items and one round (a smoke run)")
    args = p.parse_args(argv)
    scale = 0.1 if args.quick else 1.0
    if args.quick:
        args.repeat = 1

    rows = bench_generation(args.repeat, scale) + bench_verify(args.repeat, scale) + bench_env(args.repeat, scale)
    print(format_table([{**r, "ratio": f"{r['ratio_vs_loop']:.1f}x" if "ratio_vs_loop" in r else ""} for r in rows],
                       [("what", "measure", "s"), ("per_s", "per second", ",.0f"), ("ratio", "", "s")]))
    build, ref = bench_build(args.repeat, args.saturn_code)
    print(f"\n{build['what']}: {build['seconds']:.3f} s (median of {args.repeat})")
    result = {"machine": {"python": platform.python_version(), "cpu_count": __import__("os").cpu_count(),
                          "platform": platform.platform()},
              "rates": rows, "saturn_2_6k_build": build}
    if ref is not None:
        result["saturn_code_build"] = ref
        print(f"{ref['what']}: {ref['seconds']:.3f} s (median of {args.repeat}, alternating with ours)  ->  "
              f"solvergym is {ref['ratio_to_solvergym']:.1f}x faster")
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "sat_generation.json").write_text(json.dumps(result, indent=2) + "\n")
    print(f"\nwrote {args.out / 'sat_generation.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
