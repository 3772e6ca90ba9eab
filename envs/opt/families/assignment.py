"""Assignment (IP, binaries): pair ``size`` agents one-to-one with ``size`` tasks at least total
cost or most total score (a textbook case, SIRL §3.1; its binaries are what SIRL's consensus
counts, SIRL §3.1 eq. 3).

``size`` 1-40, 1 drawn as 2 (``size**2`` binaries). Some themes minimise (hours, cost), some maximise
(ratings). Side requirements: an agent cannot do a task, an agent must get a task, two pairings
exclude each other. Pivot: two pairings that must both be made, either two agents with two tasks
(which fits the other requirements) or one agent with two tasks or two agents with one task,
while each agent does exactly one and each task is done once. The two versions name the same
number of agents and tasks in the same words. ``integer`` is ignored: every decision is yes/no.
"""
from __future__ import annotations

import numpy as np

from ..model import Constraint, LinearModel, Var
from .common import Family, Pivot, compose, fmt, integer, listing, names_for, pick, pick_k, requirements

THEMES = {
    "workshop": {
        "org": "the repair shop",
        "sense": "min",
        "agents": ["Ana", "Ben", "Carla", "Dev", "Elif", "Farid", "Gina", "Hugo", "Ines", "Jon"],
        "tasks": ["the brake job", "the oil change", "the tyre swap", "the engine check", "the paint repair",
                  "the battery swap", "the wheel alignment", "the exhaust fix", "the inspection", "the detailing"],
        "intro": "A repair shop must give each of its mechanics ({agents}) exactly one of today's jobs "
                 "({tasks}), and every job must be done by exactly one mechanic.",
        "value": "takes {v} minutes",
        "lo": 20, "hi": 95,
        "ask": "Which assignment minimises the total time, and what is the minimum total time in minutes?",
    },
    "translation": {
        "org": "the agency",
        "sense": "min",
        "agents": ["Kim", "Luis", "Mara", "Nils", "Olga", "Pia", "Quinn", "Rosa", "Sami", "Tara"],
        "tasks": ["the contract", "the manual", "the brochure", "the website", "the report", "the patent",
                  "the subtitles", "the menu", "the letters", "the survey"],
        "intro": "A translation agency assigns one document to each of its translators ({agents}); the "
                 "documents are {tasks}, and each document goes to exactly one translator.",
        "value": "charges ${v}",
        "lo": 40, "hi": 250,
        "ask": "What is the lowest total fee for translating all the documents?",
    },
    "sales": {
        "org": "the company",
        "sense": "max",
        "agents": ["Uma", "Victor", "Wen", "Xavier", "Yara", "Zane", "Alma", "Boris", "Cleo", "Dario"],
        "tasks": ["the North region", "the South region", "the East region", "the West region",
                  "the Central region", "the Coast region", "the Lakes region", "the Hills region",
                  "the Valley region", "the Islands region"],
        "intro": "A company sends each of its sales representatives ({agents}) to exactly one sales region "
                 "({tasks}); every region gets exactly one representative.",
        "value": "is expected to bring in {v} thousand dollars",
        "lo": 10, "hi": 99,
        "ask": "Which assignment maximises the total expected sales, and what is that total in thousands of "
               "dollars?",
    },
}


def draw(rng: np.random.Generator, size: int, integer_vars: bool) -> dict:
    theme = pick(rng, sorted(THEMES))
    t = THEMES[theme]
    agents = names_for(pick_k(rng, t["agents"], min(size, len(t["agents"]))), size)
    tasks = names_for(pick_k(rng, t["tasks"], min(size, len(t["tasks"]))), size)
    value = [[integer(rng, t["lo"], t["hi"]) for _ in tasks] for _ in agents]
    return {"theme": theme, "org": t["org"], "sense": t["sense"], "agents": agents, "tasks": tasks,
            "value": value, "side": []}


def side(rng: np.random.Generator, data: dict) -> dict | None:
    n = len(data["agents"])
    musts = [s for s in data["side"] if s["kind"] == "must"]
    forbidden = {(s["agent"], s["task"]) for s in data["side"] if s["kind"] == "cannot"}
    busy_a = {s["agent"] for s in musts}
    busy_t = {s["task"] for s in musts}
    for _ in range(30):
        kind = pick(rng, ["cannot", "must", "exclusive"])
        a, b = (int(v) for v in rng.permutation(n)[:2])
        ta, tb = (int(v) for v in rng.permutation(n)[:2])
        agent, task = data["agents"][a], data["tasks"][ta]
        if kind == "cannot":
            # keep every agent and task with at least two options, and away from the musts
            row = sum(1 for (g, _) in forbidden if g == agent)
            col = sum(1 for (_, k) in forbidden if k == task)
            if (agent, task) in forbidden or agent in busy_a or task in busy_t or row >= n - 2 or col >= n - 2:
                continue
            return {"kind": kind, "agent": agent, "task": task}
        if kind == "must":
            if agent in busy_a or task in busy_t or (agent, task) in forbidden or len(musts) >= n - 1:
                continue
            if any(f[0] == agent or f[1] == task for f in forbidden):
                continue
            return {"kind": kind, "agent": agent, "task": task}
        if kind == "exclusive" and n >= 3:
            other, task2 = data["agents"][b], data["tasks"][tb]
            if {(agent, task), (other, task2)} <= {(s["agent"], s["task"]) for s in musts}:
                continue
            return {"kind": kind, "agent": agent, "task": task, "other": other, "other_task": task2}
    return None


def _fits(data: dict, pairs: list[tuple[str, str]]) -> bool:
    """Whether the pairings ``pairs`` can be required on top of the side requirements: with the
    musts they give each agent and task at most one pairing, none is ruled out or excluded by
    another, and the agents left over can still be matched to the tasks left over without a
    ruled-out pairing or one an exclusion forbids (augmenting paths)."""
    musts = {(s["agent"], s["task"]) for s in data["side"] if s["kind"] == "must"}
    forbidden = {(s["agent"], s["task"]) for s in data["side"] if s["kind"] == "cannot"}
    fixed = musts | set(pairs)
    if len({a for a, _ in fixed}) < len(fixed) or len({t for _, t in fixed}) < len(fixed) or fixed & forbidden:
        return False
    for s in data["side"]:
        if s["kind"] == "exclusive":
            one, two = (s["agent"], s["task"]), (s["other"], s["other_task"])
            if {one, two} <= fixed:
                return False
            forbidden |= {two} if one in fixed else {one} if two in fixed else set()
    agents = [a for a in data["agents"] if all(a != f for f, _ in fixed)]
    tasks = [t for t in data["tasks"] if all(t != f for _, f in fixed)]
    match: dict[str, str] = {}  # task -> agent

    def augment(a: str, seen: set) -> bool:
        for t in tasks:
            if (a, t) not in forbidden and t not in seen:
                seen.add(t)
                if t not in match or augment(match[t], seen):
                    match[t] = a
                    return True
        return False

    return all(augment(a, set()) for a in agents)


def pivot(rng: np.random.Generator, data: dict) -> Pivot | None:
    """Two pairings that must both be made: ``ok`` two agents with two tasks that :func:`_fits`
    accepts (30 tries), ``bad`` the first agent with both tasks or both agents with the first
    task (each agent does exactly one task and each task is done once)."""
    n = len(data["agents"])
    ok = None
    for _ in range(30):
        a, b = (data["agents"][int(v)] for v in rng.permutation(n)[:2])
        t, u = (data["tasks"][int(v)] for v in rng.permutation(n)[:2])
        if _fits(data, [(a, t), (b, u)]):
            ok = {"kind": "must_both", "agent": a, "task": t, "other": b, "other_task": u}
            break
    if ok is None:
        return None
    bad = dict(ok, other=ok["agent"]) if rng.random() < 0.5 else dict(ok, other_task=ok["task"])
    return Pivot(ok, bad)


def build(data: dict) -> LinearModel:
    n = len(data["agents"])
    ai = {a: i for i, a in enumerate(data["agents"])}
    tj = {t: j for j, t in enumerate(data["tasks"])}
    x = [[f"x_{i}_{j}" for j in range(n)] for i in range(n)]
    variables = [Var(x[i][j], 0.0, 1.0, "B") for i in range(n) for j in range(n)]
    cons = [Constraint(f"agent_{i}", {x[i][j]: 1.0 for j in range(n)}, lo=1.0, hi=1.0) for i in range(n)]
    cons += [Constraint(f"task_{j}", {x[i][j]: 1.0 for i in range(n)}, lo=1.0, hi=1.0) for j in range(n)]
    items = list(data["side"]) + ([data["contradiction"]] if data.get("contradiction") else [])
    for k, s in enumerate(items):
        name = f"side{k}"
        v = x[ai[s["agent"]]][tj[s["task"]]]
        if s["kind"] == "cannot":
            cons.append(Constraint(name, {v: 1.0}, hi=0.0))
        elif s["kind"] == "must":
            cons.append(Constraint(name, {v: 1.0}, lo=1.0))
        elif s["kind"] == "exclusive":
            w = x[ai[s["other"]]][tj[s["other_task"]]]
            if w == v:
                cons.append(Constraint(name, {v: 1.0}, hi=1.0))
            else:
                cons.append(Constraint(name, {v: 1.0, w: 1.0}, hi=1.0))
        elif s["kind"] == "must_both":
            w = x[ai[s["other"]]][tj[s["other_task"]]]
            cons.append(Constraint(name + "_a", {v: 1.0}, lo=1.0))
            cons.append(Constraint(name + "_b", {w: 1.0}, lo=1.0))
        else:
            raise ValueError(f"unknown assignment requirement {s['kind']!r}")
    objective = {x[i][j]: float(data["value"][i][j]) for i in range(n) for j in range(n)}
    return LinearModel(data["sense"], variables, cons, objective)


def _sentence(s: dict, data: dict) -> str:
    if s["kind"] == "cannot":
        return f"{s['agent']} cannot be given {s['task']}."
    if s["kind"] == "must":
        return f"{s['agent']} must be given {s['task']}."
    if s["kind"] == "exclusive":
        return f"It is not allowed both that {s['agent']} gets {s['task']} and that {s['other']} gets {s['other_task']}."
    if s["kind"] == "must_both":
        return f"{s['agent']} must be given {s['task']}, and {s['other']} must be given {s['other_task']}."
    raise ValueError(s["kind"])


def render(data: dict) -> str:
    t = THEMES[data["theme"]]
    intro = t["intro"].format(agents=listing(data["agents"]), tasks=listing(data["tasks"]))
    lines = []
    for a, row in zip(data["agents"], data["value"]):
        parts = [f"{task} {t['value'].format(v=fmt(v))}" for task, v in zip(data["tasks"], row)]
        lines.append(f"For {a}: " + "; ".join(parts) + ".")
    return compose(intro, ["\n".join(lines)], requirements(data, _sentence), t["ask"], data)


FAMILY = Family("assignment", "IP", draw, side, pivot, build, render, min_size=1, floor=2, max_size=40,
                default_integer=True, size_note="size = number of agents = number of tasks (at least 2)")
