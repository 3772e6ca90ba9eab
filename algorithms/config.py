"""Training configuration: one dataclass, the papers' presets (:mod:`.presets`), YAML files and overrides.

Presets set the *algorithm* hyper-parameters to the papers' values, each cited in
:mod:`.presets`; the *scale* (prompts per step, generation length) defaults to something a laptop
CPU finishes, and ``paper_scale=True`` applies the paper's instead (on GPUs). Precedence:
preset < the paper's scale < YAML/JSON file < keyword arguments < overrides.
"""
from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..kv import coerce_value
from .kl import KL_ESTIMATORS
from .presets import PAPER_SCALE, PRESETS

__all__ = ["TrainConfig", "PRESETS", "PAPER_SCALE", "make_config"]


@dataclass
class TrainConfig:
    algo: str = "grpo"
    env: str = "SolverSAT-v0"
    env_kwargs: dict[str, Any] = field(default_factory=dict)
    model: str = "default"
    system_prompt: str | None = None
    seed: int = 0
    out_dir: str = "runs/solvergym"

    # scale
    steps: int = 20  # training iterations (rollout + updates)
    prompts_per_step: int = 4  # instances per iteration, over all processes (papers: 2 - 512)
    group_size: int = 8  # G samples per instance
    max_new_tokens: int = 256  # per turn (papers: 8192 - 20480)
    max_total_tokens: int = 2048  # prompt + every turn
    micro_batch_size: int = 4  # sequences per forward/backward
    mini_batches: int = 1  # optimizer steps per rollout batch
    ppo_epochs: int = 1  # passes over each rollout batch (mu); old log-probs are stored
    old_logprobs: str = "auto"  # "auto": the sampler's (HF, fp32) else recomputed | "recompute"

    # sampling
    temperature: float = 1.0
    top_p: float = 1.0
    repetition_penalty: float = 1.0  # > 1 divides a seen token's positive logit (CTRL; SIRL Table 7: 1.02)
    rollout_backend: str = "hf"  # "hf" | "vllm"

    # optimisation
    lr: float = 1e-6
    weight_decay: float = 0.0
    adam_betas: tuple[float, float] = (0.9, 0.999)
    max_grad_norm: float = 1.0
    warmup_steps: int = 0
    lr_schedule: str = "constant"  # "constant" | "cosine"
    mixed_precision: str = "auto"  # "auto" (bf16 on CUDA, fp32 on CPU) | "no" | "bf16"
    gradient_checkpointing: bool = False  # trade compute for activation memory
    shared_prefix: bool = True  # a group's common prompt goes through the model once per forward
    lora: bool = False
    lora_r: int = 16
    lora_alpha: int = 32
    lora_targets: tuple[str, ...] = ("q_proj", "k_proj", "v_proj", "o_proj")

    # advantages
    advantage: str = "grpo"  # "grpo" | "reinforce_pp" | "reinforce_pp_baseline"
    adv_std: str = "group"  # GRPO: "group" | "batch" | "none" (Dr. GRPO)
    adv_eps: float = 1e-6
    gamma: float = 1.0
    # which reward a token is credited with in a multi-turn episode: "episode" (the episode's sum,
    # every token alike), "turn" (each turn's reward at that turn's last policy token; returns run
    # back across observations: REINFORCE++ as OpenRLHF's token rewards; for GRPO, DeepSeekMath
    # §4.1.3's process supervision: step rewards normalised over the group, a token's advantage
    # the sum of the normalised rewards of its step and the later ones), "auto" (turn for
    # REINFORCE++, episode for GRPO)
    credit: str = "auto"

    # loss
    # "token": a ratio per token (PPO, verl); "sequence": one per sequence, pi(o|x) / pi_old(o|x)
    # (Spring §4.4 eq. 2; needs a constant advantage per sequence: GRPO with episode credit)
    ratio: str = "token"
    loss_agg: str = "seq-mean-token-mean"
    loss_agg_length: int | None = None  # the constant L of seq-mean-token-sum-norm (default max_new_tokens)
    eps_low: float = 0.2
    eps_high: float = 0.2
    dual_clip: float | None = None

    # KL to the reference policy
    kl_coef: float = 0.0  # beta; 0 loads no reference model
    kl_estimator: str = "k3"
    kl_in: str = "loss"  # "loss" | "reward"
    partial_kl: str | None = None  # None | "paper" (<model>, <python> sections) | "code" (from <python on)
    partial_kl_tags: tuple[str, ...] = ("model", "python")

    # DAPO extras
    dynamic_sampling: bool = False
    max_gen_batches: int = 4  # generation rounds per step before training on what there is
    overlong: bool = False
    # "turn": each turn's sampled tokens against the per-turn budget (L_max defaults to
    # max_new_tokens, which is per turn), paid at that turn's last token; "episode": all of an
    # episode's sampled tokens against overlong_max_tokens, which must then be given as the total
    overlong_scope: str = "turn"
    overlong_max_tokens: int | None = None  # L_max (default max_new_tokens with scope "turn")
    overlong_cache_tokens: int | None = None  # L_cache (default L_max // 4)
    overlong_factor: float = 1.0

    # a fixed split (SAT-RL Table 8: 2 epochs, test every step; Spring §5.1(d): up to 25 epochs,
    # early stopping with patience 3, the best-validation checkpoint). ``data``: a JSONL file or a
    # directory of instances (as ``solvergym eval --dataset`` reads them); the run is then
    # ``epochs`` passes over it and ``steps`` is not used (algorithms/split.py)
    data: str | None = None
    eval_data: str | None = None  # the validation split, evaluated through solvergym.evaluation
    epochs: int = 1  # passes over ``data`` (each in a seeded shuffled order)
    eval_every: int = 0  # validate every N steps; 0: at the end of every epoch
    eval_samples: int = 1  # samples per validation instance: avg@k over them
    eval_temperature: float = 0.0  # 0: greedy validation (Spring: "inference temperature 0.0")
    patience: int | None = None  # stop after this many validations without a better one (None: never)
    # validate once before the first update too (verl's trainer.val_before_train), logged at step
    # -1: the curve starts from the model as loaded (e.g. after an SFT warm-up)
    eval_before_train: bool = False

    # bookkeeping
    log_every: int = 1
    save_every: int = 0  # 0: only at the end
    keep_checkpoints: int = 2  # the newest N under out_dir/checkpoints are kept (0: all); ~1.6 GB each for 135M
    resume: str | None = None  # a checkpoint dir, or "auto" (the latest under out_dir)
    progress: bool = True
    curriculum: dict[str, Any] | None = None  # SATURN Algorithm 1 settings (SolverSAT-v0 only)
    # SIRL §3.3's two stages: from this step on the env's problem pays stage 2's bonus (SolverOR-v0;
    # the paper states no schedule). None: the env's own ``stage`` throughout
    bonus_from_step: int | None = None

    def validate(self) -> "TrainConfig":
        choices = {
            "algo": tuple(PRESETS), "advantage": ("grpo", "reinforce_pp", "reinforce_pp_baseline"),
            "adv_std": ("group", "group_population", "batch", "none"), "kl_estimator": KL_ESTIMATORS,
            "kl_in": ("loss", "reward"), "loss_agg": ("token-mean", "seq-mean-token-mean", "seq-mean-token-sum-norm"),
            "lr_schedule": ("constant", "cosine"), "rollout_backend": ("hf", "vllm"),
            "mixed_precision": ("auto", "no", "bf16"), "old_logprobs": ("auto", "recompute"),
            "credit": ("auto", "episode", "turn"), "overlong_scope": ("turn", "episode"),
            "ratio": ("token", "sequence"),
        }
        for name, allowed in choices.items():
            if getattr(self, name) not in allowed:
                raise ValueError(f"{name} must be one of {allowed}, got {getattr(self, name)!r}")
        if self.partial_kl not in (None, "paper", "code"):
            raise ValueError(f"partial_kl must be None, 'paper' or 'code', got {self.partial_kl!r}")
        if self.ratio == "sequence" and (self.advantage != "grpo" or self.turn_credit):
            raise ValueError("ratio='sequence' clips one ratio per sequence against one advantage per "
                             "sequence: it needs advantage='grpo' with episode credit")
        if self.advantage == "grpo" and self.group_size < 2:
            raise ValueError("GRPO needs group_size >= 2")
        for name in ("steps", "prompts_per_step", "group_size", "max_new_tokens", "micro_batch_size",
                     "mini_batches", "ppo_epochs", "max_gen_batches"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1")
        if not self.repetition_penalty > 0:
            raise ValueError(f"repetition_penalty must be > 0, got {self.repetition_penalty!r}")
        if self.epochs < 1 or self.eval_every < 0 or self.eval_samples < 1 or self.eval_temperature < 0:
            raise ValueError("need epochs >= 1, eval_every >= 0, eval_samples >= 1 and eval_temperature >= 0")
        if self.patience is not None and (not isinstance(self.patience, int) or self.patience < 1):
            raise ValueError(f"patience must be an int >= 1 or None, got {self.patience!r}")
        if (self.eval_data or self.patience) and not self.data:
            raise ValueError("eval_data and patience go with a training split (data)")
        if self.eval_before_train and not self.eval_data:
            raise ValueError("eval_before_train needs a validation split (eval_data)")
        if self.patience and not self.eval_data:
            raise ValueError("early stopping (patience) needs a validation split (eval_data)")
        if self.kl_coef < 0:
            raise ValueError("kl_coef must be >= 0")
        if self.save_every < 0 or self.keep_checkpoints < 0:
            raise ValueError("save_every and keep_checkpoints must be >= 0 (0: only at the end / keep all)")
        if self.kl_coef > 0 and self.kl_in == "reward" and self.advantage == "grpo":
            raise ValueError("KL in the reward needs a REINFORCE++ advantage (GRPO uses episode rewards)")
        if self.bonus_from_step is not None and (not isinstance(self.bonus_from_step, int) or self.bonus_from_step < 0):
            raise ValueError(f"bonus_from_step must be an int >= 0 or None, got {self.bonus_from_step!r}")
        if self.overlong and self.overlong_scope == "episode" and not self.overlong_max_tokens:
            raise ValueError("overlong_scope='episode' compares all of an episode's tokens with a total budget: "
                             "give it as overlong_max_tokens (max_new_tokens is per turn)")
        return self

    @property
    def turn_credit(self) -> bool:
        """Whether tokens are credited with their own turn's reward and the later ones' (``credit``)."""
        if self.credit == "auto":
            return self.advantage != "grpo"
        return self.credit == "turn"

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def make_config(algo: str | None = None, *, file: str | Path | None = None,
                overrides: dict[str, Any] | None = None, paper_scale: bool = False, **kwargs: Any) -> TrainConfig:
    """preset < the paper's scale (``paper_scale``) < YAML/JSON file < keyword arguments < overrides.

    ``overrides`` maps field names to values; a string is converted to the field's type with
    :func:`solvergym.kv.coerce_value` (``--set``: ``solvergym.kv.parse_kv(items, fields=True)``),
    any other value is set as given.
    """
    data: dict[str, Any] = {}
    if file is not None:
        text = Path(file).read_text()
        if str(file).endswith((".yaml", ".yml")):
            import yaml

            data = yaml.safe_load(text) or {}
        else:
            data = json.loads(text)
    algo = algo or kwargs.get("algo") or data.get("algo") or "grpo"
    if algo not in PRESETS:
        raise ValueError(f"unknown algorithm {algo!r}; presets: {list(PRESETS)}")
    cfg = TrainConfig(algo=algo, **PRESETS[algo], **(PAPER_SCALE[algo] if paper_scale else {}))
    names = {f.name for f in dataclasses.fields(TrainConfig)}
    for source in (data, kwargs):
        unknown = set(source) - names
        if unknown:
            raise ValueError(f"unknown config keys {sorted(unknown)}")
        for k, v in source.items():
            if k == "algo":
                continue
            setattr(cfg, k, tuple(v) if isinstance(getattr(cfg, k), tuple) and isinstance(v, list) else v)
    for k, v in (overrides or {}).items():
        if k not in names:
            raise ValueError(f"unknown config key {k!r}")
        setattr(cfg, k, coerce_value(v, getattr(cfg, k)) if isinstance(v, str) else v)
    return cfg.validate()
