"""A training run's files under ``out_dir``: the metrics log and the checkpoints.

- :class:`MetricsLog`: one JSON row per step or validation in ``metrics.jsonl`` (and its numbers
  to the trackers ``report_to`` names: TensorBoard under ``tb/`` by default when installed;
  :mod:`.tracking`), written by the main process; every process keeps the rows in memory (the
  trainer's ``history``).
- A checkpoint, ``checkpoints/step_<N>``: Accelerate's state (model, optimizer, scheduler, RNG
  states) and ``trainer_state.json`` (the step, the data position, the schedule's state, the
  config). :func:`write_checkpoint` keeps the ``keep`` newest; :func:`read_checkpoint` reads one
  back; :func:`latest_checkpoint` is what ``resume="auto"`` resumes. That is the smallest state an
  exact resume needs: the policy once (safetensors, tied weights once), AdamW's two moments, no
  reference model (it is the loaded model, read again on resume); 1.6 GB for the 135M model in
  fp32. The trainer writes none with ``save_every=0``.

On resume, the rows logged after the checkpoint belong to steps the resumed run does again:
:meth:`MetricsLog.resume_at` drops them, so ``metrics.jsonl`` (and the history) holds each step once.
"""
from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from .tracking import open_trackers

__all__ = ["MetricsLog", "write_checkpoint", "read_checkpoint", "latest_checkpoint"]

STATE = "trainer_state.json"


class MetricsLog:
    """``out/metrics.jsonl`` and the ``report_to`` trackers; :attr:`rows` on every process."""

    def __init__(self, out: Path, main: bool, report_to: Any = "none", config: dict[str, Any] | None = None):
        self.path, self.out, self.main = out / "metrics.jsonl", out, main
        self.rows: list[dict[str, Any]] = []
        self.report_to, self.config = report_to, config or {}
        self._trackers: list[Any] | None = None  # opened at the first row (the run directory exists then)

    def log(self, row: dict[str, Any]) -> None:
        self.rows.append(row)
        if not self.main:
            return
        self.out.mkdir(parents=True, exist_ok=True)
        with open(self.path, "a") as f:
            f.write(json.dumps(row, default=float) + "\n")
        if self._trackers is None:
            self._trackers = open_trackers(self.report_to, self.out, self.config)
        numbers = {k: v for k, v in row.items() if isinstance(v, (int, float)) and not isinstance(v, bool)}
        for tracker in self._trackers:
            tracker.log(numbers, step=row.get("step", 0))

    def close(self) -> None:
        """Flush and close the trackers (the JSON log needs nothing)."""
        for tracker in self._trackers or []:
            tracker.finish()
        self._trackers = None

    def resume_at(self, step: int, acc: Any) -> None:
        """Keep the rows of the steps before ``step``, in memory and in the file."""
        rows = [json.loads(line) for line in self.path.read_text().splitlines() if line.strip()] \
            if self.path.exists() else []
        self.rows = [r for r in rows if r.get("step", 0) < step]
        acc.wait_for_everyone()  # every rank has read the file before it is rewritten
        if self.main and len(self.rows) < len(rows):
            self.path.write_text("".join(json.dumps(r, default=float) + "\n" for r in self.rows))


def write_checkpoint(acc: Any, path: Path, state: dict[str, Any], root: Path, keep: int) -> None:
    """Accelerate's state and ``state`` at ``path``; then, when ``path`` is in the run's
    checkpoint folder ``root``, only the ``keep`` newest there are kept (0: all)."""
    acc.wait_for_everyone()
    acc.save_state(str(path))
    if acc.is_main_process:
        (path / STATE).write_text(json.dumps(state, indent=2, default=str) + "\n")
        _prune(root, path, keep)
    acc.wait_for_everyone()


def _prune(root: Path, saved: Path, keep: int) -> None:
    """Keep the ``keep`` newest of ``root/step_*`` (the one just saved always)."""
    if keep <= 0 or saved.parent.resolve() != root.resolve():
        return
    others = [p for p in sorted(root.glob("step_*")) if p.resolve() != saved.resolve()]
    for old in others[:max(0, len(others) - (keep - 1))]:
        shutil.rmtree(old, ignore_errors=True)


def read_checkpoint(acc: Any, path: Path) -> dict[str, Any]:
    """Accelerate's state back from ``path``; returns its ``trainer_state.json``."""
    acc.load_state(str(path))
    return json.loads((path / STATE).read_text())


def latest_checkpoint(root: Path) -> Path | None:
    """The newest ``root/step_*``, if any."""
    found = sorted(root.glob("step_*"))
    return found[-1] if found else None
