"""Travelling Salesman, threshold variant (App. B.1, graph): on a complete weighted graph, find a
tour through every city whose total cost is at most T. Hyper-parameters: cities N, threshold T,
the (symmetric) weight matrix W.

A tour is the set of its N legs: where it starts and which way it goes round do not matter (the
answer is written from city 0, either way round). The encoding has one variable per pair of
cities, true when the tour travels between them (Dantzig-Fulkerson-Johnson): every city has two
legs, no set S of 3 to N/2 cities holds |S| legs (a cycle short of the whole tour), and the legs'
weights sum to at most T. An earlier encoding placed the cities at positions (one-hot) with a
variable per leg and position; at N = 6 CP-SAT took ~28 ms per instance on it against ~4 ms on
this one (105 variables against 15), and the generator solves every draw.

Issue 43: the decision's answer must not be readable off the prompt's surface. T drawn 1-3 below
the optimum (no) or 0-2 above it (yes) let a ridge classifier over the prompt's counted
quantities and words predict the label on 72-77% of held-out prompts (against 50%). Now an
instance's **shape** (:meth:`TSPProblem.draw_shape`, drawn before its label) is the multiset of
its N(N-1)/2 weights (uniform in [1, max_weight]) and T; an instance places the weights on the
pairs of cities in a uniformly random order, the label decided by the placement alone. The
prompt's numbers, its length and its bag of words are then the same for either answer (only which
pair carries which weight differs). T is the median of the optima of 32 random placements of the
shape's weights (label-free draws, before the label), so about half the placements have a tour
within it; a multiset whose placements' optima are too alike for any T to give both answers at
least a quarter of the time is redrawn. At N = 3 there is one tour, whose cost is the sum of the
weights however they are placed, so no placement decides anything: T is that cost or one below it
by a coin there, a decision the prompt's arithmetic answers (the levels start at 4).
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from itertools import combinations, permutations
from math import factorial

import numpy as np

from ...problem import Knobs
from ..family import LogicProblem
from ..model import BoolModel
from ..witness import format_ints, parse_ints
from .graphs import int_knob

__all__ = ["TSPKnobs", "TSPProblem", "tour_cost", "optimum"]

#: random placements of a shape's weights whose optima T is the median of
_PLACEMENTS = 32
#: the least share of those placements either answer must have at the chosen T
_BOTH = 0.25
#: weight multisets tried before the knobs are declared to have none with both answers
_SHAPE_TRIES = 100
#: placements a solving draw tries for one within T (the generator redraws after them)
_PLANT_TRIES = 100


@dataclass(frozen=True)
class TSPKnobs(Knobs):
    """``n`` cities, weights in [1, ``max_weight``]; T is drawn from the weights (module
    docstring)."""

    n: int = 5
    max_weight: int = 9

    def validate(self) -> None:
        int_knob("n", self.n, 3, 8)
        int_knob("max_weight", self.max_weight, 1, 1000)


def tour_cost(w: list[list[int]], tour: list[int]) -> int:
    return sum(w[tour[i]][tour[(i + 1) % len(tour)]] for i in range(len(tour)))


@lru_cache(maxsize=None)
def _pairs(n: int) -> tuple[tuple[int, int], ...]:
    return tuple(combinations(range(n), 2))


@lru_cache(maxsize=None)
def _tours(n: int) -> np.ndarray:
    """Every tour of ``n`` cities once (from city 0, the second city below the last), as the
    indices into :func:`_pairs` of its ``n`` legs: ``(n-1)!/2`` rows (one at n = 3)."""
    index = {p: i for i, p in enumerate(_pairs(n))}
    rows = []
    for rest in permutations(range(1, n)):
        if rest[0] < rest[-1] or n == 3:
            tour = (0, *rest)
            rows.append([index[tuple(sorted((tour[i], tour[(i + 1) % n])))] for i in range(n)])
            if n == 3:
                break
    return np.array(rows, dtype=np.int64)


def _weight_vectors(weights: list[list[int]]) -> np.ndarray:
    return np.array([weights[i][j] for i, j in _pairs(len(weights))], dtype=np.int64)


def _optima(vectors: np.ndarray, n: int) -> np.ndarray:
    """The optimum tour's cost under each row of ``vectors`` (weights in :func:`_pairs` order),
    by enumerating the tours: no solver."""
    return vectors[:, _tours(n)].sum(axis=2).min(axis=1)


def optimum(weights: list[list[int]]) -> int:
    """The cheapest tour's cost (enumerated)."""
    return int(_optima(_weight_vectors(weights)[None, :], len(weights))[0])


def _matrix(n: int, vector) -> list[list[int]]:
    w = [[0] * n for _ in range(n)]
    for (i, j), v in zip(_pairs(n), vector):
        w[i][j] = w[j][i] = int(v)
    return w


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
    count_noun = "tours through every city that cost at most T (a tour and its reverse are the same tour)"

    # SAT-RL App. B.1: N cities, the weight matrix W, the threshold T
    def draw_shape(self, knobs, rng) -> dict:
        """The weights' multiset (sorted) and T, the median optimum of :data:`_PLACEMENTS` random
        placements of them (module docstring); redrawn until some T leaves either answer to at
        least :data:`_BOTH` of those placements. At n = 3 T is left to the draw (one tour)."""
        n, m = knobs.n, len(_pairs(knobs.n))
        for _ in range(_SHAPE_TRIES):
            weights = np.sort(rng.integers(1, knobs.max_weight + 1, size=m))
            if n == 3:
                return {"weights": weights.tolist(), "threshold": None}
            placements = weights[np.argsort(rng.random((_PLACEMENTS, m)), axis=1)]
            optima = _optima(placements, n)
            share = {int(t): float(np.mean(optima <= t)) for t in np.unique(optima)}
            t = min(share, key=lambda v: (abs(share[v] - 0.5), v))
            if _BOTH <= share[t] <= 1 - _BOTH:
                return {"weights": weights.tolist(), "threshold": t}
        raise RuntimeError(f"{self.name}: no weights at {knobs.as_dict()} whose placements' optima differ enough for a "
                           f"threshold to answer both yes and no in {_SHAPE_TRIES} draws; raise max_weight")

    def _place(self, knobs, rng, shape) -> tuple[np.ndarray, int]:
        vector = rng.permutation(np.array(shape["weights"], dtype=np.int64))
        if shape["threshold"] is None:  # n = 3: the one tour's cost, or one below it
            return vector, int(vector.sum()) - int(rng.integers(0, 2))
        return vector, shape["threshold"]

    def random_data(self, knobs, rng, shape=None):
        shape = shape or self.draw_shape(knobs, rng)
        vector, threshold = self._place(knobs, rng, shape)
        return {"weights": _matrix(knobs.n, vector), "threshold": threshold}

    def planted_data(self, knobs, rng, shape=None):
        """A placement of the shape's weights with a tour within T, by rejection (enumerated, no
        solver): the decision's "yes" distribution. The last draw if none in :data:`_PLANT_TRIES`
        (the generator redraws)."""
        shape = shape or self.draw_shape(knobs, rng)
        for _ in range(_PLANT_TRIES):
            vector, threshold = self._place(knobs, rng, shape)
            if shape["threshold"] is None:
                threshold = int(vector.sum())
            if _optima(vector[None, :], knobs.n)[0] <= threshold:
                break
        return {"weights": _matrix(knobs.n, vector), "threshold": threshold}

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
        m = BoolModel([f"y_{i}_{j}" for i, j in _pairs(n)])
        index = {p: k + 1 for k, p in enumerate(_pairs(n))}

        def leg(i: int, j: int) -> int:
            return index[min(i, j), max(i, j)]

        for c in range(n):  # two legs at every city
            m.card([leg(c, d) for d in range(n) if d != c], "==", 2)
        # no cycle short of the whole tour: two legs everywhere and a cycle on S (3 <= |S| <= n/2,
        # the other cycles then lie outside S) would put |S| legs inside S
        for size in range(3, n // 2 + 1):
            for s in combinations(range(n), size):
                if 2 * size < n or 0 in s:  # S and the cities outside it say the same at |S| = n/2
                    m.card([leg(i, j) for i, j in combinations(s, 2)], "<=", size - 1)
        m.linear([w[i][j] for i, j in _pairs(n)], [leg(i, j) for i, j in _pairs(n)], "<=", data["threshold"])
        return m

    def statement(self, data):
        w = data["weights"]
        n = len(w)
        dist = "; ".join(f"{i}-{j}: {w[i][j]}" for i in range(n) for j in range(i + 1, n))
        return (f"There are {n} cities, numbered 0 to {n - 1}; travelling between two cities costs the same either "
                f"way: {dist}. T = {data['threshold']}.")

    def mapping(self, data):
        return {f"y_{i}_{j}": f"the tour travels between city {i} and city {j} (either way)"
                for i, j in _pairs(len(data["weights"]))}

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
        """The tour whose legs are ``true``, from city 0 towards the lower-numbered of its two
        neighbours; a city it cannot reach is -1 (no tour: the verifier says so)."""
        n = len(data["weights"])
        near = {c: sorted(d for d in range(n) if d != c and f"y_{min(c, d)}_{max(c, d)}" in true) for c in range(n)}
        tour, seen = [0], {0}
        while len(tour) < n:
            step = [d for d in near[tour[-1]] if d not in seen]
            if not step:
                return tour + [-1] * (n - len(tour))
            tour.append(step[0])
            seen.add(step[0])
        return tour

    def true_from_witness(self, data, witness):
        n = len(witness)
        return {f"y_{min(a, b)}_{max(a, b)}" for a, b in ((witness[i], witness[(i + 1) % n]) for i in range(n))}

    def parse_witness(self, data, text):
        return parse_ints(text, length=len(data["weights"]))

    def format_witness(self, data, witness):
        return format_ints(witness)

    def witness_hint(self, data):
        return "```answer <the cities in the order visited, starting with 0, separated by spaces>```"

    def witness_space(self, data):
        """The tours, each written one way round (:meth:`random_witness` draws one uniformly)."""
        n = len(data["weights"])
        return max(1, factorial(n - 1) // 2)

    def random_witness(self, data, rng):
        """A tour uniform among the (n-1)!/2, written from city 0 towards the lower-numbered
        neighbour, as :meth:`witness_from_true` writes it."""
        n = len(data["weights"])
        rest = [int(c) + 1 for c in rng.permutation(n - 1)]
        return format_ints([0, *(rest if rest[0] < rest[-1] else rest[::-1])])
