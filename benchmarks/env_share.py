"""The env share of a rollout on SolverTool-v0: its env steps serial against on threads.

    python benchmarks/env_share.py [--groups 8 --group 8 --threads 8 --rounds 3]
    python benchmarks/train_speed.py --env-share [...]       # the same, from the speed benchmark

``groups`` instances x ``group`` samples of ``SolverTool-v0`` (SAT-RL §3.3's tool env) go through
:func:`solvergym.algorithms.rollout.rollout` with a scripted policy that writes the oracle's
program for the instance's solver on the first turn and answers on the second, so that every
episode runs a real sandboxed program (a 135M model's turns are mostly format errors, which run
none, and its generation would hide the env phase). Measured per run: the wall time of the env
steps (``timing["env_s"]``), with ``env_threads=1`` (serial: each program awaited in turn) and
``env_threads=N``; the two alternate within each round (serial first in odd rounds), each side
keeps its best round, and the ratio serial / threaded is the speed-up of the env share. The
episodes of the two sides are checked to be equal (rewards and token ids) before a time counts.
Beside it, the ceiling: the same programs straight through the sandbox pool, one ``run`` after
another against ``run_many`` (every server at once, one per core): no overlap of env steps can
gain more than the pool's own parallelism on the machine.
Prints a table, writes ``env_share.json``.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import gymnasium as gym

import solvergym  # noqa: F401  (registers the env ids)
from solvergym.agents.hf import Completion, SamplingConfig
from solvergym.agents.models import load_tokenizer
from solvergym.agents.scripted import tool_oracle_action
from solvergym.algorithms.rollout import rollout
from solvergym.sandbox import acquire_default_pool, release_default_pool

HERE = Path(__file__).resolve()


class OracleToolPolicy:
    """The rollout's policy interface; turn 1: the oracle's program for each group's instance,
    turn 2: an answer. Texts depend on the instance only, never on how the envs were stepped."""

    def __init__(self, tokenizer, envs, group: int):
        self.tokenizer, self.envs, self.group, self.calls, self.system_prompt = tokenizer, envs, group, 0, None

    def chat_ids(self, messages):
        return list(self.tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=True,
                                                       return_dict=False))

    def generate(self, prompts, n=1, sampling=None):
        texts = [tool_oracle_action(self.envs[(j // self.group) * self.group], None) if self.calls == 0
                 else "```answer\nSAT\n```" for j in range(len(prompts))]
        self.calls += 1
        out = []
        for text in texts:
            ids = list(self.tokenizer(text, add_special_tokens=False)["input_ids"])
            out.append(Completion(ids, [0.0] * len(ids), text, "stop"))
        return out


def one_run(envs, tokenizer, seeds, group: int, threads: int) -> tuple[float, list]:
    timing: dict[str, float] = {}
    eps = rollout(None, OracleToolPolicy(tokenizer, envs, group), seeds, group_size=group,
                  sampling=SamplingConfig(max_new_tokens=4096), max_total_tokens=16384, envs=envs,
                  env_threads=threads, timing=timing)
    return timing["env_s"], [(ep.reward, ep.token_ids) for ep in eps]


def sandbox_ceiling(envs, seeds, group: int, rounds: int) -> tuple[float, float]:
    """The same programs straight through the sandbox pool, one ``run`` after another against
    ``run_many`` (every server at once): the most any overlap of env steps can gain here."""
    codes = []
    for g, seed in enumerate(seeds):
        env = envs[g * group]
        env.reset(seed=seed)
        action = tool_oracle_action(env, None)
        codes += [action.split("<tool_call>\n", 1)[1].split("</tool_call>")[0]] * group
    pool = acquire_default_pool()
    try:
        best_serial, best_many = float("inf"), float("inf")
        for _ in range(rounds):
            t = time.perf_counter()
            for code in codes:
                pool.run(code)
            best_serial = min(best_serial, time.perf_counter() - t)
            t = time.perf_counter()
            pool.run_many(codes)
            best_many = min(best_many, time.perf_counter() - t)
    finally:
        release_default_pool()
    return best_serial, best_many


def measure(groups: int = 8, group: int = 8, threads: int = 8, rounds: int = 3, seed: int = 0) -> dict:
    tokenizer = load_tokenizer("default")
    envs = [gym.make("SolverTool-v0") for _ in range(groups * group)]
    seeds = [seed + g for g in range(groups)]
    one_run(envs, tokenizer, seeds, group, threads)  # the sandbox pool's servers start here, off the clock
    times: dict[int, list[float]] = {1: [], threads: []}
    for r in range(rounds):
        outcomes = {}
        for t in ((1, threads) if r % 2 == 0 else (threads, 1)):
            seconds, outcomes[t] = one_run(envs, tokenizer, seeds, group, t)
            times[t].append(seconds)
        if outcomes[1] != outcomes[threads]:
            raise AssertionError("threaded env steps gave other episodes than serial ones")
        print(f"round {r + 1}/{rounds}: serial {times[1][-1]:.3f} s, {threads} threads {times[threads][-1]:.3f} s",
              file=sys.stderr)
    serial, threaded = min(times[1]), min(times[threads])
    ceiling = sandbox_ceiling(envs, seeds, group, rounds)
    return {"sandbox_serial_s": ceiling[0], "sandbox_run_many_s": ceiling[1], "sandbox_ceiling": ceiling[0] / ceiling[1],
            "env": "SolverTool-v0", "groups": groups, "group_size": group, "episodes": groups * group,
            "threads": threads, "rounds": rounds, "serial_env_s": serial, "threaded_env_s": threaded,
            "speedup": serial / threaded, "serial_rounds": times[1], "threaded_rounds": times[threads]}


def report(res: dict, out: Path) -> None:
    print(f"SolverTool-v0, {res['groups']} groups x {res['group_size']} ({res['episodes']} episodes, 2 turns each, "
          f"a sandboxed program in each): env steps, best of {res['rounds']} rounds")
    print(f"  serial                 {res['serial_env_s']:8.3f} s")
    print(f"  {res['threads']} threads              {res['threaded_env_s']:8.3f} s")
    print(f"  serial / threaded      {res['speedup']:8.2f} x   (target >= 3x)")
    print(f"  the sandbox's own ceiling here: the same programs one by one {res['sandbox_serial_s']:.3f} s, "
          f"run_many {res['sandbox_run_many_s']:.3f} s = {res['sandbox_ceiling']:.2f} x")
    out.mkdir(parents=True, exist_ok=True)
    (out / "env_share.json").write_text(json.dumps(res, indent=2) + "\n")
    print(f"wrote {out / 'env_share.json'}")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--groups", type=int, default=8)
    p.add_argument("--group", type=int, default=8)
    p.add_argument("--threads", type=int, default=8)
    p.add_argument("--rounds", type=int, default=3)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_arguments(p)
    p.add_argument("--out", type=Path, default=HERE.parent / "results")
    a = p.parse_args(argv)
    t = time.perf_counter()
    report(measure(a.groups, a.group, a.threads, a.rounds), a.out)
    print(f"({time.perf_counter() - t:.0f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
