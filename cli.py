"""The ``solvergym`` command line: list, sample, dataset, demo."""
from __future__ import annotations

import argparse
import json
import sys
from typing import Any

__all__ = ["main"]


def _parse_kwargs(items: list[str] | None) -> dict[str, Any]:
    """``--kwargs k=7 l=20`` or ``--kwargs '{"k": 7}'``; values are read as JSON when they parse."""
    out: dict[str, Any] = {}
    for item in items or []:
        if item.lstrip().startswith("{"):
            obj = json.loads(item)
            if not isinstance(obj, dict):
                raise SystemExit(f"--kwargs: {item!r} is not a JSON object")
            out.update(obj)
            continue
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise SystemExit(f"--kwargs: expected key=value, got {item!r}")
        try:
            out[key] = json.loads(value)
        except json.JSONDecodeError:
            out[key] = value
    return out


def cmd_list(args) -> int:
    from .registry import ENVS, default_kwargs

    for e in ENVS:
        print(f"{e.id}\n    {e.description}\n    rewards: {', '.join(e.reward_components)}"
              f"   ({e.paper})\n    defaults: {json.dumps(default_kwargs(e.id), default=str)}")
    return 0


def cmd_sample(args) -> int:
    import gymnasium as gym

    from .registry import get_entry

    try:
        get_entry(args.env_id)
    except KeyError as e:
        print(e.args[0], file=sys.stderr)
        return 2
    env = gym.make(args.env_id, **_parse_kwargs(args.kwargs))
    obs, info = env.reset(seed=args.seed)
    print(obs, end="" if obs.endswith("\n") else "\n")
    if args.solution:
        inst = env.unwrapped.instance
        print("\n--- solution ---")
        print(env.unwrapped.oracle_action())
        print("\n--- instance ---")
        print(json.dumps(inst.to_dict(), indent=1, ensure_ascii=False))
    return 0


def cmd_dataset(args) -> int:
    from .envs.sat.datasets import build_sat_bench, build_saturn_2_6k

    if args.name == "saturn-2.6k":
        manifest = build_saturn_2_6k(args.out, seed=args.seed, max_chance_success=args.max_chance_success)
    else:
        manifest = build_sat_bench(args.out, seed=args.seed, n_train=args.n_train, n_test=args.n_test)
    for name, f in manifest["files"].items():
        print(f"{args.out}/{name}: {f['count']} records  sha256 {f['sha256'][:16]}")
    return 0


def cmd_demo(args) -> int:
    from .agents import OracleAgent, RandomAgent
    from .benchmarks.evaluate import format_table, run_episodes
    from .registry import env_ids

    rows = []
    for env_id in env_ids():
        for agent in (OracleAgent(), RandomAgent(seed=args.seed)):
            rows.append(run_episodes(env_id, agent, args.episodes, seed=args.seed, progress=True).as_dict())
    print()
    print(format_table(rows, [("env_id", "env", "s"), ("agent", "agent", "s"), ("episodes", "episodes", "d"),
                              ("mean_reward", "mean reward", ".3f"), ("solved", "solved", ".1%"),
                              ("format_failures", "format fail", ".1%"), ("episodes_per_s", "episodes/s", ".0f")]))
    print("\nTraining against these envs comes with the agents-and-trainer issue; "
          "`solvergym list` shows every env and its knobs.")
    return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="solvergym", description=__doc__)
    sub = p.add_subparsers(dest="cmd", required=True)
    sub.add_parser("list", help="environment ids, descriptions and default kwargs").set_defaults(fn=cmd_list)

    s = sub.add_parser("sample", help="print one observation of an env")
    s.add_argument("env_id")
    s.add_argument("--seed", type=int, default=0)
    s.add_argument("--kwargs", nargs="*", metavar="KEY=VALUE", help="env kwargs, e.g. k=7 l=20 or a JSON object")
    s.add_argument("--solution", action="store_true", help="also print the ground truth")
    s.set_defaults(fn=cmd_sample)

    d = sub.add_parser("dataset", help="build a dataset as JSONL files")
    d.add_argument("name", choices=["saturn-2.6k", "sat-bench"])
    d.add_argument("--out", required=True)
    d.add_argument("--seed", type=int, default=0)
    d.add_argument("--max-chance-success", type=float, default=None,
                   help="saturn-2.6k: reject instances a random guess solves more often than this")
    d.add_argument("--n-train", type=int, default=1575, help="sat-bench: training instances")
    d.add_argument("--n-test", type=int, default=525, help="sat-bench: test instances")
    d.set_defaults(fn=cmd_dataset)

    m = sub.add_parser("demo", help="oracle and random agents over every registered env")
    m.add_argument("--episodes", type=int, default=100)
    m.add_argument("--seed", type=int, default=0)
    m.set_defaults(fn=cmd_demo)

    args = p.parse_args(argv)
    return args.fn(args)


if __name__ == "__main__":
    sys.exit(main())
