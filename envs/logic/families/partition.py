"""Partition (App. B.1, integer programming): split positive integers into two groups of equal
sum, i.e. find a subset summing to half the total (the implied target). Hyper-parameters: items
N, the array. Counting counts subsets: a split and its mirror (the other group) are two.

Issue 43: the decision's answer must not be readable off the prompt's surface. With N values
uniform in [1, 30] (the total made even), no instances were the draws with no split, which have
fewer small values and a larger spread, and a threshold on one counted quantity predicted the
label on 56-64% of held-out prompts (against 50%); at N = 10 every draw splits and no "no"
instance could be drawn at all (500 draws). Now an instance's **shape**
(:meth:`PartitionProblem.draw_shape`, drawn before the label) is N - 1 of its values; the last
value v is drawn uniformly from [1, max_value] (below the others' total, and of the parity that
makes the total even: an odd total is a parity argument, not a search) and put at a random place.
The N values split evenly exactly when the N - 1 can be split into two groups whose sums differ
by v, so the label is decided by which differences the shape's values reach. How many splits
reach a difference falls with it as a normal of standard deviation sqrt(sum v^2), 1.3 to 1.7
times max_value for N = 6 to 10, so by 26% to 16% from v = 1 to v = max_value: v's size barely
says whether it is reached (over 3200 instances at N = 6 no counted quantity of the prompt
correlates with the label by more than 0.032). A balanced decision needs values large enough that
a difference below max_value is reached about half the time (the critical density: 2^N splits
over differences up to the total): a difference near 0 is reached by ~2^N / (sqrt(2 pi) sd)
splits on average, which is ln 2 at max_value ~ 2^N / sqrt(N - 1): 28 for N = 6, 96 for N = 8,
340 for N = 10 (at the old 30 and N = 10 it is 7.7, and a draw without a split is about 1 in
2000). So ``max_value`` defaults to that critical value for N, and a value far from it is
refused. A shape is kept when between 20% and 80% of the values v may take split (measured with a
bitset of the reachable sums, no solver); the solving query draws v among those, the decision's
"yes" distribution.

The solving query's blind guess is subset sum's, a set of half the items uniform among those
(:meth:`.subset_sum.SubsetSumProblem.random_witness`): two groups of equal sum hold about as many
items each, and a fixed set of half the items was right on 0.120 of 400 instances at N = 6
against 0.045 for a guess uniform over all 2^N - 1 sets.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from ..model import BoolModel
from .graphs import int_knob
from .subset_sum import (MAX_ITEMS, MAX_VALUE, SHAPE_SHARE, SHAPE_TRIES, SubsetSumKnobs, SubsetSumProblem, bits_in,
                         check_density, check_values, mean_square, reachable_sums, values_text)

__all__ = ["PartitionKnobs", "PartitionProblem", "partition_density"]


def partition_density(n: int, max_value: int) -> float:
    """The mean number of splits of ``n - 1`` values uniform in [1, ``max_value``] whose sums
    differ by a given small difference of the right parity: 2^(n-1) subsets, their difference a
    normal of standard deviation sqrt((n - 1) E[v^2]) on every other integer, each split counted
    from both sides."""
    return 2.0 ** n / (math.sqrt(2 * math.pi) * math.sqrt((n - 1) * mean_square(max_value)))


@dataclass(frozen=True)
class PartitionKnobs(SubsetSumKnobs):
    """``n`` items (3 to :data:`.subset_sum.MAX_ITEMS`) with values in [1, ``max_value``].
    ``max_value`` None (the default) is the critical value for ``n`` (the N values split evenly
    for half the last values, ~2^n / sqrt(n - 1)); an explicit value must keep that chance
    between about 30% and 75%, else the knobs are refused (see the module docstring)."""

    def validate(self) -> None:
        int_knob("n", self.n, 3, MAX_ITEMS)
        if self.max_value is not None:
            int_knob("max_value", self.max_value, 2, MAX_VALUE)
        check_density("partition", self.n, self.max_value, partition_density, "the even splits of a draw number")


class PartitionProblem(SubsetSumProblem):
    """Partition as decision / solving / counting (``SolverLogic-v0(family="partition")``)."""

    name = "partition"
    Knobs = PartitionKnobs
    witness_noun = "a set of items whose values sum to exactly half the total (the rest sum to the other half)"
    count_noun = "sets of items (by item number) whose values sum to exactly half the total (a set and its complement count as two)"
    density = staticmethod(partition_density)

    # SAT-RL App. B.1: N items and the array (its total implies the target)
    def draw_shape(self, knobs, rng):
        """N - 1 values (uniform in [1, max_value]) and the last values v may take (below their
        total, of its parity), split into those with which the N values split evenly (the N - 1
        split into two groups whose sums differ by v) and the rest. Redrawn (label-free) until
        between 20% and 80% of them split."""
        top = self.max_value(knobs)
        for _ in range(SHAPE_TRIES):
            rest = [int(v) for v in rng.integers(1, top + 1, size=knobs.n - 1)]
            total = sum(rest)
            # below the others' total: a last value equal to it splits at a glance
            lasts = list(range(2 - total % 2, min(top, total - 1) + 1, 2))
            if not lasts:
                continue
            # a group of the N - 1 summing to (total - v) / 2 and the rest to (total + v) / 2
            reached = set(bits_in(reachable_sums(rest), (total - lasts[-1]) // 2, (total - lasts[0]) // 2))
            splits = [v for v in lasts if (total - v) // 2 in reached]
            if SHAPE_SHARE[0] <= len(splits) / len(lasts) <= SHAPE_SHARE[1]:
                return {"rest": rest, "lasts": lasts, "splits": splits}
        raise RuntimeError(f"{self.name}: no values at {knobs.as_dict()} of which between {SHAPE_SHARE[0]:.0%} and "
                           f"{SHAPE_SHARE[1]:.0%} of the last values split evenly in {SHAPE_TRIES} draws")

    @staticmethod
    def _place(rest: list[int], last: int, rng) -> dict:
        # at a random place: the last value is no item in particular
        at = int(rng.integers(len(rest) + 1))
        return {"values": [*rest[:at], int(last), *rest[at:]]}

    def random_data(self, knobs, rng, shape=None):
        shape = shape or self.draw_shape(knobs, rng)
        return self._place(shape["rest"], shape["lasts"][int(rng.integers(len(shape["lasts"])))], rng)

    def planted_data(self, knobs, rng, shape=None):
        shape = shape or self.draw_shape(knobs, rng)
        return self._place(shape["rest"], shape["splits"][int(rng.integers(len(shape["splits"])))], rng)

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
