"""Where a run's metrics go besides ``metrics.jsonl``: Accelerate's experiment trackers.

``report_to`` names them as Hugging Face's ``TrainingArguments.report_to`` and TRL do:
``"tensorboard"``, ``"wandb"``, ``"mlflow"`` or any other tracker Accelerate ships
(``accelerate.tracking.LOGGER_TYPE_TO_CLASS``), a list of them, ``"all"`` (every one installed),
``"none"``, or ``"auto"`` (TensorBoard when it is installed: what the trainer always wrote). A
tracker named but not installed stops the run at its start, not after the first step. The JSON log
is written whatever ``report_to`` says: it is what ``solvergym plot`` and a resume read.

Each tracker is Accelerate's own class, opened by the main process only: TensorBoard under
``out_dir/tb`` (``tensorboard --logdir out_dir/tb``), MLflow under ``out_dir/mlruns``, W&B under the
project named by the run directory (``WANDB_MODE=offline`` keeps it on disk).
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Sequence

from ..suggest import did_you_mean

__all__ = ["tracker_names", "open_trackers"]


def _known() -> list[str]:
    from accelerate.tracking import LOGGER_TYPE_TO_CLASS

    return list(LOGGER_TYPE_TO_CLASS)


def _installed() -> list[str]:
    from accelerate.utils import LoggerType
    from accelerate.tracking import get_available_trackers

    return [str(t.value if isinstance(t, LoggerType) else t) for t in get_available_trackers()]


def tracker_names(report_to: str | Sequence[str]) -> list[str]:
    """The trackers ``report_to`` asks for (a ``ValueError`` for an unknown or missing one)."""
    names = [report_to] if isinstance(report_to, str) else list(report_to)
    names = [n.strip() for name in names for n in str(name).split(",") if n.strip()]
    if names in (["none"], []):
        return []
    if names == ["auto"]:
        return ["tensorboard"] if "tensorboard" in _installed() else []
    if names == ["all"]:
        return _installed()
    known, installed = _known(), _installed()
    for name in names:
        if name not in known:
            close = did_you_mean(name, known + ["all", "none", "auto"])
            raise ValueError(f"report_to: {name!r} is not one of Accelerate's trackers ({', '.join(known)}), "
                             f"'all', 'none' or 'auto'" + (f"; {close}" if close else ""))
        if name not in installed:
            raise ValueError(f"report_to: {name!r} is not installed (pip install {name.replace('_', '-')}); "
                             f"installed: {', '.join(installed) or 'none'}")
    return list(dict.fromkeys(names))


def _flat(config: dict[str, Any]) -> dict[str, Any]:
    """The config as trackers store it: scalars as they are, anything else as JSON text."""
    return {k: v if isinstance(v, (bool, int, float, str)) else json.dumps(v, default=str)
            for k, v in config.items()}


def open_trackers(report_to: str | Sequence[str], out: Path, config: dict[str, Any]) -> list[Any]:
    """Accelerate's trackers for ``report_to``, started, with ``config`` stored (main process)."""
    from accelerate.tracking import LOGGER_TYPE_TO_CLASS

    trackers = []
    for name in tracker_names(report_to):
        cls = LOGGER_TYPE_TO_CLASS[name]
        if name == "tensorboard":
            tracker = cls("tb", out)
        elif name == "mlflow":
            tracker = cls(experiment_name=out.name, logging_dir=str(out / "mlruns"))
        elif cls.requires_logging_directory:
            tracker = cls(out.name, out)
        else:
            tracker = cls(out.name)
        tracker.start()
        tracker.store_init_configuration(_flat(config))
        trackers.append(tracker)
    return trackers
