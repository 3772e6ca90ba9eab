"""Offline "stepwise evaluation of reasoning traces": score a JSONL file of model outputs with an env.

Each line of the JSONL file is an object with the instance and the model's output::

    {"id": "optional", "instance": {...the env's instance, as a dict or JSON text...},
     "output": "<answer>{...}</answer>"}

(``completion`` or ``response`` are accepted for ``output``.) Every output is verified as in trace
mode (Spring §4.2-4.3); the report holds every trace's verdicts and metrics and the Table 2 /
App. B.2 summary for all, solved and failed traces (Cell Acc and Person Acc over all cells /
characters, as App. B.2 defines them). Lines that cannot be read are reported, not fatal.

:func:`check_trace` reads and scores a file and returns (and optionally writes) the report;
:func:`write_report` writes one as JSON. Nothing here prints: the ``solvergym check-trace``
command prints the tables.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import gymnasium as gym

from ..problem import PROBLEMS, get_problem
from .metrics import summarize, trace_row
from .problem import StepProblem

__all__ = ["trace_problem", "check_trace", "write_report"]


def trace_problem(env_id: str, **kwargs: Any) -> StepProblem:
    """The trace-mode problem of a step-verified env id (``SolverZebra-v0``, with or without the
    ``solvergym:`` prefix), made with the env's keyword arguments. ``KeyError`` for any other id."""
    name = env_id.split(":", 1)[1] if env_id.startswith("solvergym:") else env_id
    spec = gym.registry.get(name)
    if spec is None or not _poses_step_problem(spec):
        steps = sorted(i for i, s in gym.registry.items() if _poses_step_problem(s))
        raise KeyError(f"check-trace handles the step-verified envs {steps}, not {env_id!r}")
    env = gym.make(name, **{**kwargs, "mode": "trace"}).unwrapped
    env.close()
    return env.problem


def _poses_step_problem(spec: Any) -> bool:
    """Whether a registered id poses a step-verified problem (its ``problem`` keyword names one)."""
    name = (spec.kwargs or {}).get("problem")
    if not isinstance(name, str) or name not in PROBLEMS:
        return False
    factory = get_problem(name)
    return isinstance(factory, type) and issubclass(factory, StepProblem)


def check_trace(
    env_id: str,
    path: str | Path,
    out_json: str | Path | None = None,
    *,
    env_kwargs: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Verify every trace of ``path``; return the report (written to ``out_json`` when given).

    Raises ``KeyError`` for an env it cannot make and ``OSError`` for a file it cannot read or write.
    """
    problem = trace_problem(env_id, **(env_kwargs or {}))
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
                instance = problem.coerce(rec["instance"])
                res = problem.score_trace(instance, output)
            except (ValueError, TypeError, KeyError) as e:
                bad += 1
                traces.append({"id": tid, "line": lineno, "error": f"{type(e).__name__}: {e}"[:300]})
                continue
            row = trace_row(res)
            rows.append(row)
            traces.append({"id": tid, "line": lineno, "instance_id": instance.instance_id, **row,
                           "components": res.components, "signals": res.signals(), "reason": res.reason,
                           "error": res.error, "format_issues": res.format_issues,
                           "parse_issues": res.parse_issues, "steps": [v.as_dict() for v in res.steps]})
    report = {"env_id": env_id, "path": str(path), "reward_preset": problem.reward_config.name,
              "n": len(rows), "bad_lines": bad, "summary": summarize(rows), "traces": traces}
    if out_json is not None:
        write_report(report, out_json)
    return report


def write_report(report: dict[str, Any], path: str | Path) -> None:
    """``report`` as indented JSON (parent folders created)."""
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text(json.dumps(report, indent=1, ensure_ascii=False, default=str) + "\n")
