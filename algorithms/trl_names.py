"""TRL's ``GRPOConfig`` names accepted for :class:`~.config.TrainConfig` fields.

A user who trained with TRL writes ``learning_rate``, ``num_generations`` and ``beta``; a config
file or ``--set`` with those names means the same run here. Each alias is a field under another
name (:data:`TRL_NAMES`), some with their values translated (``use_vllm: true`` is
``rollout_backend: vllm``; :data:`TRL_VALUES`). TRL names with no one field here
(:data:`TRL_UNMAPPED`) are refused with what to set instead, never silently dropped. Names and
meanings from TRL 1.16's ``GRPOConfig`` (``trl/trainer/grpo_config.py``).
"""
from __future__ import annotations

from typing import Any, Callable

__all__ = ["TRL_NAMES", "TRL_VALUES", "TRL_UNMAPPED", "canonical_items", "alias_note"]

#: TRL's name -> this config's field
TRL_NAMES: dict[str, str] = {
    "learning_rate": "lr",
    "num_generations": "group_size",
    "max_completion_length": "max_new_tokens",
    "beta": "kl_coef",
    "epsilon": "eps_low",
    "epsilon_high": "eps_high",
    "num_iterations": "ppo_epochs",
    "max_steps": "steps",
    "num_train_epochs": "epochs",
    "output_dir": "out_dir",
    "save_steps": "save_every",
    "save_total_limit": "keep_checkpoints",
    "logging_steps": "log_every",
    "resume_from_checkpoint": "resume",
    "lr_scheduler_type": "lr_schedule",
    "use_vllm": "rollout_backend",
    "bf16": "mixed_precision",
    "loss_type": "loss_agg",
    "scale_rewards": "adv_std",
    "adam_beta1": "adam_betas",
    "adam_beta2": "adam_betas",
}


def _choice(name: str, table: dict[Any, str]) -> Callable[[Any], str]:
    def translate(value: Any) -> str:
        key = value.lower() if isinstance(value, str) else value
        if key not in table:
            raise ValueError(f"TRL's {name}={value!r} has no counterpart here; accepted: "
                             f"{', '.join(repr(k) for k in table)}")
        return table[key]
    return translate


def _flag(name: str, on: str, off: str) -> Callable[[Any], str]:
    def translate(value: Any) -> str:
        if isinstance(value, str) and value.lower() in ("true", "false"):
            value = value.lower() == "true"
        if not isinstance(value, bool):
            raise ValueError(f"TRL's {name} is true or false, got {value!r}")
        return on if value else off
    return translate


#: TRL's name -> its value as this config's field's value (names not here keep their value)
TRL_VALUES: dict[str, Callable[[Any], Any]] = {
    "use_vllm": _flag("use_vllm", "vllm", "hf"),
    "bf16": _flag("bf16", "bf16", "no"),
    # TRL's loss types as verl's aggregation names (TRL's docs: "grpo" normalises per sequence,
    # "dapo" over every token of the global batch, "dr_grpo" by a constant length)
    "loss_type": _choice("loss_type", {"grpo": "seq-mean-token-mean", "dapo": "token-mean",
                                       "dr_grpo": "seq-mean-token-sum-norm"}),
    "scale_rewards": _choice("scale_rewards", {"group": "group", True: "group", "true": "group",
                                               "batch": "batch", "none": "none", False: "none", "false": "none"}),
    # a warm-up is its own field here (warmup_steps); the schedule after it is the same name
    "lr_scheduler_type": _choice("lr_scheduler_type", {"constant": "constant", "constant_with_warmup": "constant",
                                                       "cosine": "cosine"}),
}

#: TRL names with no one field here -> what to set instead
TRL_UNMAPPED: dict[str, str] = {
    "per_device_train_batch_size": ("the batch here is prompts_per_step x group_size sequences over all "
                                    "processes; micro_batch_size is what one forward pass holds"),
    "gradient_accumulation_steps": ("gradients accumulate over micro-batches of micro_batch_size within each "
                                    "of mini_batches optimizer steps"),
    "generation_batch_size": "one rollout batch is prompts_per_step x group_size sequences",
    "steps_per_generation": "mini_batches sets the optimizer steps per rollout batch",
    "num_completions_to_print": "the rollouts of a step are in metrics.jsonl's statistics; none are printed",
}


def alias_note(name: str) -> str:
    """``"learning_rate (TRL's name for lr)"``; the name itself for a field."""
    return f"{name} (TRL's name for {TRL_NAMES[name]})" if name in TRL_NAMES else name


def canonical_items(items: dict[str, Any], betas: tuple[float, float] = (0.9, 0.999),
                    parse: Callable[[str, Any], Any] | None = None) -> dict[str, Any]:
    """``items`` with TRL's names as this config's fields and their values translated; other keys
    as given. ``betas``: the AdamW betas that ``adam_beta1`` / ``adam_beta2`` complete. ``parse``:
    how a text value (``--set``) becomes a value before it is translated. A ``ValueError`` for a
    field given under two names, a TRL name with no counterpart, or a value that has none."""
    out: dict[str, Any] = {}
    source: dict[str, str] = {}
    beta = list(betas)
    for key, value in items.items():
        if key in TRL_UNMAPPED:
            raise ValueError(f"TRL's {key} has no one field here: {TRL_UNMAPPED[key]}")
        field = TRL_NAMES.get(key, key)
        if key in ("adam_beta1", "adam_beta2"):
            beta[key == "adam_beta2"] = float(parse(key, value) if parse and isinstance(value, str) else value)
            value = tuple(beta)
        elif key in TRL_VALUES:
            value = TRL_VALUES[key](parse(key, value) if parse and isinstance(value, str) else value)
        if field in source and not {source[field], key} <= {"adam_beta1", "adam_beta2"}:
            raise ValueError(f"{field} is given twice: as {alias_note(source[field])} and as {alias_note(key)}")
        out[field], source[field] = value, key
    if "epsilon" in items and "eps_high" not in out:  # TRL: epsilon_high defaults to epsilon
        out["eps_high"] = out["eps_low"]
    return out
