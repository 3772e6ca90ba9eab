"""The policy on a set of instances, through ``solvergym.evaluation``: the same runner, records and
report as ``solvergym eval``, so that training has no second evaluation loop.

A fixed split's validation (:mod:`.split`) and SATURN's pass@1 estimate (:mod:`.saturn`) both call
:func:`evaluate_policy`; each evaluation is a run directory under ``out_dir`` that ``solvergym
eval`` reads as any other (resumable, one record per sample). Only the main process evaluates;
every process gets the score, so that all of them take the same decisions.
"""
from __future__ import annotations

from pathlib import Path

from ... import agents  # SamplingConfig loads torch on first use
from ...evaluation.report import write_report
from ...evaluation.runner import EvalConfig, load_records, run_eval
from .base import TrainerLike

__all__ = ["evaluate_policy"]


def evaluate_policy(trainer: TrainerLike, dataset: str, out: str | Path, *, samples: int = 1,
                    temperature: float = 0.0) -> float:
    """The share of correct samples over ``samples`` samples of every instance of ``dataset`` (a
    JSONL file or directory, as ``--dataset``): avg@k, pass@1 with one sample. ``temperature`` 0
    is greedy; the other sampling settings (length, top-p, repetition penalty) are training's."""
    cfg = trainer.cfg
    score = 0.0
    if trainer.acc.is_main_process:
        if cfg.rollout_backend == "vllm":
            trainer.policy.sync_weights(trainer.unwrapped)
        saved = trainer.policy.sampling
        trainer.policy.sampling = agents.SamplingConfig(
            max_new_tokens=cfg.max_new_tokens, temperature=max(temperature, 1e-6), greedy=temperature == 0.0,
            top_p=cfg.top_p, repetition_penalty=cfg.repetition_penalty)
        try:
            ecfg = EvalConfig(cfg.env, agent=f"policy@step{trainer.step}", env_kwargs=dict(cfg.env_kwargs),
                              dataset=dataset, n_samples=samples, ks=[samples], seeds=[cfg.seed],
                              temperature=temperature, max_new_tokens=cfg.max_new_tokens)
            run = run_eval(ecfg, out, agent=trainer.policy, progress=False)
        finally:
            trainer.policy.sampling = saved
        write_report(run, png=False)
        records = load_records(run)
        score = sum(r["correct"] for r in records) / max(1, len(records))
    return float(trainer.broadcast_scalar(score))
