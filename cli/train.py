"""``solvergym train``, ``sft`` and ``plot``: a policy-gradient run, the supervised warm-up before
one, and the curves of a run.

``train`` builds a :class:`~solvergym.algorithms.config.TrainConfig` with
:func:`~solvergym.algorithms.config.make_config` (the ``--algo`` preset, its paper's scale, a
``--config`` file, the flags, ``--set``), runs :class:`~solvergym.algorithms.trainer.Trainer` and
draws the curves (:func:`solvergym.algorithms.plots.plot_run`). Its ``--help`` ends with every
config field (:mod:`.train_help`). The trainer and SFT are imported inside their commands, so
that ``solvergym list``, ``sample`` and ``train --help`` do not load them (accelerate,
transformers, peft). Everything that can be checked without the model is checked before it is
loaded, each in one line: the env id (a family of one's own too: ``--import`` or
``module:Env-v0``), every ``--set`` key and value against the config's fields and types, a model
written as a path that does not exist.
"""
from __future__ import annotations

import argparse

from ..agents.models import check_model
from ..algorithms.config import TRL_NAMES, field_value, make_config, unknown_key
from ..algorithms.plots import plot_run
from ..algorithms.presets import PRESETS
from ..kv import parse_kv
from ..sandbox import ExecutorUnavailable
from .args import env_id, env_kwargs
from .train_help import field_reference

__all__ = ["add_parser", "run", "cmd_train", "cmd_sft", "cmd_plot"]


def _train_arguments(t: argparse.ArgumentParser) -> None:
    t.add_argument("--algo", choices=list(PRESETS), default=None,
                   help="preset: a paper's recipe as printed, or its shipped code's (algorithms/presets.py); "
                        "grpo = saturn_grpo, dapo = dapo_paper, reinforce_pp = sirl_reinforce_pp "
                        "(default: the config file's, else grpo)")
    t.add_argument("--paper-scale", action="store_true",
                   help="the preset paper's scale too (prompts per step, generation length, mini-batches): GPUs")
    t.add_argument("--env", default=None,
                   help="an env id (solvergym list), a family of your own with --import MODULE, or MODULE:ENV-ID")
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
    t.add_argument("--set", nargs="*", metavar="KEY=VALUE",
                   help="any TrainConfig field (all listed below), e.g. lr=1e-5 group_size=4")
    t.add_argument("--print-steps", action="store_true", help="print the reward of every step at the end")


def _config(args):
    """The run's :class:`~solvergym.algorithms.config.TrainConfig`, checked as far as it can be
    without the model: every bad input exits with one line."""
    kwargs = {k: v for k, v in (("model", args.model), ("steps", args.steps),
                                ("out_dir", args.out), ("seed", args.seed), ("data", args.data),
                                ("eval_data", args.eval_data)) if v is not None}
    if args.env is not None:
        kwargs["env"] = env_id(args.env, "--env")
    if args.env_kwargs:
        kwargs["env_kwargs"] = env_kwargs(args.env_kwargs, "--env-kwargs")
    try:
        overrides = parse_kv(args.set, fields=True)
        for key, text in overrides.items():  # each --set item on its own, so the message names it
            if key not in TRL_NAMES:  # TRL's names: checked as the field they name, in make_config
                field_value(key, text)
    except ValueError as e:
        raise SystemExit(f"--set: {e}") from None
    try:
        cfg = make_config(args.algo, file=args.config, overrides=overrides, paper_scale=args.paper_scale, **kwargs)
    except ValueError as e:
        raise SystemExit(f"solvergym train: {e}") from None
    if args.env is None:  # from the preset or a --config file
        cfg.env = env_id(cfg.env, "env")
    try:
        check_model(cfg.model)
    except ValueError as e:
        raise SystemExit(f"{'--model' if args.model is not None else 'model'}: {e}") from None
    return cfg


def cmd_train(args) -> int:
    cfg = _config(args)
    from ..algorithms.trainer import Trainer  # torch and accelerate: only when a run starts, after the checks

    try:  # the envs are made first, so an executor the config names but cannot use stops the run here
        trainer = Trainer(cfg)
    except ExecutorUnavailable as e:
        raise SystemExit(f"solvergym train: {e}") from None
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


def run(argv: list[str]) -> int:
    """``solvergym train ARGV`` as a function (the demo's short run)."""
    p = argparse.ArgumentParser(prog="solvergym train")
    _train_arguments(p)
    return cmd_train(p.parse_args(argv))


def cmd_sft(args) -> int:
    from ..algorithms.sft import SFTConfig, train_sft  # torch and accelerate, as for train

    cfg = SFTConfig(data=args.data, model=args.model, out_dir=args.out)
    try:
        for k, v in parse_kv(args.set, fields=True).items():
            if not hasattr(cfg, k):
                raise ValueError(unknown_key(k, SFTConfig))
            setattr(cfg, k, field_value(k, v, SFTConfig))
        check_model(cfg.model)
    except ValueError as e:
        raise SystemExit(f"solvergym sft: {e}") from None
    history = train_sft(cfg)
    print(f"{len(history)} steps; final loss {history[-1]['loss']:.4f}; model: {cfg.out_dir}/final")
    return 0


def cmd_plot(args) -> int:
    print(plot_run(args.run_dir, args.out))
    return 0


def add_parser(sub) -> None:
    """Add ``train``, ``sft`` and ``plot`` to the ``solvergym`` subcommands."""
    t = sub.add_parser("train", help="train a model against an env (GRPO / DAPO / REINFORCE++)",
                       description="Train a model against an env with a paper's preset (GRPO / DAPO / REINFORCE++).",
                       epilog=field_reference(), formatter_class=argparse.RawDescriptionHelpFormatter)
    _train_arguments(t)
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
