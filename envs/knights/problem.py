"""The ``knights`` problem: Knights & Knaves with Spring's step-verified process reward (Spring
App. A.3), the trace mode of ``SolverKnights-v0`` (its step mode: :class:`~solvergym.envs.modes.step.StepEnv` over Spring's ``steps`` capability,
:class:`~..logic_steps.steps.SpringSteps`).

Rewards and settings are those of :class:`~..logic_steps.problem.StepProblem`; the answer schema
is in :mod:`.verify`. Difficulty: ``n_people`` (2-8), ``depth`` (2-4 levels of nesting in a
statement) and ``width`` (2-4 operands of And/Or). Setting: ``world``, how the solution is drawn
(:func:`~.generator.generate_knights`): ``"uniform"`` (default: uniform over the 2^n role
assignments, balanced over consecutive seeds by the seed's stratum, so that no answer given
without reading, such as "everyone is a knight", beats a uniform guess) or ``"natural"`` (K&K's
draw, whose solutions lean to knights).
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..logic_steps.problem import STEP_PAYMENT, StepProblem, format_answer
from ..problem import Knobs
from .generator import WORLDS, KnightsInstance, generate_knights
from .verify import KNIGHTS

__all__ = ["KnightsProblem", "KnightsKnobs"]

_LANGUAGE_GUIDE = """Formula language: Knight(A), Knave(A); Not(e), And(e1, e2, ...), Or(e1, e2, ...), Xor(e1, e2),
Implies(e1, e2); e1 == e2 (same truth value, e.g. "A and C are of the same type": Knight(A) == Knight(C)) and e1 != e2.
A statement S made by A becomes the premise Knight(A) == S (wrap S in parentheses if it is itself an ==)."""


@dataclass(frozen=True)
class KnightsKnobs(Knobs):
    """Knights & Knaves' difficulty: ``n_people`` (2-8), ``depth`` (2-4 levels of nesting in a
    statement) and ``width`` (2-4 operands of And/Or)."""

    n_people: int = 3
    depth: int = 2
    width: int = 2

    def normalise(self) -> dict[str, Any]:
        return {name: int(getattr(self, name)) for name in self.names() if isinstance(getattr(self, name), np.integer)}

    def validate(self) -> None:
        for name, v, lo, hi in (("n_people", self.n_people, 2, 8), ("depth", self.depth, 2, 4),
                                ("width", self.width, 2, 4)):
            if not isinstance(v, (int, np.integer)) or isinstance(v, bool) or not lo <= v <= hi:
                raise ValueError(f"{name} must be an int in {lo}..{hi}, got {v!r}")


class KnightsProblem(StepProblem):
    """Knights & Knaves puzzles with a unique solution; see the module docstring."""

    name = "knights"
    family = KNIGHTS
    instance_cls = KnightsInstance
    Knobs = KnightsKnobs
    family_settings = {"world": "uniform"}
    #: the solution is the seed's stratum (``world="uniform"``): balanced over consecutive seeds
    stratified = True

    @classmethod
    def check_family_settings(cls, settings: dict[str, Any]) -> dict[str, Any]:
        if settings["world"] not in WORLDS:
            raise ValueError(f"world must be one of {WORLDS}, got {settings['world']!r}")
        return settings

    def generate(self, knobs, rng, stratum: float | None = None):
        return generate_knights(knobs.n_people, rng, depth=knobs.depth, width=knobs.width, world=self.world,
                                stratum=stratum)

    # -- what a policy earns without reading (solvergym.evaluation.blind) ---------------------------
    # The final answer is the roles of the characters the prompt lists. A policy that does not read
    # the statements can still copy the names and give each a role by position ("everyone a
    # knight"); such a rule is a key, the roles in the characters' order ("knight,knave,knight").
    # Its minimal scored answer is the solution alone, {"solution": {...}}: r_accuracy is scored,
    # while without premises nothing else is (no r_parsed, no process terms; r_format needs the
    # other keys).
    def blind_candidates(self, instance: KnightsInstance) -> list[str]:
        """The one right rule: the solution's roles in the characters' order."""
        return [",".join("knight" if b else "knave" for b in instance.solution)]

    def blind_answer(self, instance: KnightsInstance, key: str) -> str:
        """The answer rule ``key`` writes on ``instance``: the solution alone."""
        return format_answer({"solution": dict(zip(instance.names, key.split(",")))})

    def blind_chance(self, instance: KnightsInstance) -> float:
        """Roles drawn uniformly: 1 in 2^n. With ``world="uniform"`` (default) the solution is
        uniform over the 2^n role assignments and balanced over consecutive seeds, so no rule is
        right more often than that."""
        return 1.0 / (1 << instance.n_people)

    def blind_wrong(self, instance: KnightsInstance, key: str) -> str:
        roles = key.split(",")
        return ",".join(["knave" if roles[0] == "knight" else "knight", *roles[1:]])

    def describe(self, instance: KnightsInstance) -> dict[str, Any]:
        return {"n_people": instance.n_people, "depth": instance.depth, "width": instance.width}

    def reset_info(self, instance: KnightsInstance) -> dict[str, Any]:
        return {**super().reset_info(instance), "characters": list(instance.names)}

    def problem_text(self, instance: KnightsInstance) -> str:
        lines = [
            "A very special island is inhabited only by knights and knaves. Knights always tell the "
            "truth, and knaves always lie. You meet " + str(instance.n_people) + " inhabitants: "
            + ", ".join(instance.names[:-1]) + " and " + instance.names[-1] + ".",
        ]
        lines += [f"{i}. {s}" for i, s in enumerate(instance.sentences(), 1)]
        lines.append("Who is a knight and who is a knave?")
        lines.append(f"characters: {json.dumps(instance.names)}")
        return "\n".join(lines)

    novel_words = ("it settles someone's identity", "statement", "settles nothing")

    def instructions(self, instance: KnightsInstance, step: bool = False) -> str:
        sol = '"solution": {' + ", ".join(f'"{n}": "knight" or "knave"' for n in instance.names[:2]) + ", ...}"
        if not self.reward_config.interleaved:
            return ("Reason in natural language, then give the final answer as a single JSON object inside "
                    f"<answer>...</answer> with one key: {sol}.")
        if step:
            return (
                "Work step by step; each of your messages is one action.\n"
                '1. First send the statements as formulas: <answer>{"syntactic_statements": ["C1: Knight(A) == ....", '
                "...]}</answer>, one per statement in order (or one 'C<i>: formula.' per line).\n"
                "2. Then send one deduction per message: one sentence and its formula, e.g. "
                "'If A were a knight, B's statement would be false, so A is a knave. S1: Knave(A).' (S1, S2, ... in "
                "order). " + STEP_PAYMENT + "\n"
                f"3. Finally send <answer>{{{sol}}}</answer>.\n\n" + _LANGUAGE_GUIDE
            )
        return (
            "Answer with a single JSON object inside <answer>...</answer> and nothing else. Its four keys:\n"
            '- "characters": the list of names, as given\n'
            '- "syntactic_statements": one premise per statement, in order, "C<i>: Knight(A) == <what A says>."\n'
            '- "reasoning": alternating entries: a one-sentence deduction, then its formula "S<k>: <formula>." '
            "(S1, S2, ...). A solver rewards valid deductions that settle someone's identity and penalises "
            "contradictions.\n"
            f"- {sol}\n\n" + _LANGUAGE_GUIDE
        )
