"""The step-verified families' ``steps`` capability: Spring's protocol, one step per action.

A step-mode episode (:class:`~solvergym.envs.modes.step.StepEnv`) of a Zebra, Knights & Knaves or
AR-LSAT instance runs one :class:`SpringSession`:

1. The first action gives the parsed premises: ``<answer>{...}</answer>`` with the family's
   premise keys (Zebra ``syntactic_clues``; Knights ``syntactic_statements``; AR-LSAT ``rules``,
   ``question``, ``options``), or, for a family with one premise group, one ``C<i>: formula.``
   per line. They are parsed, checked for satisfiability and uniqueness (§4.2's gate) and, by
   default, for equivalence with the true clues; a list that does not parse may be sent again.
2. Every further action is one reasoning step: one natural-language sentence and its formula:
   ``"Bob lives in house 2. S1: Bob == 2."``. It is verified when it arrives (Definitions 2-5,
   against the premises and the steps accepted so far); the verdict is the next observation
   and ``info["step"]``. A formula that does not parse is a format failure.
3. The final action is the solution, ``<answer>{"solution": ...}</answer>``; the episode
   terminates and ``info`` carries every verdict and the trace metrics, as in trace mode. A
   solution with no step before it breaks the format, as an empty ``reasoning`` list does in
   trace mode (Spring App. E: reasoning is mandatory).

What step mode pays (``step_credit``, this capability's setting): the episode's total of each
component is the trace-mode score of the same premises, steps and solution
(``info["trace_components"]``), to rounding.

- ``"running"`` (default): every action pays the change of the running value
  (:meth:`~.trace.TraceSession.running_components`: Spring §4.3 with the step fractions as they
  stand, m = 0.5 s_sat since r_accuracy is not known yet, r_consistency and r_format 0), so the
  premises earn ``parsed`` 0.15, a novel step raises the novel fraction and is paid, a redundant
  one lowers it and costs, a contradiction costs, an unparseable step takes ``parsed`` back;
  the solution action pays the remainder (accuracy, format, consistency, and m's rise to
  0.5 + 0.5 r_accuracy on the process terms). Nothing is paid per step as such, so a long run
  of steps earns no more than the trace mode's score. With the fraction aggregation a novel step
  pays 0 while every earlier step was novel (the share stays at 1) and any other step pays 0
  while none was; the step prompt says so (:meth:`~.problem.StepProblem.step_payment`, written
  from these settings). An episode truncated before its solution
  has been paid the running value: at most w_parsed + 0.5 w_novel = 0.35 and at least
  -0.5 w_contra = -0.075 with Spring's weights.
- ``"final"``: nothing until the solution action, which pays the whole trace score.

Each action has its own verification budget (``verify_budget_s``), reported in
``info["verify_budget"]`` (see :mod:`.budget`). Reward components always have the same keys
(Spring's names, :mod:`.reward`), zero where a term does not apply.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..capabilities import Outcome, StepCapability, StepSession
from ..instance import Instance
from ..payout import Payout
from ..problem import Gold
from .trace import EMPTY_REASONING, TraceSession, extract_answer, format_answer, split_prefix, split_step_action

__all__ = ["SpringSteps", "SpringSession", "STEP_CREDITS"]

#: how step mode spreads the trace score over the episode (see the module docstring)
STEP_CREDITS = ("running", "final")


class SpringSteps(StepCapability):
    """Spring's step mode of a :class:`~.problem.StepProblem` (see the module docstring)."""

    settings = {"step_credit": "running"}

    @classmethod
    def validate_settings(cls, settings: dict[str, Any]) -> dict[str, Any]:
        out = super().validate_settings(settings)
        if out["step_credit"] not in STEP_CREDITS:
            raise ValueError(f"step_credit must be one of {STEP_CREDITS}, got {out['step_credit']!r}")
        return out

    def prompt(self, instance: Instance) -> str:
        return self.problem.prompt(instance, step=True, step_credit=self.settings["step_credit"])

    def session(self, instance: Instance) -> "SpringSession":
        return SpringSession(self.problem, instance, self.settings["step_credit"])

    def gold(self, instance: Instance) -> Gold:
        """The true premises, then the gold steps, then the solution."""
        return self.problem.gold_episode(instance)


class SpringSession(StepSession):
    """One step-mode episode (see the module docstring)."""

    def __init__(self, problem, instance: Instance, step_credit: str):
        self.problem, self.instance, self.step_credit = problem, instance, step_credit
        self.family = problem.family
        self.trace: TraceSession | None = None  # opened by the first action
        self._format_ok = True
        self._payout = Payout()  # each component paid so far this episode

    @property
    def awaiting_premises(self) -> bool:
        """Whether the next action is the premises (none were accepted yet)."""
        return self.trace is None or not self.trace.premises_set

    # -- actions -----------------------------------------------------------------------------------
    def step(self, text: str) -> Outcome:
        if self.trace is None:
            self.trace = self.problem.new_session(self.instance)
        session = self.trace
        session.start_action()
        obj, err, issues = extract_answer(text)
        if obj is not None and "solution" in obj:
            return self._finish(obj, issues)
        if not session.premises_set:
            if obj is None:
                obj = self._premises_from_lines(text)
                if obj is None:
                    return self.invalid(err if "<answer>" in text else "the first action must give the premises")
            return self._take_premises(obj, issues)
        if obj is not None:
            return self.invalid("the premises were already given; send a step or the solution")
        parts = split_step_action(text)
        if parts is None:
            self._format_ok = False
            return self.invalid("a step is one sentence followed by 'S<k>: <formula>.'")
        sentence, k, body = parts
        expect = len(session.steps) + 1
        if k != expect or not sentence or not text.rstrip().endswith("."):
            self._format_ok = False
        session.n_entries += 2
        v = session.add_step(sentence, k, body)
        info = {"step": v.as_dict(), "correct": False, "verify_budget": session.budget.as_dict()}
        comps = self._pay(self._running())
        if v.label == "parse_error":
            reason = f"S{k}: {v.reason}"
            return Outcome(comps, False, f"Format error: {reason}. The step was not accepted.", info | {"reason": reason},
                           error=reason)
        gate = "" if session.s_sat else f" (no process reward: {self._gate_reason()})"
        obs = f"S{k}: {v.label} - {v.reason}{gate}. Send the next step or the solution."
        return Outcome(comps, False, obs, info | {"reason": v.reason})

    def invalid(self, reason: str) -> Outcome:
        obs = f"Format error: {reason}. " + self._hint()
        budget = self.trace.budget.as_dict() if self.trace is not None else self.problem.idle_budget()
        info = {"reason": reason, "correct": False, "verify_budget": budget}
        return Outcome(self.problem.zero(), False, obs, info, error=reason)

    def sample_answer(self, rng: np.random.Generator) -> str:
        """The family's schema with a random solution and no steps: the premises part while they
        are awaited, then the solution alone."""
        ans = self.family.random_answer(self.instance, rng)
        if self.awaiting_premises:
            return format_answer(self.problem.premises_part(ans))
        return format_answer(self.family.solution_only(ans))

    # -- the protocol's parts ----------------------------------------------------------------------
    def _hint(self) -> str:
        if self.awaiting_premises:
            return "First send the premises: <answer>{...}</answer> with the premise keys described in the task."
        return ("Send one reasoning step as a sentence followed by 'S<k>: <formula>.', or the final "
                "solution as <answer>{\"solution\": ...}</answer>.")

    def _running(self) -> dict[str, float]:
        """The episode's value so far (``step_credit``; see the module docstring)."""
        if self.step_credit == "final" or self.trace is None:
            return self.problem.zero()
        return self.trace.running_components()

    def _pay(self, value: dict[str, float]) -> dict[str, float]:
        """Pay the change from what the episode has been paid to ``value``, per component."""
        return self._payout.pay({key: value.get(key, 0.0) for key in self.problem.zero()})

    def _gate_reason(self) -> str:
        session = self.trace
        base = session.base if session is not None else None
        if base is None or not base.sat:
            return "the premises are not satisfiable"
        if session.require_unique and not base.unique:
            return "the premises do not have a unique solution"
        if session.require_faithful and not session.faithful:
            return "the premises are not equivalent to the true clues"
        return "the premises do not pass the gate"

    def _premises_from_lines(self, text: str) -> dict[str, Any] | None:
        groups = self.family.premise_groups
        if len(groups) != 1:
            return None
        entries = [line.strip() for line in text.splitlines() if line.strip()]
        entries = [e for e in entries if split_prefix(e)[0] == groups[0].letter]
        return {groups[0].key: entries} if entries else None

    def _take_premises(self, obj: dict[str, Any], issues: list[str]) -> Outcome:
        session = self.trace
        problems = session.set_premises(obj)
        if problems:
            self.trace = self.problem.new_session(self.instance)  # a failed premise list may be sent again
            return self.invalid("premises do not parse: " + "; ".join(problems[:5]))
        session.format_issues.extend(issues)
        comps = self._pay(self._running())
        base = session.base
        state = base.reason if base else ""
        if session.faithful is not None:
            state += "; they are " + ("" if session.faithful else "not ") + "equivalent to the true clues"
        nxt = "Send your first reasoning step as a sentence followed by 'S1: <formula>.'"
        if not session.s_sat:
            state += f" (no process reward: {self._gate_reason()})"
        info = {"premises": {"count": len(session.premise_exprs), "sat": base.sat if base else None,
                             "unique": base.unique if base else None, "equivalent": session.faithful,
                             "gate": session.s_sat},
                "reason": state, "correct": False, "verify_budget": session.budget.as_dict()}
        return Outcome(comps, False, f"Premises accepted: {state}. {nxt}", info)

    def _finish(self, obj: dict[str, Any], issues: list[str]) -> Outcome:
        session = self.trace
        session.format_issues.extend(issues)
        if self.problem.reward_config.interleaved and session.n_entries == 0:
            # the trace of this episode has an empty "reasoning" list: trace mode's format issue
            session.format_issues.append(EMPTY_REASONING)
        res = session.finish(obj, format_ok=self._format_ok)
        full = res.components
        comps = self._pay(full)
        obs = ("Correct" if res.correct else "Incorrect") + f": {res.reason}"
        return Outcome(comps, True, obs, self.problem.result_info(res) | {"trace_reward": res.reward,
                                                                          "trace_components": dict(full)})
