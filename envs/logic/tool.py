"""The Synthetic-Logic families' tool mode (SAT-RL §3.4, App. C), built once for every family.

The statement is the family's problem text (instance, question, answer format); the variable
mapping is the names the family's ground-truth programs use, so a program written with them is
what the oracle's is. Answers are scored as in the single turn. ``tool`` is the tool reward;
``equivalence`` (decision and solving) proves the formula of the last solve call equivalent to
the instance's model (:func:`.truth.model_truth`), auxiliaries existentially quantified. A
counting query takes no ``equivalence``: counting programs block each model they find and solve
again, so their last call states the formula and its blocking clauses, never the formula alone.
"""
from __future__ import annotations

from typing import Any

from ..capabilities import ToolCapability
from ..parsing import DECISION_WORDS
from .truth import model_truth

__all__ = ["LogicTool", "tool_capability"]


class LogicTool(ToolCapability):
    """A Synthetic-Logic family in tool mode (see the module docstring)."""

    rewards = ("tool", "equivalence")
    #: a cardinality encoding's counters are the program's own (python-sat's CardEnc needs them)
    settings = {"auxiliary": "exists"}

    def __init__(self, problem: Any, **settings: Any):
        super().__init__(problem, **settings)
        if problem.query == "counting":
            self.rewards = ("tool",)
        # a decision may end as SAT-RL's own transcripts do, with a bare ```yes``` (App. E.1)
        self.bare_answers = DECISION_WORDS if problem.query == "decision" else ()

    def statement(self, inst):
        return self.problem.problem_text(inst)

    def variable_mapping(self, inst):
        return "\n".join(f"{name}: {meaning}" for name, meaning in self.problem.mapping(inst.data).items())

    def truth(self, inst):
        return None if self.problem.query == "counting" else model_truth(self.problem.encode(inst.data))

    def naming_hint(self, inst):
        return "In your program, name each Boolean variable as the variable mapping does."


def tool_capability(family: type) -> type[LogicTool]:
    """The tool capability of ``family``: :class:`LogicTool` drawing only the family's fitting solvers."""
    return type(f"{family.__name__}Tool", (LogicTool,), {"solvers": tuple(family.solvers),
                                                         "__module__": family.__module__})
