"""``solvergym dataset NAME --out DIR``: build a dataset as JSONL files, one subcommand per builder.

Each subcommand takes only its own builder's flags, and every default is read from the builder's
signature (:func:`builder_default`), so the sizes the papers fix (SAT-Bench's 1,575 / 525, SAT-RL's
1,260 / 139, ...) are written once, in the builder. After a build each file of the manifest is
printed with its record count and the start of its sha256.

========================  ===================================================================
``saturn-2.6k``           SATURN-2.6k: the training levels, same-level test, ten harder levels
``sat-bench``             SAT-Bench-style decision instances, balanced, with variable mappings
``synthetic-logic``       Synthetic-Logic oracle tool trajectories, chat JSONL (SAT-RL §3.2-3.3's SFT data)
``sat-rl-sft``            the same (SAT-RL's warm-up data is Synthetic-Logic, kept apart from the RL task)
``sat-tool-sft``          SolverTool-v0 oracle trajectories of the RL tasks (SAT-Bench, SATURN) as chat JSONL
``or-convert``            a local OR benchmark file as SolverOR-v0 instances (nothing downloaded)
``or-sft``                SolverOR-v0 oracle answers as chat JSONL
``spring-zebra`` etc.     Spring Table 3's splits, built from the generators
========================  ===================================================================
"""
from __future__ import annotations

import inspect
from typing import Any, Callable

from ..agents.logic_sft import build_synthetic_logic
from ..agents.or_sft import build_or_sft
from ..agents.sft_data import build_sat_rl_sft
from ..envs.knights.datasets import build_spring_knights
from ..envs.logic import FAMILIES as LOGIC_FAMILIES
from ..envs.lsat.datasets import build_spring_lsat
from ..envs.opt.datasets import convert_benchmark
from ..envs.opt.problem import OR_SOLVERS
from ..envs.sat.datasets import build_sat_bench, build_saturn_2_6k
from ..envs.zebra.datasets import build_spring_zebra

__all__ = ["add_parser", "builder_default", "cmd_dataset", "SPRING_BUILDERS"]

#: the Spring subcommands and their builders (Spring App. B.1 Table 3)
SPRING_BUILDERS: dict[str, tuple[Callable[..., dict[str, Any]], str]] = {
    "spring-zebra": (build_spring_zebra, "ZebraLogic's splits by difficulty bucket"),
    "spring-lsat": (build_spring_lsat, "AR-LSAT's splits by game type"),
    "spring-knights": (build_spring_knights, "Knights & Knaves' splits by number of characters"),
}


def builder_default(builder: Callable[..., Any], name: str) -> Any:
    """The default of keyword ``name`` in ``builder``'s signature (the one place it is written)."""
    return inspect.signature(builder).parameters[name].default


def _or_convert(args) -> dict[str, Any]:
    try:
        manifest = convert_benchmark(args.input, args.out)
    except (OSError, ValueError) as e:  # a missing, oversized or non-UTF-8 file (bad records are reported)
        raise SystemExit(f"or-convert: {e}") from None
    counts = manifest["counts"]
    print(f"{args.input}: {counts['n_read']} records read, {counts['n_ok']} kept "
          f"({counts['n_infeasible']} infeasible), {counts['n_bad']} bad")
    for bad in manifest["bad"][:10]:
        print(f"  line {bad['line']}: {bad['reason']}")
    return manifest


def cmd_dataset(args) -> int:
    manifest = args.build(args)
    for name, f in manifest["files"].items():
        print(f"{args.out}/{name}: {f['count']} records  sha256 {f['sha256'][:16]}")
    return 0


def _command(commands, name: str, builder: Callable[..., Any] | None, about: str,
             build: Callable[[Any], dict[str, Any]]):
    """A builder's subcommand with ``--out`` (and ``--seed`` when the builder is seeded)."""
    c = commands.add_parser(name, help=about, description=about[0].upper() + about[1:] + ".")
    c.add_argument("--out", required=True, help="the output directory")
    if builder is not None:
        c.add_argument("--seed", type=int, default=builder_default(builder, "seed"),
                       help="the same seed writes the same bytes (default %(default)s)")
    c.set_defaults(fn=cmd_dataset, build=build)
    return c


def add_parser(sub) -> None:
    """Add ``dataset`` and its one subcommand per builder to the ``solvergym`` subcommands."""
    d = sub.add_parser("dataset", help="build a dataset as JSONL files",
                       description="Build a dataset as JSONL files (with a manifest.json of counts and sha256).")
    commands = d.add_subparsers(title="datasets", dest="name", metavar="NAME", required=True)

    c = _command(commands, "saturn-2.6k", build_saturn_2_6k,
                 "SATURN-2.6k: the training levels, same-level test instances and ten harder test levels",
                 lambda a: build_saturn_2_6k(a.out, seed=a.seed, max_chance_success=a.max_chance_success))
    c.add_argument("--max-chance-success", type=float,
                   default=builder_default(build_saturn_2_6k, "max_chance_success"),
                   help="reject instances a random guess solves more often than this (default: keep all)")

    c = _command(commands, "sat-bench", build_sat_bench,
                 "SAT-Bench-style decision instances, balanced, with variable mappings",
                 lambda a: build_sat_bench(a.out, seed=a.seed, n_train=a.n_train, n_test=a.n_test))
    c.add_argument("--n-train", type=int, default=builder_default(build_sat_bench, "n_train"),
                   help="training records (default %(default)s, as in SAT-RL)")
    c.add_argument("--n-test", type=int, default=builder_default(build_sat_bench, "n_test"),
                   help="test records (default %(default)s)")

    for name, about in (("synthetic-logic", "Synthetic-Logic: oracle SolverTool-v0 trajectories of every family x "
                                             "query x fitting solver, chat JSONL (SAT-RL §3.2-3.3's SFT data)"),
                        ("sat-rl-sft", "SAT-RL's SFT warm-up data: the synthetic-logic dataset")):
        c = _command(commands, name, build_synthetic_logic, about,
                     lambda a: build_synthetic_logic(a.out, seed=a.seed, per_combo=a.per_combo,
                                                     test_fraction=a.test_fraction, families=a.families))
        c.add_argument("--per-combo", type=int, default=builder_default(build_synthetic_logic, "per_combo"),
                       help="instances per (family, query, solver) (default %(default)s, as in SAT-RL)")
        c.add_argument("--test-fraction", type=float, default=builder_default(build_synthetic_logic, "test_fraction"),
                       help="the share of records in test.jsonl (default %(default)s)")
        c.add_argument("--families", nargs="+", choices=list(LOGIC_FAMILIES), default=None,
                       help="only these families (default: all)")

    c = _command(commands, "sat-tool-sft", build_sat_rl_sft,
                 "SolverTool-v0 oracle trajectories of the RL tasks (SAT-Bench, SATURN) as chat JSONL",
                 lambda a: build_sat_rl_sft(a.out, seed=a.seed, n_train=a.n_train, n_test=a.n_test))
    c.add_argument("--n-train", type=int, default=builder_default(build_sat_rl_sft, "n_train"),
                   help="training trajectories (default %(default)s)")
    c.add_argument("--n-test", type=int, default=builder_default(build_sat_rl_sft, "n_test"),
                   help="test trajectories (default %(default)s)")

    c = _command(commands, "or-convert", None,
                 "a local OR benchmark file ({en_question, en_answer} JSONL or JSON array: NL4OPT, MAMO, "
                 "IndustryOR, OptMATH, OptiBench) as SolverOR-v0 instances; nothing is downloaded",
                 _or_convert)
    c.add_argument("--input", required=True, help="the benchmark file to convert")

    c = _command(commands, "or-sft", build_or_sft, "SolverOR-v0 oracle answers as chat JSONL",
                 lambda a: build_or_sft(a.out, n=a.n, seed=a.seed, solver=a.solver, test_fraction=a.test_fraction))
    c.add_argument("--n", type=int, default=builder_default(build_or_sft, "n"),
                   help="records in all, train and test (default %(default)s)")
    c.add_argument("--solver", choices=list(OR_SOLVERS), default=builder_default(build_or_sft, "solver"),
                   help="the solver library the prompts ask for and the oracle's programs use (default %(default)s)")
    c.add_argument("--test-fraction", type=float, default=builder_default(build_or_sft, "test_fraction"),
                   help="the share of records in test.jsonl (default %(default)s)")

    for name, (builder, about) in SPRING_BUILDERS.items():
        c = _command(commands, name, builder, f"Spring Table 3: {about}, from the generators",
                     lambda a, builder=builder: builder(a.out, seed=a.seed, scale=a.scale))
        c.add_argument("--scale", type=float, default=builder_default(builder, "scale"),
                       help="every split's size times this (default %(default)s)")
