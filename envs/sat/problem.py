"""The SAT family's problems: SATURN's (n,k,l)-SAT (``sat``) and SAT-Bench-style decision
(``sat-bench``), on the problem contract (:mod:`solvergym.envs.problem`).

- ``sat`` (SATURN §2.2-2.4): a planted random CNF in SATURN's prompt; the answer is a k-bit
  assignment in the last ``\\boxed{}``; ``format`` -1 without a box, ``correct`` 1 for any
  satisfying assignment. In tool mode (SAT-RL §3.4) the same instances are answered as SAT-RL
  asks, in ```` ```answer <bits>``` ```` (``idk`` allowed), with eq. 1's penalty for a wrong one
  scaled to the chance a guess has, ``-p/(1-p) - eps`` (its ``tool`` capability, :class:`~.tool.SATTool`).
- ``sat-bench`` (SAT-RL §3.2, App. C, E.1): a CNF over ``x(i,j,...)`` told as a scenario with one
  condition per clause; yes / no / idk; ``format`` 0.1, ``correct`` 1 / 0 / ``-1 - eps``.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..problem import Gold, Knobs, Problem, Verdict
from .datasets import decision_from_record, instance_from_saturn_record
from .decision import DecisionInstance, decision_instance
from .generator import SATInstance, difficulty, plant
from .programs import cnf_program
from .prompts import satbench_prompt, saturn_prompt
from .render import MAX_DIMS
from .tool import SATBenchTool, SATTool, chance_of, satisfying_bits
from .verify import DEFAULT_EPS, SATRL_FORMAT, SATURN_FORMAT, correctness_reward, decision_reward, saturn_reward

__all__ = ["SATKnobs", "SATProblem", "SATBenchKnobs", "SATBenchProblem"]


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
    """SATURN's (n,k,l)-SAT task (``SolverSAT-v0``): find an assignment satisfying a planted random CNF.

    Observation: SATURN's prompt (clauses like ``!A!B!C & A!B!D``). Action: text whose last
    ``\\boxed{...}`` holds a bit string of length k (variable order A, B, C, ...). Reward, exactly
    SATURN §2.4: -1 without ``\\boxed{}``, 0 boxed but wrong, 1 correct; as components
    ``format`` (-1 or 0) and ``correct`` (0 or 1). Any satisfying assignment is correct.

    Difficulty knobs (:class:`SATKnobs`): ``n`` literals per clause, ``k`` variables, ``l``
    clauses (defaults (3,5,5), SATURN-1.5B's first level); D(n,k,l) of eq. 2 is in
    ``info["D"]``. ``max_chance_success`` rejects instances a uniformly random guess solves more
    often than that (``info`` reports ``chance_success`` for every instance). SATURN's own JSONL
    records are accepted as ``options["instance"]``.
    """

    name = "sat"
    instance_cls = SATInstance
    Knobs = SATKnobs
    components = ("format", "correct")
    tool = SATTool
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
        return saturn_reward(text, inst.clauses, inst.k)

    def unanswered(self, inst, reason):
        return Verdict({"format": SATURN_FORMAT, "correct": 0.0}, False, False, reason)

    def feedback(self, inst, v):
        if not v.answered:
            return f"Format error: {v.reason}. Put your final answer, a string of {inst.k} bits, in \\boxed{{}}."
        return ("Correct: " if v.correct else "Incorrect: ") + v.reason + "."

    def gold(self, inst):
        return Gold(f"The planted assignment satisfies every clause.\n\\boxed{{{inst.solution}}}")

    def sample_answer(self, inst, rng):
        return "\\boxed{" + "".join(rng.choice(["0", "1"], size=inst.k)) + "}"

    # -- what a policy earns without reading (solvergym.evaluation.blind) ---------------------------
    def chance_reward(self, inst) -> float | None:
        """The chance line: a uniform k-bit guess in ``\\boxed{}`` satisfies the formula with
        probability p = ``chance_success`` and SATURN pays 1 for it, 0 for a wrong one (no
        abstention, no penalty): p. ``None`` where the count is only a lower bound (k > 20)."""
        p, exact = chance_of(inst)
        return p if exact else None

    def blind_candidates(self, inst) -> list[str]:
        """Every right answer, boxed (:func:`~.tool.satisfying_bits`): a constant assignment is
        right on an instance whenever it is one of its models, planted or not. The planted
        solution is uniform and the clauses are drawn alike for every sign, so a constant
        assignment satisfies as often as a uniform guess does, E[p] (the chance line)."""
        return ["\\boxed{" + bits + "}" for bits in satisfying_bits(inst)]


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
    """Natural-language SAT decision in the SAT-Bench style (``SolverSATBench-v0``; see the module docstring).

    Labels are balanced by ``sat_ratio`` (over consecutive seeds: the seed's stratum) and certified
    by a CDCL solver (a model, or a DRUP proof re-checked by unit propagation); ``widths``: the clause widths drawn from.
    ``show_mapping=True`` puts the variable mapping in the single-turn prompt (App. C); it is
    always in ``info["mapping"]``. Answers: the last ```` ```answer yes``` ```` /
    ```` ```answer no``` ````, ```` ```idk``` ```` or bare ```` ```yes``` ```` / ```` ```no``` ```` (how
    SAT-RL's own transcripts end, App. E.1), read alike.
    """

    name = "sat-bench"
    instance_cls = DecisionInstance
    Knobs = SATBenchKnobs
    #: the label is the seed's stratum: balanced over consecutive seeds (:meth:`generate`)
    stratified = True
    #: the score reads an answer word in pure Python (tool mode's threads overlap its sandbox waits)
    thread_safe = True
    components = ("format", "correct")
    tool = SATBenchTool

    def __init__(self, *, sat_ratio: float = 0.5, widths: tuple[int, ...] = (2, 3), show_mapping: bool = False,
                 eps: float = DEFAULT_EPS):
        if not 0.0 <= sat_ratio <= 1.0:
            raise ValueError(f"sat_ratio must be in [0, 1], got {sat_ratio}")
        self.sat_ratio, self.widths = float(sat_ratio), tuple(widths)
        self.show_mapping, self.eps = bool(show_mapping), float(eps)

    def generate(self, knobs, rng, stratum: float | None = None):
        """``stratum`` (from a mode, :func:`~solvergym.envs.problem.seed_stratum`): the label is
        ``stratum < sat_ratio``, balanced over consecutive seeds; without it the same from a
        uniform draw of ``rng`` (a coin per seed is balanced only on average: seeds 0-399 drew
        176 satisfiable of 400, so ```answer no``` earned 0.176 a turn, above ```idk```'s 0.1).
        The draw is made either way, so the rest of the instance is the same."""
        coin = rng.random()
        target = bool((coin if stratum is None else stratum) < self.sat_ratio)
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

    def score(self, inst, text):
        return decision_reward(text, inst.satisfiable, eps=self.eps)

    def feedback(self, inst, v):
        if not v.answered:
            return f"Format error: {v.reason}. End with ```answer yes```, ```answer no``` or ```idk```."
        return {True: "Correct.", False: "Incorrect."}[v.correct] if v.answer != "idk" else "Abstained."

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

    def chance_reward(self, inst) -> float:
        """The chance line: yes or no at even odds, ``0.1 + 0.5 - 0.5 (1 + eps) = 0.1 - eps/2``
        (SAT-RL eq. 1), below ```idk```'s 0.1. The labels are the seeds' strata (:meth:`generate`),
        so neither constant word is right on more than about half of any run of seeds."""
        return SATRL_FORMAT + 0.5 * 1.0 + 0.5 * correctness_reward("incorrect", eps=self.eps)
