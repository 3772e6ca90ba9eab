"""``solvergym list``, ``sample`` and ``demo``: a look at the registered environments.

``list`` prints every id with its description, the reward components of each of its modes
(``SolverTool-v0``: of each task), its knobs and other keywords, all derived by the registry from
the problems and modes (:func:`solvergym.registry.listing`); ``sample`` one observation of an env (and with ``--solution`` the oracle's answer
and the instance); ``demo`` the oracle and random agents over every env
(:func:`solvergym.evaluation.episodes.run_episodes`), then a short GRPO run of the embedded model
through ``solvergym train``. ``list`` and ``sample`` load no trainer (neither accelerate nor
transformers: :mod:`.train` imports the trainer only when a run starts).
"""
from __future__ import annotations

import json
import sys

import gymnasium as gym

from ..agents import OracleAgent, RandomAgent
from ..agents.scripted import oracle_action
from ..evaluation.episodes import run_episodes
from ..evaluation.tables import format_table
from ..registry import env_ids, get_entry, listing
from . import train
from .args import env_kwargs

__all__ = ["add_parser", "cmd_list", "cmd_sample", "cmd_demo"]

#: the columns of the demo's table: (EpisodeStats field, header, format)
DEMO_COLUMNS = [("env_id", "env", "s"), ("agent", "agent", "s"), ("episodes", "episodes", "d"),
                ("mean_reward", "mean reward", ".3f"), ("solved", "solved", ".1%"),
                ("format_failures", "format fail", ".1%"), ("episodes_per_s", "episodes/s", ".0f")]


def cmd_list(args) -> int:
    rows = listing()
    if args.json:
        print(json.dumps(rows, indent=1, default=str))
        return 0
    for row in rows:
        print(f"{row['id']}   ({row['paper']})\n    {row['description']}")
        for key, names in row["components"].items():
            print(f"    rewards ({key}): {', '.join(names)}")
        print(f"    knobs: {json.dumps(row['knobs'], default=str)}"
              f"\n    other keywords: {json.dumps(row['keywords'], default=str)}")
    return 0


def cmd_sample(args) -> int:
    try:
        get_entry(args.env_id)
    except KeyError as e:
        print(e.args[0], file=sys.stderr)
        return 2
    env = gym.make(args.env_id, **env_kwargs(args.kwargs, "--kwargs"))
    obs, info = env.reset(seed=args.seed)
    print(obs, end="" if obs.endswith("\n") else "\n")
    if args.solution:
        inst = env.unwrapped.instance
        print("\n--- solution ---")
        print(oracle_action(env, obs))
        print("\n--- instance ---")
        print(json.dumps(inst.to_dict(), indent=1, ensure_ascii=False))
    return 0


def cmd_demo(args) -> int:
    rows = []
    for env_id in env_ids():
        for agent in (OracleAgent(), RandomAgent(seed=args.seed)):
            rows.append(run_episodes(env_id, agent, args.episodes, seed=args.seed, progress=True).as_dict())
    print()
    print(format_table(rows, DEMO_COLUMNS))
    if args.train_steps <= 0:
        return 0
    print(f"\nGRPO on the embedded SmolLM2-135M-Instruct, SolverSAT-v0 at SATURN's first level (3,5,5), "
          f"{args.train_steps} steps on the CPU:")
    return train.run(["--algo", "grpo", "--env", "SolverSAT-v0", "--steps", str(args.train_steps),
                      "--out", args.out, "--seed", str(args.seed), "--print-steps",
                      "--set", "prompts_per_step=2", "group_size=4", "max_new_tokens=48", "lr=2e-5"])


def add_parser(sub) -> None:
    """Add ``list``, ``sample`` and ``demo`` to the ``solvergym`` subcommands."""
    ls = sub.add_parser("list", help="environment ids, descriptions, reward components per mode, knobs and keywords")
    ls.add_argument("--json", action="store_true", help="print the listing as JSON")
    ls.set_defaults(fn=cmd_list)

    s = sub.add_parser("sample", help="print one observation of an env")
    s.add_argument("env_id")
    s.add_argument("--seed", type=int, default=0)
    s.add_argument("--kwargs", nargs="*", metavar="KEY=VALUE", help="env kwargs, e.g. k=7 l=20 or a JSON object")
    s.add_argument("--solution", action="store_true", help="also print the ground truth")
    s.set_defaults(fn=cmd_sample)

    m = sub.add_parser("demo", help="oracle and random agents over every registered env, then a short GRPO run")
    m.add_argument("--episodes", type=int, default=100)
    m.add_argument("--seed", type=int, default=0)
    m.add_argument("--train-steps", type=int, default=6, help="GRPO steps of the embedded model (0: skip)")
    m.add_argument("--out", default="runs/demo", help="where the demo run writes its metrics, curve and model")
    m.set_defaults(fn=cmd_demo)
