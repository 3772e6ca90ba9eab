"""Every solvergym environment id, the problem and modes behind it; importing solvergym registers them.

``gym.make("SolverSAT-v0", n=3, k=5, l=13)`` works after ``import solvergym``, and
``gym.make("solvergym:SolverSAT-v0")`` works without it (Gymnasium imports the module before the
":" and that import registers the ids). An id names a problem and the modes it offers; everything
else listed about it is derived from the problem and its modes, never copied here: the
difficulty knobs and their defaults (the problem's ``Knobs``), the settings (the problem's
constructor, the mode's capability), the mode's own keywords, and the reward components an
episode reports (:func:`components` builds the env and asks it). Ids are never renamed; new ones
are added here. A family of one's own registers with
:func:`solvergym.envs.problem.register_problem`.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import gymnasium as gym

from .envs import modes as env_modes
from .envs import problem

__all__ = ["EnvEntry", "ENVS", "PROBLEMS", "register_all", "env_ids", "get_entry", "default_kwargs", "knobs",
           "modes", "tool_tasks", "components", "listing"]

_SINGLE = "solvergym.envs.modes.single:SingleTurnEnv"
_TOOL = "solvergym.envs.modes.tool:SolverToolEnv"
_ANY_MODE = "solvergym.envs.modes:make_env"


@dataclass(frozen=True)
class EnvEntry:
    """One id: the problem it poses (``None``: the tool env, whose ``task`` names it), the modes
    it offers (the first is the default), and the words a listing shows."""

    id: str
    problem: str | None
    modes: tuple[str, ...]
    description: str  # one line
    paper: str

    @property
    def entry_point(self) -> str:
        if self.problem is None:
            return _TOOL
        return _SINGLE if self.modes == ("single",) else _ANY_MODE

    @property
    def kwargs(self) -> dict[str, Any]:
        """What Gymnasium passes the entry point before the caller's keywords."""
        if self.problem is None:
            return {}
        return {"problem": self.problem} if self.modes == ("single",) else {"problem": self.problem,
                                                                             "mode": self.modes[0]}


ENVS: tuple[EnvEntry, ...] = (
    EnvEntry("SolverSAT-v0", "sat", ("single",),
             "SATURN (n,k,l)-SAT: give a satisfying assignment as a bit string in \\boxed{}", "SATURN §2.2-2.4"),
    EnvEntry("SolverSATBench-v0", "sat-bench", ("single",),
             "SAT-Bench-style natural-language SAT decision: yes / no / idk in ```answer```",
             "SAT-RL §3.2, §3.4 eq. 1"),
    EnvEntry("SolverTool-v0", None, ("tool",),
             "SAT-RL multi-turn solver tool use over any problem with a tool mode (task=...): <tool_call> programs "
             "run in the sandbox, one solver sampled per instance and named in the App. C prompt",
             "SAT-RL §3.4, App. C, App. E.1"),
    EnvEntry("SolverZebra-v0", "zebra", ("trace", "step"),
             "Zebra puzzles with Spring's step-verified process reward (trace or step mode)",
             "Spring §3.1, §4.1-4.3, App. A.1, E.1"),
    EnvEntry("SolverKnights-v0", "knights", ("trace", "step"),
             "Knights & Knaves with Spring's step-verified process reward (trace or step mode)",
             "Spring §4, App. A.3"),
    EnvEntry("SolverLSAT-v0", "lsat", ("trace", "step"),
             "AR-LSAT-style games with Spring's step-verified process reward (trace or step mode)",
             "Spring §4, App. A.2, E.2"),
    EnvEntry("SolverOR-v0", "or", ("single",),
             "SIRL optimisation modelling: <think><model><python>; the program runs in the sandbox, the objective "
             "is captured from the solver (max_turns > 1: a program that did not run comes back for revision)",
             "SIRL §3.2-3.3, §10, eq. 6"),
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
            gym.register(id=e.id, entry_point=e.entry_point, kwargs=e.kwargs)


def env_ids() -> list[str]:
    return [e.id for e in ENVS]


def get_entry(env_id: str) -> EnvEntry:
    for e in ENVS:
        if e.id == env_id or f"solvergym:{e.id}" == env_id:
            return e
    raise KeyError(f"unknown solvergym env {env_id!r}; known: {env_ids()}")


def modes(env_id: str) -> tuple[str, ...]:
    """The modes ``env_id`` offers (``mode=``), its default first."""
    return get_entry(env_id).modes


def tool_tasks() -> list[str]:
    """Every registered problem with a tool mode (``SolverTool-v0(task=...)``)."""
    return [name for name in sorted(problem.PROBLEMS) if getattr(problem.get_problem(name), "tool", None)]


def _problem_of(env_id: str) -> str:
    e = get_entry(env_id)
    if e.problem is not None:
        return e.problem
    return env_modes.SolverToolEnv.own_kwargs()["task"]


def default_kwargs(env_id: str) -> dict[str, Any]:
    """Every keyword argument ``gym.make(env_id, ...)`` takes and its default: the problem's
    knobs and settings, the modes' capability settings and the modes' own keywords (a keyword
    whose default differs between the id's modes is listed as ``None``: the mode's own default);
    ``mode`` where the id offers several. For ``SolverTool-v0`` those of its default task."""
    e = get_entry(env_id)
    out: dict[str, Any] = {}
    for mode in e.modes:
        for key, value in env_modes.mode_class(mode).kwargs_defaults(_problem_of(env_id)).items():
            out[key] = None if key in out and out[key] != value else value
    if len(e.modes) > 1:
        out["mode"] = e.modes[0]
    return out


def knobs(env_id: str) -> dict[str, Any]:
    """The env's difficulty knobs and their defaults (its problem's ``Knobs`` dataclass)."""
    return problem.get_problem(_problem_of(env_id)).Knobs.defaults()


def components(env_id: str, mode: str | None = None, **kwargs: Any) -> tuple[str, ...]:
    """The reward components an episode of ``gym.make(env_id, mode=mode, **kwargs)`` reports
    (``SolverTool-v0``: give ``task=``), read off the env itself."""
    e = get_entry(env_id)
    if mode is not None and len(e.modes) > 1:
        kwargs["mode"] = mode
    env = gym.make(e.id, **kwargs).unwrapped
    try:
        return tuple(env.components)
    finally:
        env.close()


def listing() -> list[dict[str, Any]]:
    """What ``solvergym list`` prints, per id: its description and paper, its knobs and other
    keywords, and per mode (``SolverTool-v0``: per task) the reward components."""
    out = []
    for e in ENVS:
        kw = default_kwargs(e.id)
        knob_defaults = knobs(e.id)
        if e.problem is None:
            rewards = {f"task={t}": components(e.id, task=t) for t in tool_tasks()}
        else:
            rewards = {f"mode={m}" if len(e.modes) > 1 else m: components(e.id, mode=m) for m in e.modes}
        out.append({"id": e.id, "description": e.description, "paper": e.paper, "modes": list(e.modes),
                    "knobs": knob_defaults, "keywords": {k: v for k, v in kw.items() if k not in knob_defaults},
                    "components": {k: list(v) for k, v in rewards.items()}})
    return out
