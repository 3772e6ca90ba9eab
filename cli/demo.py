"""The training part of ``solvergym demo``: a short SFT warm-up on oracle answers, then GRPO, on
the embedded model, with the reward on a fixed validation set before, between and after.

Why a warm-up: asked SATURN's question (``SolverSAT-v0`` at its first level, (3,5,5)), the
embedded SmolLM2-135M-Instruct reasons in prose and never writes ``\\boxed{}`` within the demo's
48 tokens: every validation episode and every sample pays -1 (format), every group's rewards are
equal, GRPO's advantages are all 0 and nothing is trained (measured: 16 of 16 greedy episodes,
all 16 samples at temperature 1, ``frac_reward_zero_std`` 1.0, grad norm 0). Longer budgets
(128 tokens) and a terse system prompt did not change that. Two SFT steps on 8 of the oracle's
answers (SAT-RL §3.3's warm-up, in miniature, trained in place inside the GRPO run:
:func:`~solvergym.algorithms.sft.train_sft` with ``model=``) teach the answer's form, not yet
reliably; GRPO then sees groups whose rewards differ (formatted or not, right or wrong) and has
something to learn from.

What the numbers mean: at (3,5,5) a formatted *guess* satisfies the formula about half the time
(``info["chance_success"]``), so "correct" near 0.5 is the format learned, not SAT solved; the
validation answers are greedy, and one string answered to every instance scores whatever that
string scores, which makes 16 instances a noisy read. The demo shows the machinery learning, not
a solver.

The trainer, transformers and accelerate are imported here, so :mod:`.explore` imports this
module only when the demo trains (``solvergym list`` stays light).
"""
from __future__ import annotations

import shutil
import time
from pathlib import Path
from typing import Any

import numpy as np

from ..agents.hf import HFAgent, SamplingConfig
from ..agents.sft_data import oracle_conversations
from ..algorithms.config import make_config
from ..algorithms.plots import plot_run
from ..algorithms.sft import SFTConfig, train_sft
from ..algorithms.trainer import Trainer
from ..evaluation.runner import EvalConfig, load_records, run_eval

__all__ = ["DEMO_ENV", "DEMO_GRPO", "DEMO_WARMUP", "VALIDATION_SEEDS", "demo_trainer", "warm_up", "validate",
           "run_demo"]

DEMO_ENV = "SolverSAT-v0"  # SATURN's first level, (3,5,5), the env's default
#: the GRPO run (SATURN's preset): 2 instances x 8 samples a step, so that a group's rewards can differ
DEMO_GRPO = dict(prompts_per_step=2, group_size=8, max_new_tokens=48, lr=2e-5)
#: the warm-up: the oracle's answers to instances 0..7, 2 SFT steps of 4 conversations at lr 1e-4
DEMO_WARMUP = dict(conversations=8, batch_size=4, lr=1e-4)
#: the fixed validation instances (their seeds), answered greedily before, between and after
VALIDATION_SEEDS = range(100_000, 100_016)


def demo_trainer(out: str | Path, steps: int, *, seed: int = 0, save_model: bool = False,
                 progress: bool = True) -> Trainer:
    """The demo's GRPO trainer on the embedded model; it writes metrics and the curve, no
    checkpoint (``save_every=0``) and a final model only with ``save_model``."""
    cfg = make_config("grpo", env=DEMO_ENV, steps=steps, seed=seed, out_dir=str(out), save_every=0,
                      save_final=save_model, progress=progress, **DEMO_GRPO)
    return Trainer(cfg)


def warm_up(trainer: Trainer, *, seed: int = 0, progress: bool = True) -> list[dict[str, Any]]:
    """The SFT warm-up on the oracle's answers, in place on the trainer's model (no model written)."""
    convs = oracle_conversations(DEMO_ENV, range(DEMO_WARMUP["conversations"]))
    cfg = SFTConfig(out_dir=trainer.cfg.out_dir, epochs=1, lr=DEMO_WARMUP["lr"], batch_size=DEMO_WARMUP["batch_size"],
                    micro_batch_size=DEMO_WARMUP["batch_size"], seed=seed, progress=progress)
    return train_sft(cfg, convs, model=trainer.model, tokenizer=trainer.tokenizer, accelerator=trainer.acc)


def validate(trainer: Trainer, label: str, instances: int = len(VALIDATION_SEEDS)) -> dict[str, float]:
    """Greedy answers of the trainer's model to the first ``instances`` validation instances, with
    the training budget, through the evaluation runner (``out_dir/validation/<label>``: its records
    and report): mean reward, the fraction answered in the required form and the fraction correct."""
    policy = HFAgent(trainer.unwrapped, trainer.tokenizer, batch_size=instances,
                     sampling=SamplingConfig(max_new_tokens=trainer.cfg.max_new_tokens, greedy=True))
    cfg = EvalConfig(DEMO_ENV, agent=f"demo-{label}", instances=instances, instance_seed=VALIDATION_SEEDS[0],
                     temperature=0.0, max_new_tokens=trainer.cfg.max_new_tokens, batch_instances=instances)
    records = load_records(run_eval(cfg, Path(trainer.cfg.out_dir) / "validation" / label, agent=policy,
                                    progress=False))
    return {"reward": float(np.mean([r["reward"] for r in records])),
            "answered": float(np.mean([not r["format_error"] for r in records])),
            "correct": float(np.mean([bool(r["correct"]) for r in records]))}


def run_demo(out: str | Path, steps: int, *, seed: int = 0, save_model: bool = False, progress: bool = True) -> dict:
    """Validate, warm up, validate, ``steps`` GRPO steps, validate; print the numbers; return them."""
    out = Path(out)
    for name in ("metrics.jsonl", "sft_metrics.jsonl"):  # a rerun into the same folder starts afresh
        (out / name).unlink(missing_ok=True)
    shutil.rmtree(out / "validation", ignore_errors=True)  # the runner would resume the old records
    took: dict[str, float] = {"validations": 0.0}

    def timed(key: str, fn, *a, **kw):
        t = time.perf_counter()
        result = fn(*a, **kw)
        took[key] = took.get(key, 0.0) + time.perf_counter() - t
        return result

    t0 = time.perf_counter()
    trainer = timed("model", demo_trainer, out, steps, seed=seed, save_model=save_model, progress=progress)
    before = timed("validations", validate, trainer, "as_loaded")
    sft = timed("warm-up", warm_up, trainer, seed=seed, progress=progress)
    warmed = timed("validations", validate, trainer, "after_warm_up")
    history = timed("GRPO", trainer.train)
    after = timed("validations", validate, trainer, "after_grpo")
    png = plot_run(out, title=f"GRPO on {DEMO_ENV} after a {len(sft)}-step SFT warm-up (embedded model)")
    steps_rows = [h for h in history if "reward" in h]
    for h in steps_rows:
        print(f"GRPO step {h['step']:2d}  reward {h['reward']:+.3f}  accuracy {h.get('accuracy', 0):.2f}  "
              f"groups with equal rewards {h['frac_reward_zero_std']:.2f}  grad norm {h.get('grad_norm', 0):.3f}")
    print(f"\nthe embedded model on {len(VALIDATION_SEEDS)} fixed validation instances (greedy, "
          f"{trainer.cfg.max_new_tokens} tokens):")
    print(f"  {'':34s} mean reward  answered  correct")
    for label, v in (("as loaded", before), (f"after the warm-up ({len(sft)} SFT steps)", warmed),
                     (f"after {len(steps_rows)} GRPO steps", after)):
        print(f"  {label:34s} {v['reward']:+11.3f}  {v['answered']:8.0%}  {v['correct']:7.0%}")
    if steps_rows:
        first, last = steps_rows[0]["reward"], steps_rows[-1]["reward"]
        print(f"GRPO's sampled reward (2 instances x 8 samples, temperature 1): first step {first:+.3f}, "
              f"last step {last:+.3f}")
    print("(a formatted guess is right about half the time at (3,5,5): correct near 50% is the format learned)")
    print("time: " + ", ".join(f"{k} {v:.0f} s" for k, v in took.items())
          + f", total {time.perf_counter() - t0:.0f} s")
    print(f"metrics: {out}/metrics.jsonl, {out}/sft_metrics.jsonl  curve: {png}"
          + (f"  model: {out}/final" if save_model else ""))
    return {"before": before, "warmed": warmed, "after": after, "sft": sft, "history": history}
