"""Offline "stepwise evaluation of reasoning traces": score model outputs with an env, step by step.

The traces are a JSONL file or, in memory, a list of records; each line or record is an object
with the instance and the model's output::

    {"id": "optional", "instance": {...the env's instance, as a dict or JSON text...},
     "output": "<answer>{...}</answer>"}

(``completion`` or ``response`` are accepted for ``output``.) Every output is verified as in trace
mode (Spring §4.2-4.3); the report holds every trace's verdicts and metrics and the Table 2 /
App. B.2 summary for all, solved and failed traces (Cell Acc and Person Acc over all cells /
characters, as App. B.2 defines them). Lines that cannot be read are reported, not fatal: a line is read with
the bounds every loader keeps (``envs/records.py``: at most 8 Mi characters, 32 levels deep), so
a record nested 100,000 deep is a bad line with its reason, not a ``RecursionError`` out of
:func:`check_trace` (nor out of :func:`write_report`, for a deep record given in memory).

:func:`check_trace` scores a file or a list of records and returns (and optionally writes) the
report, whose ``report["traces"][i]["steps"]`` are trace i's per-step verdicts (label, reason,
formula, every Definition's answer); :func:`write_report` writes one as JSON. Nothing here
prints: the ``solvergym check-trace`` command prints the tables.
"""
from __future__ import annotations

import importlib
import json
from pathlib import Path
from typing import Any, Iterable, Iterator, Mapping

import gymnasium as gym

from ..problem import PROBLEMS, get_problem
from ..records import check_value, parse_json
from .metrics import summarize, trace_row
from .problem import StepProblem

__all__ = ["trace_problem", "check_trace", "write_report"]


def trace_problem(env_id: str, **kwargs: Any) -> StepProblem:
    """The trace-mode problem of a step-verified env id (``SolverZebra-v0``, or Gymnasium's
    ``module:Env-v0``, which imports the module first, as ``gym.make`` does), made with the env's
    keyword arguments. ``KeyError`` for any other id; the module's own ``ImportError`` if it fails."""
    name = env_id
    if ":" in env_id:
        module, name = env_id.split(":", 1)
        importlib.import_module(module)
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
    traces: str | Path | Iterable[Mapping[str, Any] | str],
    out_json: str | Path | None = None,
    *,
    env_kwargs: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Verify every trace; return the report (written to ``out_json`` when given).

    ``traces`` is a JSONL file's path or, in memory, an iterable of records (dicts, or JSON text
    of one): ``{"id": ..., "instance": ..., "output": ...}``. A record that cannot be checked is
    reported (``report["bad_lines"]``, an ``error`` in its entry), never raised; ``line`` is its
    1-based position. That includes a record that is not usable JSON (too long, or nested past
    :data:`~solvergym.envs.records.MAX_DEPTH` levels, which the parser would meet with a
    ``RecursionError``), as text or as a value in memory. Raises ``KeyError`` for an env it cannot make, ``OSError`` for a file it
    cannot read or write and ``TypeError`` when ``traces`` is neither a path nor an iterable.
    """
    problem = trace_problem(env_id, **(env_kwargs or {}))
    traces_out, rows, bad = [], [], 0
    for lineno, line in _records(traces):
        tid: Any = lineno
        try:
            if isinstance(line, str):
                rec = parse_json(line, what="the line")
            else:
                rec = line
                try:  # its id and error go into the report, which is JSON too
                    check_value(rec)
                except ValueError as e:
                    raise ValueError(f"the record is {e}") from None
            if not isinstance(rec, Mapping):
                raise ValueError("a line must be a JSON object")
            tid = rec.get("id", lineno)
            output = next((rec[k] for k in ("output", "completion", "response") if k in rec), None)
            if not isinstance(output, str):
                raise ValueError('no "output" string')
            if "instance" not in rec:
                raise ValueError('no "instance"')
            instance = problem.coerce(rec["instance"])
            res = problem.score_trace(instance, output)
        # RecursionError: the last guard of "reported, not fatal" for whatever a family's own
        # reading recurses on (the line itself is depth-checked above, without recursion)
        except (ValueError, TypeError, KeyError, RecursionError) as e:
            bad += 1
            traces_out.append({"id": tid, "line": lineno, "error": f"{type(e).__name__}: {e}"[:300]})
            continue
        row = trace_row(res)
        rows.append(row)
        traces_out.append({"id": tid, "line": lineno, "instance_id": instance.instance_id, **row,
                           "components": res.components, "signals": res.signals(), "reason": res.reason,
                           "error": res.error, "format_issues": res.format_issues,
                           "parse_issues": res.parse_issues, "steps": [v.as_dict() for v in res.steps]})
    path = str(traces) if isinstance(traces, (str, Path)) else None
    report = {"env_id": env_id, "path": path, "reward_preset": problem.reward_config.name,
              "n": len(rows), "bad_lines": bad, "summary": summarize(rows), "traces": traces_out}
    if out_json is not None:
        write_report(report, out_json)
    return report


def _records(traces: Any) -> Iterator[tuple[int, Any]]:
    """(1-based position, line or record) of every non-blank entry of a path or an iterable."""
    if isinstance(traces, (str, Path)):
        with open(traces, encoding="utf-8", errors="replace") as f:
            for lineno, line in enumerate(f, 1):
                if line.strip():
                    yield lineno, line
        return
    if isinstance(traces, (Mapping, bytes)) or not isinstance(traces, Iterable):
        raise TypeError("traces must be a JSONL path or an iterable of records "
                        f"({{'instance': ..., 'output': ...}}), got {type(traces).__name__}")
    for lineno, rec in enumerate(traces, 1):
        if not (isinstance(rec, str) and not rec.strip()):
            yield lineno, rec


def write_report(report: dict[str, Any], path: str | Path) -> None:
    """``report`` as indented JSON (parent folders created)."""
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text(json.dumps(report, indent=1, ensure_ascii=False, default=str) + "\n")
