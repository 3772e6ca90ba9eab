"""0-1 knapsack (IP, binaries): pick items of most total value within a weight or budget limit
(a textbook integer program, SIRL §3.1).

``size + 3`` items (``size`` 1-37, so 4-40 items); the limit is 30-60% of the total weight, so
the choice is never trivial. Side requirements: two items conflict, one item requires another,
an item must be taken, a cap on the number of items. Pivot: a set of items that must all be
taken, as many as the heaviest items that together exceed the limit: those (infeasible), or as
many that fit with the items that must be taken already. ``integer`` is ignored: every decision
is yes/no.
"""
from __future__ import annotations

import numpy as np

from ..model import Constraint, LinearModel, Var
from .common import Family, Pivot, compose, decimal, fmt, integer, listing, names_for, pick, pick_k, requirements

THEMES = {
    "hiking": {
        "org": "the hiker",
        "person": True,
        "items": ["a tent", "a stove", "a water filter", "a camera", "a first-aid kit", "a book", "binoculars",
                  "a rain jacket", "a fishing rod", "a hammock", "a solar charger", "a spare fleece"],
        "intro": "A hiker is packing a backpack and can choose among {items}.",
        "line": "- {Item}: {w} kg, usefulness {v} points",
        "limit": "The backpack can hold at most {c} kg.",
        "ask": "Which items should the hiker pack to maximise the total usefulness? Report the maximum total "
               "usefulness in points.",
        "weight": (0.2, 6.0, 1),
        "value": (5, 60),
    },
    "cargo": {
        "org": "the shipping firm",
        "items": ["crate A", "crate B", "crate C", "crate D", "crate E", "crate F", "crate G", "crate H",
                  "crate J", "crate K", "crate L", "crate M"],
        "intro": "A shipping firm can load some of the following crates onto a small aircraft: {items}.",
        "line": "- {Item}: {w} kg, fee ${v}",
        "limit": "The aircraft can carry at most {c} kg of cargo.",
        "ask": "Which crates should be loaded to earn the most fees, and what is the largest total fee?",
        "weight": (50, 900, 0),
        "value": (100, 2000),
    },
    "projects": {
        "org": "the city council",
        "items": ["the bike lanes", "the library upgrade", "the park renovation", "the solar roofs",
                  "the bus shelters", "the sports hall", "the street lights", "the flood barrier",
                  "the community garden", "the playground", "the museum wing", "the market hall"],
        "intro": "A city council is choosing which projects to fund from this list: {items}.",
        "line": "- {Item}: cost {w} thousand dollars, benefit {v} points",
        "limit": "The budget is {c} thousand dollars.",
        "ask": "Which projects should be funded to maximise the total benefit score? What is the maximum "
               "total benefit in points?",
        "weight": (10, 120, 0),
        "value": (5, 90),
    },
}


def draw(rng: np.random.Generator, size: int, integer_vars: bool) -> dict:
    theme = pick(rng, sorted(THEMES))
    t = THEMES[theme]
    n = size + 3
    items = names_for(pick_k(rng, t["items"], min(n, len(t["items"]))), n)
    lo, hi, places = t["weight"]
    weight = [decimal(rng, lo, hi, places) if places else integer(rng, int(lo), int(hi)) for _ in items]
    value = [integer(rng, *t["value"]) for _ in items]
    total = sum(weight)
    capacity = round(total * float(rng.uniform(0.3, 0.6)), t["weight"][2])
    capacity = max(capacity, max(weight))
    capacity = int(capacity) if not places else capacity
    return {"theme": theme, "org": t["org"], "person": t.get("person", False), "items": items, "weight": weight, "value": value,
            "capacity": capacity, "side": []}


def side(rng: np.random.Generator, data: dict) -> dict | None:
    n = len(data["items"])
    musts = [s["item"] for s in data["side"] if s["kind"] == "must"]
    pairs = {frozenset((s["item"], s["other"])) for s in data["side"] if "other" in s}
    for _ in range(30):
        kind = pick(rng, ["conflict", "requires", "must", "max_count"])
        a, b = (int(v) for v in rng.permutation(n)[:2])
        item, other = data["items"][a], data["items"][b]
        if kind in ("conflict", "requires"):
            if frozenset((item, other)) in pairs or item in musts or other in musts:
                continue
            return {"kind": kind, "item": item, "other": other}
        if kind == "must":
            w = data["weight"][a]
            if item in musts or len(musts) >= 2 or w > data["capacity"] / 3 or any(item in p for p in pairs):
                continue
            return {"kind": kind, "item": item}
        if kind == "max_count" and not any(s["kind"] == "max_count" for s in data["side"]):
            return {"kind": kind, "count": integer(rng, max(2, len(musts) + 1), max(2, n - 2))}
    return None


def pivot(rng: np.random.Generator, data: dict) -> Pivot | None:
    """Items that must all be taken. ``bad``: the heaviest items, taken until their total exceeds
    the limit; ``ok``: as many items, none in a conflict or a "requires" pair, that fit in the
    limit with the items that must be taken already and within a cap on the count (the first of
    30 random sets that does, else the lightest such items when they fit)."""
    order = sorted(range(len(data["items"])), key=lambda j: (-data["weight"][j], j))
    heavy, total = [], 0.0
    for j in order:
        heavy.append(j)
        total += data["weight"][j]
        if round(total, 6) > data["capacity"]:  # weights have at most 1 decimal
            break
    m = len(heavy)
    paired = {it for s in data["side"] if "other" in s for it in (s["item"], s["other"])}
    musts = {s["item"] for s in data["side"] if s["kind"] == "must"}
    cap = next((s["count"] for s in data["side"] if s["kind"] == "max_count"), len(data["items"]))
    free = [j for j, it in enumerate(data["items"]) if it not in paired]

    def fits(js):
        chosen = set(js) | {j for j, it in enumerate(data["items"]) if it in musts}
        return len(chosen) <= cap and round(sum(data["weight"][j] for j in chosen), 6) <= data["capacity"]

    ok = None
    for _ in range(30 if len(free) >= m else 0):
        js = sorted(free[int(v)] for v in rng.permutation(len(free))[:m])
        if fits(js):
            ok = js
            break
    light = sorted(sorted(free, key=lambda j: (data["weight"][j], j))[:m])
    if ok is None and len(light) == m and fits(light):
        ok = light
    if ok is None:
        return None
    return Pivot({"kind": "must_all", "items": [data["items"][j] for j in ok]},
                 {"kind": "must_all", "items": [data["items"][j] for j in sorted(heavy)]})


def build(data: dict) -> LinearModel:
    idx = {it: j for j, it in enumerate(data["items"])}
    x = [f"x{j}" for j in range(len(data["items"]))]
    variables = [Var(v, 0.0, 1.0, "B") for v in x]
    cons = [Constraint("capacity", {x[j]: float(w) for j, w in enumerate(data["weight"])}, hi=data["capacity"])]
    items = list(data["side"]) + ([data["contradiction"]] if data.get("contradiction") else [])
    for k, s in enumerate(items):
        name = f"side{k}"
        if s["kind"] == "conflict":
            cons.append(Constraint(name, {x[idx[s["item"]]]: 1.0, x[idx[s["other"]]]: 1.0}, hi=1.0))
        elif s["kind"] == "requires":
            cons.append(Constraint(name, {x[idx[s["item"]]]: 1.0, x[idx[s["other"]]]: -1.0}, hi=0.0))
        elif s["kind"] == "must":
            cons.append(Constraint(name, {x[idx[s["item"]]]: 1.0}, lo=1.0))
        elif s["kind"] == "max_count":
            cons.append(Constraint(name, {v: 1.0 for v in x}, hi=s["count"]))
        elif s["kind"] == "must_all":
            cons.append(Constraint(name, {x[idx[it]]: 1.0 for it in s["items"]}, lo=float(len(s["items"]))))
        else:
            raise ValueError(f"unknown knapsack requirement {s['kind']!r}")
    return LinearModel("max", variables, cons, {x[j]: float(v) for j, v in enumerate(data["value"])})


def _cap(text: str) -> str:
    return text[0].upper() + text[1:]


def _sentence(s: dict, data: dict) -> str:
    if s["kind"] == "conflict":
        return f"Choosing {s['item']} rules out choosing {s['other']}, and the other way round."
    if s["kind"] == "requires":
        return f"Choosing {s['item']} requires choosing {s['other']} as well."
    if s["kind"] == "must":
        return f"{_cap(s['item'])} must be chosen."
    if s["kind"] == "max_count":
        return f"At most {fmt(s['count'])} of them can be chosen."
    if s["kind"] == "must_all":
        return f"All of {listing(s['items'])} must be chosen."
    raise ValueError(s["kind"])


def render(data: dict) -> str:
    t = THEMES[data["theme"]]
    intro = t["intro"].format(items=listing(data["items"]))
    lines = "\n".join(t["line"].format(Item=_cap(it), w=fmt(w), v=fmt(v))
                     for it, w, v in zip(data["items"], data["weight"], data["value"]))
    body = [lines, t["limit"].format(c=fmt(data["capacity"])), "Each one can be chosen at most once."]
    return compose(intro, body, requirements(data, _sentence), t["ask"], data)


FAMILY = Family("knapsack", "IP", draw, side, pivot, build, render, min_size=1, max_size=37,
                default_integer=True, size_note="size + 3 items")
