"""Mean-variance portfolio (QP, continuous): the fractions of a fund to put in each asset
(no short selling, fractions add up to 1) that minimise the variance ``w' Σ w`` subject to a
floor on the expected return (Markowitz; the non-linear case SIRL §10's bonus counts).

``size`` assets (1-20, 1 drawn as 2; at most 20 because gurobipy's pip licence solves a quadratic objective with at most 200
variables, or-modelling.md §1.4). Returns are percentages with one decimal; the covariance
matrix is in squared percentage points and built as ``Σ = B B' + D`` from small integer factor
loadings ``B`` (two factors) and integer specific variances ``D``, so every entry is an integer
the text can state exactly and ``Σ`` is positive definite by construction (a rounded random
covariance matrix need not be). The return floor lies strictly between the lowest and highest
return. Side requirements: a cap or a floor on one asset's fraction, a cap on two assets
together. Pivot: floors on two assets, adding up to at most 40% of the fund or to more than all
of it.
"""
from __future__ import annotations

import numpy as np

from ..model import Constraint, LinearModel, Var
from .common import Family, Pivot, compose, decimal, fmt, integer, listing, names_for, pick, pick_k, requirements

THEMES = {
    "stocks": {
        "org": "the investor",
        "person": True,
        "assets": ["AlphaTech", "BetaBank", "GammaEnergy", "DeltaFoods", "EpsilonPharma", "ZetaMotors",
                   "EtaRetail", "ThetaMining", "IotaMedia", "KappaTelecom"],
        "intro": "An investor wants to split her savings among the shares of {assets}; short selling is not "
                 "allowed.",
        "kind": "share",
    },
    "pension": {
        "org": "the pension fund",
        "assets": ["government bonds", "corporate bonds", "domestic equities", "foreign equities",
                   "real estate", "commodities", "infrastructure", "private equity", "cash", "gold"],
        "intro": "A pension fund allocates its capital across {assets}; it cannot hold negative positions.",
        "kind": "asset class",
    },
    "funds": {
        "org": "the adviser",
        "person": True,
        "assets": ["Fund A", "Fund B", "Fund C", "Fund D", "Fund E", "Fund F", "Fund G", "Fund H", "Fund J",
                   "Fund K"],
        "intro": "A financial adviser builds a client portfolio from {assets}, buying each fund or not at all "
                 "(no short positions).",
        "kind": "fund",
    },
}


def draw(rng: np.random.Generator, size: int, integer_vars: bool) -> dict:
    theme = pick(rng, sorted(THEMES))
    t = THEMES[theme]
    assets = names_for(pick_k(rng, t["assets"], min(size, len(t["assets"]))), size)
    loadings = [[integer(rng, -3, 12) for _ in range(2)] for _ in assets]
    specific = [integer(rng, 20, 200) for _ in assets]
    n = len(assets)
    cov = [[sum(loadings[i][f] * loadings[j][f] for f in range(2)) + (specific[i] if i == j else 0)
            for j in range(n)] for i in range(n)]
    returns = [decimal(rng, 2.0, 14.0, 1) for _ in assets]
    while len(set(returns)) == 1:  # a floor strictly between min and max needs two returns
        returns[-1] = decimal(rng, 2.0, 14.0, 1)
    lo, hi = min(returns), max(returns)
    floor = decimal(rng, lo + 0.3 * (hi - lo), lo + 0.8 * (hi - lo), 1)
    floor = min(max(floor, round(lo + 0.1, 1)), round(hi - 0.1, 1)) if hi - lo >= 0.2 else round((lo + hi) / 2, 2)
    return {"theme": theme, "org": t["org"], "person": t.get("person", False), "assets": assets, "returns": returns, "cov": cov,
            "min_return": floor, "side": []}


def side(rng: np.random.Generator, data: dict) -> dict | None:
    n = len(data["assets"])
    floors = sum(s["percent"] for s in data["side"] if s["kind"] == "min_weight")
    touched = {s.get("asset") for s in data["side"]}
    for _ in range(30):
        kind = pick(rng, ["max_weight", "min_weight", "pair_max"])
        a, b = (int(v) for v in rng.permutation(n)[:2])
        asset, other = data["assets"][a], data["assets"][b]
        if asset in touched:
            continue
        if kind == "max_weight":
            percent = pick(rng, [30, 40, 50, 60, 70])
            if (n - 1) * 100 + percent < 100:
                continue
            return {"kind": kind, "asset": asset, "percent": percent}
        if kind == "min_weight":
            percent = pick(rng, [5, 10, 15, 20])
            if floors + percent > 40:
                continue
            return {"kind": kind, "asset": asset, "percent": percent}
        if kind == "pair_max" and n >= 3:
            return {"kind": kind, "asset": asset, "other": other, "percent": pick(rng, [40, 50, 60, 70])}
    return None


def pivot(rng: np.random.Generator, data: dict) -> Pivot | None:
    """Floors on two assets: ``ok`` 5-20% each, which no side requirement contradicts (a cap is
    at least 30%, a cap on a pair at least 40%, and with the side floors at most 80% of the fund
    is then fixed) and :func:`_plan` shows leave the return floor reachable, ``bad`` 55-70% and
    50-60%, more than the whole fund."""
    a, b = (data["assets"][int(v)] for v in rng.permutation(len(data["assets"]))[:2])
    ok = {"kind": "min_pair", "asset": a, "other": b, "percent": pick(rng, [5, 10, 15, 20]),
          "other_percent": pick(rng, [5, 10, 15, 20])}
    bad = dict(ok, percent=pick(rng, [55, 60, 65, 70]), other_percent=pick(rng, [50, 55, 60]))
    return Pivot(ok, bad) if _plan(data, data["side"] + [ok]) else None


def _plan(data: dict, sides: list[dict]) -> bool:
    """Whether a greedy plan meets ``sides`` and the return floor: every floor first, then the
    rest of the fund into the assets by falling return, as far as their caps and pair caps allow
    (True only when that plan works; a False does not prove infeasibility)."""
    n, idx = len(data["assets"]), {x: i for i, x in enumerate(data["assets"])}
    lo, hi, pairs = [0.0] * n, [1.0] * n, []
    for s in sides:
        if s["kind"] == "min_weight":
            lo[idx[s["asset"]]] = max(lo[idx[s["asset"]]], s["percent"] / 100)
        elif s["kind"] == "max_weight":
            hi[idx[s["asset"]]] = min(hi[idx[s["asset"]]], s["percent"] / 100)
        elif s["kind"] == "pair_max":
            pairs.append(({idx[s["asset"]], idx[s["other"]]}, s["percent"] / 100))
        elif s["kind"] == "min_pair":
            lo[idx[s["asset"]]] = max(lo[idx[s["asset"]]], s["percent"] / 100)
            lo[idx[s["other"]]] = max(lo[idx[s["other"]]], s["other_percent"] / 100)
    w = list(lo)
    if any(a > b for a, b in zip(lo, hi)) or sum(w) > 1 or any(sum(w[i] for i in p) > c for p, c in pairs):
        return False
    for i in sorted(range(n), key=lambda i: -data["returns"][i]):
        room = min([1 - sum(w), hi[i] - w[i]] + [c - sum(w[k] for k in p) for p, c in pairs if i in p])
        w[i] += max(0.0, room)
    return sum(w) >= 1 - 1e-9 and sum(wi * r for wi, r in zip(w, data["returns"])) >= data["min_return"] + 1e-9


def build(data: dict) -> LinearModel:
    n = len(data["assets"])
    idx = {a: i for i, a in enumerate(data["assets"])}
    w = [f"w{i}" for i in range(n)]
    variables = [Var(v, 0.0, None, "C") for v in w]
    cons = [Constraint("budget", {v: 1.0 for v in w}, lo=1.0, hi=1.0),
            Constraint("return", {w[i]: float(r) for i, r in enumerate(data["returns"])}, lo=data["min_return"])]
    items = list(data["side"]) + ([data["contradiction"]] if data.get("contradiction") else [])
    for k, s in enumerate(items):
        name = f"side{k}"
        if s["kind"] == "max_weight":
            cons.append(Constraint(name, {w[idx[s["asset"]]]: 1.0}, hi=s["percent"] / 100))
        elif s["kind"] == "min_weight":
            cons.append(Constraint(name, {w[idx[s["asset"]]]: 1.0}, lo=s["percent"] / 100))
        elif s["kind"] == "pair_max":
            cons.append(Constraint(name, {w[idx[s["asset"]]]: 1.0, w[idx[s["other"]]]: 1.0}, hi=s["percent"] / 100))
        elif s["kind"] == "min_pair":
            cons.append(Constraint(f"{name}_a", {w[idx[s["asset"]]]: 1.0}, lo=s["percent"] / 100))
            cons.append(Constraint(f"{name}_b", {w[idx[s["other"]]]: 1.0}, lo=s["other_percent"] / 100))
        else:
            raise ValueError(f"unknown portfolio requirement {s['kind']!r}")
    cov = data["cov"]
    quadratic = [[w[i], w[i], float(cov[i][i])] for i in range(n)]
    quadratic += [[w[i], w[j], 2.0 * cov[i][j]] for i in range(n) for j in range(i + 1, n) if cov[i][j] != 0]
    return LinearModel("min", variables, cons, {}, quadratic)


def _sentence(s: dict, data: dict) -> str:
    if s["kind"] == "max_weight":
        return f"At most {fmt(s['percent'])}% of the portfolio may be in {s['asset']}."
    if s["kind"] == "min_weight":
        return f"At least {fmt(s['percent'])}% of the portfolio must be in {s['asset']}."
    if s["kind"] == "pair_max":
        return f"{s['asset'][0].upper() + s['asset'][1:]} and {s['other']} together may make up at most " \
               f"{fmt(s['percent'])}% of the portfolio."
    if s["kind"] == "min_pair":
        return f"At least {fmt(s['percent'])}% must be in {s['asset']} and at least {fmt(s['other_percent'])}% in " \
               f"{s['other']}."
    raise ValueError(s["kind"])


def render(data: dict) -> str:
    t = THEMES[data["theme"]]
    intro = t["intro"].format(assets=listing(data["assets"]))
    rets = "Expected annual returns: " + "; ".join(f"{a} {fmt(r)}%" for a, r in zip(data["assets"], data["returns"])) + "."
    n = len(data["assets"])
    var = "; ".join(f"{data['assets'][i]} {fmt(data['cov'][i][i])}" for i in range(n))
    pairs = "; ".join(f"{data['assets'][i]} and {data['assets'][j]} {fmt(data['cov'][i][j])}"
                      for i in range(n) for j in range(i + 1, n))
    body = [rets,
            f"Risk is measured by the variance of the portfolio's return, in squared percentage points. The variances "
            f"of the returns are: {var}. The covariances are: {pairs}.",
            f"The portfolio is described by the fraction of the money in each {t['kind']}; the fractions add up to 1, "
            f"and the expected return of the portfolio (the fraction-weighted average of the returns) must be at "
            f"least {fmt(data['min_return'])}%."]
    ask = "What is the smallest possible variance of the portfolio's return, in squared percentage points?"
    return compose(intro, body, requirements(data, _sentence), ask, data)


FAMILY = Family("portfolio", "QP", draw, side, pivot, build, render, min_size=1, floor=2, max_size=20,
                default_integer=False, size_note="size = number of assets (at least 2)")
