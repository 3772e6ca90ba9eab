"""Set Packing (App. B.1, integer programming): choose exactly K of the given subsets of a universe
{0, ..., U-1}, no two of which share an element. Hyper-parameters: universe size U, number of
sets M, packing size K, the set family [S_0, ..., S_{M-1}].

The family's shape is drawn before the label as for Set Cover (:mod:`.set_cover`, issue 43): the
sets' sizes and the elements' counts as even as the total T allows (every element in some set:
how many distinct elements the prompt names, and so how much the sets overlap in all, is the
same for "yes" and "no"; the label is decided by where the overlaps fall), T uniform over the
totals at which such a uniform family has K pairwise disjoint sets between 20% and 80% of the
time.

At U=10, M=8, K=3 (800 prompts, seeds 0-799; the majority class 0.50): the earlier generator drew
each element into each set with probability ``q`` = 0.35 (T about 28, where a uniform family has
a packing a third of the time), redrew a family whose K smallest sets could not be disjoint and
planted the "yes" instances, which then held fewer shared elements: a threshold on one counted
quantity predicted the label with accuracy 0.67, a ridge classifier over the counted quantities
and the words 0.70. A uniform family of even counts has 3 disjoint sets with probability 0.92
(T=24), 0.81 (25), 0.64 (26), 0.46 (27), 0.34 (28), 0.14 (29), 0.04 (30); at the window's totals
the classifiers score 0.49 and 0.51. The density is the window's, and ``q`` is no knob any more.
"""
from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations

from ..model import BoolModel
from ..witness import parse_ints
from .graphs import int_knob
from .set_cover import SetCoverKnobs, SetSelectionProblem, check_sets, chosen_sets

__all__ = ["SetPackingKnobs", "SetPackingProblem"]


@dataclass(frozen=True)
class SetPackingKnobs(SetCoverKnobs):
    """Universe of ``u`` elements, ``m`` sets, packing size ``k`` (at most ``u``: the sets are
    disjoint; SAT-RL App. B.1's U, M, K). How many elements the sets hold is drawn from the
    knobs' critical window (the module docstring)."""

    def validate(self) -> None:
        super().validate()
        int_knob("k", self.k, 2, min(self.m - 1, self.u))


class SetPackingProblem(SetSelectionProblem):
    """Set Packing as decision / solving / counting (``SolverLogic-v0(family="set-packing")``)."""

    name = "set-packing"
    category = "integer programming"
    Knobs = SetPackingKnobs
    solvers = ("z3", "pysmt", "python-sat", "ortools")
    unfit = {"sympy": "'exactly K sets' is a cardinality bound above one, which has no compact form in "
                      "sympy's Boolean algebra"}
    witness_noun = "a choice of exactly K of the sets, no two of which share an element"
    count_noun = "choices of exactly K sets (by set number, order ignored), no two of which share an element"
    more_is_sat = False

    def possible(self, knobs, sizes):
        return sum(sorted(sizes)[:knobs.k]) <= knobs.u  # K disjoint sets fit in the universe

    @classmethod
    def check_data(cls, data):
        check_sets(data, {"u", "k", "sets"}, "set-packing")

    @classmethod
    def encode(cls, data):
        sets = [set(s) for s in data["sets"]]
        m = BoolModel([f"x_{i}" for i in range(len(sets))])
        m.card(range(1, len(sets) + 1), "==", data["k"])
        for i, j in combinations(range(len(sets)), 2):
            if sets[i] & sets[j]:
                m.clause([-(i + 1), -(j + 1)])  # two sets that share an element are not both chosen
        return m

    @classmethod
    def check_witness(cls, data, witness):
        chosen = chosen_sets(data, witness)
        if isinstance(chosen, str):
            return chosen
        if len(witness) != data["k"] or len(chosen) != data["k"]:
            return f"the answer is exactly K = {data['k']} distinct set numbers"
        for i, j in combinations(sorted(chosen), 2):
            shared = set(data["sets"][i]) & set(data["sets"][j])
            if shared:
                return f"sets {i} and {j} share element {min(shared)}"
        return None

    def parse_witness(self, data, text):
        return parse_ints(text, length=data["k"])

    def witness_hint(self, data):
        return f"```answer <the {data['k']} chosen set numbers, separated by spaces>```"
