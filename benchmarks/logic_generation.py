"""Generation rates of the step-verified logic families, and env throughput, in one run.

    python benchmarks/logic_generation.py [--repeat 2] [--quick] [--out benchmarks/results]

- Zebra: unique-solution, minimal puzzles per second for every size of Spring Table 5 and per
  bucket (Small / Medium / Large / X-Large); target >= 20 puzzles/s at 6x6. reasoning-gym's
  ``zebra_puzzles`` makes about 0.6 puzzles/s at 6x6 on a comparable 2-core machine
  (``references/env-suites.md``); when ``reasoning_gym`` is importable it is measured here too.
- Knights & Knaves: puzzles per second for 2-8 characters at depth 2 and 3; target >= 2,000/s at
  4 characters (reasoning-gym's ``knights_knaves``: about 613/s at 4 people, same reference).
- AR-LSAT-style: games with a question per second, per game type.
- Envs: reset + oracle answer + full verification per second (trace mode).

Rates are best-of-``repeat`` over a fixed list of seeds. Prints a table and writes
``logic_generation.json``.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path

try:
    import solvergym  # noqa: F401
except ImportError:  # run from a checkout without installing: the root is the package
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from solvergym.agents.scripted import oracle_action
from solvergym.evaluation.tables import format_table
from solvergym.envs.knights.generator import generate_knights
from solvergym.envs.lsat.generator import GAMES, generate_lsat
from solvergym.envs.zebra.generator import BUCKETS, SIZES, generate_zebra

REFERENCE = {"reasoning-gym zebra 6x6 (references/env-suites.md)": 0.6,
             "reasoning-gym knights_knaves 4 people (references/env-suites.md)": 613.0}


def rate(fn, count: int, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return count / best


def zebra_rows(repeat: int, quick: bool) -> list[dict]:
    rows = []
    per_size = {}
    for n, m in SIZES:
        count = 10 if quick else (60 if n * m <= 16 else 30)
        r = rate(lambda: [generate_zebra(n, m, s) for s in range(count)], count, repeat)
        clues = sum(len(generate_zebra(n, m, s).clues) for s in range(min(count, 10))) / min(count, 10)
        per_size[(n, m)] = r
        rows.append({"what": f"zebra {n}x{m}", "per_s": r, "note": f"{clues:.1f} clues"})
    for bucket, sizes in BUCKETS.items():
        # a bucket draws its sizes uniformly: its rate is the harmonic mean of the size rates
        r = len(sizes) / sum(1 / per_size[s] for s in sizes)
        rows.append({"what": f"zebra bucket {bucket}", "per_s": r, "note": ", ".join(f"{a}x{b}" for a, b in sizes)})
    return rows


def knights_rows(repeat: int, quick: bool) -> list[dict]:
    rows = []
    for depth in (2, 3):
        for n in range(2, 9):
            count = 200 if quick else 1000
            r = rate(lambda: [generate_knights(n, s, depth=depth) for s in range(count)], count, repeat)
            rows.append({"what": f"knights n={n} depth={depth}", "per_s": r, "note": ""})
    return rows


def lsat_rows(repeat: int, quick: bool) -> list[dict]:
    rows = []
    for game in GAMES:
        count = 20 if quick else 100
        r = rate(lambda: [generate_lsat(s, game=game) for s in range(count)], count, repeat)
        rows.append({"what": f"lsat {game}", "per_s": r, "note": "4 question types"})
    return rows


def env_rows(repeat: int, quick: bool) -> list[dict]:
    import gymnasium as gym

    entry = {"SolverZebra-v0": "solvergym.envs.zebra.env:ZebraEnv",
             "SolverKnights-v0": "solvergym.envs.knights.env:KnightsEnv",
             "SolverLSAT-v0": "solvergym.envs.lsat.env:LSATEnv"}
    rows = []
    for env_id, ep in entry.items():
        if env_id not in gym.registry:
            gym.register(id=env_id, entry_point=ep)
        env = gym.make(env_id).unwrapped
        count = 10 if quick else 40

        def episodes():
            for s in range(count):
                env.reset(seed=s)
                env.step(oracle_action(env))
        rows.append({"what": f"{env_id} reset + oracle trace + verify", "per_s": rate(episodes, count, repeat),
                     "note": "default difficulty"})
    return rows


def reasoning_gym_rows(repeat: int) -> list[dict]:
    try:
        import reasoning_gym as rg
    except ImportError:
        return []
    rows = []
    for name, kw, label in [("zebra_puzzles", {"num_people": 6, "num_characteristics": 6}, "6x6"),
                            ("knights_knaves", {"n_people": 4}, "4 people")]:
        count = 5 if name == "zebra_puzzles" else 200
        r = rate(lambda: list(rg.create_dataset(name, size=count, seed=0, **kw)), count, 1)
        rows.append({"what": f"reasoning-gym {name} {label} (measured)", "per_s": r, "note": ""})
    return rows


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeat", type=int, default=2)
    p.add_argument("--quick", action="store_true", help="fewer instances per measure")
    p.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "results")
    args = p.parse_args(argv)
    rows = (zebra_rows(args.repeat, args.quick) + knights_rows(args.repeat, args.quick)
            + lsat_rows(args.repeat, args.quick) + env_rows(args.repeat, args.quick) + reasoning_gym_rows(args.repeat))
    rows += [{"what": k + " [reference, not measured here]", "per_s": v, "note": ""} for k, v in REFERENCE.items()]
    print(format_table(rows, [("what", "measure", "s"), ("per_s", "per second", ",.1f"), ("note", "", "s")]))
    z66 = next(r["per_s"] for r in rows if r["what"] == "zebra 6x6")
    k4 = next(r["per_s"] for r in rows if r["what"] == "knights n=4 depth=2")
    print(f"\nzebra 6x6: {z66:.1f}/s (target >= 20; {z66 / 0.6:.0f}x the reference 0.6/s); "
          f"knights 4 people: {k4:,.0f}/s (target >= 2,000); load average {os.getloadavg()[0]:.1f} "
          f"on {os.cpu_count()} cores")
    result = {"machine": {"python": platform.python_version(), "cpu_count": os.cpu_count(),
                          "platform": platform.platform(), "load_avg": os.getloadavg()},
              "repeat": args.repeat, "quick": args.quick, "rows": rows,
              "targets": {"zebra_6x6_per_s": 20.0, "knights_4_per_s": 2000.0}}
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "logic_generation.json").write_text(json.dumps(result, indent=2) + "\n")
    print(f"\nwrote {args.out / 'logic_generation.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
