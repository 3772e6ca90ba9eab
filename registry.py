"""Every solvergym environment id, its entry point and what it pays; importing solvergym registers them.

``gym.make("SolverSAT-v0", n=3, k=5, l=13)`` works after ``import solvergym``, and
``gym.make("solvergym:SolverSAT-v0")`` works without it (Gymnasium imports the module before the
":" and that import registers the ids). Difficulty knobs, their defaults and the problem's
settings are read from the entry point (its problem's ``Knobs`` dataclass and constructor, and
the mode's own keywords: :func:`knobs`, :func:`default_kwargs`), so there is one source of truth.
Ids are never renamed; new ones are added here (``docs/design.md`` lists the planned ones). A
family of one's own registers with :func:`solvergym.envs.problem.register_problem`.
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any

import gymnasium as gym

from .envs import problem

__all__ = ["EnvEntry", "ENVS", "register_all", "env_ids", "get_entry", "default_kwargs", "entry_class", "knobs"]


@dataclass(frozen=True)
class EnvEntry:
    id: str
    entry_point: str
    description: str  # one line
    task: str
    reward_components: tuple[str, ...]
    paper: str


#: Spring §4.3's terms, shared by the three step-verified logic families.
SPRING_COMPONENTS = ("parsed", "format", "accuracy", "novel", "consistency", "contra")

ENVS: tuple[EnvEntry, ...] = (
    EnvEntry(
        id="SolverSAT-v0",
        entry_point="solvergym.envs.sat.env:SATEnv",
        description="SATURN (n,k,l)-SAT: give a satisfying assignment as a bit string in \\boxed{}",
        task="planted random CNF, SATURN prompt; any model counts",
        reward_components=("format", "correct"),
        paper="SATURN §2.2-2.4",
    ),
    EnvEntry(
        id="SolverSATBench-v0",
        entry_point="solvergym.envs.sat.env:SATBenchEnv",
        description="SAT-Bench-style natural-language SAT decision: yes / no / idk in ```answer```",
        task="scenario + conditions over x(i,j,k); balanced, solver-certified SAT/UNSAT labels",
        reward_components=("format", "correct"),
        paper="SAT-RL §3.2, §3.4 eq. 1",
    ),
    EnvEntry(
        id="SolverTool-v0",
        entry_point="solvergym.envs.modes.tool:SolverToolEnv",
        description="SAT-RL multi-turn solver tool use: <tool_call> programs run in the sandbox; answer in ```answer```",
        task="SAT-Bench decision (task='sat-bench', default) or SATURN SAT (task='sat'); one solver of z3, pysmt, "
             "python-sat, ortools, sympy sampled per instance and named in the App. C prompt",
        reward_components=("format", "correct", "tool", "equivalence"),
        paper="SAT-RL §3.4, App. C, App. E.1",
    ),
    EnvEntry(
        id="SolverZebra-v0",
        entry_point="solvergym.envs.zebra.env:ZebraEnv",
        description="Zebra puzzles with Spring's step-verified process reward (trace or step mode)",
        task="N houses x M attributes, unique solution, minimal App. E.1 clue set; JSON answer per App. E.1",
        reward_components=SPRING_COMPONENTS,
        paper="Spring §3.1, §4.1-4.3, App. A.1, E.1",
    ),
    EnvEntry(
        id="SolverKnights-v0",
        entry_point="solvergym.envs.knights.env:KnightsEnv",
        description="Knights & Knaves with Spring's step-verified process reward (trace or step mode)",
        task="2-8 characters, unique solution; answer keys characters / syntactic_statements / reasoning / solution",
        reward_components=SPRING_COMPONENTS,
        paper="Spring §4, App. A.3",
    ),
    EnvEntry(
        id="SolverLSAT-v0",
        entry_point="solvergym.envs.lsat.env:LSATEnv",
        description="AR-LSAT-style games with Spring's step-verified process reward (trace or step mode)",
        task="ordering / grouping / assignment game, 5 options, exactly one correct; App. E.2's eight keys",
        reward_components=SPRING_COMPONENTS,
        paper="Spring §4, App. A.2, E.2",
    ),
    EnvEntry(
        id="SolverOR-v0",
        entry_point="solvergym.envs.opt.env:OREnv",
        description="SIRL optimisation modelling: <think><model><python>; the program runs in the sandbox, "
                    "the objective is captured from the solver",
        task="seeded word problems of eleven families (LP, IP, MILP with big-M, QP) with two-solver ground truth",
        reward_components=("format", "execution", "accuracy", "bonus"),
        paper="SIRL §3.2-3.3, §10, eq. 6",
    ),
)


#: the built-in problems (name -> "module:class"), which every mode can pose
PROBLEMS = {
    "sat": "solvergym.envs.sat.problem:SATProblem",
    "sat-bench": "solvergym.envs.sat.problem:SATBenchProblem",
    "zebra": "solvergym.envs.zebra.problem:ZebraProblem",
    "knights": "solvergym.envs.knights.problem:KnightsProblem",
    "lsat": "solvergym.envs.lsat.problem:LSATProblem",
    "or": "solvergym.envs.opt.problem:ORProblem",
}


def register_all() -> None:
    """Register the built-in problems and every id with Gymnasium (idempotent)."""
    for name, path in PROBLEMS.items():
        problem.PROBLEMS.setdefault(name, path)
    for e in ENVS:
        if e.id not in gym.registry:
            gym.register(id=e.id, entry_point=e.entry_point)


def env_ids() -> list[str]:
    return [e.id for e in ENVS]


def get_entry(env_id: str) -> EnvEntry:
    for e in ENVS:
        if e.id == env_id or f"solvergym:{e.id}" == env_id:
            return e
    raise KeyError(f"unknown solvergym env {env_id!r}; known: {env_ids()}")


def entry_class(env_id: str) -> type:
    module, _, name = get_entry(env_id).entry_point.partition(":")
    return getattr(importlib.import_module(module), name)


def default_kwargs(env_id: str) -> dict[str, Any]:
    """Every keyword argument ``gym.make(env_id, ...)`` takes and its default: the problem's
    knobs and settings and the mode's own keywords (the entry point's ``kwargs_defaults``)."""
    return entry_class(env_id).kwargs_defaults()


def knobs(env_id: str) -> dict[str, Any]:
    """The env's difficulty knobs and their defaults (its problem's ``Knobs`` dataclass)."""
    return entry_class(env_id).knobs_class().defaults()
