"""``SolverSAT-v0`` (SATURN) and ``SolverSATBench-v0`` (SAT-Bench-style decision, SAT-RL rewards)."""
from __future__ import annotations

import json
from typing import Any

import numpy as np

from ..base import Outcome, TextEnv
from .generator import (
    DecisionInstance,
    SATInstance,
    decision_instance,
    difficulty,
    plant,
)
from .render import MAX_DIMS
from .verify import DEFAULT_EPS, SATURN_FORMAT, decision_reward, saturn_reward

__all__ = ["SATEnv", "SATBenchEnv", "saturn_prompt", "SATURN_META_PROMPT"]

#: SATURN's prompt (App. F, Fig. 8), byte for byte as in its released data files.
SATURN_META_PROMPT = """You are now required to solve a SAT (Boolean Satisfiability) problem. The problem is provided in JSON format, containing the following fields:

- "n_sat": The number of variables in each clause (n-SAT problem).
- "k": The total number of distinct variables in the problem.
- "clause": A string representation of the SAT formula, where clauses are separated by " & " (representing logical AND). Within each clause, variables are combined using concatenation (representing logical OR). A negation is indicated by "!" before a variable.

Your task is to provide a valid solution. The answer is a string of length k representing the truth values of the variables in order (1 for true, 0 for false). If there are multiple solutions, provide any one of them.
Please reason step by step, and put your final answer within \\boxed{}.

**Example**
{"n_sat": 3, "k": 4, "clause": "!B!C!D & A!B!D & AB!D"}
**Final Answer**
\\boxed{1101}

Below is the SAT problem you need to solve:
"""

_NAMING_NOTE = (
    "Variables beyond Z are named A1..Z1, then A2..Z2, and so on (a capital letter followed by a "
    "number); the answer lists all k variables in the order A..Z, A1..Z1, A2..Z2, ...\n"
)


def saturn_prompt(instance: SATInstance, clause_string: str | None = None) -> str:
    """SATURN's prompt for ``instance`` (identical to the released files for k <= 26)."""
    clause = instance.clause_string if clause_string is None else clause_string
    question = json.dumps({"n_sat": instance.n, "k": instance.k, "clause": clause})
    note = _NAMING_NOTE if instance.k > 26 else ""
    return SATURN_META_PROMPT + note + question + "\n"


class SATEnv(TextEnv):
    """SATURN's (n,k,l)-SAT task: find an assignment satisfying a planted random CNF.

    Observation: SATURN's prompt (clauses like ``!A!B!C & A!B!D``). Action: text whose last
    ``\\boxed{...}`` holds a bit string of length k (variable order A, B, C, ...). Reward, exactly
    SATURN §2.4: -1 without ``\\boxed{}``, 0 boxed but wrong, 1 correct; as components
    ``format`` (-1 or 0) and ``correct`` (0 or 1). Any satisfying assignment is correct.

    Difficulty knobs: ``n`` literals per clause, ``k`` variables, ``l`` clauses (defaults (3,5,5),
    SATURN-1.5B's first level); D(n,k,l) of eq. 2 is in ``info["D"]``. ``max_chance_success``
    rejects instances a uniformly random guess solves more often than that (``info`` reports
    ``chance_success`` for every instance).
    """

    instance_cls = SATInstance
    difficulty_keys = ("n", "k", "l")

    def __init__(
        self,
        n: int = 3,
        k: int = 5,
        l: int = 5,  # noqa: E741 - the paper's name
        *,
        max_chance_success: float | None = None,
        max_turns: int = 1,
        max_action_chars: int | None = None,
        render_mode: str | None = None,
    ):
        kw = {} if max_action_chars is None else {"max_action_chars": max_action_chars}
        super().__init__(max_turns=max_turns, render_mode=render_mode, **kw)
        self._check_difficulty(n=n, k=k, l=l)
        self.n, self.k, self.l = int(n), int(k), int(l)
        self.max_chance_success = max_chance_success

    def _check_difficulty(self, n, k, l):  # noqa: E741
        for name, v in (("n", n), ("k", k), ("l", l)):
            if not isinstance(v, (int, np.integer)) or isinstance(v, bool) or v < 1:
                raise ValueError(f"{name} must be a positive int, got {v!r}")
        if n > k:
            raise ValueError(f"n={n} literals per clause needs k >= n variables, got k={k}")

    def generate(self, rng):
        return plant(self.n, self.k, self.l, rng, max_chance_success=self.max_chance_success)

    def coerce_instance(self, obj: Any) -> SATInstance:
        # SATURN's own JSONL records ({"n_sat", "k", "clause", "solution"}) are accepted too.
        if isinstance(obj, dict) and "clause" in obj:
            from .datasets import instance_from_saturn_record

            return instance_from_saturn_record(obj)
        return super().coerce_instance(obj)

    def prompt(self, instance):
        return saturn_prompt(instance)

    def describe(self, instance):
        return {"n": instance.n, "k": instance.k, "l": instance.l}

    def reset_info(self, instance):
        return {"D": difficulty(instance.n, instance.k, instance.l), "chance_success": instance.chance_success}

    def evaluate(self, text):
        inst = self.instance
        v = saturn_reward(text, inst.clauses, inst.k)
        if not v.answered:
            return self.format_failure(v.reason)
        obs = ("Correct: " if v.correct else "Incorrect: ") + v.reason + "."
        return Outcome(v.components, True, obs, {"correct": v.correct, "answer": v.answer, "reason": v.reason})

    def format_failure(self, reason):
        obs = f"Format error: {reason}. Put your final answer, a string of {self.instance.k} bits, in \\boxed{{}}."
        return Outcome(
            {"format": SATURN_FORMAT, "correct": 0.0}, False, obs,
            {"correct": False, "answer": None, "reason": reason}, error=reason,
        )

    # scripted agents (agents/scripted.py) ---------------------------------------------------
    def oracle_action(self) -> str:
        return f"The planted assignment satisfies every clause.\n\\boxed{{{self.instance.solution}}}"

    def random_action(self, rng: np.random.Generator) -> str:
        bits = "".join(rng.choice(["0", "1"], size=self.instance.k))
        return f"\\boxed{{{bits}}}"


SATBENCH_INSTRUCTIONS = (
    "Solve the problem step by step and put your final answer in the format ```answer yes``` or "
    "```answer no```. If the evidence is genuinely insufficient, you may output ```idk```."
)


class SATBenchEnv(TextEnv):
    """Natural-language SAT decision in the SAT-Bench style (``sat-rl.txt`` §3.2, App. C, E.1).

    A CNF over ``x(i,j,...)`` (``dims`` gives each index's range) is told as a scenario with one
    condition sentence per clause; the question is whether all conditions can hold at once.
    Labels are balanced (``sat_ratio``) and certified by a CDCL solver (a model, or a DRUP proof
    re-checked by unit propagation). ``show_mapping=True`` puts the variable mapping in the prompt
    (App. C template); it is always in ``info["mapping"]``.

    Answers: the last final-answer block counts (§3.4): ```` ```answer yes``` ```` /
    ```` ```answer no``` ```` (what the prompt asks for), ```` ```idk``` ````, or the bare
    ```` ```yes``` ```` / ```` ```no``` ```` that SAT-RL's own transcripts end with (App. E.1), read as
    ```` ```answer yes``` ```` / ```` ```answer no``` ```` with the same rewards. A fence with anything
    else in it is not an answer, and fences pair left to right, so one inside a code block is code
    (:func:`~solvergym.envs.parsing.final_answer_block`).

    Rewards (SAT-RL §3.4): ``format`` 0.1 when a final-answer block parses; ``correct`` 1 right,
    0 ``idk``, ``-1 - eps`` wrong (eq. 1). The ``tool`` and ``equivalence`` components come with
    ``SolverTool-v0``.

    An instance given as ``options["instance"]`` is validated (an UNSAT label's DRUP proof
    re-checked) once: the dataclass it becomes, or one this env generated, is not checked again
    while unchanged (:meth:`~solvergym.envs.base.Instance.coerce`), so the followers of a group
    reset with the leader's instance cost no proof check.
    """

    instance_cls = DecisionInstance
    difficulty_keys = ("dims", "num_clauses")

    def __init__(
        self,
        dims: tuple[int, ...] | list[int] = (3, 2, 2),
        num_clauses: int = 8,
        *,
        sat_ratio: float = 0.5,
        widths: tuple[int, ...] = (2, 3),
        show_mapping: bool = False,
        eps: float = DEFAULT_EPS,
        max_turns: int = 1,
        max_action_chars: int | None = None,
        render_mode: str | None = None,
    ):
        kw = {} if max_action_chars is None else {"max_action_chars": max_action_chars}
        super().__init__(max_turns=max_turns, render_mode=render_mode, **kw)
        dims = [int(d) for d in dims]
        self._check_difficulty(dims=dims, num_clauses=num_clauses)
        if not 0.0 <= sat_ratio <= 1.0:
            raise ValueError(f"sat_ratio must be in [0, 1], got {sat_ratio}")
        self.dims, self.num_clauses = dims, int(num_clauses)
        self.sat_ratio, self.widths = float(sat_ratio), tuple(widths)
        self.show_mapping, self.eps = bool(show_mapping), float(eps)

    def _check_difficulty(self, dims, num_clauses):
        if not isinstance(dims, (list, tuple)) or not 1 <= len(dims) <= MAX_DIMS or any(
            not isinstance(d, (int, np.integer)) or d < 1 for d in dims
        ):
            raise ValueError(f"dims must be 1 to {MAX_DIMS} positive ints, got {dims!r}")
        if dims[0] > 8 or any(d > 4 for d in dims[1:]):
            raise ValueError(f"dims {list(dims)}: at most 8 entities and 4 values per attribute")
        if not isinstance(num_clauses, (int, np.integer)) or num_clauses < 4:
            raise ValueError(f"num_clauses must be an int >= 4 (an UNSAT core needs 4), got {num_clauses!r}")

    def set_difficulty(self, **kwargs):
        if "dims" in kwargs:
            kwargs["dims"] = [int(d) for d in kwargs["dims"]]
        super().set_difficulty(**kwargs)

    def generate(self, rng):
        target = bool(rng.random() < self.sat_ratio)
        return decision_instance(self.dims, self.num_clauses, rng, satisfiable=target, widths=self.widths)

    def coerce_instance(self, obj: Any) -> DecisionInstance:
        # records of a sat-bench JSONL file (with id/split/bucket/label/prompt) are accepted too
        if isinstance(obj, dict):
            from .datasets import decision_from_record

            return decision_from_record(obj)
        return super().coerce_instance(obj)

    def prompt(self, instance):
        parts = [SATBENCH_INSTRUCTIONS, ""]
        if self.show_mapping:
            parts += ["Variable Mapping:"]
            parts += [f"{name}: {meaning}" for name, meaning in instance.mapping.items()]
            parts += [""]
        parts += ["Problem Statement:", f"Scenario: {instance.scenario}", "", "Conditions:"]
        parts += [f"{i}. {c}" for i, c in enumerate(instance.conditions, 1)]
        parts += ["", f"Question: {instance.question}"]
        return "\n".join(parts) + "\n"

    def describe(self, instance):
        return {"dims": list(instance.dims), "num_clauses": len(instance.clauses)}

    def reset_info(self, instance):
        return {"mapping": dict(instance.mapping), "variables": instance.variables}

    def evaluate(self, text):
        v = decision_reward(text, self.instance.satisfiable, eps=self.eps)
        if not v.answered:
            return self.format_failure(v.reason)
        obs = {True: "Correct.", False: "Incorrect."}[v.correct] if v.answer != "idk" else "Abstained."
        return Outcome(v.components, True, obs, {"correct": v.correct, "answer": v.answer, "reason": v.reason})

    def format_failure(self, reason):
        obs = f"Format error: {reason}. End with ```answer yes```, ```answer no``` or ```idk```."
        return Outcome(
            {"format": 0.0, "correct": 0.0}, False, obs,
            {"correct": False, "answer": None, "reason": reason}, error=reason,
        )

    def oracle_action(self) -> str:
        return "```answer\n" + ("yes" if self.instance.satisfiable else "no") + "\n```"

    def random_action(self, rng: np.random.Generator) -> str:
        return "```answer\n" + ("yes" if rng.random() < 0.5 else "no") + "\n```"
