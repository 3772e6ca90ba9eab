"""Product mix (LP; IP with ``integer=True``): choose how much of each product to make from
limited resources to maximise profit, the textbook seed of SIRL's data (SIRL §3.1 starts from
OR-textbook cases; the paper's own example is tables and chairs).

``size`` products (1-40; 1 is drawn as 2) and 2-3 resources. Every product uses every resource, so production is
bounded and the LP is never unbounded. Side requirements: a product's upper or lower unit
limit, a minimum share of all units, "no more X than Y", a cap on total units. Pivot: a
product's standing order (the side template), small enough to keep the problem feasible or
beyond what the resources allow for that product.
"""
from __future__ import annotations

import numpy as np

from ..model import Constraint, LinearModel, Var
from .common import Family, Pivot, ceil_to, compose, decimal, fmt, integer, listing, money, names_for, pick, \
    pick_k, plural, requirements, take_pivot

THEMES = {
    "furniture": {
        "org": "the workshop",
        "intro": "A small furniture workshop makes {products}.",
        "products": ["tables", "chairs", "desks", "bookcases", "cabinets", "stools", "benches", "shelves"],
        "resources": [("wood", "board feet of wood"), ("labour", "hours of labour"),
                      ("finishing", "hours of finishing")],
        "unit": "unit",
        "period": "week",
        "places": 1,
    },
    "bakery": {
        "org": "the bakery",
        "intro": "A neighbourhood bakery bakes {products} every day.",
        "products": ["bread rolls", "cakes", "muffins", "pies", "croissants", "cookies", "baguettes", "tarts"],
        "resources": [("flour", "kg of flour"), ("oven", "minutes of oven time"), ("sugar", "kg of sugar")],
        "unit": "tray",
        "period": "day",
        "places": 1,
    },
    "electronics": {
        "org": "the factory",
        "intro": "An electronics factory assembles {products}.",
        "products": ["phones", "tablets", "laptops", "speakers", "headphones", "smartwatches", "routers",
                     "cameras"],
        "resources": [("assembly", "hours of assembly"), ("testing", "hours of testing"),
                      ("chips", "chips")],
        "unit": "unit",
        "period": "week",
        "places": 0,
    },
    "chemicals": {
        "org": "the plant",
        "intro": "A chemical plant blends {products}.",
        "products": ["cleaner A", "cleaner B", "degreaser", "polish", "solvent", "disinfectant", "wax",
                     "primer"],
        "resources": [("base", "litres of base liquid"), ("mixer", "hours on the mixer"),
                      ("additive", "kg of additive")],
        "unit": "barrel",
        "period": "week",
        "places": 1,
    },
}

ASKS = (
    "How many {unit}s of each product should {org} make each {period} to maximise its profit? "
    "Report the maximum total profit.",
    "What production plan maximises the total profit of {org} per {period}, and what is that maximum "
    "profit?",
    "Find the plan with the largest total profit. What is the largest profit {org} can earn in a {period}?",
)


def draw(rng: np.random.Generator, size: int, integer_vars: bool) -> dict:
    theme = pick(rng, sorted(THEMES))
    t = THEMES[theme]
    n_res = 2 if size <= 2 else 3
    products = names_for(pick_k(rng, t["products"], min(size, len(t["products"]))), size)
    resources = [r for r in t["resources"]][:n_res]
    places = t["places"]
    use = []
    for _ in resources:
        if places:
            use.append([decimal(rng, 0.5, 8.0, places) for _ in products])
        else:
            use.append([integer(rng, 1, 9) for _ in products])
    # Availability sized to a target of 10-40 units of each product, then rounded to tens: the
    # resources bind, so the optimum is a genuine trade-off rather than one product's bound.
    target = [integer(rng, 10, 40) for _ in products]
    available = [max(10, int(round(sum(a * x for a, x in zip(row, target)) * float(rng.uniform(0.4, 0.8)) / 10)) * 10)
                 for row in use]
    profit = [integer(rng, 5, 60) if rng.random() < 0.7 else decimal(rng, 5, 60, 1) for _ in products]
    return {
        "theme": theme,
        "org": t["org"],
        "phrasing": int(rng.integers(len(ASKS))),
        "products": products,
        "resources": [r[0] for r in resources],
        "resource_units": [r[1] for r in resources],
        "use": use,
        "available": available,
        "profit": profit,
        "integer": bool(integer_vars),
        "side": [],
    }


def _cap(data: dict, j: int) -> float:
    """The most of product ``j`` the resources allow on their own."""
    return min(b / row[j] for row, b in zip(data["use"], data["available"]))


def side(rng: np.random.Generator, data: dict) -> dict | None:
    n = len(data["products"])
    taken = {(s["kind"], s.get("product")) for s in data["side"]}
    shares = sum(s["percent"] for s in data["side"] if s["kind"] == "min_share")
    kinds = ["max_units", "min_units", "min_share", "not_more_than", "max_total"]
    for _ in range(20):
        kind = pick(rng, kinds)
        j = int(rng.integers(n))
        p = data["products"][j]
        if (kind, p) in taken:
            continue
        cap = _cap(data, j)
        if kind == "max_units":
            units = max(1, int(cap * float(rng.uniform(0.3, 0.7))))
            return {"kind": kind, "product": p, "units": units}
        if kind == "min_units":
            # at most 1/(2n) of what each resource allows: all such minima together use at most
            # half of every resource, so they never conflict with each other or with a max_units
            units = int(cap / (2 * n))
            if units < 1:
                continue
            return {"kind": kind, "product": p, "units": units}
        if kind == "min_share":
            percent = pick(rng, [10, 15, 20, 25, 30])
            if shares + percent > 90:
                continue
            return {"kind": kind, "product": p, "percent": percent}
        if kind == "not_more_than":
            other = data["products"][(j + 1 + int(rng.integers(n - 1))) % n]
            if (kind, p) in taken:
                continue
            return {"kind": kind, "product": p, "other": other}
        if kind == "max_total" and ("max_total", None) not in taken:
            total = sum(_cap(data, k) for k in range(n)) / n
            units = max(1, int(round(total * float(rng.uniform(0.5, 0.9)))))
            floor = sum(s["units"] for s in data["side"] if s["kind"] == "min_units")
            return {"kind": kind, "units": max(units, floor + 1)}
    return None


def pivot(rng: np.random.Generator, data: dict) -> Pivot | None:
    """A standing order for one product: ``ok`` as :func:`side` sizes it (at most ``1/(2n)`` of
    what the resources allow; at least 2, so that both versions read "units"), ``bad`` the next
    multiple of ten above what the resources allow for that product alone. A product that has a
    standing order already keeps it as ``ok``."""
    n = len(data["products"])
    j = int(rng.integers(n))
    p, cap = data["products"][j], _cap(data, j)
    units = int(cap / (2 * n))
    floor = units + sum(s["units"] for s in data["side"] if s["kind"] == "min_units" and s["product"] != p)
    total = next((s["units"] for s in data["side"] if s["kind"] == "max_total"), None)
    fits = units >= 2 and (total is None or floor <= total)  # the standing orders fit in the storage
    ok = {"kind": "min_units", "product": p, "units": units} if fits else None
    bad = {"kind": "min_units", "product": p, "units": ceil_to(cap + 1, 10)}
    return take_pivot(data, "min_units", ok, bad, lambda s: s["product"] == p and s["units"] >= 2)


def build(data: dict) -> LinearModel:
    products = data["products"]
    idx = {p: j for j, p in enumerate(products)}
    kind = "I" if data["integer"] else "C"
    x = [f"x{j}" for j in range(len(products))]
    variables = [Var(v, 0.0, None, kind) for v in x]
    constraints = [Constraint(f"res_{r}", {x[j]: a for j, a in enumerate(row)}, hi=b)
                   for r, (row, b) in enumerate(zip(data["use"], data["available"]))]
    items = list(data["side"]) + ([data["contradiction"]] if data.get("contradiction") else [])
    for k, s in enumerate(items):
        name = f"side{k}"
        if s["kind"] == "max_units":
            constraints.append(Constraint(name, {x[idx[s["product"]]]: 1.0}, hi=s["units"]))
        elif s["kind"] == "min_units":
            constraints.append(Constraint(name, {x[idx[s["product"]]]: 1.0}, lo=s["units"]))
        elif s["kind"] == "min_share":
            share = s["percent"] / 100
            j = idx[s["product"]]
            constraints.append(Constraint(name, {x[i]: (1.0 if i == j else 0.0) - share for i in range(len(x))}, lo=0.0))
        elif s["kind"] == "not_more_than":
            constraints.append(Constraint(name, {x[idx[s["product"]]]: 1.0, x[idx[s["other"]]]: -1.0}, hi=0.0))
        elif s["kind"] == "max_total":
            constraints.append(Constraint(name, {v: 1.0 for v in x}, hi=s["units"]))
        else:
            raise ValueError(f"unknown product_mix requirement {s['kind']!r}")
    return LinearModel("max", variables, constraints, {x[j]: float(p) for j, p in enumerate(data["profit"])})


def _sentence(s: dict, data: dict) -> str:
    unit = THEMES[data["theme"]]["unit"]
    if s["kind"] == "max_units":
        return f"At most {plural(s['units'], unit)} of {s['product']} can be sold, so no more should be made."
    if s["kind"] == "min_units":
        return f"A standing order requires at least {plural(s['units'], unit)} of {s['product']}."
    if s["kind"] == "min_share":
        return f"At least {fmt(s['percent'])}% of all {unit}s made must be {s['product']}."
    if s["kind"] == "not_more_than":
        return f"No more {unit}s of {s['product']} than of {s['other']} may be made."
    if s["kind"] == "max_total":
        return f"Storage limits total output to at most {fmt(s['units'])} {unit}s."
    raise ValueError(s["kind"])


def render(data: dict) -> str:
    t = THEMES[data["theme"]]
    unit, period = t["unit"], t["period"]
    intro = t["intro"].format(products=listing(data["products"]))
    body = []
    lines = []
    for j, p in enumerate(data["products"]):
        needs = listing([f"{fmt(row[j])} {u}" for row, u in zip(data["use"], data["resource_units"])])
        lines.append(f"Each {unit} of {p} needs {needs} and earns a profit of {money(data['profit'][j])}.")
    body.append(" ".join(lines))
    avail = listing([f"{fmt(b)} {u}" for b, u in zip(data["available"], data["resource_units"])])
    body.append(f"Each {period}, {avail} are available.")
    body.append(f"Only whole {unit}s can be made." if data["integer"]
                else f"Fractional amounts are allowed (they are averaged over the {period}).")
    ask = ASKS[data["phrasing"]].format(unit=unit, org=t["org"], period=period)
    return compose(intro, body, requirements(data, _sentence), ask, data)


FAMILY = Family("product_mix", "LP", draw, side, pivot, build, render, min_size=1, floor=2, max_size=40,
                default_integer=False, size_note="size = number of products (at least 2)")
