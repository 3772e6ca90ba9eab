"""What more than one command does with its arguments: ``KEY=VALUE`` env kwargs read by
:func:`solvergym.kv.parse_kv`, a malformed item turned into an exit with the flag's name.

``solvergym sample --kwargs``, ``train --env-kwargs`` and ``check-trace --kwargs`` share it, so a
bad item reads the same everywhere: ``--kwargs: expected key=value, got 'k'``.
"""
from __future__ import annotations

from typing import Any

from ..kv import parse_kv

__all__ = ["env_kwargs"]


def env_kwargs(items: list[str] | None, flag: str) -> dict[str, Any]:
    """``--kwargs k=7 l=20`` or ``--kwargs '{"k": 7}'`` as a dict; a bad item exits naming ``flag``."""
    try:
        return parse_kv(items)
    except ValueError as e:
        raise SystemExit(f"{flag}: {e}") from None
