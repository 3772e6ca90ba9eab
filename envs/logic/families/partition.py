"""Partition (App. B.1, integer programming): split positive integers into two groups of equal
sum, i.e. find a subset summing to half the total (the implied target). Hyper-parameters: items
N, the array. Counting counts subsets: a split and its mirror (the other group) are two."""
from __future__ import annotations

from ..model import BoolModel
from .subset_sum import SubsetSumProblem, check_values, values_text

__all__ = ["PartitionProblem"]


class PartitionProblem(SubsetSumProblem):
    """Partition as decision / solving / counting (``SolverLogic-v0(family="partition")``)."""

    name = "partition"
    witness_noun = "a set of items whose values sum to exactly half the total (the rest sum to the other half)"
    count_noun = "sets of items (by item number) whose values sum to exactly half the total (a set and its complement count as two)"

    def random_data(self, knobs, rng, shape=None):
        values = [int(v) for v in rng.integers(1, knobs.max_value + 1, size=knobs.n)]
        if sum(values) % 2:  # an odd total is a parity argument, not a search: keep it even
            i = int(rng.integers(knobs.n))
            values[i] += 1 if values[i] < knobs.max_value else -1
        return {"values": values}

    def planted_data(self, knobs, rng, shape=None):
        for _ in range(100):
            values = [int(v) for v in rng.integers(1, knobs.max_value + 1, size=knobs.n - 1)]
            side = rng.random(knobs.n - 1) < 0.5
            gap = abs(sum(v for v, s in zip(values, side) if s) - sum(v for v, s in zip(values, side) if not s))
            if 1 <= gap <= knobs.max_value:  # one more item of value gap on the lighter side balances them
                values.insert(int(rng.integers(knobs.n)), gap)
                return {"values": values}
        return self.random_data(knobs, rng)

    @classmethod
    def check_data(cls, data):
        if set(data) != {"values"}:
            raise ValueError(f"a partition instance has the key values; got {sorted(data)}")
        check_values(data["values"], n_max=42)

    @classmethod
    def target_of(cls, data) -> int:
        total = sum(data["values"])
        return total // 2 if total % 2 == 0 else -1  # an odd total has no half: no set reaches -1

    @classmethod
    def encode(cls, data):
        values = data["values"]
        m = BoolModel([f"x_{i}" for i in range(len(values))])
        # 2 * (the chosen sum) == total: no solution when the total is odd
        m.linear([2 * v for v in values], range(1, len(values) + 1), "==", sum(values))
        return m

    def statement(self, data):
        return (f"There are {len(data['values'])} items with these values: {values_text(data['values'])}. "
                f"Their total is {sum(data['values'])}.")

    def describe_data(self, data):
        return {"n": len(data["values"]), "max_value": max(data["values"])}
