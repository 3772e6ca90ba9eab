"""The plain-text table of the command line and the benchmark scripts: ``solvergym demo``'s
agent table, ``solvergym check-trace``'s step and summary tables, every ``benchmarks/*.py`` result.

One formatter so that every table the project prints lines up the same way: columns padded to
their widest cell, two spaces apart, a dashed rule under the header, no trailing spaces (the
README quotes these tables). The Markdown tables of ``solvergym eval`` reports are written by
:mod:`.report`.
"""
from __future__ import annotations

from typing import Any, Sequence

__all__ = ["format_table"]


def format_table(rows: Sequence[dict[str, Any]], columns: Sequence[tuple[str, str, str]]) -> str:
    """``rows`` as a plain-text table; ``columns`` are ``(key, header, format spec)``.

    Each cell is ``format(row[key], spec)``: ``".3f"`` for a float, ``"s"`` for a string (a caller
    with missing values formats them itself, e.g. as ``"-"``).
    """
    cells = [[h for _, h, _ in columns]] + [[format(r[k], f) for k, _, f in columns] for r in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(columns))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in cells]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)
