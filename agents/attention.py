"""Grouped-query attention without ``repeat_kv`` for the CPU: ``use_gqa_attention(model)``.

Transformers' SDPA path copies each key and value head ``num_key_value_groups`` times
(``repeat_kv``) before ``scaled_dot_product_attention`` whenever there is an attention mask (it
passes ``enable_gqa=True`` only without one, for CUDA's kernels), and autograd keeps those copies
for the backward pass. SmolLM2-135M has 3 key/value heads for 9 query heads: in a training
forward of 4 rows x ~400 positions the copies are ~220 MB of the ~1 GB of saved activations.
PyTorch's CPU kernel takes the grouped heads as they are (``enable_gqa=True``, masks included)
and gives the same forward output bit for bit (the key/value gradients differ in the last bit:
the group's heads are summed in another order). On the embedded model, 4 rows x 401 positions
with left padding: forward 3.85 -> 1.66 s, forward + backward 8.29 -> 5.45 s. Calls without a
mask gain nothing (Transformers already passes ``enable_gqa`` there): in the trainer's
shared-prefix step only the rows' own positions and padded prefills have one.

Only multi-position calls on the CPU without extras (position bias, soft-capping, attention
weights) take this path; every other call, decoding included (Transformers packs a single query
per group there, already without a copy), is Transformers' own ``sdpa`` function.
"""
from __future__ import annotations

from typing import Any

import torch

__all__ = ["GQA_ATTENTION", "use_gqa_attention"]

GQA_ATTENTION = "solvergym_sdpa_gqa"


def _gqa_sdpa_forward(module, query, key, value, attention_mask, dropout: float = 0.0, scaling=None,
                      is_causal=None, **kwargs):
    from transformers.integrations.sdpa_attention import sdpa_attention_forward

    groups = getattr(module, "num_key_value_groups", 1)
    q_length = query.shape[2]
    plain = (groups <= 1 or q_length == 1 or query.device.type != "cpu" or kwargs.get("position_bias") is not None
             or kwargs.get("softcap") is not None or kwargs.get("output_attentions", False))
    if plain:
        return sdpa_attention_forward(module, query, key, value, attention_mask, dropout=dropout, scaling=scaling,
                                      is_causal=is_causal, **kwargs)
    # the causal flag as Transformers sets it: only without a mask (the kernel's mask is then implicit)
    is_causal = is_causal if is_causal is not None else getattr(module, "is_causal", True)
    is_causal = attention_mask is None and bool(is_causal)
    if is_causal and key.shape[2] > q_length:  # a prefill into an empty static cache: the rest is unwritten
        key, value = key[:, :, :q_length], value[:, :, :q_length]
    out = torch.nn.functional.scaled_dot_product_attention(query, key, value, attn_mask=attention_mask,
                                                           dropout_p=dropout, scale=scaling, is_causal=is_causal,
                                                           enable_gqa=True)
    return out.transpose(1, 2).contiguous(), None


def _register() -> None:
    from transformers import AttentionInterface
    from transformers.masking_utils import ALL_MASK_ATTENTION_FUNCTIONS, sdpa_mask

    AttentionInterface.register(GQA_ATTENTION, _gqa_sdpa_forward)  # again: the same entry
    ALL_MASK_ATTENTION_FUNCTIONS.register(GQA_ATTENTION, sdpa_mask)  # the masks SDPA takes


def use_gqa_attention(model: Any) -> bool:
    """Switch ``model`` (a Transformers model using ``sdpa``, possibly wrapped by PEFT) to the
    grouped-query SDPA above; returns whether it did. ``None``, models on another attention
    implementation (eager, flash, flex) and models without grouped heads keep theirs."""
    config = getattr(model, "config", None)
    if config is None or getattr(config, "_attn_implementation", None) != "sdpa":
        return False
    heads, kv_heads = getattr(config, "num_attention_heads", None), getattr(config, "num_key_value_heads", None)
    if not heads or not kv_heads or heads == kv_heads:
        return False
    _register()
    base = model.get_base_model() if hasattr(model, "get_base_model") else model
    base.set_attn_implementation(GQA_ATTENTION)
    return config._attn_implementation == GQA_ATTENTION
