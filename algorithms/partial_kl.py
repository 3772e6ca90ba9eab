"""SIRL's Partial KL (``sirl.txt`` eq. 5): the KL penalty only on some sections of the response.

The paper applies it to the ``<model>`` and ``<python>`` sections (``mode="paper"``); the shipped
code keeps everything from the first ``<python`` to the end (``mode="code"``; when the response
has no ``<python`` the code's index falls back to 0, i.e. KL on the whole response, and so does
this). The result is a new tensor: the loss mask is never modified (SIRL's code mutates
``response_mask`` in place, which also removes the policy gradient from the ``<think>`` and
``<model>`` tokens).
"""
from __future__ import annotations

import torch

__all__ = ["partial_kl_mask"]


def partial_kl_mask(loss_mask: torch.Tensor, section_masks: dict[str, torch.Tensor], mode: str | None,
                    tags: tuple[str, ...] = ("model", "python")) -> torch.Tensor:
    """The 0/1 tensor of policy tokens that pay the KL penalty."""
    policy = loss_mask.clone().to(torch.long)
    if mode is None:
        return policy
    if mode == "paper":
        sections = torch.zeros_like(policy)
        for t in tags:
            sections = sections | section_masks[t].to(torch.long)
        return policy * sections
    if mode == "code":
        code = section_masks["python+"].to(torch.long)
        none_found = code.sum(dim=1) == 0
        code = torch.where(none_found[:, None], torch.ones_like(code), code)
        return policy * code
    raise ValueError(f"partial KL mode must be None, 'paper' or 'code', got {mode!r}")
