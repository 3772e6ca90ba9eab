"""The ``zebra`` problem: Zebra puzzles with Spring's step-verified process reward (Spring §4,
App. E.1), the trace mode of ``SolverZebra-v0`` (its step mode: :class:`~solvergym.envs.modes.step.StepEnv` over Spring's ``steps`` capability,
:class:`~..logic_steps.steps.SpringSteps`).

Rewards and settings are those of :class:`~..logic_steps.problem.StepProblem`. Difficulty:
``n_houses`` x ``n_attributes`` (any size of Spring Table 5, 2x2 ... 6x6, and more up to 6 houses
x 11 attributes), or ``bucket`` ("Small", "Medium", "Large", "X-Large") to draw the size
uniformly from that Table 5 bucket at each reset.
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..logic_steps.problem import STEP_PAYMENT, StepProblem, format_answer
from ..problem import Knobs
from .generator import ATTRIBUTES, BUCKETS, ZebraInstance, generate_zebra, puzzle_text
from .verify import ZEBRA

__all__ = ["ZebraProblem", "ZebraKnobs"]

_LANGUAGE_GUIDE = """Formula language (each value token stands for the house number it is in; houses are 1..N):
  A == B            A and B are in the same house        A != B      not in the same house
  A < B             A is somewhere left of B             A > B       somewhere right of B
  A + 1 == B        A is directly left of B              A == 3      A is in house 3
  Or(A + 2 == B, B + 2 == A)   one house between A and B (two houses between: + 3)
  Or(A == B + 1, A == B - 1)   A and B are next to each other
  Not(e), And(e1, e2, ...), Or(e1, e2, ...) combine these. Use the tokens exactly as in attribute_values."""


@dataclass(frozen=True)
class ZebraKnobs(Knobs):
    """Zebra's difficulty: ``n_houses`` (2-6) x ``n_attributes`` (1-11), or a Spring Table 5
    ``bucket`` to draw the size from at each reset (see the module docstring)."""

    n_houses: int = 3
    n_attributes: int = 3
    bucket: str | None = None

    def normalise(self) -> dict[str, Any]:
        return {name: int(getattr(self, name)) for name in ("n_houses", "n_attributes")
                if isinstance(getattr(self, name), np.integer)}

    def validate(self) -> None:
        for name, v, hi in (("n_houses", self.n_houses, 6), ("n_attributes", self.n_attributes, len(ATTRIBUTES))):
            if not isinstance(v, (int, np.integer)) or isinstance(v, bool) or not (2 if name == "n_houses" else 1) <= v <= hi:
                raise ValueError(f"{name} must be an int in {2 if name == 'n_houses' else 1}..{hi}, got {v!r}")
        if self.bucket is not None and self.bucket not in BUCKETS:
            raise ValueError(f"bucket must be one of {list(BUCKETS)} or None, got {self.bucket!r}")


class ZebraProblem(StepProblem):
    """Zebra puzzles (N houses x M attributes) with unique solutions; see the module docstring.
    Setting: ``clue_weights`` (the clue kinds' weights, :func:`~.generator.generate_zebra`)."""

    name = "zebra"
    family = ZEBRA
    instance_cls = ZebraInstance
    Knobs = ZebraKnobs
    family_settings = {"clue_weights": None}

    def generate(self, knobs, rng):
        n, m, bucket = knobs.n_houses, knobs.n_attributes, knobs.bucket
        if bucket is not None:
            sizes = BUCKETS[bucket]
            n, m = sizes[int(rng.integers(len(sizes)))]
        return generate_zebra(n, m, rng, clue_weights=self.clue_weights)

    # -- what a policy earns without reading (solvergym.evaluation.blind) ---------------------------
    # The final answer is a table of the values the prompt lists (attribute_values). A policy that
    # does not read the clues can still place each attribute's values by position ("in the order
    # given"); such a rule is a key: per attribute, the position in attribute_values of the value
    # in each house ("0,1,2/2,0,1"). Its minimal scored answer is the solution alone.
    def blind_candidates(self, instance: ZebraInstance) -> list[str]:
        """The one right rule: the solution's values by their positions in attribute_values."""
        return ["/".join(",".join(str(vs.index(row[a])) for row in instance.solution)
                         for a, vs in enumerate(instance.values))]

    def blind_answer(self, instance: ZebraInstance, key: str) -> str:
        """The answer rule ``key`` writes on ``instance``: the solution alone. A key of another size
        (a bucket draws several) writes the values in the order given."""
        parts = [[int(j) for j in part.split(",")] for part in key.split("/")]
        n = instance.n_houses
        if len(parts) != len(instance.values) or any(sorted(part) != list(range(n)) for part in parts):
            parts = [list(range(n)) for _ in instance.values]
        cols = [[vs[j] for j in part] for vs, part in zip(instance.values, parts)]
        rows = [[str(h + 1)] + [col[h] for col in cols] for h in range(instance.n_houses)]
        return format_answer({"solution": {"header": instance.solution_header, "rows": rows}})

    def blind_chance(self, instance: ZebraInstance) -> float:
        """A table drawn uniformly, each attribute's values in a random order: 1 in (n!)^m (Puzzle
        Acc, not Cell Acc, is the reward). The generator draws the solution uniformly."""
        return 1.0 / math.factorial(instance.n_houses) ** len(instance.attributes)

    def blind_wrong(self, instance: ZebraInstance, key: str) -> str:
        first, _, rest = key.partition("/")
        order = first.split(",")
        return ",".join(order[1:] + order[:1]) + ("/" + rest if rest else "")  # house values rotated

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

    novel_words = ("something new about the houses follows from it (a value placed in or ruled out of a house)",
                   "clue", "fixes nothing")

    def instructions(self, instance: ZebraInstance, step: bool = False) -> str:
        n = instance.n_houses
        table = ('"solution": {"header": ' + json.dumps(instance.solution_header)
                 + ', "rows": [["1", ...], ..., ["' + str(n) + '", ...]]}')
        if not self.reward_config.interleaved:
            return ("Reason in natural language, then give the final answer as a single JSON object inside "
                    "<answer>...</answer> with one key: " + table + " (one row per house, in order, values "
                    "spelled exactly as in attribute_values).")
        if step:
            return (
                "Work step by step; each of your messages is one action.\n"
                "1. First send the clues as formulas: <answer>{\"syntactic_clues\": [\"C1: ....\", ...]}</answer>, "
                "one entry per clue in order, each starting with C<i>: and ending with a period (or simply one "
                "'C<i>: formula.' per line).\n"
                "2. Then send one deduction per message: one sentence and its formula, e.g. "
                "'Bob must live in house 2. S1: Bob == 2.' (S1, S2, ... in order). " + STEP_PAYMENT + "\n"
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
