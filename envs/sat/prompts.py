"""The prompts of ``SolverSAT-v0`` (SATURN) and ``SolverSATBench-v0`` (SAT-Bench-style decision).

Text only: an instance in, the observation out, byte for byte the same for the same instance
(and, for SATURN at k <= 26, what SATURN's released data files hold).
"""
from __future__ import annotations

import json

from .decision import DecisionInstance
from .generator import SATInstance

__all__ = ["SATURN_META_PROMPT", "saturn_prompt", "SATBENCH_INSTRUCTIONS", "satbench_prompt"]

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


SATBENCH_INSTRUCTIONS = (
    "Solve the problem step by step and put your final answer in the format ```answer yes``` or "
    "```answer no```. If the evidence is genuinely insufficient, you may output ```idk```."
)


def satbench_prompt(instance: DecisionInstance, show_mapping: bool) -> str:
    """The SAT-Bench-style prompt for ``instance``; ``show_mapping`` adds the variable mapping
    (SAT-RL App. C template)."""
    parts = [SATBENCH_INSTRUCTIONS, ""]
    if show_mapping:
        parts += ["Variable Mapping:"]
        parts += [f"{name}: {meaning}" for name, meaning in instance.mapping.items()]
        parts += [""]
    parts += ["Problem Statement:", f"Scenario: {instance.scenario}", "", "Conditions:"]
    parts += [f"{i}. {c}" for i, c in enumerate(instance.conditions, 1)]
    parts += ["", f"Question: {instance.question}"]
    return "\n".join(parts) + "\n"
