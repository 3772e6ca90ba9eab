"""Spring's process-level reward (§4.3), the outcome-only baselines (§5.1) and the ablations (§5.3).

Trace mode (the whole output in one action) pays exactly Spring §4.3::

    r_base = 0.15 r_parsed + 0.10 r_format + 0.60 r_accuracy
    R = r_base                                                              if s_sat = 0
    R = r_base + (0.5 + 0.5 r_accuracy) (0.40 r_novel + 0.30 r_consistency - 0.15 r_contra)   if s_sat = 1

The paper leaves open how the per-step signals become r_novel and r_contra. This module's choice,
``aggregation="fraction"`` (the default): r_novel = (#novel formal steps) / (#formal steps) and
r_contra = (#contradictory formal steps) / (#formal steps), both 0 when there are no formal
steps; a formal step is an ``S<k>:`` entry, parsed or not. Alternatives: ``"any"`` (1 if at least
one step is novel / contradictory) and ``"capped"`` (min(count, cap) / cap). A trace whose every
formal step is novel, consistent and correct gets the maximum, 0.85 + 0.70 = 1.55.

The reward components (``info["reward_components"]``, which sum to R) use Spring's names:
``parsed`` = 0.15 r_parsed, ``format`` = 0.10 r_format, ``accuracy`` = 0.60 r_accuracy,
``novel`` = m 0.40 r_novel, ``consistency`` = m 0.30 r_consistency, ``contra`` = -m 0.15 r_contra,
with m = (0.5 + 0.5 r_accuracy) s_sat.

Presets (:data:`PRESETS`): ``spring`` (the above); ``or_int`` and ``or_nl``, the outcome-only
baselines of §5.1, R = 0.15 r_parsed + 0.6 r_accuracy (OR-INT keeps the interleaved prompt, OR-NL a
natural-language one that asks for the solution only); ``minus_n`` (Spring -N, no novelty reward)
and ``minus_nc`` (Spring -NC, neither novelty reward nor contradiction penalty), §5.3.

A step counts as novel under the verifier's novelty rule: by default (``novelty="facts"``) a
step must also make a new atomic fact follow and not restate a conjunction of premises, because
under a unique solution Definition 4 alone pays a step that only excludes one wrong world as
much as a deduction (a few such steps and the right table earn the maximum, 1.55);
``novelty="spring"`` is Definition 4 as written (see :mod:`.verdict` for the rules). The process
terms are gated, by default, on premises that are also equivalent to the true clues
(``require_faithful=True``): a wrong complete assignment written as premises is satisfiable and
unique, and under Spring's gate (``require_faithful=False``) one trivial step earns 0.60 with a
wrong answer.

Step mode (Spring trains on whole traces) pays the same total: each action pays the change of
the running value of these terms and the solution action pays the rest, so every component
summed over the episode equals the trace-mode component (:mod:`.steps`).
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from typing import Any

__all__ = ["RewardConfig", "PRESETS", "get_preset", "spring_reward", "aggregate"]


@dataclass(frozen=True)
class RewardConfig:
    """Weights of Spring §4.3 and how step signals are aggregated."""

    name: str = "spring"
    w_parsed: float = 0.15
    w_format: float = 0.10
    w_accuracy: float = 0.60
    w_novel: float = 0.40
    w_consistency: float = 0.30
    w_contra: float = 0.15
    process: bool = True  # add the s_sat-gated process terms
    interleaved: bool = True  # the prompt asks for premises and S<k> steps (False: OR-NL)
    aggregation: str = "fraction"  # fraction | any | capped
    cap: int = 10  # for aggregation="capped"

    def __post_init__(self):
        if self.aggregation not in ("fraction", "any", "capped"):
            raise ValueError(f"aggregation must be fraction, any or capped, got {self.aggregation!r}")
        if self.cap < 1:
            raise ValueError("cap must be >= 1")

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


PRESETS: dict[str, RewardConfig] = {
    "spring": RewardConfig(),
    "or_int": RewardConfig(name="or_int", w_format=0.0, process=False),
    "or_nl": RewardConfig(name="or_nl", w_format=0.0, process=False, interleaved=False),
    "minus_n": RewardConfig(name="minus_n", w_novel=0.0),
    "minus_nc": RewardConfig(name="minus_nc", w_novel=0.0, w_contra=0.0),
}


def get_preset(reward: str | RewardConfig | dict, **overrides: Any) -> RewardConfig:
    """A preset by name, a :class:`RewardConfig`, or a dict of its fields; ``overrides`` replace fields."""
    if isinstance(reward, RewardConfig):
        cfg = reward
    elif isinstance(reward, dict):
        cfg = RewardConfig(**reward)
    elif isinstance(reward, str):
        if reward not in PRESETS:
            raise ValueError(f"unknown reward preset {reward!r}; known: {sorted(PRESETS)}")
        cfg = PRESETS[reward]
    else:
        raise TypeError(f"reward must be a preset name, RewardConfig or dict, got {type(reward).__name__}")
    return replace(cfg, **overrides) if overrides else cfg


def aggregate(count: int, n_formal: int, config: RewardConfig) -> float:
    """r_novel or r_contra from a count of steps (see the module docstring)."""
    if n_formal <= 0 or count <= 0:
        return 0.0
    if config.aggregation == "fraction":
        return count / n_formal
    if config.aggregation == "any":
        return 1.0
    return min(count, config.cap) / config.cap


def spring_reward(
    *,
    r_parsed: float,
    r_format: float,
    r_accuracy: float,
    s_sat: bool,
    n_novel: int,
    n_contra: int,
    n_formal: int,
    r_consistency: float,
    config: RewardConfig,
) -> dict[str, float]:
    """Spring §4.3 as named components that sum to R."""
    comps = {
        "parsed": config.w_parsed * r_parsed,
        "format": config.w_format * r_format,
        "accuracy": config.w_accuracy * r_accuracy,
    }
    if not config.process:
        return comps
    m = (0.5 + 0.5 * r_accuracy) if s_sat else 0.0
    r_novel = aggregate(n_novel, n_formal, config)
    r_contra = aggregate(n_contra, n_formal, config)
    comps["novel"] = m * config.w_novel * r_novel
    comps["consistency"] = m * config.w_consistency * r_consistency
    comps["contra"] = 0.0 - m * config.w_contra * r_contra  # 0.0 - x: never a negative zero
    return comps
