"""Set Covering (App. B.1, integer programming): choose at most K of the given subsets of a
universe {0, ..., U-1} whose union is the whole universe. Hyper-parameters: universe size U,
number of sets M, budget K, the set family [S_0, ..., S_{M-1}] (each element in each set with
probability q). A generated family leaves no element outside every set and no set empty (an
uncovered element answers "no" without a search)."""
from __future__ import annotations

from dataclasses import dataclass

from ...problem import Knobs
from ..family import LogicProblem
from ..model import BoolModel
from ..witness import format_ints, parse_ints
from .graphs import int_knob

__all__ = ["SetCoverKnobs", "SetCoverProblem", "SetSelectionProblem", "random_sets", "check_sets", "sets_text"]

#: the largest universe and family an instance read from a record may have
MAX_U, MAX_M = 30, 30


@dataclass(frozen=True)
class SetCoverKnobs(Knobs):
    """Universe of ``u`` elements, ``m`` sets, budget ``k``, element density ``q``."""

    u: int = 10
    m: int = 8
    k: int = 3
    q: float = 0.3

    def validate(self) -> None:
        int_knob("u", self.u, 2, MAX_U)
        int_knob("m", self.m, 2, MAX_M)
        int_knob("k", self.k, 2, self.m - 1)
        if not 0.0 < float(self.q) < 1.0:
            raise ValueError(f"q must be in (0, 1), got {self.q}")


def random_sets(u: int, m: int, q: float, rng) -> list[set[int]]:
    """``m`` non-empty subsets of range(u), each element in each with probability q."""
    member = rng.random((m, u)) < q
    sets = [{int(e) for e in row.nonzero()[0]} for row in member]
    for s in sets:
        if not s:
            s.add(int(rng.integers(u)))
    return sets


def check_sets(data: dict, keys: set[str], family: str) -> None:
    """The keys u, k, sets of a set family instance (``ValueError`` otherwise)."""
    if set(data) != keys:
        raise ValueError(f"a {family} instance has the keys {', '.join(sorted(keys))}; got {sorted(data)}")
    int_knob("u", data["u"], 2, MAX_U)
    sets = data["sets"]
    if not isinstance(sets, list) or not 2 <= len(sets) <= MAX_M:
        raise ValueError(f"sets must be a list of 2 to {MAX_M} sets")
    for i, s in enumerate(sets):
        if not (isinstance(s, list) and all(isinstance(e, int) and not isinstance(e, bool) for e in s)
                and s == sorted(set(s)) and all(0 <= e < data["u"] for e in s)):
            raise ValueError(f"set {i} must be a sorted list of distinct elements in [0, {data['u']})")
    int_knob("k", data["k"], 1, len(sets))


def sets_text(sets: list[list[int]]) -> str:
    return "; ".join(f"S{i} = {{{', '.join(map(str, s))}}}" for i, s in enumerate(sets))


def chosen_sets(data: dict, witness) -> set[int] | str:
    """The set numbers of an answer, or why it is not one."""
    m = len(data["sets"])
    if not isinstance(witness, list) or any(not isinstance(i, int) or not 0 <= i < m for i in witness):
        return f"the answer is a list of set numbers 0 to {m - 1}"
    return set(witness) if len(set(witness)) == len(witness) else "a set number is listed twice"


class SetSelectionProblem(LogicProblem):
    """What the two set families share: a universe, numbered sets, a choice of them as the
    witness (variable ``x_i``: set i is chosen)."""

    def selection_data(self, knobs, sets) -> dict:
        return {"u": knobs.u, "k": knobs.k, "sets": [sorted(s) for s in sets]}

    def statement(self, data):
        return (f"The universe is the elements 0 to {data['u'] - 1}. There are {len(data['sets'])} sets, numbered "
                f"0 to {len(data['sets']) - 1}: {sets_text(data['sets'])}. K = {data['k']}.")

    def mapping(self, data):
        return {f"x_{i}": f"set {i} ({{{', '.join(map(str, s))}}}) is chosen" for i, s in enumerate(data["sets"])}

    def describe_data(self, data):
        return {"u": data["u"], "m": len(data["sets"]), "k": data["k"]}

    def witness_from_true(self, data, true):
        return [i for i in range(len(data["sets"])) if f"x_{i}" in true]

    def true_from_witness(self, data, witness):
        return {f"x_{i}" for i in witness}

    def format_witness(self, data, witness):
        return format_ints(sorted(witness))


class SetCoverProblem(SetSelectionProblem):
    """Set Cover as decision / solving / counting (``SolverLogic-v0(family="set-cover")``)."""

    name = "set-cover"
    category = "integer programming"
    Knobs = SetCoverKnobs
    solvers = ("z3", "pysmt", "python-sat", "ortools")
    unfit = {"sympy": "'at most K sets' is a cardinality bound above one, which has no compact form in "
                      "sympy's Boolean algebra"}
    witness_noun = "a choice of at most K of the sets whose union is the whole universe"
    count_noun = "choices of at most K sets (by set number, order ignored) whose union is the whole universe"

    def _family(self, knobs, rng) -> list[set[int]]:
        sets = random_sets(knobs.u, knobs.m, float(knobs.q), rng)
        for e in range(knobs.u):
            if not any(e in s for s in sets):
                sets[int(rng.integers(knobs.m))].add(e)
        return sets

    def random_data(self, knobs, rng, shape=None):
        return self.selection_data(knobs, self._family(knobs, rng))

    def planted_data(self, knobs, rng, shape=None):
        sets = self._family(knobs, rng)
        chosen = [int(i) for i in rng.choice(knobs.m, size=knobs.k, replace=False)]
        for e in range(knobs.u):  # each element the chosen sets miss joins one of them
            if not any(e in sets[i] for i in chosen):
                sets[chosen[int(rng.integers(knobs.k))]].add(e)
        return self.selection_data(knobs, sets)

    @classmethod
    def check_data(cls, data):
        check_sets(data, {"u", "k", "sets"}, "set-cover")

    @classmethod
    def encode(cls, data):
        sets = data["sets"]
        m = BoolModel([f"x_{i}" for i in range(len(sets))])
        m.card(range(1, len(sets) + 1), "<=", data["k"])
        for e in range(data["u"]):
            holders = [i + 1 for i, s in enumerate(sets) if e in s]
            if holders:
                m.clause(holders)  # some chosen set holds e
            else:  # no set holds e: no choice covers it
                m.clause([1])
                m.clause([-1])
        return m

    @classmethod
    def check_witness(cls, data, witness):
        chosen = chosen_sets(data, witness)
        if isinstance(chosen, str):
            return chosen
        if len(chosen) > data["k"]:
            return f"{len(chosen)} sets are chosen, more than K = {data['k']}"
        covered = set().union(*(data["sets"][i] for i in chosen))
        missed = [e for e in range(data["u"]) if e not in covered]
        return f"element {missed[0]} is in none of the chosen sets" if missed else None

    def parse_witness(self, data, text):
        return parse_ints(text)

    def witness_hint(self, data):
        return "```answer <the chosen set numbers, separated by spaces>```"

    def random_witness(self, data, rng):
        size = int(rng.integers(1, data["k"] + 1))
        return format_ints(sorted(int(i) for i in rng.choice(len(data["sets"]), size=size, replace=False)))
