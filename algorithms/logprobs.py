"""Token log-probabilities from a model's logits, with one logits-sized tensor kept for the backward.

``log_softmax(logits / T).gather(target)`` as autograd runs it keeps the log-softmax for the
backward and makes a logits-sized tensor at each of its four ops (the scaling, the log-softmax, the
gather's zero-filled gradient, the slice's padded gradient), and the entropy two more. On the
embedded model's 49,152-token vocabulary a micro-batch of 4 x 64 completion tokens makes each of
them 50 MB, several alive at once at the start of the backward, where the update's memory peaks.
:class:`PickedLogProb` keeps the logits it is given (the model's output, alive anyway) and the
per-position log-normaliser, and writes the gradient ``(onehot - softmax) * grad / T`` into one
tensor of the logits' shape. The values are those of ``log_softmax`` to rounding (the normaliser
is ``logsumexp``'s), tested against it in ``tests/test_logprobs.py``.
"""
from __future__ import annotations

import torch

__all__ = ["PickedLogProb", "token_logprobs"]


class PickedLogProb(torch.autograd.Function):
    """``log softmax(logits[:, p] / T)[target[:, p]]`` for every position ``p`` but the last, whose
    logits predict nothing; ``logits`` (N, P + 1, V), ``target`` (N, P). Also returns the
    normaliser ``logsumexp(logits[:, p] / T)`` (no gradient), which the entropy reuses."""

    @staticmethod
    def forward(ctx, logits: torch.Tensor, target: torch.Tensor, temperature: float) -> torch.Tensor:
        head = logits[:, :-1]
        scaled = head if temperature == 1.0 else head / temperature
        lse = torch.logsumexp(scaled, dim=-1)
        ctx.save_for_backward(logits, target, lse)
        ctx.temperature = temperature
        ctx.mark_non_differentiable(lse)
        return scaled.gather(-1, target[..., None]).squeeze(-1) - lse, lse

    @staticmethod
    def backward(ctx, grad: torch.Tensor, _grad_lse: torch.Tensor):
        logits, target, lse = ctx.saved_tensors
        t = ctx.temperature
        out = torch.empty_like(logits)
        out[:, -1] = 0
        g = out[:, :-1]
        torch.div(logits[:, :-1], t, out=g)
        g.sub_(lse[..., None]).exp_().mul_(-grad[..., None])  # -softmax * grad
        g.scatter_add_(-1, target[..., None], grad[..., None])
        if t != 1.0:
            g.div_(t)
        return out, None, None


def _entropy(logits: torch.Tensor, lse: torch.Tensor, temperature: float, positions: int = 16) -> torch.Tensor:
    """The entropy of ``softmax(logits / T)`` per position given its normaliser ``lse``, a few
    positions at a time (no gradient): two chunk-sized temporaries instead of two logits-sized ones."""
    parts = []
    for chunk, norm in zip(torch.split(logits, positions, dim=1), torch.split(lse, positions, dim=1)):
        scaled = chunk / temperature
        p = (scaled - norm[..., None]).exp_()
        parts.append(norm - torch.linalg.vecdot(p, scaled))
    return torch.cat(parts, dim=1)


def token_logprobs(logits: torch.Tensor, input_ids: torch.Tensor, temperature: float = 1.0,
                   start: int = 0, entropy: bool = False):
    """``logp[:, t] = log pi(x_t | x_<t)`` as an (N, T) tensor, 0 where not computed.

    ``logits`` are the model's outputs for the last ``T - start`` positions (a model called with
    ``logits_to_keep=T - start``): prompt positions need no logits, and the LM head plus a
    log-softmax over a 49k vocabulary is a large share of a small model's cost. With
    ``entropy=True`` also returns the (detached) entropy of each position's distribution.
    """
    if logits.shape[1] != input_ids.shape[1] - start:
        raise ValueError("logits must cover positions start..T-1")
    if logits.dtype not in (torch.float32, torch.float64):  # half precision: the softmax in float32
        logits = logits.float()
    picked, lse = PickedLogProb.apply(logits, input_ids[:, start + 1:], float(temperature))
    out = torch.zeros(input_ids.shape, dtype=picked.dtype, device=picked.device)
    out[:, start + 1:] = picked
    if not entropy:
        return out
    with torch.no_grad():
        ent = torch.zeros(input_ids.shape, dtype=picked.dtype, device=picked.device)
        ent[:, start + 1:] = _entropy(logits[:, :-1].detach(), lse, float(temperature))
    return out, ent
