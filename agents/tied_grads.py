"""A tied embedding's gradient added where it is due, without vocabulary-sized temporaries:
``use_direct_tied_grads(model)``.

When the input embedding and the LM head share one weight (SmolLM2, Qwen2.5-0.5B, Llama 3.2-1B),
autograd sums the weight's gradient contributions in a buffer before they reach ``.grad``: the
head's ``grad^T @ hidden`` (vocabulary x hidden, 113 MB on the embedded model) waits there from
the first op of the backward to the last, and each embedding lookup adds a dense vocabulary-sized
gradient of its own (a second 113 MB) for the few hundred rows it read. Both are alive where the
update's memory peaks, at the end of the backward. Here:

- the head's weight gradient is accumulated into ``.grad`` as it is computed (``addmm_``, no
  temporary), before anything else of the backward reads it;
- each lookup hands autograd a sparse gradient (its rows only), which ``AccumulateGrad`` adds into
  the dense ``.grad`` in place.

``AccumulateGrad`` still runs once per backward with the lookups' gradient, so its hooks (DDP's
all-reduce among them) fire after every contribution is in ``.grad``. The gradient is the same sum
in another order: equal to rounding (``tests/test_tied_grads.py``, which also checks it over
accumulated micro-batches). A model whose head is not tied, or whose tied weight is frozen (LoRA)
or runs under autocast, keeps Transformers' own forwards.
"""
from __future__ import annotations

from types import MethodType
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

__all__ = ["use_direct_tied_grads"]

_DIRECT = "_solvergym_direct_tied"


class _Head(torch.autograd.Function):
    """``hidden @ weight.T``; the weight's gradient goes straight into ``param.grad``."""

    @staticmethod
    def forward(ctx, hidden, weight, holder):
        ctx.save_for_backward(hidden, weight)
        ctx.param = holder[0]
        return F.linear(hidden, weight)

    @staticmethod
    def backward(ctx, grad):
        hidden, weight = ctx.saved_tensors
        g2 = grad.reshape(-1, grad.shape[-1])
        h2 = hidden.reshape(-1, hidden.shape[-1])
        param = ctx.param
        if param.grad is None:
            param.grad = g2.t().mm(h2)
        else:
            param.grad.addmm_(g2.t(), h2)
        grad_hidden = g2.mm(weight).view(hidden.shape) if ctx.needs_input_grad[0] else None
        return grad_hidden, None, None


class _Lookup(torch.autograd.Function):
    """``weight[ids]`` with a sparse gradient (the rows read), added into a dense ``.grad``."""

    @staticmethod
    def forward(ctx, ids, weight, holder, padding_idx):
        ctx.save_for_backward(ids)
        ctx.param = holder[0]
        ctx.shape = weight.shape
        ctx.padding_idx = padding_idx
        return F.embedding(ids, weight, padding_idx)

    @staticmethod
    def backward(ctx, grad):
        (ids,) = ctx.saved_tensors
        param = ctx.param
        if param.grad is None:  # a dense .grad for the sparse one to be added into (not stored as it is)
            param.grad = torch.zeros_like(param)
        ids, rows = ids.reshape(-1), grad.reshape(-1, grad.shape[-1])
        if ctx.padding_idx is not None:  # the padding row gets no gradient (F.embedding's rule)
            keep = ids != ctx.padding_idx
            ids, rows = ids[keep], rows[keep]
        # the ids indexed the weight in the forward: in range, so the invariant check is skipped
        sparse = torch.sparse_coo_tensor(ids[None], rows, ctx.shape, check_invariants=False)
        return None, sparse, None, None


def _active(param: torch.Tensor) -> bool:
    return torch.is_grad_enabled() and param.requires_grad and not torch.is_autocast_enabled(param.device.type)


def _head_forward(self, hidden):
    if not _active(self.weight):
        return type(self).forward(self, hidden)
    # the weight detached: no edge to its AccumulateGrad, which runs once, after the lookups
    return _Head.apply(hidden, self.weight.detach(), (self.weight,))


def _lookup_forward(self, ids):
    if not _active(self.weight) or self.max_norm is not None or self.scale_grad_by_freq:
        return type(self).forward(self, ids)
    return _Lookup.apply(ids, self.weight, (self.weight,), self.padding_idx)


def use_direct_tied_grads(model: Any) -> bool:
    """Switch ``model``'s tied LM head and input embedding (a Transformers causal LM, possibly
    wrapped by PEFT) to the forwards above; ``False`` (nothing changed) where the head is not a
    bias-free ``nn.Linear`` sharing its weight with an ``nn.Embedding``. Calling it again is a no-op."""
    if model is None or not hasattr(model, "get_output_embeddings"):
        return False
    head, emb = model.get_output_embeddings(), model.get_input_embeddings()
    if getattr(head, _DIRECT, False):
        return True
    if type(head) is not nn.Linear or type(emb) is not nn.Embedding or head.bias is not None \
            or head.weight is not emb.weight or emb.sparse:
        return False
    head.forward = MethodType(_head_forward, head)
    emb.forward = MethodType(_lookup_forward, emb)
    setattr(head, _DIRECT, True)
    return True
