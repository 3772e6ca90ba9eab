"""Evaluation throughput: samples per second of the embedded model on SolverSAT-v0 through
``solvergym eval`` against a loop of single ``HFAgent.act`` calls and against transformers'
``generate(num_return_sequences=n)``, in one run (issue 13).

    python benchmarks/eval_throughput.py                  # n = 8 samples x 16 instances, 128 tokens
    python benchmarks/eval_throughput.py --quick          # 4 x 4, 32 tokens (a minute)

(``--baseline-samples`` below.)

The work is the same on every side: the SATURN prompts of ``--instances`` generated instances
(seeds 0..), ``--n`` samples each, exactly ``--tokens`` new tokens per sample (EOS ignored, no stop
strings, temperature 1), one model loaded once. Sides:

- ``eval``: ``run_eval`` with ``n_samples=n`` and ``batch_instances=instances``: every episode of
  the batch goes to ``HFAgent.generate`` in one call (rows of ``batch_size`` at a time, each
  distinct prompt prefilled once and its KV cache shared by its samples), then the env scores
  them; the time includes the env (reset, step, records);
- ``single``: ``HFAgent.act([observation])`` once per sample (how an evaluation loop of one
  conversation at a time runs, ``solvergym.evaluation.episodes.run_episodes``); the env's scoring is not
  timed;
- ``generate``: ``model.generate(prompt, do_sample=True, num_return_sequences=n)`` once per
  instance (the usual transformers evaluation script); decoding only.

The two baselines cost the same per sample whatever their count (one call after another), so they
run ``--baseline-samples`` of the samples (default 16; the prompts in turn, whole instances for
``generate``) and the ratios compare samples per second: the issue's full size (16 x 8 x 128)
would otherwise spend over an hour of a 2-core machine on the baselines alone.

Prints samples/s for each and the ratios eval/single and eval/generate, and writes
``benchmarks/results/eval_throughput.json``. Target: eval >= 3x single. Timings on this shared
2-core VM move 10-30% between runs; both sides of each ratio are measured in the same run.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import sys
import tempfile
import time
from pathlib import Path

import gymnasium as gym
import torch

try:
    import solvergym  # noqa: F401
except ImportError:  # run from a checkout without installing: the root is the package
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from solvergym.agents import HFAgent, SamplingConfig
from solvergym.evaluation.tables import format_table
from solvergym.evaluation import EvalConfig, load_records, run_eval

ENV = "SolverSAT-v0"
TARGET = 3.0


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--instances", type=int, default=16)
    p.add_argument("--n", type=int, default=8, help="samples per instance")
    p.add_argument("--tokens", type=int, default=128, help="new tokens per sample")
    p.add_argument("--batch-size", type=int, default=None, help="HFAgent rows per forward (default: n x instances)")
    p.add_argument("--baseline-samples", type=int, default=16,
                   help="samples the single-act and generate sides decode (their cost per sample is constant)")
    p.add_argument("--quick", action="store_true", help="4 instances x 4 samples, 32 tokens")
    p.add_argument("--out", default=str(Path(__file__).resolve().parent / "results"))
    args = p.parse_args(argv)
    if args.quick:
        args.instances, args.n, args.tokens = 4, 4, 32
    total = args.instances * args.n
    torch.manual_seed(0)
    sampling = SamplingConfig(max_new_tokens=args.tokens, temperature=1.0, stop=(), stop_at_answer_block=False,
                              ignore_eos=True)
    agent = HFAgent("default", sampling=sampling, batch_size=args.batch_size or total)
    env = gym.make(ENV)
    prompts = []
    for i in range(args.instances):
        obs, _ = env.reset(seed=i)
        prompts.append(obs)
    rows = []

    # eval: the whole batch per turn
    work = Path(tempfile.mkdtemp(prefix="sg-eval-tp-"))
    cfg = EvalConfig(ENV, agent="hf:default", instances=args.instances, n_samples=args.n, batch_instances=args.instances,
                     max_new_tokens=args.tokens)
    t = time.perf_counter()
    run_eval(cfg, work / "run", agent=agent, progress=False)
    dt_eval = time.perf_counter() - t
    n_eval = len(load_records(work / "run"))
    shutil.rmtree(work, ignore_errors=True)
    rows.append({"side": "eval", "calls": 1, "samples": n_eval, "seconds": dt_eval, "samples_per_s": n_eval / dt_eval})

    # single: one act per sample
    n_single = max(1, min(args.baseline_samples, total))
    t = time.perf_counter()
    for s in range(n_single):
        agent.act([prompts[s // args.n]])
    dt_single = time.perf_counter() - t
    rows.append({"side": "single act", "calls": n_single, "samples": n_single, "seconds": dt_single,
                 "samples_per_s": n_single / dt_single})

    # generate: transformers' own sampling, n return sequences per prompt
    model, tok = agent.model, agent.tokenizer
    n_gen = max(1, min(args.instances, -(-args.baseline_samples // args.n)))
    t = time.perf_counter()
    with torch.no_grad():
        for obs in prompts[:n_gen]:
            ids = torch.tensor([agent.chat_ids([{"role": "user", "content": obs}])])
            model.generate(ids, attention_mask=torch.ones_like(ids), do_sample=True, temperature=1.0, top_k=0,
                           max_new_tokens=args.tokens, min_new_tokens=args.tokens, num_return_sequences=args.n,
                           pad_token_id=tok.eos_token_id)
    dt_gen = time.perf_counter() - t
    rows.append({"side": "generate(num_return_sequences)", "calls": n_gen, "samples": n_gen * args.n,
                 "seconds": dt_gen, "samples_per_s": n_gen * args.n / dt_gen})

    ratio_single, ratio_gen = (rows[0]["samples_per_s"] / rows[i]["samples_per_s"] for i in (1, 2))
    print(f"{ENV}: {args.instances} instances x {args.n} samples, {args.tokens} new tokens each, embedded model on "
          f"{os.cpu_count()} CPUs (HFAgent batch_size {agent.batch_size})")
    print(format_table(rows, [("side", "side", "s"), ("calls", "calls", "d"), ("samples", "samples", "d"),
                              ("seconds", "seconds", ".1f"), ("samples_per_s", "samples/s", ".2f")]))
    print(f"eval / single act: {ratio_single:.1f}x (target >= {TARGET:.0f}x: {'met' if ratio_single >= TARGET else 'MISSED'}); "
          f"eval / generate: {ratio_gen:.2f}x")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    result = {"benchmark": "eval_throughput", "args": vars(args), "machine": {"cpus": os.cpu_count(),
              "python": platform.python_version(), "torch": torch.__version__}, "rows": rows,
              "eval_over_single": ratio_single, "eval_over_generate": ratio_gen, "target": TARGET}
    (out / "eval_throughput.json").write_text(json.dumps(result, indent=2) + "\n")
    print(f"wrote {out / 'eval_throughput.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
