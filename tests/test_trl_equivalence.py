"""The trainer's policy loss equals TRL's on identical tensors, for every preset's loss type.

TRL 1.16's own ``GRPOTrainer._compute_loss`` runs on a bare instance (no model, no data: the
attributes its loss reads are set, and its log-prob call returns our tensors), and its loss and
gradient with respect to the policy's log-probs are compared with :func:`policy_loss`'s in
float64. Runs wherever ``trl`` is installed (the ``compare`` extra; ``make test`` installs it).

The mapping: ``seq-mean-token-mean`` is TRL's ``grpo``, ``token-mean`` its ``dapo`` (with
``num_items_in_batch`` the batch's token count), ``seq-mean-token-sum-norm`` its ``dr_grpo``;
the dual clip c is TRL's ``delta`` (an upper bound on the ratio: the same loss for A < 0, and for
A > 0 the clip at 1 + eps_high already decides). k3 in the loss is TRL's ``beta`` KL. A KL in
the reward (SIRL) is in the advantages, which both get as they are. Spring's sequence ratio
exp(sum_t log-ratio) is TRL's ``importance_sampling_level="sequence"`` (GSPO's exp(mean_t)) fed
each sequence's log-ratio times its length, with the KL off (that scaling would change TRL's KL).
"""
from __future__ import annotations

import dataclasses
from collections import defaultdict
from types import SimpleNamespace

import pytest
import torch

trl = pytest.importorskip("trl", reason="the TRL comparison needs trl (pip install -e '.[compare]')")

from solvergym.algorithms.config import make_config  # noqa: E402
from solvergym.algorithms.presets import PRESET_TABLE  # noqa: E402
from solvergym.algorithms.trainer import LossInputs, policy_loss  # noqa: E402

TRL_LOSS = {"seq-mean-token-mean": "grpo", "token-mean": "dapo", "seq-mean-token-sum-norm": "dr_grpo"}


class _Accelerator:
    num_processes = 1
    sync_gradients = True

    def gather(self, x):
        return x

    gather_for_metrics = gather

    def reduce(self, x, reduction="sum"):
        return x


def _trl_loss(cfg, logp, old, adv, mask, ref, length: int):
    """TRL's loss of these tensors under ``cfg``'s loss settings."""
    t = trl.GRPOTrainer.__new__(trl.GRPOTrainer)
    sequence = cfg.ratio == "sequence"
    t.loss_type = TRL_LOSS[cfg.loss_agg]
    t.epsilon_low, t.epsilon_high = cfg.eps_low, cfg.eps_high
    t.beta = cfg.kl_coef if (cfg.kl_in == "loss" and cfg.kl_coef > 0) else 0.0
    t.importance_sampling_level = "sequence" if sequence else "token"
    t.args = SimpleNamespace(delta=cfg.dual_clip, use_bias_correction_kl=False, steps_per_generation=1)
    t.top_entropy_quantile, t.aux_loss_enabled, t.off_policy_mask_threshold = 1.0, False, None
    t.use_vllm, t.vllm_importance_sampling_correction, t._entropy_bonus_enabled = False, False, False
    t.model, t.accelerator, t.current_gradient_accumulation_steps = SimpleNamespace(training=True), _Accelerator(), 1
    t.max_completion_length = length
    t._metrics = defaultdict(lambda: defaultdict(list))
    # Spring: sum_t over the sequence = |o_i| x mean_t, so GSPO's mean of the scaled log-ratio is eq. 2's sum
    fed = old + (logp - old) * mask.sum(-1, keepdim=True) if sequence else logp
    t._get_per_token_logps_and_entropies = lambda *a, **k: (fed, torch.zeros_like(fed), None)
    n = mask.shape[0]
    inputs = {"prompt_ids": torch.zeros(n, 1, dtype=torch.long), "prompt_mask": torch.ones(n, 1, dtype=torch.long),
              "completion_ids": torch.zeros_like(mask, dtype=torch.long), "completion_mask": mask,
              "advantages": adv, "old_per_token_logps": old, "ref_per_token_logps": ref,
              "num_items_in_batch": mask.sum()}
    return t._compute_loss(None, inputs)


def _tensors(per_token_advantages: bool, seed: int = 0, spread: float = 0.8):
    """Log-probs ``spread`` around the sampler's (0.8: the clip at 0.2 / 0.28 is active on some
    tokens; 6: ratios up to e^3 = 20, past the dual clip's c = 10), a reference near the policy."""
    g = torch.Generator().manual_seed(seed)
    n, length = 6, 7
    old = -torch.rand(n, length, generator=g, dtype=torch.float64) * 3
    logp = (old + (torch.rand(n, length, generator=g, dtype=torch.float64) - 0.5) * spread).requires_grad_(True)
    ref = logp.detach() + (torch.rand(n, length, generator=g, dtype=torch.float64) - 0.5) * 0.6
    lengths = torch.tensor([7, 5, 3, 7, 1, 6])
    mask = (torch.arange(length)[None, :] < lengths[:, None]).to(torch.float64)
    if per_token_advantages:  # REINFORCE++: a return per token
        adv = torch.randn(n, length, generator=g, dtype=torch.float64)
    else:  # GRPO: one advantage per sequence, on every token
        adv = torch.tensor([1.2, -0.7, 0.4, -1.5, 0.9, -0.3], dtype=torch.float64)[:, None].expand(n, length).clone()
    return logp, old, adv, mask, ref, length


def _ours(cfg, logp, old, adv, mask, ref, length):
    norm = {"token-mean": float(mask.sum()), "seq-mean-token-mean": float(mask.shape[0]),
            "seq-mean-token-sum-norm": float(mask.shape[0] * length)}[cfg.loss_agg]
    loss, _ = policy_loss(logp, LossInputs(old, adv, mask, ref, mask), cfg, norm)
    return loss


CASES = [(name, {}) for name in PRESET_TABLE] + [("dapo_paper", {"loss_agg": "seq-mean-token-sum-norm",
                                                                   "loss_agg_length": 7})]


@pytest.mark.parametrize("name,extra", CASES, ids=[n + ("-dr_grpo" if e else "") for n, e in CASES])
def test_policy_loss_and_gradient_equal_trls(name, extra):
    cfg = make_config(name, **extra)
    if cfg.ratio == "sequence":
        cfg = dataclasses.replace(cfg, kl_coef=0.0)  # see the module docstring
    assert cfg.kl_in == "reward" or cfg.kl_coef == 0 or cfg.kl_estimator == "k3", "TRL's in-loss KL is k3"
    per_token = cfg.advantage != "grpo"
    diffs = []
    for seed, spread in ((0, 0.8), (1, 0.8), (2, 0.8), (3, 6.0)):
        logp, old, adv, mask, ref, length = _tensors(per_token, seed, spread)
        ours = _ours(cfg, logp, old, adv, mask, ref, length)
        (g_ours,) = torch.autograd.grad(ours, logp)
        theirs = _trl_loss(cfg, logp, old, adv, mask, ref, length)
        (g_trl,) = torch.autograd.grad(theirs, logp)
        diffs += [abs(ours.item() - theirs.item()), (g_ours - g_trl).abs().max().item()]
        assert g_ours.abs().sum() > 0  # a real gradient, on policy tokens only
        assert (g_ours[mask == 0] == 0).all()
    assert max(diffs) <= 1e-12, (name, diffs)
