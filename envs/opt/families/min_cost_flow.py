"""Minimum-cost flow (LP; IP with ``integer=True``, same optimum by total unimodularity): send
all supply through a small directed network with arc capacities to meet every demand at least
cost (a network-flow textbook case, SIRL §3.1).

1-2 sources, ``size`` hubs (1-30) and 2-3 sinks; arcs from every source to every hub, from
every hub to every sink, some hub-to-hub arcs and some direct source-to-sink arcs. Supply equals
demand, and flow is conserved at every node. A feasible flow is drawn first (``data["witness"]``,
not part of the text) and capacities are set above it, so the network can always carry the
demand; every side requirement is chosen to hold for that flow, so the problem stays feasible.
Side requirements: a contracted minimum on an arc, a closed arc, a hub's throughput cap.
Pivot: a contracted minimum (the side template) on an arc the witness uses, within the witness's
flow or above the arc's capacity. All demands 0 gives cost 0.
"""
from __future__ import annotations

import numpy as np

from ..model import Constraint, LinearModel, Var
from .common import Family, Pivot, ceil_to, compose, fmt, integer, listing, money, pick, requirements

THEMES = {
    "pipeline": {
        "org": "the pipeline operator",
        "sources": ["Refinery North", "Refinery South"], "hub": "pump station", "hubs": "Pump station {k}",
        "sinks": ["Terminal Alpha", "Terminal Beta", "Terminal Gamma"],
        "unit": "thousand barrels", "per": "thousand barrels",
        "intro": "A pipeline operator moves fuel from {sources} through pump stations to {sinks}.",
    },
    "distribution": {
        "org": "the distributor",
        "sources": ["Factory One", "Factory Two"], "hub": "cross-dock", "hubs": "Cross-dock {k}",
        "sinks": ["City Store", "Mall Store", "Airport Store"],
        "unit": "pallets", "per": "pallet",
        "intro": "A distributor ships pallets from {sources} through cross-docks to {sinks}.",
    },
    "water": {
        "org": "the water utility",
        "sources": ["Reservoir East", "Reservoir West"], "hub": "treatment works", "hubs": "Works {k}",
        "sinks": ["Northtown", "Southtown", "Westtown"],
        "unit": "megalitres", "per": "megalitre",
        "intro": "A water utility sends water from {sources} through treatment works to {sinks}.",
    },
}


def draw(rng: np.random.Generator, size: int, integer_vars: bool) -> dict:
    theme = pick(rng, sorted(THEMES))
    t = THEMES[theme]
    sources = t["sources"][: 1 if size <= 3 else 2]
    sinks = t["sinks"][: 2 if size <= 4 else 3]
    hubs = [t["hubs"].format(k=k + 1) for k in range(size)]
    arcs = [(s, h) for s in sources for h in hubs] + [(h, d) for h in hubs for d in sinks]
    arcs += [(hubs[k], hubs[k + 1]) for k in range(size - 1) if rng.random() < 0.5]
    arcs += [(s, d) for s in sources for d in sinks if rng.random() < 0.3]
    demand = [integer(rng, 50, 300, 10) for _ in sinks]
    share = rng.uniform(0.5, 1.5, len(sources))
    supply = [int(round(sum(demand) * w / share.sum() / 10)) * 10 for w in share]
    supply[-1] = sum(demand) - sum(supply[:-1])
    # A witness flow: a north-west-corner transport plan (supply equals demand, so it ships
    # everything), each of its amounts routed on a random path (direct arc, or source -> hub
    # [-> next hub] -> sink).
    flow = {a: 0 for a in arcs}
    arcset = set(arcs)
    left = list(supply)
    i = 0
    for j, d in enumerate(demand):
        rest = d
        while rest > 0:
            while left[i] == 0:
                i += 1
            amount = min(rest, left[i])
            left[i] -= amount
            rest -= amount
            s, dst = sources[i], sinks[j]
            if (s, dst) in arcset and rng.random() < 0.5:
                flow[(s, dst)] += amount
                continue
            k = int(rng.integers(size))
            flow[(s, hubs[k])] += amount
            if k + 1 < size and (hubs[k], hubs[k + 1]) in arcset and rng.random() < 0.5:
                flow[(hubs[k], hubs[k + 1])] += amount
                k += 1
            flow[(hubs[k], dst)] += amount
    capacity = [ceil_to(flow[a] * float(rng.uniform(1.0, 1.8)) + 10, 10) if flow[a] else integer(rng, 20, 200, 10)
                for a in arcs]
    cost = [integer(rng, 1, 15) for _ in arcs]
    return {"theme": theme, "org": t["org"], "sources": list(sources), "hubs": hubs, "sinks": list(sinks),
            "supply": supply, "demand": demand, "arcs": [[a, b] for a, b in arcs], "capacity": capacity,
            "cost": cost, "witness": [flow[a] for a in arcs], "integer": bool(integer_vars), "side": []}


def side(rng: np.random.Generator, data: dict) -> dict | None:
    used = {(s["kind"], s.get("src"), s.get("dst"), s.get("hub")) for s in data["side"]}
    touched = {(s.get("src"), s.get("dst")) for s in data["side"]}
    w = data["witness"]
    for _ in range(30):
        kind = pick(rng, ["arc_min", "closed", "hub_cap"])
        k = int(rng.integers(len(data["arcs"])))
        a, b = data["arcs"][k]
        if kind in ("arc_min", "closed") and (a, b) in touched:
            continue
        if kind == "arc_min" and w[k] >= 10:
            return {"kind": kind, "src": a, "dst": b, "units": integer(rng, 1, w[k] // 10) * 10}
        if kind == "closed" and w[k] == 0:
            return {"kind": kind, "src": a, "dst": b}
        if kind == "hub_cap":
            h = data["hubs"][int(rng.integers(len(data["hubs"])))]
            through = sum(f for (x, _), f in zip(data["arcs"], w) if x == h)
            if (kind, None, None, h) in used:
                continue
            return {"kind": kind, "hub": h, "units": ceil_to(through * float(rng.uniform(1.0, 1.3)) + 10, 10)}
    return None


def pivot(rng: np.random.Generator, data: dict) -> Pivot | None:
    """A contracted minimum on an arc that carries at least 10 of the witness flow and no side
    requirement: ``ok`` a multiple of ten up to the witness's flow on it (as :func:`side` draws
    one), ``bad`` 10-50 above the arc's capacity. Both on the same arc, so the arcs a
    contradiction names are the arcs a feasible contract names."""
    touched = {(s.get("src"), s.get("dst")) for s in data["side"]}
    w = data["witness"]
    arcs = [k for k, (a, b) in enumerate(data["arcs"]) if w[k] >= 10 and (a, b) not in touched]
    if not arcs:
        return None
    k = arcs[int(rng.integers(len(arcs)))]
    a, b = data["arcs"][k]
    return Pivot({"kind": "arc_min", "src": a, "dst": b, "units": integer(rng, 1, w[k] // 10) * 10},
                 {"kind": "arc_min", "src": a, "dst": b, "units": data["capacity"][k] + integer(rng, 1, 5) * 10})


def build(data: dict) -> LinearModel:
    kind = "I" if data["integer"] else "C"
    arcs = [tuple(a) for a in data["arcs"]]
    ak = {a: k for k, a in enumerate(arcs)}
    x = [f"f{k}" for k in range(len(arcs))]
    variables = [Var(x[k], 0.0, float(c), kind) for k, c in enumerate(data["capacity"])]
    balance = {s: q for s, q in zip(data["sources"], data["supply"])}
    balance.update({d: -q for d, q in zip(data["sinks"], data["demand"])})
    nodes = data["sources"] + data["hubs"] + data["sinks"]
    cons = []
    for n, node in enumerate(nodes):
        coefs = {}
        for k, (a, b) in enumerate(arcs):
            if a == node:
                coefs[x[k]] = coefs.get(x[k], 0.0) + 1.0
            if b == node:
                coefs[x[k]] = coefs.get(x[k], 0.0) - 1.0
        rhs = float(balance.get(node, 0))
        cons.append(Constraint(f"node_{n}", coefs, lo=rhs, hi=rhs))
    items = list(data["side"]) + ([data["contradiction"]] if data.get("contradiction") else [])
    for j, s in enumerate(items):
        name = f"side{j}"
        if s["kind"] == "arc_min":
            cons.append(Constraint(name, {x[ak[(s["src"], s["dst"])]]: 1.0}, lo=s["units"]))
        elif s["kind"] == "closed":
            cons.append(Constraint(name, {x[ak[(s["src"], s["dst"])]]: 1.0}, hi=0.0))
        elif s["kind"] == "hub_cap":
            cons.append(Constraint(name, {x[k]: 1.0 for k, (a, _) in enumerate(arcs) if a == s["hub"]}, hi=s["units"]))
        else:
            raise ValueError(f"unknown min_cost_flow requirement {s['kind']!r}")
    return LinearModel("min", variables, cons, {x[k]: float(c) for k, c in enumerate(data["cost"])})


def _sentence(s: dict, data: dict) -> str:
    t = THEMES[data["theme"]]
    if s["kind"] == "arc_min":
        return f"A contract requires at least {fmt(s['units'])} {t['unit']} to flow from {s['src']} to {s['dst']}."
    if s["kind"] == "closed":
        return f"The link from {s['src']} to {s['dst']} is closed for maintenance."
    if s["kind"] == "hub_cap":
        return f"{s['hub']} can pass on at most {fmt(s['units'])} {t['unit']} in total."
    raise ValueError(s["kind"])


def render(data: dict) -> str:
    t = THEMES[data["theme"]]
    unit, per = t["unit"], t["per"]
    intro = t["intro"].format(sources=listing(data["sources"]), sinks=listing(data["sinks"]))
    supply = " ".join(f"{s} supplies {fmt(q)} {unit}." for s, q in zip(data["sources"], data["supply"]))
    demand = " ".join(f"{d} needs {fmt(q)} {unit}." for d, q in zip(data["sinks"], data["demand"]))
    links = "\n".join(f"- from {a} to {b}: capacity {fmt(c)} {unit}, cost {money(k)} per {per}"
                      for (a, b), c, k in zip(data["arcs"], data["capacity"], data["cost"]))
    body = [f"{supply} {demand} All supply must be sent and every demand met exactly; nothing is stored at a "
            f"{t['hub']}, so whatever enters it must leave it.",
            f"The network has these one-way links:\n{links}",
            f"Flows must be whole {unit}." if data["integer"] else "Flows may be fractional."]
    ask = "What is the minimum total cost of sending the flow through the network?"
    return compose(intro, body, requirements(data, _sentence), ask, data)


FAMILY = Family("min_cost_flow", "LP", draw, side, pivot, build, render, min_size=1, max_size=30,
                default_integer=False, size_note="size = number of hubs")
