"""Step-verification latency (Spring Definitions 2-5) by puzzle size: one incremental Z3 solver per
trace (guard literals, ``check(*assumptions)``) vs a fresh solver for every check, in one run.

    python benchmarks/step_verify.py [--puzzles 4] [--steps 24] [--out benchmarks/results]

Each trace is the puzzle's gold steps mixed with random cell facts (true and false) and random
relations, so every verdict occurs (novel, redundant, restated premise, unsupported,
contradictory). Both modes verify the same steps, give the same verdicts (checked here), and are
timed per step (the ``add_step`` call: parse, compile, all solver checks), in wall-clock and in
CPU seconds of this process (the latter is steadier on a shared machine). The premises' set-up
(§4.2 satisfiability and uniqueness, equivalence to the true clues) is reported separately.
Prints a table and writes ``step_verify.json``. Targets: <= 5 ms per step on a 5x5 Zebra and
>= 5x faster than rebuilding.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path

import numpy as np

try:
    import solvergym  # noqa: F401
except ImportError:  # run from a checkout without installing: the root is the package
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from solvergym.benchmarks.evaluate import format_table
from solvergym.envs.knights.generator import generate_knights
from solvergym.envs.knights.verify import KNIGHTS
from solvergym.envs.logic_steps.env import gold_steps
from solvergym.envs.logic_steps.reward import get_preset
from solvergym.envs.logic_steps.trace import TraceSession
from solvergym.envs.lsat.generator import generate_lsat
from solvergym.envs.lsat.verify import LSAT
from solvergym.envs.zebra.generator import generate_zebra
from solvergym.envs.zebra.verify import ZEBRA


def zebra_case(n, m, seed):
    inst = generate_zebra(n, m, seed)
    tokens = [t for vs in inst.values for t in vs]
    rng = np.random.default_rng(seed)

    def noise():
        r = rng.random()
        a, b = rng.choice(tokens, 2, replace=False)
        if r < 0.5:
            return f"{a} == {rng.integers(1, n + 1)}"
        if r < 0.75:
            return f"{a} < {b}"
        return f"Or({a} == {b}, {a} + 1 == {b})"
    return f"zebra {n}x{m}", ZEBRA, inst, noise


def knights_case(n, seed):
    inst = generate_knights(n, seed, depth=3)
    rng = np.random.default_rng(seed)

    def noise():
        a, b = rng.choice(inst.names, 2, replace=False)
        r = rng.random()
        if r < 0.5:
            return f"{'Knight' if rng.random() < 0.5 else 'Knave'}({a})"
        return f"Implies(Knight({a}), Knave({b}))"
    return f"knights n={n}", KNIGHTS, inst, noise


def lsat_case(game, seed):
    inst = generate_lsat(seed, game=game, question_type="could_be_true")
    rng = np.random.default_rng(seed)
    ents, groups = inst.entities, inst.groups

    def noise():
        a, b = rng.choice(ents, 2, replace=False)
        if game == "ordering":
            return f"{a} < {b}" if rng.random() < 0.5 else f"{a} == {rng.integers(1, len(ents) + 1)}"
        g = rng.choice(groups)
        return f"Assign({a}, {g})" if rng.random() < 0.5 else f"Implies(Assign({a}, {g}), Assign({b}, {g}))"
    return f"lsat {game}", LSAT, inst, noise


def steps_for(family, inst, noise, total, seed):
    gold = [f for _, f in gold_steps(family, inst)]
    rng = np.random.default_rng(seed + 1)
    out = []
    while len(out) < total:
        out.append(gold.pop(0) if gold and rng.random() < 0.5 else noise())
    return out


def run(family, inst, steps, incremental):
    t0 = time.perf_counter()
    s = TraceSession(family, inst, get_preset("spring"), incremental=incremental)
    s.set_premises(family.gold_answer(inst))
    setup = time.perf_counter() - t0
    times, cpu, labels = [], [], []
    for k, f in enumerate(steps, 1):
        t, c = time.perf_counter(), time.process_time()
        v = s.add_step("", k, f)
        times.append(time.perf_counter() - t)
        cpu.append(time.process_time() - c)
        labels.append(v.label)
    return setup, times, cpu, labels, s.verifier.checks


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--puzzles", type=int, default=4, help="puzzles per size")
    p.add_argument("--steps", type=int, default=24, help="formal steps per trace")
    p.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "results")
    args = p.parse_args(argv)

    makers = ([lambda s, n=n, m=m: zebra_case(n, m, s) for n, m in [(3, 3), (4, 4), (5, 5), (6, 6)]]
              + [lambda s, n=n: knights_case(n, s) for n in (4, 8)]
              + [lambda s, g=g: lsat_case(g, s) for g in ("ordering", "grouping", "assignment")])
    rows = []
    _, family, inst, noise = makers[2](99)  # warm-up: imports, Z3 start-up, numpy
    run(family, inst, steps_for(family, inst, noise, 8, 99), True)
    for make in makers:
        inc_t, reb_t, inc_setup, reb_setup, checks, nsteps = [], [], [], [], 0, 0
        inc_c, reb_c = [], []
        label_counts: dict[str, int] = {}
        name = None
        for seed in range(args.puzzles):
            name, family, inst, noise = make(seed)
            steps = steps_for(family, inst, noise, args.steps, seed)
            s1, t1, cpu1, l1, c1 = run(family, inst, steps, True)
            s2, t2, cpu2, l2, _ = run(family, inst, steps, False)
            assert l1 == l2, f"{name}: incremental and rebuild verdicts differ"
            inc_t += t1
            reb_t += t2
            inc_c += cpu1
            reb_c += cpu2
            inc_setup.append(s1)
            reb_setup.append(s2)
            checks += c1
            nsteps += len(steps)
            for lab in l1:
                label_counts[lab] = label_counts.get(lab, 0) + 1
        inc_ms = 1000 * statistics.mean(inc_t)
        reb_ms = 1000 * statistics.mean(reb_t)
        rows.append({
            "case": name, "steps": nsteps,
            "incremental_ms_per_step": inc_ms,
            "incremental_p95_ms": 1000 * float(np.percentile(inc_t, 95)),
            "rebuild_ms_per_step": reb_ms,
            "speedup": reb_ms / inc_ms,
            "incremental_cpu_ms_per_step": 1000 * statistics.mean(inc_c),
            "rebuild_cpu_ms_per_step": 1000 * statistics.mean(reb_c),
            "speedup_cpu": statistics.mean(reb_c) / max(statistics.mean(inc_c), 1e-9),
            "setup_ms_incremental": 1000 * statistics.mean(inc_setup),
            "setup_ms_rebuild": 1000 * statistics.mean(reb_setup),
            "solver_calls_per_step": checks / nsteps,
            "labels": label_counts,
        })
        print(f"  {name}: {inc_ms:.2f} ms/step incremental, {reb_ms:.2f} ms/step rebuild", file=sys.stderr)
    print(format_table([{**r, "speedup_x": f"{r['speedup']:.1f}x"} for r in rows], [
        ("case", "case", "s"), ("steps", "steps", "d"),
        ("incremental_ms_per_step", "incremental ms/step", ".2f"), ("incremental_p95_ms", "p95 ms", ".2f"),
        ("rebuild_ms_per_step", "rebuild ms/step", ".2f"), ("speedup_x", "speed-up", "s"),
        ("incremental_cpu_ms_per_step", "incr. CPU ms", ".2f"), ("rebuild_cpu_ms_per_step", "rebuild CPU ms", ".2f"),
        ("setup_ms_incremental", "premise set-up ms", ".1f"), ("solver_calls_per_step", "calls/step", ".1f"),
    ]))
    z55 = next(r for r in rows if r["case"] == "zebra 5x5")
    print(f"\n5x5 Zebra: {z55['incremental_ms_per_step']:.2f} ms/step wall, "
          f"{z55['incremental_cpu_ms_per_step']:.2f} ms CPU (target <= 5); {z55['speedup']:.1f}x faster than "
          f"rebuilding (target >= 5x); load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    result = {"machine": {"python": platform.python_version(), "cpu_count": os.cpu_count(),
                          "platform": platform.platform(), "load_avg": os.getloadavg()},
              "puzzles_per_case": args.puzzles, "steps_per_trace": args.steps, "rows": rows,
              "targets": {"zebra_5x5_ms_per_step": 5.0, "speedup": 5.0}}
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "step_verify.json").write_text(json.dumps(result, indent=2) + "\n")
    print(f"\nwrote {args.out / 'step_verify.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
