"""Save the inputs of cheap element-wise layers, not their outputs: ``use_lean_activations(model)``.

In a training forward autograd keeps what each op's backward reads. For a SwiGLU MLP,
``down(silu(gate(x)) * up(x))``, that is four intermediate-wide tensors per position and layer:
``gate`` (for SiLU's backward), ``silu(gate)`` and ``up`` (for the product's) and the product (for
``down``'s weight gradient). The last two are element-wise functions of the first two, so this
module's MLP keeps ``gate`` and ``up`` and recomputes ``silu(gate)`` and the product in the backward.
For an RMSNorm, ``w * (x * rsqrt(mean(x**2) + eps))``, autograd keeps ``x``, the per-position
``rsqrt`` and the normalised ``x * rsqrt(...)``; this one keeps the first two and recomputes the
normalised tensor.

The forward runs the same ops as Transformers' modules (the same output bit for bit) and the
backward the same formulas as autograd's derivatives of those ops, in the same order, with the
gradients of a tensor used twice summed in autograd's own order: the gradients are the same bit
for bit too (``tests/test_lean_activations.py`` checks both on the embedded model). The
recomputation is element-wise work: no matmul is repeated (unlike gradient checkpointing). On the
embedded model (SmolLM2-135M, 30 layers, intermediate 1536, hidden 576) that is 2 x 1536 + 2 x 576
floats per position and layer fewer: ~51 MB per 100 positions of a training micro-batch (measured:
229 MB less kept for the backward of 3 x 150 positions).

A module is switched only if its class name ends in ``MLP`` / ``RMSNorm``, it has the parts above
(``gate_proj``/``up_proj``/``down_proj`` with a SiLU ``act_fn``; a ``weight`` and
``variance_epsilon``) and its own forward gives this module's output bit for bit on a probe input:
a family whose layers differ (Gemma's ``1 + w``, a GELU MLP, fused ``gate_up_proj``) keeps its
own. ``down_proj`` is multiplied here only when it is a plain ``nn.Linear``; a LoRA-wrapped one
keeps its own forward (the product it is given is then also kept, by it). Under autocast (mixed
precision) both keep their own forwards.
"""
from __future__ import annotations

from types import MethodType
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

__all__ = ["use_lean_activations"]

_LEAN = "_solvergym_lean_forward"


class _SwiGLU(torch.autograd.Function):
    """``silu(gate) * up``, then ``down`` (a plain linear's weight and bias) when given one."""

    @staticmethod
    def forward(ctx, gate, up, weight, bias):
        prod = F.silu(gate) * up
        ctx.save_for_backward(gate, up, weight)
        ctx.has_bias = bias is not None
        return prod if weight is None else F.linear(prod, weight, bias)

    @staticmethod
    def backward(ctx, grad):
        gate, up, weight = ctx.saved_tensors
        silu = F.silu(gate)
        grad_w = grad_b = None
        if weight is None:
            grad_prod = grad
        else:  # matmul's backward as autograd runs it for a (.., in) input folded to 2-D
            g2 = grad.reshape(-1, grad.shape[-1])
            grad_prod = g2.mm(weight).view(up.shape)
            if ctx.needs_input_grad[2]:
                prod = silu * up
                grad_w = g2.t().mm(prod.reshape(-1, prod.shape[-1]))
            if ctx.has_bias and ctx.needs_input_grad[3]:
                grad_b = g2.sum(0)
        grad_gate = torch.ops.aten.silu_backward(grad_prod * up, gate) if ctx.needs_input_grad[0] else None
        grad_up = grad_prod * silu if ctx.needs_input_grad[1] else None
        return grad_gate, grad_up, grad_w, grad_b


class _ScaledNorm(torch.autograd.Function):
    """``w * (x * rstd)``: the last two ops of an RMSNorm, with ``x * rstd`` recomputed in the
    backward. ``rstd`` comes from autograd's own ``rsqrt(mean(x**2) + eps)``, whose nodes keep ``x``
    and ``rstd`` anyway, so this node keeps nothing new; and ``x``'s gradients arrive in the order
    Transformers' module sends them (residual, this product, then ``pow``)."""

    @staticmethod
    def forward(ctx, x, rstd, weight):
        ctx.save_for_backward(x, rstd, weight)
        return weight * (x * rstd)

    @staticmethod
    def backward(ctx, grad):
        x, rstd, weight = ctx.saved_tensors
        grad_w = grad_x = grad_r = None
        if ctx.needs_input_grad[2]:
            grad_w = (grad * (x * rstd)).sum_to_size(weight.shape)
        grad_h = grad * weight
        if ctx.needs_input_grad[0]:
            grad_x = grad_h * rstd
        if ctx.needs_input_grad[1]:
            grad_r = (grad_h * x).sum_to_size(rstd.shape)
        return grad_x, grad_r, grad_w


def _mlp_forward(self, x):
    if torch.is_autocast_enabled(x.device.type):  # its casts are the module's own, not this backward's
        return self.__class__.forward(self, x)
    gate, up = self.gate_proj(x), self.up_proj(x)
    if not torch.is_grad_enabled() or not (gate.requires_grad or up.requires_grad):
        return self.down_proj(F.silu(gate) * up)
    down = self.down_proj
    if type(down) is nn.Linear:
        return _SwiGLU.apply(gate, up, down.weight, down.bias)
    return down(_SwiGLU.apply(gate, up, None, None))


def _norm_forward(self, x):
    if not torch.is_grad_enabled() or x.dtype != torch.float32 or self.weight.dtype != torch.float32 \
            or torch.is_autocast_enabled(x.device.type):
        return self.__class__.forward(self, x)
    rstd = torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.variance_epsilon)
    return _ScaledNorm.apply(x, rstd, self.weight)


def _is_silu(act: Any) -> bool:
    return isinstance(act, nn.SiLU) or type(act).__name__ in ("SiLUActivation", "SiLU")


def _candidate(m: nn.Module):
    name = type(m).__name__
    if name.endswith("MLP") and all(hasattr(m, a) for a in ("gate_proj", "up_proj", "down_proj")) \
            and _is_silu(getattr(m, "act_fn", None)):
        return _mlp_forward, getattr(m.gate_proj, "in_features", None)
    if name.endswith("RMSNorm") and isinstance(getattr(m, "weight", None), torch.Tensor) \
            and isinstance(getattr(m, "variance_epsilon", None), float) and m.weight.dim() == 1:
        return _norm_forward, m.weight.shape[0]
    return None, None


def _same_on_probe(m: nn.Module, lean, width: int) -> bool:
    param = next(m.parameters(), None)
    if param is None or param.device.type == "meta":
        return False
    g = torch.Generator(device="cpu").manual_seed(0)
    probe = torch.randn(2, 3, width, generator=g).to(param.device, torch.float32)
    try:
        with torch.enable_grad():
            ours = lean(m, probe.clone().requires_grad_(True))
        with torch.no_grad():
            theirs = type(m).forward(m, probe)
    except Exception:  # noqa: BLE001 - a layer this module does not understand keeps its own forward
        return False
    return ours.shape == theirs.shape and torch.equal(ours.detach(), theirs)


def use_lean_activations(model: Any) -> int:
    """Switch ``model``'s SwiGLU MLPs and RMSNorms (a Transformers model, possibly wrapped by PEFT)
    to the forwards above; returns how many modules now use them. Calling it again is a no-op;
    ``None`` and models without such layers give 0."""
    if model is None:
        return 0
    count = 0
    for m in model.modules():
        if getattr(m, _LEAN, False):
            count += 1
            continue
        lean, width = _candidate(m)
        if lean is None or not width or not _same_on_probe(m, lean, width):
            continue
        m.forward = MethodType(lean, m)
        setattr(m, _LEAN, True)
        count += 1
    return count
