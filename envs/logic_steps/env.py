"""The env shared by the step-verified families (Zebra, Knights & Knaves, AR-LSAT), two modes.

``mode="trace"`` (Spring's setting, §4.1-4.3): one action holds the whole answer, a single JSON
object in ``<answer>...</answer>`` with the family's keys (App. E); one step; reward R of §4.3
(:mod:`.reward`); the per-step verdicts in ``info["steps"]``. An action without a parseable JSON
object is a format failure (every component 0, ``info["error"]``).

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

For agents (``agents/scripted.py``): :meth:`gold` (trace mode: the gold JSON answer with the
gold reasoning; step mode: also the episode's actions, the true premises, then the gold steps,
then the solution) and :meth:`sample_answer` (the family's schema with a random solution and no
steps, so r_format 0 in the interleaved presets).
"""
from __future__ import annotations

import inspect
import json
from collections import OrderedDict
from typing import Any, ClassVar

import numpy as np

from ..base import Instance, Outcome, TextEnv, _signature_defaults
from ..modes.single import ProblemEnvMixin
from ..problem import Gold, Knobs, NoKnobs
from .family import Family
from .metrics import trace_row
from .reward import RewardConfig, get_preset
from .trace import (
    DEFAULT_MAX_STEPS,
    DEFAULT_VERIFY_BUDGET_S,
    EMPTY_REASONING,
    TraceResult,
    TraceSession,
    extract_answer,
    score_trace,
    split_prefix,
    split_step_action,
    zero_components,
)
from .verifier import check_accept, check_novelty

__all__ = ["StepVerifiedEnv", "format_answer", "gold_steps", "gold_trace", "STEP_CREDITS"]

MODES = ("trace", "step")
#: how step mode spreads the trace score over the episode (see the module docstring)
STEP_CREDITS = ("running", "final")


def format_answer(obj: dict[str, Any]) -> str:
    return "<answer>" + json.dumps(obj, ensure_ascii=False) + "</answer>"


def gold_steps(family: Family, instance: Instance, novelty: str = "facts") -> list[tuple[str, str]]:
    """The gold reasoning: the family's candidate deductions that the verifier finds novel (under
    ``novelty``), in order, when checked against the true premises and the novel ones kept
    before it (so each one stays novel when replayed without the candidates that were dropped).
    No verification budget: the gold is a function of the instance alone."""
    session = TraceSession(family, instance, get_preset("spring"), accept="novel", novelty=novelty, budget_s=None)
    session.set_premises(family.gold_answer(instance))
    out = []
    for sentence, formula in family.gold_step_candidates(instance):
        v = session.add_step(sentence, len(session.steps) + 1, formula)
        if v.label == "novel":
            out.append((sentence, formula))
    if not out:
        # every single deduction restated a premise: the whole solution at once is new
        fallback = family.gold_fallback(instance)
        if fallback is not None:
            fresh = TraceSession(family, instance, get_preset("spring"), novelty=novelty, budget_s=None)
            fresh.set_premises(family.gold_answer(instance))
            if fresh.add_step(fallback[0], 1, fallback[1]).label == "novel":
                out.append(fallback)
    return out


def gold_trace(family: Family, instance: Instance, steps: list[tuple[str, str]] | None = None,
               novelty: str = "facts") -> dict[str, Any]:
    """The gold JSON answer with interleaved reasoning (sentence, ``S<k>: formula.``)."""
    ans = family.gold_answer(instance)
    steps = gold_steps(family, instance, novelty) if steps is None else steps
    reasoning = []
    for k, (sentence, formula) in enumerate(steps, 1):
        reasoning += [sentence if sentence.endswith(".") else sentence + ".", f"S{k}: {formula}."]
    ans["reasoning"] = reasoning
    return ans


class StepVerifiedEnv(ProblemEnvMixin, TextEnv):
    """Base env of the step-verified families (see the module docstring).

    A family sets ``family``, ``instance_cls``, ``Knobs`` (its difficulty knobs, a frozen
    :class:`~..problem.Knobs` dataclass: ``self.knobs``, ``options["difficulty"]``), ``settings``
    (its other constructor arguments, name -> default, stored as attributes of the same name and
    checked by :meth:`check_settings`) and ``fixed_kwargs`` (keywords of this ``__init__`` the
    family sets itself, which callers may not give). Positional arguments fill the knobs in field
    order; :meth:`kwargs_defaults` lists every keyword the env takes.
    """

    family: ClassVar[Family]
    Knobs: ClassVar[type[Knobs]] = NoKnobs
    #: the family's settings (not difficulty): name -> default
    settings: ClassVar[dict[str, Any]] = {}
    #: keywords of ``__init__`` the family fixes: name -> the value it passes
    fixed_kwargs: ClassVar[dict[str, Any]] = {}

    def __new__(cls, *args: Any, **kwargs: Any):
        # a fixed keyword is a parameter of __init__, so Python would bind it: refuse it here
        fixed = sorted(set(kwargs) & set(cls.fixed_kwargs))
        if fixed:
            raise TypeError(f"{cls.__name__} got an unexpected keyword argument {fixed[0]!r} "
                            f"(the family fixes {fixed[0]}={cls.fixed_kwargs[fixed[0]]!r})")
        return super().__new__(cls)

    def __init__(
        self,
        *knob_args: Any,
        mode: str = "trace",
        reward: str | RewardConfig | dict = "spring",
        aggregation: str | None = None,
        step_credit: str = "running",
        accept: str = "non_contradictory",
        novelty: str = "facts",
        require_unique: bool | None = None,
        require_faithful: bool = True,
        incremental: bool = True,
        consistency_over: str = "all",
        max_steps: int = DEFAULT_MAX_STEPS,
        verify_budget_s: float | None = DEFAULT_VERIFY_BUDGET_S,
        max_turns: int | None = None,
        max_action_chars: int | None = None,
        render_mode: str | None = None,
        **kwargs: Any,
    ):
        # the mode's own keywords (the signature above), with the family's fixed values
        given = locals()
        own = {name: given[name] for name in _MODE_KEYWORDS} | self.fixed_kwargs
        mode = own["mode"]
        if mode not in MODES:
            raise ValueError(f"mode must be 'trace' or 'step', got {mode!r}")
        max_turns = own["max_turns"]
        if max_turns is None:
            max_turns = 1 if mode == "trace" else 256
        kw = {} if own["max_action_chars"] is None else {"max_action_chars": own["max_action_chars"]}
        super().__init__(max_turns=max_turns, render_mode=own["render_mode"], **kw)
        self.mode = mode
        aggregation = own["aggregation"]
        self.reward_config = get_preset(own["reward"], **({"aggregation": aggregation} if aggregation else {}))
        if own["step_credit"] not in STEP_CREDITS:
            raise ValueError(f"step_credit must be one of {STEP_CREDITS}, got {own['step_credit']!r}")
        self.step_credit = own["step_credit"]
        self.accept = check_accept(own["accept"])
        self.novelty = check_novelty(own["novelty"])
        verify_budget_s = own["verify_budget_s"]
        if verify_budget_s is not None and not verify_budget_s > 0:
            raise ValueError(f"verify_budget_s must be > 0 or None, got {verify_budget_s!r}")
        self.verify_budget_s = None if verify_budget_s is None else float(verify_budget_s)
        self.require_unique = own["require_unique"]
        self.require_faithful = bool(own["require_faithful"])
        self.incremental = bool(own["incremental"])
        if own["consistency_over"] not in ("all", "accepted"):
            raise ValueError(f"consistency_over must be 'all' or 'accepted', got {own['consistency_over']!r}")
        self.consistency_over = own["consistency_over"]
        self.max_steps = int(own["max_steps"])
        knobs, settings = self._split_kwargs(knob_args, kwargs)
        self.knobs = self.Knobs.make(**knobs)
        for name, value in self.check_settings(settings).items():
            setattr(self, name, value)
        self._session: TraceSession | None = None
        self._step_format_ok = True
        self._paid: dict[str, float] = {}  # step mode: each component paid so far this episode
        self._gold: OrderedDict[str, list[tuple[str, str]]] = OrderedDict()

    # ------------------------------------------------------------------ knobs and settings
    @classmethod
    def knobs_class(cls) -> type[Knobs]:
        """The family's difficulty knobs (a :class:`~..problem.Knobs` dataclass)."""
        return cls.Knobs

    @classmethod
    def kwargs_defaults(cls) -> dict[str, Any]:
        """Every keyword argument the env takes and its default: the difficulty knobs, the
        family's settings, then the mode's own keywords (less those the family fixes)."""
        own = _signature_defaults(StepVerifiedEnv.__init__, skip=tuple(cls.fixed_kwargs))
        return {**cls.Knobs.defaults(), **cls.settings, **own}

    @classmethod
    def check_settings(cls, settings: dict[str, Any]) -> dict[str, Any]:
        """Raise ``ValueError`` for a bad setting; return the settings to store (normalised)."""
        return settings

    @classmethod
    def _split_kwargs(cls, args: tuple, kwargs: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
        """``(knobs, settings)`` from the positional knobs and the other keyword arguments
        (settings not given take their defaults)."""
        names = cls.Knobs.names()
        if len(args) > len(names):
            raise TypeError(f"{cls.__name__} takes at most {len(names)} positional arguments (the difficulty "
                            f"knobs {list(names)}), got {len(args)}")
        knobs = dict(zip(names, args))
        settings = dict(cls.settings)
        for key, value in kwargs.items():
            if key in names:
                if key in knobs:
                    raise TypeError(f"{cls.__name__} got multiple values for difficulty knob {key!r}")
                knobs[key] = value
            elif key in settings:
                settings[key] = value
            else:
                raise TypeError(f"{cls.__name__} got an unexpected keyword argument {key!r}; its difficulty "
                                f"knobs are {list(names)} and its settings {list(cls.settings)}")
        return knobs, settings

    # ------------------------------------------------------------------ family text hooks
    def problem_text(self, instance: Instance) -> str:
        raise NotImplementedError

    def instructions(self, instance: Instance) -> str:
        """How to answer (App. E, adapted to the mode and to the reward preset)."""
        raise NotImplementedError

    def prompt(self, instance: Instance) -> str:
        return self.problem_text(instance).rstrip() + "\n\n" + self.instructions(instance).rstrip() + "\n"

    # ------------------------------------------------------------------ plumbing
    def _session_kw(self) -> dict[str, Any]:
        return {"incremental": self.incremental, "accept": self.accept, "novelty": self.novelty,
                "require_unique": self.require_unique, "require_faithful": self.require_faithful,
                "max_steps": self.max_steps, "budget_s": self.verify_budget_s,
                "consistency_over": self.consistency_over}

    def _new_session(self) -> TraceSession:
        return TraceSession(self.family, self.instance, self.reward_config, **self._session_kw())

    def _zero(self) -> dict[str, float]:
        return zero_components(self.reward_config)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        obs, info = super().reset(seed=seed, options=options)
        self._session = None
        self._step_format_ok = True
        self._paid = self._zero()
        return obs, info

    def reset_info(self, instance: Instance) -> dict[str, Any]:
        return {"mode": self.mode, "reward_preset": self.reward_config.name}

    def score(self, text: str) -> TraceResult:
        """Trace-mode verification of ``text`` against the current instance (no env step)."""
        return score_trace(self.family, self.instance, text, self.reward_config, **self._session_kw())

    # ------------------------------------------------------------------ evaluate
    def evaluate(self, text: str) -> Outcome:
        if self.mode == "trace":
            return self._evaluate_trace(text)
        return self._evaluate_step(text)

    def format_failure(self, reason: str) -> Outcome:
        obs = f"Format error: {reason}. " + self._format_hint()
        return Outcome(self._zero(), False, obs, {"reason": reason, "correct": False,
                                                  "verify_budget": self._budget_info()}, error=reason)

    def _budget_info(self) -> dict[str, Any]:
        if self.mode == "step" and self._session is not None:
            return self._session.budget.as_dict()
        return {"budget_s": self.verify_budget_s, "used_s": 0.0, "exhausted": False}

    def _format_hint(self) -> str:
        if self.mode == "trace":
            return "Answer with one JSON object inside <answer>...</answer> as described in the task."
        if self._session is None or not self._session.premises_set:
            return "First send the premises: <answer>{...}</answer> with the premise keys described in the task."
        return ("Send one reasoning step as a sentence followed by 'S<k>: <formula>.', or the final "
                "solution as <answer>{\"solution\": ...}</answer>.")

    def _result_info(self, res: TraceResult) -> dict[str, Any]:
        return {
            "steps": [v.as_dict() for v in res.steps],
            "signals": res.signals(),
            "metrics": trace_metrics(res),
            "error_type": res.error_type,
            "reason": res.reason,
            "correct": res.correct,
            "format_issues": list(res.format_issues),
            "parse_issues": list(res.parse_issues),
            "verify_budget": dict(res.verify_budget),
        }

    def _evaluate_trace(self, text: str) -> Outcome:
        res = self.score(text)
        if not res.answered:
            return self.format_failure(res.error or "no answer")
        lines = [("Correct" if res.correct else "Incorrect") + f" (reward {res.reward:.3f}): {res.reason}"]
        for v in res.steps[:50]:
            lines.append(f"S{v.k if v.k is not None else '?'}: {v.label} - {v.reason}")
        if len(res.steps) > 50:
            lines.append(f"... {len(res.steps) - 50} more steps")
        return Outcome(res.components, True, "\n".join(lines), self._result_info(res))

    def _evaluate_step(self, text: str) -> Outcome:
        if self._session is None:
            self._session = self._new_session()
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
            return self._zero()
        return self._session.running_components()

    def _pay(self, value: dict[str, float]) -> dict[str, float]:
        """Pay the change from what the episode has been paid to ``value``, per component."""
        comps = self._zero()
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
            self._session = self._new_session()  # a failed premise list may be sent again
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
        return Outcome(comps, True, obs, self._result_info(res) | {"trace_reward": res.reward,
                                                                  "trace_components": dict(full)})

    # ------------------------------------------------------------------ scripted agents
    def gold_steps(self) -> list[tuple[str, str]]:
        key = self.instance.instance_id
        if key not in self._gold:
            self._gold[key] = gold_steps(self.family, self.instance, self.novelty)
            while len(self._gold) > 64:
                self._gold.popitem(last=False)
        return self._gold[key]

    def gold(self) -> Gold:
        """Trace mode: the gold answer (with the gold reasoning when the preset is interleaved).
        Step mode: also the gold episode's actions, the true premises, then the gold steps, then
        the solution."""
        gold_answer = self.family.gold_answer(self.instance)
        solution = format_answer(self.family.solution_only(gold_answer))
        if self.mode == "trace":
            if self.reward_config.interleaved:
                return Gold(format_answer(gold_trace(self.family, self.instance, self.gold_steps())))
            return Gold(solution)
        premises = format_answer({k: v for k, v in gold_answer.items() if k not in ("reasoning", "solution")})
        steps = [f"{sentence.rstrip('.')}. S{k}: {formula}." for k, (sentence, formula) in enumerate(self.gold_steps(), 1)]
        return Gold(solution, steps=[premises, *steps, solution])

    @property
    def awaiting_premises(self) -> bool:
        """Step mode: whether the next action is the premises (none were accepted yet)."""
        return self._session is None or not self._session.premises_set

    def sample_answer(self, rng: np.random.Generator) -> str:
        """The family's schema with a random solution and no steps; in step mode the premises part
        while they are awaited, then the solution alone."""
        ans = self.family.random_answer(self.instance, rng)
        if self.mode == "trace":
            return format_answer(ans if self.reward_config.interleaved else self.family.solution_only(ans))
        if self.awaiting_premises:
            return format_answer({k: v for k, v in ans.items() if k not in ("reasoning", "solution")})
        return format_answer(self.family.solution_only(ans))


#: the keywords of :meth:`StepVerifiedEnv.__init__` that are the mode's own (not knobs or settings)
_MODE_KEYWORDS = tuple(name for name, p in inspect.signature(StepVerifiedEnv.__init__).parameters.items()
                       if p.kind is p.KEYWORD_ONLY)


def trace_metrics(res: TraceResult) -> dict[str, Any]:
    """Per-trace numbers behind Spring's Table 2 / App. B.2 (see :mod:`.metrics`)."""
    return trace_row(res)
