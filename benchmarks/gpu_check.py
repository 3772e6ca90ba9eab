"""The GPU check: training steps per second of every preset, vLLM rollouts with weight sync, peak
memory, in one prepared run (issue 14). On a lent GPU machine it is the one script to run:

    python benchmarks/gpu_check.py                      # CUDA: bf16, every preset, vLLM if installed
    python benchmarks/gpu_check.py --model /path/to/qwen2.5-0.5b-instruct   # and a ~0.5B model
    python benchmarks/gpu_check.py --tiny               # the CPU smoke mode the test suite runs
    python benchmarks/gpu_check.py --shapes qwen2.5-0.5b qwen2.5-1.5b   # random weights of those shapes

Per preset (``algorithms/presets.py``) and model: a Trainer built from the preset (the scale set
here: ``--prompts`` x ``--group`` samples of ``--tokens`` tokens on SolverSAT-v0), one warm-up
step, then ``--steps`` timed steps: steps/s, policy tokens/s, the rollout / update split, peak
memory (CUDA: ``max_memory_allocated``; CPU: the process's max RSS). With vLLM importable on CUDA,
the same for ``rollout_backend="vllm"`` plus the weight-sync time. bf16 on CUDA
(``mixed_precision="auto"``), fp32 on the CPU. Nothing is downloaded: ``--model`` must be a local
folder. Prints a table and writes ``benchmarks/results/gpu_check.json`` (``--out``).

``--shapes`` adds models of Qwen2.5-0.5B's and 1.5B's shape (hidden size, layers, heads, MLP width
from their configs) with random weights, built here and saved to a temporary folder with the
embedded model's tokenizer: speed and memory need no trained weights, and nothing is downloaded.
Their vocabulary is the tokenizer's (49,152), not Qwen's 151,936, so their embedding and LM head
are smaller than the real ones'; the parameter count is printed. Per row, the model FLOPs
utilisation: 2 x parameters per generated token, 6 x per token of the update's forward and
backward, 2 x per token of each gradient-free pass (old log-probs when recomputed, the reference
at KL > 0), over the step's time and the chip's dense bf16 peak (H100 / H200: 989 TFLOPS; other
devices: not computed).
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

from solvergym.agents.models import load_tokenizer
from solvergym.algorithms.config import make_config
from solvergym.algorithms.presets import PRESET_TABLE
from solvergym.algorithms.trainer import Trainer
from solvergym.evaluation.tables import format_table

__all__ = ["main", "measure"]


#: model shapes built with random weights (hidden, intermediate, layers, heads, kv heads), from Qwen2.5's
#: configs; "tiny" exercises the same path in the CPU test
SHAPES = {"qwen2.5-0.5b": (896, 4864, 24, 14, 2), "qwen2.5-1.5b": (1536, 8960, 28, 12, 2), "tiny": (64, 128, 2, 4, 2)}
#: dense bf16 peak FLOP/s by device name
PEAK_BF16 = {"H100": 989e12, "H200": 989e12}


def build_shape(name: str, folder: Path) -> tuple[str, int]:
    """A random-weight Qwen2 model of ``name``'s shape with the embedded tokenizer, saved under
    ``folder``; returns its path and parameter count."""
    from transformers import Qwen2Config, Qwen2ForCausalLM

    hidden, inter, layers, heads, kv = SHAPES[name]
    tok = load_tokenizer("default")
    config = Qwen2Config(hidden_size=hidden, intermediate_size=inter, num_hidden_layers=layers,
                         num_attention_heads=heads, num_key_value_heads=kv, vocab_size=len(tok),
                         tie_word_embeddings=True, bos_token_id=tok.bos_token_id, eos_token_id=tok.eos_token_id,
                         pad_token_id=tok.pad_token_id)
    torch.manual_seed(0)
    model = Qwen2ForCausalLM(config)
    path = folder / name
    model.save_pretrained(str(path))
    tok.save_pretrained(str(path))
    return str(path), sum(p.numel() for p in model.parameters())


def _mfu(row: dict, params: int, step_s: float, peak: float | None) -> float | None:
    """Model FLOPs of one step over its time and the chip's peak (the module docstring's count)."""
    if not peak or not params:
        return None
    tokens = row["episodes"] * (row["prompt_length"] + row["response_length"])
    passes = 6 + 2 * (row.get("time/old_logprobs_s", 0.0) > 0) + 2 * (row.get("time/ref_s", 0.0) > 0)
    flops = params * (2 * row["policy_tokens"] + passes * tokens)
    return flops / step_s / peak


def _peak_gib() -> float:
    if torch.cuda.is_available():
        return torch.cuda.max_memory_allocated() / 2**30
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20  # KiB on Linux


def measure(preset: str, model: str, *, prompts: int, group: int, tokens: int, steps: int,
            backend: str = "hf", warmup: int = 1, params: int = 0, peak: float | None = None) -> dict:
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
               "peak_gib": _peak_gib(), "weight_sync_s": sync, "parameters": params or None,
               "mfu": (sum(_mfu(r, params, r["step_s"], peak) or 0.0 for r in rows) / steps) if params and peak else None}
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
    p.add_argument("--shapes", nargs="*", default=[], choices=list(SHAPES),
                   help="models of these shapes with random weights (speed and memory; nothing downloaded)")
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
    params = {"default": 134_515_008}  # the embedded SmolLM2-135M (tied weights once)
    built = tempfile.TemporaryDirectory()
    for shape in a.shapes:
        path, params[path] = build_shape(shape, Path(built.name))
        models.append(path)
    cuda = torch.cuda.is_available()
    name = torch.cuda.get_device_name(0) if cuda else ""
    peak = next((v for k, v in PEAK_BF16.items() if k in name), None)
    vllm_ok = cuda and importlib.util.find_spec("vllm") is not None
    if not vllm_ok:
        skipped.append("vLLM rollouts: " + ("vllm is not installed" if cuda else "no CUDA device (vLLM on CUDA only here)"))
    rows = []
    for model in models:
        for preset in a.presets:
            rows.append(measure(preset, model, prompts=a.prompts, group=a.group, tokens=a.tokens, steps=a.steps,
                                warmup=warmup, params=params.get(model, 0), peak=peak))
            print(f"{preset} on {model}: {rows[-1]['steps_per_s']:.3f} steps/s", flush=True)
        if vllm_ok:
            rows.append(measure("saturn_grpo", model, prompts=a.prompts, group=a.group, tokens=a.tokens,
                                steps=a.steps, backend="vllm", warmup=warmup, params=params.get(model, 0), peak=peak))
    device = torch.cuda.get_device_name(0) if cuda else f"CPU ({platform.processor() or platform.machine()})"
    print(f"\n{device}; {a.prompts} prompts x {a.group} samples x {a.tokens} tokens on SolverSAT-v0")
    for r in rows:  # a built shape by its name, not its temporary folder
        r["model"] = Path(r["model"]).name if str(r["model"]).startswith(built.name) else r["model"]
    shown = [{**r, "mfu": "-" if r["mfu"] is None else f"{r['mfu']:.3f}"} for r in rows]
    print(format_table(shown, [("preset", "preset", "s"), ("model", "model", "s"), ("backend", "rollout", "s"),
                              ("precision", "precision", "s"), ("steps_per_s", "steps/s", ".3f"),
                              ("tokens_per_s", "tokens/s", ".0f"), ("rollout_s", "rollout s", ".2f"),
                              ("update_s", "update s", ".2f"), ("peak_gib", "peak GiB", ".2f"),
                              ("mfu", "MFU", "s")]))
    for s in skipped:
        print("skipped:", s)
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    result = {"benchmark": "gpu_check", "device": device, "date": time.strftime("%Y-%m-%d"), "args": vars(a),
              "torch": torch.__version__, "rows": rows, "skipped": skipped}
    (out / "gpu_check.json").write_text(json.dumps(result, indent=2) + "\n")
    built.cleanup()
    print(f"wrote {out / 'gpu_check.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
