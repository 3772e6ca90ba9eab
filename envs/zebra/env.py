"""``SolverZebra-v0``: Zebra puzzles with Spring's step-verified process reward (Spring §4, App. E.1).

Modes, rewards and scripted agents are those of :class:`~..logic_steps.env.StepVerifiedEnv`.
Difficulty: ``n_houses`` x ``n_attributes`` (any size of Spring Table 5, 2x2 ... 6x6, and more
up to 6 houses x 11 attributes), or ``bucket`` ("Small", "Medium", "Large", "X-Large") to draw the
size uniformly from that Table 5 bucket at each reset.
"""
from __future__ import annotations

import json
from typing import Any

import numpy as np

from ..logic_steps.env import StepVerifiedEnv
from ..logic_steps.trace import DEFAULT_VERIFY_BUDGET_S
from .generator import ATTRIBUTES, BUCKETS, ZebraInstance, generate_zebra, puzzle_text
from .verify import ZEBRA

__all__ = ["ZebraEnv"]

_LANGUAGE_GUIDE = """Formula language (each value token stands for the house number it is in; houses are 1..N):
  A == B            A and B are in the same house        A != B      not in the same house
  A < B             A is somewhere left of B             A > B       somewhere right of B
  A + 1 == B        A is directly left of B              A == 3      A is in house 3
  Or(A + 2 == B, B + 2 == A)   one house between A and B (two houses between: + 3)
  Or(A == B + 1, A == B - 1)   A and B are next to each other
  Not(e), And(e1, e2, ...), Or(e1, e2, ...) combine these. Use the tokens exactly as in attribute_values."""


class ZebraEnv(StepVerifiedEnv):
    """Zebra puzzles (N houses x M attributes) with unique solutions; see the module docstring."""

    family = ZEBRA
    instance_cls = ZebraInstance
    difficulty_keys = ("n_houses", "n_attributes", "bucket")

    def __init__(
        self,
        n_houses: int = 3,
        n_attributes: int = 3,
        *,
        bucket: str | None = None,
        clue_weights: dict[str, float] | None = None,
        mode: str = "trace",
        reward: Any = "spring",
        aggregation: str | None = None,
        step_credit: str = "running",
        accept: str = "non_contradictory",
        novelty: str = "facts",
        require_unique: bool | None = None,
        require_faithful: bool = True,
        incremental: bool = True,
        consistency_over: str = "all",
        max_steps: int = 200,
        verify_budget_s: float | None = DEFAULT_VERIFY_BUDGET_S,
        max_turns: int | None = None,
        max_action_chars: int | None = None,
        render_mode: str | None = None,
    ):
        super().__init__(mode=mode, reward=reward, aggregation=aggregation, step_credit=step_credit,
                         accept=accept, novelty=novelty, require_unique=require_unique,
                         require_faithful=require_faithful,
                         incremental=incremental, consistency_over=consistency_over, max_steps=max_steps,
                         verify_budget_s=verify_budget_s, max_turns=max_turns,
                         max_action_chars=max_action_chars, render_mode=render_mode)
        self._check_difficulty(n_houses=n_houses, n_attributes=n_attributes, bucket=bucket)
        self.n_houses, self.n_attributes, self.bucket = int(n_houses), int(n_attributes), bucket
        self.clue_weights = clue_weights

    def _check_difficulty(self, n_houses, n_attributes, bucket):
        for name, v, hi in (("n_houses", n_houses, 6), ("n_attributes", n_attributes, len(ATTRIBUTES))):
            if not isinstance(v, (int, np.integer)) or isinstance(v, bool) or not (2 if name == "n_houses" else 1) <= v <= hi:
                raise ValueError(f"{name} must be an int in {2 if name == 'n_houses' else 1}..{hi}, got {v!r}")
        if bucket is not None and bucket not in BUCKETS:
            raise ValueError(f"bucket must be one of {list(BUCKETS)} or None, got {bucket!r}")

    def generate(self, rng):
        n, m = self.n_houses, self.n_attributes
        if self.bucket is not None:
            sizes = BUCKETS[self.bucket]
            n, m = sizes[int(rng.integers(len(sizes)))]
        return generate_zebra(n, m, rng, clue_weights=self.clue_weights)

    def describe(self, instance: ZebraInstance) -> dict[str, Any]:
        return {"n_houses": instance.n_houses, "n_attributes": len(instance.attributes),
                "bucket": instance.bucket}

    def reset_info(self, instance: ZebraInstance) -> dict[str, Any]:
        return {**super().reset_info(instance), "size": instance.size,
                "solution_header": instance.solution_header, "attribute_values": instance.attribute_values}

    def problem_text(self, instance: ZebraInstance) -> str:
        return (
            "Solve this logic grid puzzle.\n\n" + puzzle_text(instance) + "\n\n"
            f"solution_header: {json.dumps(instance.solution_header)}\n"
            f"attribute_values: {json.dumps(instance.attribute_values)}"
        )

    def instructions(self, instance: ZebraInstance) -> str:
        n = instance.n_houses
        table = ('"solution": {"header": ' + json.dumps(instance.solution_header)
                 + ', "rows": [["1", ...], ..., ["' + str(n) + '", ...]]}')
        if not self.reward_config.interleaved:
            return ("Reason in natural language, then give the final answer as a single JSON object inside "
                    "<answer>...</answer> with one key: " + table + " (one row per house, in order, values "
                    "spelled exactly as in attribute_values).")
        if self.mode == "step":
            return (
                "Work step by step; each of your messages is one action.\n"
                "1. First send the clues as formulas: <answer>{\"syntactic_clues\": [\"C1: ....\", ...]}</answer>, "
                "one entry per clue in order, each starting with C<i>: and ending with a period (or simply one "
                "'C<i>: formula.' per line).\n"
                "2. Then send one deduction per message: one sentence and its formula, e.g. "
                "'Bob must live in house 2. S1: Bob == 2.' (S1, S2, ... in order). Each step is checked "
                "by a solver: a valid step that fixes something new about the houses (a value placed in or "
                "ruled out of a house) raises your reward; a contradiction, a repeat, a restated clue or a "
                "step that fixes nothing lowers it.\n"
                f"3. Finally send <answer>{{{table}}}</answer>.\n\n" + _LANGUAGE_GUIDE
            )
        return (
            "Answer with a single JSON object inside <answer>...</answer> and nothing else. Its five keys:\n"
            f'- "n_houses": {n}\n'
            '- "attribute_values": returned exactly as given\n'
            '- "syntactic_clues": one formula per clue, in order, each "C<i>: <formula>." (e.g. "C1: Bob == tea.")\n'
            '- "reasoning": alternating entries: a one-sentence natural-language deduction, then its formula '
            '"S<k>: <formula>." (S1, S2, ...). Each formula must follow from the clues and earlier steps; a '
            "solver rewards valid deductions that fix something new and penalises contradictions; do not "
            "restate clues.\n"
            f"- {table}: one row per house in order, values spelled exactly as in attribute_values.\n\n"
            + _LANGUAGE_GUIDE
        )
