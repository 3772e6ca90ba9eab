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
the parsed command and returns the exit status. Every subcommand (nested ones too) gets
``--import MODULE`` here, once: the modules are imported before the command runs (:mod:`.args`).
"""
from __future__ import annotations

import argparse
import sys

from . import check_trace, dataset, evaluate, explore, serve, train
from .args import add_import, import_modules

__all__ = ["build_parser", "main"]

DESCRIPTION = ("Gymnasium text environments with solver-verified rewards: list, sample, demo, dataset, "
               "train, sft, plot, check-trace, eval (and eval compare: runs side by side), serve (OpenEnv).")

EPILOG = ("Agents (eval --agent): oracle, random, cdcl[:SOLVER], logic-lm:SPEC (Logic-LM driving the model "
          "SPEC names, e.g. logic-lm:hf:default), hf:default | hf:PATH, vllm:PATH, openai:URL#MODEL, or "
          "MODULE:NAME (your own agent object, class or factory). A family of your own: register it with "
          "register_problem(..., env_id='MyEnv-v0') in mymodule.py, then --import mymodule on any command, or "
          "--env mymodule:MyEnv-v0. Each command's --help lists its options.")


def build_parser() -> argparse.ArgumentParser:
    """The whole ``solvergym`` parser (nothing is run)."""
    p = argparse.ArgumentParser(prog="solvergym", description=DESCRIPTION, epilog=EPILOG)
    add_import(p, dest="imports_first")  # solvergym --import M CMD ...
    sub = p.add_subparsers(dest="cmd", required=True)
    for group in (explore, dataset, train, check_trace, evaluate, serve):
        group.add_parser(sub)
    for command in _subcommands(sub):
        add_import(command)
    return p


def _subcommands(sub: argparse._SubParsersAction) -> list[argparse.ArgumentParser]:
    """Every parser below ``sub``: the commands and their own subcommands (``eval compare``)."""
    out = []
    for parser in dict.fromkeys(sub.choices.values()):  # an alias maps to its command's parser
        out.append(parser)
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                out += _subcommands(action)
    return out


def main(argv: list[str] | None = None) -> int:
    """Parse ``argv`` (default: the process's arguments) and run the command; its exit status."""
    args = build_parser().parse_args(sys.argv[1:] if argv is None else list(argv))
    import_modules([*getattr(args, "imports_first", ()), *getattr(args, "imports", ())])
    return args.fn(args)
