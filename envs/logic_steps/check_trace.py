"""Offline "stepwise evaluation of reasoning traces": ``solvergym check-trace ENV_ID traces.jsonl``.

Each line of the JSONL file is an object with the instance and the model's output::

    {"id": "optional", "instance": {...the env's instance, as a dict or JSON text...},
     "output": "<answer>{...}</answer>"}

(``completion`` or ``response`` are accepted for ``output``.) Every output is verified as in trace
mode (Spring §4.2-4.3); the command prints a per-step table (trace, S<k>, verdict, formula,
reason) and the Table 2 / App. B.2 metrics for all, solved and failed traces (Cell Acc and
Person Acc over all cells / characters, as App. B.2 defines them), and writes a JSON report with
every verdict. Lines that cannot be read are reported, not fatal.

:func:`check_trace` is the library entry point; :func:`add_cli` adds the subcommand to an
``argparse`` subparsers object (``solvergym.cli`` wires it in).
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, TextIO

from .metrics import MICRO_METRICS, TABLE2_COLUMNS, summarize, trace_row

__all__ = ["ENV_CLASSES", "make_env", "check_trace", "add_cli", "format_report"]

ENV_CLASSES = {
    "SolverZebra-v0": "solvergym.envs.zebra.env:ZebraEnv",
    "SolverKnights-v0": "solvergym.envs.knights.env:KnightsEnv",
    "SolverLSAT-v0": "solvergym.envs.lsat.env:LSATEnv",
}


def make_env(env_id: str, **kwargs: Any):
    """The unwrapped env for ``env_id`` (trace mode), registered or not."""
    import importlib

    import gymnasium as gym

    name = env_id.split(":", 1)[1] if env_id.startswith("solvergym:") else env_id
    if name in gym.registry:
        return gym.make(name, **kwargs).unwrapped
    if name not in ENV_CLASSES:
        raise KeyError(f"check-trace handles {sorted(ENV_CLASSES)}, not {env_id!r}")
    module, _, cls = ENV_CLASSES[name].partition(":")
    return getattr(importlib.import_module(module), cls)(**kwargs)


def _table(rows: list[list[str]], headers: list[str]) -> str:
    cells = [headers] + rows
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in cells]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def _fmt(v: Any, spec: str) -> str:
    if v is None:
        return "-"
    return format(v, spec)


def format_report(report: dict[str, Any], *, steps: bool = True, max_chars: int = 60) -> str:
    out = []
    if steps:
        rows = []
        for t in report["traces"]:
            if "error" in t and "steps" not in t:
                rows.append([str(t["id"]), "", "error", "", t["error"][:max_chars]])
                continue
            if not t["steps"]:
                rows.append([str(t["id"]), "", t["error_type"], "", t["reason"][:max_chars]])
            for v in t["steps"]:
                rows.append([str(t["id"]), f"S{v['k'] if v['k'] is not None else '?'}", v["label"],
                             (v["formula"] or v["text"] or "")[:max_chars], v["reason"][:max_chars]])
        out.append(_table(rows, ["trace", "step", "verdict", "formula", "reason"]))
        out.append("")
    summary = report["summary"]
    acc_keys = sorted({k for g in summary.values() for k in g if k.endswith("_acc") or k.startswith("acc")})
    cols = [("n", "traces", "d")] + [(k, k, ".3f") for k in acc_keys] + TABLE2_COLUMNS[1:]
    rows = [[name] + [_fmt(summary[name].get(k), f) for k, _, f in cols] for name in ("all", "solved", "failed")]
    out.append(_table(rows, ["traces"] + [h for _, h, _ in cols]))
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


def check_trace(
    env_id: str,
    path: str | Path,
    out_json: str | Path | None = None,
    *,
    env_kwargs: dict[str, Any] | None = None,
    print_table: bool = True,
    stream: TextIO | None = None,
) -> dict[str, Any]:
    """Verify every trace of ``path``; print the tables; write and return the report."""
    env = make_env(env_id, **{**(env_kwargs or {}), "mode": "trace"})
    traces, rows, bad = [], [], 0
    with open(path, encoding="utf-8", errors="replace") as f:
        for lineno, line in enumerate(f, 1):
            if not line.strip():
                continue
            tid: Any = lineno
            try:
                rec = json.loads(line)
                if not isinstance(rec, dict):
                    raise ValueError("a line must be a JSON object")
                tid = rec.get("id", lineno)
                output = next((rec[k] for k in ("output", "completion", "response") if k in rec), None)
                if not isinstance(output, str):
                    raise ValueError('no "output" string')
                if "instance" not in rec:
                    raise ValueError('no "instance"')
                env.reset(options={"instance": rec["instance"]})
                res = env.score(output)
            except (ValueError, TypeError, KeyError) as e:
                bad += 1
                traces.append({"id": tid, "line": lineno, "error": f"{type(e).__name__}: {e}"[:300]})
                continue
            row = trace_row(res)
            rows.append(row)
            traces.append({"id": tid, "line": lineno, "instance_id": env.instance.instance_id, **row,
                           "components": res.components, "signals": res.signals(), "reason": res.reason,
                           "error": res.error, "format_issues": res.format_issues,
                           "parse_issues": res.parse_issues, "steps": [v.as_dict() for v in res.steps]})
    report = {"env_id": env_id, "path": str(path), "reward_preset": env.reward_config.name,
              "n": len(rows), "bad_lines": bad, "summary": summarize(rows), "traces": traces}
    if print_table:
        print(format_report(report), file=stream or sys.stdout)
    if out_json is not None:
        Path(out_json).parent.mkdir(parents=True, exist_ok=True)
        Path(out_json).write_text(json.dumps(report, indent=1, ensure_ascii=False, default=str) + "\n")
        if print_table:
            print(f"\nwrote {out_json}", file=stream or sys.stdout)
    return report


def _cmd(args: argparse.Namespace) -> int:
    out = args.out if args.out is not None else str(Path(args.traces).with_suffix("")) + ".report.json"
    from ...cli import parse_kv

    kwargs = parse_kv(args.kwargs)
    if args.reward:
        kwargs["reward"] = args.reward
    try:
        check_trace(args.env_id, args.traces, out, env_kwargs=kwargs, print_table=True)
    except (KeyError, OSError) as e:
        print(f"check-trace: {e}", file=sys.stderr)
        return 2
    return 0


def add_cli(subparsers: Any) -> argparse.ArgumentParser:
    """Add ``check-trace`` to an ``argparse`` subparsers object."""
    p = subparsers.add_parser(
        "check-trace", help="verify reasoning traces step by step (Spring Definitions 1-6) and print Table 2 metrics")
    p.add_argument("env_id", help="SolverZebra-v0, SolverKnights-v0 or SolverLSAT-v0")
    p.add_argument("traces", help='JSONL file: one {"instance": ..., "output": ...} per line')
    p.add_argument("--out", default=None, help="JSON report path (default: <traces>.report.json)")
    p.add_argument("--reward", default=None, help="reward preset: spring, or_int, or_nl, minus_n, minus_nc")
    p.add_argument("--kwargs", nargs="*", metavar="KEY=VALUE", help="env kwargs, e.g. aggregation=any")
    p.set_defaults(fn=_cmd)
    return p


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="solvergym")
    add_cli(parser.add_subparsers(dest="cmd", required=True))
    args = parser.parse_args(argv)
    return args.fn(args)


if __name__ == "__main__":
    sys.exit(main())
