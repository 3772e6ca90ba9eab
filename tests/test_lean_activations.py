"""Lean activations (agents/lean_activations.py) on the embedded model: the same logits and the same
gradients bit for bit as Transformers' own modules, and the element-wise outputs not kept."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest
import torch
from torch import nn

from solvergym.agents.attention import use_gqa_attention
from solvergym.agents.lean_activations import use_lean_activations
from solvergym.agents.models import load_model

sys.path.insert(0, str(Path(__file__).parent))
from saved_tensors import forward_keeping  # noqa: E402


@pytest.fixture(scope="module")
def models():
    plain, lean = load_model("default")[0], load_model("default")[0]
    for m in (plain, lean):  # as the trainer runs them
        use_gqa_attention(m)
    cfg = lean.config
    assert use_lean_activations(lean) == cfg.num_hidden_layers * 3 + 1  # an MLP and two norms a layer, the final norm
    return plain, lean


def _batch(length=150, rows=3):
    g = torch.Generator().manual_seed(0)
    ids = torch.randint(0, 49152, (rows, length), generator=g)
    attn = torch.ones(rows, length, dtype=torch.long)
    attn[1, :20] = 0  # left padding, as a batch of prompts has
    return ids, attn


def test_same_logits_and_gradients_bit_for_bit(models):
    ids, attn = _batch()
    runs = []
    for m in models:
        m.zero_grad(set_to_none=True)
        out, _ = forward_keeping(m, ids, attn)
        out.logsumexp(-1).sum().backward()
        runs.append((out.detach(), {n: p.grad.clone() for n, p in m.named_parameters() if p.grad is not None}))
    (a, ga), (b, gb) = runs
    assert torch.equal(a, b)
    assert ga.keys() == gb.keys() and len(ga) == len(list(models[0].parameters()))
    different = [n for n in ga if not torch.equal(ga[n], gb[n])]
    assert not different, different
    assert ga["model.layers.0.mlp.gate_proj.weight"].abs().max() > 0  # a gradient reached the first layer


def test_the_element_wise_outputs_are_not_kept(models):
    plain, lean = models
    ids, attn = _batch()
    _, kept_plain = forward_keeping(plain, ids, attn)
    _, kept_lean = forward_keeping(lean, ids, attn)
    cfg = plain.config
    # silu(gate) and the product per MLP, the normalised input per norm: fp32, per position and layer
    spared = cfg.num_hidden_layers * ids.numel() * (2 * cfg.intermediate_size + 2 * cfg.hidden_size) * 4
    assert 0.95 * spared <= kept_plain - kept_lean <= 1.05 * spared, (kept_plain, kept_lean, spared)


def test_without_gradients_the_modules_own_forward_runs(models):
    plain, lean = models
    ids, attn = _batch(length=40)
    with torch.no_grad():
        a = plain(input_ids=ids, attention_mask=attn).logits
        b = lean(input_ids=ids, attention_mask=attn).logits
    assert torch.equal(a, b)


class _OnePlusNorm(nn.Module):
    """Gemma's RMSNorm shape: ``(1 + w)`` scales, so this module's forward would be wrong for it."""

    def __init__(self, width=8):
        super().__init__()
        self.weight = nn.Parameter(torch.linspace(-0.5, 0.5, width))
        self.variance_epsilon = 1e-6

    def forward(self, x):
        return (1 + self.weight) * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.variance_epsilon))


class GeluMLP(nn.Module):
    def __init__(self, width=8):
        super().__init__()
        self.gate_proj, self.up_proj, self.down_proj = nn.Linear(width, 16), nn.Linear(width, 16), nn.Linear(16, width)
        self.act_fn = nn.GELU()

    def forward(self, x):
        return self.down_proj(self.act_fn(self.gate_proj(x)) * self.up_proj(x))


def test_layers_of_another_shape_keep_their_own_forward():
    norm = type("GemmaRMSNorm", (_OnePlusNorm,), {})()
    assert use_lean_activations(nn.Sequential(norm, GeluMLP())) == 0
    assert use_lean_activations(None) == 0


def test_a_lora_wrapped_model_trains_with_the_same_gradients(models):
    peft = pytest.importorskip("peft")
    plain = load_model("default")[0]
    lean = load_model("default")[0]
    runs = []
    for m, switch in ((plain, False), (lean, True)):
        cfg = peft.LoraConfig(r=4, lora_alpha=8, target_modules=["q_proj", "down_proj"], init_lora_weights=False)
        torch.manual_seed(0)  # the same adapter weights on both sides
        wrapped = peft.get_peft_model(m, cfg)
        if switch:
            assert use_lean_activations(wrapped) == use_lean_activations(wrapped) > 0  # a second call: a no-op
        ids, attn = _batch(length=60, rows=2)
        wrapped(input_ids=ids, attention_mask=attn, logits_to_keep=4).logits.logsumexp(-1).sum().backward()
        runs.append({n: p.grad.clone() for n, p in wrapped.named_parameters() if p.grad is not None})
    a, b = runs
    assert a.keys() == b.keys() and any("down_proj.lora_A" in n for n in a)
    different = [n for n in a if not torch.equal(a[n], b[n])]
    assert not different, different
