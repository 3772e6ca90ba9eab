"""The trainer on the embedded model with tiny budgets: one test per preset, resume, DDP."""
import json
import math
import os
import pickle
import shutil
import subprocess
import sys
import time
from pathlib import Path

import gymnasium as gym
import pytest
import torch

sys.path.insert(0, str(Path(__file__).parent))
import toy_env  # noqa: E402

from solvergym.agents.scripted import oracle_action
from solvergym.algorithms.config import make_config  # noqa: E402
from solvergym.algorithms.plots import plot_run  # noqa: E402
from solvergym.algorithms.rollout import collate  # noqa: E402
from solvergym.algorithms.timing import PHASES, PhaseTimes  # noqa: E402
from solvergym.algorithms.trainer import LossInputs, Trainer, policy_loss, token_logprobs  # noqa: E402
from solvergym.envs.logic_steps.problem import format_answer  # noqa: E402

toy_env.register()
# the toy env has no right answer, only a share (its "correct" component): DAPO's filter looks at that
TINY = dict(env="TestLetter-v0", env_kwargs={"turns": 2}, steps=1, prompts_per_step=2, group_size=2,
            max_new_tokens=8, max_total_tokens=512, micro_batch_size=8, lr=1e-4, progress=False,
            filter_groups_metric="correct")


def snapshot(model):
    return {k: v.detach().clone() for k, v in model.state_dict().items()}


@pytest.mark.slow
@pytest.mark.parametrize("algo", ["grpo", "dapo", "reinforce_pp"])
def test_each_preset_trains_on_policy_tokens_only(algo, tmp_path):
    trainer = Trainer(make_config(algo, out_dir=str(tmp_path), **TINY))
    batch, stats = trainer.collect()
    assert batch is not None and stats["frac_reward_zero_std"] < 1.0
    assert (batch.turns == 2).all()
    # two turns: the first turn's observation tokens sit between two policy spans
    row = batch.loss_mask[0].tolist()
    spans = sum(1 for i in range(1, len(row)) if row[i] == 1 and row[i - 1] == 0)
    assert spans == 2

    # gradient w.r.t. the logits: zero wherever the predicted token is not the policy's
    model = trainer.unwrapped
    model.train()
    logits = model(input_ids=batch.input_ids, attention_mask=batch.attention_mask).logits
    logits.retain_grad()
    logp = token_logprobs(logits, batch.input_ids, trainer.cfg.temperature)
    kl_mask = batch.loss_mask.clone()
    ref = logp.detach() - 0.1 if trainer.cfg.kl_coef > 0 else None
    adv = trainer.advantages(batch, logp.detach(), ref, kl_mask)
    loss, _ = policy_loss(logp, LossInputs(logp.detach(), adv, batch.loss_mask, ref, kl_mask), trainer.cfg,
                          float(batch.loss_mask.sum()))
    loss.backward()
    g = logits.grad.abs().sum(-1)  # (N, T): row t predicts token t + 1
    predicts_policy = torch.zeros_like(batch.loss_mask, dtype=torch.bool)
    predicts_policy[:, :-1] = batch.loss_mask[:, 1:].bool()
    assert torch.isfinite(loss)
    assert g[~predicts_policy].max().item() == 0.0
    assert g[predicts_policy].sum().item() > 0
    model.zero_grad(set_to_none=True)

    before = snapshot(model)
    stats = trainer.update(batch)
    assert all(torch.isfinite(torch.tensor(v)) for v in stats.values())
    # the reference forward is timed when it runs, and only then (DAPO: beta 0)
    assert (trainer.times.seconds["ref"] > 0) == (trainer.cfg.kl_coef > 0)
    assert stats["grad_norm"] > 0
    changed = [k for k, v in snapshot(trainer.unwrapped).items() if not torch.equal(v, before[k])]
    assert len(changed) > 10


class SlowStep(gym.Wrapper):
    """An env whose every step takes at least ``DELAY`` seconds (a lower bound: no timing flake)."""
    DELAY = 0.05

    def step(self, action):
        time.sleep(self.DELAY)
        return self.env.step(action)


@pytest.mark.slow
def test_a_step_logs_where_its_time_went(tmp_path):
    trainer = Trainer(make_config("grpo", out_dir=str(tmp_path), **TINY))
    assert trainer.cfg.kl_coef > 0
    trainer.envs[:] = [SlowStep(e) for e in trainer.envs]  # the list the rollout and the schedule use
    s = trainer.train_step()
    assert {k for k in s if k.startswith("time/")} == {f"time/{p}_s" for p in PHASES}
    # the envs' step is timed apart from generation: 4 episodes x 2 turns, each at least DELAY
    assert s["episodes"] * s["turns"] == 8
    assert s["time/env_s"] >= 8 * SlowStep.DELAY
    assert s["time/generate_s"] + s["time/env_s"] <= s["rollout_s"]
    for phase in ("generate", "ref", "forward", "backward", "optimizer"):
        assert s[f"time/{phase}_s"] > 0, phase
    assert s["time/old_logprobs_s"] == 0.0  # the sampler's log-probs are pi_old's: no forward
    update = ("old_logprobs", "ref", "forward", "backward", "optimizer")
    assert sum(s[f"time/{p}_s"] for p in update) <= s["update_s"]
    # prompt_length: the tokens before each episode's first sampled one
    batch, stats = trainer.collect()
    first = batch.loss_mask.float().argmax(dim=1).float()
    assert stats["prompt_length"] == pytest.approx(first.mean().item()) and stats["prompt_length"] > 10
    with pytest.raises(KeyError, match="unknown phase"):
        PhaseTimes().add("rollout", 1.0)


@pytest.mark.slow
def test_resume_reaches_the_same_weights(tmp_path):
    straight = Trainer(make_config("grpo", out_dir=str(tmp_path / "a"), **{**TINY, "steps": 3}))
    straight.train()
    first = Trainer(make_config("grpo", out_dir=str(tmp_path / "b"), save_every=1, keep_checkpoints=1,
                                **{**TINY, "steps": 2}))
    first.train()
    assert [p.name for p in (tmp_path / "b" / "checkpoints").iterdir()] == ["step_000002"]  # step 1's pruned
    first.train_step()  # a step logged after the last checkpoint, then the run dies: resume redoes it
    del first
    resumed = Trainer(make_config("grpo", out_dir=str(tmp_path / "b"), resume="auto", **{**TINY, "steps": 3}))
    assert resumed.step == 2 and resumed.data_pos == straight.data_pos - 2
    resumed.train()
    a, b = snapshot(straight.unwrapped), snapshot(resumed.unwrapped)
    assert all(torch.equal(a[k], b[k]) for k in a)
    metrics = [json.loads(line) for line in (tmp_path / "b" / "metrics.jsonl").read_text().splitlines()]
    assert [m["step"] for m in metrics] == [0, 1, 2]  # the lost step is logged once, by the resumed run
    assert [h["step"] for h in resumed.history] == [0, 1, 2]
    assert (tmp_path / "b" / "final" / "config.json").exists()


@pytest.mark.slow
def test_two_runs_of_one_config_sample_the_same_tokens_and_end_with_the_same_weights(tmp_path):
    runs = []
    for name, perturb in (("a", 1), ("b", 12345)):
        trainer = Trainer(make_config("reinforce_pp", out_dir=str(tmp_path / name), **{**TINY, "steps": 2}))
        torch.manual_seed(perturb)  # the sampler's seed comes from the config, not torch's global RNG
        batch, _ = trainer.collect()
        trainer.update(batch)
        torch.manual_seed(perturb + 7)
        batch2, _ = trainer.collect()
        runs.append((batch.input_ids, batch2.input_ids, snapshot(trainer.unwrapped)))
    (a1, a2, wa), (b1, b2, wb) = runs
    assert torch.equal(a1, b1) and torch.equal(a2, b2) and not torch.equal(a1, a2)
    assert all(torch.equal(wa[k], wb[k]) for k in wa)


DDP_SCRIPT = r'''
import pickle, sys, torch
sys.path.insert(0, {tests!r})
import toy_env
toy_env.register()
from solvergym.algorithms.config import make_config
from solvergym.algorithms.trainer import Trainer
from toy_env import save_grads
cfg = make_config("dapo", out_dir={out!r}, dynamic_sampling=False, overlong=False, **{tiny!r})
t = Trainer(cfg)
batch, stats = t.collect()
norm = t._normalizer(batch, torch.arange(len(batch)))
with open({out!r} + f"/rank{{t.rank}}.pkl", "wb") as f:
    pickle.dump({{"episodes": batch.episodes, "normalizer": norm, "world": t.world}}, f)
save_grads(t, {out!r} + f"/grads{{t.rank}}.pt")
t.update(batch)
torch.save({{k: v.detach().clone() for k, v in t.unwrapped.state_dict().items()}}, {out!r} + f"/weights{{t.rank}}.pt")
with open({out!r} + f"/lr{{t.rank}}.txt", "w") as f:
    f.write(repr(t.scheduler.get_last_lr()[0]))
'''


@pytest.mark.slow
def test_ddp_two_processes_over_gloo(tmp_path):
    tiny = {**TINY, "env_kwargs": {"turns": 1}, "warmup_steps": 4}
    script = tmp_path / "ddp.py"
    script.write_text(DDP_SCRIPT.format(tests=str(Path(__file__).parent), out=str(tmp_path), tiny=tiny))
    env = {**os.environ, "ACCELERATE_USE_CPU": "true", "OMP_NUM_THREADS": "1"}
    torchrun = Path(sys.executable).parent / "torchrun"
    subprocess.run([str(torchrun), "--nproc_per_node", "2", "--master_port", "29533", str(script)],
                   check=True, env=env, cwd=tmp_path, timeout=600)
    w0, w1 = torch.load(tmp_path / "weights0.pt"), torch.load(tmp_path / "weights1.pt")
    assert all(torch.equal(w0[k], w1[k]) for k in w0)  # both ranks end with identical weights
    parts = [pickle.loads((tmp_path / f"rank{r}.pkl").read_bytes()) for r in (0, 1)]
    assert parts[0]["world"] == 2
    episodes = parts[0]["episodes"] + parts[1]["episodes"]
    for i, ep in enumerate(episodes):
        ep.group = i // TINY["group_size"]
    single = Trainer(make_config("dapo", out_dir=str(tmp_path / "single"), dynamic_sampling=False, overlong=False, **tiny))
    whole = collate(episodes, pad_id=single.tokenizer.pad_token_id)
    # the global token-mean normaliser of the two processes is the single-process one
    assert parts[0]["normalizer"] == parts[1]["normalizer"] == single._normalizer(whole, torch.arange(len(whole)))
    # the gradient DDP applied (averaged over the two ranks) is the single-process gradient
    toy_env.save_grads(single, str(tmp_path / "grads_single.pt"))
    single.update(whole)
    g0, g1, gs = (torch.load(tmp_path / f) for f in ("grads0.pt", "grads1.pt", "grads_single.pt"))
    assert all(torch.equal(g0[k], g1[k]) for k in g0)
    assert max(v.abs().max().item() for v in gs.values()) > 0
    for k in gs:  # equal up to float32 summation order (a factor-2 normaliser error fails by far)
        assert torch.allclose(g0[k], gs[k], rtol=1e-3, atol=1e-4 * gs[k].abs().max().item()), k
        assert abs(g0[k].norm().item() / gs[k].norm().item() - 1) < 1e-4, k
    # the warm-up counts optimizer steps on every process (2 of 4 after one step), as on one
    lrs = [float((tmp_path / f"lr{r}.txt").read_text()) for r in (0, 1)]
    assert lrs == [single.scheduler.get_last_lr()[0]] * 2 == [TINY["lr"] * 2 / 4] * 2


@pytest.mark.slow
def test_lora_reference_is_the_base_and_several_updates_per_batch(tmp_path):
    cfg = make_config("grpo", out_dir=str(tmp_path), lora=True, lora_r=4, kl_coef=0.05, ppo_epochs=2,
                      mini_batches=2, **TINY)
    trainer = Trainer(cfg)
    assert trainer.ref is None  # no second model: the base with adapters disabled is the reference
    named = dict(trainer.unwrapped.named_parameters())
    trainable = {k for k, p in named.items() if p.requires_grad}
    assert trainable and all("lora_" in k for k in trainable)
    before = snapshot(trainer.unwrapped)
    batch, _ = trainer.collect()
    stats = trainer.update(batch)
    assert stats["kl"] >= 0 and all(torch.isfinite(torch.tensor(v)) for v in stats.values())
    after = snapshot(trainer.unwrapped)
    changed = {k for k in before if not torch.equal(before[k], after[k])}
    assert changed and all("lora_" in k for k in changed)
    trainer.save_model(tmp_path / "merged")  # adapters merged into a plain HF folder
    assert (tmp_path / "merged" / "config.json").exists()


@pytest.mark.slow
def test_curriculum_drives_the_trainer(tmp_path):
    cfg = make_config("grpo", env="SolverSAT-v0", out_dir=str(tmp_path), steps=1, prompts_per_step=2,
                      group_size=2, max_new_tokens=8, lr=1e-5, progress=False,
                      curriculum={"initial": [3, 5, 5], "epsilon": 0.9, "train_size": 2, "val_size": 2,
                                  "d_step": 1, "iterations": 1, "max_steps_per_level": 1})
    trainer = Trainer(cfg)
    trainer.train()
    state = trainer.schedule.state()["curriculum"]
    kinds = [e["kind"] for e in state["history"]]
    # an untrained 135M model does not pass 90% at (3,5,5): estimate, one training step, re-validate
    assert kinds == ["estimate", "train", "validate"]
    assert trainer.step == 1 and state["level"] == [3, 5, 5]
    metrics = [json.loads(x) for x in (tmp_path / "metrics.jsonl").read_text().splitlines()]
    assert metrics[-1]["curriculum_level"] == [3, 5, 5]


@pytest.mark.slow
@pytest.mark.parametrize("lora", [False, True])
def test_shared_prefix_forward_is_the_plain_forward(lora, tmp_path):
    extra = dict(lora=True, lora_r=4, kl_coef=0.05) if lora else {}
    trainer = Trainer(make_config("grpo", out_dir=str(tmp_path), **{**TINY, "group_size": 3}, **extra))
    batch, _ = trainer.collect()
    from solvergym.algorithms.trainer import first_logit_position, shared_prefix
    start = first_logit_position(batch.loss_mask)
    assert shared_prefix(batch.input_ids, batch.attention_mask, batch.group, start)[0] > 20  # the chat prompt
    if lora:  # adapters that change the output, so that "adapters off" is a different function
        gen = torch.Generator().manual_seed(0)
        with torch.no_grad():
            for k, p in trainer.unwrapped.named_parameters():
                if "lora_B" in k:
                    p.normal_(std=0.05, generator=gen)
    trainer.model.train()
    got = {}
    for share in (False, True):
        trainer.cfg.shared_prefix = share
        trainer.model.zero_grad(set_to_none=True)
        logits, start = trainer._logits(trainer.model, batch.input_ids, batch.attention_mask, batch.loss_mask,
                                        batch.group)
        logp = token_logprobs(logits, batch.input_ids, 1.0, start)
        (logp * batch.loss_mask * torch.linspace(-1, 1, logp.shape[1])).sum().backward()
        grads = {k: p.grad.clone() for k, p in trainer.unwrapped.named_parameters() if p.requires_grad}
        got[share] = logp.detach(), grads
        if lora:  # the reference (adapters off) goes through the same path
            with trainer.unwrapped.disable_adapter(), torch.no_grad():
                ref_logits, _ = trainer._logits(trainer.model, batch.input_ids, batch.attention_mask,
                                                batch.loss_mask, batch.group)
            got[share] += (token_logprobs(ref_logits, batch.input_ids, 1.0, start),)
    mask = batch.loss_mask.bool()
    assert (got[True][0] - got[False][0])[mask].abs().max() < 1e-4
    gs, gp = got[True][1], got[False][1]
    assert max(v.abs().max().item() for v in gp.values()) > 0
    for k in gp:  # the prompt's gradient arrives once per group member through the indexed cache
        assert torch.allclose(gs[k], gp[k], rtol=1e-3, atol=1e-5 * gp[k].abs().max().item() + 1e-12), k
    if lora:
        assert (got[True][2] - got[False][2])[mask].abs().max() < 1e-4
        assert (got[True][2] - got[True][0])[mask].abs().max() > 1e-3  # adapters were off


def _spans(row_mask):
    """(start, end) of each run of policy tokens in a loss-mask row."""
    out, start = [], None
    for i, m in enumerate(row_mask + [0]):
        if m and start is None:
            start = i
        elif not m and start is not None:
            out.append((start, i))
            start = None
    return out


@pytest.mark.slow
def test_dapo_overlong_shaping_is_per_turn_on_the_tool_env(tmp_path):
    """DAPO's L_max is the per-turn budget (max_new_tokens); a tool call and an answer must not
    be compared with it together (three 100-token turns under 256 lost 1.0 before)."""
    cfg = make_config("dapo", out_dir=str(tmp_path), env="SolverTool-v0", env_kwargs={"solver": "z3"}, steps=1,
                      prompts_per_step=1, group_size=2, max_new_tokens=256, max_total_tokens=4096,
                      dynamic_sampling=False, progress=False)
    trainer = Trainer(cfg)
    call = "<tool_call>\nfrom z3 import *\ns = Solver(); s.add(Bool('a')); print(s.check())\n</tool_call>"
    trainer.policy = toy_env.ScriptedPolicy(trainer.tokenizer, [[call] * 2, [call] * 2, ["```answer yes```"] * 2],
                                            tokens=100)
    batch, stats = trainer.collect()
    for ep in batch.episodes:
        assert ep.turns == 3 and ep.turn_tokens == [100, 100, 100] and ep.terminated
        assert ep.components["overlong"] == 0.0
    assert stats["reward/overlong"] == 0.0
    # a turn past L_max - L_cache = 192 is punished at its own last token, the others not
    trainer.policy = toy_env.ScriptedPolicy(trainer.tokenizer, [[call] * 2, ["```answer yes```"] * 2], tokens=250)
    batch, _ = trainer.collect()
    for i, ep in enumerate(batch.episodes):
        assert ep.turn_tokens == [250, 250] and ep.components["overlong"] == pytest.approx(2 * (192 - 250) / 64)
        first_end = _spans(batch.loss_mask[i].tolist())[0][1] - 1
        env_reward = dict(ep.step_rewards[:1])[first_end]
        assert batch.token_rewards[i, first_end].item() == pytest.approx(env_reward + (192 - 250) / 64)
    # the episode scope compares the whole episode with a total budget, stated as such
    with pytest.raises(ValueError, match="total"):
        make_config("dapo", overlong_scope="episode")
    total = Trainer(make_config("dapo", out_dir=str(tmp_path / "t"), overlong_scope="episode", overlong_max_tokens=512,
                                **{k: getattr(cfg, k) for k in ("env", "env_kwargs", "steps", "prompts_per_step",
                                                                "group_size", "max_new_tokens", "max_total_tokens",
                                                                "dynamic_sampling", "progress")}))
    total.policy = toy_env.ScriptedPolicy(total.tokenizer, [[call] * 2, [call] * 2, ["```answer yes```"] * 2],
                                          tokens=150)
    batch, _ = total.collect()
    assert [ep.components["overlong"] for ep in batch.episodes] == [pytest.approx((384 - 450) / 128)] * 2


@pytest.mark.slow
def test_turn_credit_gives_step_rewards_to_their_own_tokens(tmp_path):
    """Step mode (Knights): two episodes with the same steps in another order earn the same sum
    with different per-step rewards; REINFORCE++ credits each turn's reward to its own and
    earlier tokens, so their token advantages differ (the episode sum would make them equal)."""
    env = gym.make("SolverKnights-v0", mode="step").unwrapped
    env.reset(seed=3)
    inst = env.instance
    premises = oracle_action(env)
    sentence, formula = env.problem.gold_steps(env.instance)[0]
    name = inst.names[0]
    taut = f"Either way {name} is a knight or a knave"
    solution = format_answer(env.problem.family.solution_only(env.problem.family.gold_answer(inst)))
    script = [[premises, premises],
              [f"{sentence} S1: {formula}.", f"{taut}. S1: Or(Knight({name}), Knave({name}))."],
              [f"{taut}. S2: Or(Knight({name}), Knave({name})).", f"{sentence} S2: {formula}."],
              [solution, solution]]
    common = dict(env="SolverKnights-v0", env_kwargs={"mode": "step"}, steps=1, prompts_per_step=1, group_size=2,
                  max_new_tokens=512, max_total_tokens=4096, kl_coef=0.0, progress=False)
    advs = {}
    for credit in ("turn", "episode"):
        trainer = Trainer(make_config("reinforce_pp", out_dir=str(tmp_path / credit), credit=credit, **common))
        trainer.policy = toy_env.ScriptedPolicy(trainer.tokenizer, script)
        batch, _ = trainer.collect(instances=[inst])
        a, b = batch.episodes
        assert a.turns == b.turns == 4 and a.terminated and b.terminated
        per_step = [[r for _, r in ep.step_rewards] for ep in (a, b)]
        assert batch.rewards[0].item() == pytest.approx(batch.rewards[1].item())
        assert per_step[0] != pytest.approx(per_step[1])  # novel first, then not; and the reverse
        adv = trainer.advantages(batch, batch.old_logprobs, None, batch.loss_mask.float())
        advs[credit] = [[adv[i, s:e] for s, e in _spans(batch.loss_mask[i].tolist())] for i in range(2)]
    turn, episode = advs["turn"], advs["episode"]
    # the third turn: A's tautology follows its novel step, B's novel step its tautology
    assert not torch.allclose(turn[0][2].mean(), turn[1][2].mean(), atol=1e-3)
    assert torch.allclose(turn[0][3].mean(), turn[1][3].mean(), atol=1e-5)  # the same last step
    values = torch.cat([t for row in episode for t in row])
    assert torch.allclose(values, values[0].expand_as(values))  # the episode sum: one value for all


@pytest.mark.slow
def test_reinforce_pp_with_partial_kl_on_the_or_env_writes_metrics(tmp_path):
    """Issue 12: SIRL's optimiser (REINFORCE++, Partial KL §3.2 eq. 5) on SolverOR-v0 with the
    embedded model, two steps: every rollout is scored by SIRL eq. 6's components."""
    cfg = make_config("reinforce_pp", out_dir=str(tmp_path), env="SolverOR-v0",
                      env_kwargs={"family": "knapsack", "size": 2}, steps=2, prompts_per_step=1, group_size=2,
                      max_new_tokens=24, max_total_tokens=1024, micro_batch_size=4, lr=1e-4, progress=False,
                      bonus_from_step=1)
    assert cfg.partial_kl == "paper" and cfg.kl_in == "reward"
    history = Trainer(cfg).train()
    rows = [json.loads(line) for line in (tmp_path / "metrics.jsonl").read_text().splitlines()]
    assert len(history) == len(rows) == 2
    assert [row["sirl_stage"] for row in rows] == [1.0, 2.0]  # SIRL §3.3's stage 2 from step 1 on
    for row in rows:
        assert {"reward/format", "reward/execution", "reward/accuracy", "reward/bonus"} <= set(row)
        assert row["reward"] == pytest.approx(sum(row[f"reward/{k}"] for k in ("format", "execution", "accuracy",
                                                                                 "bonus")), abs=1e-6)
        assert all(math.isfinite(v) for v in row.values() if isinstance(v, float))


def _letter_split(path, n):
    path.write_text("".join(json.dumps({"letter": "e"}) + "\n" for _ in range(n)))
    return str(path)


@pytest.mark.slow
def test_epochs_over_a_split_with_validation_and_the_best_checkpoint(tmp_path):
    cfg = make_config("grpo", out_dir=str(tmp_path / "run"), data=_letter_split(tmp_path / "train.jsonl", 16),
                      eval_data=_letter_split(tmp_path / "val.jsonl", 8), epochs=2, eval_every=3, eval_before_train=True,
                      **{**TINY, "prompts_per_step": 4, "env_kwargs": {"turns": 1}})
    trainer = Trainer(cfg)
    history = trainer.train()
    steps = [h for h in history if "reward" in h]
    vals = [h for h in history if "val_accuracy" in h]
    assert len(steps) == 8 and steps[-1]["epoch"] == 2.0 and steps[3]["epoch"] == 1.0  # 16 / 4 a epoch
    # once before any update (logged at step -1), every eval_every = 3 steps, and after the last
    assert [v["step"] for v in vals] == [-1, 2, 5, 7]
    # the toy env reports no info["correct"]: every validation scores 0, the first stays the best
    assert all(v["val_accuracy"] == 0.0 for v in vals) and vals[-1]["val_best_step"] == -1
    assert (tmp_path / "run" / "best" / "config.json").exists() and (tmp_path / "run" / "final").exists()
    assert sorted(p.name for p in (tmp_path / "run" / "validation").iterdir()) == [
        "step_000000", "step_000003", "step_000006", "step_000008"]
    rec = (tmp_path / "run" / "validation" / "step_000003" / "records.jsonl").read_text().splitlines()
    assert len(rec) == 8  # every validation instance, once (eval_samples = 1), through solvergym.evaluation
    png = plot_run(tmp_path / "run")  # train and validation accuracy, the best one ringed
    assert png.stat().st_size > 10_000
    # each epoch visits every instance once, in a seeded order of its own
    split = trainer.schedule.split
    assert sorted(split.order(0)) == list(range(16)) and list(split.order(0)) != list(split.order(1))
    shutil.rmtree(tmp_path / "run")  # GBs of checkpoints and models: not kept for pytest's last runs


@pytest.mark.slow
def test_early_stopping_ends_a_run_whose_validation_does_not_improve(tmp_path):
    cfg = make_config("grpo", out_dir=str(tmp_path / "run"), data=_letter_split(tmp_path / "train.jsonl", 16),
                      eval_data=_letter_split(tmp_path / "val.jsonl", 4), epochs=5, patience=1,
                      **{**TINY, "prompts_per_step": 8, "env_kwargs": {"turns": 1}})
    history = Trainer(cfg).train()
    vals = [h for h in history if "val_accuracy" in h]
    # validation at each epoch's end (2 steps); the second does not beat the first: stop there
    assert [v["step"] for v in vals] == [1, 3] and [v["val_improved"] for v in vals] == [1.0, 0.0]
    assert history[-1]["early_stop"] == 1.0 and history[-1]["val_best_step"] == 1
    assert len([h for h in history if "reward" in h]) == 4  # 2 of the 5 epochs
    with pytest.raises(ValueError, match="needs a validation split"):
        make_config("grpo", data=str(tmp_path / "train.jsonl"), patience=2)
    with pytest.raises(ValueError, match="eval_before_train needs a validation split"):
        make_config("grpo", data=str(tmp_path / "train.jsonl"), eval_before_train=True)
    shutil.rmtree(tmp_path / "run")
