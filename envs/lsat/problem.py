"""The ``lsat`` problem: AR-LSAT-style ordering / grouping / assignment games with Spring's
step-verified process reward (Spring App. A.2, E.2), the trace mode of ``SolverLSAT-v0``
(its step mode: :class:`~solvergym.envs.modes.step.StepEnv` over Spring's ``steps`` capability,
:class:`~..logic_steps.steps.SpringSteps`).

Rewards and settings are those of :class:`~..logic_steps.problem.StepProblem`; the answer schema
(App. E.2's eight keys) is in :mod:`.verify`. Difficulty (:class:`LSATKnobs`): ``game`` (None
draws one of the three), ``n_entities`` (4-7), ``n_groups`` (2-3, grouping and assignment),
``question_type`` (None draws one). Setting: ``max_solutions`` (how many outcomes the rules may
leave).
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from ..logic_steps.problem import STEP_PAYMENT, StepProblem, format_answer
from ..problem import Knobs
from .generator import GAMES, OPTION_LETTERS, QUESTION_TYPES, LSATInstance, generate_lsat
from .verify import LSAT

__all__ = ["LSATProblem", "LSATKnobs"]

_GUIDE = {
    "ordering": """Formula language (each entity name stands for its position, 1 = first):
  A < B (A earlier than B), A + 1 == B (A immediately before B), A == 3, A != 1, <=, >=;
  Not(e), And(e1, ...), Or(e1, ...), Xor(e1, e2), Implies(e1, e2), AtLeast/AtMost/Exactly(k, e1, ...);
  whole steps Sat(Option_X) (option X is possible) and Unsat(Option_X) (option X is impossible).""",
    "grouping": """Formula language: Assign(A, X) (A is in group X), Assign(A, X) == Assign(B, X) (same X-membership),
  Assign(A, X) != Assign(B, X); Not(e), And(e1, ...), Or(e1, ...), Xor(e1, e2), Implies(e1, e2),
  AtLeast/AtMost/Exactly(k, Assign(A, X), Assign(B, X), ...);
  whole steps Sat(Option_X) (option X is possible) and Unsat(Option_X) (option X is impossible).""",
}


@dataclass(frozen=True)
class LSATKnobs(Knobs):
    """AR-LSAT's difficulty: ``game`` and ``question_type`` (None draws one at each reset),
    ``n_entities`` (4-7) and ``n_groups`` (2-3; grouping and assignment), None: the generator's
    choice."""

    game: str | None = None
    n_entities: int | None = None
    n_groups: int | None = None
    question_type: str | None = None

    def validate(self) -> None:
        game, n_entities, n_groups, question_type = self.game, self.n_entities, self.n_groups, self.question_type
        if game is not None and game not in GAMES:
            raise ValueError(f"game must be one of {GAMES} or None, got {game!r}")
        if question_type is not None and question_type not in QUESTION_TYPES:
            raise ValueError(f"question_type must be one of {QUESTION_TYPES} or None, got {question_type!r}")
        if n_entities is not None and (not isinstance(n_entities, int) or isinstance(n_entities, bool)
                                       or not 4 <= n_entities <= 7):
            raise ValueError(f"n_entities must be an int in 4..7 or None, got {n_entities!r}")
        if n_groups is not None and (not isinstance(n_groups, int) or isinstance(n_groups, bool)
                                     or not 2 <= n_groups <= 3):
            raise ValueError(f"n_groups must be 2, 3 or None, got {n_groups!r}")


class LSATProblem(StepProblem):
    """AR-LSAT-style games with one multiple-choice question; see the module docstring. Setting:
    ``max_solutions`` (>= 2, how many outcomes the rules may leave). Uniqueness is not a gate:
    the family fixes ``require_unique=False`` (a game's rules may leave several outcomes)."""

    name = "lsat"
    family = LSAT
    instance_cls = LSATInstance
    Knobs = LSATKnobs
    family_settings = {"max_solutions": 12}
    fixed_settings = {"require_unique": False}

    @classmethod
    def check_family_settings(cls, settings: dict[str, Any]) -> dict[str, Any]:
        if settings["max_solutions"] < 2:
            raise ValueError("max_solutions must be >= 2")
        return {**settings, "max_solutions": int(settings["max_solutions"])}

    def generate(self, knobs, rng):
        k = knobs
        return generate_lsat(rng, game=k.game, n_entities=k.n_entities, n_groups=k.n_groups,
                             question_type=k.question_type, max_solutions=self.max_solutions)

    # -- what a policy earns without reading (solvergym.evaluation.blind) ---------------------------
    # The final answer is one of five letters; its minimal scored answer is the solution alone,
    # {"solution": {"selected_option": "B"}} (r_accuracy is scored; without the formalisation
    # nothing else is).
    def blind_candidates(self, instance: LSATInstance) -> list[str]:
        """The one right answer, as the solution alone."""
        return [self.letter_answer(instance.answer)]

    @staticmethod
    def letter_answer(letter: str) -> str:
        return format_answer({"solution": {"selected_option": letter}})

    def blind_chance(self, instance: LSATInstance) -> float:
        """A letter drawn uniformly: 1 in 5. The right option's slot is drawn uniformly."""
        return 1.0 / len(OPTION_LETTERS)

    def blind_wrong(self, instance: LSATInstance, key: str) -> str:
        return self.letter_answer(next(x for x in OPTION_LETTERS if x != instance.answer))

    def describe(self, instance: LSATInstance) -> dict[str, Any]:
        return {"game": instance.game, "n_entities": len(instance.entities),
                "n_groups": len(instance.groups) or None, "question_type": instance.question_type}

    def reset_info(self, instance: LSATInstance) -> dict[str, Any]:
        return {**super().reset_info(instance), "problem_type": instance.game,
                "question_type": instance.question_type}

    def problem_text(self, instance: LSATInstance) -> str:
        lines = [instance.scenario, "", "The following rules apply:"]
        lines += [f"{i}. {r}" for i, r in enumerate(instance.rules, 1)]
        lines += ["", instance.question]
        lines += [f"({k}) {o}" for k, o in zip(OPTION_LETTERS, instance.options)]
        lines += ["", f"problem_type: {instance.game}", f"question_type: {instance.question_type}"]
        if instance.game != "ordering":
            lines.append(f"groups: {json.dumps(instance.groups)}")
        lines.append(f"entities: {json.dumps(instance.entities)}")
        return "\n".join(lines)

    novel_words = ("it fixes something new (a position, a membership, an option ruled in or out)", "rule",
                   "fixes nothing")

    def instructions(self, instance: LSATInstance, step: bool = False) -> str:
        guide = _GUIDE["ordering" if instance.game == "ordering" else "grouping"]
        if not self.reward_config.interleaved:
            return ('Reason in natural language, then give the final answer as a single JSON object inside '
                    '<answer>...</answer>: {"solution": {"selected_option": "<A-E>"}}.')
        if step:
            return (
                "Work step by step; each of your messages is one action.\n"
                '1. First send the formalisation: <answer>{"rules": [<formula>, ...], "facts": [<formula>, ...] '
                '(the question\'s condition, or []), "options": {"A": <formula>, ..., "E": <formula>}}</answer>.\n'
                "2. Then send one deduction per message: one sentence and its formula, e.g. "
                "'Option B cannot hold. S1: Unsat(Option_B).' (S1, S2, ... in order). " + STEP_PAYMENT + "\n"
                '3. Finally send <answer>{"solution": {"selected_option": "<A-E>"}}</answer>.\n\n' + guide
            )
        return (
            "Answer with a single JSON object inside <answer>...</answer> and nothing else, with exactly these keys:\n"
            f'- "problem_type": "{instance.game}"\n'
            '- "world_model": {"entities": [...], "domains": {...}, "structural_assumptions": [...]}\n'
            '- "rules": the passage rules as formulas; "facts": the question\'s condition as formulas (or [])\n'
            f'- "question_semantics": {{"question_type": "{instance.question_type}", "option_interpretation_rule": "..."}}\n'
            '- "options": {"A": <formula>, ..., "E": <formula>}\n'
            '- "reasoning": alternating entries: a one-sentence deduction, then its formula "S<k>: <formula>." '
            "(S1, S2, ...). A solver rewards valid deductions that fix something new and penalises contradictions.\n"
            '- "solution": {"selected_option": "<A-E>"}\n\n' + guide
        )
