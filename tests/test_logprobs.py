"""The fused token log-probability (algorithms/logprobs.py) against log_softmax + gather as autograd
runs it: the same values and gradients to rounding, the entropy, and one logits-sized tensor kept."""
from __future__ import annotations

import pytest
import torch

from solvergym.algorithms.logprobs import PickedLogProb, token_logprobs


def reference(logits, ids, temperature, start=0):
    lp = torch.log_softmax(logits[:, :-1] / temperature, dim=-1)
    out = torch.zeros(ids.shape, dtype=lp.dtype)
    out[:, start + 1:] = lp.gather(-1, ids[:, start + 1:, None]).squeeze(-1)
    ent = torch.zeros(ids.shape, dtype=lp.dtype)
    ent[:, start + 1:] = -(lp.exp() * lp).sum(-1)
    return out, ent


def _case(dtype, n=3, length=11, vocab=50, start=4, seed=0):
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(0, vocab, (n, length), generator=g)
    logits = (3 * torch.randn(n, length - start, vocab, generator=g)).to(dtype)
    return logits, ids, start


@pytest.mark.parametrize("temperature", [1.0, 0.7])
def test_values_and_gradients_match_log_softmax(temperature):
    logits, ids, start = _case(torch.float32)
    weight = torch.randn(ids.shape, generator=torch.Generator().manual_seed(1))
    got, ref = [], []
    for fn, acc in ((token_logprobs, got), (reference, ref)):
        x = logits.clone().requires_grad_(True)
        lp, ent = fn(x, ids, temperature, start) if fn is reference else fn(x, ids, temperature, start, entropy=True)
        (lp * weight).sum().backward()
        acc += [lp.detach(), ent, x.grad]
    for a, b in zip(got, ref):
        assert a.shape == b.shape and torch.allclose(a, b, rtol=1e-5, atol=1e-5), (a - b).abs().max()
    assert got[0][:, :start + 1].abs().max() == 0 and got[0][:, start + 1:].max() < 0
    assert got[2][:, -1].abs().max() == 0 and got[2].abs().max() > 0  # the last logits predict nothing


def test_gradcheck_in_float64():
    logits, ids, start = _case(torch.float64, n=2, length=6, vocab=7, start=1)
    x = logits.requires_grad_(True)
    assert torch.autograd.gradcheck(lambda t: PickedLogProb.apply(t, ids[:, start + 1:], 0.8)[0], (x,))


def test_float64_agrees_to_rounding():
    logits, ids, start = _case(torch.float64, vocab=49152, length=9, start=2)
    a = token_logprobs(logits, ids, 0.9, start, entropy=True)
    b = reference(logits, ids, 0.9, start)
    for x, y in zip(a, b):
        assert torch.allclose(x, y, rtol=0, atol=1e-11)


def test_one_logits_sized_tensor_is_kept_for_the_backward():
    logits, ids, start = _case(torch.float32, vocab=4096, length=40, start=0)
    x = logits.clone().requires_grad_(True)
    kept = {}

    def pack(t):
        kept[t.untyped_storage().data_ptr()] = t.untyped_storage().nbytes()
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        token_logprobs(x, ids, 0.7, start)
    size = x.untyped_storage().nbytes()
    assert size <= sum(kept.values()) <= size * 1.05, (sum(kept.values()), size)


def test_positions_must_match():
    logits, ids, start = _case(torch.float32)
    with pytest.raises(ValueError, match="cover positions"):
        token_logprobs(logits, ids, 1.0, start + 1)
