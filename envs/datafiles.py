"""Dataset files as every builder writes them: byte-stable JSONL with its sha256, and one
independent seeded stream per part of a dataset.

A builder's manifest records each file's sha256, so the same seed must write the same bytes:
records go one per line with ``\\n`` endings in UTF-8, in a fixed key order. A file drawn from
its own stream (``stream_rng(seed, *parts)``: a level, a split, a category) does not depend on
which other files were built or how large they are.
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, Iterable

import numpy as np

__all__ = ["write_lines", "write_jsonl", "stream_rng"]


def write_lines(path: str | Path, lines: Iterable[str]) -> str:
    """Write ``lines`` with ``\\n`` endings (parent folders made); return the file's sha256."""
    data = "".join(line + "\n" for line in lines).encode("utf-8")
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return hashlib.sha256(data).hexdigest()


def write_jsonl(path: str | Path, records: Iterable[dict[str, Any]]) -> str:
    """Write records one per line (their key order, non-ASCII kept); return the file's sha256."""
    return write_lines(path, (json.dumps(r, ensure_ascii=False) for r in records))


def stream_rng(seed: int, *parts: int) -> np.random.Generator:
    """The independent stream of one part of a dataset (``SeedSequence([seed, *parts])``)."""
    return np.random.default_rng(np.random.SeedSequence([seed, *parts]))
