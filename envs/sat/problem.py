"""The SAT family's problems: SATURN's (n,k,l)-SAT (``sat``) and SAT-Bench-style decision
(``sat-bench``), on the problem contract (:mod:`solvergym.envs.problem`).

- ``sat`` (SATURN §2.2-2.4): a planted random CNF in SATURN's prompt; the answer is a k-bit
  assignment in the last ``\\boxed{}``; ``format`` -1 without a box, ``correct`` 1 for any
  satisfying assignment. In tool mode (SAT-RL §3.4) the same instances are answered as SAT-RL
  asks, in ```` ```answer <bits>``` ```` (``idk`` allowed), with eq. 1's penalty for a wrong one
  scaled to the chance a guess has, ``-p/(1-p) - eps`` (:class:`SATToolProblem`).
- ``sat-bench`` (SAT-RL §3.2, App. C, E.1): a CNF over ``x(i,j,...)`` told as a scenario with one
  condition per clause; yes / no / idk; ``format`` 0.1, ``correct`` 1 / 0 / ``-1 - eps``.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..problem import Gold, Knobs, Problem, Verdict
from ..parsing import DECISION_WORDS, final_answer_block
from ..sandbox import SOLVER_FAMILIES
from .cnf import count_models, first_violated, formula_key, var_name
from .datasets import decision_from_record, instance_from_saturn_record
from .decision import DecisionInstance, decision_instance
from .equivalence import decision_truth, saturn_truth
from .generator import SATInstance, difficulty, plant
from .programs import cnf_program
from .prompts import satbench_prompt, saturn_prompt
from .render import MAX_DIMS
from .verify import (
    DEFAULT_EPS,
    SATRL_FORMAT,
    SATURN_FORMAT,
    WRONG_PENALTIES,
    decision_reward,
    parse_bitstring,
    saturn_reward,
    wrong_assignment_reward,
)

__all__ = ["SATKnobs", "SATProblem", "SATToolProblem", "SATBenchKnobs", "SATBenchProblem"]


def _positive_int(name: str, v: Any) -> None:
    if not isinstance(v, (int, np.integer)) or isinstance(v, bool) or v < 1:
        raise ValueError(f"{name} must be a positive int, got {v!r}")


# ----------------------------------------------------------------------------- SATURN
@dataclass(frozen=True)
class SATKnobs(Knobs):
    """SATURN's difficulty (§2.2): ``n`` literals per clause, ``k`` variables, ``l`` clauses;
    (3,5,5) is SATURN-1.5B's first level."""

    n: int = 3
    k: int = 5
    l: int = 5  # noqa: E741 - the paper's name

    def validate(self) -> None:
        for name in ("n", "k", "l"):
            _positive_int(name, getattr(self, name))
        if self.n > self.k:
            raise ValueError(f"n={self.n} literals per clause needs k >= n variables, got k={self.k}")

    def normalise(self) -> dict[str, Any]:
        return {k: int(v) for k, v in self.as_dict().items()
                if isinstance(v, (int, np.integer)) and not isinstance(v, bool)}


class SATProblem(Problem):
    """SATURN's (n,k,l)-SAT (see the module docstring). ``max_chance_success`` rejects instances
    a uniformly random guess solves more often than that (every instance reports its
    ``chance_success``)."""

    name = "sat"
    instance_cls = SATInstance
    Knobs = SATKnobs
    components = ("format", "correct")
    solvers = SOLVER_FAMILIES
    #: the score checks bits in pure Python (tool mode's threads overlap its sandbox waits)
    thread_safe = True

    def __init__(self, max_chance_success: float | None = None):
        self.max_chance_success = max_chance_success

    def generate(self, knobs, rng):
        return plant(knobs.n, knobs.k, knobs.l, rng, max_chance_success=self.max_chance_success)

    def coerce(self, obj):
        # SATURN's own JSONL records ({"n_sat", "k", "clause", "solution"}) are accepted too
        if isinstance(obj, dict) and "clause" in obj:
            return instance_from_saturn_record(obj)
        return super().coerce(obj)

    def describe(self, inst):
        return {"n": inst.n, "k": inst.k, "l": inst.l}

    def reset_info(self, inst):
        return {"D": difficulty(inst.n, inst.k, inst.l), "chance_success": inst.chance_success}

    def prompt(self, inst):
        return saturn_prompt(inst)

    def score(self, inst, text):
        v = saturn_reward(text, inst.clauses, inst.k)
        return Verdict(v.components, v.answered, v.correct, v.reason, v.answer)

    def unanswered(self, inst, reason):
        return Verdict({"format": SATURN_FORMAT, "correct": 0.0}, False, False, reason)

    def feedback(self, inst, v):
        if not v.answered:
            return f"Format error: {v.reason}. Put your final answer, a string of {inst.k} bits, in \\boxed{{}}."
        return ("Correct: " if v.correct else "Incorrect: ") + v.reason + "."

    def truth(self, inst):
        return saturn_truth(inst)

    def gold(self, inst):
        return Gold(f"The planted assignment satisfies every clause.\n\\boxed{{{inst.solution}}}")

    def sample_answer(self, inst, rng):
        return "\\boxed{" + "".join(rng.choice(["0", "1"], size=inst.k)) + "}"

    def tool_variant(self, *, eps: float = DEFAULT_EPS, wrong_penalty: str = "chance",
                     **_: Any) -> "SATToolProblem":
        return SATToolProblem(max_chance_success=self.max_chance_success, eps=eps, wrong_penalty=wrong_penalty)


def _chance(inst: SATInstance) -> tuple[float, bool]:
    """``(chance_success, exact)``; an instance that came without its model count (a dataset
    record) is counted once per formula, not once per wrong answer."""
    if inst.model_count is not None:
        return inst.chance_success, inst.model_count_exact
    count, exact = _count(formula_key(inst.clauses), inst.k)
    return count / 2.0**inst.k, exact


@functools.lru_cache(maxsize=4096)
def _count(key: tuple, k: int) -> tuple[int, bool]:
    return count_models([list(c) for c in key], k)


def _names(inst: SATInstance) -> list[str]:
    return [var_name(i) for i in range(inst.k)]


class SATToolProblem(SATProblem):
    """SATURN's instances answered as SAT-RL asks (tool mode): a k-bit assignment in
    ```` ```answer ...``` ```` (``idk`` allowed); ``correct`` 1 for any satisfying assignment, 0
    for ``idk``, and for a wrong one eq. 1's penalty extended to 2^k answers by ``wrong_penalty``
    (:func:`~solvergym.envs.sat.verify.wrong_assignment_reward`; default ``"chance"``:
    ``-p/(1-p) - eps``, p the instance's ``chance_success``, so that guessing never pays;
    ``"binary"``: ``-1 - eps`` as for yes/no)."""

    def __init__(self, max_chance_success: float | None = None, eps: float = DEFAULT_EPS,
                 wrong_penalty: str = "chance"):
        super().__init__(max_chance_success)
        if wrong_penalty not in WRONG_PENALTIES:
            raise ValueError(f"wrong_penalty must be one of {WRONG_PENALTIES}, got {wrong_penalty!r}")
        self.eps, self.wrong_penalty = float(eps), wrong_penalty

    def tool_variant(self, **_: Any) -> "SATToolProblem":
        return self

    def answer_hint(self, inst):
        return f"```answer <{inst.k} bits>``` (the values of the variables in order, 1 = true)"

    def statement(self, inst):
        names = _names(inst)
        return (
            f"Find an assignment of the {inst.k} Boolean variables {', '.join(names)} that satisfies "
            f"every clause of this CNF formula. Clauses are separated by \" & \"; within a clause the "
            f"literals are joined by OR, and \"!\" negates a variable.\n\n{inst.clause_string}\n\n"
            f"Answer with the values of {', '.join(names)} in this order as a string of {inst.k} bits "
            f"(1 = true), e.g. ```answer {'1' * inst.k}```."
        )

    def prompt(self, inst):
        return self.statement(inst)

    def variable_mapping(self, inst):
        return "\n".join(f"{name}: variable {i} (DIMACS {i})" for i, name in enumerate(_names(inst), 1))

    def reset_info(self, inst):
        return {}

    def score(self, inst, text):
        block = final_answer_block(text)
        if block is None:
            return Verdict({"format": 0.0, "correct": 0.0}, False, False, "no ```answer ...``` or ```idk``` block found")
        kind, body = block
        if kind == "idk":
            return Verdict({"format": SATRL_FORMAT, "correct": 0.0}, True, False, "abstained (idk)", "idk")
        bits, why = parse_bitstring(body.strip().strip("`'\""), inst.k)
        if bits is None:
            return Verdict({"format": 0.0, "correct": 0.0}, False, False, why.replace("boxed", "answer"))
        bad = first_violated(inst.clauses, bits)
        ok = bad is None
        reason = "assignment satisfies every clause" if ok else \
            f"assignment {bits} falsifies clause {bad + 1} of {len(inst.clauses)}"
        if ok:
            corr = 1.0
        else:
            chance, exact = _chance(inst) if self.wrong_penalty == "chance" else (0.0, True)
            corr = wrong_assignment_reward(self.wrong_penalty, inst.k, chance, exact=exact, eps=self.eps)
        return Verdict({"format": SATRL_FORMAT, "correct": corr}, True, ok, reason, bits)

    def unanswered(self, inst, reason):
        return Verdict({"format": 0.0, "correct": 0.0}, False, False, reason)

    def gold(self, inst):
        def model_from(stdout: str | None) -> str:
            # the model the solver printed, if it is one; else the planted one
            for line in (stdout or "").split("\n"):
                bits = line.strip()
                if len(bits) == inst.k and not set(bits) - {"0", "1"} and first_violated(inst.clauses, bits) is None:
                    return bits
            return inst.solution

        def after_tool(stdout: str | None) -> str:
            bits = model_from(stdout)
            return (f"<think>\nThe solver reports sat and prints a model; the assignment {bits} satisfies every "
                    f"clause.\n</think>\n```answer\n{bits}\n```")

        return Gold("```answer\n" + inst.solution + "\n```",
                    program=lambda solver: cnf_program(solver, inst.clauses, _names(inst),
                                                       model_of=list(range(1, inst.k + 1))),
                    after_tool=after_tool, plan="I will encode every condition as a clause and let {solver} decide.")

    def sample_answer(self, inst, rng):
        return "```answer\n" + "".join(rng.choice(["0", "1"], size=inst.k)) + "\n```"


# ----------------------------------------------------------------------------- SAT-Bench
@dataclass(frozen=True)
class SATBenchKnobs(Knobs):
    """``dims``: each index's range of ``x(i,j,...)`` (entities x attributes x values, App. C);
    ``num_clauses``: conditions (SAT-Bench's buckets: easy 4-19, medium 20-30, hard 31-50)."""

    dims: tuple[int, ...] | list[int] = (3, 2, 2)
    num_clauses: int = 8

    def normalise(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if isinstance(self.dims, (list, tuple)) and all(isinstance(d, (int, np.integer)) for d in self.dims):
            out["dims"] = [int(d) for d in self.dims]
        if isinstance(self.num_clauses, np.integer):
            out["num_clauses"] = int(self.num_clauses)
        return out

    def validate(self) -> None:
        dims, num_clauses = self.dims, self.num_clauses
        if not isinstance(dims, (list, tuple)) or not 1 <= len(dims) <= MAX_DIMS or any(
            not isinstance(d, (int, np.integer)) or d < 1 for d in dims
        ):
            raise ValueError(f"dims must be 1 to {MAX_DIMS} positive ints, got {dims!r}")
        if dims[0] > 8 or any(d > 4 for d in dims[1:]):
            raise ValueError(f"dims {list(dims)}: at most 8 entities and 4 values per attribute")
        if not isinstance(num_clauses, (int, np.integer)) or num_clauses < 4:
            raise ValueError(f"num_clauses must be an int >= 4 (an UNSAT core needs 4), got {num_clauses!r}")


class SATBenchProblem(Problem):
    """Natural-language SAT decision in the SAT-Bench style (see the module docstring).

    Labels are balanced by ``sat_ratio`` and certified by a CDCL solver (a model, or a DRUP proof
    re-checked by unit propagation); ``widths``: the clause widths drawn from.
    ``show_mapping=True`` puts the variable mapping in the single-turn prompt (App. C); it is
    always in ``info["mapping"]``. Answers: the last ```` ```answer yes``` ```` /
    ```` ```answer no``` ````, ```` ```idk``` ```` or bare ```` ```yes``` ```` / ```` ```no``` ```` (how
    SAT-RL's own transcripts end, App. E.1), read alike.
    """

    name = "sat-bench"
    instance_cls = DecisionInstance
    Knobs = SATBenchKnobs
    #: the score reads an answer word in pure Python (tool mode's threads overlap its sandbox waits)
    thread_safe = True
    components = ("format", "correct")
    solvers = SOLVER_FAMILIES
    bare_answers = DECISION_WORDS

    def __init__(self, *, sat_ratio: float = 0.5, widths: tuple[int, ...] = (2, 3), show_mapping: bool = False,
                 eps: float = DEFAULT_EPS):
        if not 0.0 <= sat_ratio <= 1.0:
            raise ValueError(f"sat_ratio must be in [0, 1], got {sat_ratio}")
        self.sat_ratio, self.widths = float(sat_ratio), tuple(widths)
        self.show_mapping, self.eps = bool(show_mapping), float(eps)

    def generate(self, knobs, rng):
        target = bool(rng.random() < self.sat_ratio)
        return decision_instance(knobs.dims, knobs.num_clauses, rng, satisfiable=target, widths=self.widths)

    def coerce(self, obj):
        # records of a sat-bench JSONL file (with id/split/bucket/label/prompt) are accepted too
        if isinstance(obj, dict):
            return decision_from_record(obj)
        return super().coerce(obj)

    def describe(self, inst):
        return {"dims": list(inst.dims), "num_clauses": len(inst.clauses)}

    def reset_info(self, inst):
        return {"mapping": dict(inst.mapping), "variables": inst.variables}

    def prompt(self, inst):
        return satbench_prompt(inst, self.show_mapping)

    def answer_hint(self, inst):
        return "```answer yes``` or ```answer no```"

    def statement(self, inst):
        parts = [f"Scenario: {inst.scenario}", "", "Conditions:"]
        parts += [f"{i}. {c}" for i, c in enumerate(inst.conditions, 1)]
        parts += ["", f"Question: {inst.question}"]
        return "\n".join(parts)

    def variable_mapping(self, inst):
        return "\n".join(f"{name}: {meaning}" for name, meaning in inst.mapping.items())

    def naming_hint(self, inst):
        return "In your program, name the variable x(i,j,k) x_i_j_k."

    def score(self, inst, text):
        v = decision_reward(text, inst.satisfiable, eps=self.eps)
        return Verdict(v.components, v.answered, v.correct, v.reason, v.answer)

    def feedback(self, inst, v):
        if not v.answered:
            return f"Format error: {v.reason}. End with ```answer yes```, ```answer no``` or ```idk```."
        return {True: "Correct.", False: "Incorrect."}[v.correct] if v.answer != "idk" else "Abstained."

    def truth(self, inst):
        return decision_truth(inst)

    def gold(self, inst):
        word = "yes" if inst.satisfiable else "no"
        sat = "sat" if inst.satisfiable else "unsat"
        meaning = ("some assignment satisfies every condition, so they can all hold at once"
                   if inst.satisfiable else "no assignment satisfies every condition, so they cannot all hold")
        return Gold("```answer\n" + word + "\n```",
                    program=lambda solver: cnf_program(
                        solver, inst.clauses, inst.variables,
                        comments=[f"condition {i}" for i in range(1, len(inst.clauses) + 1)]),
                    after_tool=lambda stdout: (f"<think>\nThe solver reports {sat}: {meaning}.\n</think>\n"
                                               f"```answer\n{word}\n```"),
                    plan="I will encode every condition as a clause and let {solver} decide.")

    def sample_answer(self, inst, rng):
        return "```answer\n" + ("yes" if rng.random() < 0.5 else "no") + "\n```"
