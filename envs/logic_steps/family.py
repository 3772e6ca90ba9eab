"""What a step-verified family provides to the shared trace pipeline (:mod:`.trace`).

A family (Zebra, Knights & Knaves, AR-LSAT) knows its JSON schema (Spring App. E), its
vocabulary and Γ_dom (a :class:`~.theory.Theory`), how to read and score a final solution, and
its ground truth (true premises, gold answer, gold reasoning steps). The pipeline does the rest.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import z3

from ..base import Instance
from .theory import Theory

__all__ = ["Family", "SolutionScore", "PremiseGroup"]


@dataclass(frozen=True)
class PremiseGroup:
    """A JSON key holding premises and the ``<letter><i>:`` prefix its entries carry."""

    key: str
    letter: str
    prefix_required: bool = True  # App. E.1: "Each entry MUST start with the clue id prefix"
    period_required: bool = True  # App. E.1: "Each entry MUST ... end with a period"
    may_be_empty: bool = False


@dataclass
class SolutionScore:
    """A parsed final solution compared with the ground truth."""

    accuracy: float  # r_accuracy (Spring §4.3: puzzle accuracy for Zebra)
    correct: bool
    metrics: dict[str, float] = field(default_factory=dict)  # cell_acc, person_acc, ...
    reason: str = ""


class Family:
    """Hooks a family implements (see each family's ``verify.py``)."""

    name: str = ""
    #: the exact top-level keys of the interleaved JSON answer (App. E)
    answer_keys: tuple[str, ...] = ()
    premise_groups: tuple[PremiseGroup, ...] = ()
    #: §4.2 asks for a unique solution of the parsed premises; AR-LSAT games have several
    require_unique: bool = True
    #: Table 7 error categories this family reports besides the generic ones
    metric_names: tuple[str, ...] = ()

    def theory(self, instance: Instance) -> Theory:
        raise NotImplementedError

    def true_premises(self, instance: Instance) -> list[str]:
        """The instance's premises as formulas, in the order of ``premise_groups``."""
        raise NotImplementedError

    def check_fields(self, obj: dict[str, Any], instance: Instance) -> list[str]:
        """Format problems in family-specific fields (n_houses, attribute_values, ...)."""
        return []

    def setup(self, obj: dict[str, Any], theory: Theory, instance: Instance) -> list[str]:
        """Prepare the theory from the answer (AR-LSAT parses its options); parse problems."""
        return []

    def parse_solution(self, value: Any, instance: Instance) -> tuple[Any, str | None, list[str]]:
        """``(parsed, error, format_issues)``; ``parsed`` is None when ``error``."""
        raise NotImplementedError

    def solution_problems(self, parsed: Any) -> list[str]:
        """Parts of a parsed solution that are not in the vocabulary (they make r_parsed 0)."""
        return []

    def solution_formula(self, parsed: Any, theory: Theory) -> z3.BoolRef:
        """F of Def. 6 for a parsed solution."""
        raise NotImplementedError

    def score_solution(self, parsed: Any, instance: Instance) -> SolutionScore:
        raise NotImplementedError

    def empty_metrics(self, instance: Instance) -> dict[str, float]:
        """Accuracy metrics of a trace without a usable solution (all zero)."""
        return {}

    def gold_answer(self, instance: Instance) -> dict[str, Any]:
        """The ground-truth JSON answer (premises, solution; ``reasoning`` left empty)."""
        raise NotImplementedError

    def gold_step_candidates(self, instance: Instance) -> list[tuple[str, str]]:
        """``(sentence, formula)`` candidates for the gold reasoning; the pipeline keeps the
        ones the verifier finds novel, in order."""
        raise NotImplementedError

    def gold_fallback(self, instance: Instance) -> tuple[str, str] | None:
        """A gold step used when no candidate is novel (e.g. the whole solution as one ``And``)."""
        return None

    def random_answer(self, instance: Instance, rng: np.random.Generator) -> dict[str, Any]:
        """An answer in the family's schema with a uniformly random solution and no reasoning
        steps: it parses, but breaks the format rule that ``reasoning`` is not empty (App. E)."""
        raise NotImplementedError

    def solution_only(self, answer: dict[str, Any]) -> dict[str, Any]:
        """The part of an answer that step mode's final action carries."""
        return {"solution": answer["solution"]}
