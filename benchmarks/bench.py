"""``make bench``: every speed benchmark at its quick size, then one table of each target and
whether it holds.

    python benchmarks/bench.py [--out DIR] [--only sandbox,adapters] [--full]

Each benchmark runs as its own script (``benchmarks/<name>.py``, a fresh interpreter, its quick
arguments below; ``--full`` drops them for the scripts' own defaults, minutes to an hour) and
writes its JSON to ``--out``; this reads the JSON back and prints the targets of issue 28's table
(and the benchmarks' own) beside what was measured. Quick sizes are smoke runs: a ratio measured
on 8 programs or one training step says the target's direction, not its settled value (the
README's figures come from the full runs). A benchmark that fails is a row saying so, and the
exit status is 1; a target that is missed is not an error (the table says so).
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

HERE = Path(__file__).resolve().parent
try:
    import solvergym  # noqa: F401
except ImportError:  # run from a checkout without installing: the root is the package
    sys.path.insert(0, str(HERE.parents[1]))
from solvergym.evaluation.tables import format_table

Row = dict[str, Any]


def _row(bench: str, measure: str, value: float | None, spec: str, target: str, holds: bool | None) -> Row:
    return {"benchmark": bench, "measure": measure, "value": "-" if value is None else format(value, spec),
            "target": target, "holds": "-" if holds is None or value is None else ("yes" if holds else "NO")}


def _sandbox(d: dict) -> list[Row]:
    lat = {r["solver"]: r for r in d["latency"]}
    out = []
    triv = lat.get("trivial")
    if triv:
        out.append(_row("sandbox", "trivial program, median ms", triv["sandbox_median_ms"], ".1f", "<= 5 ms",
                        triv["sandbox_median_ms"] <= 5.0))
    z3 = lat["z3"]
    out.append(_row("sandbox", "small z3 program, median ms", z3["sandbox_median_ms"], ".1f", "<= 5 ms",
                    z3["sandbox_median_ms"] <= 5.0))
    out.append(_row("sandbox", "small z3 program vs fresh python -c", z3["speedup"], ".1f", ">= 15x",
                    z3["speedup"] >= 15.0))
    reh = z3.get("rehearsed_median_ms")
    if reh is not None:  # as SolverTool-v0 runs it: the probe's pages copied ahead
        out.append(_row("sandbox", "small z3 program rehearsed, median ms", reh, ".1f", "<= 5 ms", reh <= 5.0))
        out.append(_row("sandbox", "small z3 program rehearsed vs fresh python -c", z3["fresh_median_ms"] / reh,
                        ".1f", ">= 15x", z3["fresh_median_ms"] / reh >= 15.0))
    tp = d["throughput"]
    out.append(_row("sandbox", f"trivial programs/s, {tp['servers']} servers", tp["programs_per_s"], ",.0f",
                    ">= 500/s", tp["programs_per_s"] >= 500.0))
    batch = d.get("batch")
    if batch:
        out.append(_row("sandbox", f"run_many of {batch['programs']} mixed programs vs one by one",
                        batch["speedup"], ".2f", f">= {0.8 * batch['servers']:.1f}x (0.8 x servers), same results",
                        batch["same_results"] and batch["speedup"] >= 0.8 * batch["servers"]))
    if d.get("ray"):
        r = d["ray"]["ratio"]["programs_per_s"]
        out.append(_row("sandbox", "Ray executor throughput / local", r, ".2f", "reported", None))
    return out


def _sat_generation(d: dict) -> list[Row]:
    build = d["saturn_2_6k_build"]["seconds"]
    ref = d.get("saturn_code_build")
    out = [_row("sat_generation", "SATURN-2.6k build, s", build, ".2f", "reported", None)]
    out.append(_row("sat_generation", "SATURN-2.6k build vs Saturn-code's scripts",
                    ref["ratio_to_solvergym"] if ref else None, ".1f", ">= 10x (needs --saturn-code)",
                    ref is not None and ref["ratio_to_solvergym"] >= 10.0))
    rates = {r["what"]: r["per_s"] for r in d["rates"]}
    out.append(_row("sat_generation", "SolverSAT-v0 reset+step /s", rates.get("SolverSAT-v0 reset+step"), ",.0f",
                    "reported", None))
    return out


def _logic_generation(d: dict) -> list[Row]:
    rates = {r["what"]: r["per_s"] for r in d["rows"]}

    def peer(name: str) -> float | None:
        measured = next((v for k, v in rates.items() if k.startswith(f"reasoning-gym {name}") and "(measured)" in k), None)
        return measured if measured is not None else next((v for k, v in rates.items() if name in k), None)
    out = []
    for ours, name, target in (("knights n=4 depth=2", "knights_knaves", 20.0), ("zebra 6x6", "zebra", 100.0)):
        theirs = peer(name)
        ratio = rates[ours] / theirs if theirs else None
        out.append(_row("logic_generation", f"{ours} vs reasoning-gym", ratio, ",.0f", f">= {target:.0f}x",
                        ratio is not None and ratio >= target))
    return out


def _logic_suite(d: dict) -> list[Row]:
    peers = d.get("peers") or []
    if not peers:
        return [_row("logic_suite", "vs reasoning-gym (not installed)", None, "", ">= 10x", None)]
    return [_row("logic_suite", f"{p['family']} ({p['setting']}) vs {p['peer']}", p["ratio"], ".1f", ">= 10x",
                 p["ratio"] >= 10.0) for p in peers]


def _adapters(d: dict) -> list[Row]:
    out = []
    for r in d["rows"]:
        worst = max(r["trl_overhead"], r["verl_overhead"])
        out.append(_row("adapters", f"{r['env']}: the costlier adapter's overhead, %", 100 * worst, "+.1f",
                        "< 10%", worst < 0.10))
    return out


def _step_verify(d: dict) -> list[Row]:
    rows = {r["case"]: r for r in d["rows"] if "incremental_ms_per_step" in r}
    z = rows.get("zebra 6x6")
    return [_row("step_verify", "Zebra 6x6 step verification, ms/step", z and z["incremental_ms_per_step"], ".2f",
                 "<= 1 ms", z is not None and z["incremental_ms_per_step"] <= 1.0)]


def _train_speed(d: dict) -> list[Row]:
    out = []
    for r in d["rows"]:
        gc = r.get("ratio_vs_trl_gc")
        out.append(_row("train_speed", f"{r['preset']} iteration / TRL's (GC), quick workload", gc, ".2f",
                        "<= 0.3x", gc is not None and gc <= 0.3))
        mem = (r["ours_peak_gib"] / r["trl_gc_peak_gib"]) if r.get("ours_peak_gib") and r.get("trl_gc_peak_gib") else None
        out.append(_row("train_speed", f"{r['preset']} peak memory / TRL's (GC)", mem, ".2f", "<= 0.6x",
                        mem is not None and mem <= 0.6))
    return out


def _env_share(d: dict) -> list[Row]:
    return [_row("env_share", f"SolverTool-v0 env steps, serial / {d['threads']} threads ({d['episodes']} episodes)",
                 d["speedup"], ".2f", ">= 3x", d["speedup"] >= 3.0)]


def _eval_throughput(d: dict) -> list[Row]:
    r = d["eval_over_single"]
    return [_row("eval_throughput", "eval episodes/s vs one act() per episode", r, ".1f",
                 f">= {d['target']:.0f}x", r >= d["target"])]


@dataclass(frozen=True)
class Bench:
    name: str
    quick: tuple[str, ...]
    summarise: Callable[[dict], list[Row]]
    json_name: str = ""


BENCHMARKS = (
    Bench("sandbox", ("--quick",), _sandbox),
    Bench("sat_generation", ("--quick",), _sat_generation),
    Bench("logic_generation", ("--quick", "--repeat", "1"), _logic_generation),
    Bench("logic_suite", ("--quick", "--agreement-seeds", "0", "--repeat", "1"), _logic_suite),
    Bench("adapters", ("--quick", "--no-ray"), _adapters),
    Bench("step_verify", ("--puzzles", "1", "--steps", "8", "--skip-worst", "--novelty-seeds", "1",
                          "--headroom-seeds", "1"), _step_verify),
    Bench("eval_throughput", ("--quick",), _eval_throughput),
    Bench("train_speed", ("--quick",), _train_speed),
    Bench("env_share", ("--rounds", "2"), _env_share),
)


def run(bench: Bench, out: Path, full: bool) -> tuple[list[Row], float]:
    t = time.perf_counter()
    args = [sys.executable, str(HERE / f"{bench.name}.py"), *(() if full else bench.quick), "--out", str(out)]
    proc = subprocess.run(args, capture_output=True, text=True, cwd=HERE.parent)
    seconds = time.perf_counter() - t
    path = out / f"{bench.json_name or bench.name}.json"
    if proc.returncode != 0 or not path.exists():
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["no output"]
        return [{"benchmark": bench.name, "measure": f"FAILED (rc {proc.returncode}): {tail[0][:120]}",
                 "value": "-", "target": "-", "holds": "-"}], seconds
    return bench.summarise(json.loads(path.read_text())), seconds


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", type=Path, default=HERE / "results", help="where each benchmark's JSON goes")
    p.add_argument("--only", default=None, help="comma-separated benchmark names (default: all of "
                   + ", ".join(b.name for b in BENCHMARKS) + ")")
    p.add_argument("--full", action="store_true", help="the scripts' own sizes instead of the quick ones")
    p.add_argument("--quick", action="store_true", help="the quick sizes (the default; kept for make bench's "
                   "BENCH_ARGS)")
    a = p.parse_args(argv)
    names = [n.strip() for n in a.only.split(",")] if a.only else [b.name for b in BENCHMARKS]
    unknown = sorted(set(names) - {b.name for b in BENCHMARKS})
    if unknown:
        p.error(f"unknown benchmark(s) {unknown}; the choices are {[b.name for b in BENCHMARKS]}")
    a.out.mkdir(parents=True, exist_ok=True)
    rows, seconds, failed = [], {}, False
    for bench in (b for b in BENCHMARKS if b.name in names):
        print(f"running benchmarks/{bench.name}.py ...", flush=True)
        got, seconds[bench.name] = run(bench, a.out, a.full)
        failed |= any(r["measure"].startswith("FAILED") for r in got)
        rows += got
    print()
    print(format_table(rows, [("benchmark", "benchmark", "s"), ("measure", "measure", "s"), ("value", "value", "s"),
                              ("target", "target", "s"), ("holds", "holds", "s")]))
    held = sum(r["holds"] == "yes" for r in rows)
    judged = sum(r["holds"] in ("yes", "NO") for r in rows)
    print(f"\n{held} of {judged} targets hold ({'full' if a.full else 'quick'} sizes; "
          + ", ".join(f"{k} {v:.0f} s" for k, v in seconds.items()) + ")")
    (a.out / "bench_summary.json").write_text(json.dumps({"full": a.full, "rows": rows, "seconds": seconds},
                                                         indent=2) + "\n")
    print(f"wrote {a.out / 'bench_summary.json'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
