"""The linear layers of a CPU decode step computed weight-first: ``with decode_linears(model): ...``.

A decode step multiplies a few rows (one token per sequence still generating) by every weight of
the model (540 MB a step for the embedded model in fp32). ``F.linear`` computes ``x @ W.T``, and
for a few rows against the transposed weight MKL's sgemm is slower than for ``W @ x.T``, the
same products with each weight row streamed once. On this 2-core machine, 8 rows through the
tied head (49,152 x 576): 15.6 -> 7.2 ms; through the 30 layers' projections: 39.6 -> 32.9 ms; a
rollout of 2 prompts x 4 samples x 64 tokens: 7.0 -> 6.1 s (``benchmarks/train_speed.py``
measures the whole step). Even so, the products are bound by MKL's kernel for so few rows, not
by memory: 8 rows through weights streamed from memory run at 32 GFLOPS on one core and 49 on
two (8.0 and 12.3 GB/s of weights), where a sum reads the same bytes at 25 and 41 GB/s and a
large product runs at ~200 GFLOPS (``train_speed.py --profile`` measures both rates).

The values are the same products summed in another order: equal to rounding, not bit for bit, so
a sampled token can differ where rounding moves it across a draw (6 of 8 such samples were the
same as before).
Only the decode steps take this path (the prefill and the training forwards keep ``F.linear``,
whose many rows make sgemm compute-bound), only on the CPU, without autograd, and for at most
:data:`MAX_ROWS` rows; anything else (a module's own forward, such as the direct tied head's,
included) runs unchanged.
"""
from __future__ import annotations

import contextlib
from typing import Any, Iterator

import torch
from torch import nn

__all__ = ["MAX_ROWS", "decode_linears"]

#: the most rows a linear layer computes weight-first (a decode step has one per active sequence)
MAX_ROWS = 32


@contextlib.contextmanager
def decode_linears(model: Any) -> Iterator[None]:
    """Within the block, every plain ``nn.Linear`` of ``model`` on the CPU computes a call of at most
    :data:`MAX_ROWS` rows without autograd as ``(W @ x.T).T`` (+ bias); on leaving it, each
    module's forward is what it was (an instance's own forward included)."""
    patched: list[tuple[nn.Linear, Any]] = []
    try:
        for module in model.modules() if isinstance(model, nn.Module) else ():
            # exactly nn.Linear: a subclass (a quantised layer, say) computes something else
            if type(module) is nn.Linear and module.weight.device.type == "cpu":
                own = module.__dict__.get("forward")
                patched.append((module, own))
                module.forward = _weight_first(module, own or type(module).forward.__get__(module))
        yield
    finally:
        for module, own in patched:
            if own is None:
                module.__dict__.pop("forward", None)
            else:
                module.forward = own


def _weight_first(module: nn.Linear, fallback):
    weight = module.weight

    def forward(x: torch.Tensor) -> torch.Tensor:
        rows = x.numel() // max(1, x.shape[-1]) if x.dim() else 0
        if not 0 < rows <= MAX_ROWS or torch.is_grad_enabled() or x.dtype != weight.dtype \
                or x.device != weight.device or torch.is_autocast_enabled("cpu"):
            return fallback(x)
        x2 = x.reshape(rows, x.shape[-1])
        bias = module.bias
        out = (torch.addmm(bias[:, None], weight, x2.t()) if bias is not None else weight.mm(x2.t())).t()
        return out.contiguous().view(*x.shape[:-1], weight.shape[0])

    return forward
