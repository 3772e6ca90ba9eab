"""What every problem family shares: the :class:`Family` record, seeded draws that return plain
Python numbers, and the number and list spelling of the question text.

A family is five pure functions around one ``data`` dict (SIRL §3.1 builds its problems from a
seed scenario and numbers; here the numbers are drawn):

- ``draw(rng, size, integer) -> data``: the scenario and its numbers, rounded to what the text
  prints (integers or one or two decimals), so that text and model hold the same exact numbers;
- ``side(rng, data) -> dict | None``: one extra requirement, chosen so that it keeps the problem
  feasible where the family can guarantee it (the generator discards the rare draw that is not);
- ``pivot(rng, data) -> Pivot | None``: one more requirement in two versions of the same kind and
  template, drawn together: ``ok`` keeps the problem feasible (with the side requirements drawn so
  far), ``bad`` makes it infeasible by construction (a demand above a stated capacity, and the
  like); they differ only in their numbers (or, where a kind has none, in which named items they
  name). The generator states one of them, so the wording of a prompt does not tell whether it is
  feasible (a contradiction worded its own way is a tell a policy learns in place of modelling);
- ``build(data) -> LinearModel`` and ``render(data) -> str``: the reference model and the word
  problem, both read from ``data`` alone.

``data["side"]`` holds the side requirements (a stated ``ok`` pivot is the last of them),
``data["contradiction"]`` (when present) the ``bad`` one, ``data["facts"]`` irrelevant sentences;
every number in ``data`` appears in the text as :func:`fmt` spells it, and requirements name
items by name, never by index.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np

from ..model import LinearModel

__all__ = ["Family", "Pivot", "fmt", "money", "plural", "listing", "integer", "decimal", "pick", "pick_k", "names_for",
           "check_size", "ceil_to", "compose", "requirements", "take_pivot", "FACT_TEMPLATES", "PERSON_FACT_TEMPLATES",
           "draw_facts", "TARGET_DRAWS"]


def fmt(x: float | int) -> str:
    """A number as the text prints it: integers without a decimal point, others in the shortest
    form that reads back as the same float (``2.5``, ``0.15``), so ``float(fmt(x)) == x``."""
    if isinstance(x, bool):
        raise TypeError("a bool is not a number here")
    if isinstance(x, int) or float(x).is_integer():
        return str(int(x))
    return repr(float(x))


def money(x: float | int) -> str:
    """A sum of money: ``$40``, ``$2.5``. Same digits as :func:`fmt`."""
    return f"${fmt(x)}"


def plural(n: float | int, word: str, words: str | None = None) -> str:
    """``1 unit``, ``2 units``: the number as :func:`fmt` spells it and the noun in agreement."""
    return f"{fmt(n)} {word if n == 1 else (words or word + 's')}"


def listing(words: Sequence[str], conj: str = "and") -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    words = list(words)
    if len(words) <= 1:
        return "".join(words)
    return f"{', '.join(words[:-1])} {conj} {words[-1]}"


def integer(rng: np.random.Generator, lo: int, hi: int, step: int = 1) -> int:
    """A uniform multiple of ``step`` in ``[lo, hi]`` (both multiples of ``step``), as an int."""
    return int(lo + step * int(rng.integers(0, (hi - lo) // step + 1)))


def decimal(rng: np.random.Generator, lo: float, hi: float, places: int = 1) -> float:
    """A uniform number in ``[lo, hi]`` on the grid of ``places`` decimals, as a float."""
    scale = 10 ** places
    k = int(rng.integers(round(lo * scale), round(hi * scale) + 1))
    return round(k / scale, places)


def pick(rng: np.random.Generator, seq: Sequence[Any]) -> Any:
    return seq[int(rng.integers(0, len(seq)))]


def pick_k(rng: np.random.Generator, seq: Sequence[Any], k: int) -> list:
    """``k`` distinct elements in a random order."""
    order = rng.permutation(len(seq))[:k]
    return [seq[int(i)] for i in order]


def names_for(base: Sequence[str], n: int) -> list[str]:
    """``n`` distinct names: the theme's own first, then numbered ones (``desk 2``) beyond its
    list, so that any size within the family's limit can be written out."""
    out = list(base[:n])
    k = 2
    while len(out) < n:
        out.extend(f"{b} {k}" for b in base[: n - len(out)])
        k += 1
    return out


#: draws :meth:`Family.make_data` makes for a target count before it gives up
TARGET_DRAWS = 200


def check_size(size: Any, lo: int, hi: int, family: str) -> int:
    if isinstance(size, bool) or not isinstance(size, (int, np.integer)) or not lo <= size <= hi:
        raise ValueError(f"{family}: size must be an int in {lo}..{hi}, got {size!r}")
    return int(size)


#: Irrelevant but true sentences (``irrelevant_facts``) and the range of their number: each says
#: nothing about quantities, costs or limits of the problem, so the model is unchanged.
FACT_TEMPLATES = (
    ("{Org} was founded {n} years ago.", 5, 80),
    ("{Org} has {n} parking spaces outside its main office.", 4, 60),
    ("Last year, {n} people visited the website of {org}.", 200, 5000),
    ("The manager of {org} has worked there for {n} years.", 2, 30),
    ("{Org}'s office is {n} km from the nearest airport.", 3, 90),
    ("The staff of {org} meet once a week for a {n}-minute briefing.", 10, 45),
    ("{Org} won a regional award {n} years in a row.", 2, 6),
)


#: The same for a person ("the hiker", "the investor").
PERSON_FACT_TEMPLATES = (
    ("{Org} has lived in the same town for {n} years.", 2, 40),
    ("{Org} keeps {n} houseplants at home.", 2, 25),
    ("{Org} ran a {n} km charity race last spring.", 5, 42),
    ("{Org} owns {n} books about gardening.", 3, 60),
    ("{Org} has a cousin who is {n} years old.", 6, 70),
    ("{Org} walks {n} minutes to the station every morning.", 5, 30),
)


def draw_facts(rng: np.random.Generator, org: str, k: int, person: bool = False) -> list[str]:
    """``k`` distinct irrelevant sentences about ``org`` (e.g. "the workshop"; a person such as
    "the hiker" when ``person``)."""
    out = []
    for t, lo, hi in pick_k(rng, PERSON_FACT_TEMPLATES if person else FACT_TEMPLATES, k):
        out.append(t.format(Org=org[0].upper() + org[1:], org=org, n=integer(rng, lo, hi)))
    return out


def requirements(data: dict, sentence: Callable[[dict, dict], str]) -> list[str]:
    """The sentences of the side requirements and of the contradiction, in that order."""
    items = list(data.get("side", []))
    if data.get("contradiction"):
        items.append(data["contradiction"])
    return [sentence(s, data) for s in items]


def compose(intro: str, body: Sequence[str], rules: Sequence[str], ask: str, data: dict,
            rules_lead: str = "The following requirements also apply:") -> str:
    """Paragraphs: the intro (with any irrelevant facts appended), the data sentences, the extra
    requirements as a list, and the question."""
    first = " ".join([intro, *data.get("facts", [])])
    parts = [first, *[b for b in body if b]]
    if rules:
        parts.append(rules_lead + "\n" + "\n".join(f"- {r}" for r in rules))
    parts.append(ask)
    return "\n\n".join(parts)


@dataclass(frozen=True)
class Pivot:
    """The two versions of a family's pivot requirement (see the module docstring). ``replaces``
    is the index in ``data["side"]`` of a side requirement of the same kind that the pivot takes
    the place of (``ok`` is then that requirement itself), so that a kind stated once per problem
    is not stated twice; ``None`` when the pivot is one requirement more."""

    ok: dict
    bad: dict
    replaces: int | None = None

    def __post_init__(self):
        # the same kind and the same named items or keys: only numbers and names may differ
        if self.ok.keys() != self.bad.keys() or self.ok["kind"] != self.bad["kind"]:
            raise ValueError(f"a pivot's two versions differ in shape: {self.ok} / {self.bad}")


def take_pivot(data: dict, kind: str, ok: dict | None, bad: dict | None, match: Callable[[dict], bool] | None = None
               ) -> Pivot | None:
    """A :class:`Pivot` of ``kind``: when ``data["side"]`` already holds a requirement of that
    kind (and ``match`` accepts it), that requirement is ``ok`` and the pivot replaces it;
    otherwise ``ok`` as given. ``None`` when a version is missing."""
    for k, s in enumerate(data["side"]):
        if s["kind"] == kind and (match is None or match(s)):
            return None if bad is None else Pivot(s, bad, k)
    return None if ok is None or bad is None else Pivot(ok, bad)


@dataclass(frozen=True)
class Family:
    """One problem family (see the module docstring). Calling it is the generator:
    ``family(rng, size, integer, side_constraints) -> (question, data, model)``.

    ``integer`` chooses the kind of the *quantity* variables (units made, servings, shipments,
    staff, flow, production); yes/no decisions are binary whatever it says, and a family without
    quantities (assignment, knapsack, bin packing, portfolio weights) ignores it. ``None`` is the
    family's natural kind (``default_integer``).
    """

    name: str
    kind: str
    draw: Callable[[np.random.Generator, int, bool], dict]
    side: Callable[[np.random.Generator, dict], dict | None]
    pivot: Callable[[np.random.Generator, dict], "Pivot | None"]
    build: Callable[[dict], LinearModel]
    render: Callable[[dict], str]
    min_size: int = 1
    max_size: int = 20
    default_integer: bool = False
    size_note: str = ""
    #: the smallest dimension the family draws: a smaller ``size`` is drawn at this one (one
    #: product, one asset or one agent has nothing to trade off; ``size`` 1 stays accepted so
    #: that every family takes the same knob range)
    floor: int = 1
    #: for a family whose optimum is a small count (bin packing's bins): ``size -> the counts`` its
    #: optimum is drawn uniformly from (``generate(..., counts="uniform")``), so that no count is
    #: the answer more often than a guess among them is right; ``None``: the optimum is a number
    #: no guess matches but by accident
    count_support: Callable[[int], tuple[int, ...]] | None = None
    #: with :attr:`count_support`: ``data -> its optimum`` where a bound certifies it without a
    #: solver, else ``None`` (a draw for a target count is kept only when certified to meet it)
    certified_count: Callable[[dict], int | None] | None = None

    def answer_support(self, size: int) -> tuple[int, ...] | None:
        """:attr:`count_support` at ``size`` (the knob; the family's floor applies), or ``None``."""
        if self.count_support is None:
            return None
        return self.count_support(max(check_size(size, self.min_size, self.max_size, self.name), self.floor))

    def make_data(self, rng: np.random.Generator, size: int = 3, integer: bool | None = None,
                  side_constraints: int = 0, target: int | None = None) -> dict:
        """The numbers of one problem. ``target`` (a count of :attr:`count_support`): drawn for it
        and redrawn, up to :data:`TARGET_DRAWS` times, until :attr:`certified_count` says the
        optimum is that count (side requirements included)."""
        size = check_size(size, self.min_size, self.max_size, self.name)
        if isinstance(side_constraints, bool) or not isinstance(side_constraints, (int, np.integer)) \
                or not 0 <= side_constraints <= 10:
            raise ValueError(f"side_constraints must be an int in 0..10, got {side_constraints!r}")
        if integer is not None and not isinstance(integer, (bool, np.bool_)):
            raise ValueError(f"integer must be True, False or None, got {integer!r}")
        if target is not None and (self.certified_count is None or target not in self.answer_support(size)):
            raise ValueError(f"{self.name}: no count {target!r} to draw for at size {size}")
        for _ in range(TARGET_DRAWS if target is not None else 1):
            kind = self.default_integer if integer is None else bool(integer)
            data = self.draw(rng, max(size, self.floor), kind, **({} if target is None else {"target": target}))
            data.setdefault("side", [])
            for _ in range(int(side_constraints)):
                extra = self.side(rng, data)
                if extra is None:  # the family has no further requirement that fits this data
                    break
                data["side"].append(extra)
            if target is None or self.certified_count(data) == target:
                return data
        raise ValueError(f"{self.name}: no draw with the optimum {target} in {TARGET_DRAWS} draws (size {size})")

    def finish(self, data: dict) -> tuple[str, LinearModel]:
        """The question and the validated reference model of ``data``."""
        model = self.build(data)
        model.validate()
        return self.render(data), model

    def __call__(self, rng: np.random.Generator, size: int = 3, integer: bool | None = None,
                 side_constraints: int = 0) -> tuple[str, dict, LinearModel]:
        data = self.make_data(rng, size, integer, side_constraints)
        question, model = self.finish(data)
        return question, data, model


def ceil_to(x: float, step: int) -> int:
    """``x`` rounded up to a multiple of ``step``."""
    return int(math.ceil(x / step - 1e-9) * step)
