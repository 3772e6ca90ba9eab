"""``solvergym list``, ``sample`` and ``demo``: a look at the registered environments.

``list`` prints every id with its description, the reward components of each of its modes
(``SolverTool-v0``: of each task), its knobs and other keywords, all derived by the registry from
the problems and modes (:func:`solvergym.registry.listing`); ``sample`` one observation of an env (and with ``--solution`` the oracle's answer
and the instance); ``demo`` the oracle and random agents over every env
(:func:`solvergym.evaluation.episodes.run_episodes`), then a short SFT warm-up and GRPO run of the
embedded model with its reward before and after (:mod:`.demo`). ``list`` and ``sample`` load no
trainer (neither accelerate nor transformers: :mod:`.demo` is imported only when the demo trains).
"""
from __future__ import annotations

import json
import sys
from typing import Any

import gymnasium as gym

from ..agents import OracleAgent, RandomAgent
from ..agents.scripted import oracle_action
from ..evaluation.episodes import run_episodes
from ..evaluation.tables import format_table
from ..registry import env_ids, listing, resolve_env_id
from .args import env_id, env_kwargs

__all__ = ["add_parser", "cmd_list", "cmd_sample", "cmd_demo"]

#: the columns of the demo's table: (EpisodeStats field, header, format)
DEMO_COLUMNS = [("env_id", "env", "s"), ("agent", "agent", "s"), ("episodes", "episodes", "d"),
                ("mean_reward", "mean reward", ".3f"), ("solved", "solved", ".1%"),
                ("format_failures", "format fail", ".1%"), ("episodes_per_s", "episodes/s", ".0f")]


def cmd_list(args) -> int:
    rows = listing()
    if args.env_ids:
        wanted = [env_id(i, "list") for i in args.env_ids]
        rows = [row for i in wanted for row in rows if row["id"] == i]
    if args.json:
        print(json.dumps(rows, indent=1, default=str))
        return 0
    for row in rows:
        print(f"{row['id']}" + (f"   ({row['paper']})" if row["paper"] else "") + f"\n    {row['description']}")
        for key, names in row["components"].items():
            print(f"    rewards ({key}): {', '.join(names)}")
        print(f"    knobs: {json.dumps(row['knobs'], default=str)}"
              f"\n    other keywords: {json.dumps(row['keywords'], default=str)}")
    return 0


def compact_json(obj: Any, indent: int = 1, level: int = 0) -> str:
    """``obj`` as JSON with objects indented and every list of scalars on one line (an instance's
    clauses, grids and vectors stay readable: ``json.dumps(indent=...)`` puts each number on a line
    of its own); a list of lists puts each inner list on its own line."""
    pad, inner = " " * (indent * level), " " * (indent * (level + 1))
    if isinstance(obj, dict) and obj:
        items = [f"{inner}{json.dumps(str(k), ensure_ascii=False)}: {compact_json(v, indent, level + 1)}"
                 for k, v in obj.items()]
        return "{\n" + ",\n".join(items) + "\n" + pad + "}"
    if isinstance(obj, (list, tuple)) and any(isinstance(x, (dict, list, tuple)) for x in obj):
        return "[\n" + ",\n".join(inner + compact_json(x, indent, level + 1) for x in obj) + "\n" + pad + "]"
    return json.dumps(obj, ensure_ascii=False, default=str)


def cmd_sample(args) -> int:
    try:
        name = resolve_env_id(args.env_id)
    except ValueError as e:
        print(f"sample: {e}", file=sys.stderr)
        return 2
    env = gym.make(name, **env_kwargs(args.kwargs, "--kwargs"))
    obs, info = env.reset(seed=args.seed)
    print(obs, end="" if obs.endswith("\n") else "\n")
    if args.solution:
        inst = env.unwrapped.instance
        print("\n--- solution ---")
        print(oracle_action(env, obs))
        print("\n--- instance ---")
        print(compact_json(inst.to_dict()))
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
    from . import demo  # the trainer, transformers and accelerate: only when the demo trains

    print(f"\nThe embedded SmolLM2-135M-Instruct on SolverSAT-v0 at SATURN's first level (3,5,5), on the CPU: "
          f"a {demo.DEMO_WARMUP['conversations'] // demo.DEMO_WARMUP['batch_size']}-step SFT warm-up on the "
          f"oracle's answers, then {args.train_steps} GRPO steps (cli/demo.py says why the warm-up):")
    demo.run_demo(args.out, args.train_steps, seed=args.seed, save_model=args.save_model)
    return 0


def add_parser(sub) -> None:
    """Add ``list``, ``sample`` and ``demo`` to the ``solvergym`` subcommands."""
    ls = sub.add_parser("list", help="environment ids, descriptions, reward components per mode, knobs and keywords")
    ls.add_argument("env_ids", nargs="*", metavar="ENV_ID",
                    help="only these ids (a family of your own: with --import MODULE, or as MODULE:ENV-ID)")
    ls.add_argument("--json", action="store_true", help="print the listing as JSON")
    ls.set_defaults(fn=cmd_list)

    s = sub.add_parser("sample", help="print one observation of an env")
    s.add_argument("env_id", help="an env id (solvergym list), or MODULE:ENV-ID for a family of your own")
    s.add_argument("--seed", type=int, default=0)
    s.add_argument("--kwargs", nargs="*", metavar="KEY=VALUE", help="env kwargs, e.g. k=7 l=20 or a JSON object")
    s.add_argument("--solution", action="store_true", help="also print the ground truth")
    s.set_defaults(fn=cmd_sample)

    m = sub.add_parser("demo", help="oracle and random agents over every registered env, then a short GRPO run")
    m.add_argument("--episodes", type=int, default=100)
    m.add_argument("--seed", type=int, default=0)
    m.add_argument("--train-steps", type=int, default=6, help="GRPO steps of the embedded model (0: skip)")
    m.add_argument("--out", default="runs/demo", help="where the demo run writes its metrics and curve")
    m.add_argument("--save-model", action="store_true", help="also save the trained model as OUT/final (540 MB)")
    m.set_defaults(fn=cmd_demo)
