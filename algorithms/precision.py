"""Which dtype each part of a run holds, from the config and the device.

The papers train in bf16 (SATURN Table 8: ZeRO-3 in bf16; SAT-RL Table 8: FSDP2 with bf16
compute). On a GPU the defaults are what they ran: the policy's weights and AdamW's moments in fp32
(the master copy) with bf16 autocast (``mixed_precision="auto"`` -> ``"bf16"``), the reference model
in bf16 (it needs no master copy: it is never updated), and SFT under the same autocast. On the CPU
everything stays fp32 unless asked (bf16 matmuls there are slower than fp32 on most CPUs, and the
CPU tests hold losses to TRL's in fp32 / fp64). ``param_dtype="bfloat16"`` trains the policy in
plain bf16 with bf16 AdamW: half the memory of weights, gradients and moments, at the cost of
updates smaller than bf16's resolution being lost (lr 1e-6 on a weight of 1 is below bf16's
7.8e-3 step: such a weight does not move), which is why it is a setting, not the default.
"""
from __future__ import annotations

from typing import Any

import torch

__all__ = ["mixed_precision", "reference_dtype", "policy_dtype", "DTYPES"]

DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16}


def _bf16_gpu() -> bool:
    return torch.cuda.is_available() and torch.cuda.is_bf16_supported()


def mixed_precision(value: str) -> str:
    """Accelerate's ``mixed_precision`` for a config's value: ``"auto"`` is bf16 on a CUDA device
    that supports it, ``"no"`` (fp32) otherwise."""
    if value == "auto":
        return "bf16" if _bf16_gpu() else "no"
    return value


def reference_dtype(value: str, device: Any) -> torch.dtype:
    """The reference model's dtype: ``"auto"`` is bf16 on a CUDA device that supports it (no master
    copy needed: it only runs forward), fp32 on the CPU."""
    if value == "auto":
        return torch.bfloat16 if torch.device(device).type == "cuda" and _bf16_gpu() else torch.float32
    return DTYPES[value]


def policy_dtype(value: str) -> torch.dtype:
    """The trained policy's parameter (and so AdamW state) dtype: fp32 master weights by default."""
    return DTYPES[value]
