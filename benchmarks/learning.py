"""Does the reward rise? A CPU training run of each preset on the embedded model.

    python benchmarks/learning.py [--steps 60] [--presets grpo dapo reinforce_pp] [--env SolverSAT-v0]

Each preset trains SmolLM2-135M-Instruct from its released weights for ``--steps`` iterations on
``--env`` (default SolverSAT-v0 at SATURN's first level (3,5,5)) with the same scale settings
(``--prompts`` instances x ``--group`` samples, ``--tokens`` per answer) and learning rate; the
papers' algorithm settings come from the presets. Reported per preset: the mean reward of the
first and last 10 steps, their difference, the same for each reward component, and the seed.
Writes ``learning.json`` and ``learning.png`` (reward curves, a 5-step moving average). This is
evidence, not a test: a 135M model on a 2-core CPU learns the answer format first.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

from solvergym.algorithms.config import make_config
from solvergym.evaluation.tables import format_table
from solvergym.kv import parse_kv

HERE = Path(__file__).resolve()


def summarise(history: list[dict], window: int = 10) -> dict:
    rows = [h for h in history if "reward" in h]
    first, last = rows[:window], rows[-window:]
    out = {"steps": len(rows), "first10": float(np.mean([r["reward"] for r in first])),
           "last10": float(np.mean([r["reward"] for r in last]))}
    out["rise"] = out["last10"] - out["first10"]
    for key in sorted({k for r in rows for k in r if k.startswith("reward/")} | {"accuracy", "response_length"}):
        a = [r.get(key, np.nan) for r in first]
        b = [r.get(key, np.nan) for r in last]
        out[key] = {"first10": float(np.nanmean(a)), "last10": float(np.nanmean(b))}
    return out


def plot(curves: dict[str, list[dict]], path: Path, title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4))
    for preset, hist in curves.items():
        rows = [h for h in hist if "reward" in h]
        x = [r["step"] for r in rows]
        y = np.array([r["reward"] for r in rows])
        ax.plot(x, y, alpha=0.25)
        k = min(5, len(y))
        ax.plot(x[k - 1:], np.convolve(y, np.ones(k) / k, mode="valid"), lw=2, label=preset,
                color=ax.lines[-1].get_color())
    ax.set_xlabel("step")
    ax.set_ylabel("mean episode reward")
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--presets", nargs="*", default=["grpo", "dapo", "reinforce_pp"])
    p.add_argument("--env", default="SolverSAT-v0")
    p.add_argument("--env-kwargs", nargs="*", default=[])
    p.add_argument("--steps", type=int, default=60)
    p.add_argument("--prompts", type=int, default=2)
    p.add_argument("--group", type=int, default=8)
    p.add_argument("--tokens", type=int, default=64)
    p.add_argument("--lr", type=float, default=2e-5)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", type=Path, default=HERE.parent / "results" / "learning")
    a = p.parse_args(argv)
    try:
        env_kwargs = parse_kv(a.env_kwargs)
    except ValueError as e:
        raise SystemExit(f"--env-kwargs: {e}") from None
    a.out.mkdir(parents=True, exist_ok=True)
    curves, summary = {}, {}
    for preset in a.presets:
        run = a.out / preset
        metrics = run / "metrics.jsonl"
        if metrics.exists() and sum(1 for _ in metrics.open()) >= a.steps:  # done earlier: reuse
            hist = [json.loads(line) for line in metrics.read_text().splitlines()]
        else:
            from solvergym.algorithms.trainer import Trainer  # lazy: torch, only when a preset still has steps to run

            cfg = make_config(preset, env=a.env, env_kwargs=env_kwargs, steps=a.steps,
                              prompts_per_step=a.prompts, group_size=a.group, max_new_tokens=a.tokens,
                              lr=a.lr, seed=a.seed, out_dir=str(run), resume="auto", save_every=10)
            Trainer(cfg).train()
            hist = [json.loads(line) for line in metrics.read_text().splitlines()]
        curves[preset] = hist
        summary[preset] = summarise(hist)
    rows = [{"preset": k, **{x: v[x] for x in ("first10", "last10", "rise")},
             "acc0": v["accuracy"]["first10"], "acc1": v["accuracy"]["last10"]} for k, v in summary.items()]
    print(format_table(rows, [("preset", "preset", "s"), ("first10", "reward first 10", "+.3f"),
                              ("last10", "reward last 10", "+.3f"), ("rise", "rise", "+.3f"),
                              ("acc0", "acc first 10", ".2f"), ("acc1", "acc last 10", ".2f")]))
    plot(curves, a.out / "learning.png", f"{a.env} {env_kwargs or ''}, SmolLM2-135M, CPU")
    (a.out / "learning.json").write_text(json.dumps({"settings": vars(a) | {"out": str(a.out)}, "summary": summary},
                                                    indent=2, default=str) + "\n")
    print(f"wrote {a.out / 'learning.json'} and {a.out / 'learning.png'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
