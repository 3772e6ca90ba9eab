"""The training presets, each value with where it comes from: the papers as printed, and the
variants their shipped code runs, named so.

A preset has two parts. ``fields`` are the algorithm's hyper-parameters (advantage, loss, clip,
KL, learning rate, group size, sampling): :func:`~solvergym.algorithms.config.make_config`
applies them. ``scale`` is the paper's scale (prompts per step, generation length, mini-batches),
applied only with ``make_config(..., paper_scale=True)`` (``solvergym train --paper-scale``):
the defaults of the scale fields are sized for a laptop CPU. Every entry is ``(value, source)``;
a source that says "not printed" names the framework default the authors ran with.

======================  ==========================================================================
preset                  what it is
======================  ==========================================================================
``saturn_grpo``         SATURN App. D Table 8 (OpenRLHF GRPO, SATURN-1.5B column)
``spring_grpo``         Spring §4.4 eq. 2-3 and §5.1(d): population std, sequence-level ratio, beta 0.01
``satrl_dapo``          SAT-RL §3.4 and Table 8 as printed: per-sequence token mean, no overlong shaping
``dapo_paper``          the DAPO paper (§3, §4.1) with verl's recipe: global token mean, overlong shaping, G 16
``sirl_reinforce_pp``   SIRL §3.2 eq. 4-5 and Tables 6-7 as printed: KL ``rho - log rho - 1`` in the reward, beta 0.005
``sirl_reinforce_pp_code``  SIRL's shipped ``run_partialKL.sh``: k1, beta 5e-4, clip-high 0.30, G 16, KL from ``<python`` on
======================  ==========================================================================

The short names are aliases (:data:`ALIASES`): ``grpo`` is ``saturn_grpo``, ``dapo`` is
``dapo_paper``, ``reinforce_pp`` is ``sirl_reinforce_pp``.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["Preset", "PRESET_TABLE", "ALIASES", "PRESETS", "PAPER_SCALE", "resolve"]

Cited = tuple[Any, str]


@dataclass(frozen=True)
class Preset:
    """A paper's training recipe: ``fields`` and ``scale`` map config fields to ``(value, source)``."""

    paper: str
    fields: dict[str, Cited]
    scale: dict[str, Cited]


_NO_DAPO_EXTRAS: dict[str, Cited] = {
    "dynamic_sampling": (False, "not in the paper (a DAPO extra)"),
    "overlong": (False, "not in the paper (a DAPO extra)"),
}

PRESET_TABLE: dict[str, Preset] = {
    "saturn_grpo": Preset("SATURN", {
        "advantage": ("grpo", "Table 8: advantage estimator GroupNorm (its 'use reward normalization: yes' is "
                              "OpenRLHF's --reward.normalize_enable, a reward model's stored mean / std: a rule "
                              "reward has none, GroupNorm normalises it)"),
        "adv_std": ("group", "Table 8: GroupNorm (OpenRLHF: the group's unbiased std)"),
        "ratio": ("token", "§2.4 eq. 3: r_{i,t}, a ratio per token"),
        "loss_agg": ("seq-mean-token-mean", "§2.4 eq. 3: 1/G sum_i 1/|o_i| sum_t"),
        "eps_low": (0.2, "not printed: OpenRLHF's eps_clip 0.2 (Table 8: other parameters are OpenRLHF's defaults)"),
        "eps_high": (0.2, "not printed: OpenRLHF's eps_clip 0.2"),
        "dual_clip": (None, "not printed: OpenRLHF's default (none)"),
        "kl_coef": (1e-3, "Table 8: initial KL coefficient 1e-3"),
        "kl_estimator": ("k3", "Table 8: KL estimator k3"),
        "kl_in": ("loss", "Table 8: k3 is OpenRLHF's in-loss GRPO estimator (--use_kl_loss)"),
        "lr": (5e-7, "Table 8: actor learning rate 5e-7"),
        "group_size": (8, "Table 8: samples per prompt 8"),
        "temperature": (0.8, "Table 8: temperature 0.8 (SATURN-1.5B; 7B: 1.0)"),
        **_NO_DAPO_EXTRAS,
    }, {
        "prompts_per_step": (2, "Table 8: batch size (rollout) 2"),
        "mini_batches": (8, "Table 8: batch size (train) 2; OpenRLHF counts it in samples, so the 2 x 8 samples "
                            "of a step make 8 optimizer steps"),
        "max_new_tokens": (10000, "Table 8: generation length 10000 (SATURN-1.5B)"),
        "max_total_tokens": (11024, "Table 8: prompt length 1024 + generation 10000"),
    }),
    "spring_grpo": Preset("Spring", {
        "advantage": ("grpo", "§4.4: 'Following GRPO, rewards are normalized within each sampled group'"),
        "adv_std": ("group_population", "§4.4: sigma_r = sqrt(1/G sum (r_i - mean)^2)"),
        "ratio": ("sequence", "§4.4 eq. 2: rho_i = pi(o_i | x) / pi_old(o_i | x)"),
        "loss_agg": ("seq-mean-token-mean", "§4.4 eq. 2: 1/G sum_i (one term per sequence)"),
        "eps_low": (0.2, "not printed (eq. 2's delta): verl's clip_ratio 0.2 (§5.1(d): VERL)"),
        "eps_high": (0.2, "not printed (eq. 2's delta): verl's clip_ratio 0.2"),
        "dual_clip": (None, "not in eq. 2"),
        "kl_coef": (0.01, "§5.1(d): beta = 0.01"),
        "kl_estimator": ("k3", "not printed: verl's kl_loss_type low_var_kl (k3)"),
        "kl_in": ("loss", "§4.4 eq. 3: L = L_GRPO - beta KL"),
        "lr": (1e-6, "not printed: verl's actor learning rate 1e-6"),
        "group_size": (8, "§5.1(d): the GRPO group size n is 8"),
        "temperature": (0.8, "§5.1(d): sampling temperature 0.8 during training"),
        **_NO_DAPO_EXTRAS,
    }, {
        "max_new_tokens": (8192, "§5.1(d): maximum output length 8 x 1024"),
        "max_total_tokens": (16384, "§5.1(d): maximum input and output lengths 8 x 1024 each"),
    }),
    "satrl_dapo": Preset("SAT-RL", {
        "advantage": ("grpo", "§3.4: A = (R_i - mean) / std over the group"),
        "adv_std": ("group", "§3.4: std({R_j}) (verl: the unbiased std)"),
        "ratio": ("token", "§3.4: r_{i,t}, a ratio per token"),
        "loss_agg": ("seq-mean-token-mean", "§3.4: 1/G sum_i 1/|o_i| sum_t"),
        "eps_low": (0.2, "Table 8: clip ratio eps_low 0.2"),
        "eps_high": (0.28, "Table 8: clip ratio eps_high 0.28"),
        "dual_clip": (10.0, "Table 8: clip ratio c 10.0"),
        "kl_coef": (0.0, "Table 8: KL loss 0.0 (disabled)"),
        "lr": (1e-6, "Table 8: learning rate 1e-6"),
        "group_size": (8, "Table 8: DAPO group size (rollout.n) 8"),
        "temperature": (1.0, "Table 8: temperature 1.0"),
        "dynamic_sampling": (True, "§3.4 names DAPO ('Decoupled Clip and Dynamic Sampling Policy "
                             "Optimization'), Table 8 lists no filter setting: inferred from the name"),
        "filter_groups_metric": ("acc", "DAPO eq. 11 (the filter of the algorithm §3.4 names): 0 < #correct < G"),
        "overlong": (False, "not in the paper"),
    }, {
        "prompts_per_step": (128, "Table 8: train batch size 128"),
        "max_new_tokens": (8192, "Table 8: max response length 8192"),
        "max_total_tokens": (12288, "Table 8: max prompt 4096 + response 8192"),
    }),
    "dapo_paper": Preset("DAPO", {
        "advantage": ("grpo", "DAPO §2.2: group-relative advantage"),
        "adv_std": ("group", "DAPO §2.2: std over the group (verl: unbiased)"),
        "ratio": ("token", "DAPO eq. 8: r_{i,t}"),
        "loss_agg": ("token-mean", "DAPO §3.3 eq. 8: 1 / sum_i |o_i| (token-level loss)"),
        "eps_low": (0.2, "DAPO §3.1: eps_low 0.2"),
        "eps_high": (0.28, "DAPO §3.1: eps_high 0.28"),
        "dual_clip": (10.0, "verl recipe run_dapo_qwen2.5_32b.sh: clip_ratio_c 10"),
        "kl_coef": (0.0, "DAPO §2.3: the KL term is removed"),
        "lr": (1e-6, "DAPO §4.1: learning rate 1e-6"),
        "group_size": (16, "DAPO §4.1: 16 responses per prompt"),
        "temperature": (1.0, "verl recipe run_dapo_qwen2.5_32b.sh: temperature 1.0"),
        "dynamic_sampling": (True, "DAPO §3.2: dynamic sampling"),
        "filter_groups_metric": ("acc", "DAPO eq. 11: 0 < #{o_i equivalent to a} < G"),
        "weight_decay": (0.1, "verl recipe run_dapo_qwen2.5_32b.sh: optim.weight_decay=0.1"),
        "overlong": (True, "DAPO §3.4 eq. 13: soft overlong punishment"),
    }, {
        "prompts_per_step": (512, "DAPO §4.1: 512 prompts per step"),
        "mini_batches": (16, "DAPO §4.1: 16 gradient updates per rollout step (verl recipe: ppo_mini_batch_size 32 "
                             "of the 512 prompts)"),
        "warmup_steps": (160, "DAPO §4.1: linear warm-up; verl recipe run_dapo_qwen2.5_32b.sh: lr_warmup_steps=10, "
                              "steps of verl's scheduler, stepped once per training step, so 10 x 16 optimizer steps"),
        "max_gen_batches": (10, "verl recipe run_dapo_qwen2.5_32b.sh: max_num_gen_batches=10 (generation rounds)"),
        "max_new_tokens": (20480, "DAPO §4.1: 20480 generated tokens at most"),
        "overlong_max_tokens": (20480, "DAPO §3.4: L_max 20480"),
        "overlong_cache_tokens": (4096, "DAPO §3.4: L_cache 4096"),
    }),
    "sirl_reinforce_pp": Preset("SIRL", {
        "advantage": ("reinforce_pp", "§3.2: REINFORCE++, normalised over the mini-batch (eq. 4)"),
        "ratio": ("token", "§3.2: a clipped token-level surrogate"),
        "loss_agg": ("token-mean", "not printed: verl's loss_agg_mode token-mean"),
        "eps_low": (0.2, "Table 6: clip ratio low 0.2"),
        "eps_high": (0.28, "Table 6: clip ratio high 0.28"),
        "dual_clip": (None, "not printed"),
        "kl_coef": (0.005, "Table 6: KL coefficient 0.005"),
        "kl_estimator": ("k3_rho", "§3.2 eq. 5: rho - log rho - 1, rho = pi_theta / pi_ref, in the reward (not "
                                   "Table 6's low_var_kl, k3 = exp(-x) - 1 + x, listed for a KL loss it turns off)"),
        "kl_in": ("reward", "§3.2 eq. 4: r_t = reward - beta KL(j, t)"),
        "partial_kl": ("paper", "§3.2 eq. 5: KL on the model and code sections, j in {m-1, m}"),
        "lr": (1e-6, "Table 6: learning rate 1e-6"),
        "group_size": (8, "Table 6: 8 rollouts"),
        "temperature": (1.0, "not printed for rollouts: verl's default 1.0 (Table 7's 0.5 / top-p 0.9 / "
                             "repetition penalty 1.02 with n = 1 is the evaluation's sampling, §11)"),
        "eval_temperature": (0.5, "Table 7: evaluation sampling, n = 1, temperature 0.5 (and top-p 0.9, "
                                  "repetition penalty 1.02)"),
        **_NO_DAPO_EXTRAS,
    }, {
        "prompts_per_step": (128, "Table 6: batch size 128"),
        "mini_batches": (16, "Table 6: mini-batch 8 prompts of the 128"),
        "micro_batch_size": (4, "Table 6: micro-batch 4"),
        "max_new_tokens": (8192, "Table 6: response length 8192"),
        "max_total_tokens": (10240, "Table 6: prompt 2048 + response 8192"),
    }),
    "sirl_reinforce_pp_code": Preset("SIRL (shipped code)", {
        "advantage": ("reinforce_pp", "run_partialKL.sh: adv_estimator reinforce_plus_plus"),
        "ratio": ("token", "verl: a ratio per token"),
        "loss_agg": ("token-mean", "verl's loss_agg_mode token-mean"),
        "eps_low": (0.2, "run_partialKL.sh: clip_ratio_low 0.2"),
        "eps_high": (0.30, "run_partialKL.sh: clip_ratio_high 0.30"),
        "dual_clip": (None, "not set"),
        "kl_coef": (5e-4, "run_partialKL.sh: kl_coef 0.0005"),
        "kl_estimator": ("k1", "run_partialKL.sh: use_kl_in_reward with verl's kl_penalty 'kl' (k1)"),
        "kl_in": ("reward", "run_partialKL.sh: use_kl_in_reward=True"),
        "partial_kl": ("code", "ray_trainer.py: the KL mask starts at the first '<python'"),
        "lr": (1e-6, "run_partialKL.sh: lr 1e-6"),
        "group_size": (16, "run_partialKL.sh: rollout.n 16"),
        "temperature": (1.0, "not set: verl's rollout temperature 1.0"),
        **_NO_DAPO_EXTRAS,
    }, {
        "prompts_per_step": (32, "run_partialKL.sh: train batch size 32"),
        "mini_batches": (1, "run_partialKL.sh: mini-batch 32 of the 32"),
        "micro_batch_size": (2, "run_partialKL.sh: micro-batch 2"),
        "max_new_tokens": (8192, "run_partialKL.sh: max response length 8192"),
        "max_total_tokens": (10240, "run_partialKL.sh: prompt 2048 + response 8192"),
    }),
}

#: the short names (what ``--algo`` took before the papers' presets were split)
ALIASES: dict[str, str] = {"grpo": "saturn_grpo", "dapo": "dapo_paper", "reinforce_pp": "sirl_reinforce_pp"}

#: preset or alias -> the config fields it sets (values only)
PRESETS: dict[str, dict[str, Any]] = {
    name: {k: v for k, (v, _) in PRESET_TABLE[ALIASES.get(name, name)].fields.items()}
    for name in (*PRESET_TABLE, *ALIASES)
}
#: preset or alias -> the paper's scale (values only)
PAPER_SCALE: dict[str, dict[str, Any]] = {
    name: {k: v for k, (v, _) in PRESET_TABLE[ALIASES.get(name, name)].scale.items()}
    for name in (*PRESET_TABLE, *ALIASES)
}


def resolve(name: str) -> str:
    """The preset an alias stands for (a preset's own name unchanged)."""
    return ALIASES.get(name, name)
