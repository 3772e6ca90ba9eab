"""Grouped-query SDPA (agents/attention.py) on the embedded model: the same logits bit for bit as
Transformers' copy-each-head path, the same gradients to rounding, and no copied heads kept."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest
import torch

from solvergym.agents.attention import GQA_ATTENTION, use_gqa_attention
from solvergym.agents.models import cache_kwarg, load_model

sys.path.insert(0, str(Path(__file__).parent))
from saved_tensors import forward_keeping  # noqa: E402


@pytest.fixture(scope="module")
def models():
    plain = load_model("default")[0]
    gqa = load_model("default")[0]
    assert use_gqa_attention(gqa) and gqa.config._attn_implementation == GQA_ATTENTION
    return plain, gqa


def _batch(length=120, rows=3):
    g = torch.Generator().manual_seed(0)
    ids = torch.randint(0, 49152, (rows, length), generator=g)
    attn = torch.ones(rows, length, dtype=torch.long)
    attn[1, :17] = 0  # left padding: a mask, the case Transformers copies the heads for
    return ids, attn


def test_same_logits_bit_for_bit_and_gradients_to_rounding(models):
    plain, gqa = models
    ids, attn = _batch()
    grads = []
    for m in (plain, gqa):
        m.zero_grad(set_to_none=True)
        out, _ = forward_keeping(m, ids, attn)
        out.logsumexp(-1).sum().backward()
        grads.append((out.detach(), m.model.layers[3].self_attn.k_proj.weight.grad.clone(),
                      m.model.layers[3].self_attn.q_proj.weight.grad.clone()))
    (a, ka, qa), (b, kb, qb) = grads
    assert torch.equal(a, b)
    assert ka.abs().max() > 0 and torch.allclose(ka, kb, rtol=1e-4, atol=1e-6 * ka.abs().max().item())
    assert torch.allclose(qa, qb, rtol=1e-4, atol=1e-6 * qa.abs().max().item())


def test_the_copied_heads_are_not_kept_for_the_backward(models):
    plain, gqa = models
    ids, attn = _batch(length=200)
    _, kept_plain = forward_keeping(plain, ids, attn)
    _, kept_gqa = forward_keeping(gqa, ids, attn)
    cfg = plain.config
    head = cfg.hidden_size // cfg.num_attention_heads
    # repeat_kv's key and value copies: heads x positions per row, per layer, in fp32
    copies = 2 * cfg.num_hidden_layers * ids.numel() * cfg.num_attention_heads * head * 4
    assert kept_plain - kept_gqa >= 0.6 * copies, (kept_plain, kept_gqa, copies)


def test_decoding_and_other_implementations_are_left_alone(models):
    plain, gqa = models
    ids, attn = _batch(length=30)
    kw = cache_kwarg(plain)
    with torch.no_grad():  # one query position (the decode step) goes through Transformers' own path
        a = plain(input_ids=ids, attention_mask=attn, use_cache=True)
        b = gqa(input_ids=ids, attention_mask=attn, use_cache=True)
        nxt = ids[:, -1:]
        mask = torch.cat([attn, torch.ones(len(ids), 1, dtype=attn.dtype)], 1)
        a2 = plain(input_ids=nxt, attention_mask=mask, **{kw: getattr(a, kw)}).logits
        b2 = gqa(input_ids=nxt, attention_mask=mask, **{kw: getattr(b, kw)}).logits
    assert torch.equal(a.logits, b.logits) and torch.equal(a2, b2)
    eager = load_model("default", attn_implementation="eager")[0]
    assert not use_gqa_attention(eager) and eager.config._attn_implementation == "eager"
