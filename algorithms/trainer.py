"""One policy-gradient trainer for GRPO, DAPO and REINFORCE++ on Hugging Face Accelerate.

Read top to bottom, one iteration is:

1. ``collect``: rollouts of ``prompts_per_step`` instances x ``group_size`` samples (each process
   runs its share; groups stay whole), DAPO's soft overlong punishment added to the rewards (per
   turn, at each turn's last token), and with dynamic sampling, groups all correct or all wrong
   (DAPO eq. 11; ``filter_groups_metric``) dropped and more generated (up to ``max_gen_batches``
   rounds; then it warns and trains on what it has).
2. ``update``: old log-probs (and reference log-probs when beta > 0) recomputed on the batch,
   advantages (GRPO or REINFORCE++ over the *global* batch; ``credit``: the episode's reward for
   every token, or each turn's reward for its own and the earlier tokens), then ``ppo_epochs`` passes of
   ``mini_batches`` optimizer steps of the clipped surrogate, aggregated so that the sum over
   micro-batches and processes is exactly the global aggregate (the normaliser is counted once
   per optimizer step over every process and micro-batch).

``train`` is the one loop over such iterations: a schedule (``schedules/``: plain steps, epochs
over a split, SATURN's curriculum, SIRL's stages) says between steps what the next one trains on
and when the run validates and ends; checkpoints every ``save_every`` steps and after the last.

The pure pieces live in ``advantages``, ``losses``, ``kl``, ``dapo``, ``partial_kl``; this module
wires them to a model, Accelerate (DDP over gloo on CPU, NCCL on GPUs, ``accelerate launch``),
a schedule, checkpoints and metrics (``checkpoints``).
"""
from __future__ import annotations

import contextlib
import logging
import math
import time
import warnings
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import torch

import solvergym  # noqa: F401  (registers the env ids)

from ..agents.hf import HFAgent, SamplingConfig
from ..agents.models import cache_kwarg, load_model
from ..agents.vllm import VLLMAgent
from . import cpu_speedups
from .checkpoints import MetricsLog, latest_checkpoint, read_checkpoint, write_checkpoint
from .config import TrainConfig
from .dapo import filter_groups, overlong_penalty
from .estimators import estimate
from .kl import kl_means, warn_if_clamp_hides
from .logprobs import token_logprobs
from .losses import masked_mean
from .partial_kl import partial_kl_mask
from .policy_loss import LossInputs, policy_loss
from .prefix import first_logit_position, prefix_cache, shared_prefix
from .rollout import RolloutBatch, clipped_ratio, collate, rollout
from .schedules import Schedule, make_schedule
from .precision import mixed_precision, policy_dtype, reference_dtype
from .timing import PhaseTimes
from .vllm_engine import engine_kwargs
from .tracking import tracker_names
from .zero_signal import ZeroSignalWatch, no_gradient

__all__ = ["Trainer", "token_logprobs", "policy_loss", "LossInputs", "first_logit_position", "shared_prefix"]

LOG = logging.getLogger("solvergym.train")


class Trainer:
    """``Trainer(config).train()``; see the module docstring."""

    def __init__(self, config: TrainConfig, accelerator: Any = None):
        from accelerate.utils import set_seed

        self.cfg = cfg = config.validate()
        self.acc = self._build_accelerator(accelerator)
        self.rank, self.world = self.acc.process_index, self.acc.num_processes
        if cfg.prompts_per_step % self.world:
            raise ValueError(f"prompts_per_step={cfg.prompts_per_step} must be divisible by {self.world} processes")
        self.local_groups = cfg.prompts_per_step // self.world
        set_seed(cfg.seed)
        torch.use_deterministic_algorithms(not torch.cuda.is_available(), warn_only=True)

        model = self._build_model()
        self.ref = self._build_reference()
        # the CPU-only speed-ups, each applied or skipped with its reason (cpu_speedups.py)
        self.speedups = cpu_speedups.apply(model, self.ref, cfg, self.acc.device)
        if self.acc.is_main_process:
            for note in self.speedups:
                LOG.info(note)
        self.envs = self._build_envs()
        # what each step trains on, and when the run validates and stops (algorithms/schedules/)
        self.schedule: Schedule = make_schedule(cfg, self.envs)
        self._build_optimizer(model)
        self._cache_kw = cache_kwarg(model)  # the reference model is the same class
        self.sampling = SamplingConfig(max_new_tokens=cfg.max_new_tokens, temperature=cfg.temperature,
                                       top_p=cfg.top_p, repetition_penalty=cfg.repetition_penalty, seed=cfg.seed)
        self.policy = self._make_policy(HFAgent)
        self.step = 0
        self.data_pos = 0  # global groups consumed so far (the data position)
        self.times = PhaseTimes()  # the current step's seconds per phase (timing.py)
        self.out = Path(cfg.out_dir)
        tracker_names(cfg.report_to)  # a tracker that is not installed stops the run here, not at step 0's end
        self.metrics = MetricsLog(self.out, self.acc.is_main_process, cfg.report_to, cfg.to_dict())
        self.zero_signal = ZeroSignalWatch(cfg.zero_signal_steps)
        if cfg.resume:
            self.load_checkpoint(cfg.resume)

    # ------------------------------------------------------------------ builders (in __init__'s order)
    def _build_accelerator(self, given: Any):
        """The given accelerator, or one for this machine at the config's precision; a sharded
        launch (FSDP, DeepSpeed) stops here, before any model loads: not built yet (docs/gpus.md)."""
        from accelerate import Accelerator

        acc = given or Accelerator(cpu=not torch.cuda.is_available(),
                                   mixed_precision=mixed_precision(self.cfg.mixed_precision))
        kind = str(acc.distributed_type).rsplit(".", 1)[-1]
        if kind in ("FSDP", "DEEPSPEED"):
            raise NotImplementedError(
                f"the trainer does not shard yet: Accelerate is configured for {kind}, which the HF sampler, the "
                "shared-prefix forward and the checkpoints are not made for (docs/gpus.md); launch with DDP "
                "(examples/accelerate/8gpu_ddp.yaml) or one GPU")
        return acc

    def _build_model(self):
        """The policy (and ``self.tokenizer``): LoRA-wrapped and checkpointed as the config says."""
        cfg = self.cfg
        model, self.tokenizer = load_model(cfg.model, dtype=policy_dtype(cfg.param_dtype))
        if cfg.lora:
            from peft import LoraConfig, get_peft_model

            model = get_peft_model(model, LoraConfig(r=cfg.lora_r, lora_alpha=cfg.lora_alpha,
                                                     target_modules=list(cfg.lora_targets), task_type="CAUSAL_LM"))
        if cfg.gradient_checkpointing:
            model.gradient_checkpointing_enable()
            model.config.use_cache = False
        return model

    def _build_reference(self):
        """The frozen reference policy when the KL term needs one (``None`` without KL, or with LoRA,
        whose reference is the base model with the adapters disabled)."""
        cfg = self.cfg
        if cfg.kl_coef <= 0 or cfg.lora:
            return None
        ref = load_model(cfg.model, dtype=reference_dtype(cfg.ref_dtype, self.acc.device))[0]
        ref = ref.to(self.acc.device).eval()
        ref.requires_grad_(False)
        return ref

    def _build_envs(self) -> list:
        """One env per local episode of a rollout round (groups x group size)."""
        import gymnasium as gym

        return [gym.make(self.cfg.env, **self.cfg.env_kwargs) for _ in range(self.local_groups * self.cfg.group_size)]

    def _build_optimizer(self, model) -> None:
        """AdamW and its learning-rate schedule; the model and AdamW prepared by Accelerate."""
        cfg = self.cfg
        params = [p for p in model.parameters() if p.requires_grad]
        opt = torch.optim.AdamW(params, lr=cfg.lr, betas=tuple(cfg.adam_betas), weight_decay=cfg.weight_decay,
                                fused=True)
        # a curriculum's length is not known in advance: cfg.steps is then the schedule's horizon
        total = (self.schedule.steps or cfg.steps) * cfg.mini_batches * cfg.ppo_epochs
        sched = torch.optim.lr_scheduler.LambdaLR(opt, self._lr_lambda(total))
        self.model, self.optimizer = self.acc.prepare(model, opt)
        # the scheduler is not prepared: Accelerate steps a prepared one once per process per call
        # (it assumes a dataloader split over the processes), which ran warm-ups and cosine decays
        # `world` times too fast; here it counts optimizer steps, and is checkpointed all the same
        self.scheduler = sched
        self.acc.register_for_checkpointing(sched)

    # ------------------------------------------------------------------ setup helpers
    def _lr_lambda(self, total: int):
        cfg = self.cfg

        def f(i: int) -> float:
            if cfg.warmup_steps and i < cfg.warmup_steps:
                return (i + 1) / cfg.warmup_steps
            if cfg.lr_schedule == "cosine":
                p = (i - cfg.warmup_steps) / max(1, total - cfg.warmup_steps)
                return 0.5 * (1 + math.cos(math.pi * min(1.0, p)))
            return 1.0
        return f

    def _make_policy(self, hf_cls):
        if self.cfg.rollout_backend == "vllm":
            kwargs = engine_kwargs(self.cfg, cuda=self.acc.device.type == "cuda", world=self.world, rank=self.rank)
            return VLLMAgent(self.cfg.model, sampling=self.sampling, system_prompt=self.cfg.system_prompt, **kwargs)
        return hf_cls(self.unwrapped, self.tokenizer, sampling=self.sampling, system_prompt=self.cfg.system_prompt,
                      batch_size=max(8, self.local_groups * self.cfg.group_size))

    @property
    def unwrapped(self):
        return self.acc.unwrap_model(self.model)

    def reduce_sum(self, x: torch.Tensor) -> torch.Tensor:
        """Sum over every process (identity on one process)."""
        if self.world == 1:
            return x
        return self.acc.reduce(x.to(self.acc.device), reduction="sum").cpu()

    def _reseed_policy(self, seed: int) -> None:
        """The sampler's own stream, from the config alone (HF and vLLM alike); a policy without
        ``reseed`` (one of the user's) gets torch's global RNG seeded instead."""
        if callable(getattr(self.policy, "reseed", None)):
            self.policy.reseed(seed)
        else:
            torch.manual_seed(seed)

    def broadcast_scalar(self, value: float) -> float:
        """The main process's ``value`` on every process."""
        return float(self.reduce_sum(torch.tensor([value if self.acc.is_main_process else 0.0],
                                                  dtype=torch.float64))[0])

    def _seed(self, *parts: int) -> int:
        return int(np.random.SeedSequence([self.cfg.seed, *parts]).generate_state(1)[0])

    # ------------------------------------------------------------------ rollouts
    def collect(self, instances: Sequence[Any] | None = None) -> tuple[RolloutBatch | None, dict[str, float]]:
        """This process's rollout batch for one iteration (see the module docstring)."""
        cfg = self.cfg
        if cfg.rollout_backend == "vllm":
            if cfg.vllm_enable_sleep_mode:
                self.policy.wake_up()
            self.policy.sync_weights(self.unwrapped)
        kept: list = []
        generated: list = []
        dropped: dict[str, int] = {}
        rounds = cfg.max_gen_batches if cfg.dynamic_sampling and instances is None else 1
        for r in range(rounds):
            need = self.local_groups - len(kept) // cfg.group_size
            if need > 0:
                base = self.data_pos + self.rank * self.local_groups
                drawn = instances if instances is not None else self.schedule.draw(self.data_pos, cfg.prompts_per_step)
                seeds = [self._seed(1, base + i) for i in range(self.local_groups)]
                self._reseed_policy(self._seed(2, self.step, r, self.rank))
                t = time.perf_counter()
                timing: dict[str, float] = {}
                eps = rollout(None, self.policy, seeds, group_size=cfg.group_size, sampling=self.sampling,
                              max_total_tokens=cfg.max_total_tokens, envs=self.envs,
                              instances=self._local(drawn), env_threads=cfg.env_threads, timing=timing)
                env_s = timing.get("env_s", 0.0)  # wall time: with threads, less than the episodes' sum
                self.times.add("env", env_s)
                self.times.add("generate", time.perf_counter() - t - env_s)
                self._shape_rewards(eps)
                generated += eps
                kept += (filter_groups(eps, cfg.group_size, cfg.filter_groups_metric, dropped)
                         if cfg.dynamic_sampling else eps)
            self.data_pos += cfg.prompts_per_step
            deficit = self.reduce_sum(torch.tensor([float(max(0, self.local_groups - len(kept) // cfg.group_size))]))
            if deficit.item() == 0:
                break
        if cfg.rollout_backend == "vllm" and cfg.vllm_enable_sleep_mode:
            self.policy.sleep()  # the update's memory back until the next rollout
        groups = len(kept) // cfg.group_size
        common = groups
        if self.world > 1:
            t = torch.tensor([float(groups)], device=self.acc.device)
            common = int(self.acc.gather(t).min().item())
        if cfg.dynamic_sampling and common < self.local_groups:
            warnings.warn(f"dynamic sampling: {common} of {self.local_groups} groups kept by the filter "
                          f"({cfg.filter_groups_metric}; dropped: {dropped}) after {rounds} generation rounds; "
                          "training on what there is", RuntimeWarning, stacklevel=2)
        kept = kept[: common * cfg.group_size]
        # renumber groups 0..k-1 so that group ids are unique within the batch
        for i, ep in enumerate(kept):
            ep.group = i // cfg.group_size
        stats = self._rollout_stats(generated)
        stats["groups_trained"] = float(common)
        if cfg.dynamic_sampling:  # the share of generated groups the filter dropped, and why
            n_groups = max(1, len(generated) // cfg.group_size)
            stats["filter_dropped"] = sum(dropped.values()) / n_groups
            for why, n in dropped.items():
                stats[f"filter_dropped/{why}"] = n / n_groups
        if not kept:
            return None, stats
        batch = collate(kept, pad_id=self.tokenizer.pad_token_id,
                        section_tags=cfg.partial_kl_tags if cfg.partial_kl == "paper" else (),
                        to_end_tags=("python",) if cfg.partial_kl == "code" else (), tokenizer=self.tokenizer)
        return batch, stats

    def _local(self, instances):
        if instances is None:
            return None
        return list(instances)[self.rank * self.local_groups:(self.rank + 1) * self.local_groups]

    def _shape_rewards(self, episodes) -> None:
        """DAPO's soft overlong punishment (eq. 13) as a reward component, on policy tokens only.

        ``overlong_scope="turn"`` (default): each turn's sampled tokens against the per-turn budget
        (``max_new_tokens`` is per turn), the penalty at that turn's last token, summed in the
        component. Comparing the sum over turns with the per-turn budget would punish tool use
        itself: a tool call and an answer of 150 tokens each lost 1.0 under DAPO's 256. ``"episode"``:
        all sampled tokens against ``overlong_max_tokens`` given as the episode's total."""
        cfg = self.cfg
        if not cfg.overlong:
            return
        lmax = cfg.overlong_max_tokens or cfg.max_new_tokens
        cache = cfg.overlong_cache_tokens or max(1, lmax // 4)
        for ep in episodes:
            if cfg.overlong_scope == "episode":
                lengths, ends = [ep.policy_tokens], [ep.step_rewards[-1][0] if ep.step_rewards else len(ep.token_ids) - 1]
            else:
                lengths, ends = ep.turn_tokens, [t for t, _ in ep.step_rewards[:len(ep.turn_tokens)]]
            pen = overlong_penalty(torch.tensor(lengths, dtype=torch.long), lmax, cache, cfg.overlong_factor).tolist()
            for end, p in zip(ends, pen):
                ep.step_rewards.append((end, p))
            ep.components["overlong"] = float(sum(pen))

    def _rollout_stats(self, eps) -> dict[str, float]:
        g = self.cfg.group_size
        if not eps:
            return {}
        rewards = torch.tensor([e.reward for e in eps])
        zero = [bool((rewards[k:k + g].max() - rewards[k:k + g].min()).abs() <= 1e-9) for k in range(0, len(eps), g)]
        s: dict[str, float] = {
            "reward": rewards.mean().item(),
            "reward_std": rewards.std().item() if len(eps) > 1 else 0.0,
            "accuracy": float(np.mean([bool(e.info.get("correct", False)) for e in eps])),
            "prompt_length": float(np.mean([e.prompt_len for e in eps])),
            "response_length": float(np.mean([e.policy_tokens for e in eps])),
            "turns": float(np.mean([e.turns for e in eps])),
            "truncation_rate": float(np.mean([e.truncated for e in eps])),
            "clipped_ratio": clipped_ratio(eps),  # TRL's: the share of turns the token limit cut
            "failure_rate": float(np.mean([e.errors > 0 for e in eps])),
            "tool_call_rate": float(np.mean([e.info.get("tool_calls", max(0, e.turns - 1)) > 0 for e in eps])),
            "frac_reward_zero_std": float(np.mean(zero)),
            "episodes": float(len(eps)),
        }
        for k in sorted({k for e in eps for k in e.components}):
            s[f"reward/{k}"] = float(np.mean([e.components.get(k, 0.0) for e in eps]))
        return s

    # ------------------------------------------------------------------ log-probs and advantages
    def _logits(self, model, ids: torch.Tensor, attn: torch.Tensor, mask: torch.Tensor,
                group: torch.Tensor | None = None):
        """Logits for the positions from the first one that predicts a policy token.

        With ``group`` (and ``cfg.shared_prefix``), the prompt that every group shares is run once,
        each group's own rest once per group (:func:`~.prefix.prefix_cache`), and the key/value
        cache is indexed out to the rows, then only the rest of each row runs: the same function (gradients flow back through the cache into the shared
        prompt, summed over the group, exactly as with G copies), at a fraction of the work when
        the prompt is long and G large. Off under gradient checkpointing while training
        (Transformers turns the cache off there).
        """
        start = first_logit_position(mask)
        keep = ids.shape[1] - start
        share = None
        inner = self.acc.unwrap_model(model)
        if group is not None and self.cfg.shared_prefix and not (
                self.cfg.gradient_checkpointing and torch.is_grad_enabled() and inner.training):
            share = shared_prefix(ids, attn, group, start)
        with self.acc.autocast():
            if share is not None:
                # the unwrapped module: under DDP only the call whose output is back-propagated goes
                # through the wrapper (one backward, each parameter's gradient accumulated once)
                cache = prefix_cache(inner, ids, attn, share, self._cache_kw)
                if cache is not None:
                    logits = model(input_ids=ids[:, share[0]:], attention_mask=attn, use_cache=True,
                                   logits_to_keep=keep, **{self._cache_kw: cache}).logits
                    return logits, start
            logits = model(input_ids=ids, attention_mask=attn, logits_to_keep=keep).logits
        return logits, start

    @torch.no_grad()
    def _forward_logprobs(self, model, batch: RolloutBatch, entropy: bool = False):
        mb = self.cfg.micro_batch_size
        logps, ents = [], []
        for s in range(0, len(batch), mb):
            ids = batch.input_ids[s:s + mb].to(self.acc.device)
            attn = batch.attention_mask[s:s + mb].to(self.acc.device)
            logits, start = self._logits(model, ids, attn, batch.loss_mask[s:s + mb], batch.group[s:s + mb])
            lp, ent = token_logprobs(logits, ids, self.cfg.temperature, start, entropy=True)
            logps.append(lp.float().cpu())
            ents.append(ent.float().cpu())
        return torch.cat(logps), (torch.cat(ents) if entropy else None)

    def _recompute_old(self) -> bool:
        if self.cfg.old_logprobs == "recompute":
            return True
        # a repetition penalty samples from another distribution than the policy's
        return (self.cfg.rollout_backend != "hf" or self.acc.mixed_precision != "no" or self.cfg.param_dtype != "float32"
                or self.cfg.repetition_penalty != 1.0)

    def _ref_logprobs(self, batch: RolloutBatch):
        if self.cfg.kl_coef <= 0:
            return None  # not run, so not timed: time/ref_s is 0.0
        # LoRA: the reference is the base model, adapters disabled
        model, base = ((self.model, self.unwrapped.disable_adapter()) if self.ref is None
                       else (self.ref, contextlib.nullcontext()))
        with self.times("ref"), base:
            return self._forward_logprobs(model, batch)[0]

    def advantages(self, batch: RolloutBatch, old_logp: torch.Tensor, ref_logp: torch.Tensor | None,
                   kl_mask: torch.Tensor) -> torch.Tensor:
        """(N, T) advantages, 0 off the policy tokens, by the estimator ``cfg.advantage`` names
        (:mod:`.estimators`), batch statistics over every process."""
        return estimate(batch, old_logp, ref_logp, kl_mask, self.cfg, self.reduce_sum)

    def _normalizer(self, batch: RolloutBatch, idx: torch.Tensor) -> float:
        cfg = self.cfg
        if cfg.loss_agg == "token-mean":
            local = batch.loss_mask[idx].sum().float()
        elif cfg.loss_agg == "seq-mean-token-mean":
            local = torch.tensor(float(len(idx)))
        else:
            local = torch.tensor(float(len(idx) * (cfg.loss_agg_length or cfg.max_new_tokens)))
        return max(1.0, float(self.reduce_sum(local.reshape(1)).item()))

    # ------------------------------------------------------------------ the update
    def update(self, batch: RolloutBatch) -> dict[str, float]:
        """pi_old, the reference and the advantages once, then ``ppo_epochs`` x ``mini_batches`` steps."""
        cfg = self.cfg
        # pi_old is the policy that sampled the batch. The HF sampler's log-probs are exactly that (the same fp32
        # model and softmax; checked to 2e-5 against a forward pass), so no extra forward is needed; vLLM (other
        # kernels) or bf16 training recompute them once, before any update, as verl and TRL do.
        self.model.eval()
        if self._recompute_old():
            with self.times("old_logprobs"):
                old_logp, entropy = self._forward_logprobs(self.model, batch, entropy=True)
        else:
            old_logp, entropy = batch.old_logprobs.clone(), torch.zeros(batch.input_ids.shape)
        ref_logp = self._ref_logprobs(batch)
        kl_mask = partial_kl_mask(batch.loss_mask, batch.section_masks, cfg.partial_kl, cfg.partial_kl_tags)
        adv = self.advantages(batch, old_logp, ref_logp, kl_mask)
        if cfg.skip_zero_signal and no_gradient(adv, cfg.kl_coef > 0 and cfg.kl_in == "loss", self.reduce_sum):
            return self._skip_update(batch, old_logp, ref_logp, kl_mask, entropy if self._recompute_old() else None)
        self.model.train()
        stats: dict[str, list[float]] = {"loss": [], "clip_frac": [], "kl": [], "kl_unclamped": [], "grad_norm": []}
        gen = torch.Generator().manual_seed(self._seed(3, self.step))
        n = len(batch)
        recomputed = self._recompute_old()
        inputs = (old_logp, adv, ref_logp, kl_mask)
        for epoch in range(cfg.ppo_epochs):
            first_pass = epoch == 0 and not recomputed  # the entropy of the policy that sampled
            order = torch.randperm(n, generator=gen)
            for part in torch.tensor_split(order, cfg.mini_batches):
                if len(part):
                    self._minibatch_step(batch, part, inputs, entropy if first_pass else None, stats)
        out = {k: float(np.mean(v)) for k, v in stats.items() if v}
        out["entropy"] = masked_mean(entropy, batch.loss_mask).item()
        if ref_logp is not None and "kl" not in out:
            out["kl"], out["kl_unclamped"] = kl_means(old_logp, ref_logp, cfg.kl_estimator, kl_mask)
        if "kl" in out:
            warn_if_clamp_hides(out["kl"], out["kl_unclamped"])
        out["lr"] = self.scheduler.get_last_lr()[0]
        out["policy_tokens"] = float(self.reduce_sum(batch.loss_mask.sum().float().reshape(1)).item())
        out["update_skipped"] = 0.0
        return out

    def _minibatch_step(self, batch: RolloutBatch, part: torch.Tensor, inputs: tuple, entropy: torch.Tensor | None,
                        stats: dict[str, list[float]]) -> None:
        """One optimizer step on the rows ``part``: micro-batches of ``micro_batch_size`` accumulate
        gradients (DDP syncs on the last), normalised once for the whole mini-batch over every
        process; ``entropy`` (when given) gets the rows' entropies; ``stats`` gets the step's."""
        cfg = self.cfg
        old_logp, adv, ref_logp, kl_mask = inputs
        norm = self._normalizer(batch, part)
        # a group's rows side by side, so that micro-batches share prompts (the sum over the
        # mini-batch is the same in any order)
        part = part[torch.sort(batch.group[part], stable=True).indices]
        micro = torch.split(part, cfg.micro_batch_size)
        total, dev = 0.0, self.acc.device
        for j, mb in enumerate(micro):
            sync = contextlib.nullcontext() if j == len(micro) - 1 else self.acc.no_sync(self.model)
            with sync:
                with self.times("forward"):
                    ids = batch.input_ids[mb].to(dev)
                    attn = batch.attention_mask[mb].to(dev)
                    logits, start = self._logits(self.model, ids, attn, batch.loss_mask[mb], batch.group[mb])
                    logp, ent = token_logprobs(logits, ids, cfg.temperature, start, entropy=True)
                    if entropy is not None:
                        entropy[mb] = ent.float().cpu()
                    inp = LossInputs(old_logp[mb].to(dev), adv[mb].to(dev), batch.loss_mask[mb].to(dev),
                                     None if ref_logp is None else ref_logp[mb].to(dev), kl_mask[mb].to(dev))
                    loss, st = policy_loss(logp, inp, cfg, norm)
                # DDP averages gradients over processes; the aggregate is a global sum.
                with self.times("backward"):
                    self.acc.backward(loss * self.world)
                    total += loss.item()
                for k in ("clip_frac", "kl", "kl_unclamped"):
                    stats[k] += [st[k]] if k in st else []
        with self.times("optimizer"):
            gn = self.acc.clip_grad_norm_(self.model.parameters(), cfg.max_grad_norm) if cfg.max_grad_norm else None
            self.optimizer.step()
            self.scheduler.step()
            self.optimizer.zero_grad(set_to_none=True)
        stats["loss"].append(float(self.reduce_sum(torch.tensor([total])).item()))
        if gn is not None:
            stats["grad_norm"].append(float(gn))

    def _skip_update(self, batch: RolloutBatch, old_logp, ref_logp, kl_mask, entropy) -> dict[str, float]:
        """A step whose gradient is 0 everywhere (:mod:`.zero_signal`): no forward, backward or
        optimizer step; the learning-rate schedule advances by the optimizer steps it replaces."""
        cfg = self.cfg
        steps = cfg.ppo_epochs * min(cfg.mini_batches, len(batch))
        with warnings.catch_warnings():  # torch's "scheduler before optimizer" note: skipped on purpose
            warnings.filterwarnings("ignore", message="Detected call of `lr_scheduler.step", category=UserWarning)
            for _ in range(steps):
                self.scheduler.step()
        out = {"update_skipped": 1.0, "loss": 0.0, "lr": self.scheduler.get_last_lr()[0],
               "policy_tokens": float(self.reduce_sum(batch.loss_mask.sum().float().reshape(1)).item())}
        if entropy is not None:  # known only where the old log-probs were recomputed
            out["entropy"] = masked_mean(entropy, batch.loss_mask).item()
        if ref_logp is not None:
            out["kl"], out["kl_unclamped"] = kl_means(old_logp, ref_logp, cfg.kl_estimator, kl_mask)
        return out

    # ------------------------------------------------------------------ loop
    def train_step(self, instances: Sequence[Any] | None = None) -> dict[str, float]:
        """One iteration on ``instances`` (one per group; ``None``: each rollout round draws from
        the schedule or the env), logged as one row of metrics."""
        t0 = time.perf_counter()
        self.times = PhaseTimes()
        before = self.schedule.before_step(self)
        batch, stats = self.collect(instances)
        stats.update(before)
        t1 = time.perf_counter()
        if batch is not None:
            stats.update(self.update(batch))
        else:
            warnings.warn("no trainable groups this step; the optimizer step is skipped", RuntimeWarning, stacklevel=2)
        t2 = time.perf_counter()
        stats.update(step=self.step, rollout_s=t1 - t0, update_s=t2 - t1, step_s=t2 - t0, **self.times.stats())
        if "frac_reward_zero_std" in stats:  # the groups with a signal, over every process
            n = stats["episodes"] / self.cfg.group_size
            live = self.reduce_sum(torch.tensor([n * (1.0 - stats["frac_reward_zero_std"])], dtype=torch.float64))
            self.zero_signal.observe(float(live[0]), self.step, stats.get("reward"))
        self.step += 1
        stats.update(self.schedule.after_step(self))
        if "policy_tokens" in stats:
            stats["tokens_per_s"] = stats["policy_tokens"] / max(1e-9, t2 - t0)
        self.log(stats)
        return stats

    def train(self) -> list[dict[str, float]]:
        """The run: the schedule's steps (from a resumed one), a checkpoint every ``save_every``
        steps and after the last (none if 0), then ``out_dir/final`` (unless ``save_final=False``)."""
        from tqdm import tqdm

        cfg = self.cfg
        bar = tqdm(total=self.schedule.steps, initial=self.step, desc=f"{cfg.algo} {cfg.env}", unit="step",
                   disable=not (cfg.progress and self.acc.is_main_process))
        step = self.schedule.next(self)
        while step is not None:
            s = self.train_step(step.instances)
            bar.update(1)
            bar.set_postfix(reward=f"{s.get('reward', float('nan')):.3f}", acc=f"{s.get('accuracy', 0):.2f}",
                            **({"epoch": f"{s['epoch']:.2f}"} if "epoch" in s else {}))
            step = self.schedule.next(self)
            if step is not None and cfg.save_every and self.step % cfg.save_every == 0:
                self.save_checkpoint()  # after the last step, the final one below
        bar.close()
        self.schedule.end(self)
        if cfg.save_every:  # only what was asked for: a checkpoint is the weights + AdamW's state
            self.save_checkpoint()
        if cfg.save_final:
            self.save_model(self.out / "final")
        self.metrics.close()
        return self.history

    # ------------------------------------------------------------------ persistence (checkpoints.py)
    @property
    def history(self) -> list[dict[str, Any]]:
        """Every row logged so far (on resume, first the rows of the steps before the checkpoint)."""
        return self.metrics.rows

    def log(self, row: dict[str, Any]) -> None:
        """One row of metrics (a step's, a validation's) to ``metrics.jsonl`` and TensorBoard."""
        self.metrics.log(row)

    def save_checkpoint(self, path: str | Path | None = None) -> Path:
        """Model, optimizer, scheduler, RNG states (Accelerate) + step, data position, the schedule's state."""
        root = self.out / "checkpoints"
        path = Path(path) if path else root / f"step_{self.step:06d}"
        state = {"step": self.step, "data_pos": self.data_pos, **self.schedule.state(), "config": self.cfg.to_dict()}
        write_checkpoint(self.acc, path, state, root, self.cfg.keep_checkpoints)
        return path

    def load_checkpoint(self, path: str | Path) -> None:
        """Resume from ``path`` ("auto": the newest under ``out_dir/checkpoints``, if any)."""
        path = latest_checkpoint(self.out / "checkpoints") if str(path) == "auto" else Path(path)
        if path is None:
            return
        state = read_checkpoint(self.acc, path)
        self.step, self.data_pos = state["step"], state["data_pos"]
        self.schedule.load_state(state)
        self.metrics.resume_at(self.step, self.acc)

    def save_model(self, path: str | Path) -> None:
        """A plain Hugging Face folder (LoRA adapters merged) usable as ``model=path`` anywhere."""
        self.acc.wait_for_everyone()
        if self.acc.is_main_process:
            model = self.unwrapped
            if self.cfg.lora:
                model = model.merge_and_unload()
            model.save_pretrained(str(path))
            self.tokenizer.save_pretrained(str(path))
        self.acc.wait_for_everyone()
