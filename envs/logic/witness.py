"""Reading and writing the solving query's answers: whole numbers separated by spaces, commas or
newlines (a vertex set, a colour per vertex, a grid's rows). Bounded: an answer longer than
:data:`MAX_WITNESS_CHARS` is refused before it is split."""
from __future__ import annotations

import re
from typing import Sequence

__all__ = ["MAX_WITNESS_CHARS", "parse_ints", "format_ints"]

MAX_WITNESS_CHARS = 4096
_SEP = re.compile(r"[\s,;]+")


def parse_ints(text: str, *, length: int | None = None) -> tuple[list[int] | None, str]:
    """``(numbers, "")`` or ``(None, why)``; ``length``: how many there must be."""
    body = text.strip().strip("`'\"[]()")
    if len(body) > MAX_WITNESS_CHARS:
        return None, f"the answer is longer than {MAX_WITNESS_CHARS} characters"
    words = [w for w in _SEP.split(body) if w]
    if not words:
        return None, "the answer is empty"
    if not all(w.isdigit() and len(w) <= 6 for w in words):
        bad = next(w for w in words if not (w.isdigit() and len(w) <= 6))
        return None, f"{bad[:20]!r} is not a whole number"
    if length is not None and len(words) != length:
        return None, f"expected {length} numbers, got {len(words)}"
    return [int(w) for w in words], ""


def format_ints(values: Sequence[int]) -> str:
    return " ".join(str(int(v)) for v in values)
