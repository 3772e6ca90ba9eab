"""Zebra verification: the formula vocabulary and Γ_dom (Spring App. A.1, E.1), the JSON schema of
App. E.1, and the metrics of App. B.2 (Puzzle Acc, Cell Acc).

Vocabulary: every value token (``Alice``, ``cat``, ``hip_hop``) is an integer, the house it is
in; integers are house numbers. Γ_dom: every token is in 1..N, and the N values of each attribute
are in different houses (encoded as: each house holds exactly one value of each attribute). The language is
App. E.1's: ``==``, ``!=``, ``<``, ``>``, ``+ k``/``- k``, house numbers, ``Not``/``And``/``Or``.

Solution (App. E.1 §4): ``{"header": ["House", <attributes>], "rows": [[house, values...], ...]}``.
Cells are matched by column name, so a reordered header still scores its cells (but breaks the
format); a header that names other columns is Spring's "Header Mismatch" (Table 8); rows whose
length differs from the header are its "Format Failure" (no cell is matched). Values are
compared after replacing spaces with underscores, ignoring case. r_accuracy is Puzzle Acc (§4.3:
"for ZebraPuzzles, we instantiate r_accuracy as puzzle accuracy").
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import z3

from ..logic_steps.facts import int_atoms
from ..logic_steps.family import Family, PremiseGroup, SolutionScore
from ..logic_steps.formula import Language, Node
from ..logic_steps.sample import WorldSample
from ..logic_steps.theory import Theory
from .generator import ZebraInstance, describe_value

__all__ = ["ZEBRA_LANGUAGE", "ZebraTheory", "ZebraFamily", "ZebraSolution", "ZEBRA"]

ZEBRA_LANGUAGE = Language(
    name="Zebra",
    functions=frozenset({"Not", "And", "Or"}),
    comparisons=frozenset({"==", "!=", "<", ">"}),
    arithmetic=True,
    bare_names=True,
)


class ZebraTheory(Theory):
    """Tokens are house numbers; Γ_dom = ranges 1..N and all-different per attribute."""

    language = ZEBRA_LANGUAGE
    logic = "QF_LIA"

    def __init__(self, instance: ZebraInstance):
        super().__init__()
        self.instance = instance
        self.n = instance.n_houses
        self.vars = {t: z3.Int(f"house_{t}") for vs in instance.values for t in vs}
        self.tokens = list(self.vars)

    def domain(self) -> list[z3.BoolRef]:
        """Ranges 1..N, and for every attribute and house exactly one of its N values there.

        With N values in N houses that is the same as "all different" (a bijection); written as
        pseudo-Boolean constraints over the atoms ``house_v == h`` it lets Z3 propagate the
        pigeonhole reasoning directly, which ``Distinct`` over integers does not (about half the
        CPU time per step at 6x6)."""
        out = []
        for v in self.vars.values():
            out += [v >= 1, v <= self.n]
        for vs in self.instance.values:
            for h in range(1, self.n + 1):
                out.append(z3.PbEq([(self.vars[t] == h, 1) for t in vs], 1))
        return out

    def state_vars(self) -> list[z3.ExprRef]:
        return list(self.vars.values())

    def _make_sample(self, rng: np.random.Generator, size: int) -> WorldSample:
        houses = {}
        for vs in self.instance.values:
            perm = rng.permuted(np.tile(np.arange(1, len(vs) + 1), (size, 1)), axis=1)
            for j, t in enumerate(vs):
                houses[t] = perm[:, j].astype(np.int64)
        return _worlds(size, houses)

    def sample_near(self, solution: z3.ModelRef) -> WorldSample:
        """The random sample, the solution, and every world that swaps the houses of two values
        of one attribute in it (each attribute stays a permutation of the houses: Γ_dom holds)."""
        sample = self.sample_worlds()
        sol = {t: solution.eval(v, model_completion=True).as_long() for t, v in self.vars.items()}
        near = [sol]
        for vs in self.instance.values:
            for a, b in itertools.combinations(vs, 2):
                near.append({**sol, a: sol[b], b: sol[a]})
        houses = {t: np.concatenate([sample.name(t), np.array([w[t] for w in near], dtype=np.int64)])
                  for t in self.tokens}
        return _worlds(sample.size + len(near), houses)

    def fact_atoms(self) -> list[Node]:
        """Every cell ``t == h`` (``novelty="facts"``)."""
        return int_atoms(self.tokens, range(1, self.n + 1))

    def fact_groups(self) -> list[list[int]]:
        """One value of each attribute per house (Γ_dom's PbEq constraints)."""
        pos = {t: i for i, t in enumerate(self.tokens)}
        return [[pos[t] * self.n + h for t in vs] for vs in self.instance.values for h in range(self.n)]

    def name_term(self, name: str) -> z3.ArithRef:
        v = self.vars.get(name)
        if v is None:
            raise self.unknown("value", name, self.tokens)
        return v


@dataclass
class ZebraSolution:
    """A parsed solution table: ``cells[h][a]`` the token (or None) for house h+1, attribute a."""

    cells: list[list[str | None]]
    unknown: list[str] = field(default_factory=list)


def _norm(x: Any) -> str:
    return "_".join(str(x).strip().split())


class ZebraFamily(Family):
    name = "zebra"
    answer_keys = ("n_houses", "attribute_values", "syntactic_clues", "reasoning", "solution")
    premise_groups = (PremiseGroup("syntactic_clues", "C"),)
    require_unique = True

    def theory(self, instance: ZebraInstance) -> ZebraTheory:
        return ZebraTheory(instance)

    def true_premises(self, instance: ZebraInstance) -> list[str]:
        return list(instance.clue_formulas)

    def check_fields(self, obj: dict[str, Any], instance: ZebraInstance) -> list[str]:
        issues = []
        n = obj.get("n_houses")
        if "n_houses" in obj and (not isinstance(n, int) or isinstance(n, bool) or n != instance.n_houses):
            issues.append(f"n_houses is {n!r}; the puzzle has {instance.n_houses} houses")
        av = obj.get("attribute_values")
        if "attribute_values" in obj:
            ok = isinstance(av, dict) and list(av.items()) == list(instance.attribute_values.items())
            if not ok:
                issues.append("attribute_values differs from the given one (return it unchanged)")
        return issues

    def parse_solution(self, value: Any, instance: ZebraInstance):
        n, attrs = instance.n_houses, instance.attributes
        issues: list[str] = []
        if not isinstance(value, dict) or "rows" not in value:
            return None, 'the solution must be {"header": [...], "rows": [[...], ...]}', issues
        header = value.get("header")
        rows = value.get("rows")
        if not isinstance(header, list) or not all(isinstance(h, str) for h in header):
            return None, "the solution header must be a list of column names", issues
        if not isinstance(rows, list) or not all(isinstance(r, list) for r in rows):
            return None, "the solution rows must be a list of lists", issues
        expected = instance.solution_header
        if header != expected:
            if sorted(header) == sorted(expected):
                issues.append(f"the header's columns are in another order than {expected}")
            else:
                issues.append(f"header mismatch: {header[:8]} instead of {expected}")
        if len(rows) != n:
            issues.append(f"the solution has {len(rows)} rows; the puzzle has {n} houses")
        for i, r in enumerate(rows):
            if len(r) != len(header):
                return None, f"row {i + 1} has {len(r)} values but the header has {len(header)} columns", issues
        col = {h: j for j, h in enumerate(header)}
        tokens = {t.lower(): t for vs in instance.values for t in vs}
        cells: list[list[str | None]] = [[None] * len(attrs) for _ in range(n)]
        unknown: list[str] = []
        for i, r in enumerate(rows[: 2 * n]):
            h = i + 1
            if "House" in col:
                try:
                    h = int(str(r[col["House"]]).strip())
                except ValueError:
                    issues.append(f"row {i + 1}: the House value {str(r[col['House']])[:20]!r} is not a number")
                if h != i + 1:
                    issues.append("rows must list houses 1..N in increasing order")
            if not 1 <= h <= n:
                continue
            for a, name in enumerate(attrs):
                if name not in col:
                    continue
                raw = _norm(r[col[name]])
                tok = tokens.get(raw.lower())
                if tok is None:
                    unknown.append(raw[:40])
                cells[h - 1][a] = tok
        missing = [f"the solution has no {name} column" for name in attrs if name not in col]
        return ZebraSolution(cells, missing + unknown), None, issues

    def solution_problems(self, parsed: ZebraSolution) -> list[str]:
        return [u if u.startswith("the solution has no") else f"unknown value {u!r}" for u in parsed.unknown[:5]]

    def solution_formula(self, parsed: ZebraSolution, theory: ZebraTheory) -> z3.BoolRef:
        eqs = [theory.vars[t] == h + 1 for h, row in enumerate(parsed.cells) for t in row if t is not None]
        return z3.And(*eqs) if eqs else z3.BoolVal(True)

    def score_solution(self, parsed: ZebraSolution, instance: ZebraInstance) -> SolutionScore:
        n, m = instance.n_houses, len(instance.attributes)
        right = sum(parsed.cells[h][a] == instance.solution[h][a] for h in range(n) for a in range(m))
        total = n * m
        ok = right == total
        dup = _duplicates(parsed, instance)
        if ok:
            reason = "every cell matches the solution"
        elif dup:
            reason = f"{right}/{total} cells right; {dup}"
        else:
            reason = f"{right}/{total} cells right"
        return SolutionScore(float(ok), ok, _cell_metrics(ok, right, total), reason)

    def empty_metrics(self, instance: ZebraInstance) -> dict[str, float]:
        # Table 8 "Missing output": Cell Acc 0, and the puzzle's cells still count (App. B.2)
        return _cell_metrics(False, 0, instance.n_houses * len(instance.attributes))

    def gold_answer(self, instance: ZebraInstance) -> dict[str, Any]:
        rows = [[str(h + 1)] + list(r) for h, r in enumerate(instance.solution)]
        return {
            "n_houses": instance.n_houses,
            "attribute_values": instance.attribute_values,
            "syntactic_clues": [f"C{i}: {f}." for i, f in enumerate(instance.clue_formulas, 1)],
            "reasoning": [],
            "solution": {"header": instance.solution_header, "rows": rows},
        }

    def gold_step_candidates(self, instance: ZebraInstance) -> list[tuple[str, str]]:
        out = []
        for h, row in enumerate(instance.solution, 1):
            for a, t in zip(instance.attributes, row):
                desc = describe_value(a, t)
                out.append((f"The clues place {desc} in house {h}.", f"{t} == {h}"))
        return out

    def gold_fallback(self, instance: ZebraInstance) -> tuple[str, str]:
        cells = [f"{t} == {h}" for h, row in enumerate(instance.solution, 1) for t in row]
        return "Together the clues fix every house.", "And(" + ", ".join(cells) + ")"

    def solution_from_model(self, model: z3.ModelRef, theory: ZebraTheory, instance: ZebraInstance) -> dict[str, Any]:
        house = {t: model.eval(v, model_completion=True).as_long() for t, v in theory.vars.items()}
        rows = [[str(h)] + [next((t for t in vs if house[t] == h), "") for vs in instance.values]
                for h in range(1, instance.n_houses + 1)]
        return {"header": instance.solution_header, "rows": rows}

    def random_answer(self, instance: ZebraInstance, rng: np.random.Generator) -> dict[str, Any]:
        ans = self.gold_answer(instance)
        cols = [list(rng.permutation(vs)) for vs in instance.values]
        ans["solution"]["rows"] = [[str(h + 1)] + [str(cols[a][h]) for a in range(len(cols))]
                                   for h in range(instance.n_houses)]
        return ans


def _worlds(size: int, houses: dict[str, np.ndarray]) -> WorldSample:
    """``size`` Zebra worlds, ``houses[t]`` the house of value t in each (no predicates)."""
    return WorldSample(size, houses.__getitem__, lambda op, a: (_ for _ in ()).throw(KeyError(op)))


def _cell_metrics(ok: bool, right: int, total: int) -> dict[str, float]:
    """Puzzle Acc and Cell Acc of one puzzle, with the counts behind Cell Acc: App. B.2 (b) sums
    right cells and cells over all puzzles, so the aggregate needs them, not the ratio."""
    return {"puzzle_acc": float(ok), "cell_acc": right / total, "cells_right": right, "cells_total": total}


def _duplicates(parsed: ZebraSolution, instance: ZebraInstance) -> str:
    """Spring's "Solver-Consistent" error (Table 8): a value placed in several houses."""
    for a, name in enumerate(instance.attributes):
        seen: dict[str, int] = {}
        for h, row in enumerate(parsed.cells, 1):
            t = row[a]
            if t is None:
                continue
            if t in seen:
                return f"{t} is assigned to houses {seen[t]} and {h} ({name} must differ between houses)"
            seen[t] = h
    return ""


ZEBRA = ZebraFamily()
