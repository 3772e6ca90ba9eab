"""``solvergym check-trace ENV_ID traces.jsonl``: the front end of :mod:`solvergym.envs.logic_steps.check_trace`.

Scores every trace of the JSONL file (see that module for the line format), prints a per-step
table (trace, S<k>, verdict, formula, reason) and the Table 2 / App. B.2 metrics for all, solved
and failed traces, and writes the JSON report with every verdict (default
``<traces>.report.json``). A line that cannot be checked (not JSON, nested deeper than the
loaders' 32 levels, no instance or output, an instance the env refuses) is reported, not fatal:
counted under the tables ("N line(s) could not be checked"), its line number and reason in the
JSON report, and the exit status stays 0. Exit status 2 when the env is not one check-trace
handles or a file cannot be read or written.

:func:`add_parser` adds the subcommand; :func:`run` is the same as a function (tables on
``stream``); :func:`format_report` the tables of a report.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any, TextIO

from ..envs.logic_steps.check_trace import check_trace, write_report
from ..envs.logic_steps.metrics import MICRO_METRICS, TABLE2_COLUMNS
from ..evaluation.tables import format_table
from ..registry import resolve_env_id
from .args import env_kwargs

__all__ = ["add_parser", "format_report", "run"]

#: the per-step table: (key, header) of each column, every cell a string
STEP_COLUMNS = [(k, k, "s") for k in ("trace", "step", "verdict", "formula", "reason")]


def _fmt(v: Any, spec: str) -> str:
    if v is None:
        return "-"
    return format(v, spec)


def _cut(text: str, max_chars: int | None) -> str:
    if max_chars is None or len(text) <= max_chars:
        return text
    return text[:max(max_chars - 3, 1)] + "..."


def format_report(report: dict[str, Any], *, steps: bool = True, max_chars: int | None = None) -> str:
    """The per-step table (``steps``) and the summary table of a :func:`check_trace` report;
    ``max_chars`` cuts formulas and reasons (with "..."), by default nothing is cut."""
    out = []
    if steps:
        rows = []
        for t in report["traces"]:
            if "error" in t and "steps" not in t:
                rows.append({"trace": str(t["id"]), "step": "", "verdict": "error", "formula": "",
                             "reason": _cut(t["error"], max_chars)})
                continue
            if not t["steps"]:
                rows.append({"trace": str(t["id"]), "step": "", "verdict": t["error_type"], "formula": "",
                             "reason": _cut(t["reason"], max_chars)})
            for v in t["steps"]:
                rows.append({"trace": str(t["id"]), "step": f"S{v['k'] if v['k'] is not None else '?'}",
                             "verdict": v["label"], "formula": _cut(v["formula"] or v["text"] or "", max_chars),
                             "reason": _cut(v["reason"], max_chars)})
        out.append(format_table(rows, STEP_COLUMNS))
        out.append("")
    summary = report["summary"]
    acc_keys = sorted({k for g in summary.values() for k in g if k.endswith("_acc") or k.startswith("acc")})
    cols = [("n", "traces", "d")] + [(k, k, ".3f") for k in acc_keys] + TABLE2_COLUMNS[1:]
    rows = [{"group": name, **{k: _fmt(summary[name].get(k), f) for k, _, f in cols}}
            for name in ("all", "solved", "failed")]
    out.append(format_table(rows, [("group", "group", "s")] + [(k, h, "s") for k, h, _ in cols]))
    out.append("\nParsed/Total is Spring's Table 2 ratio: Total counts the sentences too, so a perfect "
               "interleaved trace has 0.500; Parsed/Formal is the share of the S<k> steps that parse")
    micro = [k for k in MICRO_METRICS if k in acc_keys]
    if micro:
        units = " and ".join(MICRO_METRICS[k][1].removesuffix("_total") for k in micro)
        out.append(f"\n{', '.join(micro)}: over all {units} (App. B.2); the means of the per-trace "
                   f"ratios are {', '.join(k + '_macro' for k in micro)} in the JSON report")
    mean_reward = summary["all"].get("reward")
    out.append(f"\nmean reward {_fmt(mean_reward, '.3f')}; error types {summary['all'].get('error_types', {})}")
    if report["bad_lines"]:
        out.append(f"{report['bad_lines']} line(s) could not be checked (see the JSON report)")
    return "\n".join(out)


def run(
    env_id: str,
    path: str | Path,
    out_json: str | Path | None = None,
    *,
    env_kwargs: dict[str, Any] | None = None,
    stream: TextIO | None = None,
    max_chars: int | None = None,
) -> dict[str, Any]:
    """:func:`check_trace`, its tables printed on ``stream`` (stdout), then the JSON written."""
    report = check_trace(env_id, path, env_kwargs=env_kwargs)
    print(format_report(report, max_chars=max_chars), file=stream or sys.stdout)
    if out_json is not None:
        write_report(report, out_json)
        print(f"\nwrote {out_json}", file=stream or sys.stdout)
    return report


def cmd_check_trace(args: argparse.Namespace) -> int:
    out = args.out if args.out is not None else str(Path(args.traces).with_suffix("")) + ".report.json"
    kwargs = env_kwargs(args.kwargs, "--kwargs")
    if args.reward:
        kwargs["reward"] = args.reward
    try:
        run(resolve_env_id(args.env_id), args.traces, out, env_kwargs=kwargs, max_chars=args.max_chars)
    except (KeyError, OSError) as e:
        print(f"check-trace: {e}", file=sys.stderr)
        return 2
    return 0


def add_parser(sub: Any) -> argparse.ArgumentParser:
    """Add ``check-trace`` to an ``argparse`` subparsers object."""
    p = sub.add_parser(
        "check-trace", help="verify reasoning traces step by step (Spring Definitions 1-6) and print Table 2 metrics",
        description="Verify every trace of a JSONL file step by step (Spring Definitions 1-6), print the per-step "
                    "table and the Table 2 metrics, and write the JSON report. A line that cannot be checked "
                    "(not JSON, nested too deep, no instance or output) is reported with its line number and "
                    "reason, and the others are still scored: exit status 0. Status 2: an env check-trace does "
                    "not handle, or a file that cannot be read or written.")
    p.add_argument("env_id", help="SolverZebra-v0, SolverKnights-v0 or SolverLSAT-v0")
    p.add_argument("traces", help='JSONL file: one {"instance": ..., "output": ...} per line')
    p.add_argument("--out", default=None, help="JSON report path (default: <traces>.report.json)")
    p.add_argument("--reward", default=None, help="reward preset: spring, or_int, or_nl, minus_n, minus_nc")
    p.add_argument("--kwargs", nargs="*", metavar="KEY=VALUE", help="env kwargs, e.g. aggregation=any")
    p.add_argument("--max-chars", type=int, default=None, metavar="N",
                   help="cut formulas and reasons in the step table to N characters (default: nothing is cut)")
    p.set_defaults(fn=cmd_check_trace)
    return p
