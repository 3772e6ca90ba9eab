"""``solvergym eval logic-suite``: one agent on every Synthetic-Logic (family, query), and in tool
mode on every solver that fits, with the table SAT-RL's results group it by (accuracy per family x
query x solver, and per Table 2 category).

Each cell is an ordinary resumable ``solvergym eval`` run (``OUT/<family>/<query>[/<solver>]``)
of ``SolverLogic-v0``; the agent is built once and shared by all of them. ``logic_suite.json``
holds every cell (pass@1 over the cell's instances, its standard error, the reward) and
``logic_suite.md`` the table.

Beside each cell's pass@1 stands its **blind baseline** (:mod:`.blind`), on the cell's own
instances: the chance line (a uniform guess's mean reward) and the best constant answer (the
answer text that, given to every one of these instances, would have been right most
profitably: its accuracy and reward), so that a report never shows a blind agent as accurate
without saying so. In tool mode these are the final answer's part of the reward, without a tool
call (``tool`` and ``equivalence`` pay 0 to a policy that calls no solver).
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from ..envs.logic import FAMILIES, QUERIES
from ..envs.logic.family import family_class
from .agents import make_agent
from .blind import constant_baseline, draw
from .report import build_report
from .runner import EvalConfig, run_eval
from .tables import format_table

__all__ = ["run_logic_suite", "suite_markdown", "blind_cell", "MODES"]

MODES = ("single", "tool")


def _cells(mode: str, families: Sequence[str], queries: Sequence[str],
           solvers: Sequence[str] | None) -> list[tuple[str, str, str | None]]:
    return [(f, q, s) for f in families for q in queries
            for s in (family_class(f).solvers if mode == "tool" else (None,)) if solvers is None or s in solvers]


def blind_cell(family: str, query: str, instances: int, instance_seed: int = 0) -> dict[str, Any]:
    """The blind baseline of one cell, on the instances its eval run poses (``reset(seed=
    instance_seed + i)``, ``i < instances``): the chance line's reward, and the best constant
    answer's text, accuracy and reward there."""
    problem = family_class(family)(query=query)
    insts = draw(problem, problem.Knobs.make(), range(instance_seed, instance_seed + instances))
    base = constant_baseline(problem, insts)
    return {"chance_reward": base.chance, "constant_answer": base.answer, "constant_accuracy": base.share,
            "constant_reward": base.reward}


def run_logic_suite(agent: str, out: str | Path, *, mode: str = "single", instances: int = 10,
                    families: Sequence[str] | None = None, queries: Sequence[str] | None = None,
                    solvers: Sequence[str] | None = None, temperature: float | None = None, max_new_tokens: int = 256, progress: bool = True,
                    agent_object: Any = None) -> dict[str, Any]:
    """Evaluate ``agent`` (a spec, or ``agent_object``) on every cell into ``out``; returns the
    summary written to ``out/logic_suite.json``. ``solvers`` (tool mode): only these of each
    family's fitting solvers (a family none of them fits has no cell)."""
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
    families = list(FAMILIES) if families is None else list(families)
    queries = list(QUERIES) if queries is None else list(queries)
    bad = [f for f in families if f not in FAMILIES] + [q for q in queries if q not in QUERIES]
    if bad:
        raise ValueError(f"unknown families or queries {bad}; the families are {sorted(FAMILIES)}, "
                         f"the queries {list(QUERIES)}")
    if solvers is not None:
        if mode != "tool":
            raise ValueError("solvers= selects tool-mode cells; the single turn has no solver")
        known = sorted({s for f in FAMILIES for s in family_class(f).solvers})
        if bad := [s for s in solvers if s not in known]:
            raise ValueError(f"unknown solvers {bad}; the solvers are {known}")
    out = Path(out)
    shared = agent_object if agent_object is not None else make_agent(agent, temperature=temperature,
                                                                      max_new_tokens=max_new_tokens)
    rows = []
    blind: dict[tuple[str, str], dict[str, Any]] = {}  # a cell's blind baseline is its solvers' too
    for family, query, solver in _cells(mode, families, queries, solvers):
        kwargs: dict[str, Any] = {"family": family, "query": query}
        if mode == "tool":
            kwargs.update(mode="tool", solver=solver)
        cell = out / family / query / (solver or "")
        cfg = EvalConfig("SolverLogic-v0", agent=agent, env_kwargs=kwargs, instances=instances,
                         temperature=temperature, max_new_tokens=max_new_tokens)
        rep = build_report(run_eval(cfg, cell, agent=shared, progress=progress))
        if (family, query) not in blind:
            blind[family, query] = blind_cell(family, query, instances)
        m = rep["overall"]["metrics"]["pass@1"]
        rows.append({"family": family, "category": FAMILIES[family][1], "query": query, "solver": solver or "-",
                     "instances": rep["instances"], "accuracy": m["mean"], "se": m["se_over_instances"],
                     "reward": rep["overall"]["mean_reward"], "run": str(cell.relative_to(out)),
                     **blind[family, query]})
    categories = {}
    for cat in dict.fromkeys(r["category"] for r in rows):
        accs = [r["accuracy"] for r in rows if r["category"] == cat]
        categories[cat] = float(np.mean(accs))
    summary = {"agent": agent, "mode": mode, "instances": instances, "cells": rows, "categories": categories,
               "overall": float(np.mean([r["accuracy"] for r in rows])) if rows else None}
    out.mkdir(parents=True, exist_ok=True)
    (out / "logic_suite.json").write_text(json.dumps(summary, indent=2) + "\n")
    (out / "logic_suite.md").write_text(suite_markdown(summary))
    return summary


def suite_markdown(summary: dict[str, Any]) -> str:
    """The cells as a table (family, query, solver, accuracy ± SE, reward, and the blind baseline
    beside them: the chance line's reward, the best constant's accuracy and reward) and the
    category means."""
    cells = [{**r, "acc": f"{r['accuracy']:.3f} ± {r['se']:.3f}",
              "chance": "-" if r.get("chance_reward") is None else f"{r['chance_reward']:.3f}",
              "const": f"{r['constant_accuracy']:.3f} / {r['constant_reward']:.3f}"} for r in summary["cells"]]
    lines = [f"# Synthetic-Logic / {summary['agent']} ({'single turn' if summary['mode'] == 'single' else 'tool mode'}, {summary['instances']} instances per cell)",
             "", format_table(cells, [("family", "family", "s"), ("category", "category", "s"), ("query", "query", "s"),
                                      ("solver", "solver", "s"), ("acc", "pass@1 ± SE", "s"),
                                      ("reward", "reward", ".3f"), ("chance", "chance reward", "s"),
                                      ("const", "best constant acc / reward", "s")]),
             "", "Per category (mean over its cells): "
             + ", ".join(f"{k} {v:.3f}" for k, v in summary["categories"].items())
             + (f"; all {summary['overall']:.3f}" if summary["overall"] is not None else ""),
             "", "Blind baseline, on each cell's own instances: the chance line (a uniform guess's mean reward) "
             "and the best constant answer (one answer text given to every instance; its accuracy and reward). "
             "An agent at or below them has not shown that it reads the problem."
             + (" In tool mode they are the final answer's part, without a tool call." if summary["mode"] == "tool" else "")]
    return "\n".join(lines) + "\n"
