"""Zebra (logic grid) puzzles with a unique solution, ZebraLogic-style (Spring App. A.1, E.1).

An instance has N houses in a row (house 1 is leftmost) and M attributes (``Name`` first, then
M-1 drawn from :data:`ATTRIBUTES`), each with N values; every house holds one value of every
attribute and every value is used once. The clue kinds are those of Spring App. E.1's encoding
guide, each with its formula in Spring's syntax (the ground truth the verifier compares parsed
premises with):

==================  ========================================  =================================
kind                example                                   formula
==================  ========================================  =================================
``same_house``      The tea drinker is Bob.                   ``tea == Bob``
``not_same_house``  The cat owner is not Carol.               ``cat != Carol``
``left_of``         Alice lives somewhere to the left of ...  ``Alice < cat``
``right_of``        ... somewhere to the right of ...         ``tea > dog``
``immediately_left`` Alice lives directly left of ...         ``Alice + 1 == cat``
``one_between``     There is one house between A and B.       ``Or(A + 2 == B, B + 2 == A)``
``two_between``     There are two houses between A and B.     ``Or(A + 3 == B, B + 3 == A)``
``next_to``         A and B are next to each other.           ``Or(A == B + 1, A == B - 1)``
``fixed_house``     The lawyer lives in the fifth house.      ``lawyer == 5``
==================  ========================================  =================================

"One/two houses between" is symmetric as in ZebraLogic (Spring's prompt writes it ``A + 2 == B``,
which fixes an order the sentence does not state; the prompt here asks for the ``Or``).

Generation (:func:`generate_zebra`): draw a uniform solution; encode Γ_dom as CNF (one-hot house
variables, exactly-one per value and per house) in an incremental CDCL solver (MiniSat via
python-sat) together with a "differs from the planted solution" clause behind a selector; while
another solution exists, add a random true clue that the other solution violates (so each clue
makes progress); then drop clues in random order whenever uniqueness survives without them, which
leaves a minimal (irredundant) set. Each clue sits behind its own selector literal, so every
uniqueness test is one solver call under assumptions. Pure and seeded: the env's
``numpy.random.Generator`` is the only randomness.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from pysat.solvers import Solver

from ..instance import Instance
from ..logic_steps.rand import Draws

__all__ = [
    "ATTRIBUTES",
    "SIZES",
    "BUCKETS",
    "CLUE_KINDS",
    "DEFAULT_CLUE_WEIGHTS",
    "ZebraInstance",
    "generate_zebra",
    "bucket_of",
    "clue_holds",
    "render_clue",
    "describe_value",
    "ordinal",
]

#: attribute -> (value tokens, descriptor template for a value). Tokens are unique across
#: attributes, start with a letter and use underscores, as Spring App. E.1 normalises values.
ATTRIBUTES: dict[str, tuple[list[str], str]] = {
    "Name": (["Alice", "Bob", "Carol", "Eric", "Peter", "Arnold", "Maria", "Tom", "Sofia", "David"], "{v}"),
    "Pet": (["cat", "dog", "fish", "bird", "horse", "rabbit", "hamster", "turtle"], "the person who keeps the {v}"),
    "Drink": (["tea", "coffee", "juice", "milk", "water", "soda", "lemonade"], "the person who drinks {v}"),
    "Color": (["red", "green", "blue", "yellow", "white", "purple"], "the person who lives in the {v} house"),
    "Sport": (["soccer", "tennis", "basketball", "swimming", "cycling", "baseball"], "the person who plays {v}"),
    "Food": (["pizza", "sushi", "pasta", "tacos", "curry", "salad", "soup"], "the person who loves {v}"),
    "Occupation": (["teacher", "doctor", "engineer", "artist", "lawyer", "chef", "nurse"], "the {v}"),
    "Flower": (["roses", "lilies", "tulips", "daisies", "orchids", "carnations"], "the person who grows {v}"),
    "Car": (["toyota", "ford", "bmw", "tesla", "honda", "audi"], "the person who drives a {v}"),
    "Music": (["jazz", "rock", "pop", "classical", "hip_hop", "country"], "the person who listens to {v}"),
    "Hobby": (["painting", "gardening", "chess", "reading", "hiking", "knitting"], "the person whose hobby is {v}"),
}

#: Spring App. C Table 5: puzzle sizes "N x M" (houses x attributes) and their buckets.
BUCKETS: dict[str, list[tuple[int, int]]] = {
    "Small": [(2, 2), (2, 3), (2, 4), (2, 5), (2, 6), (3, 2), (3, 3), (4, 2)],
    "Medium": [(3, 4), (3, 5), (3, 6), (4, 3), (4, 4), (5, 2), (6, 2)],
    "Large": [(4, 5), (4, 6), (5, 3), (5, 4), (6, 3)],
    "X-Large": [(5, 5), (5, 6), (6, 4), (6, 5), (6, 6)],
}
SIZES: list[tuple[int, int]] = [s for sizes in BUCKETS.values() for s in sizes]

CLUE_KINDS = ("same_house", "not_same_house", "left_of", "right_of", "immediately_left",
              "one_between", "two_between", "next_to", "fixed_house")
#: Relative frequency of each kind among added clues; fixed-house clues are rare because they
#: make puzzles easy (ZebraLogic's generator weighs them down likewise).
DEFAULT_CLUE_WEIGHTS: dict[str, float] = {
    "same_house": 0.24, "not_same_house": 0.12, "left_of": 0.09, "right_of": 0.09,
    "immediately_left": 0.12, "one_between": 0.08, "two_between": 0.06, "next_to": 0.14,
    "fixed_house": 0.06,
}

_ORDINALS = ["first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth"]


def ordinal(h: int) -> str:
    return _ORDINALS[h - 1] if 1 <= h <= len(_ORDINALS) else f"{h}th"


def bucket_of(n_houses: int, n_attributes: int) -> str | None:
    for name, sizes in BUCKETS.items():
        if (n_houses, n_attributes) in sizes:
            return name
    return None


@dataclass
class ZebraInstance(Instance):
    """A Zebra puzzle with its ground truth.

    ``values[a]`` lists attribute ``a``'s tokens in the order shown to the model (sorted, so the
    order reveals nothing); ``solution[h][a]`` is the value of attribute ``a`` in house ``h + 1``;
    ``clue_formulas[i]`` is clue ``i`` in Spring's syntax (App. E.1), ``clue_kinds[i]`` its kind.
    """

    n_houses: int
    attributes: list[str]
    values: list[list[str]]
    solution: list[list[str]]
    clues: list[str]
    clue_formulas: list[str]
    clue_kinds: list[str] = field(default_factory=list)

    @property
    def n_attributes(self) -> int:
        return len(self.attributes)

    @property
    def size(self) -> str:
        return f"{self.n_houses}x{self.n_attributes}"

    @property
    def bucket(self) -> str | None:
        return bucket_of(self.n_houses, self.n_attributes)

    @property
    def solution_header(self) -> list[str]:
        return ["House"] + list(self.attributes)

    @property
    def attribute_values(self) -> dict[str, list[str]]:
        return {a: list(v) for a, v in zip(self.attributes, self.values)}

    def houses(self) -> dict[str, int]:
        """value token -> its house (1-based) in the solution."""
        return {v: h + 1 for h, row in enumerate(self.solution) for v in row}

    def validate(self) -> None:
        n, m = self.n_houses, len(self.attributes)
        if not isinstance(n, int) or isinstance(n, bool) or not 1 <= n <= 9:
            raise ValueError(f"n_houses must be an int in 1..9, got {n!r}")
        if m < 1 or len(self.values) != m or any(len(v) != n for v in self.values):
            raise ValueError("values must list n_houses tokens for each attribute")
        tokens = [t for vs in self.values for t in vs]
        if len(set(tokens)) != len(tokens):
            raise ValueError("value tokens must be distinct across all attributes")
        for t in tokens:
            if not isinstance(t, str) or not t or not (t[0].isalpha() or t[0] == "_") or not t.replace("_", "a").isalnum():
                raise ValueError(f"value token {t!r} is not an identifier")
        if len(self.solution) != n or any(len(r) != m for r in self.solution):
            raise ValueError("solution must have n_houses rows of one value per attribute")
        for a in range(m):
            if sorted(r[a] for r in self.solution) != sorted(self.values[a]):
                raise ValueError(f"solution column {self.attributes[a]} is not a permutation of its values")
        if len(self.clues) != len(self.clue_formulas):
            raise ValueError("clues and clue_formulas differ in length")
        if self.clue_kinds and len(self.clue_kinds) != len(self.clues):
            raise ValueError("clue_kinds and clues differ in length")


# ----------------------------------------------------------------------------------- clues
def describe_value(attribute: str, token: str) -> str:
    template = ATTRIBUTES.get(attribute, ([], "the person with {v}"))[1]
    return template.format(v=token.replace("_", " "))


def _cap(s: str) -> str:
    return s[:1].upper() + s[1:]


def render_clue(kind: str, a: str, b: str | int, attr_of: dict[str, str]) -> tuple[str, str]:
    """``(sentence, formula)`` of a clue about values ``a`` and ``b`` (or house ``b``)."""
    da = describe_value(attr_of[a], a)
    if kind == "fixed_house":
        return f"{_cap(da)} lives in the {ordinal(int(b))} house.", f"{a} == {b}"
    db = describe_value(attr_of[b], b)
    if kind == "same_house":
        return f"{_cap(da)} is {db}.", f"{a} == {b}"
    if kind == "not_same_house":
        return f"{_cap(da)} is not {db}.", f"{a} != {b}"
    if kind == "left_of":
        return f"{_cap(da)} lives somewhere to the left of {db}.", f"{a} < {b}"
    if kind == "right_of":
        return f"{_cap(da)} lives somewhere to the right of {db}.", f"{a} > {b}"
    if kind == "immediately_left":
        return f"{_cap(da)} lives directly left of {db}.", f"{a} + 1 == {b}"
    if kind == "one_between":
        return f"There is one house between {da} and {db}.", f"Or({a} + 2 == {b}, {b} + 2 == {a})"
    if kind == "two_between":
        return f"There are two houses between {da} and {db}.", f"Or({a} + 3 == {b}, {b} + 3 == {a})"
    if kind == "next_to":
        return f"{_cap(da)} and {db} are next to each other.", f"Or({a} == {b} + 1, {a} == {b} - 1)"
    raise ValueError(f"unknown clue kind {kind!r}")


def clue_holds(kind: str, ha: int, hb: int) -> bool:
    """Does a clue of ``kind`` hold when its values sit in houses ``ha`` and ``hb``
    (``hb`` is the house number itself for ``fixed_house``)?"""
    if kind in ("same_house", "fixed_house"):
        return ha == hb
    if kind == "not_same_house":
        return ha != hb
    if kind == "left_of":
        return ha < hb
    if kind == "right_of":
        return ha > hb
    if kind == "immediately_left":
        return ha + 1 == hb
    if kind == "one_between":
        return abs(ha - hb) == 2
    if kind == "two_between":
        return abs(ha - hb) == 3
    if kind == "next_to":
        return abs(ha - hb) == 1
    raise ValueError(f"unknown clue kind {kind!r}")


def _clue_cnf(kind: str, a: int, b: int, n: int, x, guard: int) -> list[list[int]]:
    """Clauses of a clue (value indices ``a``, ``b``; ``b`` is a house for fixed_house),
    each extended with ``-guard`` so the clue is active only under the assumption ``guard``."""
    ng = -guard
    out: list[list[int]] = []
    houses = range(1, n + 1)
    if kind == "fixed_house":
        return [[ng, x(a, b)]]
    if kind == "same_house":
        for h in houses:
            out.append([ng, -x(a, h), x(b, h)])
            out.append([ng, -x(b, h), x(a, h)])
        return out
    if kind == "not_same_house":
        return [[ng, -x(a, h), -x(b, h)] for h in houses]
    if kind == "right_of":
        a, b, kind = b, a, "left_of"
    if kind == "left_of":
        return [[ng, -x(a, h)] + [x(b, j) for j in range(h + 1, n + 1)] for h in houses]
    if kind == "immediately_left":
        return [[ng, -x(a, h)] + ([x(b, h + 1)] if h < n else []) for h in houses]
    d = {"next_to": 1, "one_between": 2, "two_between": 3}[kind]
    return [[ng, -x(a, h)] + [x(b, j) for j in (h - d, h + d) if 1 <= j <= n] for h in houses]


def _draw_clue(draws: Draws, kinds: list[str], cum: list[float], n: int, m: int,
               table: list[list[int]]) -> tuple[str, int, int] | None:
    """A random clue true in the planted solution: ``(kind, a, b)`` over value indices
    (``b`` a house number for fixed_house). ``table[h][attr]`` is the value index in house h+1."""
    kind = kinds[draws.weighted(cum)]

    def in_house(h: int, avoid_attr: int | None = None) -> tuple[int, int]:
        attr = draws.below(m)
        if avoid_attr is not None and m > 1 and attr == avoid_attr:
            attr = (attr + 1 + draws.below(m - 1)) % m
        return table[h - 1][attr], attr

    if kind == "fixed_house":
        h = draws.between(1, n)
        return kind, in_house(h)[0], h
    if kind == "same_house":
        if m < 2:
            return None
        h = draws.between(1, n)
        a, aa = in_house(h)
        b, _ = in_house(h, avoid_attr=aa)
        return kind, a, b
    if kind in ("not_same_house", "left_of", "right_of"):
        if n < 2:
            return None
        h1 = draws.between(1, n)
        h2 = draws.between(1, n - 1)
        if h2 >= h1:
            h2 += 1
        if kind != "not_same_house" and (h1 < h2) != (kind == "left_of"):
            h1, h2 = h2, h1
        a, aa = in_house(h1)
        b, _ = in_house(h2, avoid_attr=aa if kind == "not_same_house" else None)
        return kind, a, b
    d = {"immediately_left": 1, "next_to": 1, "one_between": 2, "two_between": 3}[kind]
    if n <= d:
        return None
    h = draws.between(1, n - d)
    a, _ = in_house(h)
    b, _ = in_house(h + d)
    if kind != "immediately_left" and draws.random() < 0.5:
        a, b = b, a
    return kind, a, b


def generate_zebra(
    n_houses: int,
    n_attributes: int,
    rng: np.random.Generator | int | None,
    *,
    clue_weights: dict[str, float] | None = None,
    minimize: bool = True,
    solver: str = "m22",
) -> ZebraInstance:
    """A puzzle of ``n_houses`` x ``n_attributes`` with a unique, solver-checked solution and a
    minimal clue set (``minimize=False`` keeps every added clue)."""
    n, m = int(n_houses), int(n_attributes)
    if not 2 <= n <= 9:
        raise ValueError(f"n_houses must be in 2..9, got {n}")
    if not 1 <= m <= len(ATTRIBUTES):
        raise ValueError(f"n_attributes must be in 1..{len(ATTRIBUTES)}, got {m}")
    pools = {a: vs for a, (vs, _) in ATTRIBUTES.items()}
    if any(len(vs) < n for vs in pools.values()):
        raise ValueError(f"at most {min(len(v) for v in pools.values())} houses are supported")
    weights = dict(DEFAULT_CLUE_WEIGHTS if clue_weights is None else clue_weights)
    unknown = set(weights) - set(CLUE_KINDS)
    if unknown:
        raise ValueError(f"unknown clue kinds {sorted(unknown)}")
    kinds = [k for k in CLUE_KINDS if weights.get(k, 0) > 0]
    if not kinds:
        raise ValueError("clue_weights must give some kind a positive weight")
    cum = list(np.cumsum([weights[k] for k in kinds]))

    draws = Draws(rng)
    others = [a for a in ATTRIBUTES if a != "Name"]
    attributes = ["Name"] + sorted(draws.sample(others, m - 1), key=others.index)
    values = [sorted(draws.sample(pools[a], n)) for a in attributes]
    # value index v = attr * n + j (j: position in the sorted list); house of each value
    perm = [draws.shuffle(list(range(n))) for _ in range(m)]  # perm[a][h] = j of the value in house h+1
    table = [[a * n + perm[a][h] for a in range(m)] for h in range(n)]
    house = [0] * (n * m)
    for h in range(n):
        for v in table[h]:
            house[v] = h + 1

    def x(v: int, h: int) -> int:
        return 1 + v * n + (h - 1)

    top = n * m * n
    clauses: list[list[int]] = []
    for v in range(n * m):  # each value in exactly one house
        clauses.append([x(v, h) for h in range(1, n + 1)])
        clauses += [[-x(v, h1), -x(v, h2)] for h1 in range(1, n + 1) for h2 in range(h1 + 1, n + 1)]
    for a in range(m):  # each house holds exactly one value of each attribute
        vs = range(a * n, a * n + n)
        for h in range(1, n + 1):
            clauses.append([x(v, h) for v in vs])
            clauses += [[-x(v1, h), -x(v2, h)] for v1 in vs for v2 in vs if v1 < v2]
    differs = top + 1
    clauses.append([-differs] + [-x(v, house[v]) for v in range(n * m)])
    next_var = differs + 1

    chosen: list[tuple[str, int, int]] = []
    selectors: list[int] = []
    seen: set[tuple] = set()
    with Solver(name=solver, bootstrap_with=clauses) as s:
        while s.solve(assumptions=selectors + [differs]):
            model = s.get_model()
            alt = [0] * (n * m)
            for lit in model:
                if 0 < lit <= top:
                    alt[(lit - 1) // n] = (lit - 1) % n + 1
            for _ in range(10_000):
                clue = _draw_clue(draws, kinds, cum, n, m, table)
                if clue is None:
                    continue
                kind, a, b = clue
                key = (kind, min(a, b), max(a, b)) if kind in ("same_house", "not_same_house", "next_to",
                                                               "one_between", "two_between") else clue
                if key in seen:
                    continue
                hb = b if kind == "fixed_house" else alt[b]
                if clue_holds(kind, alt[a], hb):
                    continue  # the other solution satisfies it: no progress
                break
            else:  # pragma: no cover - every other solution violates some true fixed-house clue
                raise RuntimeError("no clue separates the planted solution from another one")
            seen.add(key)
            sel = next_var
            next_var += 1
            for c in _clue_cnf(kind, a, b, n, x, sel):
                s.add_clause(c)
            chosen.append(clue)
            selectors.append(sel)
        if minimize:
            keep = list(range(len(chosen)))
            for i in draws.shuffle(list(range(len(chosen)))):
                trial = [selectors[j] for j in keep if j != i]
                if not s.solve(assumptions=trial + [differs]):
                    keep.remove(i)
            chosen = [chosen[j] for j in sorted(keep)]
    chosen = draws.shuffle(chosen)

    token = [values[v // n][v % n] for v in range(n * m)]
    attr_of = {token[v]: attributes[v // n] for v in range(n * m)}
    clues, formulas, kinds_out = [], [], []
    for kind, a, b in chosen:
        sentence, formula = render_clue(kind, token[a], b if kind == "fixed_house" else token[b], attr_of)
        clues.append(sentence)
        formulas.append(formula)
        kinds_out.append(kind)
    solution = [[token[v] for v in table[h]] for h in range(n)]
    return ZebraInstance(n_houses=n, attributes=attributes, values=values, solution=solution,
                         clues=clues, clue_formulas=formulas, clue_kinds=kinds_out)


def puzzle_text(instance: ZebraInstance) -> str:
    """The puzzle in natural language (what ZebraLogic calls ``puzzle_text``)."""
    n = instance.n_houses
    lines = [
        f"There are {n} houses, numbered 1 to {n} from left to right. Each house is occupied by a "
        "different person, and each house has one value of each attribute below; every value is "
        "used exactly once.",
    ]
    for a, vs in zip(instance.attributes, instance.values):
        lines.append(f"- {a}: {', '.join(v.replace('_', ' ') for v in vs)}")
    lines.append("")
    lines.append("Clues:")
    lines += [f"{i}. {c}" for i, c in enumerate(instance.clues, 1)]
    return "\n".join(lines)
