"""``solvergym eval`` and ``solvergym eval compare``: an agent over an env's instances, n samples
each, into a resumable run directory and a report; several such runs side by side.

``eval --env ENV --agent AGENT --out DIR [...]`` runs :func:`solvergym.evaluation.run_eval` and
writes the report (:func:`solvergym.evaluation.write_report`); ``eval compare RUN... [--out DIR]``
puts finished runs in one table (:func:`solvergym.evaluation.report.compare`); ``eval logic-suite
--agent AGENT --out DIR [--mode tool]`` runs one agent on every Synthetic-Logic (family, query[,
solver]) (:func:`solvergym.evaluation.logic_suite.run_logic_suite`). ``compare`` is a
subcommand of ``eval`` whose options live on ``eval`` itself, so ``--env``, ``--agent`` and
``--out`` cannot be argparse-required (they would be demanded of ``compare`` too): ``eval``
checks them when it runs and reports a missing one as argparse would. A run directory another
run holds, records that do not belong to the run (``evaluation/records.py``), a failed start and
an ``--executor`` that cannot run programs (Ray not installed: the install hint; a cluster that
cannot be joined) end with one line, ``solvergym eval: ...``, and status 1; an error raised inside the user's own
code (a ``MODULE:NAME`` agent's ``act``) keeps its traceback (:func:`.args.raised_in_user_code`).
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

from ..envs.logic import FAMILIES as LOGIC_FAMILIES
from ..envs.logic import QUERIES as LOGIC_QUERIES
from ..evaluation import EvalConfig, run_eval, write_report
from ..evaluation.logic_suite import MODES as LOGIC_MODES
from ..evaluation.logic_suite import run_logic_suite
from ..evaluation.records import RunLocked
from ..evaluation.report import compare
from ..kv import parse_kv
from ..sandbox import ExecutorUnavailable
from .args import env_id, raised_in_user_code

__all__ = ["add_parser", "cmd_eval", "cmd_compare", "cmd_logic_suite"]

USAGE = ("%(prog)s --env ENV --agent AGENT --out OUT [options]\n"
         "       %(prog)s compare RUN_DIR [RUN_DIR ...] [--out DIR]")


EPILOG = ("agents: oracle and random (the ground truth, a well-formed random answer), cdcl[:SOLVER] (a CDCL "
          "solver on SolverSAT-v0), logic-lm:SPEC (Logic-LM: the model SPEC names writes formulas, Z3 solves "
          "them), hf:default (the embedded SmolLM2-135M) | hf:PATH, vllm:PATH, openai:URL#MODEL, MODULE:NAME. "
          "Several finished runs side by side: solvergym eval compare RUN_DIR [RUN_DIR ...] [--out DIR].")


class _DefaultsFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """``(default: X)`` after an option's help, unless there is none to show (``None``, a flag's
    ``False``) or the help already says what the default is."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        if action.default is None or action.default is False or "default" in (action.help or ""):
            return action.help
        return super()._get_help_string(action)


def _ints(text: str, flag: str) -> list[int]:
    try:
        return [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise SystemExit(f"{flag}: expected comma-separated integers, got {text!r}") from None


def cmd_eval(args, parser: argparse.ArgumentParser) -> int:
    missing = [flag for flag, value in (("--env", args.env), ("--agent", args.agent), ("--out", args.out))
               if value is None]
    if missing:
        parser.error(f"the following arguments are required: {', '.join(missing)}")
    env = env_id(args.env, "--env")
    try:
        env_kwargs = parse_kv(args.kwargs)
        cfg = EvalConfig(env_id=env, agent=args.agent, env_kwargs=env_kwargs, dataset=args.dataset,
                         instances=args.instances, instance_seed=args.instance_seed, n_samples=args.n_samples,
                         seeds=_ints(args.seeds, "--seeds"), ks=_ints(args.k, "--k"), temperature=args.temperature,
                         max_new_tokens=args.max_new_tokens, batch_instances=args.batch_instances,
                         workers=args.workers, executor=args.executor)
        run = run_eval(cfg, args.out, progress=not args.no_progress)
    except (ValueError, TypeError, RunLocked, ExecutorUnavailable) as e:
        if raised_in_user_code(e):
            raise  # the user's agent or family: its traceback says where
        raise SystemExit(f"solvergym eval: {e}") from None
    by = [x.strip() for x in args.by.split(",") if x.strip()] if args.by else None
    try:
        rep = write_report(run, png=not args.no_plot, by=by)
    except ValueError as e:  # records that are not the run's (evaluation/records.py)
        raise SystemExit(f"solvergym eval: {e}") from None
    print((run / "report.md").read_text())
    print(f"wrote {run / 'records.jsonl'}, {run / 'report.md'}, {run / 'report.json'}"
          + ("" if args.no_plot else f", {run / 'report.png'}"))
    if args.json:
        print(json.dumps(rep["overall"]["metrics"], indent=2))
    return 0


def cmd_compare(args) -> int:
    try:
        text, _ = compare(args.runs, args.out)
    except (ValueError, OSError) as e:
        raise SystemExit(f"solvergym eval compare: {e}") from None
    print(text)
    return 0


def cmd_logic_suite(args) -> int:
    try:
        run_logic_suite(args.agent, args.out, mode=args.mode, instances=args.instances, families=args.families,
                        queries=args.queries, solvers=args.solvers, temperature=args.temperature, max_new_tokens=args.max_new_tokens,
                        progress=not args.no_progress)
    except (ValueError, TypeError, RunLocked) as e:
        if raised_in_user_code(e):
            raise
        raise SystemExit(f"solvergym eval logic-suite: {e}") from None
    print((Path(args.out) / "logic_suite.md").read_text())
    print(f"wrote {Path(args.out) / 'logic_suite.md'} and {Path(args.out) / 'logic_suite.json'}")
    return 0


def add_parser(sub) -> None:
    """Add ``eval`` (with its ``compare`` subcommand) to the ``solvergym`` subcommands."""
    e = sub.add_parser("eval", help="evaluate an agent: pass@k / avg@k / maj@k per level, resumable (JSONL + report); "
                            "eval compare: runs side by side",
                       usage=USAGE, formatter_class=_DefaultsFormatter, epilog=EPILOG,
                       description="Evaluate an agent on an env's instances (pass@k / avg@k / maj@k per level, "
                                   "resumable: JSONL records + report), or compare finished runs (eval compare).")
    e.add_argument("--env", default=None,
                   help="an env id (solvergym list), a family of your own with --import MODULE, or MODULE:ENV-ID "
                        "(required)")
    e.add_argument("--kwargs", nargs="*", metavar="KEY=VALUE", help="env kwargs, e.g. n=3 k=5 l=5 or a JSON object")
    e.add_argument("--agent", default=None,
                   help="oracle, random, cdcl[:SOLVER], logic-lm:SPEC (e.g. logic-lm:hf:default), hf:default | "
                        "hf:PATH, vllm:PATH, openai:URL#MODEL, or MODULE:NAME (your object, class or factory in "
                        "MODULE.py; the working directory is on the path) (required)")
    e.add_argument("--dataset", default=None, help="a JSONL file of instances, or a directory of them")
    e.add_argument("--instances", type=int, default=100, help="generated instances (without --dataset)")
    e.add_argument("--instance-seed", type=int, default=0, help="instance i is reset(seed=instance_seed + i)")
    e.add_argument("--n-samples", type=int, default=1, help="samples per instance and seed (n of pass@k)")
    e.add_argument("--k", default="1", help="comma-separated k of pass@k, avg@k, maj@k, pass^k (each <= n)")
    e.add_argument("--seeds", default="0", help="comma-separated evaluation seeds (mean ± std over them)")
    e.add_argument("--temperature", type=float, default=None,
                   help="model agents (0: greedy; default: the backend's own, 1.0)")
    e.add_argument("--max-new-tokens", type=int, default=256, help="generation budget of one turn (model agents)")
    e.add_argument("--batch-instances", type=int, default=16, help="instances per batch (x n samples)")
    e.add_argument("--workers", type=int, default=None,
                   help="threads stepping a batch's envs (default: 8 where steps wait on the sandbox, else 1; "
                        "more than 1 only for thread-safe envs, not the step-verified logic ones)")
    e.add_argument("--executor", default=None,
                   help="where the env's programs run: ray (Ray actors: the cluster at RAY_ADDRESS, or a new "
                        "local one) or a Ray address such as ray://head:10001 (default: this machine; "
                        "SolverTool-v0 and SolverOR-v0). Needs the ray extra (pip install 'solvergym[ray]'): "
                        "without it the run stops at once with status 1; a cluster that cannot be joined "
                        "stops it at the first program")
    e.add_argument("--out", default=None, help="the run directory (an existing one is resumed; required)")
    e.add_argument("--by", default=None,
                   help="comma-separated difficulty keys to break the report down by (default: all of them)")
    e.add_argument("--no-progress", action="store_true")
    e.add_argument("--no-plot", action="store_true")
    e.add_argument("--json", action="store_true", help="also print the overall metrics as JSON")
    e.set_defaults(fn=lambda args: cmd_eval(args, e))

    commands = e.add_subparsers(title="subcommands", dest="eval_command", metavar="{compare,logic-suite}", prog=e.prog)
    c = commands.add_parser("compare", help="several runs side by side in one table (and a pass@1 bar chart)",
                            description="Several runs of solvergym eval in one table: each run's env, agent, n, "
                                        "seeds and every metric the runs share at their common ks; with --out "
                                        "also compare.md, compare.json and a pass@1 bar chart (compare.png).")
    c.add_argument("runs", nargs="+", metavar="RUN_DIR", help="run directories of solvergym eval")
    c.add_argument("--out", default=None, help="write compare.md, compare.json and compare.png here")
    c.set_defaults(fn=cmd_compare)

    c = commands.add_parser("logic-suite", help="one agent on every Synthetic-Logic family x query (x solver in tool "
                                                "mode): accuracy per cell and per category",
                            description="Evaluate one agent on every Synthetic-Logic (family, query) of "
                                        "SolverLogic-v0, and with --mode tool on every solver that fits: one resumable "
                                        "eval run per cell under --out, logic_suite.md and logic_suite.json.")
    c.add_argument("--agent", required=True, help="an agent spec, as for solvergym eval")
    c.add_argument("--out", required=True, help="the suite's directory (one run directory per cell inside)")
    c.add_argument("--mode", choices=list(LOGIC_MODES), default="single", help="single turn or SAT-RL's tool use")
    c.add_argument("--instances", type=int, default=10, help="generated instances per cell")
    c.add_argument("--families", nargs="+", choices=list(LOGIC_FAMILIES), default=None, help="default: all")
    c.add_argument("--queries", nargs="+", choices=list(LOGIC_QUERIES), default=None, help="default: all")
    c.add_argument("--solvers", nargs="+", default=None,
                   help="tool mode: only these of each family's fitting solvers (default: all that fit)")
    c.add_argument("--temperature", type=float, default=None, help="model agents (0: greedy)")
    c.add_argument("--max-new-tokens", type=int, default=256, help="generation budget of one turn (model agents)")
    c.add_argument("--no-progress", action="store_true")
    c.set_defaults(fn=cmd_logic_suite)
