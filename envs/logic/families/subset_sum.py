"""Subset Sum (App. B.1, integer programming): choose items of a list of positive integers whose
sum is exactly the target T. Hyper-parameters: items N, target T, the array (values up to
``max_value``).

Issue 43: the decision's answer must not be readable off the prompt's surface. Values in [1, 30]
with T uniform in [1, total] (no: T a non-sum) or the sum of a random subset (yes) let a
threshold on one counted quantity of the prompt predict the label on 61-71% of held-out prompts
and a ridge classifier over counted quantities and words on 57-87% (against 50%): where T falls
relative to the total says most of it. Now an instance's **shape**
(:meth:`SubsetSumProblem.draw_shape`, drawn before the label) is its values and a window of
targets around half their total, T +- w with w a quarter of the standard deviation of a random
subset's sum; both labels draw T uniformly from that window, so the values, and T's place
relative to them, have one distribution whatever the label. Near the middle the number of subsets
reaching a target barely changes across the window (by 3% at its edges), so whether T is reached
is a matter of the values' arithmetic, not of where T lies. That needs values large enough that a
target near the middle is reached about half the time (the *critical* density, 2^N subsets spread
over a total of ~N x max_value / 2): a target near the middle is reached by ~2^N / (sqrt(2 pi)
sd) subsets on average, which is ln 2 (reached half the time) at max_value ~ 2^(N+1) / sqrt(N):
52 for N = 6, 180 for N = 8, 645 for N = 10. At the old max_value 30 and N = 8 it is 4.1, and
fewer than 2 targets in 100 near the middle are missed. So ``max_value`` defaults to that
critical value for N, and a value far from it is refused. A shape is kept when between 20% and
80% of its window's targets are reached (measured with a bitset of the reachable sums, no
solver); the solving query draws T among the reached ones, the decision's "yes" distribution.

The solving query's blind guess (:meth:`SubsetSumProblem.random_witness`, whose expected reward
is the chance line a constant answer is held to) is a set of half the items, uniform among those.
The items are exchangeable (drawn alike, in a random order), so a given set is right with a
chance that depends on its size alone, and with T near half the total the sets that reach it hold
about half the items: a set's size and sum correlate (0.87 for uniform values), so the sizes of
the sets reaching T spread half as wide as a random set's, and a fixed set of half the items was
right 2-3 times as often as a guess uniform over all 2^N - 1 sets (0.060 of 400 instances against
0.021 at N = 6). A guess among the sets of half the items is right as often as the best fixed
set, in expectation.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from itertools import combinations
from math import comb
from typing import Any

import numpy as np

from ...problem import Knobs
from ...sat.verify import SATRL_FORMAT
from ..family import LogicProblem
from ..model import BoolModel
from ..witness import format_ints, parse_ints
from .graphs import int_knob

__all__ = ["SubsetSumKnobs", "SubsetSumProblem", "values_text", "reachable_sums", "bits_in", "critical_max_value",
           "subset_density", "check_density", "mean_square", "guess_sizes", "DENSITY_RANGE", "MAX_ITEMS", "SHAPE_SHARE",
           "SHAPE_TRIES"]

#: the largest value an instance read from a record may hold
MAX_VALUE = 10**6
#: the most items a knob setting asks for: at the critical density counting the subsets that
#: reach T takes CP-SAT ~25 ms at 18 items and ~2.5x that for every two more (the old bound, 40
#: items of values up to 30, was a dense instance every subset sum of which was reached)
MAX_ITEMS = 18
#: the mean number of subsets reaching a target near the middle (:func:`subset_density`) a knob
#: setting may give: outside it the targets near the middle are almost all reached or almost all
#: missed, and no window gives both answers often (a reached share of 30% to 75% on average)
DENSITY_RANGE = (0.35, 1.4)
#: the density the default ``max_value`` aims at: a target near the middle reached half the time
_CRITICAL = math.log(2)
#: the window's half-width, in standard deviations of a random subset's sum
_WINDOW = 0.25
#: the reached share of a window a shape must have, so both answers are met in a few draws
SHAPE_SHARE = (0.2, 0.8)
#: value draws before a knob setting is declared to have no shape with both answers
SHAPE_TRIES = 200


def mean_square(max_value: int) -> float:
    """E[v^2] for v uniform in [1, max_value]."""
    return (max_value + 1) * (2 * max_value + 1) / 6


def subset_density(n: int, max_value: int) -> float:
    """The mean number of subsets of ``n`` values uniform in [1, ``max_value``] whose sum is a
    given target near half the total: 2^n spread as a normal of standard deviation
    sqrt(n E[v^2]) / 2 (each value in a random subset with chance 1/2)."""
    return 2.0 ** n / (math.sqrt(2 * math.pi) * math.sqrt(n * mean_square(max_value)) / 2)


@lru_cache(maxsize=None)
def critical_max_value(n: int, density=subset_density, target: float = _CRITICAL) -> int:
    """The ``max_value`` at which ``density(n, max_value)`` is ``target`` (the default knob:
    about 2^(n+1) / sqrt(n) for subset sum), found by bisection on the exact formula."""
    lo, hi = 1, MAX_VALUE
    if density(n, hi) > target:
        return hi
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if density(n, mid) > target else (lo, mid)
    return hi


def check_density(family: str, n: int, max_value: int | None, density, solutions: str) -> None:
    """``ValueError`` unless (n, max_value) lies in the critical window :data:`DENSITY_RANGE`
    (``max_value`` None, the critical value, always does); ``solutions`` says what ``density``
    counts, for the message."""
    if max_value is None:
        return
    d = density(n, max_value)
    if not DENSITY_RANGE[0] <= d <= DENSITY_RANGE[1]:
        lo, hi = critical_max_value(n, density, DENSITY_RANGE[1]), critical_max_value(n, density, DENSITY_RANGE[0])
        raise ValueError(f"{family} with n={n}, max_value={max_value}: {solutions} {d:.2f} on average, so nearly "
                         f"every draw there has {'one' if d > DENSITY_RANGE[1] else 'none'} and the decision has no "
                         f"balanced window; at n={n} max_value must lie in [{lo}, {hi}] "
                         f"(None: {critical_max_value(n, density)})")


@dataclass(frozen=True)
class SubsetSumKnobs(Knobs):
    """``n`` items (3 to :data:`MAX_ITEMS`) with values in [1, ``max_value``]. ``max_value``
    None (the default) is the critical value for ``n`` (:func:`critical_max_value`: a target
    near half the total is reached half the time, ~2^(n+1) / sqrt(n)); an explicit value must
    keep that chance between about 30% and 75% (:data:`DENSITY_RANGE`), else the knobs are
    refused (see the module docstring)."""

    n: int = 8
    max_value: int | None = None

    def validate(self) -> None:
        int_knob("n", self.n, 3, MAX_ITEMS)
        if self.max_value is not None:
            int_knob("max_value", self.max_value, 2, MAX_VALUE)
        check_density("subset-sum", self.n, self.max_value, subset_density,
                      "the subsets reaching a target near half the total number")


def values_text(values: list[int]) -> str:
    return ", ".join(f"item {i}: {v}" for i, v in enumerate(values))


def check_values(values, n_max: int = 40) -> None:
    if not isinstance(values, list) or not 2 <= len(values) <= n_max:
        raise ValueError(f"values must be a list of 2 to {n_max} positive ints")
    for v in values:
        int_knob("a value", v, 1, MAX_VALUE)


def reachable_sums(values) -> int:
    """The sums of the subsets of ``values`` as a bitset (bit s set: some subset sums to s; the
    empty one gives 0): the counted-once dynamic programme, with Python's big integers."""
    bits = 1
    for v in values:
        bits |= bits << int(v)
    return bits


def bits_in(bits: int, lo: int, hi: int) -> list[int]:
    """The set bits of ``bits`` in [lo, hi]."""
    seg = (bits >> lo) & ((1 << (hi - lo + 1)) - 1)
    return [lo + i for i, c in enumerate(reversed(bin(seg)[2:])) if c == "1"]


def guess_sizes(n: int) -> tuple[int, ...]:
    """The sizes of the sets the solving query's blind guess draws: half of ``n`` items (both
    halves of an odd ``n``, as many sets each)."""
    return (n // 2,) if n % 2 == 0 else (n // 2, n // 2 + 1)


@lru_cache(maxsize=None)
def _sets_of(n: int, k: int) -> np.ndarray:
    """Every ``k``-subset of range(n), one a row."""
    return np.array(list(combinations(range(n), k)), dtype=np.int64).reshape(-1, k)


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
    #: the mean number of subsets reaching a target near the middle, at given knobs
    density = staticmethod(subset_density)

    def max_value(self, knobs) -> int:
        """The knobs' ``max_value``, or the critical one for ``n`` (None)."""
        return critical_max_value(knobs.n, self.density) if knobs.max_value is None else knobs.max_value

    # SAT-RL App. B.1: N items, the array, the target T
    def draw_shape(self, knobs, rng) -> dict[str, Any]:
        """The values (N draws uniform in [1, max_value]) and the targets T may take: every target
        in half the total +- a quarter of the standard deviation of a random subset's sum, split
        into those some subset reaches and those none does. Redrawn (label-free) until between
        20% and 80% of them are reached."""
        top = self.max_value(knobs)
        for _ in range(SHAPE_TRIES):
            values = [int(v) for v in rng.integers(1, top + 1, size=knobs.n)]
            total = sum(values)
            w = max(1.0, _WINDOW * math.sqrt(sum(v * v for v in values)) / 2)
            lo, hi = math.ceil(total / 2 - w), math.floor(total / 2 + w)
            reached = bits_in(reachable_sums(values), lo, hi)
            if SHAPE_SHARE[0] <= len(reached) / (hi - lo + 1) <= SHAPE_SHARE[1]:
                return {"values": values, "lo": lo, "hi": hi, "reached": reached}
        raise RuntimeError(f"{self.name}: no values at {knobs.as_dict()} whose middle targets are reached between "
                           f"{SHAPE_SHARE[0]:.0%} and {SHAPE_SHARE[1]:.0%} of the time in {SHAPE_TRIES} draws")

    def random_data(self, knobs, rng, shape=None):
        shape = shape or self.draw_shape(knobs, rng)
        return {"values": list(shape["values"]), "target": int(rng.integers(shape["lo"], shape["hi"] + 1))}

    def planted_data(self, knobs, rng, shape=None):
        shape = shape or self.draw_shape(knobs, rng)
        # uniform among the window's reached targets: the decision's "yes" instances, exactly
        return {"values": list(shape["values"]), "target": int(rng.choice(shape["reached"]))}

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

    def witness_space(self, data):
        """The sets of half the items (:func:`guess_sizes`; :meth:`random_witness` draws one
        uniformly)."""
        n = len(data["values"])
        return sum(comb(n, k) for k in guess_sizes(n))

    def random_witness(self, data, rng):
        """A set of half the items, uniform among them (module docstring: the best blind guess)."""
        n = len(data["values"])
        sizes = guess_sizes(n)  # two sizes (odd n) hold as many sets each: a size at even odds
        size = sizes[int(rng.integers(len(sizes)))]
        return format_ints(sorted(int(i) for i in rng.choice(n, size=size, replace=False)))

    def chance_reward(self, inst):
        """The solving query's: :meth:`random_witness`'s guess is right on the sets of half the
        items that reach the target (counted here, without a solver) out of
        :meth:`witness_space`; a right set of another size is one it never draws."""
        if self.query != "solving":
            return super().chance_reward(inst)
        values, want = np.array(inst.data["values"]), self.target_of(inst.data)
        right = sum(int(np.count_nonzero(values[_sets_of(len(values), k)].sum(axis=1) == want))
                    for k in guess_sizes(len(values)))
        p = right / self.witness_space(inst.data)
        return SATRL_FORMAT + p * 1.0 + (1.0 - p) * self._correct(False)
