"""What more than one command does with its arguments: ``KEY=VALUE`` env kwargs read by
:func:`solvergym.kv.parse_kv`, env ids and ``--import`` modules, each bad one turned into a
one-line exit that names the flag.

``solvergym sample --kwargs``, ``train --env-kwargs`` and ``check-trace --kwargs`` share
:func:`env_kwargs`, so a bad item reads the same everywhere: ``--kwargs: expected key=value, got 'k'``.
Every command that takes an env id takes it through :func:`env_id` (any id a solvergym mode serves,
a family of one's own included, in Gymnasium's ``module:Env-v0`` form too), and every command has
``--import MODULE`` (:func:`add_import`, :func:`import_modules`): the user's modules, imported with
the working directory on ``sys.path`` before the command runs, so that their
``register_problem(..., env_id=...)`` calls have registered their ids.

A command turns the ``ValueError`` / ``TypeError`` of bad input into one line, but an error
raised inside the user's own code (an agent's ``act``, a family's ``generate``) is the user's to
debug: :func:`raised_in_user_code` tells them apart, and such an error keeps its traceback.
"""
from __future__ import annotations

import argparse
import os
import site
import sys
import sysconfig
from types import TracebackType
from typing import Any, Iterable

from ..kv import parse_kv
from ..registry import import_user_module, resolve_env_id

__all__ = ["env_kwargs", "env_id", "add_import", "import_modules", "raised_in_user_code"]


def env_kwargs(items: list[str] | None, flag: str) -> dict[str, Any]:
    """``--kwargs k=7 l=20`` or ``--kwargs '{"k": 7}'`` as a dict; a bad item exits naming ``flag``."""
    try:
        return parse_kv(items)
    except ValueError as e:
        raise SystemExit(f"{flag}: {e}") from None


def env_id(text: str, flag: str) -> str:
    """The registered id ``text`` names (:func:`solvergym.registry.resolve_env_id`); an unknown
    one exits with one line naming ``flag``, the closest ids and the known ones."""
    try:
        return resolve_env_id(text)
    except ValueError as e:
        raise SystemExit(f"{flag}: {e}") from None


def add_import(parser: argparse.ArgumentParser, dest: str = "imports") -> None:
    """Give ``parser`` the repeatable ``--import MODULE``. Not set unless given (a nested
    subcommand's default would otherwise overwrite what its parent command read); ``solvergym
    --import M CMD`` stores under its own ``dest``, so that a command's own ``--import`` adds to it."""
    parser.add_argument("--import", dest=dest, action="append", metavar="MODULE", default=argparse.SUPPRESS,
                        help="import MODULE first (repeatable; the working directory is on the path): "
                             "a module that registers a family of your own with register_problem(..., env_id=...)")


def import_modules(names: Iterable[str] | None) -> None:
    """Import each ``--import`` module; one that is not found exits with one line."""
    for name in names or ():
        try:
            import_user_module(name)
        except ValueError as e:
            raise SystemExit(f"--import: {e}") from None


def _installed_roots() -> tuple[str, ...]:
    """Where Python's own and installed packages' files live (not the user's code)."""
    roots = {sys.prefix, sys.base_prefix, sys.exec_prefix, *sysconfig.get_paths().values(), *site.getsitepackages()}
    return tuple(os.path.join(os.path.realpath(r), "") for r in roots if r)


def _is_user_frame(tb: TracebackType, roots: tuple[str, ...]) -> bool:
    """A frame of the user's code: not solvergym's (by module name; ``-m`` runs keep theirs in
    ``__spec__``), not Python's or an installed package's, not generated (``<string>``)."""
    frame = tb.tb_frame
    spec = frame.f_globals.get("__spec__")
    module = getattr(spec, "name", None) or frame.f_globals.get("__name__", "")
    path = frame.f_code.co_filename
    if module == "solvergym" or module.startswith("solvergym.") or path.startswith("<"):
        return False
    return not os.path.realpath(path).startswith(roots)


def raised_in_user_code(error: BaseException) -> bool:
    """Whether ``error`` (or an error it was raised from) went through a frame of the user's own
    code, such as an agent's ``act`` (:func:`_is_user_frame`)."""
    roots, seen = _installed_roots(), set()
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        tb = error.__traceback__
        while tb is not None:
            if _is_user_frame(tb, roots):
                return True
            tb = tb.tb_next
        error = error.__cause__ or error.__context__
    return False
