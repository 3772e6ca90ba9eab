"""Knights & Knaves verification (Spring App. A.3, B.2 (d)-(e)) and its answer schema.

Spring gives no Knights prompt; this schema follows App. E.1 in spirit. The answer is one JSON
object in ``<answer>...</answer>`` with four keys:

- ``"characters"``: the names, as given;
- ``"syntactic_statements"``: one premise per statement, in order, ``"C<i>: Knight(A) == <what A
  says>."`` (a knight's statement is true, a knave's false: A is a knight iff A's statement holds);
- ``"reasoning"``: alternating sentence / ``"S<k>: <formula>."`` entries;
- ``"solution"``: ``{"A": "knight", "B": "knave", ...}``.

Formula language: ``Knight(X)``, ``Knave(X)``, ``Not``, ``And``, ``Or``, ``Xor``, ``Implies`` and
``==`` / ``!=`` between statements ("A and C are of the same type": ``Knight(A) == Knight(C)``).
Vocabulary: one Boolean per character (true = knight); ``Knave(X)`` is ``Not(Knight(X))``, so
Γ_dom is empty and a step is tautological (Def. 3) exactly when it is a propositional tautology.
r_accuracy is Puzzle Acc; Person Acc is reported too.
"""
from __future__ import annotations

from typing import Any

import numpy as np
import z3

from ..logic_steps.facts import pred_atoms
from ..logic_steps.family import Family, PremiseGroup, SolutionScore
from ..logic_steps.formula import FormulaError, Language, Node
from ..logic_steps.sample import WorldSample
from ..logic_steps.theory import Theory
from .generator import KnightsInstance

__all__ = ["KNIGHTS_LANGUAGE", "KnightsTheory", "KnightsFamily", "KNIGHTS"]

KNIGHTS_LANGUAGE = Language(
    name="Knights",
    functions=frozenset({"Not", "And", "Or", "Xor", "Implies", "Knight", "Knave"}),
    comparisons=frozenset({"==", "!="}),
    arithmetic=False,
    bare_names=False,
)


class KnightsTheory(Theory):
    language = KNIGHTS_LANGUAGE
    logic = "QF_FD"

    def __init__(self, instance: KnightsInstance):
        super().__init__()
        self.names = list(instance.names)
        self.vars = {n: z3.Bool(f"knight_{n}") for n in self.names}

    def domain(self) -> list[z3.BoolRef]:
        return []

    def state_vars(self) -> list[z3.ExprRef]:
        return list(self.vars.values())

    def _make_sample(self, rng: np.random.Generator, size: int) -> WorldSample:
        knight = {n: rng.random(size) < 0.5 for n in self.names}
        return WorldSample(size, lambda x: (_ for _ in ()).throw(KeyError(x)),
                           lambda op, a: knight[a[0]] if op == "Knight" else ~knight[a[0]])

    def fact_atoms(self) -> list[Node]:
        """Every role ``Knight(X)`` (``Knave(X)`` is its negation; ``novelty="facts"``)."""
        return pred_atoms("Knight", [(n,) for n in self.names])

    def predicate(self, op: str, names: list[str]) -> z3.BoolRef:
        if op not in ("Knight", "Knave"):
            raise FormulaError(f"{op}(...) is not part of the Knights language")
        v = self.vars.get(names[0])
        if v is None:
            raise self.unknown("character", names[0], self.names)
        return v if op == "Knight" else z3.Not(v)


class KnightsFamily(Family):
    name = "knights"
    answer_keys = ("characters", "syntactic_statements", "reasoning", "solution")
    premise_groups = (PremiseGroup("syntactic_statements", "C"),)
    require_unique = True

    def theory(self, instance: KnightsInstance) -> KnightsTheory:
        return KnightsTheory(instance)

    def true_premises(self, instance: KnightsInstance) -> list[str]:
        return instance.formulas()

    def check_fields(self, obj: dict[str, Any], instance: KnightsInstance) -> list[str]:
        if "characters" in obj and obj["characters"] != instance.names:
            return ["characters differs from the given list of names"]
        return []

    def parse_solution(self, value: Any, instance: KnightsInstance):
        if not isinstance(value, dict):
            return None, 'the solution must be an object {"Name": "knight" | "knave", ...}', []
        roles: dict[str, bool | None] = {}
        issues = []
        unknown = []
        lower = {n.lower(): n for n in instance.names}
        for k, v in list(value.items())[:64]:
            name = lower.get(str(k).strip().lower())
            if name is None:
                unknown.append(f"unknown character {str(k)[:30]!r}")
                continue
            role = str(v).strip().lower().rstrip(".")
            roles[name] = True if role == "knight" else False if role == "knave" else None
            if roles[name] is None:
                unknown.append(f"{name}: {str(v)[:20]!r} is neither knight nor knave")
        missing = [n for n in instance.names if n not in roles]
        if missing:
            issues.append("the solution omits " + ", ".join(missing))
        return {"roles": roles, "problems": unknown}, None, issues

    def solution_problems(self, parsed) -> list[str]:
        return list(parsed["problems"][:5])

    def solution_formula(self, parsed, theory: KnightsTheory) -> z3.BoolRef:
        eqs = [theory.vars[n] == z3.BoolVal(b) for n, b in parsed["roles"].items() if b is not None]
        return z3.And(*eqs) if eqs else z3.BoolVal(True)

    def score_solution(self, parsed, instance: KnightsInstance) -> SolutionScore:
        roles = parsed["roles"]
        right = sum(roles.get(n) is b for n, b in zip(instance.names, instance.solution))
        n = len(instance.names)
        ok = right == n
        return SolutionScore(float(ok), ok, _person_metrics(ok, right, n), f"{right}/{n} identities right")

    def empty_metrics(self, instance) -> dict[str, float]:
        return _person_metrics(False, 0, len(instance.names))  # the puzzle's persons still count

    def gold_answer(self, instance: KnightsInstance) -> dict[str, Any]:
        return {
            "characters": list(instance.names),
            "syntactic_statements": [f"C{i}: {f}." for i, f in enumerate(instance.formulas(), 1)],
            "reasoning": [],
            "solution": {n: ("knight" if b else "knave") for n, b in zip(instance.names, instance.solution)},
        }

    def gold_step_candidates(self, instance: KnightsInstance) -> list[tuple[str, str]]:
        out = []
        for n, b in zip(instance.names, instance.solution):
            role = "knight" if b else "knave"
            out.append((f"The statements leave only one possibility: {n} is a {role}.",
                        f"{'Knight' if b else 'Knave'}({n})"))
        return out

    def gold_fallback(self, instance: KnightsInstance) -> tuple[str, str]:
        roles = [f"{'Knight' if b else 'Knave'}({n})" for n, b in zip(instance.names, instance.solution)]
        return "Together the statements fix everyone's identity.", "And(" + ", ".join(roles) + ")"

    def solution_from_model(self, model: z3.ModelRef, theory: KnightsTheory, instance: KnightsInstance) -> dict[str, str]:
        return {n: ("knight" if z3.is_true(model.eval(v, model_completion=True)) else "knave")
                for n, v in theory.vars.items()}

    def random_answer(self, instance: KnightsInstance, rng: np.random.Generator) -> dict[str, Any]:
        ans = self.gold_answer(instance)
        bits = rng.integers(0, 2, size=len(instance.names))
        ans["solution"] = {n: ("knight" if b else "knave") for n, b in zip(instance.names, bits)}
        return ans


def _person_metrics(ok: bool, right: int, total: int) -> dict[str, float]:
    """Puzzle Acc and Person Acc of one puzzle, with the counts behind Person Acc: App. B.2 (e)
    sums right identities and characters over all puzzles, so the aggregate needs them."""
    return {"puzzle_acc": float(ok), "person_acc": right / total, "persons_right": right, "persons_total": total}


KNIGHTS = KnightsFamily()
