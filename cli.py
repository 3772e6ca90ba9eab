"""The ``solvergym`` command line: list, sample, dataset, demo, train, sft, plot, check-trace, eval."""
from __future__ import annotations

import argparse
import json
import sys
from typing import Any

import gymnasium as gym

from .agents import OracleAgent, RandomAgent
from .agents.scripted import oracle_action
from .algorithms.config import make_config
from .algorithms.presets import PRESETS
from .benchmarks.evaluate import format_table, run_episodes
from .benchmarks.plots import plot_run
from .cli_check_trace import add_cli as add_check_trace
from .cli_eval import add_cli as add_eval, cmd_compare
from .envs.sat.datasets import build_sat_bench, build_saturn_2_6k
from .agents.sft_data import build_sat_rl_sft
from .agents.or_sft import build_or_sft
from .envs.opt.datasets import convert_benchmark
from .envs.logic_steps.datasets import SPRING_DATASETS, build_spring
from .envs.opt.problem import OR_SOLVERS
from .kv import coerce_value, parse_kv
from .registry import ENVS, default_kwargs, env_ids, get_entry, knobs

__all__ = ["main"]


def _env_kwargs(items: list[str] | None, flag: str) -> dict[str, Any]:
    """``--kwargs k=7 l=20`` or ``--kwargs '{"k": 7}'`` (:func:`solvergym.kv.parse_kv`); a bad item exits."""
    try:
        return parse_kv(items)
    except ValueError as e:
        raise SystemExit(f"{flag}: {e}") from None


def cmd_list(args) -> int:
    for e in ENVS:
        knob_defaults = knobs(e.id)
        others = {k: v for k, v in default_kwargs(e.id).items() if k not in knob_defaults}
        print(f"{e.id}\n    {e.description}\n    rewards: {', '.join(e.reward_components)}"
              f"   ({e.paper})\n    knobs: {json.dumps(knob_defaults, default=str)}"
              f"\n    other keywords: {json.dumps(others, default=str)}")
    return 0


def cmd_sample(args) -> int:
    try:
        get_entry(args.env_id)
    except KeyError as e:
        print(e.args[0], file=sys.stderr)
        return 2
    env = gym.make(args.env_id, **_env_kwargs(args.kwargs, "--kwargs"))
    obs, info = env.reset(seed=args.seed)
    print(obs, end="" if obs.endswith("\n") else "\n")
    if args.solution:
        inst = env.unwrapped.instance
        print("\n--- solution ---")
        print(oracle_action(env, obs))
        print("\n--- instance ---")
        print(json.dumps(inst.to_dict(), indent=1, ensure_ascii=False))
    return 0


def cmd_dataset(args) -> int:
    if args.name == "saturn-2.6k":
        manifest = build_saturn_2_6k(args.out, seed=args.seed, max_chance_success=args.max_chance_success)
    elif args.name == "sat-bench":
        manifest = build_sat_bench(args.out, seed=args.seed, n_train=args.n_train or 1575, n_test=args.n_test or 525)
    elif args.name == "or-convert":
        if not args.input:
            raise SystemExit("or-convert needs --input FILE (a local benchmark file; nothing is downloaded)")
        try:
            manifest = convert_benchmark(args.input, args.out)
        except (OSError, ValueError) as e:  # a missing, oversized or non-UTF-8 file (bad records are reported)
            raise SystemExit(f"or-convert: {e}") from None
        counts = manifest["counts"]
        print(f"{args.input}: {counts['n_read']} records read, {counts['n_ok']} kept "
              f"({counts['n_infeasible']} infeasible), {counts['n_bad']} bad")
        for bad in manifest["bad"][:10]:
            print(f"  line {bad['line']}: {bad['reason']}")
    elif args.name in SPRING_DATASETS:
        manifest = build_spring(args.name, args.out, seed=args.seed, scale=args.scale)
    elif args.name == "or-sft":
        manifest = build_or_sft(args.out, n=1000 if args.n is None else args.n, seed=args.seed, solver=args.solver,
                                test_fraction=args.test_fraction)
    else:
        manifest = build_sat_rl_sft(args.out, seed=args.seed, n_train=args.n_train or 1260, n_test=args.n_test or 139)
    for name, f in manifest["files"].items():
        print(f"{args.out}/{name}: {f['count']} records  sha256 {f['sha256'][:16]}")
    return 0


def cmd_demo(args) -> int:
    rows = []
    for env_id in env_ids():
        for agent in (OracleAgent(), RandomAgent(seed=args.seed)):
            rows.append(run_episodes(env_id, agent, args.episodes, seed=args.seed, progress=True).as_dict())
    print()
    print(format_table(rows, [("env_id", "env", "s"), ("agent", "agent", "s"), ("episodes", "episodes", "d"),
                              ("mean_reward", "mean reward", ".3f"), ("solved", "solved", ".1%"),
                              ("format_failures", "format fail", ".1%"), ("episodes_per_s", "episodes/s", ".0f")]))
    if args.train_steps <= 0:
        return 0
    print(f"\nGRPO on the embedded SmolLM2-135M-Instruct, SolverSAT-v0 at SATURN's first level (3,5,5), "
          f"{args.train_steps} steps on the CPU:")
    train = ["train", "--algo", "grpo", "--env", "SolverSAT-v0", "--steps", str(args.train_steps),
             "--out", args.out, "--seed", str(args.seed), "--print-steps",
             "--set", "prompts_per_step=2", "group_size=4", "max_new_tokens=48", "lr=2e-5"]
    return main(train)


def cmd_train(args) -> int:
    from .algorithms.trainer import Trainer  # lazy: torch, accelerate (`solvergym list` must not load them)

    kwargs = {k: v for k, v in (("env", args.env), ("model", args.model), ("steps", args.steps),
                                ("out_dir", args.out), ("seed", args.seed), ("data", args.data),
                                ("eval_data", args.eval_data)) if v is not None}
    if args.env_kwargs:
        kwargs["env_kwargs"] = _env_kwargs(args.env_kwargs, "--env-kwargs")
    cfg = make_config(args.algo, file=args.config, overrides=parse_kv(args.set, fields=True),
                      paper_scale=args.paper_scale, **kwargs)
    trainer = Trainer(cfg)
    history = trainer.train()
    if trainer.acc.is_main_process:
        if args.print_steps:
            for h in history:
                if "reward" in h:
                    print(f"step {h['step']:4d}  reward {h['reward']:+.3f}  accuracy {h.get('accuracy', 0):.2f}"
                          f"  tokens/s {h.get('tokens_per_s', 0):.0f}")
        png = plot_run(cfg.out_dir, title=f"{cfg.algo} on {cfg.env} ({cfg.model})")
        print(f"metrics: {cfg.out_dir}/metrics.jsonl  curve: {png}  model: {cfg.out_dir}/final")
    return 0


def cmd_sft(args) -> int:
    from .algorithms.sft import SFTConfig, train_sft  # lazy: torch, accelerate (as cmd_train)

    cfg = SFTConfig(data=args.data, model=args.model, out_dir=args.out)
    for k, v in parse_kv(args.set, fields=True).items():
        if not hasattr(cfg, k):
            raise SystemExit(f"unknown SFT setting {k!r}")
        setattr(cfg, k, coerce_value(v, getattr(cfg, k)))
    history = train_sft(cfg)
    print(f"{len(history)} steps; final loss {history[-1]['loss']:.4f}; model: {cfg.out_dir}/final")
    return 0


def cmd_plot(args) -> int:
    print(plot_run(args.run_dir, args.out))
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:2] == ["eval", "compare"]:  # its own arguments: run directories, not an env
        return cmd_compare(argv[2:])
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
    d.add_argument("name", choices=["saturn-2.6k", "sat-bench", "sat-rl-sft", "or-convert", "or-sft", *SPRING_DATASETS],
                   help="spring-zebra / spring-lsat / spring-knights: Spring Table 3's splits from the generators; "
                        "sat-rl-sft: SolverTool-v0 oracle trajectories as chat JSONL (SAT-RL §3.3 warm-up); "
                        "or-convert: a local OR benchmark file ({en_question, en_answer} JSONL or JSON array: "
                        "NL4OPT, MAMO, IndustryOR, OptMATH, OptiBench) as SolverOR-v0 instances; "
                        "or-sft: SolverOR-v0 oracle answers as chat JSONL")
    d.add_argument("--out", required=True)
    d.add_argument("--seed", type=int, default=0)
    d.add_argument("--max-chance-success", type=float, default=None,
                   help="saturn-2.6k: reject instances a random guess solves more often than this")
    d.add_argument("--n-train", type=int, default=None,
                   help="training records (sat-bench: 1575, sat-rl-sft: 1260 by default, as the papers)")
    d.add_argument("--n-test", type=int, default=None, help="test records (sat-bench: 525, sat-rl-sft: 139)")
    d.add_argument("--input", default=None, help="or-convert: the benchmark file to convert")
    d.add_argument("--n", type=int, default=None, help="or-sft: records in all, train and test (default 1000)")
    d.add_argument("--solver", choices=list(OR_SOLVERS), default="gurobipy",
                   help="or-sft: the solver library the prompts ask for and the oracle's programs use")
    d.add_argument("--test-fraction", type=float, default=0.1, help="or-sft: the share of records in test.jsonl")
    d.add_argument("--scale", type=float, default=1.0, help="spring-*: every split's size times this")
    d.set_defaults(fn=cmd_dataset)

    m = sub.add_parser("demo", help="oracle and random agents over every registered env, then a short GRPO run")
    m.add_argument("--episodes", type=int, default=100)
    m.add_argument("--seed", type=int, default=0)
    m.add_argument("--train-steps", type=int, default=6, help="GRPO steps of the embedded model (0: skip)")
    m.add_argument("--out", default="runs/demo", help="where the demo run writes its metrics, curve and model")
    m.set_defaults(fn=cmd_demo)

    t = sub.add_parser("train", help="train a model against an env (GRPO / DAPO / REINFORCE++)")
    t.add_argument("--algo", choices=list(PRESETS), default=None,
                   help="preset: a paper's recipe as printed, or its shipped code's (algorithms/presets.py); "
                        "grpo = saturn_grpo, dapo = dapo_paper, reinforce_pp = sirl_reinforce_pp "
                        "(default: the config file's, else grpo)")
    t.add_argument("--paper-scale", action="store_true",
                   help="the preset paper's scale too (prompts per step, generation length, mini-batches): GPUs")
    t.add_argument("--env", default=None)
    t.add_argument("--env-kwargs", nargs="*", metavar="KEY=VALUE")
    t.add_argument("--model", default=None, help='"default" (embedded SmolLM2-135M), a folder or a hub id')
    t.add_argument("--config", default=None, help="YAML or JSON file of TrainConfig fields")
    t.add_argument("--steps", type=int, default=None)
    t.add_argument("--data", default=None,
                   help="a training split (JSONL file or directory of instances): epochs over it (--set epochs=2)")
    t.add_argument("--eval-data", default=None,
                   help="a validation split, evaluated every eval_every steps or epoch (--set patience=3 stops early)")
    t.add_argument("--seed", type=int, default=None)
    t.add_argument("--out", default=None, help="run directory (metrics.jsonl, checkpoints, final model)")
    t.add_argument("--set", nargs="*", metavar="KEY=VALUE", help="any TrainConfig field, e.g. lr=1e-5 group_size=4")
    t.add_argument("--print-steps", action="store_true", help="print the reward of every step at the end")
    t.set_defaults(fn=cmd_train)

    f = sub.add_parser("sft", help="supervised warm-up on chat JSONL (loss on assistant tokens)")
    f.add_argument("--data", required=True)
    f.add_argument("--model", default="default")
    f.add_argument("--out", default="runs/sft")
    f.add_argument("--set", nargs="*", metavar="KEY=VALUE", help="SFTConfig fields, e.g. lr=1e-5 epochs=2")
    f.set_defaults(fn=cmd_sft)

    pl = sub.add_parser("plot", help="draw the reward curves of a training run (PNG)")
    pl.add_argument("run_dir")
    pl.add_argument("--out", default=None)
    pl.set_defaults(fn=cmd_plot)

    add_check_trace(sub)
    add_eval(sub)

    args = p.parse_args(argv)
    return args.fn(args)


if __name__ == "__main__":
    sys.exit(main())
