"""Tasks that ``SolverTool-v0`` wraps: what the problem is, how its answer is scored, what its
ground-truth formula is and how the oracle solves it with each solver (SAT-RL §3.2-3.4).

A task is a :class:`ToolTask`. Two ship now: ``sat-bench`` (the SAT-Bench-style yes/no decision of
``SolverSATBench-v0``, the RL data of SAT-RL §3.2) and ``sat`` (SATURN's planted (n,k,l)-SAT of
``SolverSAT-v0``, answered with an assignment). The Synthetic-Logic families (App. B.1, a later
issue) plug in by subclassing :class:`ToolTask` and calling :func:`register_task`; the env needs
nothing else from them. A task without a Boolean ground truth returns ``None`` from
:meth:`ToolTask.truth` and its episodes get ``equivalence`` 0 with that reason.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, ClassVar

import numpy as np

from ..base import Instance
from ..parsing import DECISION_WORDS, final_answer_block
from ..sat.equivalence import Truth, decision_truth, saturn_truth
from ..sat.verify import DEFAULT_EPS, SATRL_FORMAT, correctness_reward, decision_reward, first_violated, parse_bitstring
from .programs import cnf_program

__all__ = ["AnswerScore", "ToolTask", "SATBenchTask", "SATTask", "TASKS", "register_task", "make_task"]


@dataclass
class AnswerScore:
    """A final answer's ``format`` and ``correct`` components (SAT-RL §3.4, eq. 1)."""

    components: dict[str, float]
    answered: bool  # a final answer block parsed
    correct: bool
    reason: str
    answer: str | None = None


class ToolTask:
    """One family of problems that the tool env can pose. Subclasses set the class attributes and
    implement the methods; difficulty knobs are plain attributes named in ``difficulty_keys``."""

    name: ClassVar[str] = ""
    instance_cls: ClassVar[type[Instance]] = Instance
    difficulty_keys: ClassVar[tuple[str, ...]] = ()
    #: what the answer looks like, for the prompt
    answer_hint: ClassVar[str] = "```answer ...```"
    #: words a bare fence may hold as the final answer (``SATBenchTask``: ```yes``` / ```no```)
    bare_answers: ClassVar[tuple[str, ...]] = ()

    def __init__(self, eps: float = DEFAULT_EPS):
        self.eps = float(eps)

    # -- instances ----------------------------------------------------------------------------
    def generate(self, rng: np.random.Generator) -> Instance:
        raise NotImplementedError

    def coerce(self, obj: Any) -> Instance:
        return self.instance_cls.coerce(obj)

    def describe(self, inst: Instance) -> dict[str, Any]:
        return self.difficulty

    @property
    def difficulty(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self.difficulty_keys}

    def set_difficulty(self, **kwargs: Any) -> None:
        unknown = set(kwargs) - set(self.difficulty_keys)
        if unknown:
            raise ValueError(f"unknown difficulty keys {sorted(unknown)}; this task takes {list(self.difficulty_keys)}")
        new = {**self.difficulty, **kwargs}
        self.check_difficulty(**new)
        for k, v in new.items():
            setattr(self, k, v)

    def check_difficulty(self, **kwargs: Any) -> None:
        """Raise ``ValueError`` for an invalid setting."""

    # -- the prompt ---------------------------------------------------------------------------
    def problem(self, inst: Instance) -> str:
        raise NotImplementedError

    def variable_mapping(self, inst: Instance) -> str | None:
        """The "Variable Mapping" block of SAT-RL App. C, or ``None``."""
        return None

    def naming_hint(self, inst: Instance) -> str | None:
        return None

    def reset_info(self, inst: Instance) -> dict[str, Any]:
        return {}

    # -- scoring ------------------------------------------------------------------------------
    def score(self, inst: Instance, text: str) -> AnswerScore:
        raise NotImplementedError

    def truth(self, inst: Instance) -> Truth | None:
        """The ground-truth Boolean formula for the equivalence reward, or ``None``."""
        return None

    # -- scripted agents ----------------------------------------------------------------------
    def oracle_program(self, inst: Instance, solver: str) -> str:
        raise NotImplementedError

    def oracle_answer(self, inst: Instance, tool_stdout: str | None) -> str:
        raise NotImplementedError

    def oracle_reasoning(self, inst: Instance, tool_stdout: str | None) -> str:
        return "The solver's output settles the question."

    def random_answer(self, inst: Instance, rng: np.random.Generator) -> str:
        raise NotImplementedError


# ----------------------------------------------------------------------------- SAT-Bench
class SATBenchTask(ToolTask):
    """SAT-Bench-style decision (``SolverSATBench-v0``'s instances and rewards)."""

    name = "sat-bench"
    difficulty_keys = ("dims", "num_clauses")
    answer_hint = "```answer yes``` or ```answer no```"
    #: SAT-RL's own transcripts end with a bare ```yes``` (App. E.1); ``score`` reads it as
    #: ```answer yes``` (:func:`~solvergym.envs.sat.verify.parse_decision`)
    bare_answers = DECISION_WORDS

    def __init__(self, dims=(3, 2, 2), num_clauses: int = 8, *, widths=(2, 3), sat_ratio: float = 0.5,
                 eps: float = DEFAULT_EPS):
        from ..sat.env import SATBenchEnv

        super().__init__(eps)
        # the SAT-Bench env validates the knobs and owns the generator; one is kept for both
        self._env = SATBenchEnv(dims=dims, num_clauses=num_clauses, widths=widths, sat_ratio=sat_ratio, eps=eps)
        self.instance_cls = self._env.instance_cls
        self.dims, self.num_clauses = list(self._env.dims), self._env.num_clauses
        self.widths, self.sat_ratio = tuple(widths), float(sat_ratio)

    def check_difficulty(self, dims, num_clauses):
        self._env._check_difficulty(dims=[int(d) for d in dims], num_clauses=num_clauses)

    def set_difficulty(self, **kwargs):
        if "dims" in kwargs:
            kwargs["dims"] = [int(d) for d in kwargs["dims"]]
        super().set_difficulty(**kwargs)
        self._env.set_difficulty(dims=self.dims, num_clauses=self.num_clauses)

    def generate(self, rng):
        return self._env.generate(rng)

    def coerce(self, obj):
        return self._env.coerce_instance(obj)

    def describe(self, inst):
        return {"dims": list(inst.dims), "num_clauses": len(inst.clauses)}

    def problem(self, inst):
        parts = [f"Scenario: {inst.scenario}", "", "Conditions:"]
        parts += [f"{i}. {c}" for i, c in enumerate(inst.conditions, 1)]
        parts += ["", f"Question: {inst.question}"]
        return "\n".join(parts)

    def variable_mapping(self, inst):
        return "\n".join(f"{name}: {meaning}" for name, meaning in inst.mapping.items())

    def naming_hint(self, inst):
        return "In your program, name the variable x(i,j,k) x_i_j_k."

    def reset_info(self, inst):
        return {"mapping": dict(inst.mapping), "variables": inst.variables}

    def score(self, inst, text):
        v = decision_reward(text, inst.satisfiable, eps=self.eps)
        return AnswerScore(v.components, v.answered, v.correct, v.reason, v.answer)

    def truth(self, inst):
        return decision_truth(inst)

    def oracle_program(self, inst, solver):
        return cnf_program(solver, inst.clauses, inst.variables,
                           comments=[f"condition {i}" for i in range(1, len(inst.clauses) + 1)])

    def oracle_answer(self, inst, tool_stdout):
        return "```answer\n" + ("yes" if inst.satisfiable else "no") + "\n```"

    def oracle_reasoning(self, inst, tool_stdout):
        word = "sat" if inst.satisfiable else "unsat"
        meaning = ("some assignment satisfies every condition, so they can all hold at once"
                   if inst.satisfiable else "no assignment satisfies every condition, so they cannot all hold")
        return f"The solver reports {word}: {meaning}."

    def random_answer(self, inst, rng):
        return "```answer\n" + ("yes" if rng.random() < 0.5 else "no") + "\n```"


# ----------------------------------------------------------------------------- SATURN
class SATTask(ToolTask):
    """SATURN's (n,k,l)-SAT (``SolverSAT-v0``'s instances), answered as SAT-RL asks: a k-bit
    assignment in ```` ```answer ...``` ```` (``idk`` allowed). ``correct`` is 1 for any
    satisfying assignment, 0 for ``idk``, ``-1 - eps`` otherwise (eq. 1 with two choices: guessing
    must not pay)."""

    name = "sat"
    difficulty_keys = ("n", "k", "l")

    def __init__(self, n: int = 3, k: int = 5, l: int = 5, *, max_chance_success: float | None = None,  # noqa: E741
                 eps: float = DEFAULT_EPS):
        from ..sat.env import SATEnv

        super().__init__(eps)
        self._env = SATEnv(n=n, k=k, l=l, max_chance_success=max_chance_success)
        self.instance_cls = self._env.instance_cls
        self.n, self.k, self.l = self._env.n, self._env.k, self._env.l

    @property
    def answer_hint(self):  # type: ignore[override]
        return f"```answer <{self.k} bits>``` (the values of the variables in order, 1 = true)"

    def check_difficulty(self, n, k, l):  # noqa: E741
        self._env._check_difficulty(n=n, k=k, l=l)

    def set_difficulty(self, **kwargs):
        super().set_difficulty(**kwargs)
        self._env.set_difficulty(n=self.n, k=self.k, l=self.l)

    def generate(self, rng):
        return self._env.generate(rng)

    def coerce(self, obj):
        return self._env.coerce_instance(obj)

    def describe(self, inst):
        return {"n": inst.n, "k": inst.k, "l": inst.l}

    def _names(self, inst):
        from ..sat.generator import var_name

        return [var_name(i) for i in range(inst.k)]

    def problem(self, inst):
        names = self._names(inst)
        return (
            f"Find an assignment of the {inst.k} Boolean variables {', '.join(names)} that satisfies "
            f"every clause of this CNF formula. Clauses are separated by \" & \"; within a clause the "
            f"literals are joined by OR, and \"!\" negates a variable.\n\n{inst.clause_string}\n\n"
            f"Answer with the values of {', '.join(names)} in this order as a string of {inst.k} bits "
            f"(1 = true), e.g. ```answer {'1' * inst.k}```."
        )

    def variable_mapping(self, inst):
        return "\n".join(f"{name}: variable {i} (DIMACS {i})" for i, name in enumerate(self._names(inst), 1))

    def score(self, inst, text):
        block = final_answer_block(text)
        if block is None:
            return AnswerScore({"format": 0.0, "correct": 0.0}, False, False,
                               "no ```answer ...``` or ```idk``` block found")
        kind, body = block
        if kind == "idk":
            return AnswerScore({"format": SATRL_FORMAT, "correct": 0.0}, True, False, "abstained (idk)", "idk")
        bits, why = parse_bitstring(body.strip().strip("`'\""), inst.k)
        if bits is None:
            return AnswerScore({"format": 0.0, "correct": 0.0}, False, False, why.replace("boxed", "answer"))
        bad = first_violated(inst.clauses, bits)
        ok = bad is None
        reason = "assignment satisfies every clause" if ok else \
            f"assignment {bits} falsifies clause {bad + 1} of {len(inst.clauses)}"
        corr = correctness_reward("correct" if ok else "incorrect", eps=self.eps)
        return AnswerScore({"format": SATRL_FORMAT, "correct": corr}, True, ok, reason, bits)

    def truth(self, inst):
        return saturn_truth(inst)

    def oracle_program(self, inst, solver):
        return cnf_program(solver, inst.clauses, self._names(inst), model_of=list(range(1, inst.k + 1)))

    def _model_from(self, inst, tool_stdout):
        lines = (tool_stdout or "").split("\n")
        for line in lines:
            bits = line.strip()
            if len(bits) == inst.k and not set(bits) - {"0", "1"} and first_violated(inst.clauses, bits) is None:
                return bits
        return inst.solution

    def oracle_answer(self, inst, tool_stdout):
        return "```answer\n" + self._model_from(inst, tool_stdout) + "\n```"

    def oracle_reasoning(self, inst, tool_stdout):
        return (f"The solver reports sat and prints a model; the assignment {self._model_from(inst, tool_stdout)} "
                f"satisfies every clause.")

    def random_answer(self, inst, rng):
        return "```answer\n" + "".join(rng.choice(["0", "1"], size=inst.k)) + "\n```"


# ----------------------------------------------------------------------------- registry
TASKS: dict[str, Callable[..., ToolTask]] = {"sat-bench": SATBenchTask, "sat": SATTask}


def register_task(name: str, factory: Callable[..., ToolTask]) -> None:
    """Make ``SolverTool-v0(task=name, **kwargs)`` build ``factory(eps=..., **kwargs)`` (the env
    passes its ``eps`` for eq. 1's penalty; the other keyword arguments are the task's knobs)."""
    if not name or not callable(factory):
        raise ValueError("register_task needs a name and a callable")
    TASKS[name] = factory


def make_task(name: str, **kwargs: Any) -> ToolTask:
    if name not in TASKS:
        raise ValueError(f"unknown tool task {name!r}; known: {sorted(TASKS)}")
    task = TASKS[name](**kwargs)
    task.name = name
    return task
