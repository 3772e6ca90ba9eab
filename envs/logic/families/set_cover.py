"""Set Covering (App. B.1, integer programming): choose at most K of the given subsets of a
universe {0, ..., U-1} whose union is the whole universe. Hyper-parameters: universe size U,
number of sets M, budget K, the set family [S_0, ..., S_{M-1}].

What a reader counts without reading is the family's **shape** (issue 43): how many elements
each set lists and in how many sets each element appears. Both are as even as the total T of
memberships allows (each set ⌊T/M⌋ or ⌈T/M⌉ elements, each element in ⌊T/U⌋ or ⌈T/U⌉ sets, the
larger ones at random places: :func:`even_sizes`, :func:`sets_of_sizes`), so every element is in
some set and the prompt's length, its numbers and its word counts have one distribution for
"yes" and for "no"; the label is decided by how the memberships are wired. T is drawn before the
label (:meth:`SetSelectionProblem.draw_shape`), uniformly from the knobs' *critical window*: the
totals at which such a uniform family has a cover of K sets between 20% and 80% of the time
(:func:`critical_window`, measured once per knobs on a fixed seed).

The measurements behind it, at U=10, M=8, K=3 (800 prompts, seeds 0-799; the majority class 0.50):

- The earlier generator drew each element into each set with probability ``q`` = 0.3 and planted
  the "yes" instances, which then held more elements: a threshold on one counted quantity of the
  prompt predicted the label with accuracy 0.69, a ridge classifier over the counted quantities
  and the words 0.65.
- The label turns within a few memberships: a uniform family of total T has a 3-cover with
  probability 0.15 (T=25), 0.35 (26), 0.57 (27), 0.82 (28), 0.94 (29), 0.99 (31); at q = 0.3 (T
  about 24) none has one. So the density is the window's, and ``q`` is no knob any more.
- With only the set sizes fixed, the elements' counts still differed: a "no" family has its
  memberships spread less evenly (the prompt's sum of numbers had standard deviation 15.0 for
  "no", 13.2 for "yes"), and the ridge classifier scored 0.55. With both sides' counts fixed, 0.46
  (threshold 0.49): both within 0.01 of the majority class.

The solving query draws "yes" instances of the same distribution (:meth:`SetSelectionProblem.planted_data`)
and the counting query counts draws of it (a fresh shape each), so a blind answer has no density
to exploit either: the set numbers are exchangeable, and a constant choice of K sets is right
about as often as a uniformly drawn one (:meth:`SetSelectionProblem.random_witness`; 0.043 against
0.025 over 400 seeds, the best of 56 choices).
"""
from __future__ import annotations

from dataclasses import dataclass
from math import comb
from typing import Callable

import numpy as np

from ...problem import Knobs
from ..family import LogicProblem
from ..model import BoolModel, solve_count
from ..witness import format_ints, parse_ints
from .graphs import int_knob

__all__ = ["SetCoverKnobs", "SetCoverProblem", "SetSelectionProblem", "check_sets", "sets_text", "even_sizes",
           "sets_of_sizes", "critical_window", "first_true", "sat_share", "WINDOW_FLOOR", "WINDOW_LAST", "WINDOW_DRAWS"]

#: the largest universe and family an instance read from a record may have
MAX_U, MAX_M = 30, 30

#: a shape is in the critical window when a uniform draw at it has each decision label at least
#: this often (the rarer label then takes at most 5 draws on average; MAX_TRIES = 500 draws miss
#: it with probability 0.8^500, about 1e-48)
WINDOW_FLOOR = 0.2
#: where no shape reaches :data:`WINDOW_FLOOR`, the least share of the rarer label the best shape
#: may have to be a window of one (0.95^500 draws miss it: about 7e-12); below it, no window
WINDOW_LAST = 0.05
#: the draws a shape's share of satisfiable instances is estimated on
WINDOW_DRAWS = 120
#: the seed of those draws (with the shape's value and the knobs: each estimate is its own)
_WINDOW_SEED = 20261208
#: uniform draws :meth:`SetSelectionProblem.planted_data` makes before it gives up (a window's
#: share of "yes" is at least WINDOW_LAST: 0.95^400, about 1e-9, misses)
PLANT_TRIES = 400
#: (family class, knobs) -> its critical window, measured once per process
_WINDOWS: dict[tuple[type, Knobs], tuple[int, ...]] = {}


def sat_share(key: tuple, is_sat: Callable[[np.random.Generator], bool], draws: int = WINDOW_DRAWS) -> float:
    """The share of ``draws`` calls ``is_sat(rng)`` (one uniform draw at a shape and whether it is
    satisfiable) that are True, on a generator seeded by ``key`` alone (pure: an estimate does not
    depend on which shapes were looked at before it)."""
    rng = np.random.default_rng([_WINDOW_SEED, *key])
    return sum(bool(is_sat(rng)) for _ in range(draws)) / draws


def first_true(pred: Callable[[int], bool], lo: int, hi: int) -> int:
    """The least ``v`` in ``[lo, hi]`` with ``pred(v)`` (``pred`` monotone: False, then True), by
    bisection; ``hi + 1`` if none."""
    a, b = lo, hi + 1
    while a < b:
        mid = (a + b) // 2
        a, b = (a, mid) if pred(mid) else (mid + 1, b)
    return a


def critical_window(share: Callable[[int], float], lo: int, hi: int) -> tuple[int, ...]:
    """The values ``v`` in ``[lo, hi]`` at which ``share(v)``, the share of satisfiable draws
    (non-decreasing in ``v``, up to the estimate's noise), is within [:data:`WINDOW_FLOOR`,
    1 - :data:`WINDOW_FLOOR`]: the window's two ends by bisection, and every value between them
    (one whose estimate falls just outside the band by noise stays in; the rarer label must still
    reach :data:`WINDOW_LAST`). Where the share jumps over the whole band between two neighbours,
    the one whose rarer label is commoner, if that reaches :data:`WINDOW_LAST`; else empty (no
    window)."""
    seen: dict[int, float] = {}

    def s(v: int) -> float:
        if v not in seen:
            seen[v] = share(v)
        return seen[v]

    start = first_true(lambda v: s(v) >= WINDOW_FLOOR, lo, hi)
    end = first_true(lambda v: s(v) > 1.0 - WINDOW_FLOOR, lo, hi) - 1
    if start <= end:  # the ends' neighbours inside are in the band up to the estimates' noise
        return tuple(v for v in range(start, end + 1) if min(s(v), 1.0 - s(v)) >= WINDOW_LAST)
    near = [v for v in (end, start, end + 1, start - 1) if lo <= v <= hi]
    best = max(near, key=lambda v: min(s(v), 1.0 - s(v)), default=None)
    return (best,) if best is not None and min(s(best), 1.0 - s(best)) >= WINDOW_LAST else ()


def even_sizes(total: int, m: int, rng: np.random.Generator | None = None) -> tuple[int, ...]:
    """``m`` set sizes summing to ``total``, as even as can be (⌊total/m⌋ or one more), the larger
    ones at places drawn from ``rng`` (the first ones without it)."""
    base, extra = divmod(total, m)
    sizes = np.array([base + 1] * extra + [base] * (m - extra))
    return tuple(int(x) for x in (sizes if rng is None else rng.permutation(sizes)))


def sets_of_sizes(u: int, sizes: tuple[int, ...], rng: np.random.Generator) -> list[set[int]]:
    """Sets of exactly ``sizes`` over ``range(u)`` in which each element is in ⌊T/u⌋ or ⌈T/u⌉ of
    them (T = sum(sizes) >= u, so every element is in some set; the elements held once more at
    random places): what a reader can count on either side is fixed, and only the wiring is drawn.
    The configuration model: the sets' T places are dealt a random permutation of the elements'
    T places; an element dealt twice to one set then trades places with one held elsewhere, chosen
    uniformly among the trades that leave no element twice in a set (a switching: close to uniform
    over such families, and symmetric in the set numbers and in the elements)."""
    m, total = len(sizes), sum(sizes)
    if not u <= total <= u * m or max(sizes) > u:
        raise ValueError(f"{m} sets of sizes {sizes} cannot hold each of {u} elements")
    owner = np.repeat(np.arange(m), sizes)
    places = np.repeat(np.arange(u), even_sizes(total, u, rng))
    for _ in range(100):
        dealt = rng.permutation(places)
        held = np.zeros((m, u), dtype=np.int64)  # held[i, e]: how often set i was dealt element e
        np.add.at(held, (owner, dealt), 1)
        for j in np.flatnonzero(held[owner, dealt] > 1):
            i, e = owner[j], dealt[j]
            if held[i, e] < 2:
                continue  # an earlier trade took its twin away
            trades = np.flatnonzero((owner != i) & (held[i, dealt] == 0) & (held[owner, e] == 0))
            if not len(trades):
                break  # every trade makes a new double (dense sets): deal again
            t = trades[int(rng.integers(len(trades)))]
            i2, e2 = owner[t], dealt[t]
            held[i, e] -= 1
            held[i2, e2] -= 1
            held[i, e2] += 1
            held[i2, e] += 1
            dealt[j], dealt[t] = e2, e
        else:
            sets: list[set[int]] = [set() for _ in range(m)]
            for i, e in zip(*(x.tolist() for x in np.nonzero(held))):
                sets[i].add(e)
            return sets
    raise RuntimeError(f"no family of sets of sizes {sizes} holding each of {u} elements evenly")


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


@dataclass(frozen=True)
class SetCoverKnobs(Knobs):
    """Universe of ``u`` elements, ``m`` sets, budget ``k`` (SAT-RL App. B.1's U, M, K). How many
    elements the sets hold is not a knob: it is drawn from the knobs' critical window (the module
    docstring), where a cover of ``k`` sets is neither rare nor certain."""

    u: int = 10
    m: int = 8
    k: int = 3

    def validate(self) -> None:
        int_knob("u", self.u, 2, MAX_U)
        int_knob("m", self.m, 2, MAX_M)
        int_knob("k", self.k, 2, self.m - 1)


class SetSelectionProblem(LogicProblem):
    """What the two set families share: a universe, numbered sets, a choice of them as the
    witness (variable ``x_i``: set i is chosen), and the shape: the total of memberships, drawn
    from its critical window, spread as evenly as it goes over the sets and over the elements
    (module docstring)."""

    #: whether a uniform family has a solution more often the more elements its sets hold (cover:
    #: yes; packing: no)
    more_is_sat: bool = True

    # -- shape ---------------------------------------------------------------------------------------
    def possible(self, knobs, sizes: tuple[int, ...]) -> bool:
        """Whether sets of ``sizes`` can have a solution at all (else a draw's share is 0, known
        without drawing)."""
        raise NotImplementedError

    def window(self, knobs) -> tuple[int, ...]:
        """The totals of set sizes in the knobs' critical window (:func:`critical_window` over the
        totals from max(u, m), every set non-empty and every element held, to u * m), measured once
        per process on :data:`WINDOW_DRAWS` uniform draws each; ``ValueError`` where there is none."""
        key = (type(self), knobs)
        if key not in _WINDOWS:
            u, m = knobs.u, knobs.m

            def share(total: int) -> float:
                sizes = even_sizes(total, m)
                if not self.possible(knobs, sizes):
                    return 0.0 if self.more_is_sat else 1.0  # as the share of "no" below
                shape = (total,)
                p = sat_share((u, m, knobs.k, total), lambda rng: solve_count(
                    self.encode(self.random_data(knobs, rng, shape)), limit=1)[0] > 0)
                return p if self.more_is_sat else 1.0 - p

            # the window of the share of "yes" (cover) or of "no" (packing): both rise with the total
            window = critical_window(share, max(u, m), u * m)
            if not window:
                raise ValueError(f"{self.name}: no total of set sizes at {knobs.as_dict()} makes a solution neither "
                                 f"rare nor certain (every total has one in fewer than {WINDOW_LAST:.0%} or more than "
                                 f"{1 - WINDOW_LAST:.0%} of uniform draws); change u, m or k")
            _WINDOWS[key] = window
        return _WINDOWS[key]

    def draw_shape(self, knobs, rng):
        """``(total,)``: the sets' total size, uniform over the knobs' critical window; the sizes are
        :func:`even_sizes` of it, placed by each draw (so the set numbers stay exchangeable)."""
        totals = self.window(knobs)
        return (int(totals[int(rng.integers(len(totals)))]),)

    def _sizes(self, knobs, rng, shape) -> tuple[int, ...]:
        return even_sizes((shape or self.draw_shape(knobs, rng))[0], knobs.m, rng)

    def random_data(self, knobs, rng, shape=None):
        return self.selection_data(knobs, sets_of_sizes(knobs.u, self._sizes(knobs, rng, shape), rng))

    def planted_data(self, knobs, rng, shape=None):
        """A family with a solution at the shape: uniform draws at it (:meth:`random_data`) until one
        has a solution, which the window makes at least a fifth of them; so a solving instance is
        a "yes" instance of the decision's distribution. (Planting K chosen sets would wire them
        unlike the rest, and a blind answer could look for what planting leaves.)"""
        shape = shape or self.draw_shape(knobs, rng)
        for _ in range(PLANT_TRIES):
            data = self.random_data(knobs, rng, shape)
            if solve_count(self.encode(data), limit=1)[0] > 0:
                return data
        raise RuntimeError(f"{self.name}: no family with a solution at {knobs.as_dict()} (shape {shape}) in "
                           f"{PLANT_TRIES} draws")

    def selection_data(self, knobs, sets) -> dict:
        return {"u": knobs.u, "k": knobs.k, "sets": [sorted(s) for s in sets]}

    # -- text ----------------------------------------------------------------------------------------
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

    def random_witness(self, data, rng):
        """K distinct set numbers, uniformly (sorted): one of :meth:`witness_space`'s C(M, K)."""
        return format_ints(sorted(int(i) for i in rng.choice(len(data["sets"]), size=data["k"], replace=False)))

    def witness_space(self, data):
        return comb(len(data["sets"]), data["k"])


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
    more_is_sat = True

    def possible(self, knobs, sizes):
        return sum(sorted(sizes)[-knobs.k:]) >= knobs.u  # K sets hold U elements at least

    @classmethod
    def check_data(cls, data):
        check_sets(data, {"u", "k", "sets"}, "set-cover")

    @classmethod
    def encode(cls, data):
        sets = data["sets"]
        m = BoolModel([f"x_{i}" for i in range(len(sets))])
        m.card(range(1, len(sets) + 1), "<=", data["k"])
        held_by: list[list[int]] = [[] for _ in range(data["u"])]
        for i, s in enumerate(sets):
            for e in s:
                held_by[e].append(i + 1)
        for holders in held_by:
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
