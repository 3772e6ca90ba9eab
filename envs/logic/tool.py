"""The Synthetic-Logic families' tool mode (SAT-RL §3.4, App. C), built once for every family.

The statement is the family's problem text (instance, question, answer format); the variable
mapping is the names the family's ground-truth programs use, so a program written with them is
what the oracle's is. Answers are scored as in the single turn. ``tool`` is the tool reward; the
``equivalence`` reward is not offered: a family's truth is a pseudo-Boolean model (cardinality and
weighted sums), which the captured-formula check of :mod:`solvergym.envs.equivalence` does not
read yet.
"""
from __future__ import annotations

from typing import Any

from ..capabilities import ToolCapability
from ..parsing import DECISION_WORDS

__all__ = ["LogicTool", "tool_capability"]


class LogicTool(ToolCapability):
    """A Synthetic-Logic family in tool mode (see the module docstring)."""

    rewards = ("tool",)

    def __init__(self, problem: Any, **settings: Any):
        super().__init__(problem, **settings)
        # a decision may end as SAT-RL's own transcripts do, with a bare ```yes``` (App. E.1)
        self.bare_answers = DECISION_WORDS if problem.query == "decision" else ()

    def statement(self, inst):
        return self.problem.problem_text(inst)

    def variable_mapping(self, inst):
        return "\n".join(f"{name}: {meaning}" for name, meaning in self.problem.mapping(inst.data).items())

    def naming_hint(self, inst):
        return "In your program, name each Boolean variable as the variable mapping does."


def tool_capability(family: type) -> type[LogicTool]:
    """The tool capability of ``family``: :class:`LogicTool` drawing only the family's fitting solvers."""
    return type(f"{family.__name__}Tool", (LogicTool,), {"solvers": tuple(family.solvers),
                                                         "__module__": family.__module__})
