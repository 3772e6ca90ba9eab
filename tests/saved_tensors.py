"""What autograd keeps for the backward of one forward: the tests of the trainer's memory savings
(test_attention.py, test_lean_activations.py) compare it between two models."""
from __future__ import annotations

import torch


def forward_keeping(model, ids, attn, keep: int = 8):
    """The logits of the last ``keep`` positions, and the bytes autograd keeps beside the weights."""
    seen = {}
    params = {p.untyped_storage().data_ptr() for p in model.parameters()}

    def pack(x):
        ptr = x.untyped_storage().data_ptr()
        if ptr not in params:
            seen[ptr] = x.untyped_storage().nbytes()
        return x

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda x: x):
        out = model(input_ids=ids, attention_mask=attn, logits_to_keep=keep).logits
    return out, sum(seen.values())
