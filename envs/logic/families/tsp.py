"""Travelling Salesman, threshold variant (App. B.1, graph): on a complete weighted graph, find a
tour through every city whose total cost is at most T. Hyper-parameters: cities N, threshold T,
the (symmetric) weight matrix W.

Tours start at city 0, so a cyclic rotation is the same tour; a tour and its reverse are two (the
count says so). The encoding places cities 1..N-1 at positions 1..N-1 (one-hot); a leg between
two middle positions is an auxiliary variable that is true exactly when both placements are, so
it is determined by the placement and does not change the count. T is drawn next to the optimum
(found by enumerating the (N-1)! tours, no solver): at it or above for a satisfiable instance,
below it for an unsatisfiable one, which is where the question is hard."""
from __future__ import annotations

from dataclasses import dataclass
from itertools import permutations

from ...problem import Knobs
from ..family import LogicProblem
from ..model import BoolModel
from ..witness import format_ints, parse_ints
from .graphs import int_knob

__all__ = ["TSPKnobs", "TSPProblem", "tour_cost"]


@dataclass(frozen=True)
class TSPKnobs(Knobs):
    """``n`` cities, weights in [1, ``max_weight``]."""

    n: int = 5
    max_weight: int = 9

    def validate(self) -> None:
        int_knob("n", self.n, 3, 8)
        int_knob("max_weight", self.max_weight, 1, 1000)


def tour_cost(w: list[list[int]], tour: list[int]) -> int:
    return sum(w[tour[i]][tour[(i + 1) % len(tour)]] for i in range(len(tour)))


def _optimum(w: list[list[int]]) -> int:
    n = len(w)
    return min(tour_cost(w, [0, *p]) for p in permutations(range(1, n)))


class TSPProblem(LogicProblem):
    """TSP (threshold) as decision / solving / counting (``SolverLogic-v0(family="tsp")``)."""

    name = "tsp"
    category = "graph"
    Knobs = TSPKnobs
    levels = ({"n": 4}, {"n": 5}, {"n": 6})
    solvers = ("z3", "pysmt", "ortools")
    unfit = {"python-sat": "the tour's cost is a weighted sum, which needs python-sat's pb extra (pindakaas)",
             "sympy": "the tour's cost is a weighted sum, which has no compact form in sympy's Boolean algebra"}
    witness_noun = "a tour that starts at city 0, visits every city once, returns to city 0 and costs at most T"
    count_noun = "such tours starting at city 0 (a tour and its reverse count as two)"

    def _weights(self, knobs, rng) -> list[list[int]]:
        n = knobs.n
        w = [[0] * n for _ in range(n)]
        for i in range(n):
            for j in range(i + 1, n):
                w[i][j] = w[j][i] = int(rng.integers(1, knobs.max_weight + 1))
        return w

    def random_data(self, knobs, rng, shape=None):
        w = self._weights(knobs, rng)
        return {"weights": w, "threshold": _optimum(w) - 1 - int(rng.integers(0, 3))}

    def planted_data(self, knobs, rng, shape=None):
        w = self._weights(knobs, rng)
        return {"weights": w, "threshold": _optimum(w) + int(rng.integers(0, 3))}

    @classmethod
    def check_data(cls, data):
        if set(data) != {"weights", "threshold"}:
            raise ValueError(f"a tsp instance has the keys weights, threshold; got {sorted(data)}")
        w = data["weights"]
        if not (isinstance(w, list) and 3 <= len(w) <= 8 and all(isinstance(r, list) and len(r) == len(w) for r in w)):
            raise ValueError("weights must be an N x N matrix, 3 <= N <= 8")
        for i, row in enumerate(w):
            for j, v in enumerate(row):
                int_knob(f"weights[{i}][{j}]", v, 0 if i == j else 1, 10**6)
                if v != w[j][i] or (i == j and v):
                    raise ValueError("weights must be symmetric with a zero diagonal")
        if not isinstance(data["threshold"], int) or isinstance(data["threshold"], bool):
            raise ValueError("threshold must be an int")

    @classmethod
    def encode(cls, data):
        w = data["weights"]
        n = len(w)
        cities = range(1, n)
        names = [f"x_{c}_{p}" for c in cities for p in range(1, n)]
        legs = [(i, j, p) for p in range(1, n - 1) for i in cities for j in cities if i != j]
        m = BoolModel(names + [f"e_{i}_{j}_{p}" for i, j, p in legs])
        x = {(c, p): m.var(f"x_{c}_{p}") for c in cities for p in range(1, n)}
        for p in range(1, n):
            m.card([x[c, p] for c in cities], "==", 1)
        for c in cities:
            m.card([x[c, p] for p in range(1, n)], "==", 1)
        coefs, variables = [], []
        for i, j, p in legs:  # e <-> x_i_p and x_j_(p+1)
            e = m.var(f"e_{i}_{j}_{p}")
            m.clause([-e, x[i, p]])
            m.clause([-e, x[j, p + 1]])
            m.clause([e, -x[i, p], -x[j, p + 1]])
            coefs.append(w[i][j]), variables.append(e)
        for c in cities:  # the legs from city 0 to position 1 and from position n-1 back to 0
            coefs += [w[0][c], w[c][0]]
            variables += [x[c, 1], x[c, n - 1]]
        merged: dict[int, int] = {}
        for a, v in zip(coefs, variables):
            merged[v] = merged.get(v, 0) + a
        m.linear(list(merged.values()), list(merged), "<=", data["threshold"])
        return m

    def statement(self, data):
        w = data["weights"]
        n = len(w)
        dist = "; ".join(f"{i}-{j}: {w[i][j]}" for i in range(n) for j in range(i + 1, n))
        return (f"There are {n} cities, numbered 0 to {n - 1}; travelling between two cities costs the same either "
                f"way: {dist}. T = {data['threshold']}.")

    def mapping(self, data):
        n = len(data["weights"])
        out = {f"x_{c}_{p}": f"city {c} is the {p}-th city visited after city 0" for c in range(1, n) for p in range(1, n)}
        out.update({f"e_{i}_{j}_{p}": f"the tour goes from city {i} (position {p}) to city {j} (position {p + 1})"
                    for p in range(1, n - 1) for i in range(1, n) for j in range(1, n) if i != j})
        return out

    def describe_data(self, data):
        return {"n": len(data["weights"]), "max_weight": max(max(r) for r in data["weights"])}

    @classmethod
    def check_witness(cls, data, witness):
        n = len(data["weights"])
        if not isinstance(witness, list) or sorted(witness) != list(range(n)) or witness[0] != 0:
            return f"a tour here lists the {n} cities once each, starting with city 0"
        cost = tour_cost(data["weights"], witness)
        return None if cost <= data["threshold"] else f"the tour costs {cost}, more than T = {data['threshold']}"

    def witness_from_true(self, data, true):
        n = len(data["weights"])
        return [0] + [next((c for c in range(1, n) if f"x_{c}_{p}" in true), -1) for p in range(1, n)]

    def true_from_witness(self, data, witness):
        n = len(data["weights"])
        true = {f"x_{c}_{p}" for p, c in enumerate(witness) if p >= 1}
        return true | {f"e_{witness[p]}_{witness[p + 1]}_{p}" for p in range(1, n - 1)}

    def parse_witness(self, data, text):
        return parse_ints(text, length=len(data["weights"]))

    def format_witness(self, data, witness):
        return format_ints(witness)

    def witness_hint(self, data):
        return "```answer <the cities in the order visited, starting with 0, separated by spaces>```"

    def random_witness(self, data, rng):
        n = len(data["weights"])
        return format_ints([0, *(int(c) + 1 for c in rng.permutation(n - 1))])
