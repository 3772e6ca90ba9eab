"""The step-verified mode of the Spring families (Zebra, Knights & Knaves, AR-LSAT), and their
env: one env class, two modes, built on the family's :class:`~.problem.StepProblem`.

``mode="trace"`` (Spring's setting, §4.1-4.3) is the single-turn mode posing the problem: one
action holds the whole answer, scored by :meth:`~.problem.StepProblem.score` (reward R of §4.3,
the per-step verdicts in ``info["steps"]``); an action without a parseable JSON object is a
format failure (every component 0, ``info["error"]``).

``mode="step"``: the agent reasons step by step inside its own loop.

1. The first action gives the parsed premises: ``<answer>{...}</answer>`` with the family's
   premise keys (Zebra ``syntactic_clues``; Knights ``syntactic_statements``; AR-LSAT ``rules``,
   ``facts``, ``options``), or for Zebra and Knights simply one ``C<i>: formula.`` per line.
   If a premise does not parse it is a format failure and may be resent. The observation says
   whether the premises are satisfiable, unique and equivalent to the true clues.
2. Each following action is one reasoning step, one natural-language sentence and its formula:
   ``"Bob lives in house 2. S1: Bob == 2."``. It is verified when it arrives (Definitions 2-5,
   against the premises and the steps accepted so far); the verdict is the next observation
   and ``info["step"]``. A formula that does not parse is a format failure.
3. The final action is the solution, ``<answer>{"solution": ...}</answer>``; the episode
   terminates and ``info`` carries every verdict and the trace metrics, as in trace mode. A
   solution with no step before it breaks the format, as an empty ``reasoning`` list does in
   trace mode (Spring App. E: reasoning is mandatory).

What step mode pays (``step_credit``): the episode's total of each component is the trace-mode
score of the same premises, steps and solution (``info["trace_components"]``), to rounding.

- ``"running"`` (default): every action pays the change of the running value
  (:meth:`TraceSession.running_components`: Spring §4.3 with the step fractions as they stand,
  m = 0.5 s_sat since r_accuracy is not known yet, r_consistency and r_format 0), so the
  premises earn ``parsed`` 0.15, a novel step raises the novel fraction and is paid, a redundant
  one lowers it and costs, a contradiction costs, an unparseable step takes ``parsed`` back;
  the solution action pays the remainder (accuracy, format, consistency, and m's rise to
  0.5 + 0.5 r_accuracy on the process terms). Nothing is paid per step as such, so a long run
  of steps earns no more than the trace mode's score (solvergym's earlier fixed +0.10 per novel
  step paid 21.15 for 200 steps against 1.55 for the gold trace). An episode truncated before
  its solution has been paid the running value: at most w_parsed + 0.5 w_novel = 0.35 and at
  least -0.5 w_contra = -0.075 with Spring's weights.
- ``"final"``: nothing until the solution action, which pays the whole trace score.

Each ``env.step`` has its own verification budget (``verify_budget_s``; trace mode: the whole
trace), reported in ``info["verify_budget"]`` (see :mod:`.verifier`).

``max_turns`` defaults to 1 in trace mode and 256 in step mode (premises, up to 254 steps,
solution). Reward components always have the same keys (Spring's names, :mod:`.reward`), zero
where a term does not apply.

Keywords: the problem's difficulty knobs and settings (:mod:`.problem`: the verifier's settings
and the family's own), and the mode's own: ``mode``, ``step_credit``, ``max_turns``,
``max_action_chars``, ``render_mode``.

For agents (``agents/scripted.py``): :meth:`gold` (trace mode: the gold JSON answer with the
gold reasoning; step mode: also the episode's actions, the true premises, then the gold steps,
then the solution) and :meth:`sample_answer` (the family's schema with a random solution and no
steps, so r_format 0 in the interleaved presets).
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ..base import Instance, Outcome, _signature_defaults
from ..modes.single import SingleTurnEnv, resolve_problem
from ..problem import Gold, Problem, settings_defaults
from .family import Family
from .problem import StepProblem, format_answer
from .reward import RewardConfig
from .trace import EMPTY_REASONING, TraceResult, TraceSession, extract_answer, split_prefix, split_step_action

__all__ = ["StepVerifiedEnv", "STEP_CREDITS"]

MODES = ("trace", "step")
#: how step mode spreads the trace score over the episode (see the module docstring)
STEP_CREDITS = ("running", "final")


class StepVerifiedEnv(SingleTurnEnv):
    """A step-verified family's env, trace or step mode (see the module docstring). A family's
    id subclasses it with ``problem_cls``, its :class:`~.problem.StepProblem`."""

    problem: StepProblem

    def __init__(self, *knob_args: Any, mode: str = "trace", step_credit: str = "running",
                 max_turns: int | None = None, max_action_chars: int | None = None,
                 render_mode: str | None = None, problem: str | Callable[..., Problem] | None = None,
                 reward_weights: dict[str, float] | None = None, **kwargs: Any):
        if mode not in MODES:
            raise ValueError(f"mode must be 'trace' or 'step', got {mode!r}")
        if step_credit not in STEP_CREDITS:
            raise ValueError(f"step_credit must be one of {STEP_CREDITS}, got {step_credit!r}")
        if max_turns is None:
            max_turns = 1 if mode == "trace" else 256
        super().__init__(*knob_args, problem=problem, max_turns=max_turns, max_action_chars=max_action_chars,
                         render_mode=render_mode, reward_weights=reward_weights, **kwargs)
        if not isinstance(self.problem, StepProblem):
            raise TypeError(f"{type(self).__name__} poses a step-verified problem, not {type(self.problem).__name__}")
        self.mode = mode
        self.step_credit = step_credit
        self._session: TraceSession | None = None
        self._step_format_ok = True
        self._paid: dict[str, float] = {}  # step mode: each component paid so far this episode

    @classmethod
    def kwargs_defaults(cls) -> dict[str, Any]:
        """Every keyword argument the env takes and its default: the difficulty knobs, the
        problem's settings (the family's, then the verifier's), then the mode's own."""
        factory = resolve_problem(None, cls.problem_cls)
        return {**factory.Knobs.defaults(), **settings_defaults(factory),
                **_signature_defaults(StepVerifiedEnv.__init__, skip=("problem",))}

    # -- the problem's parts, as the env's attributes ------------------------------------------------
    @property
    def family(self) -> Family:
        return self.problem.family

    @property
    def reward_config(self) -> RewardConfig:
        return self.problem.reward_config

    def gold_steps(self) -> list[tuple[str, str]]:
        return self.problem.gold_steps(self.instance)

    def score(self, text: str) -> TraceResult:
        """Trace-mode verification of ``text`` against the current instance (no env step)."""
        return self.problem.score_trace(self.instance, text)

    # -- TextEnv hooks ---------------------------------------------------------------------------------
    def prompt(self, instance: Instance) -> str:
        return self.problem.prompt(instance, step=self.mode == "step")

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        obs, info = super().reset(seed=seed, options=options)
        self._session = None
        self._step_format_ok = True
        self._paid = self.problem.zero()
        return obs, info

    def reset_info(self, instance: Instance) -> dict[str, Any]:
        return {"mode": self.mode, **self.problem.reset_info(instance)}

    def evaluate(self, text: str) -> Outcome:
        if self.mode == "trace":
            return self._outcome(self.problem.score(self.instance, text))
        return self._evaluate_step(text)

    def format_failure(self, reason: str) -> Outcome:
        if self.mode == "trace":
            return super().format_failure(reason)
        obs = f"Format error: {reason}. " + self._step_hint()
        info = {"reason": reason, "correct": False, "verify_budget": self._budget_info()}
        return Outcome(self.problem.zero(), False, obs, info, error=reason)

    # -- step mode --------------------------------------------------------------------------------------
    def _budget_info(self) -> dict[str, Any]:
        if self._session is not None:
            return self._session.budget.as_dict()
        return self.problem.idle_budget()

    def _step_hint(self) -> str:
        if self._session is None or not self._session.premises_set:
            return "First send the premises: <answer>{...}</answer> with the premise keys described in the task."
        return ("Send one reasoning step as a sentence followed by 'S<k>: <formula>.', or the final "
                "solution as <answer>{\"solution\": ...}</answer>.")

    def _evaluate_step(self, text: str) -> Outcome:
        if self._session is None:
            self._session = self.problem.new_session(self.instance)
        session = self._session
        session.start_action()
        obj, err, issues = extract_answer(text)
        if obj is not None and "solution" in obj:
            return self._finish_step_episode(obj, issues)
        if not session.premises_set:
            if obj is None:
                obj = self._premises_from_lines(text)
                if obj is None:
                    return self.format_failure(err if "<answer>" in text else
                                               "the first action must give the premises")
            return self._take_premises(obj, issues)
        if obj is not None:
            return self.format_failure("the premises were already given; send a step or the solution")
        parts = split_step_action(text)
        if parts is None:
            self._step_format_ok = False
            return self.format_failure("a step is one sentence followed by 'S<k>: <formula>.'")
        sentence, k, body = parts
        expect = len(session.steps) + 1
        if k != expect or not sentence or not text.rstrip().endswith("."):
            self._step_format_ok = False
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

    def _running(self) -> dict[str, float]:
        """The episode's value so far (``step_credit``; see the module docstring)."""
        if self.step_credit == "final" or self._session is None:
            return self.problem.zero()
        return self._session.running_components()

    def _pay(self, value: dict[str, float]) -> dict[str, float]:
        """Pay the change from what the episode has been paid to ``value``, per component."""
        comps = self.problem.zero()
        for key in comps:
            comps[key] = value.get(key, 0.0) - self._paid.get(key, 0.0)
            self._paid[key] = value.get(key, 0.0)
        return comps

    def _gate_reason(self) -> str:
        session = self._session
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
        session = self._session
        problems = session.set_premises(obj)
        if problems:
            self._session = self.problem.new_session(self.instance)  # a failed premise list may be sent again
            reason = "premises do not parse: " + "; ".join(problems[:5])
            return self.format_failure(reason)
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

    def _finish_step_episode(self, obj: dict[str, Any], issues: list[str]) -> Outcome:
        session = self._session
        session.format_issues.extend(issues)
        if self.reward_config.interleaved and session.n_entries == 0:
            # the trace of this episode has an empty "reasoning" list: trace mode's format issue
            session.format_issues.append(EMPTY_REASONING)
        res = session.finish(obj, format_ok=self._step_format_ok)
        full = res.components
        comps = self._pay(full)
        obs = ("Correct" if res.correct else "Incorrect") + f": {res.reason}"
        return Outcome(comps, True, obs, self.problem.result_info(res) | {"trace_reward": res.reward,
                                                                          "trace_components": dict(full)})

    # -- scripted agents --------------------------------------------------------------------------------
    def gold(self) -> Gold:
        """Trace mode: the gold answer (with the gold reasoning when the preset is interleaved).
        Step mode: also the gold episode's actions, the true premises, then the gold steps, then
        the solution."""
        if self.mode == "trace":
            return self.problem.gold(self.instance)
        return self.problem.gold_episode(self.instance)

    @property
    def awaiting_premises(self) -> bool:
        """Step mode: whether the next action is the premises (none were accepted yet)."""
        return self._session is None or not self._session.premises_set

    def sample_answer(self, rng: np.random.Generator) -> str:
        """The family's schema with a random solution and no steps; in step mode the premises part
        while they are awaited, then the solution alone."""
        if self.mode == "trace":
            return self.problem.sample_answer(self.instance, rng)
        ans = self.problem.family.random_answer(self.instance, rng)
        if self.awaiting_premises:
            return format_answer(self.problem.premises_part(ans))
        return format_answer(self.family.solution_only(ans))
