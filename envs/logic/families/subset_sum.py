"""Subset Sum (App. B.1, integer programming): choose items of a list of positive integers whose
sum is exactly the target T. Hyper-parameters: items N, target T, the array (values up to
``max_value``)."""
from __future__ import annotations

from dataclasses import dataclass

from ...problem import Knobs
from ..family import LogicProblem
from ..model import BoolModel
from ..witness import format_ints, parse_ints
from .graphs import int_knob

__all__ = ["SubsetSumKnobs", "SubsetSumProblem", "values_text"]

#: the largest value an instance read from a record may hold
MAX_VALUE = 10**6


@dataclass(frozen=True)
class SubsetSumKnobs(Knobs):
    """``n`` items with values in [1, ``max_value``]."""

    n: int = 8
    max_value: int = 30

    def validate(self) -> None:
        int_knob("n", self.n, 2, 40)
        int_knob("max_value", self.max_value, 2, MAX_VALUE)


def values_text(values: list[int]) -> str:
    return ", ".join(f"item {i}: {v}" for i, v in enumerate(values))


def check_values(values, n_max: int = 40) -> None:
    if not isinstance(values, list) or not 2 <= len(values) <= n_max:
        raise ValueError(f"values must be a list of 2 to {n_max} positive ints")
    for v in values:
        int_knob("a value", v, 1, MAX_VALUE)


class SubsetSumProblem(LogicProblem):
    """Subset Sum as decision / solving / counting (``SolverLogic-v0(family="subset-sum")``)."""

    name = "subset-sum"
    category = "integer programming"
    Knobs = SubsetSumKnobs
    levels = ({"n": 6}, {"n": 8}, {"n": 10})
    solvers = ("z3", "pysmt", "ortools")
    unfit = {"python-sat": "a weighted sum needs python-sat's pb extra (pindakaas), which the sandbox does not hold",
             "sympy": "a weighted sum has no compact form in sympy's Boolean algebra"}
    witness_noun = "a set of items whose values sum to exactly T"
    count_noun = "sets of items (by item number) whose values sum to exactly T"

    def random_data(self, knobs, rng, shape=None):
        values = [int(v) for v in rng.integers(1, knobs.max_value + 1, size=knobs.n)]
        return {"values": values, "target": int(rng.integers(1, sum(values) + 1))}

    def planted_data(self, knobs, rng, shape=None):
        values = [int(v) for v in rng.integers(1, knobs.max_value + 1, size=knobs.n)]
        chosen = rng.random(knobs.n) < 0.5
        chosen[int(rng.integers(knobs.n))] = True  # not empty
        return {"values": values, "target": int(sum(v for v, c in zip(values, chosen) if c))}

    @classmethod
    def check_data(cls, data):
        if set(data) != {"values", "target"}:
            raise ValueError(f"a subset-sum instance has the keys values, target; got {sorted(data)}")
        check_values(data["values"])
        int_knob("target", data["target"], 1, 40 * MAX_VALUE)

    @classmethod
    def encode(cls, data):
        values = data["values"]
        m = BoolModel([f"x_{i}" for i in range(len(values))])
        m.linear(values, range(1, len(values) + 1), "==", data["target"])
        return m

    def statement(self, data):
        return f"There are {len(data['values'])} items with these values: {values_text(data['values'])}. T = {data['target']}."

    def mapping(self, data):
        return {f"x_{i}": f"item {i} (value {v}) is chosen" for i, v in enumerate(data["values"])}

    def describe_data(self, data):
        return {"n": len(data["values"]), "max_value": max(data["values"])}

    def target(self, data) -> int:
        return data["target"]

    @classmethod
    def check_witness(cls, data, witness):
        n = len(data["values"])
        if not isinstance(witness, list) or not witness or len(set(witness)) != len(witness):
            return "the answer is a non-empty set of distinct item numbers"
        if any(not isinstance(i, int) or not 0 <= i < n for i in witness):
            return f"items are numbered 0 to {n - 1}"
        total, want = sum(data["values"][i] for i in witness), cls.target_of(data)
        return None if total == want else f"the chosen values sum to {total}, not {want}"

    @classmethod
    def target_of(cls, data) -> int:
        return data["target"]

    def witness_from_true(self, data, true):
        return [i for i in range(len(data["values"])) if f"x_{i}" in true]

    def true_from_witness(self, data, witness):
        return {f"x_{i}" for i in witness}

    def parse_witness(self, data, text):
        return parse_ints(text)

    def format_witness(self, data, witness):
        return format_ints(sorted(witness))

    def witness_hint(self, data):
        return "```answer <the chosen item numbers, separated by spaces>```"

    def random_witness(self, data, rng):
        n = len(data["values"])
        chosen = [i for i in range(n) if rng.random() < 0.5] or [int(rng.integers(n))]
        return format_ints(chosen)
