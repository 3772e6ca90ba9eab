"""The curves of a training run: ``solvergym plot RUN_DIR`` (and ``solvergym train`` at its end)
draws the trainer's ``metrics.jsonl``.

Next to the trainer because it reads what the trainer writes: one row per step (``reward``, the
``reward/<component>`` means, ``accuracy``, ``response_length``) and, with a validation split, the
validation rows (``val_accuracy``, ``val_best_step``). Two more panels say why a run went as it
did (:data:`HEALTH`): the shares of a step (groups with equal rewards, groups the DAPO filter
dropped, turns the token limit cut, episodes out of turns) and the policy's entropy with the KL,
clamped and unclamped. matplotlib is imported when a plot is drawn, with the Agg backend (no
display needed).
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

__all__ = ["read_metrics", "plot_run", "health_series", "HEALTH"]

#: the health panels: title -> the metrics rows' keys drawn there (each where a run logged it)
HEALTH = {
    "shares per step": ("frac_reward_zero_std", "filter_dropped", "filter_dropped/all_correct",
                        "filter_dropped/none_correct", "clipped_ratio", "truncation_rate"),
    "entropy and KL": ("entropy", "kl", "kl_unclamped"),
}


def health_series(rows: list[dict[str, Any]]) -> dict[str, list[str]]:
    """Per health panel, the keys of :data:`HEALTH` that some row of ``rows`` has."""
    return {title: [k for k in keys if any(k in r for r in rows)] for title, keys in HEALTH.items()}


def read_metrics(run_dir: str | Path) -> list[dict[str, Any]]:
    """Every row of ``run_dir/metrics.jsonl``, in order."""
    path = Path(run_dir) / "metrics.jsonl"
    if not path.exists():
        raise FileNotFoundError(f"{path} does not exist (is {run_dir} a training run?)")
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def plot_run(run_dir: str | Path, out: str | Path | None = None, title: str | None = None) -> Path:
    """Reward (mean and each component), accuracy (train, and validation with ``--eval-data``),
    response length and the two health panels against the step; PNG at ``out`` (default
    ``run_dir/curves.png``), returned."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    everything = read_metrics(run_dir)
    rows = [r for r in everything if "reward" in r]
    vals = [r for r in everything if "val_accuracy" in r]
    if not rows:
        raise ValueError(f"{run_dir}/metrics.jsonl has no reward entries")
    steps = [r["step"] for r in rows]
    fig, axes = plt.subplots(1, 5, figsize=(23, 3.8))
    axes[0].plot(steps, [r["reward"] for r in rows], label="reward", lw=2, color="black")
    for key in sorted({k for r in rows for k in r if k.startswith("reward/")}):
        axes[0].plot(steps, [r.get(key, float("nan")) for r in rows], label=key[7:], lw=1)
    axes[0].set_title("reward")
    axes[0].legend(fontsize=8)
    axes[1].plot(steps, [r.get("accuracy", float("nan")) for r in rows], color="tab:green", label="train")
    if vals:  # --eval-data: validation accuracy, the best one ringed
        axes[1].plot([r["step"] for r in vals], [r["val_accuracy"] for r in vals], "o-", color="tab:blue",
                     label="validation")
        best = vals[-1].get("val_best_step")
        for r in vals:
            if r["step"] == best:
                axes[1].plot([best], [r["val_accuracy"]], "o", ms=12, mfc="none", color="tab:red", label="best")
        axes[1].legend(fontsize=8)
    axes[1].set_title("accuracy (correct > 0)")
    axes[1].set_ylim(-0.02, 1.02)
    axes[2].plot(steps, [r.get("response_length", float("nan")) for r in rows], color="tab:orange")
    axes[2].set_title("policy tokens per episode")
    for ax, (panel, keys) in zip(axes[3:], health_series(rows).items()):  # not `title`: the figure's
        for key in keys:
            ax.plot(steps, [r.get(key, float("nan")) for r in rows], label=key, lw=1)
        if keys:
            ax.legend(fontsize=8)
        if panel == "entropy and KL":
            ax.set_yscale("symlog", linthresh=1e-3)  # the unclamped KL can be 1e5 times the clamped
        ax.set_title(panel)
    for ax in axes:
        ax.set_xlabel("step")
        ax.grid(alpha=0.3)
    fig.suptitle(title or str(run_dir))
    fig.tight_layout()
    out = Path(out) if out else Path(run_dir) / "curves.png"
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return out
