"""The memory a training run's states take per GPU, computed from exact parameter counts.

    python benchmarks/gpu_memory.py [--gpus 1 8] [--gpu-gib 80] [--vllm-share 0.3]

For Qwen2.5-0.5B, -1.5B and -7B (the papers' model family; their shapes from their published
configs, built on PyTorch's ``meta`` device: nothing is downloaded or allocated) and each training
strategy, the bytes per GPU of what a step keeps whatever its batch: the policy's weights, their
gradients, AdamW's two moments, the reference model (KL > 0) and a colocated vLLM engine's share.
Activations and the KV cache depend on the batch and are not in it (the KV cache lives inside
vLLM's share). Per parameter:

- DDP, ``mixed_precision="bf16"`` over fp32 master weights (the GPU default): 4 (weights) + 4
  (gradients) + 8 (AdamW) = 16 bytes, on every GPU; the reference in bf16 (``ref_dtype="auto"``): 2.
- DDP, ``param_dtype="bfloat16"`` (plain bf16 weights and AdamW): 2 + 2 + 4 = 8 bytes.
- FSDP2 / ZeRO-3 over N GPUs: the 16 bytes (and the reference's 2) divided by N, plus one
  decoder layer gathered at a time in bf16. The trainer does not yet shard (issue 44): these rows
  say what sharding will make fit.

``fits`` compares the sum plus the vLLM engine's share of the GPU (``--vllm-share``, 0.3: TRL's
colocate default) with ``--gpu-gib`` (78: what an 80 GB H100 leaves to a process, about; an
H200: 139). Prints a table, writes ``gpu_memory.json``.
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

from solvergym.evaluation.tables import format_table

HERE = Path(__file__).resolve()

#: Qwen2.5 shapes as their config.json files give them (hidden, intermediate, layers, heads, kv heads,
#: vocabulary, tied embeddings)
SHAPES = {
    "Qwen2.5-0.5B": (896, 4864, 24, 14, 2, 151936, True),
    "Qwen2.5-1.5B": (1536, 8960, 28, 12, 2, 151936, True),
    "Qwen2.5-7B": (3584, 18944, 28, 28, 4, 152064, False),
}


def parameters(name: str) -> tuple[int, int]:
    """``(all parameters, one decoder layer's)`` of the model, counted on the meta device."""
    import torch
    from transformers import AutoModelForCausalLM, Qwen2Config

    hidden, inter, layers, heads, kv, vocab, tied = SHAPES[name]
    config = Qwen2Config(hidden_size=hidden, intermediate_size=inter, num_hidden_layers=layers,
                         num_attention_heads=heads, num_key_value_heads=kv, vocab_size=vocab,
                         tie_word_embeddings=tied)
    with torch.device("meta"):
        model = AutoModelForCausalLM.from_config(config)
    total = sum(p.numel() for p in model.parameters())  # a tied head's weight is counted once
    layer = sum(p.numel() for p in model.model.layers[0].parameters())
    return total, layer


def rows(gpus: list[int], gpu_gib: float, vllm_share: float) -> list[dict]:
    gib = 2 ** 30
    out = []
    for name in SHAPES:
        total, layer = parameters(name)
        for n in gpus:
            if n == 1:  # DDP replicates: the same per GPU on any number of them
                strategies = [("one GPU or DDP: bf16 autocast, fp32 AdamW", 16, 2, 1, 0),
                              ("one GPU or DDP: bf16 weights, bf16 AdamW", 8, 2, 1, 0)]
            else:
                strategies = [(f"FSDP2 / ZeRO-3 over {n}: fp32 AdamW", 16, 2, n, 2 * layer)]
            for label, per_param, ref_per_param, shards, gathered in strategies:
                train = total * per_param / shards + gathered
                ref = total * ref_per_param / shards
                states = (train + ref) / gib
                engine = vllm_share * gpu_gib
                out.append({"model": name, "parameters": total, "gpus": n, "strategy": label,
                            "policy_gib": train / gib, "reference_gib": ref / gib, "states_gib": states,
                            "vllm_share_gib": engine, "vllm_weights_gib": 2 * total / gib,
                            "left_for_activations_gib": gpu_gib - states - engine,
                            "fits": states + engine < gpu_gib})
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--gpus", type=int, nargs="*", default=[1, 8])
    p.add_argument("--gpu-gib", type=float, default=78.0)
    p.add_argument("--vllm-share", type=float, default=0.3)
    p.add_argument("--out", type=Path, default=HERE.parent / "results")
    a = p.parse_args(argv)
    table = rows(a.gpus, a.gpu_gib, a.vllm_share)
    shown = [{**r, "parameters": f"{r['parameters'] / 1e9:.2f}B", "fits": "yes" if r["fits"] else "NO"} for r in table]
    print(format_table(shown, [("model", "model", "s"), ("parameters", "params", "s"), ("gpus", "GPUs", "d"),
                               ("strategy", "strategy", "s"), ("policy_gib", "policy+grads+AdamW GiB", ".1f"),
                               ("reference_gib", "reference GiB", ".1f"),
                               ("vllm_share_gib", "vLLM share GiB", ".1f"),
                               ("left_for_activations_gib", "left GiB", ".1f"), ("fits", "fits", "s")]))
    a.out.mkdir(parents=True, exist_ok=True)
    (a.out / "gpu_memory.json").write_text(json.dumps({"gpu_gib": a.gpu_gib, "vllm_share": a.vllm_share,
                                                       "rows": table}, indent=2) + "\n")
    print(f"wrote {a.out / 'gpu_memory.json'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
