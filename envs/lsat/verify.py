"""AR-LSAT-style verification: vocabulary, Γ_dom, the eight-key schema of Spring App. E.2 and Acc.

The answer is one JSON object in ``<answer>...</answer>`` with App. E.2's eight keys:
``problem_type`` ("ordering", "grouping" or "assignment"), ``world_model`` (``entities``,
``domains``, ``structural_assumptions``), ``rules`` (passage rules as formulas), ``facts`` (the
question's temporary conditions, possibly empty), ``question_semantics`` (``question_type`` as
given, ``option_interpretation_rule``), ``options`` (``{"A": <formula>, ...}``), ``reasoning``
(sentence / ``S<k>: <formula>.`` pairs) and ``solution`` (``{"selected_option": "C"}``). App. E.2
is written for grouping; ordering and assignment games use the same keys (the schema "in the
same spirit"). Rules and facts may carry an ``R<i>:`` / ``F<i>:`` prefix and a
final period; neither is required (App. E.2 does not ask for them).

Vocabulary and Γ_dom:

- ordering: every entity name is its position, an integer; Γ_dom: positions 1..n, all different.
  Language: ``== != < > <= >=``, ``+ k``, the Boolean and counting operators, ``Sat``/``Unsat``.
- grouping: ``Assign(entity, group)``; Γ_dom: each entity in exactly one group.
- assignment: as grouping, and Γ_dom also fixes each slot's number of entities.
  Language for both: ``Assign``, ``==``/``!=`` between statements, ``Not And Or Xor Implies``,
  ``AtLeast/AtMost/Exactly(k, ...)``, ``Sat(Option_X)``, ``Unsat(Option_X)``.

``Unsat(Option_X)`` ("rules + facts + Option_X is unsatisfiable") is compiled to ``Not(O_X)``,
a statement about the state that Definitions 2-5 judge like any other. ``Sat(Option_X)`` is a
claim about the solver and is judged by :meth:`StepVerifier._check_sat_claim`. Option formulas
come from the answer's own ``options`` (the model's parse, like its premises).

Def. 6's F for a selected option X (with O_X the instance's option X): ``O_X`` for must-be-true,
could-be-true and if-then questions, ``Not(O_X)`` for cannot-be-true. §4.2's uniqueness does not
apply (a game has several solutions): s_sat is satisfiability alone. r_accuracy is Acc (App. B.2
(c)); metrics carry the game type so Acc can be split by ordering / grouping / assignment.
"""
from __future__ import annotations

import re
from typing import Any

import numpy as np
import z3

from ..logic_steps.facts import int_atoms, pred_atoms
from ..logic_steps.family import SOLVE_TIMEOUT_MS, Family, PremiseGroup, SolutionScore
from ..logic_steps.formula import FormulaError, Language, Node, parse_formula
from ..logic_steps.sample import WorldSample
from ..logic_steps.theory import Theory
from .generator import OPTION_LETTERS, LSATInstance, evaluate, worlds_of

__all__ = ["ORDERING_LANGUAGE", "GROUPING_LANGUAGE", "LSATTheory", "LSATFamily", "LSAT"]

_BOOL = {"Not", "And", "Or", "Xor", "Implies", "AtLeast", "AtMost", "Exactly", "Sat", "Unsat"}
ORDERING_LANGUAGE = Language(
    name="AR-LSAT ordering", functions=frozenset(_BOOL),
    comparisons=frozenset({"==", "!=", "<", ">", "<=", ">="}), arithmetic=True, bare_names=True,
)
GROUPING_LANGUAGE = Language(
    name="AR-LSAT grouping/assignment", functions=frozenset(_BOOL | {"Assign"}),
    comparisons=frozenset({"==", "!="}), arithmetic=False, bare_names=False,
)

_ORD = ["first", "second", "third", "fourth", "fifth", "sixth", "seventh"]


class LSATTheory(Theory):
    logic = "QF_LIA"

    def __init__(self, instance: LSATInstance):
        super().__init__()
        self.instance = instance
        self.game = instance.game
        self.entities = list(instance.entities)
        self.groups = list(instance.groups)
        if self.game == "ordering":
            self.language = ORDERING_LANGUAGE
            self.pos = {e: z3.Int(f"pos_{e}") for e in self.entities}
        else:
            self.language = GROUPING_LANGUAGE
            self.assign = {(e, g): z3.Bool(f"assign_{e}_{g}") for e in self.entities for g in self.groups}

    def domain(self) -> list[z3.BoolRef]:
        if self.game == "ordering":
            n = len(self.entities)
            out = [c for v in self.pos.values() for c in (v >= 1, v <= n)]
            # "all different" as one entity per position (see ZebraTheory.domain for why)
            return out + [z3.PbEq([(v == k, 1) for v in self.pos.values()], 1) for k in range(1, n + 1)]
        out = [z3.PbEq([(self.assign[e, g], 1) for g in self.groups], 1) for e in self.entities]
        if self.game == "assignment":
            out += [z3.PbEq([(self.assign[e, g], 1) for e in self.entities], c)
                    for g, c in zip(self.groups, self.instance.capacities)]
        return out

    def state_vars(self) -> list[z3.ExprRef]:
        return list(self.pos.values()) if self.game == "ordering" else list(self.assign.values())

    def _make_sample(self, rng: np.random.Generator, size: int) -> WorldSample:
        n = len(self.entities)
        if self.game == "ordering":
            cols = rng.permuted(np.tile(np.arange(1, n + 1), (size, 1)), axis=1)
        elif self.game == "grouping":
            cols = rng.integers(0, len(self.groups), size=(size, n))
        else:
            slots = np.repeat(np.arange(len(self.groups)), self.instance.capacities)
            cols = rng.permuted(np.tile(slots, (size, 1)), axis=1)
        index = {e: i for i, e in enumerate(self.entities)}
        gindex = {g: i for i, g in enumerate(self.groups)}
        return WorldSample(size, lambda x: cols[:, index[x]].astype(np.int64),
                           lambda op, a: cols[:, index[a[0]]] == gindex[a[1]])

    def fact_atoms(self) -> list[Node]:
        """Every position ``e == k`` (ordering) or membership ``Assign(e, g)``, then each parsed
        option's formula O_X (``novelty="facts"``: ``Unsat(Option_X)`` states the fact Not(O_X))."""
        if self.game == "ordering":
            atoms = int_atoms(self.entities, range(1, len(self.entities) + 1))
        else:
            atoms = pred_atoms("Assign", [(e, g) for e in self.entities for g in self.groups])
        letters = sorted(self.option_nodes)
        return atoms + [self.option_nodes[k] for k in letters]

    def fact_aliases(self) -> dict[int, str]:
        first = len(self.entities) ** 2 if self.game == "ordering" else len(self.entities) * len(self.groups)
        return {first + j: f"Option_{k}" for j, k in enumerate(sorted(self.option_nodes))}

    def fact_groups(self) -> list[list[int]]:
        """Ordering: one entity per position; grouping and assignment: one group per entity."""
        n, g = len(self.entities), len(self.groups)
        if self.game == "ordering":
            return [[e * n + k for e in range(n)] for k in range(n)]
        return [[e * g + j for j in range(g)] for e in range(n)]

    def name_term(self, name: str) -> z3.ArithRef:
        if self.game != "ordering":
            raise FormulaError(f"bare name {name!r}: write Assign({name}, <group>)")
        v = self.pos.get(name)
        if v is None:
            raise self.unknown("entity", name, self.entities)
        return v

    def predicate(self, op: str, names: list[str]) -> z3.BoolRef:
        if op != "Assign" or self.game == "ordering":
            raise FormulaError(f"{op}(...) is not part of the {self.language.name} language")
        e, g = names
        if e not in self.entities:
            raise self.unknown("entity", e, self.entities)
        if g not in self.groups:
            raise self.unknown("group", g, self.groups)
        return self.assign[e, g]


_LETTER = re.compile(r"^\s*(?:option[\s_]*)?\(?([A-Ea-e])\)?\s*$", re.IGNORECASE)


class LSATFamily(Family):
    name = "lsat"
    answer_keys = ("problem_type", "world_model", "rules", "facts", "question_semantics", "options",
                   "reasoning", "solution")
    premise_groups = (PremiseGroup("rules", "R", prefix_required=False, period_required=False),
                      PremiseGroup("facts", "F", prefix_required=False, period_required=False, may_be_empty=True))
    require_unique = False

    def theory(self, instance: LSATInstance) -> LSATTheory:
        return LSATTheory(instance)

    def true_premises(self, instance: LSATInstance) -> list[str]:
        return list(instance.rule_formulas) + list(instance.fact_formulas)

    def check_fields(self, obj: dict[str, Any], instance: LSATInstance) -> list[str]:
        issues = []
        if "problem_type" in obj and obj["problem_type"] != instance.game:
            issues.append(f"problem_type is {obj['problem_type']!r}; this is a {instance.game} game")
        wm = obj.get("world_model")
        if "world_model" in obj:
            if not isinstance(wm, dict) or sorted(map(str, wm.get("entities") or [])) != sorted(instance.entities):
                issues.append("world_model.entities must list the game's entities")
        qs = obj.get("question_semantics")
        if "question_semantics" in obj:
            if not isinstance(qs, dict) or qs.get("question_type") != instance.question_type:
                issues.append(f"question_semantics.question_type must be {instance.question_type!r}")
        opts = obj.get("options")
        if "options" in obj and (not isinstance(opts, dict) or sorted(opts) != OPTION_LETTERS):
            issues.append("options must have the keys A, B, C, D, E")
        return issues

    def setup(self, obj: dict[str, Any], theory: LSATTheory, instance: LSATInstance) -> list[str]:
        opts = obj.get("options")
        if not isinstance(opts, dict):
            return ['"options" must be an object {"A": <formula>, ...}']
        problems = []
        for letter, text in list(opts.items())[:10]:
            m = _LETTER.match(str(letter))
            if m is None:
                problems.append(f"option key {str(letter)[:20]!r} is not a letter A-E")
                continue
            if not isinstance(text, str):
                problems.append(f"option {letter} is not a string")
                continue
            body = re.sub(r"^\s*(?:Option_)?[A-E]\s*:\s*", "", text).strip().rstrip(".").strip()
            try:
                node = theory.parse(body)
                theory.options[m.group(1).upper()] = theory.compile(node)
                theory.option_nodes[m.group(1).upper()] = node
            except FormulaError as e:
                problems.append(f"option {letter} ({body[:60]!r}): {e}")
        return problems

    def parse_solution(self, value: Any, instance: LSATInstance):
        raw = value.get("selected_option") if isinstance(value, dict) else None
        if not isinstance(raw, str):
            return None, 'the solution must be {"selected_option": "<letter>"}', []
        m = _LETTER.match(raw)
        if m is None:
            return None, f"selected_option {raw[:20]!r} is not one of A-E", []
        return m.group(1).upper(), None, []

    def _option_formula(self, letter: str, instance: LSATInstance, theory: LSATTheory) -> z3.BoolRef:
        return theory.compile(theory.parse(instance.option_formulas[OPTION_LETTERS.index(letter)]))

    def solution_formula(self, parsed: str, theory: LSATTheory) -> z3.BoolRef:
        o = self._option_formula(parsed, theory.instance, theory)
        return z3.Not(o) if theory.instance.question_type == "cannot_be_true" else o

    def score_solution(self, parsed: str, instance: LSATInstance) -> SolutionScore:
        ok = parsed == instance.answer
        return SolutionScore(float(ok), ok, {"acc": float(ok), "game": instance.game},
                             f"selected {parsed}; the answer is {instance.answer}")

    def empty_metrics(self, instance: LSATInstance) -> dict[str, Any]:
        return {"acc": 0.0, "game": instance.game}

    def gold_answer(self, instance: LSATInstance) -> dict[str, Any]:
        if instance.game == "ordering":
            domains = {"positions": list(range(1, len(instance.entities) + 1))}
            assumptions = ["each entity takes exactly one position", "no two entities share a position"]
        else:
            domains = {"groups": list(instance.groups)}
            assumptions = ["each entity belongs to exactly one group", "groups are mutually exclusive"]
            if instance.game == "assignment":
                domains["capacities"] = dict(zip(instance.groups, instance.capacities))
                assumptions.append("each slot takes exactly its capacity")
        rule = {"must_be_true": "the option holds in every valid outcome",
                "could_be_true": "the option holds in at least one valid outcome",
                "cannot_be_true": "the option holds in no valid outcome",
                "if_then": "with the facts added, the option holds in every valid outcome"}[instance.question_type]
        return {
            "problem_type": instance.game,
            "world_model": {"entities": list(instance.entities), "domains": domains,
                            "structural_assumptions": assumptions},
            "rules": list(instance.rule_formulas),
            "facts": list(instance.fact_formulas),
            "question_semantics": {"question_type": instance.question_type, "option_interpretation_rule": rule},
            "options": dict(zip(OPTION_LETTERS, instance.option_formulas)),
            "reasoning": [],
            "solution": {"selected_option": instance.answer},
        }

    def gold_step_candidates(self, instance: LSATInstance) -> list[tuple[str, str]]:
        worlds = worlds_of(instance)
        alive = np.ones(worlds.shape[0], dtype=bool)
        for f in list(instance.rule_formulas) + list(instance.fact_formulas):
            alive &= evaluate(parse_formula(f), instance, worlds)
        live = worlds[alive]
        out: list[tuple[str, str]] = []
        # backbone: what every remaining outcome agrees on
        for i, e in enumerate(instance.entities):
            col = live[:, i]
            if (col == col[0]).all():
                if instance.game == "ordering":
                    out.append((f"{e} must be {_ORD[int(col[0]) - 1]}.", f"{e} == {int(col[0])}"))
                else:
                    g = instance.groups[int(col[0])]
                    out.append((f"{e} must be in {g}.", f"Assign({e}, {g})"))
            elif instance.game != "ordering":
                for gi, g in enumerate(instance.groups):
                    if not (col == gi).any():
                        out.append((f"{e} cannot be in {g}.", f"Not(Assign({e}, {g}))"))
        answer = instance.answer
        qt = instance.question_type
        for letter, formula in zip(OPTION_LETTERS, instance.option_formulas):
            if letter == answer:
                continue
            if qt == "could_be_true":
                out.append((f"Option {letter} cannot hold in any valid outcome.", f"Unsat(Option_{letter})"))
            elif qt == "cannot_be_true":
                out.append((f"Option {letter} holds in some valid outcome.", f"Sat(Option_{letter})"))
        if qt in ("must_be_true", "if_then"):
            out.append((f"Option {answer} holds in every valid outcome.",
                        instance.option_formulas[OPTION_LETTERS.index(answer)]))
        elif qt == "could_be_true":
            out.append((f"Option {answer} can be extended to a valid outcome.", f"Sat(Option_{answer})"))
        else:
            out.append((f"Option {answer} is impossible.", f"Unsat(Option_{answer})"))
        return out

    def solve_premises(self, theory: LSATTheory, premises: list[z3.BoolRef], instance: LSATInstance, *,
                       timeout_ms: int = SOLVE_TIMEOUT_MS) -> tuple[Any, str | None]:
        """The option the question type selects, over the answer's own rules, facts and options:
        must-be-true and if-then, the one the premises entail; could-be-true, the one consistent
        with them; cannot-be-true, the one inconsistent with them."""
        missing = [x for x in OPTION_LETTERS if x not in theory.options]
        if missing:
            return None, "no formula for option(s) " + ", ".join(missing)
        s = z3.Solver()
        s.set("timeout", int(timeout_ms))
        s.add(*theory.domain(), *premises)
        status = s.check()
        if status != z3.sat:
            return None, ("the rules and facts contradict each other" if status == z3.unsat
                          else "the solver gave up on the formulas (time limit)")
        qt, picked, unknown = instance.question_type, [], False
        for letter in OPTION_LETTERS:
            o = theory.options[letter]
            r = s.check(z3.Not(o) if qt in ("must_be_true", "if_then") else o)
            unknown |= r == z3.unknown
            if (r == z3.sat) == (qt == "could_be_true") and r != z3.unknown:
                picked.append(letter)
        if len(picked) == 1:
            return {"selected_option": picked[0]}, None
        why = "the solver gave up on an option; " if unknown else ""
        if picked:
            return ({"selected_option": picked[0]},
                    why + f"options {', '.join(picked)} all qualify as {qt.replace('_', ' ')}; exactly one should")
        return None, why + f"no option qualifies as {qt.replace('_', ' ')} under the formulas"

    def random_answer(self, instance: LSATInstance, rng: np.random.Generator) -> dict[str, Any]:
        ans = self.gold_answer(instance)
        ans["solution"] = {"selected_option": OPTION_LETTERS[int(rng.integers(5))]}
        return ans


LSAT = LSATFamily()
