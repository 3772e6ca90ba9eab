"""Advantage, loss, KL and mask functions against values worked out by hand from the formulas."""
import math
from pathlib import Path

import pytest
import torch

from solvergym.algorithms.advantages import (
    grpo_advantages, grpo_step_advantages, group_mean_baseline, masked_whiten, reinforce_pp_returns,
    reinforce_pp_token_rewards,
)
from solvergym.algorithms.config import PRESETS, TrainConfig, make_config
from solvergym.algorithms.presets import ALIASES, PRESET_TABLE
from solvergym.algorithms.dapo import group_has_signal, overlong_penalty
from solvergym.algorithms.kl import kl_estimate
from solvergym.algorithms.losses import aggregate, clipped_surrogate, sequence_clipped_surrogate
from solvergym.algorithms.partial_kl import partial_kl_mask
from solvergym.algorithms.rollout import section_mask
from solvergym.algorithms.trainer import Trainer, token_logprobs
from solvergym.kv import parse_kv

R = torch.tensor([1.0, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0, 1.0])
G = torch.tensor([0, 0, 0, 0, 1, 1, 1, 1])


def test_grpo_group_std_and_zero_std_group():
    a = grpo_advantages(R, G, std="group", eps=0.0 + 1e-12)
    # group 0: mean 0.5, unbiased std sqrt(4 * 0.25 / 3) = 0.577350; group 1 has std 0 -> A = 0
    assert torch.allclose(a[:4], torch.tensor([0.866025, -0.866025, -0.866025, 0.866025]), atol=1e-5)
    assert torch.equal(a[4:], torch.zeros(4))


def test_grpo_batch_std_and_dr_grpo():
    a = grpo_advantages(R, G, std="batch", eps=0.0)
    # batch mean 0.75; unbiased var (6 * 0.0625 + 2 * 0.5625) / 7 = 0.2142857; std 0.4629100
    assert torch.allclose(a[:4], torch.tensor([1.080123, -1.080123, -1.080123, 1.080123]), atol=1e-5)
    assert torch.equal(grpo_advantages(R, G, std="none"), torch.tensor([0.5, -0.5, -0.5, 0.5, 0, 0, 0, 0]))
    assert torch.equal(group_mean_baseline(R, G), torch.tensor([0.5, -0.5, -0.5, 0.5, 0, 0, 0, 0]))
    with pytest.raises(ValueError):
        grpo_advantages(torch.tensor([1.0, 2.0]), torch.tensor([0, 1]))


def test_reinforce_pp_returns_cross_observation_spans():
    # prompt | policy policy | observation observation | policy | obs | policy policy | pad
    mask = torch.tensor([[0, 1, 1, 0, 0, 1, 0, 1, 1, 0]])
    kl = torch.full((1, 10), 0.1)
    rewards = reinforce_pp_token_rewards(torch.tensor([1.0]), mask, kl, beta=0.5)
    # -beta*KL = -0.05 on policy tokens; the outcome 1 lands on the last policy token (index 8)
    assert torch.allclose(rewards, torch.tensor([[0, -0.05, -0.05, 0, 0, -0.05, 0, -0.05, 0.95, 0]]))
    g = reinforce_pp_returns(rewards, mask)
    # the observation spans do not reset the running return
    assert torch.allclose(g, torch.tensor([[0, 0.75, 0.80, 0, 0, 0.85, 0, 0.90, 0.95, 0]]))
    assert torch.allclose(reinforce_pp_returns(rewards, mask, gamma=0.5)[0, 7], torch.tensor(-0.05 + 0.5 * 0.95))


def test_per_turn_rewards_reach_their_own_and_earlier_tokens():
    # two turns: policy (1,2) | obs (3) | policy (4,5); turn rewards at 2 and 5
    mask = torch.tensor([[0, 1, 1, 0, 1, 1], [0, 1, 1, 0, 1, 1]])
    turns = torch.tensor([[0, 0, 1.0, 0, 0, 0.0], [0, 0, 0.0, 0, 0, 1.0]])  # equal sums, other orders
    r = reinforce_pp_token_rewards(torch.zeros(2), mask, turn_rewards=turns)
    g = reinforce_pp_returns(r, mask)
    assert torch.equal(g, torch.tensor([[0, 1.0, 1.0, 0, 0, 0], [0, 1.0, 1.0, 0, 1.0, 1.0]]))
    # a baseline shift lands on the last policy token, as the outcome does
    r = reinforce_pp_token_rewards(torch.tensor([-0.5, -0.5]), mask, turn_rewards=turns)
    assert torch.equal(r[:, 5], torch.tensor([-0.5, 0.5]))


def test_grpo_with_process_supervision():
    # DeepSeekMath §4.1.3: one group of two episodes, two steps each, step rewards 1, 0 | 0, 1
    mask = torch.tensor([[0, 1, 1, 0, 1, 1], [0, 1, 1, 0, 1, 1]])
    steps = torch.tensor([[0, 0, 1, 0, 0, 1], [0, 0, 1, 0, 0, 1]])
    turns = torch.tensor([[0, 0, 1.0, 0, 0, 0.0], [0, 0, 0.0, 0, 0, 1.0]])
    a = grpo_step_advantages(turns, steps, mask, torch.tensor([0, 0]), eps=0.0)
    # R = {1, 0, 0, 1}: mean 0.5, unbiased std sqrt(1/3), so r~ = +-z; a token's advantage sums the
    # r~ of its step and the later ones: turn 1 z - z = 0 in both, turn 2 -z (A) and +z (B)
    z = 0.5 / math.sqrt(1 / 3)
    assert torch.allclose(a, torch.tensor([[0, 0, 0, 0, -z, -z], [0, 0, 0, 0, z, z]]), atol=1e-5)
    # one step per episode: plain GRPO with the group std
    last = torch.tensor([[0, 0, 0, 0, 0, 1]] * 4)
    one = grpo_step_advantages(torch.tensor([[0, 0, 0, 0, 0, r] for r in (1.0, 0.0, 0.0, 1.0)]), last,
                               torch.tensor([[0, 1, 1, 0, 1, 1]] * 4), torch.tensor([0, 0, 0, 0]), eps=0.0)
    want = grpo_advantages(torch.tensor([1.0, 0.0, 0.0, 1.0]), torch.tensor([0, 0, 0, 0]), eps=0.0)
    assert torch.allclose(one[:, 1], want) and torch.allclose(one[:, 5], want)


def test_reinforce_pp_truncated_sample_and_whitening():
    # a sample cut at the length limit: its last policy token is the last column
    mask = torch.tensor([[0, 0, 1, 1, 1], [0, 1, 1, 0, 0]])
    r = reinforce_pp_token_rewards(torch.tensor([-1.0, 2.0]), mask)
    assert torch.equal(r, torch.tensor([[0, 0, 0, 0, -1.0], [0, 0, 2.0, 0, 0]]))
    g = reinforce_pp_returns(r, mask)
    assert torch.equal(g, torch.tensor([[0, 0, -1.0, -1.0, -1.0], [0, 2.0, 2.0, 0, 0]]))
    w = masked_whiten(g, mask, eps=0.0)
    vals = torch.tensor([-1.0, -1.0, -1.0, 2.0, 2.0])  # mean 0.2, unbiased var (3*1.44 + 2*3.24)/4 = 2.7
    expect = (vals - 0.2) / math.sqrt(2.7)
    assert torch.allclose(w[mask.bool()], expect, atol=1e-6)
    assert torch.equal(w[~mask.bool()], torch.zeros(5))


def test_spring_population_std():
    # Spring §4.4: sigma_r with 1/G. On [1,0,0,0,1,1,0,0]: mean 3/8, population var 15/64,
    # A_1 = (5/8) / sqrt(15/64) = 1.290994; the unbiased std gives (5/8) / sqrt(15/56) = 1.207615
    r = torch.tensor([1.0, 0, 0, 0, 1, 1, 0, 0])
    g = torch.zeros(8, dtype=torch.long)
    pop = grpo_advantages(r, g, std="group_population", eps=0.0)
    assert pop[0].item() == pytest.approx(5 / 8 / math.sqrt(15 / 64), rel=1e-6)  # float32 rewards
    assert pop[0].item() == pytest.approx(1.290994, rel=1e-6)
    assert pop[1].item() == pytest.approx(-3 / 8 / math.sqrt(15 / 64), rel=1e-6)
    assert grpo_advantages(r, g, std="group", eps=0.0)[0].item() == pytest.approx(1.207615, rel=1e-6)


def test_sequence_level_ratio_spring_eq2():
    # two sequences; log-ratios per token (policy tokens only): seq 0 sums to log 1.5, seq 1 to log 0.5
    old = torch.zeros(2, 3)
    logp = torch.tensor([[math.log(1.2), math.log(1.25), 9.0], [math.log(0.5), 0.0, 0.0]])
    mask = torch.tensor([[1, 1, 0], [1, 1, 0]])
    adv = torch.tensor([[1.0, 1.0, 1.0], [-2.0, -2.0, -2.0]])
    loss, clipped = sequence_clipped_surrogate(logp, old, adv, mask, eps_low=0.2, eps_high=0.28)
    # seq 0: rho 1.5, A 1 -> clipped at 1.28, loss -1.28; seq 1: rho 0.5, A -2 -> max(1.0, 1.6) = 1.6
    assert torch.allclose(loss, torch.tensor([[-1.28, -1.28, 0.0], [1.6, 1.6, 0.0]]), atol=1e-6)
    assert torch.equal(clipped, torch.tensor([[1.0, 1.0, 0.0], [1.0, 1.0, 0.0]]))
    # seq-mean-token-mean over the two sequences is eq. 2's 1/G sum_i
    assert aggregate(loss, mask, "seq-mean-token-mean", 2.0).item() == pytest.approx((-1.28 + 1.6) / 2)
    # the gradient of an unclipped sequence is -A rho d/dtheta sum_t logp_t, the same on each token
    lp = torch.tensor([[0.05, 0.05, 0.0]], requires_grad=True)
    out, _ = sequence_clipped_surrogate(lp, torch.zeros(1, 3), torch.ones(1, 3), torch.tensor([[1, 1, 0]]))
    aggregate(out, torch.tensor([[1, 1, 0]]), "seq-mean-token-mean", 1.0).backward()
    assert torch.allclose(lp.grad, torch.tensor([[-math.exp(0.1), -math.exp(0.1), 0.0]]), atol=1e-6)
    with pytest.raises(ValueError, match="ratio='sequence'"):
        make_config("reinforce_pp", ratio="sequence")


@pytest.mark.parametrize("kind, want", [("k1", 0.5), ("k2", 0.125), ("k3", math.exp(-0.5) - 1 + 0.5),
                                        # SIRL eq. 5: rho - log rho - 1 with rho = e^0.5
                                        ("k3_rho", math.exp(0.5) - 0.5 - 1)])
def test_kl_estimators(kind, want):
    got = kl_estimate(torch.tensor([-1.0]), torch.tensor([-1.5]), kind)
    assert got.item() == pytest.approx(want, rel=1e-6)


def test_kl_clamp_and_k3_nonnegative():
    x = torch.linspace(-3, 3, 13)
    assert (kl_estimate(x, torch.zeros(13), "k3") >= 0).all()
    # eq. 5's estimator is k3 mirrored: k3_rho(x) = k3(-x), >= 0, 0 only at x = 0
    assert torch.allclose(kl_estimate(x, torch.zeros(13), "k3_rho"), kl_estimate(-x, torch.zeros(13), "k3"))
    assert kl_estimate(torch.tensor([2.0]), torch.tensor([0.0]), "k3_rho").item() == pytest.approx(math.exp(2) - 3)
    assert kl_estimate(torch.tensor([-20.0]), torch.tensor([0.0]), "k3").item() == 10.0
    assert kl_estimate(torch.tensor([-20.0]), torch.tensor([0.0]), "k1").item() == -10.0
    with pytest.raises(ValueError):
        kl_estimate(x, x, "k4")


def test_clipped_surrogate_clip_higher_and_dual_clip():
    old = torch.zeros(5)
    logp = torch.log(torch.tensor([1.5, 1.5, 0.5, 5.0, 0.5]))
    adv = torch.tensor([1.0, -1.0, -1.0, -1.0, 1.0])
    loss, clipped = clipped_surrogate(logp, old, adv, eps_low=0.2, eps_high=0.28)
    # A>0, rho 1.5 -> clipped at 1.28; A<0 rho 1.5 -> unclipped 1.5; A<0 rho 0.5 -> 0.8; A<0 rho 5 -> 5
    assert torch.allclose(loss, torch.tensor([-1.28, 1.5, 0.8, 5.0, -0.5]), atol=1e-6)
    assert torch.equal(clipped, torch.tensor([1.0, 0.0, 1.0, 0.0, 0.0]))
    loss, clipped = clipped_surrogate(logp, old, adv, eps_low=0.2, eps_high=0.28, dual_clip=3.0)
    assert torch.allclose(loss, torch.tensor([-1.28, 1.5, 0.8, 3.0, -0.5]), atol=1e-6)  # min(5, c=3)
    assert clipped[3] == 1.0
    with pytest.raises(ValueError):
        clipped_surrogate(logp, old, adv, dual_clip=0.5)


def test_aggregation_modes_and_global_normaliser():
    loss = torch.tensor([[1.0, 2.0, 3.0, 0.0], [4.0, 0.0, 0.0, 0.0], [1.0, 1.0, 0.0, 0.0]])
    mask = torch.tensor([[1, 1, 1, 0], [1, 0, 0, 0], [1, 1, 0, 0]])
    assert aggregate(loss, mask, "token-mean", 6).item() == pytest.approx(12 / 6)
    # per-sequence means 2, 4, 1 -> mean 7/3
    assert aggregate(loss, mask, "seq-mean-token-mean", 3).item() == pytest.approx(7 / 3)
    assert aggregate(loss, mask, "seq-mean-token-sum-norm", 3 * 4).item() == pytest.approx(12 / 12)
    # split over two "processes" / micro-batches with the global normaliser: the parts sum to the whole
    for mode, norm in (("token-mean", 6), ("seq-mean-token-mean", 3)):
        whole = aggregate(loss, mask, mode, norm)
        parts = aggregate(loss[:1], mask[:1], mode, norm) + aggregate(loss[1:], mask[1:], mode, norm)
        assert parts.item() == pytest.approx(whole.item())
    with pytest.raises(ValueError):
        aggregate(loss, mask, "sum", 1)


def test_overlong_penalty_eq13():
    pen = overlong_penalty(torch.tensor([5, 6, 8, 10, 11]), max_len=10, cache_len=4)
    assert torch.allclose(pen, torch.tensor([0.0, 0.0, -0.5, -1.0, -1.0]))
    assert overlong_penalty(torch.tensor([8]), 10, 4, factor=2.0).item() == -1.0
    with pytest.raises(ValueError):
        overlong_penalty(torch.tensor([1]), 10, 0)


def test_dynamic_sampling_signal():
    assert group_has_signal(R, G) == {0: True, 1: False}


TOKENS = ["<think>", "a", "</think>", "<model>", "x", "</model>", "<py", "thon>", "code", "</python>", "done"]


def test_section_masks_from_character_offsets():
    assert section_mask(TOKENS, "think") == [1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0]
    assert section_mask(TOKENS, "model") == [0, 0, 0, 1, 1, 1, 0, 0, 0, 0, 0]
    # "<python>" is split over two tokens: both belong to the section
    assert section_mask(TOKENS, "python") == [0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 0]
    assert section_mask(TOKENS, "python", to_end=True) == [0] * 6 + [1] * 5
    assert section_mask(["<think>", "never closed"], "think") == [1, 1]
    assert section_mask(["nothing"], "model") == [0]


def test_partial_kl_mask_is_a_new_tensor():
    loss_mask = torch.tensor([[0] * 2 + [1] * 9])  # the first two tokens are prompt
    sections = {"model": torch.tensor([section_mask(TOKENS, "model")]),
                "python": torch.tensor([section_mask(TOKENS, "python")]),
                "python+": torch.tensor([section_mask(TOKENS, "python", to_end=True)])}
    before = loss_mask.clone()
    paper = partial_kl_mask(loss_mask, sections, "paper")
    assert paper.tolist() == [[0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 0]]
    code = partial_kl_mask(loss_mask, sections, "code")
    assert code.tolist() == [[0] * 6 + [1] * 5]
    assert torch.equal(loss_mask, before) and paper.data_ptr() != loss_mask.data_ptr()
    none = {"python+": torch.zeros((1, 11), dtype=torch.long)}
    assert torch.equal(partial_kl_mask(loss_mask, none, "code"), loss_mask)  # no <python: whole response
    assert torch.equal(partial_kl_mask(loss_mask, {}, None), loss_mask)


def test_token_logprobs_with_kept_positions():
    torch.manual_seed(0)
    logits = torch.randn(2, 6, 11)
    ids = torch.randint(0, 11, (2, 6))
    full = token_logprobs(logits, ids, 0.7)
    lp = torch.log_softmax(logits / 0.7, -1)
    assert full[0, 3].item() == pytest.approx(lp[0, 2, ids[0, 3]].item(), rel=1e-6)
    assert torch.allclose(token_logprobs(logits[:, 2:], ids, 0.7, start=2)[:, 3:], full[:, 3:])


# Every printed value of each preset, copied by hand from the papers (and, for the shipped-code
# variants, the scripts), with where it is printed; the trainer's config must carry exactly these.
PRINTED = {
    "saturn_grpo": {  # SATURN App. D Table 8 (SATURN-1.5B) and §2.4 eq. 3
        "lr": 5e-7, "kl_coef": 1e-3, "group_size": 8, "temperature": 0.8, "kl_estimator": "k3",
        "advantage": "grpo", "loss_agg": "seq-mean-token-mean",
        "scale": {"prompts_per_step": 2, "mini_batches": 8, "max_new_tokens": 10000},
    },
    "spring_grpo": {  # Spring §4.4 eq. 2-3, §5.1(d)
        "group_size": 8, "temperature": 0.8, "kl_coef": 0.01, "adv_std": "group_population", "ratio": "sequence",
        "kl_in": "loss", "scale": {"max_new_tokens": 8192},
    },
    "satrl_dapo": {  # SAT-RL §3.4 and Table 8
        "lr": 1e-6, "kl_coef": 0.0, "eps_low": 0.2, "eps_high": 0.28, "dual_clip": 10.0, "group_size": 8,
        "temperature": 1.0, "loss_agg": "seq-mean-token-mean", "overlong": False, "dynamic_sampling": True,
        "scale": {"prompts_per_step": 128, "max_new_tokens": 8192},
    },
    "dapo_paper": {  # DAPO §2.3, §3.1-3.4, §4.1
        "eps_low": 0.2, "eps_high": 0.28, "kl_coef": 0.0, "lr": 1e-6, "group_size": 16, "loss_agg": "token-mean",
        "dynamic_sampling": True, "overlong": True, "filter_groups_metric": "acc", "weight_decay": 0.1,
        "scale": {"prompts_per_step": 512, "overlong_max_tokens": 20480, "overlong_cache_tokens": 4096,
                  "mini_batches": 16, "warmup_steps": 160, "max_gen_batches": 10},
    },
    "sirl_reinforce_pp": {  # SIRL §3.2 eq. 4-5, Tables 6-7
        "advantage": "reinforce_pp", "lr": 1e-6, "eps_low": 0.2, "eps_high": 0.28, "kl_coef": 0.005,
        "kl_estimator": "k3_rho", "kl_in": "reward", "partial_kl": "paper", "group_size": 8,
        "temperature": 1.0, "top_p": 1.0, "repetition_penalty": 1.0, "eval_temperature": 0.5,
        "scale": {"prompts_per_step": 128, "max_new_tokens": 8192, "micro_batch_size": 4},
    },
    "sirl_reinforce_pp_code": {  # SIRL's run_partialKL.sh and ray_trainer.py
        "advantage": "reinforce_pp", "eps_high": 0.30, "kl_coef": 5e-4, "kl_estimator": "k1", "kl_in": "reward",
        "partial_kl": "code", "group_size": 16, "lr": 1e-6,
        "scale": {"prompts_per_step": 32, "max_new_tokens": 8192, "micro_batch_size": 2},
    },
}


@pytest.mark.parametrize("name", sorted(PRINTED))
def test_each_preset_is_its_paper_as_printed(name, tmp_path):
    want = dict(PRINTED[name])
    scale = want.pop("scale")
    cfg = make_config(name)
    assert {k: getattr(cfg, k) for k in want} == want
    big = make_config(name, paper_scale=True)
    assert {k: getattr(big, k) for k in scale} == scale
    # without --paper-scale the scale stays the laptop default
    assert cfg.prompts_per_step == TrainConfig().prompts_per_step and cfg.max_new_tokens == TrainConfig().max_new_tokens
    # every field the preset sets has a source
    assert all(src.strip() for _, src in PRESET_TABLE[name].fields.values())
    # the trainer is built from the preset alone and keeps it
    trainer = Trainer(make_config(name, out_dir=str(tmp_path), steps=1, prompts_per_step=1, group_size=2,
                                  max_new_tokens=4))
    assert {k: getattr(trainer.cfg, k) for k in want if k != "group_size"} == {k: v for k, v in want.items()
                                                                               if k != "group_size"}
    assert trainer.sampling.repetition_penalty == want.get("repetition_penalty", 1.0)


def test_aliases_and_overrides():
    assert ALIASES == {"grpo": "saturn_grpo", "dapo": "dapo_paper", "reinforce_pp": "sirl_reinforce_pp"}
    for alias, name in ALIASES.items():
        assert PRESETS[alias] == PRESETS[name] and make_config(alias).algo == alias
    cfg = make_config("dapo", overrides=parse_kv(["lr=3e-5", "env_kwargs={\"k\": 4}", "partial-kl=code"], fields=True))
    assert cfg.lr == 3e-5 and cfg.env_kwargs == {"k": 4} and cfg.partial_kl == "code"
    # file < keyword < override, over the paper's scale
    assert make_config("satrl_dapo", paper_scale=True, prompts_per_step=3).prompts_per_step == 3
    with pytest.raises(ValueError):
        make_config("ppo")
    with pytest.raises(ValueError):
        make_config("grpo", overrides={"nope": "1"})
    with pytest.raises(ValueError):
        make_config("grpo", kl_in="reward")
    with pytest.raises(ValueError, match="repetition_penalty"):
        make_config("grpo", repetition_penalty=0.0)


def test_shared_prefix_finds_each_groups_prompt():
    from solvergym.algorithms.trainer import shared_prefix

    # group 7: rows 0 and 2 share 10 tokens, row 2 continues differently; group 3: rows 1 and 3
    # share 12 tokens; row 3 is padded after position 13
    ids = torch.arange(16).repeat(4, 1)
    ids[1] += 100
    ids[3] += 100
    ids[2, 10:] = 0
    ids[3, 12:] = 0
    attn = torch.ones(4, 16, dtype=torch.long)
    attn[3, 14:] = 0
    group = torch.tensor([7, 3, 7, 3])
    length, first, inverse = shared_prefix(ids, attn, group, limit=15)
    assert length == 10  # the shortest common prompt of the micro-batch
    assert first.tolist() == [1, 0] and inverse.tolist() == [1, 0, 1, 0]  # groups sorted: 3, 7
    assert torch.equal(ids[first[inverse], :length], ids[:, :length])
    assert shared_prefix(ids, attn, group, limit=6, min_len=4)[0] == 6  # no further than the logits start
    assert shared_prefix(ids, attn, group, limit=15, min_len=11) is None  # too short to pay a second call
    assert shared_prefix(ids, attn, torch.arange(4), limit=15) is None  # nothing shared
    attn[0, 3] = 0  # padding inside the prompt ends the shared part there
    assert shared_prefix(ids, attn, group, limit=15, min_len=2)[0] == 3


def test_the_readme_lists_every_preset_field_with_its_source():
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    for name, preset in PRESET_TABLE.items():
        assert f"`{name}`" in readme
        for field, (value, source) in {**preset.fields, **preset.scale}.items():
            assert f"`{value}`" in readme and source in readme, (name, field)
