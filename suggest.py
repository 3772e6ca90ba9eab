"""The "did you mean" of every one-line error about a name: the closest known names, as text.

``solvergym --env SolverSat-v0``, ``--set grup_size=8``, ``--agent mymod:MyAgnt`` and a config
value outside its choices all say it the same way, through :func:`did_you_mean`.
"""
from __future__ import annotations

import difflib
from typing import Iterable

__all__ = ["did_you_mean"]


def did_you_mean(word: str, known: Iterable[str], *, n: int = 3, cutoff: float = 0.6,
                 ignore_case: bool = False) -> str:
    """``"did you mean 'a' or 'b'?"`` for the up to ``n`` names of ``known`` closest to ``word``
    (:func:`difflib.get_close_matches`; ``ignore_case``: compared in lower case, shown as known),
    or ``""`` when none is close enough."""
    known = list(known)
    if ignore_case:
        lower = {k.lower(): k for k in known}
        close = [lower[c] for c in difflib.get_close_matches(str(word).lower(), list(lower), n=n, cutoff=cutoff)]
    else:
        close = difflib.get_close_matches(str(word), known, n=n, cutoff=cutoff)
    return f"did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
