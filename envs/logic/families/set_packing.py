"""Set Packing (App. B.1, integer programming): choose exactly K of the given subsets of a universe
{0, ..., U-1}, no two of which share an element. Hyper-parameters: universe size U, number of
sets M, packing size K, the set family [S_0, ..., S_{M-1}] (each element in each set with
probability q, no set empty). A random family whose K smallest sets hold more than U elements
together is redrawn: it answers "no" by counting alone, without a search."""
from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations

from ..model import BoolModel
from ..witness import format_ints, parse_ints
from .graphs import int_knob
from .set_cover import SetCoverKnobs, SetSelectionProblem, check_sets, chosen_sets, random_sets

__all__ = ["SetPackingKnobs", "SetPackingProblem"]


@dataclass(frozen=True)
class SetPackingKnobs(SetCoverKnobs):
    """Universe of ``u`` elements, ``m`` sets, packing size ``k`` (at most ``u``: the sets are
    disjoint), element density ``q``."""

    q: float = 0.35

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

    def random_data(self, knobs, rng, shape=None):
        for _ in range(50):
            sets = random_sets(knobs.u, knobs.m, float(knobs.q), rng)
            if sum(sorted(len(s) for s in sets)[:knobs.k]) <= knobs.u:
                break
        return self.selection_data(knobs, sets)

    def planted_data(self, knobs, rng, shape=None):
        for _ in range(50):
            sets = random_sets(knobs.u, knobs.m, float(knobs.q), rng)
            chosen = [int(i) for i in rng.choice(knobs.m, size=knobs.k, replace=False)]
            for e in range(knobs.u):  # an element two chosen sets share stays in one of them
                holders = [i for i in chosen if e in sets[i]]
                for i in holders:
                    sets[i].discard(e)
                if holders:
                    sets[holders[int(rng.integers(len(holders)))]].add(e)
            free = [e for e in range(knobs.u) if not any(e in sets[i] for i in chosen)]
            for i in chosen:  # a chosen set emptied takes a free element
                if not sets[i] and free:
                    sets[i].add(free.pop(int(rng.integers(len(free)))))
            if all(sets[i] for i in chosen):
                return self.selection_data(knobs, sets)
        raise RuntimeError(f"set-packing: no planted family at {knobs.as_dict()}")

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

    def random_witness(self, data, rng):
        return format_ints(sorted(int(i) for i in rng.choice(len(data["sets"]), size=data["k"], replace=False)))
