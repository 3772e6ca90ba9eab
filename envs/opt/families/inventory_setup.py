"""Capacitated lot sizing (MILP): plan production over ``size + 1`` periods (``size`` 1-30) to
meet each period's demand from production or stock, paying a setup cost in every period that
produces, a unit cost and a holding cost on stock carried to the next period.

The setup link ``produce[t] - capacity[t] * setup[t] <= 0`` is a big-M row (capacities are
1,000 units or more against unit coefficients: the shape SIRL §10's bonus rewards, reported by
:meth:`~..model.LinearModel.features` as ``big_m``). Stock starts at 0 and every period's
capacity covers its own demand, so producing each period's demand is always possible.

Without a storage limit the plan is feasible exactly when, for every period, the capacity of
the periods that may produce up to then covers the demand up to then (stock can carry any
surplus); :func:`_fewest_setups` uses this to size a setup cap that stays feasible, and
:func:`_feasible` keeps only side requirements that leave a known plan. Side requirements: a storage limit, a cap on setups, a minimum closing stock, a period without
production. Pivot: a cap on period 1's production, which starts with no stock: at least its
demand (and :func:`_feasible` still finds a plan) or below it.
"""
from __future__ import annotations

import numpy as np

from ..model import Constraint, LinearModel, Var
from .common import Family, Pivot, ceil_to, compose, decimal, fmt, integer, money, pick, requirements

THEMES = {
    "factory": {"org": "the factory", "period": "month", "unit": "units", "what": "garden chairs",
                "intro": "A factory plans production of garden chairs for the next {T} months."},
    "brewery": {"org": "the brewery", "period": "week", "unit": "crates", "what": "lemonade",
                "intro": "A brewery plans how much lemonade to bottle over the next {T} weeks."},
    "toys": {"org": "the toy maker", "period": "quarter", "unit": "kits", "what": "model kits",
             "intro": "A toy maker schedules production runs of model kits for the next {T} quarters."},
}


def draw(rng: np.random.Generator, size: int, integer_vars: bool) -> dict:
    theme = pick(rng, sorted(THEMES))
    T = size + 1
    constant_setup = bool(rng.random() < 0.5)
    setup0 = integer(rng, 300, 2000, 50)
    return {
        "theme": theme, "org": THEMES[theme]["org"], "periods": T, "initial": 0,
        "demand": [integer(rng, 200, 900, 10) for _ in range(T)],
        "capacity": [integer(rng, 1000, 2000, 100) for _ in range(T)],
        "setup_cost": [setup0] * T if constant_setup else [integer(rng, 300, 2000, 50) for _ in range(T)],
        "unit_cost": [decimal(rng, 2, 10, 1) for _ in range(T)],
        "holding_cost": decimal(rng, 0.5, 3.0, 1),
        "integer": bool(integer_vars), "side": [],
    }


def _fewest_setups(capacity: list[int], demand: list[int], closed: set[int] = frozenset()) -> int:
    """The fewest producing periods that can meet demand without a storage limit (10**9 if
    none can): scan the periods, and whenever cumulative capacity falls short, open the unopened
    period so far with the largest capacity (every opened period counts for all later prefixes,
    so the largest is always the best choice)."""
    opened: set[int] = set()
    cap = need = 0
    for t in range(len(demand)):
        need += demand[t]
        while cap < need:
            free = [s for s in range(t + 1) if s not in opened and s not in closed]
            if not free:
                return 10 ** 9
            best = max(free, key=lambda s: (capacity[s], -s))
            opened.add(best)
            cap += capacity[best]
    return len(opened)


def _feasible(data: dict, sides: list[dict]) -> bool:
    """Whether ``sides`` surely leave the plan feasible (True only when a plan is known).

    A cap on a period's production lowers its capacity. Without a storage limit: the prefix
    rule of :func:`_fewest_setups`, with the closing stock added to the last demand, closed
    periods unable to produce, and at most the setup cap.
    With a storage limit (never combined with a setup cap): the plan "each period makes its own
    demand, a closed period's demand is made the period before, the closing stock is made last"
    must respect capacities and the limit.
    """
    T = data["periods"]
    closed = {r["period"] - 1 for r in sides if r["kind"] == "no_production"}
    limit = next((r["units"] for r in sides if r["kind"] == "storage_cap"), None)
    setups = next((r["count"] for r in sides if r["kind"] == "max_setups"), None)
    end = sum(r["units"] for r in sides if r["kind"] == "min_end_stock")
    d, cap = data["demand"], list(data["capacity"])
    for r in sides:
        if r["kind"] == "max_production":
            cap[r["period"] - 1] = min(cap[r["period"] - 1], r["units"])
    if limit is None:
        need = list(d)
        need[-1] += end
        return _fewest_setups(cap, need, closed) <= (T if setups is None else setups)
    if setups is not None or (end and T - 1 in closed) or end > limit:
        return False
    make = [0 if t in closed else d[t] for t in range(T)]
    for t in closed:
        if t == 0 or t - 1 in closed or d[t] > limit:
            return False
        make[t - 1] += d[t]
    make[-1] += end
    return all(m <= c for m, c in zip(make, cap))


def side(rng: np.random.Generator, data: dict) -> dict | None:
    """Propose a requirement and keep it when :func:`_feasible` vouches for the result."""
    T = data["periods"]
    kinds = {s["kind"] for s in data["side"]}
    closed = {s["period"] - 1 for s in data["side"] if s["kind"] == "no_production"}
    for _ in range(30):
        kind = pick(rng, ["storage_cap", "max_setups", "min_end_stock", "no_production"])
        if kind in kinds and kind != "no_production":
            continue
        if kind == "storage_cap":
            cand = {"kind": kind, "units": integer(rng, 100, 1000, 50)}
        elif kind == "max_setups":
            need = list(data["demand"])
            need[-1] += sum(s["units"] for s in data["side"] if s["kind"] == "min_end_stock")
            fewest = _fewest_setups(data["capacity"], need, closed)
            if fewest >= T - len(closed):
                continue
            cand = {"kind": kind, "count": min(T - len(closed) - 1, fewest + integer(rng, 0, 1))}
        elif kind == "min_end_stock":
            room = (data["capacity"][-1] - data["demand"][-1]) // 10 * 10
            if room < 10:
                continue
            cand = {"kind": kind, "units": integer(rng, 10, min(room, 300), 10)}
        else:
            t = int(rng.integers(1, T))  # never the first period: stock starts at 0
            if t in closed:
                continue
            cand = {"kind": kind, "period": t + 1}
        if _feasible(data, data["side"] + [cand]):
            return cand
    return None


def pivot(rng: np.random.Generator, data: dict) -> Pivot | None:
    """A cap on period 1's production (stock starts at 0): ``ok`` a multiple of ten from its
    demand up to its capacity that :func:`_feasible` still vouches for (its capacity itself when
    the drawn one is not: the cap then takes nothing away), ``bad`` 10-100 below its demand."""
    d0, c0 = data["demand"][0], data["capacity"][0]
    ok = {"kind": "max_production", "period": 1, "units": integer(rng, ceil_to(d0, 10), c0, 10)}
    if not _feasible(data, data["side"] + [ok]):
        ok = dict(ok, units=c0)
    bad = {"kind": "max_production", "period": 1, "units": max(0, d0 - integer(rng, 1, 10) * 10)}
    return Pivot(ok, bad)


def build(data: dict) -> LinearModel:
    T = data["periods"]
    kind = "I" if data["integer"] else "C"
    x = [f"make{t}" for t in range(T)]
    s = [f"stock{t}" for t in range(T)]
    y = [f"setup{t}" for t in range(T)]
    variables = ([Var(v, 0.0, None, kind) for v in x] + [Var(v, 0.0, None, kind) for v in s]
                 + [Var(v, 0.0, 1.0, "B") for v in y])
    cons = []
    for t in range(T):
        coefs = {x[t]: 1.0, s[t]: -1.0}
        rhs = float(data["demand"][t])
        if t == 0:
            rhs -= data["initial"]
        else:
            coefs[s[t - 1]] = 1.0
        cons.append(Constraint(f"balance_{t}", coefs, lo=rhs, hi=rhs))
        cons.append(Constraint(f"link_{t}", {x[t]: 1.0, y[t]: -float(data["capacity"][t])}, hi=0.0))
    items = list(data["side"]) + ([data["contradiction"]] if data.get("contradiction") else [])
    for k, r in enumerate(items):
        name = f"side{k}"
        if r["kind"] == "storage_cap":
            cons += [Constraint(f"{name}_{t}", {s[t]: 1.0}, hi=r["units"]) for t in range(T)]
        elif r["kind"] == "max_setups":
            cons.append(Constraint(name, {v: 1.0 for v in y}, hi=r["count"]))
        elif r["kind"] == "min_end_stock":
            cons.append(Constraint(name, {s[T - 1]: 1.0}, lo=r["units"]))
        elif r["kind"] == "no_production":
            cons.append(Constraint(name, {x[r["period"] - 1]: 1.0}, hi=0.0))
        elif r["kind"] == "max_production":
            cons.append(Constraint(name, {x[r["period"] - 1]: 1.0}, hi=r["units"]))
        else:
            raise ValueError(f"unknown inventory_setup requirement {r['kind']!r}")
    objective = {}
    for t in range(T):
        objective[x[t]] = float(data["unit_cost"][t])
        objective[y[t]] = float(data["setup_cost"][t])
        objective[s[t]] = float(data["holding_cost"])
    return LinearModel("min", variables, cons, objective)


def _sentence(r: dict, data: dict) -> str:
    th = THEMES[data["theme"]]
    p, unit = th["period"], th["unit"]
    if r["kind"] == "storage_cap":
        return f"The warehouse can hold at most {fmt(r['units'])} {unit} at the end of any {p}."
    if r["kind"] == "max_setups":
        return f"Production can be set up in at most {fmt(r['count'])} of the {p}s."
    if r["kind"] == "min_end_stock":
        return f"At least {fmt(r['units'])} {unit} must be left in stock at the end of the last {p}."
    if r["kind"] == "no_production":
        return f"The line is closed for maintenance in {p} {fmt(r['period'])}, so nothing can be produced then."
    if r["kind"] == "max_production":
        return f"Because of a parts shortage, at most {fmt(r['units'])} {unit} can be produced in {p} {fmt(r['period'])}."
    raise ValueError(r["kind"])


def render(data: dict) -> str:
    th = THEMES[data["theme"]]
    p, unit = th["period"], th["unit"]
    T = data["periods"]
    intro = th["intro"].format(T=fmt(T))
    rows = []
    for t in range(T):
        rows.append(f"- {p} {fmt(t + 1)}: demand {fmt(data['demand'][t])} {unit}, capacity {fmt(data['capacity'][t])} "
                    f"{unit}, setup cost {money(data['setup_cost'][t])}, production cost {money(data['unit_cost'][t])} "
                    f"per unit")
    body = [f"For each {p}:\n" + "\n".join(rows),
            f"A {p} in which anything is produced pays that {p}'s setup cost once, and can produce at most its "
            f"capacity. Demand must be met on time from that {p}'s production or from stock; no backlog is allowed. "
            f"There are {fmt(data['initial'])} {unit} in stock at the start of {p} 1, and every unit left in stock "
            f"at the end of a {p} costs {money(data['holding_cost'])} to hold.",
            f"Production is in whole {unit}." if data["integer"] else "Fractional amounts may be produced."]
    ask = f"What is the minimum total cost (setup, production and holding) of meeting demand over all {fmt(T)} {p}s?"
    return compose(intro, body, requirements(data, _sentence), ask, data)


FAMILY = Family("inventory_setup", "MILP", draw, side, pivot, build, render, min_size=1, max_size=30,
                default_integer=False, size_note="size + 1 periods")
