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

from ..instance import Instance
from .theory import Theory

__all__ = ["Family", "SolutionScore", "PremiseGroup", "SOLVE_TIMEOUT_MS"]

#: Z3's limit per check in :meth:`Family.solve_premises` (the formulas are a model's: hostile)
SOLVE_TIMEOUT_MS = 10_000


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

    # -- Logic-LM's symbolic reasoner (Pan et al. 2023 §3.2; Spring Table 1's baseline) ----------
    def solve_premises(self, theory: Theory, premises: list[z3.BoolRef], instance: Instance, *,
                       timeout_ms: int = SOLVE_TIMEOUT_MS) -> tuple[Any, str | None]:
        """What Γ_dom and ``premises`` (the answer's own, parsed) determine, as the answer's
        ``solution``: ``(solution, None)``; ``(candidate, why)`` when they leave several
        solutions (the first model's); ``(None, why)`` when they have none or the solver gave up.
        The ground truth is not read. This default is for the families with a unique solution."""
        s = z3.Solver()
        s.set("timeout", int(timeout_ms))
        s.add(*theory.domain(), *premises)
        status = s.check()
        if status != z3.sat:
            return None, ("the formulas contradict each other: no solution satisfies them all"
                          if status == z3.unsat else "the solver gave up on the formulas (time limit)")
        model = s.model()
        solution = self.solution_from_model(model, theory, instance)
        s.add(z3.Or([v != model.eval(v, model_completion=True) for v in theory.state_vars()]))
        if s.check() == z3.sat:
            return solution, "the formulas leave more than one solution: a clue is missing or weaker than stated"
        return solution, None

    def solution_from_model(self, model: z3.ModelRef, theory: Theory, instance: Instance) -> Any:
        """The answer's ``solution`` that a Z3 model of the theory stands for."""
        raise NotImplementedError

    def solution_only(self, answer: dict[str, Any]) -> dict[str, Any]:
        """The part of an answer that step mode's final action carries."""
        return {"solution": answer["solution"]}
