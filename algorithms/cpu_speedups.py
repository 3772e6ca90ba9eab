"""The trainer's CPU-only speed-ups, switched on in one place: ``apply(model, reference, cfg, device)``.

Each is exact (the same forward and gradients, tested against the plain model) and was measured on
the CPU, where it pays (its module's docstring and the README's training section give the numbers):

- ``gqa_attention`` (``agents/attention.py``): grouped key/value heads through SDPA as they are,
  not Transformers' copy of each head per group;
- ``lean_activations`` (``agents/lean_activations.py``): the SwiGLU MLPs and RMSNorms keep their
  inputs for the backward and recompute the element-wise outputs;
- ``direct_tied_grads`` (``agents/tied_grads.py``): a tied LM head's weight gradient added into
  ``.grad`` as it is computed, the embedding's as a sparse gradient;
- ``retain_freed_memory`` (``algorithms/heap.py``): glibc keeps what a step frees for the next.

None of them is applied on a GPU (CUDA kernels and allocators have their own answers: fused
attention, the caching allocator), nor under sharding (FSDP / ZeRO own the parameters and their
gradients), nor with a Transformers major version they were not tested on: each skip is said once,
with its reason, in the returned notes (the trainer logs them).
"""
from __future__ import annotations

from typing import Any

from ..agents.attention import use_gqa_attention
from ..agents.lean_activations import use_lean_activations
from ..agents.tied_grads import use_direct_tied_grads
from .heap import retain_freed_memory

__all__ = ["apply", "TESTED_TRANSFORMERS"]

#: the Transformers major versions the patched forwards were tested on (this repository's CI)
TESTED_TRANSFORMERS = (5,)


def _transformers_major() -> int:
    import transformers

    return int(transformers.__version__.split(".")[0])


def apply(model: Any, reference: Any, cfg: Any, device: Any, sharded: bool = False) -> list[str]:
    """Switch on what ``cfg`` asks for on ``model`` (and the reference, where it applies); returns
    one note per speed-up: applied, or skipped and why."""
    asked = [name for name in ("gqa_attention", "lean_activations", "direct_tied_grads", "retain_freed_memory")
             if getattr(cfg, name)]
    why = None
    if getattr(device, "type", str(device)) != "cpu":
        why = "not on a GPU"
    elif sharded:
        why = "not under sharding (FSDP / ZeRO own the parameters)"
    elif _transformers_major() not in TESTED_TRANSFORMERS and asked != ["retain_freed_memory"]:
        why = f"not tested with Transformers {_transformers_major()}.x"
    if why is not None:
        return [f"{name}: off ({why})" for name in asked]
    notes = []
    for name in asked:
        if name == "gqa_attention":
            done = [use_gqa_attention(m) for m in (model, reference) if m is not None]
            notes.append(f"gqa_attention: {'on' if any(done) else 'off (no grouped heads on SDPA)'}")
        elif name == "lean_activations":  # the policy only: the reference runs without gradients
            notes.append(f"lean_activations: on for {use_lean_activations(model)} modules")
        elif name == "direct_tied_grads":
            notes.append(f"direct_tied_grads: {'on' if use_direct_tied_grads(model) else 'off (no tied head)'}")
        else:
            notes.append(f"retain_freed_memory: {'on' if retain_freed_memory() else 'off (not glibc)'}")
    return notes
