"""What an adapter costs over the env: completions scored per second through TRL's reward
function and verl's ``compute_score`` against the env's own ``reset(options) + step``.

    python benchmarks/adapters.py [--count 200] [--repeat 3] [--quick] [--out benchmarks/results]

Same completions, same run, same process: for each env, ``count`` rows (:func:`~solvergym.adapters.scoring.task_rows`)
and for each the oracle's answer, scored (1) by the env directly (the instance posed from its
dict, as an adapter poses it), (2) by ``reward_fn`` in one batched call, as TRL calls it, (3) by
``compute_score`` row by row, as verl's reward loop calls it. Best of ``repeat`` rounds, the
three taking turns within each round. The overhead is
``env rate / adapter rate - 1`` (target: under 10%). Prints the table and writes ``adapters.json``.

Where Ray is installed, a sandboxed env (SolverOR-v0, HiGHS: every completion runs its program)
is also scored through ``reward_fn`` with its programs on the local pool and on the Ray executor
(a local Ray cluster of one CPU per core), same completions, same run: completions/s and the
latency per completion, and their ratio (``--no-ray`` skips it).
"""
from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from pathlib import Path

try:
    import solvergym  # noqa: F401
except ImportError:  # run from a checkout without installing: the root is the package
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
import gymnasium as gym
from tqdm import tqdm

from solvergym.adapters.scoring import INSTANCE_COLUMN, task_rows
from solvergym.adapters.trl import reward_fn
from solvergym.adapters.verl import compute_score
from solvergym.benchmarks.logic_generation import rate as best_rate
from solvergym.evaluation.tables import format_table

CASES = [("SolverSAT-v0", {"n": 3, "k": 5, "l": 6}), ("SolverSATBench-v0", {}), ("SolverLogic-v0", {"family": "clique"}),
         ("SolverKnights-v0", {})]


def interleaved_rates(paths: dict, count: int, repeat: int) -> dict[str, float]:
    """Each path's best rate over ``repeat`` rounds, the paths taking turns within a round (in
    a rotated order each round), so that a machine getting busier or a warming cache favours none."""
    best = {name: float("inf") for name in paths}
    names = list(paths)
    for i in range(repeat):
        for name in names[i % len(names):] + names[:i % len(names)]:
            t = time.perf_counter()
            paths[name]()
            best[name] = min(best[name], time.perf_counter() - t)
    return {name: count / dt for name, dt in best.items()}


def measure(env_id: str, kwargs: dict, count: int, repeat: int) -> dict:
    rows = list(task_rows(env_id, count, seed=0, **kwargs))
    env = gym.make(env_id, **kwargs).unwrapped
    answers = []
    for r in rows:
        env.reset(options={"instance": json.loads(r[INSTANCE_COLUMN])})
        answers.append(env.gold().answer)

    def direct():
        for r, a in zip(rows, answers):
            env.reset(options={"instance": json.loads(r[INSTANCE_COLUMN])})
            env.step(a)

    trl = reward_fn(env_id, **kwargs)
    columns = {k: [r[k] for r in rows] for k in rows[0] if k != "prompt"}
    extra = {"env_kwargs": rows[0]["solvergym_env_kwargs"]}
    paths = {"env": direct, "trl": lambda: trl(completions=answers, **columns),
             "verl": lambda: [compute_score(env_id, a, r[INSTANCE_COLUMN], extra) for r, a in zip(rows, answers)]}
    best = interleaved_rates(paths, count, repeat)
    own, direct_rate, trl_rate, verl_rate = best["env"], best["env"], best["trl"], best["verl"]
    env.close()
    trl.scorer.close()
    return {"env": env_id, "kwargs": json.dumps(kwargs), "env_rate": direct_rate, "trl_rate": trl_rate,
            "verl_rate": verl_rate, "trl_overhead": own / trl_rate - 1, "verl_overhead": own / verl_rate - 1}


def measure_executors(count: int, repeat: int) -> list[dict] | None:
    """SolverOR-v0's oracle completions through ``reward_fn`` on the local pool and on Ray."""
    try:
        import ray
    except ImportError:
        return None
    kwargs = {"solver": "highspy"}
    rows = list(task_rows("SolverOR-v0", count, seed=0, **kwargs))
    env = gym.make("SolverOR-v0", **kwargs).unwrapped
    answers = []
    for r in rows:
        env.reset(options={"instance": json.loads(r[INSTANCE_COLUMN])})
        answers.append(env.gold().answer)
    env.close()
    columns = {k: [r[k] for r in rows] for k in rows[0] if k != "prompt"}
    started = not ray.is_initialized()
    if started:
        ray.init(include_dashboard=False, log_to_driver=False, object_store_memory=100 << 20)
    out = []
    try:
        for executor in ("local", "ray"):
            trl = reward_fn("SolverOR-v0", executor=executor, **kwargs)
            scores = trl(completions=answers[:2], **{k: v[:2] for k, v in columns.items()})  # warm
            rate = best_rate(lambda: scores.extend(trl(completions=answers, **columns)), count, repeat)
            trl.scorer.close()
            if min(scores) < 3.5:  # the oracle earns format 0.5 + execution 1 + accuracy 2 (stage 1)
                raise RuntimeError(f"an oracle completion scored {min(scores)} on the {executor} executor")
            out.append({"executor": executor, "completions_per_s": rate, "ms_per_completion": 1000 / rate})
    finally:
        if started:
            ray.shutdown()
    for row in out:
        row["ratio"] = row["completions_per_s"] / out[0]["completions_per_s"]
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--count", type=int, default=200, help="completions per env")
    p.add_argument("--repeat", type=int, default=6, help="rounds (the paths take turns in each; best of them)")
    p.add_argument("--quick", action="store_true", help="count 100, 4 rounds (fewer makes the timer's noise the result)")
    p.add_argument("--no-ray", action="store_true", help="skip the local-pool vs Ray executor rows")
    p.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "results")
    a = p.parse_args(argv)
    count, repeat = (100, 4) if a.quick else (a.count, a.repeat)
    rows = [measure(e, k, count, repeat) for e, k in tqdm(CASES, desc="adapters", unit="env")]
    print(format_table(rows, [("env", "env", "s"), ("kwargs", "kwargs", "s"), ("env_rate", "env step /s", ".0f"),
                              ("trl_rate", "TRL reward_fn /s", ".0f"), ("verl_rate", "verl compute_score /s", ".0f"),
                              ("trl_overhead", "TRL overhead", "+.1%"), ("verl_overhead", "verl overhead", "+.1%")]))
    executors = None if a.no_ray else measure_executors(max(8, count // 4), repeat)
    if executors is not None:
        print("\nSolverOR-v0 (HiGHS) through reward_fn, programs on the local pool vs the Ray executor:")
        print(format_table(executors, [("executor", "executor", "s"), ("completions_per_s", "completions/s", ".1f"),
                                       ("ms_per_completion", "ms each", ".1f"), ("ratio", "ray/local", ".2f")]))
    a.out.mkdir(parents=True, exist_ok=True)
    result = {"machine": platform.platform(), "python": platform.python_version(), "count": count, "repeat": repeat,
              "rows": rows, "executors": executors}
    (a.out / "adapters.json").write_text(json.dumps(result, indent=2) + "\n")
    print(f"wrote {a.out / 'adapters.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
