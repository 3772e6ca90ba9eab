"""The optimisation-modelling problem's tool mode (``SolverTool-v0(task="or")``): the capability
that poses SIRL's task through SAT-RL's solver tool protocol
(:class:`~solvergym.envs.capabilities.ToolCapability`).

A tool call runs a ``<tool_call>`` program in the sandbox and shows its output; the final answer
is the turn's last ``<python>...</python>`` section, scored as the single turn (its program runs
again, SIRL eq. 6). The prompt names one of the libraries; SAT-RL's ``tool`` reward is the only
tool reward (``equivalence`` proves Boolean formulas, and an LP is not one); ```idk``` is not an
answer (there is always a model to write).
"""
from __future__ import annotations

from ..capabilities import ToolCapability

__all__ = ["ORTool", "OR_SOLVERS", "ANSWER_HINT"]

#: the solver libraries a program may use (and the prompt may ask for)
OR_SOLVERS = ("gurobipy", "highspy", "ortools")
#: the answer format (SIRL §3.1)
ANSWER_HINT = "<think>...</think><model>...</model><python>...</python>"


class ORTool(ToolCapability):
    """``or`` in tool mode (see the module docstring)."""

    solvers = OR_SOLVERS
    rewards = ("tool",)
    allows_idk = False
    rehearse = OR_SOLVERS
    sandbox_text = "gurobipy (a size-limited licence), highspy (HiGHS) and ortools (OR-Tools)"

    def statement(self, instance):
        return instance.question.strip()

    def final_answer_span(self, text: str) -> tuple[int, int] | None:
        """The last ``<python>...</python>`` section (tool calls are ``<tool_call>`` programs before it)."""
        end = text.rfind("</python>")
        start = text.rfind("<python>", 0, end) if end >= 0 else -1
        return (start, end + len("</python>")) if start >= 0 else None
