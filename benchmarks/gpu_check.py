"""The GPU check: training steps per second of every preset, vLLM rollouts with weight sync, peak
memory, in one prepared run (issue 14). On a lent GPU machine it is the one script to run:

    python benchmarks/gpu_check.py                      # CUDA: bf16, every preset, vLLM if installed
    python benchmarks/gpu_check.py --model /path/to/qwen2.5-0.5b-instruct   # and a ~0.5B model
    python benchmarks/gpu_check.py --tiny               # the CPU smoke mode the test suite runs

Per preset (``algorithms/presets.py``) and model: a Trainer built from the preset (the scale set
here: ``--prompts`` x ``--group`` samples of ``--tokens`` tokens on SolverSAT-v0), one warm-up
step, then ``--steps`` timed steps: steps/s, policy tokens/s, the rollout / update split, peak
memory (CUDA: ``max_memory_allocated``; CPU: the process's max RSS). With vLLM importable on CUDA,
the same for ``rollout_backend="vllm"`` plus the weight-sync time. bf16 on CUDA
(``mixed_precision="auto"``), fp32 on the CPU. Nothing is downloaded: ``--model`` must be a local
folder. Prints a table and writes ``benchmarks/results/gpu_check.json`` (``--out``).
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import platform
import resource
import sys
import tempfile
import time
from pathlib import Path

try:
    import solvergym  # noqa: F401
except ImportError:  # run from a checkout without installing: the root is the package
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
import torch

from solvergym.algorithms.config import make_config
from solvergym.algorithms.presets import PRESET_TABLE
from solvergym.algorithms.trainer import Trainer
from solvergym.evaluation.tables import format_table

__all__ = ["main", "measure"]


def _peak_gib() -> float:
    if torch.cuda.is_available():
        return torch.cuda.max_memory_allocated() / 2**30
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20  # KiB on Linux


def measure(preset: str, model: str, *, prompts: int, group: int, tokens: int, steps: int,
            backend: str = "hf", warmup: int = 1) -> dict:
    """One preset on one model: ``warmup`` steps, then ``steps`` timed ones."""
    if torch.cuda.is_available():
        torch.cuda.reset_peak_memory_stats()
    with tempfile.TemporaryDirectory() as d:
        cfg = make_config(preset, env="SolverSAT-v0", model=model, prompts_per_step=prompts, group_size=group,
                          max_new_tokens=tokens, max_total_tokens=tokens + 1024, micro_batch_size=prompts * group,
                          steps=steps + warmup, dynamic_sampling=False, progress=False, out_dir=d,
                          rollout_backend=backend)
        t = Trainer(cfg)
        for _ in range(warmup):  # kernels, caches, the first vLLM sync
            t.train_step()
        rows, t0 = [], time.perf_counter()
        for _ in range(steps):
            rows.append(t.train_step())
        wall = time.perf_counter() - t0
        sync = None
        if backend == "vllm":
            s0 = time.perf_counter()
            t.policy.sync_weights(t.unwrapped)
            sync = time.perf_counter() - s0
        tokens_done = sum(r.get("policy_tokens", 0.0) for r in rows)
        out = {"preset": preset, "model": model, "backend": backend, "precision": t.acc.mixed_precision,
               "steps": steps, "steps_per_s": steps / wall, "tokens_per_s": tokens_done / wall,
               "rollout_s": sum(r["rollout_s"] for r in rows) / steps, "update_s": sum(r["update_s"] for r in rows) / steps,
               "peak_gib": _peak_gib(), "weight_sync_s": sync}
        del t
    if torch.cuda.is_available():
        torch.cuda.empty_cache()
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--tiny", action="store_true",
                   help="CPU smoke mode: 1 prompt x 2 samples x 4 tokens, 1 step, no warm-up")
    p.add_argument("--presets", nargs="*", default=list(PRESET_TABLE))
    p.add_argument("--model", action="append", default=None,
                   help="a local model folder besides the embedded one (repeatable; e.g. a ~0.5B model)")
    p.add_argument("--prompts", type=int, default=8)
    p.add_argument("--group", type=int, default=8)
    p.add_argument("--tokens", type=int, default=256)
    p.add_argument("--steps", type=int, default=3)
    p.add_argument("--out", default=str(Path(__file__).resolve().parent / "results"))
    a = p.parse_args(argv)
    warmup = 1
    if a.tiny:
        a.prompts, a.group, a.tokens, a.steps, warmup = 1, 2, 4, 1, 0
    models = ["default"] + [m for m in (a.model or []) if Path(m).exists()]
    skipped = [f"{m}: not a local folder" for m in (a.model or []) if not Path(m).exists()]
    cuda = torch.cuda.is_available()
    vllm_ok = cuda and importlib.util.find_spec("vllm") is not None
    if not vllm_ok:
        skipped.append("vLLM rollouts: " + ("vllm is not installed" if cuda else "no CUDA device (vLLM on CUDA only here)"))
    rows = []
    for model in models:
        for preset in a.presets:
            rows.append(measure(preset, model, prompts=a.prompts, group=a.group, tokens=a.tokens, steps=a.steps,
                                warmup=warmup))
            print(f"{preset} on {model}: {rows[-1]['steps_per_s']:.3f} steps/s", flush=True)
        if vllm_ok:
            rows.append(measure("saturn_grpo", model, prompts=a.prompts, group=a.group, tokens=a.tokens,
                                steps=a.steps, backend="vllm", warmup=warmup))
    device = torch.cuda.get_device_name(0) if cuda else f"CPU ({platform.processor() or platform.machine()})"
    print(f"\n{device}; {a.prompts} prompts x {a.group} samples x {a.tokens} tokens on SolverSAT-v0")
    print(format_table(rows, [("preset", "preset", "s"), ("model", "model", "s"), ("backend", "rollout", "s"),
                              ("precision", "precision", "s"), ("steps_per_s", "steps/s", ".3f"),
                              ("tokens_per_s", "tokens/s", ".0f"), ("rollout_s", "rollout s", ".2f"),
                              ("update_s", "update s", ".2f"), ("peak_gib", "peak GiB", ".2f")]))
    for s in skipped:
        print("skipped:", s)
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    result = {"benchmark": "gpu_check", "device": device, "date": time.strftime("%Y-%m-%d"), "args": vars(a),
              "torch": torch.__version__, "rows": rows, "skipped": skipped}
    (out / "gpu_check.json").write_text(json.dumps(result, indent=2) + "\n")
    print(f"wrote {out / 'gpu_check.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
