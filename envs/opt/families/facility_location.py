"""Capacitated facility location (MILP): choose which sites to open (binary, with a fixed cost)
and how to ship from open sites to customers (continuous, or integer with ``integer=True``) at
least total cost. The link "an unopened site ships nothing, an open one at most its capacity" is
a big-M row ``sum_j x[i][j] - capacity[i] * open[i] <= 0``; capacities are 1,000 units or more,
so the row has the big-M shape SIRL's stage-2 bonus looks for (SIRL §10) and
:meth:`~..model.LinearModel.features` reports ``big_m``.

``size`` sites (1-30; 1 is drawn as 2) and ``size + 2`` customers. Total capacity is at least 1.3 times total
demand. Side requirements: a cap on the number of open sites (never below what the demand needs),
a site that must open, two sites that cannot both open, a minimum number of open sites.
Pivot: a cap on the open sites (at least the fewest that can cover the demand under the other
requirements, or fewer than the fewest that could cover it at all), or a site that must open and
handle a volume (within its capacity, or beyond it).
"""
from __future__ import annotations

import numpy as np

from ..model import Constraint, LinearModel, Var
from .common import Family, Pivot, compose, decimal, fmt, integer, listing, money, names_for, pick, requirements, \
    take_pivot

THEMES = {
    "warehouses": {
        "org": "the retail chain",
        "sites": ["Aston", "Bexley", "Crewe", "Dover", "Ely", "Frome", "Goole", "Hove"],
        "customers": ["store 1", "store 2", "store 3", "store 4", "store 5", "store 6", "store 7", "store 8",
                      "store 9", "store 10"],
        "intro": "A retail chain is deciding where to open distribution centres. The candidate towns are "
                 "{sites}, and the centres will supply {customers}.",
        "site": "centre", "unit": "pallet", "period": "month",
    },
    "datacentres": {
        "org": "the cloud provider",
        "sites": ["Oslo", "Dublin", "Lisbon", "Warsaw", "Vienna", "Milan", "Zurich", "Prague"],
        "customers": ["region A", "region B", "region C", "region D", "region E", "region F", "region G",
                      "region H", "region J", "region K"],
        "intro": "A cloud provider may run data centres in {sites}, serving demand from {customers}.",
        "site": "data centre", "unit": "server-hour", "period": "day",
    },
    "clinics": {
        "org": "the health board",
        "sites": ["Elm Road", "Mill Lane", "Park Avenue", "Quay Street", "Rose Hill", "Station Road",
                  "Tower Street", "Union Square"],
        "customers": ["district 1", "district 2", "district 3", "district 4", "district 5", "district 6",
                      "district 7", "district 8", "district 9", "district 10"],
        "intro": "A health board is choosing where to open vaccination clinics: the candidate sites are "
                 "{sites}, and the clinics will serve {customers}.",
        "site": "clinic", "unit": "appointment", "period": "week",
    },
}


def draw(rng: np.random.Generator, size: int, integer_vars: bool) -> dict:
    theme = pick(rng, sorted(THEMES))
    t = THEMES[theme]
    sites = names_for(t["sites"], size)
    customers = names_for(t["customers"], size + 2)
    demand = [integer(rng, 100, 900, 10) for _ in customers]
    capacity = [integer(rng, 1000, 3000, 100) for _ in sites]
    k = 0
    while sum(capacity) < 1.3 * sum(demand):  # enough room in total, spread over the sites
        capacity[k % len(sites)] += 500
        k += 1
    fixed = [integer(rng, 2000, 9000, 100) for _ in sites]
    cost = [[decimal(rng, 1, 12, 1) for _ in customers] for _ in sites]
    return {"theme": theme, "org": t["org"], "sites": sites, "customers": customers,
            "demand": demand, "capacity": capacity, "fixed": fixed, "cost": cost,
            "integer": bool(integer_vars), "side": []}


def _fewest_sites(capacity: list[int], demand_total: int, excluded: set[int] = frozenset()) -> int:
    """The fewest sites whose capacities can cover the demand (largest first), or a huge number."""
    caps = sorted((c for i, c in enumerate(capacity) if i not in excluded), reverse=True)
    total = 0
    for k, c in enumerate(caps, 1):
        total += c
        if total >= demand_total:
            return k
    return 10 ** 9


def side(rng: np.random.Generator, data: dict) -> dict | None:
    m = len(data["sites"])
    need = sum(data["demand"])
    kinds_done = {s["kind"] for s in data["side"]}
    musts = {s["site"] for s in data["side"] if s["kind"] == "must_open"}
    excl = [s for s in data["side"] if s["kind"] == "exclusive"]
    for _ in range(30):
        kind = pick(rng, ["max_open", "must_open", "exclusive", "min_open"])
        a, b = (int(v) for v in rng.permutation(m)[:2])
        cap = next((s["count"] for s in data["side"] if s["kind"] == "max_open"), m)
        if kind == "max_open" and kind not in kinds_done:
            fewest = _fewest_sites(data["capacity"], need)
            floor = 2 if "min_open" in kinds_done else 0
            limit = max(fewest, len(musts), floor, m - 1)
            if limit >= m:
                continue
            return {"kind": kind, "count": limit}
        if kind == "must_open" and data["sites"][a] not in musts:
            if any(data["sites"][a] in (s["site"], s["other"]) for s in excl) or len(musts) + 1 > cap:
                continue
            return {"kind": kind, "site": data["sites"][a]}
        if kind == "exclusive" and not excl:
            names = {data["sites"][a], data["sites"][b]}
            if names & musts or "max_open" in kinds_done:
                continue
            # whichever of the two stays closed, the others must still cover the demand
            if _fewest_sites(data["capacity"], need, {a}) >= 10 ** 9 or \
                    _fewest_sites(data["capacity"], need, {b}) >= 10 ** 9:
                continue
            return {"kind": kind, "site": data["sites"][a], "other": data["sites"][b]}
        if kind == "min_open" and kind not in kinds_done and not excl and cap >= 2:
            return {"kind": kind, "count": 2}
    return None


def _fewest_with(data: dict) -> int:
    """The fewest sites that can cover the demand under the side requirements: the sites that
    must open, then the largest others, keeping out one site of an exclusive pair (the better
    choice); at least 2 under a minimum of open sites."""
    need = sum(data["demand"])
    musts = {data["sites"].index(s["site"]) for s in data["side"] if s["kind"] == "must_open"}
    outs = [{data["sites"].index(s[k])} for s in data["side"] if s["kind"] == "exclusive" for k in ("site", "other")]
    best = 10 ** 9
    for out in outs or [set()]:
        covered = sum(data["capacity"][i] for i in musts)
        rest = sorted((c for i, c in enumerate(data["capacity"]) if i not in musts | out), reverse=True)
        count = len(musts)
        for c in rest:
            if covered >= need:
                break
            covered, count = covered + c, count + 1
        if covered >= need:
            best = min(best, count)
    return max(best, 2 if any(s["kind"] == "min_open" for s in data["side"]) else 0)


def pivot(rng: np.random.Generator, data: dict) -> Pivot | None:
    """Either a cap on the open sites (when two sites cannot cover the demand): ``ok``
    between :func:`_fewest_with` and one less than all the sites, ``bad`` one less than the
    fewest sites whose capacities could cover the demand at all (a cap already stated stays as
    ``ok``); or a site outside every exclusive pair that must open and handle ``ok`` 20-60% of
    its capacity or ``bad`` 100-500 more than its capacity. The same kind in both versions."""
    m = len(data["sites"])
    fewest = _fewest_sites(data["capacity"], sum(data["demand"]))
    if fewest >= 3 and rng.random() < 0.5:  # a cap of 1 would read "1 centre": only a contradiction's
        lo = _fewest_with(data)
        ok = {"kind": "max_open", "count": integer(rng, lo, max(lo, m - 1))} if lo <= m else None
        return take_pivot(data, "max_open", ok, {"kind": "max_open", "count": fewest - 1})
    i = int(rng.integers(m))
    site, cap = data["sites"][i], data["capacity"][i]
    excl = {s[k] for s in data["side"] if s["kind"] == "exclusive" for k in ("site", "other")}
    opened = {s["site"] for s in data["side"] if s["kind"] == "must_open"} | {site}
    limit = next((s["count"] for s in data["side"] if s["kind"] == "max_open"), m)
    ok = {"kind": "min_ship", "site": site, "units": max(100, int(cap * float(rng.uniform(0.2, 0.6))) // 100 * 100)}
    bad = {"kind": "min_ship", "site": site, "units": cap + integer(rng, 1, 5) * 100}
    return Pivot(ok, bad) if site not in excl and len(opened) <= limit else None


def build(data: dict) -> LinearModel:
    m, n = len(data["sites"]), len(data["customers"])
    si = {s: i for i, s in enumerate(data["sites"])}
    kind = "I" if data["integer"] else "C"
    y = [f"open{i}" for i in range(m)]
    x = [[f"x_{i}_{j}" for j in range(n)] for i in range(m)]
    variables = [Var(v, 0.0, 1.0, "B") for v in y] + [Var(x[i][j], 0.0, None, kind) for i in range(m) for j in range(n)]
    cons = [Constraint(f"demand_{j}", {x[i][j]: 1.0 for i in range(m)}, lo=data["demand"][j]) for j in range(n)]
    for i in range(m):
        coefs = {x[i][j]: 1.0 for j in range(n)}
        coefs[y[i]] = -float(data["capacity"][i])
        cons.append(Constraint(f"link_{i}", coefs, hi=0.0))
    items = list(data["side"]) + ([data["contradiction"]] if data.get("contradiction") else [])
    for k, s in enumerate(items):
        name = f"side{k}"
        if s["kind"] == "max_open":
            cons.append(Constraint(name, {v: 1.0 for v in y}, hi=s["count"]))
        elif s["kind"] == "min_open":
            cons.append(Constraint(name, {v: 1.0 for v in y}, lo=s["count"]))
        elif s["kind"] == "must_open":
            cons.append(Constraint(name, {y[si[s["site"]]]: 1.0}, lo=1.0))
        elif s["kind"] == "exclusive":
            cons.append(Constraint(name, {y[si[s["site"]]]: 1.0, y[si[s["other"]]]: 1.0}, hi=1.0))
        elif s["kind"] == "min_ship":
            i = si[s["site"]]
            cons.append(Constraint(name, {x[i][j]: 1.0 for j in range(n)}, lo=s["units"]))
        else:
            raise ValueError(f"unknown facility_location requirement {s['kind']!r}")
    objective = {y[i]: float(data["fixed"][i]) for i in range(m)}
    objective.update({x[i][j]: float(data["cost"][i][j]) for i in range(m) for j in range(n)})
    return LinearModel("min", variables, cons, objective)


def _sentence(s: dict, data: dict) -> str:
    t = THEMES[data["theme"]]
    if s["kind"] == "max_open":
        return f"At most {fmt(s['count'])} {t['site']}{'s' if s['count'] != 1 else ''} may be opened."
    if s["kind"] == "min_open":
        return f"For resilience, at least {fmt(s['count'])} {t['site']}s must be opened."
    if s["kind"] == "must_open":
        return f"A {t['site']} must be opened in {s['site']}."
    if s["kind"] == "exclusive":
        return f"{s['site']} and {s['other']} cannot both get a {t['site']}."
    if s["kind"] == "min_ship":
        return f"The {t['site']} in {s['site']} must be opened and must handle at least {fmt(s['units'])} {t['unit']}s."
    raise ValueError(s["kind"])


def render(data: dict) -> str:
    t = THEMES[data["theme"]]
    unit, period, site = t["unit"], t["period"], t["site"]
    intro = t["intro"].format(sites=listing(data["sites"]), customers=listing(data["customers"]))
    sites = " ".join(f"A {site} in {s} would cost {money(f)} per {period} to run and could handle up to {fmt(c)} "
                     f"{unit}s per {period}." for s, f, c in zip(data["sites"], data["fixed"], data["capacity"]))
    demand = "Demand per {p}: ".format(p=period) + "; ".join(
        f"{c} needs {fmt(d)} {unit}s" for c, d in zip(data["customers"], data["demand"])) + "."
    costs = " ".join(f"Serving one {unit} from {s} costs " +
                     listing([f"{money(c)} for {cu}" for c, cu in zip(row, data["customers"])]) + "."
                     for s, row in zip(data["sites"], data["cost"]))
    rule = (f"Only an opened {site} can serve anyone, and it can handle no more than its capacity. A customer may "
            f"be served by several {site}s. " + (f"Only whole {unit}s can be assigned." if data["integer"]
                                                  else f"Fractions of a {unit} may be assigned."))
    ask = f"Which {site}s should be opened, and how should demand be served, to minimise the total cost per " \
          f"{period} (running costs plus serving costs)? Report the minimum total cost."
    return compose(intro, [sites, demand, costs, rule], requirements(data, _sentence), ask, data)


FAMILY = Family("facility_location", "MILP", draw, side, pivot, build, render, min_size=1, floor=2, max_size=30,
                default_integer=False, size_note="size = candidate sites (at least 2); customers = size + 2")
