"""Trace metrics of Spring App. B.2 and Table 2.

Per trace (:func:`trace_row`): the family's accuracy metrics (Zebra Puzzle Acc and Cell Acc,
Knights Puzzle Acc and Person Acc, AR-LSAT Acc with its game type), whether the parsed premises
are SAT (Spring's s_sat: satisfiable and, for Zebra and Knights, unique; ``gate`` is the gate the
process reward actually used, by default also equivalence to the true clues), #Steps
(``reasoning`` entries, natural-language and formal, as Spring's Tables 2 and 9 count them),
Parsed, Valid, Novel and Contradictions. Parsed/Total is Table 2's ratio, whose Total counts the
natural-language entries too: a perfect interleaved trace has 0.5 (Spring's own best is 0.495).
Parsed/Formal (``parsed_per_formal``, not in the paper) is the share of the ``S<k>`` steps that
parse: 1.0 for a perfect trace.

Zebra and Knights rows also carry the counts behind Cell Acc and Person Acc (``cells_right`` /
``cells_total``, ``persons_right`` / ``persons_total``).

Over traces (:func:`summarize`), for all traces and separately for solved and failed ones as in
Table 2: Cell Acc and Person Acc over all cells / characters, as App. B.2 (b) and (e) define
them (sum of right ones over the sum of ``M_i``; the mean of the per-puzzle ratios, which lets a
2x2 weigh as much as a 6x6, is kept as ``cell_acc_macro`` / ``person_acc_macro``); the mean of
every other accuracy metric (Puzzle Acc, Acc: one unit per puzzle, so both readings agree);
SAT-rate (mean s_sat), mean #Steps, Parsed/Total and
Valid/Parsed (means of the per-trace ratios over traces where they are defined), mean #Novel,
and Contradictions per 100 steps (100 x total contradictions / total #Steps). AR-LSAT also gets
Acc per game type (ordering, grouping, assignment), as Table 1 reports it.
"""
from __future__ import annotations

from typing import Any, Iterable

__all__ = ["trace_row", "summarize", "TABLE2_COLUMNS", "MICRO_METRICS"]

#: App. B.2's unit-level accuracies: metric -> (right count, total count) of each row
MICRO_METRICS = {
    "cell_acc": ("cells_right", "cells_total"),  # (b) Cell Acc
    "person_acc": ("persons_right", "persons_total"),  # (e) Person Acc
}

#: (key, header, format) of the Table 2 columns, for printing
TABLE2_COLUMNS = [
    ("n", "traces", "d"),
    ("sat_rate", "SAT-rate", ".3f"),
    ("steps", "#Steps", ".2f"),
    ("parsed_per_total", "Parsed/Total", ".3f"),
    ("parsed_per_formal", "Parsed/Formal", ".3f"),
    ("valid_per_parsed", "Valid/Parsed", ".3f"),
    ("novel", "#Novel", ".2f"),
    ("contradictions_per_100", "Contra/100 steps", ".2f"),
]


def trace_row(res: Any) -> dict[str, Any]:
    """The numbers of one :class:`~.trace.TraceResult`."""
    return {
        "correct": bool(res.correct),
        "error_type": res.error_type,
        "reward": float(res.reward),
        "sat": bool(res.spring_sat),
        "gate": bool(res.s_sat),
        "premises_sat": bool(res.base_sat),
        "premises_equivalent": res.premises_equivalent,
        "consistent": res.consistent,
        "steps": int(res.n_entries),
        "formal": int(res.n_formal),
        "parsed": int(res.n_parsed),
        "valid": int(res.n_valid),
        "novel": int(res.n_novel),
        "contradictions": int(res.n_contra),
        **{k: (v if isinstance(v, int) else float(v)) for k, v in res.metrics.items()
           if isinstance(v, (int, float)) and not isinstance(v, bool)},
        **{k: v for k, v in res.metrics.items() if isinstance(v, str)},
    }


def _mean(xs: list[float]) -> float | None:
    return sum(xs) / len(xs) if xs else None


def _micro(rows: list[dict[str, Any]], key: str) -> float | None:
    """App. B.2's sum of right units over the sum of units, over the rows that report ``key``;
    None when one of them lacks the counts (a row written without them)."""
    right, total = MICRO_METRICS[key]
    having = [r for r in rows if key in r]
    if any(right not in r or total not in r for r in having):
        return None
    n = sum(r[total] for r in having)
    return sum(r[right] for r in having) / n if n else None


def _group(rows: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {"n": len(rows)}
    if not rows:
        return out
    metric_keys = sorted({k for r in rows for k, v in r.items()
                          if k.endswith("_acc") or k == "acc"})
    for k in metric_keys:
        if k in MICRO_METRICS:
            out[k], out[f"{k}_macro"] = _micro(rows, k), _mean([r[k] for r in rows if k in r])
        else:
            out[k] = _mean([r[k] for r in rows if k in r])
    out["sat_rate"] = _mean([float(r["sat"]) for r in rows])
    out["gate_rate"] = _mean([float(r.get("gate", r["sat"])) for r in rows])
    out["premises_sat_rate"] = _mean([float(r["premises_sat"]) for r in rows])
    eq = [float(r["premises_equivalent"]) for r in rows if r.get("premises_equivalent") is not None]
    out["premises_equivalent_rate"] = _mean(eq)
    out["steps"] = _mean([r["steps"] for r in rows])
    out["parsed_per_total"] = _mean([r["parsed"] / r["steps"] for r in rows if r["steps"]])
    # Parsed/Total counts sentences too (at most 0.5 for an interleaved trace): the share of the
    # formal steps that parse says how well-formed the formal part is on its own
    out["parsed_per_formal"] = _mean([r["parsed"] / r["formal"] for r in rows if r.get("formal")])
    out["valid_per_parsed"] = _mean([r["valid"] / r["parsed"] for r in rows if r["parsed"]])
    out["novel"] = _mean([r["novel"] for r in rows])
    total_steps = sum(r["steps"] for r in rows)
    out["contradictions_per_100"] = (100.0 * sum(r["contradictions"] for r in rows) / total_steps
                                     if total_steps else None)
    out["reward"] = _mean([r["reward"] for r in rows])
    types: dict[str, int] = {}
    for r in rows:
        types[r["error_type"]] = types.get(r["error_type"], 0) + 1
    out["error_types"] = types
    return out


def summarize(rows: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """Table 2 / App. B.2 over traces: ``{"all": ..., "solved": ..., "failed": ...}`` and, where
    rows carry a ``game`` (AR-LSAT), ``acc_<game>`` in ``all``."""
    rows = list(rows)
    out = {"all": _group(rows), "solved": _group([r for r in rows if r["correct"]]),
           "failed": _group([r for r in rows if not r["correct"]])}
    games = sorted({r["game"] for r in rows if "game" in r})
    for g in games:
        out["all"][f"acc_{g}"] = _mean([float(r["correct"]) for r in rows if r.get("game") == g])
    return out
