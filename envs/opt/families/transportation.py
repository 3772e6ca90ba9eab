"""Transportation (LP; IP with ``integer=True``, which has the same optimum: the constraint
matrix is totally unimodular and the data are integers): ship from supply points to demand
points at least cost (a textbook staple, SIRL §3.1).

``size`` sources (1-30; 1 is drawn as 2) and ``size + 1`` destinations. Total supply exceeds total demand by
10-40%, so the plain problem is feasible. Side requirements: a route's capacity, a closed route,
a source's minimum shipment (a contract), an exact delivery to one destination. Pivot: a
source's contract (the side template), for at most half its supply or for more than it has.
"""
from __future__ import annotations

import numpy as np

from ..model import Constraint, LinearModel, Var
from .common import Family, Pivot, compose, decimal, fmt, integer, listing, money, names_for, pick, requirements, \
    take_pivot

THEMES = {
    "retail": {
        "org": "the retailer",
        "sources": ["Warehouse North", "Warehouse South", "Warehouse East", "Warehouse West", "Warehouse Central"],
        "sinks": ["Store Alpha", "Store Beta", "Store Gamma", "Store Delta", "Store Epsilon", "Store Zeta"],
        "unit": "pallet",
        "intro": "A retailer ships goods from its warehouses ({sources}) to its stores ({sinks}).",
        "step": 5,
    },
    "cement": {
        "org": "the cement company",
        "sources": ["Plant Avon", "Plant Brook", "Plant Clyde", "Plant Dee", "Plant Esk"],
        "sinks": ["Site 1", "Site 2", "Site 3", "Site 4", "Site 5", "Site 6"],
        "unit": "tonne",
        "intro": "A cement company supplies construction sites ({sinks}) from its plants ({sources}).",
        "step": 10,
    },
    "produce": {
        "org": "the cooperative",
        "sources": ["Green Farm", "Hill Farm", "River Farm", "Oak Farm", "Sunny Farm"],
        "sinks": ["the Main Street market", "the Harbour market", "the Station market", "the Park market",
                  "the Castle market", "the Bridge market"],
        "unit": "crate",
        "intro": "A farming cooperative sends crates of fruit from {sources} to {sinks}.",
        "step": 5,
    },
}

ASKS = (
    "How many {unit}s should be sent on each route to meet every demand at the lowest total shipping cost? "
    "Report the minimum cost.",
    "What is the minimum total transportation cost?",
    "Find the cheapest shipping plan. What does it cost in total?",
)


def draw(rng: np.random.Generator, size: int, integer_vars: bool) -> dict:
    theme = pick(rng, sorted(THEMES))
    t = THEMES[theme]
    sources = names_for(t["sources"], size)
    sinks = names_for(t["sinks"], size + 1)
    step = t["step"]
    demand = [integer(rng, 4 * step, 30 * step, step) for _ in sinks]
    total = sum(demand) * float(rng.uniform(1.1, 1.4))
    weights = rng.uniform(0.5, 1.5, len(sources))
    supply = [max(step, int(round(total * w / weights.sum() / step)) * step) for w in weights]
    while sum(supply) < sum(demand):  # rounding may fall short; top up the first source
        supply[0] += step
    cost = [[decimal(rng, 1, 20, 1) if rng.random() < 0.3 else integer(rng, 1, 20) for _ in sinks] for _ in sources]
    return {
        "theme": theme,
        "org": t["org"],
        "phrasing": int(rng.integers(len(ASKS))),
        "sources": sources,
        "sinks": sinks,
        "supply": supply,
        "demand": demand,
        "cost": cost,
        "integer": bool(integer_vars),
        "side": [],
    }


def side(rng: np.random.Generator, data: dict) -> dict | None:
    used = {(s["kind"], s.get("source"), s.get("sink")) for s in data["side"]}
    spare = sum(data["supply"]) - sum(data["demand"])
    for _ in range(20):
        kind = pick(rng, ["route_cap", "closed", "min_from", "exact"])
        i = int(rng.integers(len(data["sources"])))
        j = int(rng.integers(len(data["sinks"])))
        src, dst = data["sources"][i], data["sinks"][j]
        if kind == "route_cap" and (kind, src, dst) not in used and ("closed", src, dst) not in used:
            return {"kind": kind, "source": src, "sink": dst,
                    "units": max(1, int(data["demand"][j] * float(rng.uniform(0.3, 0.7))))}
        if kind == "closed" and ("closed", src, dst) not in used and ("route_cap", src, dst) not in used:
            return {"kind": kind, "source": src, "sink": dst}
        if kind == "min_from" and (kind, src, None) not in used:
            # at most half the source's supply: always possible, demand rows are "at least"
            return {"kind": kind, "source": src, "units": max(1, int(data["supply"][i] * float(rng.uniform(0.2, 0.5))))}
        if kind == "exact" and (kind, None, dst) not in used and spare > 0:
            return {"kind": kind, "sink": dst}
    return None


def pivot(rng: np.random.Generator, data: dict) -> Pivot | None:
    """A contract for one source: ``ok`` 20-50% of its supply (as :func:`side` draws it; a
    contract the source has already stays as ``ok``), ``bad`` 10-50 units more than its supply."""
    i = int(rng.integers(len(data["sources"])))
    src, supply = data["sources"][i], data["supply"][i]
    ok = {"kind": "min_from", "source": src, "units": max(1, int(supply * float(rng.uniform(0.2, 0.5))))}
    bad = {"kind": "min_from", "source": src, "units": supply + integer(rng, 1, 5) * 10}
    return take_pivot(data, "min_from", ok, bad, lambda s: s["source"] == src)


def build(data: dict) -> LinearModel:
    m, n = len(data["sources"]), len(data["sinks"])
    si = {s: i for i, s in enumerate(data["sources"])}
    dj = {s: j for j, s in enumerate(data["sinks"])}
    kind = "I" if data["integer"] else "C"
    x = [[f"x_{i}_{j}" for j in range(n)] for i in range(m)]
    variables = [Var(x[i][j], 0.0, None, kind) for i in range(m) for j in range(n)]
    cons = [Constraint(f"supply_{i}", {x[i][j]: 1.0 for j in range(n)}, hi=data["supply"][i]) for i in range(m)]
    exact = {s["sink"] for s in data["side"] if s["kind"] == "exact"}
    cons += [Constraint(f"demand_{j}", {x[i][j]: 1.0 for i in range(m)}, lo=data["demand"][j],
                        hi=data["demand"][j] if data["sinks"][j] in exact else None) for j in range(n)]
    items = list(data["side"]) + ([data["contradiction"]] if data.get("contradiction") else [])
    for k, s in enumerate(items):
        name = f"side{k}"
        if s["kind"] == "route_cap":
            cons.append(Constraint(name, {x[si[s["source"]]][dj[s["sink"]]]: 1.0}, hi=s["units"]))
        elif s["kind"] == "closed":
            cons.append(Constraint(name, {x[si[s["source"]]][dj[s["sink"]]]: 1.0}, hi=0.0))
        elif s["kind"] == "min_from":
            i = si[s["source"]]
            cons.append(Constraint(name, {x[i][j]: 1.0 for j in range(n)}, lo=s["units"]))
        elif s["kind"] == "exact":
            pass  # folded into the demand row above (an equation rather than a lower bound)
        else:
            raise ValueError(f"unknown transportation requirement {s['kind']!r}")
    objective = {x[i][j]: float(data["cost"][i][j]) for i in range(m) for j in range(n)}
    return LinearModel("min", variables, cons, objective)


def _sentence(s: dict, data: dict) -> str:
    unit = THEMES[data["theme"]]["unit"]
    if s["kind"] == "route_cap":
        return f"At most {fmt(s['units'])} {unit}s can travel from {s['source']} to {s['sink']}."
    if s["kind"] == "closed":
        return f"The route from {s['source']} to {s['sink']} is closed."
    if s["kind"] == "min_from":
        return f"Under its contract, {s['source']} must ship at least {fmt(s['units'])} {unit}s in total."
    if s["kind"] == "exact":
        return f"{s['sink'][0].upper() + s['sink'][1:]} has no storage space and must receive exactly its demand."
    raise ValueError(s["kind"])


def render(data: dict) -> str:
    t = THEMES[data["theme"]]
    unit = t["unit"]
    intro = t["intro"].format(sources=listing(data["sources"]), sinks=listing(data["sinks"]))
    supply = " ".join(f"{s} has {fmt(q)} {unit}s available." for s, q in zip(data["sources"], data["supply"]))
    demand = " ".join(f"{d[0].upper() + d[1:]} needs at least {fmt(q)} {unit}s." for d, q in zip(data["sinks"], data["demand"]))
    costs = " ".join(
        f"From {s}, shipping one {unit} costs " +
        listing([f"{money(c)} to {d}" for c, d in zip(row, data["sinks"])]) + "."
        for s, row in zip(data["sources"], data["cost"]))
    body = [supply, demand, costs,
            f"Only whole {unit}s can be shipped." if data["integer"] else f"Fractional {unit}s may be shipped."]
    ask = ASKS[data["phrasing"]].format(unit=unit)
    return compose(intro, body, requirements(data, _sentence), ask, data)


FAMILY = Family("transportation", "LP", draw, side, pivot, build, render, min_size=1, floor=2, max_size=30,
                default_integer=False, size_note="size = number of sources (at least 2); destinations = size + 1")
