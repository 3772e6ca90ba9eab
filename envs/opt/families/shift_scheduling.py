"""Shift scheduling (IP; LP in full-time equivalents with ``integer=False``): hire staff on
shifts of consecutive hours so that every period's staffing demand is covered, at least cost
(the covering model of staff scheduling, an OR-textbook case SIRL's seeds include, SIRL §3.1).

Two shapes:

- an opening day (call centre, restaurant) of ``size + 5`` hours (``size`` 1-19), with full-time
  shifts of 3-4 hours and part-time shifts of 2 hours, each starting on any hour and ending by
  closing time;
- a round-the-clock ward of 6, 12 or 24 blocks (the first of those with at least ``size + 3``
  blocks) with 8-hour shifts that may run past midnight, each start time at its own cost.

A side requirement is kept only when :func:`_plan_total` still builds a plan that meets every
requirement, so the problem stays feasible. Side requirements: a start's cap, a minimum at opening, a maximum share of part-time staff, a cap on
total staff. Pivot: the cap on total staff (the side template), at least the staff of
:func:`_plan_total`'s plan or fewer than the busiest period needs.
"""
from __future__ import annotations

import numpy as np

from ..model import Constraint, LinearModel, Var
from .common import Family, Pivot, compose, fmt, integer, listing, money, pick, plural, requirements, take_pivot

THEMES = {
    "callcentre": {
        "org": "the call centre", "cyclic": False, "staff": "agent",
        "intro": "A call centre opens at {open}:00 and closes at {close}:00.",
    },
    "restaurant": {
        "org": "the restaurant", "cyclic": False, "staff": "server",
        "intro": "A restaurant is open from {open}:00 until {close}:00.",
    },
    "hospital": {
        "org": "the hospital", "cyclic": True, "staff": "nurse",
        "intro": "A hospital ward needs nurses around the clock. The day is split into {blocks} blocks of "
                 "{block} hours, starting at 0:00.",
    },
}


def _clock(h: int) -> str:
    return f"{h % 24}:00"


def draw(rng: np.random.Generator, size: int, integer_vars: bool) -> dict:
    theme = pick(rng, sorted(THEMES))
    t = THEMES[theme]
    data = {"theme": theme, "org": t["org"], "integer": bool(integer_vars), "side": []}
    if t["cyclic"]:
        blocks = next(b for b in (6, 12, 24) if b >= size + 3)
        block = 24 // blocks
        starts = list(range(blocks))
        data.update(cyclic=True, blocks=blocks, block_hours=block, shift_hours=8,
                    demand=[integer(rng, 2, 12) for _ in range(blocks)],
                    shift_cost=[integer(rng, 150, 260, 5) for _ in starts])
        return data
    hours = size + 5
    latest = min(11, 24 - hours)  # close by midnight
    open_h = integer(rng, min(6, latest), latest)
    full = 4 if hours >= 8 else 3
    data.update(cyclic=False, open=open_h, close=open_h + hours, full_hours=full, part_hours=2,
                full_cost=integer(rng, 60, 120, 2), part_cost=integer(rng, 34, 70, 2),
                demand=[integer(rng, 1, 12) for _ in range(hours)])
    return data


def shifts(data: dict) -> list[tuple[str, int, list[int], float]]:
    """Every shift as ``(variable, start period, covered periods, cost)``."""
    T = len(data["demand"])
    out = []
    if data["cyclic"]:
        length = data["shift_hours"] // data["block_hours"]
        for s in range(T):
            out.append((f"x{s}", s, [(s + k) % T for k in range(length)], float(data["shift_cost"][s])))
        return out
    for name, length, cost in (("f", data["full_hours"], data["full_cost"]), ("p", data["part_hours"], data["part_cost"])):
        for s in range(T - length + 1):
            out.append((f"{name}{s}", s, list(range(s, s + length)), float(cost)))
    return out


def _start_label(data: dict, var: str) -> tuple[str, str]:
    """(kind of shift, start time) of a shift variable, as the text names them."""
    if data["cyclic"]:
        return "", _clock(int(var[1:]) * data["block_hours"])
    kind = "full-time" if var[0] == "f" else "part-time"
    return kind, _clock(data["open"] + int(var[1:]))


def _plan_total(data: dict, sides: list[dict]) -> int | None:
    """Staff in a feasible plan under ``sides`` (None when this construction finds none, which
    does not prove infeasibility): the opening minimum on an opening shift, then left to right
    each period's shortfall on the shifts that cover it, full-time first and latest start
    first, within any start caps; part-time staff only where full-time ones are capped."""
    sh = shifts(data)
    start_of = {v: st for v, st, _, _ in sh}
    caps = {s["shift"]: s["staff"] for s in sides if s["kind"] == "max_start"}
    opening = sum(s["staff"] for s in sides if s["kind"] == "min_open")
    staff = {v: 0 for v, _, _, _ in sh}
    if opening:
        first = next((v for v, st, _, _ in sh if st == 0 and opening <= caps.get(v, opening)), None)
        if first is None:
            return None
        staff[first] = opening
    for p, need in enumerate(data["demand"]):
        short = need - sum(staff[v] for v, _, c, _ in sh if p in c)
        options = sorted((v for v, _, c, _ in sh if p in c), key=lambda v: (v.startswith("p"), -start_of[v]))
        for v in options:
            if short <= 0:
                break
            add = min(short, caps[v] - staff[v]) if v in caps else short
            if add > 0:
                staff[v] += add
                short -= add
        if short > 0:
            return None
    total = sum(staff.values())
    share = next((s["percent"] for s in sides if s["kind"] == "max_part_share"), None)
    if share is not None and sum(n for v, n in staff.items() if v.startswith("p")) * 100 > share * total:
        return None
    limit = next((s["staff"] for s in sides if s["kind"] == "max_total"), None)
    if limit is not None and total > limit:
        return None
    return total


def side(rng: np.random.Generator, data: dict) -> dict | None:
    """Propose a requirement and keep it when :func:`_plan_total` still finds a plan."""
    sh = shifts(data)
    capped = {s["shift"] for s in data["side"] if s["kind"] == "max_start"}
    done = {s["kind"] for s in data["side"]}
    for _ in range(30):
        kind = pick(rng, ["max_start", "min_open", "max_part_share", "max_total"])
        if kind in done and kind != "max_start":
            continue
        if kind == "max_start":
            var = sh[int(rng.integers(len(sh)))][0]
            if var in capped:
                continue
            label, at = _start_label(data, var)
            cand = {"kind": kind, "shift": var, "label": label, "at": at, "staff": integer(rng, 1, 3)}
        elif kind == "min_open":
            cand = {"kind": kind, "staff": integer(rng, 1, 4)}
        elif kind == "max_part_share":
            if data["cyclic"]:
                continue
            cand = {"kind": kind, "percent": pick(rng, [20, 25, 30, 40, 50])}
        else:
            base = _plan_total(data, data["side"])
            if base is None:
                continue
            cand = {"kind": kind, "staff": base + integer(rng, 0, 3)}
        if _plan_total(data, data["side"] + [cand]) is not None:
            return cand
    return None


def pivot(rng: np.random.Generator, data: dict) -> Pivot | None:
    """A cap on total staff: ``ok`` the staff of :func:`_plan_total`'s plan under the side
    requirements plus 0-3 (a cap already stated stays as ``ok``), ``bad`` fewer than the busiest
    period needs at once (at least 2, so that both versions read in the plural)."""
    base = _plan_total(data, data["side"])
    ok = None if base is None else {"kind": "max_total", "staff": base + integer(rng, 0, 3)}
    most = max(data["demand"])
    bad = {"kind": "max_total", "staff": integer(rng, 2, most - 1)} if most >= 3 else None
    return take_pivot(data, "max_total", ok, bad)


def build(data: dict) -> LinearModel:
    sh = shifts(data)
    kind = "I" if data["integer"] else "C"
    variables = [Var(v, 0.0, None, kind) for v, _, _, _ in sh]
    cons = [Constraint(f"cover_{p}", {v: 1.0 for v, _, c, _ in sh if p in c}, lo=d)
            for p, d in enumerate(data["demand"])]
    items = list(data["side"]) + ([data["contradiction"]] if data.get("contradiction") else [])
    for k, s in enumerate(items):
        name = f"side{k}"
        if s["kind"] == "max_start":
            cons.append(Constraint(name, {s["shift"]: 1.0}, hi=s["staff"]))
        elif s["kind"] == "min_open":
            cons.append(Constraint(name, {v: 1.0 for v, start, _, _ in sh if start == 0}, lo=s["staff"]))
        elif s["kind"] == "max_part_share":
            share = s["percent"] / 100
            cons.append(Constraint(name, {v: (1.0 if v.startswith("p") else 0.0) - share for v, _, _, _ in sh}, hi=0.0))
        elif s["kind"] == "max_total":
            cons.append(Constraint(name, {v: 1.0 for v, _, _, _ in sh}, hi=s["staff"]))
        else:
            raise ValueError(f"unknown shift_scheduling requirement {s['kind']!r}")
    return LinearModel("min", variables, cons, {v: c for v, _, _, c in sh})


def _sentence(s: dict, data: dict) -> str:
    staff = THEMES[data["theme"]]["staff"]
    if s["kind"] == "max_start":
        what = f"{s['label']} {staff}" if s["label"] else staff
        return f"At most {plural(s['staff'], what)} can start at {s['at']}."
    if s["kind"] == "min_open":
        start = "0:00" if data["cyclic"] else _clock(data["open"])
        return f"At least {plural(s['staff'], staff)} must start their shift at {start}."
    if s["kind"] == "max_part_share":
        return f"At most {fmt(s['percent'])}% of all {staff}s hired may be part-time."
    if s["kind"] == "max_total":
        return f"No more than {plural(s['staff'], staff)} can be hired in total."
    raise ValueError(s["kind"])


def render(data: dict) -> str:
    t = THEMES[data["theme"]]
    staff = t["staff"]
    if data["cyclic"]:
        b = data["block_hours"]
        intro = t["intro"].format(blocks=fmt(data["blocks"]), block=fmt(b))
        need = "; ".join(f"{_clock(p * b)}-{_clock((p + 1) * b)} needs {fmt(d)}"
                         for p, d in enumerate(data["demand"]))
        costs = listing([f"{money(c)} if it starts at {_clock(s * b)}" for s, c in enumerate(data["shift_cost"])])
        body = [f"{staff.capitalize()}s needed on duty in each block: {need}.",
                f"Each {staff} works one shift of {fmt(data['shift_hours'])} consecutive hours, starting at the "
                f"beginning of a block; a shift may run past midnight into the next day's first blocks, and the "
                f"same schedule repeats every day. A shift costs {costs}."]
    else:
        intro = t["intro"].format(open=fmt(data["open"]), close=fmt(data["close"]))
        need = "; ".join(f"{_clock(data['open'] + p)}-{_clock(data['open'] + p + 1)}: {fmt(d)}"
                         for p, d in enumerate(data["demand"]))
        body = [f"The number of {staff}s needed in each hour is: {need}.",
                f"A full-time {staff} works {fmt(data['full_hours'])} consecutive hours and costs "
                f"{money(data['full_cost'])} per shift; a part-time {staff} works {fmt(data['part_hours'])} "
                f"consecutive hours and costs {money(data['part_cost'])} per shift. A shift can start on any hour "
                f"but must end by closing time."]
    body.append(f"Only whole {staff}s can be hired." if data["integer"]
                else f"Staffing is planned in full-time equivalents, so fractional {staff}s are allowed.")
    ask = (f"How many {staff}s should start at each time to cover every period at the lowest total cost? "
           f"Report the minimum daily cost.")
    return compose(intro, body, requirements(data, _sentence), ask, data)


FAMILY = Family("shift_scheduling", "IP", draw, side, pivot, build, render, min_size=1, max_size=19,
                default_integer=True, size_note="size + 5 opening hours, or 6/12/24 round-the-clock blocks")
