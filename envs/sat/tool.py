"""The SAT family's tool mode (SAT-RL §3.4, App. C): the ``tool`` capabilities of ``sat`` and
``sat-bench`` (:class:`~solvergym.envs.capabilities.ToolCapability`).

- ``sat-bench`` (:class:`SATBenchTool`): the scenario and its conditions as the problem
  statement, the variable mapping, yes / no / idk answered as in the single turn (bare
  ```` ```yes``` ```` included, App. E.1), the formula's truth for the ``equivalence`` reward.
- ``sat`` (:class:`SATTool`): SATURN's instances answered as SAT-RL asks: a k-bit assignment in
  ```` ```answer ...``` ```` (``idk`` allowed); ``correct`` 1 for any satisfying assignment, 0
  for ``idk``, and for a wrong one eq. 1's penalty extended to 2^k answers by ``wrong_penalty``
  (:func:`~.verify.wrong_assignment_reward`; default ``"chance"``: ``-p/(1-p) - eps``, p the
  instance's ``chance_success``, so that guessing never pays; ``"choices"``: ``-1/(2^k-1) - eps``;
  ``"binary"``: ``-1 - eps`` as for yes/no). ``eps`` and ``wrong_penalty`` are this capability's
  settings (``gym.make("SolverTool-v0", task="sat", wrong_penalty="binary")``).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..capabilities import ToolCapability
from ..parsing import DECISION_WORDS, final_answer_block
from ..problem import Gold, Verdict
from ...sandbox import SOLVER_FAMILIES
from .cnf import first_violated, var_name
from .generator import SATInstance, cached_model_count, model_count_error
from .programs import cnf_program
from .truth import decision_truth, saturn_truth
from .verify import (DEFAULT_EPS, SATRL_FORMAT, WRONG_PENALTIES, parse_bitstring, satisfies_batch,
                     wrong_assignment_reward)

__all__ = ["SATTool", "SATBenchTool", "chance_of", "satisfying_bits", "BLIND_MAX_K"]

#: up to how many variables :func:`satisfying_bits` lists every model (2^10 assignments checked at once)
BLIND_MAX_K = 10


def chance_of(inst: SATInstance) -> tuple[float, bool]:
    """``(chance_success, exact)``. The instance's own count where it is well-formed (at reset it
    was recounted or checked, :meth:`SATInstance.validate`); an instance without one (a dataset
    record) or with one out of type or range (one scored without a reset) is counted, once per
    formula, not once per wrong answer: a count above 2^k or below 1 would make the penalty
    raise, and one too low would let a guess pay."""
    count, exact = inst.model_count, inst.model_count_exact
    if count is None or model_count_error(count, exact, inst.k) is not None:
        count, exact = cached_model_count(inst.clauses, inst.k)
    return count / (1 << inst.k), exact  # int division: no float overflow for k >= 1024


def satisfying_bits(inst: SATInstance) -> list[str]:
    """Every satisfying assignment of ``inst`` as a bit string (variable order), for ``k <=``
    :data:`BLIND_MAX_K`; above, the planted one alone. The answers a constant policy could be right
    with (:mod:`solvergym.evaluation.blind`)."""
    if inst.k > BLIND_MAX_K:
        return [inst.solution]
    masks = np.arange(1 << inst.k, dtype=np.int64)
    return ["".join("1" if (int(a) >> i) & 1 else "0" for i in range(inst.k))
            for a in masks[satisfies_batch(inst.clauses, masks)]]


def _names(inst: SATInstance) -> list[str]:
    return [var_name(i) for i in range(inst.k)]


class SATTool(ToolCapability):
    """``sat`` in tool mode (see the module docstring)."""

    solvers = SOLVER_FAMILIES
    settings = {"eps": DEFAULT_EPS, "wrong_penalty": "chance"}

    @classmethod
    def validate_settings(cls, settings: dict[str, Any]) -> dict[str, Any]:
        out = super().validate_settings(settings)
        if out["wrong_penalty"] not in WRONG_PENALTIES:
            raise ValueError(f"wrong_penalty must be one of {WRONG_PENALTIES}, got {out['wrong_penalty']!r}")
        return out

    def truth(self, inst):
        return saturn_truth(inst)

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

    def variable_mapping(self, inst):
        return "\n".join(f"{name}: variable {i} (DIMACS {i})" for i, name in enumerate(_names(inst), 1))

    def reset_info(self, inst):
        return {}  # the single turn's D and chance_success are not part of SAT-RL's protocol

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
            chance, exact = chance_of(inst) if self.settings["wrong_penalty"] == "chance" else (0.0, True)
            corr = wrong_assignment_reward(self.settings["wrong_penalty"], inst.k, chance, exact=exact, eps=float(self.settings["eps"]))
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

    # -- what a policy earns without reading (solvergym.evaluation.blind) ---------------------------
    def chance_reward(self, inst) -> float:
        """A uniform k-bit guess's expected reward: right with p = ``chance_success``, else this
        capability's wrong-answer reward; with the default ``wrong_penalty="chance"`` that is
        ``0.1 - (1-p) eps``, below ```idk```'s 0.1 whatever p is (``"choices"`` pays a guess more
        than ```idk``` once several assignments satisfy: the paper's rule read literally)."""
        p, exact = chance_of(inst)
        if p >= 1.0:
            return SATRL_FORMAT + 1.0
        wrong = wrong_assignment_reward(self.settings["wrong_penalty"], inst.k, p, exact=exact,
                                        eps=float(self.settings["eps"]))
        return SATRL_FORMAT + p * 1.0 + (1.0 - p) * wrong

    def blind_candidates(self, inst) -> list[str]:
        """Every right final answer (:func:`satisfying_bits`), as tool mode's answer fence."""
        return ["```answer\n" + bits + "\n```" for bits in satisfying_bits(inst)]


class SATBenchTool(ToolCapability):
    """``sat-bench`` in tool mode (see the module docstring): scored as the single turn."""

    solvers = SOLVER_FAMILIES
    bare_answers = DECISION_WORDS

    def statement(self, inst):
        parts = [f"Scenario: {inst.scenario}", "", "Conditions:"]
        parts += [f"{i}. {c}" for i, c in enumerate(inst.conditions, 1)]
        parts += ["", f"Question: {inst.question}"]
        return "\n".join(parts)

    def variable_mapping(self, inst):
        return "\n".join(f"{name}: {meaning}" for name, meaning in inst.mapping.items())

    def naming_hint(self, inst):
        return "In your program, name the variable x(i,j,k) x_i_j_k."

    def truth(self, inst):
        return decision_truth(inst)

    def chance_reward(self, inst) -> float:
        """Tool mode scores the final answer as the single turn does: its chance line."""
        return self.problem.chance_reward(inst)
