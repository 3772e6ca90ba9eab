"""Every solvergym environment id, the problem and modes behind it; importing solvergym registers them.

``gym.make("SolverSAT-v0", n=3, k=5, l=13)`` works after ``import solvergym``, and
``gym.make("solvergym:SolverSAT-v0")`` works without it (Gymnasium imports the module before the
":" and that import registers the ids). An id names a problem and the modes it offers; everything
else listed about it is derived from the problem and its modes, never copied here: the
difficulty knobs and their defaults (the problem's ``Knobs``), the settings (the problem's
constructor, the mode's capability), the mode's own keywords, and the reward components an
episode reports (:func:`components` builds the env and asks it). Ids are never renamed; new ones
are added here. A family of one's own registers with
:func:`solvergym.envs.problem.register_problem` (``env_id=`` gives it an id): every function here
sees such an id too, its entry derived from what Gymnasium's registry holds for it (the
``problem`` keyword names the problem, whose capabilities give the modes).

The command line takes an id through :func:`resolve_env_id`: any id whose entry point is a
solvergym mode, in Gymnasium's ``module:Env-v0`` form too (the module is imported first, as
``gym.make`` does, with the working directory on ``sys.path`` as ``python -m`` puts it there:
:func:`import_user_module`); anything else is a one-line ``ValueError`` with a "did you mean".
An id read from data (an adapter's dataset row) is resolved with ``imports=False``: it names a
registered id and never imports a module; modules are imported only where the user names them
(``--import``, an id given to a command or to an adapter's constructor).
"""
from __future__ import annotations

import importlib
import os
import sys
from dataclasses import dataclass
from typing import Any

import gymnasium as gym

from .envs import modes as env_modes
from .envs import problem
from .envs.logic import FAMILIES as LOGIC_FAMILIES
from .suggest import did_you_mean

__all__ = ["EnvEntry", "make_logic_env", "ENVS", "PROBLEMS", "register_all", "env_ids", "solvergym_ids", "is_solvergym_spec",
           "import_user_module", "resolve_env_id", "UnknownEnv", "get_entry", "default_kwargs", "knobs", "modes", "tool_tasks",
           "components", "listing"]

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
    #: an entry point of its own that takes the problem by a keyword (``SolverLogic-v0``'s
    #: ``family=``; ``problem`` is then the default one)
    entry: str | None = None
    #: the keyword of :attr:`entry` that names the problem
    selector: str | None = None

    @property
    def entry_point(self) -> str:
        if self.entry is not None:
            return self.entry
        if self.problem is None:
            return _TOOL
        return _SINGLE if self.modes == ("single",) else _ANY_MODE

    @property
    def kwargs(self) -> dict[str, Any]:
        """What Gymnasium passes the entry point before the caller's keywords."""
        if self.problem is None or self.entry is not None:
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
    EnvEntry("SolverLogic-v0", "clique", ("single", "tool"),
             "Synthetic-Logic NP-hard families (family=...) as decision / solving / counting (query=...), "
             "ground-truth programs for every solver that fits", "SAT-RL §3.1-3.2, §3.4, App. B.1",
             entry="solvergym.registry:make_logic_env", selector="family"),
)


#: the built-in problems (name -> "module:class"), which every mode can pose
PROBLEMS = {
    "sat": "solvergym.envs.sat.problem:SATProblem",
    "sat-bench": "solvergym.envs.sat.problem:SATBenchProblem",
    "zebra": "solvergym.envs.zebra.problem:ZebraProblem",
    "knights": "solvergym.envs.knights.problem:KnightsProblem",
    "lsat": "solvergym.envs.lsat.problem:LSATProblem",
    "or": "solvergym.envs.opt.problem:ORProblem",
    **{name: path for name, (path, _) in LOGIC_FAMILIES.items()},
}


def make_logic_env(family: str = "clique", *knob_args: Any, mode: str = "single", **kwargs: Any):
    """``SolverLogic-v0``'s entry point: the Synthetic-Logic family ``family`` in ``mode``
    (``gym.make("SolverLogic-v0", family="clique", query="counting", n=7)``; ``mode="tool"`` is
    ``SolverTool-v0(task=family)``); the other keywords are the family's knobs and settings. A
    family that does not exist is a ``ValueError`` that lists the valid ones (a query, the
    problem's own setting, is checked by the problem)."""
    if family not in LOGIC_FAMILIES:
        raise ValueError(f"unknown Synthetic-Logic family {family!r}; the families are {sorted(LOGIC_FAMILIES)}")
    if "task" in kwargs:
        raise TypeError("SolverLogic-v0 names the family with family=, not task=")
    return env_modes.make_env(family, *knob_args, mode=mode, **kwargs)


make_logic_env.metadata = env_modes.ProblemEnv.metadata  # gymnasium.make reads the entry point's render modes


def register_all() -> None:
    """Register the built-in problems and every id with Gymnasium (idempotent)."""
    for name, path in PROBLEMS.items():
        problem.PROBLEMS.setdefault(name, path)
    for e in ENVS:
        if e.id not in gym.registry:
            gym.register(id=e.id, entry_point=e.entry_point, kwargs=e.kwargs)


def env_ids() -> list[str]:
    """The built-in ids (:data:`ENVS`), in their order."""
    return [e.id for e in ENVS]


def is_solvergym_spec(spec: Any) -> bool:
    """Whether a Gymnasium ``EnvSpec``'s entry point is one of solvergym's modes (a built-in id, or
    one :func:`~solvergym.envs.problem.register_problem` registered), given by path or as the object."""
    ep = spec.entry_point
    where = ep if isinstance(ep, str) else f"{getattr(ep, '__module__', '')}:{getattr(ep, '__qualname__', '')}"
    return where.startswith("solvergym.envs.modes") or where in {e.entry for e in ENVS if e.entry}


def solvergym_ids() -> list[str]:
    """Every id in Gymnasium's registry that a solvergym mode serves: the built-ins in their
    order, then the ones registered since (a family of one's own), in registration order."""
    builtin = env_ids()
    return builtin + [i for i, spec in gym.registry.items() if i not in builtin and is_solvergym_spec(spec)]


def import_user_module(name: str) -> Any:
    """Import the user's module ``name`` (``--import``, an ``--env module:Env-v0``, an agent's
    ``MODULE:NAME``) with the working directory on ``sys.path``, as ``python -m`` puts it there,
    so that a module beside the user needs no ``PYTHONPATH``. A module that is not found is a
    one-line ``ValueError``; an error raised while the module runs is the user's and propagates
    with its traceback."""
    if not name or not all(part.isidentifier() for part in name.split(".")):
        raise ValueError(f"{name!r} is not a module name (a dotted Python name such as mymodule or pkg.mod)")
    cwd = os.getcwd()
    if cwd not in sys.path and "" not in sys.path:
        sys.path.insert(0, cwd)
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as e:
        if e.name is None or not (name == e.name or name.startswith(e.name + ".")):
            raise  # a module that the user's module imports is missing: the user's traceback
        raise ValueError(f"no module named {e.name!r} (looked in the working directory {cwd} and on sys.path)") from None


class UnknownEnv(KeyError, ValueError):
    """An env id no solvergym mode serves: a ``KeyError`` as :func:`get_entry`'s, and a ``ValueError``
    as the bad input front ends report in one line (printed as its message, unquoted)."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


def resolve_env_id(env_id: str, *, imports: bool = True) -> str:
    """The registered id that ``env_id`` names, after importing its module where it is written
    ``module:Env-v0`` (Gymnasium's form; ``solvergym:SolverSAT-v0`` too). A ``ValueError`` in one
    line for an id that is not registered (with the closest known ids) or that no solvergym
    mode serves (:class:`UnknownEnv`).

    ``imports=False`` is for an id read from data (a dataset row): nothing is imported, so a row
    cannot run code (``this:SolverSAT-v0`` would print the Zen of Python; a row naming a module
    in the working directory would run it). ``module:Env-v0`` is then accepted only where the
    module is already imported, which is the user's doing (``--import``, an adapter's
    constructor); otherwise it is refused, saying where to import it."""
    if not isinstance(env_id, str) or not env_id.strip():
        raise UnknownEnv(f"an env id is a non-empty string such as SolverSAT-v0, got {env_id!r}")
    module, sep, name = env_id.strip().rpartition(":")
    if sep and not imports:
        if module not in sys.modules:
            raise UnknownEnv(f"{env_id!r} names the module {module!r}, which is not imported, and an id read "
                             f"from data never imports one: import it where you build the adapter (--import "
                             f"{module}, or {env_id} given to the adapter's constructor), or name a registered id")
    elif sep:
        try:
            import_user_module(module)
        except ValueError as e:
            raise UnknownEnv(f"{env_id!r}: {e}") from None
    spec = gym.registry.get(name)
    known = solvergym_ids()
    if spec is not None and is_solvergym_spec(spec):
        return name
    if spec is not None:
        raise UnknownEnv(f"{env_id!r} is a Gymnasium env but not a solvergym one (its entry point is "
                         f"{spec.entry_point!r}); solvergym ids: {', '.join(known)}")
    close = did_you_mean(name, known, cutoff=0.85, ignore_case=True)  # SolverSat-v0 is a slip of SolverSAT-v0's
    hint = f" ({close})" if close else ""
    own = "" if sep else " (a family of your own: --import MODULE, or the id as MODULE:ENV-ID)"
    raise UnknownEnv(f"unknown env {env_id!r}{hint}; known: {', '.join(known)}{own}")


def _derived_entry(env_id: str, spec: Any) -> EnvEntry:
    """The entry of an id registered outside :data:`ENVS`: its problem is the ``problem`` keyword
    Gymnasium passes the entry point (``register_problem(..., env_id=...)``), its modes the
    problem's (the registered ``mode`` first)."""
    kwargs = spec.kwargs or {}
    name = kwargs.get("problem")
    if not isinstance(name, str):
        raise KeyError(f"{env_id!r} names no registered problem (its problem keyword is {name!r})")
    factory = problem.get_problem(name)
    offered = env_modes.modes_of(name)
    first = kwargs.get("mode", offered[0])
    doc = (getattr(factory, "__doc__", None) or "").strip().splitlines()
    words = doc[0] if doc else f"problem {name!r} ({getattr(factory, '__module__', '?')})"
    return EnvEntry(env_id, name, (first, *(m for m in offered if m != first)), words, "")


def get_entry(env_id: str) -> EnvEntry:
    """The entry of ``env_id`` (``solvergym:`` prefix allowed): a built-in's, or one derived for an
    id registered since (:func:`_derived_entry`). ``KeyError`` for any other id."""
    for e in ENVS:
        if e.id == env_id or f"solvergym:{e.id}" == env_id:
            return e
    spec = gym.registry.get(env_id.rpartition(":")[2] if isinstance(env_id, str) else env_id)
    if spec is not None and is_solvergym_spec(spec):
        return _derived_entry(spec.id, spec)
    raise KeyError(f"unknown solvergym env {env_id!r}; known: {solvergym_ids()}")


def modes(env_id: str) -> tuple[str, ...]:
    """The modes ``env_id`` offers (``mode=``), its default first."""
    return get_entry(env_id).modes


def tool_tasks() -> list[str]:
    """Every registered problem with a tool mode (``SolverTool-v0(task=...)``): a ``tool``
    capability that names at least one solver (one without is refused by the env)."""
    tools = {name: getattr(problem.get_problem(name), "tool", None) for name in sorted(problem.PROBLEMS)}
    return [name for name, tool in tools.items() if tool is not None and getattr(tool, "solvers", None)]


def _problem_of(env_id: str) -> str:
    e = get_entry(env_id)
    if e.problem is not None:
        return e.problem
    return env_modes.SolverToolEnv.own_kwargs()["task"]


def default_kwargs(env_id: str) -> dict[str, Any]:
    """Every keyword argument ``gym.make(env_id, ...)`` takes and its default: the problem's
    knobs and settings, the modes' capability settings and the modes' own keywords (a keyword
    whose default differs between the id's modes is listed as ``None``: the mode's own default; so
    is, for a family's own id, a mode's own keyword that another of its modes does not take, such
    as the tool mode's ``max_tool_output_chars``, which the single turn refuses);
    ``mode`` where the id offers several. For ``SolverTool-v0`` those of its default task."""
    e = get_entry(env_id)
    out: dict[str, Any] = {}
    derived = e.id not in env_ids() or e.entry is not None  # its modes are the problem's, as a family's own id
    own = [set(env_modes.mode_class(mode).own_kwargs()) for mode in e.modes] if derived else []
    for mode in e.modes:
        for key, value in env_modes.mode_class(mode).kwargs_defaults(_problem_of(env_id)).items():
            if key == "task" and e.problem is not None:
                continue  # a family's own id poses its problem in tool mode: task is SolverTool-v0's
            only_some = any(key in o for o in own) and not all(key in o for o in own)
            out[key] = None if only_some or (key in out and out[key] != value) else value
    if len(e.modes) > 1:
        out["mode"] = e.modes[0]
    if e.selector is not None:
        out = {e.selector: e.problem, **out}
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
    for e in map(get_entry, solvergym_ids()):
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
