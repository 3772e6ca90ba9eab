"""A tied embedding's gradient added straight into ``.grad`` (agents/tied_grads.py) on the embedded
model: the same logits and the same gradient to rounding over accumulated micro-batches, and no
vocabulary-sized gradient handed to autograd.

The logits were equal bit for bit on the machines this was written on; on a 2-core Xeon of
2026-12-06 (torch 2.13.0+cpu, transformers 5.24 and 5.25 alike; the commit before issue 43 too)
they differ by 4.6e-5 in 33.6 (1.4e-6 of the scale), where F.linear under autograd takes another
GEMM path for a weight that requires a gradient (the plain head's) than for a detached one (the
direct head's); without gradients they are still equal bit for bit (the next test), and one
layer norm's gradient then differs by 1.2e-5 of its scale. So both checks are to rounding: 1e-5
of the logits' scale, 1e-4 of each gradient's; a gradient missing the head's or the lookups'
share is off by its whole size."""
from __future__ import annotations

import pytest
import torch
from torch import nn

from solvergym.agents.lean_activations import use_lean_activations
from solvergym.agents.models import load_model
from solvergym.agents.tied_grads import use_direct_tied_grads


@pytest.fixture(scope="module")
def models():
    plain, direct = load_model("default")[0], load_model("default")[0]
    for m in (plain, direct):  # as the trainer runs them
        use_lean_activations(m)
    assert use_direct_tied_grads(direct) and use_direct_tied_grads(direct)  # a second call: a no-op
    return plain, direct


def _micro_batches():
    g = torch.Generator().manual_seed(0)
    out = []
    for length in (40, 57):
        ids = torch.randint(0, 49152, (2, length), generator=g)
        attn = torch.ones_like(ids)
        attn[0, :5] = 0
        ids[0, :5] = 2  # the padding token, whose row F.embedding gives no gradient
        out.append((ids, attn))
    return out


def _accumulate(model, batches, hook=None):
    model.zero_grad(set_to_none=True)
    handle = model.get_input_embeddings().weight.register_hook(hook) if hook else None
    logits = []
    for ids, attn in batches:
        out = model(input_ids=ids, attention_mask=attn, logits_to_keep=9).logits
        (out.logsumexp(-1) * torch.linspace(-1, 1, 9)).sum().backward()
        logits.append(out.detach())
    if handle:
        handle.remove()
    return logits, {n: p.grad.clone() for n, p in model.named_parameters() if p.grad is not None}


def test_same_logits_and_gradients_over_accumulated_micro_batches(models):
    plain, direct = models
    batches = _micro_batches()
    la, ga = _accumulate(plain, batches)
    layouts = []
    lb, gb = _accumulate(direct, batches, hook=lambda g: layouts.append((g.layout, g._nnz() if g.is_sparse else None)))
    assert all((a - b).abs().max() <= 1e-5 * a.abs().max() for a, b in zip(la, lb))
    assert ga.keys() == gb.keys()
    emb = "model.embed_tokens.weight"
    assert emb in ga and not ga[emb].is_sparse and not gb[emb].is_sparse
    for name in ga:
        scale = ga[name].abs().max()
        assert scale > 0 and (ga[name] - gb[name]).abs().max() <= 1e-4 * scale, name
    # autograd was handed the rows each lookup read, once per backward, not a 49,152-row tensor
    assert layouts == [(torch.sparse_coo, ids.numel() - 5) for ids, _ in batches]


def test_without_gradients_or_with_a_frozen_weight_the_modules_own_forward_runs(models):
    plain, direct = models
    ids, attn = _micro_batches()[0]
    with torch.no_grad():
        assert torch.equal(plain(input_ids=ids, attention_mask=attn).logits,
                           direct(input_ids=ids, attention_mask=attn).logits)
    weight = direct.get_input_embeddings().weight
    weight.requires_grad_(False)
    try:
        direct.zero_grad(set_to_none=True)
        direct(input_ids=ids, attention_mask=attn, logits_to_keep=2).logits.sum().backward()
        assert weight.grad is None and direct.model.layers[0].mlp.up_proj.weight.grad is not None
    finally:
        weight.requires_grad_(True)


def test_an_untied_head_is_left_alone():
    emb = nn.Embedding(10, 4)
    model = nn.Module()
    model.get_input_embeddings = lambda: emb
    model.get_output_embeddings = lambda: nn.Linear(4, 10, bias=False)
    assert not use_direct_tied_grads(model)
    assert not use_direct_tied_grads(None) and not use_direct_tied_grads(nn.Linear(2, 2))


def test_under_autocast_transformers_forwards_run(models):
    """Mixed precision casts inside the modules; the custom backwards (lean activations, direct tied
    gradients) would meet bfloat16 gradients against float32 weights, so both step aside."""
    ids, attn = _micro_batches()[0]
    grads = []
    for m in models:
        m.zero_grad(set_to_none=True)
        with torch.autocast("cpu", dtype=torch.bfloat16):
            out = m(input_ids=ids, attention_mask=attn, logits_to_keep=4).logits
        assert out.dtype == torch.bfloat16
        out.float().logsumexp(-1).sum().backward()
        grads.append({n: p.grad for n, p in m.named_parameters()})
    assert grads[0]["model.embed_tokens.weight"] is not None
    assert all(torch.equal(grads[0][n], grads[1][n]) for n in grads[0])
