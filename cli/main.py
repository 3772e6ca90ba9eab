"""The ``solvergym`` command: the parser, built from one module per command group, and the dispatch.

=====================  ==============================================================
module                 subcommands
=====================  ==============================================================
:mod:`.explore`        ``list``, ``sample``, ``demo``
:mod:`.dataset`        ``dataset NAME`` (one subcommand per builder)
:mod:`.train`          ``train`` (its ``--help`` lists every config field), ``sft``, ``plot``
:mod:`.check_trace`    ``check-trace``
:mod:`.evaluate`       ``eval``, ``eval compare``
=====================  ==============================================================

Each module's ``add_parser(sub)`` adds its subcommands and sets ``fn``, the function that runs
the parsed command and returns the exit status.
"""
from __future__ import annotations

import argparse
import sys

from . import check_trace, dataset, evaluate, explore, train

__all__ = ["build_parser", "main"]

DESCRIPTION = ("Gymnasium text environments with solver-verified rewards: list, sample, demo, dataset, "
               "train, sft, plot, check-trace, eval (and eval compare).")


def build_parser() -> argparse.ArgumentParser:
    """The whole ``solvergym`` parser (nothing is run)."""
    p = argparse.ArgumentParser(prog="solvergym", description=DESCRIPTION)
    sub = p.add_subparsers(dest="cmd", required=True)
    for group in (explore, dataset, train, check_trace, evaluate):
        group.add_parser(sub)
    return p


def main(argv: list[str] | None = None) -> int:
    """Parse ``argv`` (default: the process's arguments) and run the command; its exit status."""
    args = build_parser().parse_args(sys.argv[1:] if argv is None else list(argv))
    return args.fn(args)
