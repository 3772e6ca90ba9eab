"""What the problem contract costs: env reset, reset + oracle episode and step verification per
registered id, and the DRUP proof checks a GRPO group of SAT-Bench UNSAT instances pays, in this
tree and (``--baseline REV``) in an older commit, measured in the same run.

    python benchmarks/contract.py --baseline a82406e

Both sides run the same measurement in a fresh interpreter (the old one from a ``git worktree``
of REV), in alternating order over ``--rounds`` rounds; each time is the best round's mean per episode.
On a shared (virtual) machine two runs of the same code differ by 10-30%, so each case also
counts ``env_calls``: the Python function calls inside ``env.reset`` and ``env.step`` per oracle
episode (cProfile, 3 episodes), the same in every run; solver time (Z3, the sandbox child) is in
the times only. Prints a table and writes ``benchmarks/results/contract.json``.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: (id, kwargs, episodes per round: None = --seeds); the large sizes weigh generation (reset) and
#: step verification (a 5x5 Zebra gold trace has about 25 steps)
CASES = [("SolverSAT-v0", {}, None), ("SolverSAT-v0", {"n": 5, "k": 12, "l": 60}, None),
         ("SolverSATBench-v0", {}, None), ("SolverSATBench-v0", {"dims": [4, 3, 3], "num_clauses": 40}, None),
         ("SolverTool-v0", {"solver": "z3"}, None),
         ("SolverZebra-v0", {}, None), ("SolverZebra-v0", {"mode": "step"}, None),
         ("SolverZebra-v0", {"n_houses": 5, "n_attributes": 5}, 6),
         ("SolverZebra-v0", {"n_houses": 5, "n_attributes": 5, "mode": "step"}, 6),
         ("SolverKnights-v0", {}, None), ("SolverKnights-v0", {"n_people": 7, "depth": 3}, 10),
         ("SolverLSAT-v0", {}, None), ("SolverLSAT-v0", {"mode": "step"}, None)]

# The measurement, run as a script by both sides: it may only use what both versions have.
_MEASURE = r'''
import cProfile, json, pstats, sys, time
import gymnasium as gym
import solvergym
try:
    from solvergym.agents.scripted import oracle_action
except ImportError:
    oracle_action = None

def act(env, obs):
    u = env.unwrapped
    return oracle_action(u, obs) if oracle_action is not None else u.oracle_action()

cases, default_seeds = json.loads(sys.argv[1]), int(sys.argv[2])
out = {}
for env_id, kw, seeds in cases:
    seeds = seeds or default_seeds
    env = gym.make(env_id, **kw).unwrapped
    env.reset(seed=10_000)  # warm: imports, solver start-up
    t0 = time.perf_counter()
    for s in range(seeds):
        env.reset(seed=s)
    t_reset = (time.perf_counter() - t0) / seeds
    t0 = time.perf_counter()
    t_step = 0.0
    for s in range(seeds):
        obs, _ = env.reset(seed=s)
        done = False
        while not done:
            a = act(env, obs)
            t1 = time.perf_counter()
            obs, r, term, trunc, info = env.step(a)
            t_step += time.perf_counter() - t1
            done = term or trunc
    t_episode = (time.perf_counter() - t0) / seeds
    # the work itself, free of the machine's noise: Python calls inside env.reset and env.step
    prof = cProfile.Profile()
    for s in range(3):
        prof.enable()
        obs, _ = env.reset(seed=s)
        prof.disable()
        done = False
        while not done:
            a = act(env, obs)
            prof.enable()
            obs, r, term, trunc, info = env.step(a)
            prof.disable()
            done = term or trunc
    n_calls = sum(v[1] for v in pstats.Stats(prof).stats.values()) / 3
    out[env_id + (" " + json.dumps(kw, sort_keys=True) if kw else "")] = {
        "reset_ms": 1e3 * t_reset, "episode_ms": 1e3 * t_episode, "step_ms": 1e3 * t_step / seeds,
        "env_calls": n_calls}
    env.close()

# DRUP checks of one GRPO group of 8 on UNSAT SAT-Bench instances (leader + 7 followers)
import importlib, pkgutil
import solvergym.envs.sat as satpkg
calls = []
for m in pkgutil.iter_modules(satpkg.__path__):
    mod = importlib.import_module("solvergym.envs.sat." + m.name)
    real = getattr(mod, "check_drup", None)
    if callable(real):
        def counted(clauses, proof, _real=real):
            calls.append(1)
            return _real(clauses, proof)
        setattr(mod, "check_drup", counted)
for env_id, kw in (("SolverSATBench-v0", {"sat_ratio": 0.0}), ("SolverTool-v0", {"sat_ratio": 0.0})):
    envs = [gym.make(env_id, **kw).unwrapped for _ in range(8)]
    envs[0].reset(seed=0)
    leader = envs[0].instance
    before = len(calls)
    for e in envs[1:]:
        e.reset(seed=0, options={"instance": leader})
    out[env_id + " group of 8, UNSAT: DRUP checks"] = {"drup_checks": len(calls) - before}
    for e in envs:
        e.close()
print(json.dumps(out))
'''


def _run(pythonpath: str | None, seeds: int) -> dict:
    env = dict(os.environ)
    if pythonpath is not None:
        env["PYTHONPATH"] = pythonpath
    with tempfile.TemporaryDirectory() as cwd:  # not the repository: the package comes from the path
        out = subprocess.run([sys.executable, "-c", _MEASURE, json.dumps(CASES), str(seeds)], cwd=cwd, env=env,
                             capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def _baseline_path(rev: str) -> str:
    base = Path(tempfile.gettempdir()) / f"sg-contract-{rev}"
    if not base.exists():
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(base / "solvergym"), rev],
                       check=True, capture_output=True)
    return str(base)


def _best(runs: list[dict]) -> dict:
    best: dict = {}
    for run in runs:
        for case, vals in run.items():
            cur = best.setdefault(case, dict(vals))
            for k, v in vals.items():
                cur[k] = min(cur[k], v)
    return best


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--baseline", metavar="REV", help="also measure this git revision")
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--seeds", type=int, default=30, help="episodes per case per round")
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "contract.json"))
    args = ap.parse_args(argv)
    old_path = _baseline_path(args.baseline) if args.baseline else None
    new_runs, old_runs = [], []
    for r in range(args.rounds):
        order = [("new", None), ("old", old_path)] if r % 2 == 0 else [("old", old_path), ("new", None)]
        for side, path in order:
            if side == "old" and old_path is None:
                continue
            (new_runs if side == "new" else old_runs).append(_run(path, args.seeds))
            print(f"round {r + 1}/{args.rounds}: {side} done", file=sys.stderr)
    new = _best(new_runs)
    old = _best(old_runs) if old_runs else {}
    rows = []
    for case, vals in new.items():
        for key, v in vals.items():
            o = old.get(case, {}).get(key)
            rows.append({"case": case, "what": key, "new": v, "old": o,
                         "ratio": (v / o) if o else None})
    w = max(len(r["case"]) for r in rows)
    head = f"{'case':<{w}}  {'what':<12}  {'this tree':>10}  {str(args.baseline or '-'):>10}  {'new/old':>7}"
    print(head + "\n" + "-" * len(head))
    for r in rows:
        fmt = (lambda x: "-" if x is None else (f"{x:.0f}" if r["what"] in ("drup_checks", "env_calls") else f"{x:.3f}"))
        ratio = "-" if r["ratio"] is None else f"{r['ratio']:.2f}x"
        print(f"{r['case']:<{w}}  {r['what']:<12}  {fmt(r['new']):>10}  {fmt(r['old']):>10}  {ratio:>7}")
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps({"baseline": args.baseline, "rounds": args.rounds, "seeds": args.seeds,
                                          "machine": platform.platform(), "cpus": os.cpu_count(),
                                          "time": time.strftime("%Y-%m-%d %H:%M:%S"), "rows": rows}, indent=1) + "\n")
    print(f"\nwrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
