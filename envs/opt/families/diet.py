"""Diet / blending (LP; IP with ``integer=True``): the cheapest mix of foods that meets nutrient
lower bounds (Stigler's diet problem, a staple of the OR textbooks SIRL's seeds come from,
SIRL §3.1).

``size`` foods (1-40; 1 is drawn as 2), 2-4 nutrients. Every food holds some of every nutrient, so any one food
can meet all needs on its own: requirements that leave one food unrestricted keep the problem
feasible. Side requirements: a food's serving cap or minimum, a food's maximum share of all
servings, a cap on total servings. Pivot: the cap on total servings (the side template), above
what one unrestricted food needs or below what any plan needs (the bound is stated in the
docstring of :func:`pivot`).
"""
from __future__ import annotations

import math

import numpy as np

from ..model import Constraint, LinearModel, Var
from .common import Family, Pivot, compose, decimal, fmt, integer, listing, money, names_for, pick, pick_k, plural, \
    requirements, take_pivot

# nutrient: (unit, low, high, decimals) of the content of one serving
THEMES = {
    "meals": {
        "org": "the dietitian",
        "person": True,
        "intro": "A dietitian is planning a daily menu from {foods}.",
        "foods": ["oatmeal", "milk", "eggs", "bread", "beans", "rice", "yoghurt", "peanut butter", "apples",
                  "chicken", "lentils", "cheese"],
        "nutrients": {"protein": ("g", 2, 25, 0), "fibre": ("g", 0.5, 8, 1), "calcium": ("mg", 20, 300, 0),
                      "iron": ("mg", 0.5, 4, 1)},
        "serving": "serving",
        "period": "day",
    },
    "feed": {
        "org": "the farm",
        "intro": "A farm mixes cattle feed from {foods}.",
        "foods": ["corn", "soybean meal", "barley", "alfalfa", "oats", "fishmeal", "wheat bran", "sorghum",
                  "canola meal", "beet pulp"],
        "nutrients": {"protein": ("g", 80, 450, 0), "fat": ("g", 10, 90, 0), "fibre": ("g", 20, 300, 0),
                      "energy": ("MJ", 8, 14, 1)},
        "serving": "kg",
        "period": "day",
    },
    "petfood": {
        "org": "the pet food company",
        "intro": "A pet food company blends a dog food recipe from {foods}, measured in portions of 100 g.",
        "foods": ["chicken", "rice", "lamb", "peas", "carrots", "salmon", "sweet potato", "beef", "barley",
                  "pumpkin"],
        "nutrients": {"protein": ("g", 2, 26, 0), "fat": ("g", 0.5, 15, 1), "fibre": ("g", 0.2, 5, 1),
                      "energy": ("kcal", 30, 250, 0)},
        "serving": "portion",
        "period": "batch",
    },
}

ASKS = (
    "What is the minimum cost per {period} of a plan that meets all the requirements?",
    "How much of each should be used to meet the requirements at the lowest cost? Report the minimum cost "
    "per {period}.",
    "Find the cheapest plan. What is its total cost per {period}?",
)


def draw(rng: np.random.Generator, size: int, integer_vars: bool) -> dict:
    theme = pick(rng, sorted(THEMES))
    t = THEMES[theme]
    foods = names_for(pick_k(rng, t["foods"], min(size, len(t["foods"]))), size)
    n_nut = 2 if size <= 2 else (3 if size <= 4 else 4)
    nutrients = pick_k(rng, sorted(t["nutrients"]), n_nut)
    content, required = [], []
    for k in nutrients:
        _, lo, hi, places = t["nutrients"][k]
        row = [decimal(rng, lo, hi, places) for _ in foods]
        content.append(row)
        # 3-8 servings' worth of an average food: several foods are worth combining
        need = float(np.mean(row)) * float(rng.uniform(3, 8))
        step = 5 if hi >= 20 else 1
        required.append(max(step, int(round(need / step)) * step))
    cost = [decimal(rng, 0.2, 3.0, 2) for _ in foods]
    return {
        "theme": theme,
        "org": t["org"],
        "person": t.get("person", False),
        "phrasing": int(rng.integers(len(ASKS))),
        "foods": foods,
        "nutrients": nutrients,
        "nutrient_units": [t["nutrients"][k][0] for k in nutrients],
        "content": content,
        "required": required,
        "cost": cost,
        "integer": bool(integer_vars),
        "side": [],
    }


def _alone(data: dict, j: int) -> float:
    """Servings of food ``j`` alone that meet every requirement."""
    return max(r / row[j] for row, r in zip(data["content"], data["required"]))


def side(rng: np.random.Generator, data: dict) -> dict | None:
    n = len(data["foods"])
    limited = {s["food"] for s in data["side"] if s["kind"] in ("max_servings", "max_share")}
    used = {(s["kind"], s.get("food")) for s in data["side"]}
    for _ in range(20):
        kind = pick(rng, ["max_servings", "min_servings", "max_share", "max_total"])
        j = int(rng.integers(n))
        food = data["foods"][j]
        if (kind, food) in used or (kind == "max_total" and (kind, None) in used):
            continue
        if kind in ("max_servings", "max_share") and food not in limited and len(limited) >= n - 1:
            continue  # keep one food unrestricted: it can meet every need alone
        if kind == "max_servings":
            return {"kind": kind, "food": food, "servings": integer(rng, 1, 4)}
        if kind == "min_servings":
            return {"kind": kind, "food": food, "servings": integer(rng, 1, 3)}
        if kind == "max_share":
            return {"kind": kind, "food": food, "percent": pick(rng, [20, 30, 40, 50])}
        if kind == "max_total":
            floor = sum(s["servings"] for s in data["side"] if s["kind"] == "min_servings")
            best = min(_alone(data, k) for k in range(n))
            return {"kind": kind, "servings": int(math.ceil(best * 1.5)) + floor}
    return None


def pivot(rng: np.random.Generator, data: dict) -> Pivot | None:
    """A cap on total servings. ``bad``: fewer than ``max_k ceil(required[k] / max_j
    content[k][j])``, since one serving gives at most ``max_j content[k][j]`` of nutrient ``k``
    (at least 2, so that both versions read in the plural); ``ok``: half as much again as the
    servings of the unrestricted food that meets every need alone with the fewest, plus the
    stated minimums (a cap already stated stays as ``ok``)."""
    need = max(math.ceil(r / max(row) - 1e-9) for row, r in zip(data["content"], data["required"]))
    bad = {"kind": "max_total", "servings": integer(rng, 2, need - 1)} if need >= 3 else None
    limited = {s["food"] for s in data["side"] if s["kind"] in ("max_servings", "max_share")}
    free = [k for k, f in enumerate(data["foods"]) if f not in limited]
    floor = sum(s["servings"] for s in data["side"] if s["kind"] == "min_servings")
    ok = None
    if free:
        ok = {"kind": "max_total", "servings": int(math.ceil(min(_alone(data, k) for k in free) * 1.5)) + floor}
    return take_pivot(data, "max_total", ok, bad)


def build(data: dict) -> LinearModel:
    idx = {f: j for j, f in enumerate(data["foods"])}
    x = [f"x{j}" for j in range(len(data["foods"]))]
    kind = "I" if data["integer"] else "C"
    variables = [Var(v, 0.0, None, kind) for v in x]
    constraints = [Constraint(f"need_{k}", {x[j]: a for j, a in enumerate(row)}, lo=r)
                   for k, (row, r) in enumerate(zip(data["content"], data["required"]))]
    items = list(data["side"]) + ([data["contradiction"]] if data.get("contradiction") else [])
    for k, s in enumerate(items):
        name = f"side{k}"
        if s["kind"] == "max_servings":
            constraints.append(Constraint(name, {x[idx[s["food"]]]: 1.0}, hi=s["servings"]))
        elif s["kind"] == "min_servings":
            constraints.append(Constraint(name, {x[idx[s["food"]]]: 1.0}, lo=s["servings"]))
        elif s["kind"] == "max_share":
            share, j = s["percent"] / 100, idx[s["food"]]
            constraints.append(Constraint(name, {x[i]: (1.0 if i == j else 0.0) - share for i in range(len(x))}, hi=0.0))
        elif s["kind"] == "max_total":
            constraints.append(Constraint(name, {v: 1.0 for v in x}, hi=s["servings"]))
        else:
            raise ValueError(f"unknown diet requirement {s['kind']!r}")
    return LinearModel("min", variables, constraints, {x[j]: c for j, c in enumerate(data["cost"])})


def _sentence(s: dict, data: dict) -> str:
    serving = THEMES[data["theme"]]["serving"]
    period = THEMES[data["theme"]]["period"]
    if s["kind"] == "max_servings":
        return f"No more than {plural(s['servings'], serving)} of {s['food']} may be used."
    if s["kind"] == "min_servings":
        return f"At least {plural(s['servings'], serving)} of {s['food']} must be used."
    if s["kind"] == "max_share":
        return f"{s['food'][0].upper() + s['food'][1:]} may make up at most {fmt(s['percent'])}% of all {serving}s used."
    if s["kind"] == "max_total":
        return f"At most {plural(s['servings'], serving)} in total may be used per {period}."
    raise ValueError(s["kind"])


def render(data: dict) -> str:
    t = THEMES[data["theme"]]
    serving, period = t["serving"], t["period"]
    intro = t["intro"].format(foods=listing(data["foods"]))
    lines = []
    for j, f in enumerate(data["foods"]):
        gives = listing([f"{fmt(row[j])} {u} of {k}" for row, u, k in
                         zip(data["content"], data["nutrient_units"], data["nutrients"])])
        lines.append(f"One {serving} of {f} costs {money(data['cost'][j])} and provides {gives}.")
    needs = listing([f"{fmt(r)} {u} of {k}" for r, u, k in zip(data["required"], data["nutrient_units"], data["nutrients"])])
    body = [" ".join(lines), f"The plan must provide at least {needs} per {period}.",
            f"Only whole {serving}s can be used." if data["integer"] else f"Fractional {serving}s are allowed."]
    ask = ASKS[data["phrasing"]].format(period=period)
    return compose(intro, body, requirements(data, _sentence), ask, data)


FAMILY = Family("diet", "LP", draw, side, pivot, build, render, min_size=1, floor=2, max_size=40,
                default_integer=False, size_note="size = number of foods (at least 2)")
