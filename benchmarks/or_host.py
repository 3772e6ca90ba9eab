"""What SolverOR-v0's host pays per answer beside the sandbox: reading the exported model,
reducing it and re-solving it (issue 23: the reward trusts nothing the program's process
reported, SIRL §3.3's accuracy is judged on the host's own solve).

    python benchmarks/or_host.py                 # 20 instances per family at the default size
    python benchmarks/or_host.py --seeds 5       # quicker
    python benchmarks/or_modelling.py --parts host   # the same table inside the OR benchmark

For every family of ``envs/opt/generator.FAMILIES`` at ``generate``'s default size, seeds
``0..N-1``: the oracle program (``programs.oracle_program``, gurobipy, SIRL's library) runs
once in a warm ``SandboxPool`` as ``SolverOR-v0`` runs it, and ``ORProblem.score_run`` judges
the result; the host's share is what ``info["host"]`` records (``audit_s``: reading and reducing
the MPS, ``resolve_s``: the re-solve), the sandbox's is the result's ``duration_s``. Reported per
family: median and p95 of host ms and of sandbox ms, the ratio of the medians, and how many
answers the host judged correct (every one should be: the oracle's reward is the golden file's).
Target: host <= 20 ms median per family (printed as met or MISSED, never asserted). Writes
``benchmarks/results/or_host.json``.
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np
from tqdm import tqdm

try:
    import solvergym  # noqa: F401
except ImportError:  # run from a checkout without installing: the root is the package
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from solvergym.evaluation.tables import format_table
from solvergym.envs.opt.generator import FAMILIES, generate
from solvergym.envs.opt.problem import ORProblem
from solvergym.envs.opt.programs import oracle_program
from solvergym.envs.opt.tool import OR_SOLVERS
from solvergym.sandbox import SandboxPool

TARGET_HOST_MS = 20.0
COLUMNS = [("family", "family", "s"), ("answers", "answers", "d"), ("correct", "judged correct", "d"),
           ("host_median_ms", "host median ms", ".1f"), ("host_p95_ms", "host p95 ms", ".1f"),
           ("audit_median_ms", "read+reduce ms", ".1f"), ("resolve_median_ms", "re-solve ms", ".1f"),
           ("sandbox_median_ms", "sandbox median ms", ".1f"), ("host_share", "host/sandbox", ".2f"),
           ("target", f"host <= {TARGET_HOST_MS:.0f} ms", "s")]


def _p95(xs: list[float]) -> float:
    return float(np.percentile(xs, 95)) if xs else float("nan")


def bench_host(pool: SandboxPool, seeds: int, progress: bool = True) -> list[dict]:
    """One row per family (see the module docstring)."""
    problem = ORProblem(pool=pool)
    rows = []
    try:
        for family in tqdm(FAMILIES, desc="host re-solve", disable=not progress):
            host, audit, resolve, sandbox, correct = [], [], [], [], 0
            for seed in range(seeds):
                inst = generate(family, np.random.default_rng(seed))
                program = oracle_program(inst.model, "gurobipy")
                text = f"<think>t</think>\n<model>m</model>\n<python>\n{program}\n</python>"
                result = pool.run(program, problem.limits, rehearse=OR_SOLVERS)
                verdict = problem.score_run(inst, text, result)
                h = verdict.info.get("host") or {}
                if "audit_s" not in h:
                    continue
                audit.append(1e3 * h["audit_s"])
                resolve.append(1e3 * h["resolve_s"])
                host.append(audit[-1] + resolve[-1])
                sandbox.append(1e3 * result.duration_s)
                correct += bool(verdict.correct)
            med = statistics.median(host) if host else float("nan")
            rows.append({"family": family, "answers": len(host), "correct": correct, "host_median_ms": med,
                         "host_p95_ms": _p95(host),
                         "audit_median_ms": statistics.median(audit) if audit else float("nan"),
                         "resolve_median_ms": statistics.median(resolve) if resolve else float("nan"),
                         "sandbox_median_ms": statistics.median(sandbox) if sandbox else float("nan"),
                         "host_share": med / statistics.median(sandbox) if sandbox else float("nan"),
                         "target": "met" if med <= TARGET_HOST_MS else "MISSED"})
    finally:
        problem.lease.close()
    return rows


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--seeds", type=int, default=20, help="instances per family (default 20)")
    p.add_argument("--no-progress", action="store_true", help="no tqdm bars")
    p.add_argument("--out", default=str(Path(__file__).resolve().parent / "results"))
    args = p.parse_args(argv)
    t = time.perf_counter()
    with SandboxPool() as pool:
        rows = bench_host(pool, args.seeds, not args.no_progress)
    print(f"\nhost cost per oracle answer (gurobipy), {args.seeds} instances per family at the default size")
    print(format_table(rows, COLUMNS))
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "or_host.json").write_text(json.dumps({"benchmark": "or_host", "args": vars(args), "rows": rows,
                                                  "target_host_ms": TARGET_HOST_MS,
                                                  "seconds": time.perf_counter() - t}, indent=2) + "\n")
    print(f"wrote {out / 'or_host.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
