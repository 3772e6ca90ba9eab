"""A step-verified family (Spring §4) as a :class:`~..problem.Problem`: its trace mode.

A family (Zebra, Knights & Knaves, AR-LSAT) subclasses :class:`StepProblem` with its
:class:`~.family.Family` (the verifier's interface: schema, vocabulary, Γ_dom, ground truth), its
instance type, its ``Knobs``, ``generate`` and its prompt text. The problem's :meth:`~StepProblem.score`
is trace mode (§4.1-4.3): one action holds the whole answer, a single JSON object in
``<answer>...</answer>`` with the family's keys (App. E), scored by the reward R of §4.3
(:mod:`.reward`) with the per-step verdicts in ``info["steps"]``. An answer without a parseable
JSON object is a format failure (every component 0).

Trace mode is therefore the single-turn mode posing this problem (``SingleTurnEnv(problem="zebra")``
is ``SolverZebra-v0``); step mode, which verifies one step per action, is the step mode over the
problem's ``steps`` capability (:class:`~.steps.SpringSteps`; ``SolverZebra-v0(mode="step")``).

Settings (constructor keywords, :data:`VERIFIER_SETTINGS`, the same for every family, then the
family's own ``family_settings``): the reward preset and its aggregation, the verifier's accept
and novelty rules, the gate (``require_unique``, ``require_faithful``), ``incremental`` solving,
``consistency_over``, ``max_steps`` and the verification budget ``verify_budget_s`` per action
(see :mod:`.trace`, :mod:`.verdict` and :mod:`.budget`). A family may fix a setting
(``fixed_settings``: AR-LSAT fixes ``require_unique=False``); a caller may not give a fixed one.
"""
from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from ..instance import Instance
from ..problem import Gold, Problem, Verdict
from .family import Family
from .metrics import trace_row
from .reward import get_preset
from .steps import SpringSteps
from .trace import (
    DEFAULT_MAX_STEPS,
    DEFAULT_VERIFY_BUDGET_S,
    TraceResult,
    TraceSession,
    format_answer,
    score_trace,
    zero_components,
)
from .verdict import check_accept, check_novelty

__all__ = ["StepProblem", "TraceVerdict", "VERIFIER_SETTINGS", "format_answer", "gold_steps", "gold_trace"]

#: the verifier's settings of every step-verified family, name -> default (module docstring)
VERIFIER_SETTINGS: dict[str, Any] = {
    "reward": "spring",  # a preset name of .reward, a RewardConfig or its dict
    "aggregation": None,  # None: the preset's; "product" (Spring eq. 4) or "sum" (eq. 5)
    "accept": "non_contradictory",
    "novelty": "facts",
    "require_unique": None,  # None: the family's rule (Family.require_unique)
    "require_faithful": True,
    "incremental": True,
    "consistency_over": "all",
    "max_steps": DEFAULT_MAX_STEPS,
    "verify_budget_s": DEFAULT_VERIFY_BUDGET_S,
}

#: how many instances' gold reasoning a problem keeps (computing it runs the verifier)
_GOLD_CACHE = 64


#: where a family's step-mode instructions put :meth:`StepProblem.step_payment`'s sentences
STEP_PAYMENT = "{step payment}"


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


@dataclass
class TraceVerdict(Verdict):
    """A trace-mode verdict and the full verification behind it (for the observation)."""

    result: TraceResult | None = None


class StepProblem(Problem):
    """Base of the step-verified families' problems (see the module docstring).

    A family sets ``family``, ``instance_cls``, ``Knobs``, ``family_settings`` (its own settings,
    name -> default, stored as attributes of the same name; :meth:`check_family_settings`
    validates them) and ``fixed_settings``, and implements :meth:`generate`, :meth:`describe`,
    :meth:`problem_text` and :meth:`instructions`.
    """

    family: ClassVar[Family]
    #: step mode: Spring's protocol, one step per action (:mod:`.steps`)
    steps = SpringSteps
    #: the family's own settings (not difficulty): name -> default
    family_settings: ClassVar[dict[str, Any]] = {}
    #: verifier settings the family fixes: name -> the value it uses
    fixed_settings: ClassVar[dict[str, Any]] = {}

    def __init__(self, **settings: Any):
        defaults = self.settings_defaults()
        for key in settings:
            if key in self.fixed_settings:
                raise TypeError(f"{type(self).__name__} got an unexpected keyword argument {key!r} "
                                f"(the family fixes {key}={self.fixed_settings[key]!r})")
            if key not in defaults:
                raise TypeError(f"{type(self).__name__} got an unexpected keyword argument {key!r}; "
                                f"its settings are {list(defaults)}")
        s = {**defaults, **self.fixed_settings, **settings}
        aggregation = s["aggregation"]
        self.reward_config = get_preset(s["reward"], **({"aggregation": aggregation} if aggregation else {}))
        self.components = tuple(zero_components(self.reward_config))
        self.accept = check_accept(s["accept"])
        self.novelty = check_novelty(s["novelty"])
        budget = s["verify_budget_s"]
        if budget is not None and not budget > 0:
            raise ValueError(f"verify_budget_s must be > 0 or None, got {budget!r}")
        self.verify_budget_s = None if budget is None else float(budget)
        self.require_unique = s["require_unique"]
        self.require_faithful = bool(s["require_faithful"])
        self.incremental = bool(s["incremental"])
        if s["consistency_over"] not in ("all", "accepted"):
            raise ValueError(f"consistency_over must be 'all' or 'accepted', got {s['consistency_over']!r}")
        self.consistency_over = s["consistency_over"]
        self.max_steps = int(s["max_steps"])
        own = self.check_family_settings({k: s[k] for k in self.family_settings})
        for name, value in own.items():
            setattr(self, name, value)
        self._gold: OrderedDict[str, list[tuple[str, str]]] = OrderedDict()

    @classmethod
    def settings_defaults(cls) -> dict[str, Any]:
        return {**cls.family_settings,
                **{k: v for k, v in VERIFIER_SETTINGS.items() if k not in cls.fixed_settings}}

    @classmethod
    def check_family_settings(cls, settings: dict[str, Any]) -> dict[str, Any]:
        """Raise ``ValueError`` for a bad family setting; return the settings to store."""
        return settings

    # -- the verifier ------------------------------------------------------------------------------
    def session_kw(self) -> dict[str, Any]:
        """The :class:`~.trace.TraceSession` keywords these settings give."""
        return {"incremental": self.incremental, "accept": self.accept, "novelty": self.novelty,
                "require_unique": self.require_unique, "require_faithful": self.require_faithful,
                "max_steps": self.max_steps, "budget_s": self.verify_budget_s,
                "consistency_over": self.consistency_over}

    def new_session(self, instance: Instance) -> TraceSession:
        return TraceSession(self.family, instance, self.reward_config, **self.session_kw())

    def zero(self) -> dict[str, float]:
        return zero_components(self.reward_config)

    def reset_info(self, instance: Instance) -> dict[str, Any]:
        return {"reward_preset": self.reward_config.name}

    # -- text --------------------------------------------------------------------------------------
    def problem_text(self, instance: Instance) -> str:
        raise NotImplementedError

    def instructions(self, instance: Instance, step: bool = False) -> str:
        """How to answer (App. E, adapted to the reward preset; ``step``: step mode's protocol)."""
        raise NotImplementedError

    def prompt(self, instance: Instance, step: bool = False, step_credit: str = "running") -> str:
        text = self.instructions(instance, step)
        if step:
            text = text.replace(STEP_PAYMENT, self.step_payment(step_credit))
        return self.problem_text(instance).rstrip() + "\n\n" + text.rstrip() + "\n"

    #: step mode's prompt, in the family's words: what a novel step fixes, what a premise is
    #: called, what a step that is valid but not novel does (the family's :meth:`instructions`
    #: write :data:`STEP_PAYMENT` where :meth:`step_payment`'s sentences go)
    novel_words: ClassVar[tuple[str, str, str]] = ("fixes something new", "premise", "fixes nothing")

    def step_payment(self, step_credit: str = "running") -> str:
        """What step mode pays a step, as its prompt tells the model: true for this problem's
        reward preset, aggregation, novelty rule and ``step_credit`` (Spring §4.3 paid as in
        :mod:`.steps`; ``tests/test_step_payment.py`` checks every verdict class against it)."""
        cfg = self.reward_config
        new, premise, nothing = self.novel_words
        check = "A solver checks each step and tells you its verdict"
        if not cfg.process or (cfg.w_novel == 0 and cfg.w_contra == 0 and cfg.w_consistency == 0):
            return check + "; steps earn no reward of their own: the reward is for formulas that parse and the right solution."
        if step_credit == "final":
            out = [check + "; nothing is paid before your solution, which is scored with all your steps."]
        else:
            out = [check + ", and each step is paid the change it makes to your score so far."]
        if cfg.w_novel > 0:
            if self.novelty == "facts":
                out.append(f"A step is novel when it is valid and {new}.")
            else:
                out.append(f"A step is novel when it is valid, not implied by your earlier steps and not a "
                           f"restated {premise}.")
            others = f"a repeat, a restated {premise} or a step that {nothing}"
            if cfg.aggregation == "fraction":
                out.append(f"The score counts the share of your steps that are novel: a novel step raises it (or "
                           f"keeps it at 100% while every step so far was novel); {others} lowers it (or keeps it "
                           "at 0 while no step was novel), so more steps do not earn more.")
            elif cfg.aggregation == "any":
                out.append(f"The score counts whether at least one step is novel; {others} changes nothing.")
            else:
                out.append(f"The score counts your novel steps up to the {cfg.cap}th, each one raising it; "
                           f"{others} changes nothing.")
        if cfg.w_contra > 0:
            share = "share" if cfg.aggregation == "fraction" else "number"
            out.append(f"The {share} of your steps that contradict the premises or your earlier steps costs a penalty.")
        out.append("A formula that does not parse takes back the reward for parsing.")
        if cfg.w_consistency > 0:
            out.append("Your steps must agree with your final solution.")
        return " ".join(out)
        return check + " and pays it the change it makes to your score so far. The score counts " + \
            "; ".join(parts) + "."

    def format_hint(self) -> str:
        return "Answer with one JSON object inside <answer>...</answer> as described in the task."

    # -- scoring (trace mode) ----------------------------------------------------------------------
    def score_trace(self, instance: Instance, text: str) -> TraceResult:
        """The full trace-mode verification of ``text`` (§4.2-4.3)."""
        return score_trace(self.family, instance, text, self.reward_config, **self.session_kw())

    def score(self, instance: Instance, text: str) -> TraceVerdict:
        res = self.score_trace(instance, text)
        if not res.answered:
            verdict = self.unanswered(instance, res.error or "no answer")
            # Table 8's "missing output" (or a format failure) is a row of the trace metrics too:
            # its puzzle's cells / characters count, none of them right (App. B.2)
            verdict.info["metrics"] = trace_row(res)
            return verdict
        return TraceVerdict(dict(res.components), True, res.correct, res.reason, info=self.result_info(res), result=res)

    def unanswered(self, instance: Instance, reason: str) -> TraceVerdict:
        return TraceVerdict(self.zero(), False, False, reason, info={"verify_budget": self.idle_budget()})

    def idle_budget(self) -> dict[str, Any]:
        """``info["verify_budget"]`` of an action the verifier did not run on."""
        return {"budget_s": self.verify_budget_s, "used_s": 0.0, "exhausted": False}

    def feedback(self, instance: Instance, verdict: Verdict) -> str:
        if not verdict.answered:
            return f"Format error: {verdict.reason}. " + self.format_hint()
        res = verdict.result  # type: ignore[attr-defined]
        lines = [("Correct" if res.correct else "Incorrect") + f" (reward {res.reward:.3f}): {res.reason}"]
        for v in res.steps[:50]:
            lines.append(f"S{v.k if v.k is not None else '?'}: {v.label} - {v.reason}")
        if len(res.steps) > 50:
            lines.append(f"... {len(res.steps) - 50} more steps")
        return "\n".join(lines)

    @staticmethod
    def result_info(res: TraceResult) -> dict[str, Any]:
        """The ``info`` keys of a verified trace (trace mode, and step mode's final action)."""
        return {
            "steps": [v.as_dict() for v in res.steps],
            "signals": res.signals(),
            "metrics": trace_row(res),
            "error_type": res.error_type,
            "reason": res.reason,
            "correct": res.correct,
            "format_issues": list(res.format_issues),
            "parse_issues": list(res.parse_issues),
            "verify_budget": dict(res.verify_budget),
        }

    # -- for agents --------------------------------------------------------------------------------
    def gold_steps(self, instance: Instance) -> list[tuple[str, str]]:
        """The gold reasoning of ``instance`` (:func:`gold_steps`, cached per instance)."""
        key = instance.instance_id
        if key not in self._gold:
            self._gold[key] = gold_steps(self.family, instance, self.novelty)
            while len(self._gold) > _GOLD_CACHE:
                self._gold.popitem(last=False)
        return self._gold[key]

    def gold(self, instance: Instance) -> Gold:
        """The gold answer, with the gold reasoning when the preset is interleaved."""
        if self.reward_config.interleaved:
            return Gold(format_answer(gold_trace(self.family, instance, self.gold_steps(instance))))
        return Gold(format_answer(self.family.solution_only(self.family.gold_answer(instance))))

    def gold_episode(self, instance: Instance) -> Gold:
        """Step mode's gold: the true premises, then the gold steps, then the solution."""
        gold_answer = self.family.gold_answer(instance)
        solution = format_answer(self.family.solution_only(gold_answer))
        premises = format_answer(self.premises_part(gold_answer))
        steps = [f"{sentence.rstrip('.')}. S{k}: {formula}."
                 for k, (sentence, formula) in enumerate(self.gold_steps(instance), 1)]
        return Gold(solution, steps=[premises, *steps, solution])

    @staticmethod
    def premises_part(answer: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in answer.items() if k not in ("reasoning", "solution")}

    # -- what a policy earns without reading (solvergym.evaluation.blind) ---------------------------
    # A family lists the one right blind answer (``blind_candidates``: a key, or the text itself),
    # writes a key's text where the answer names what the prompt lists (``blind_answer``), and says
    # how often a uniform guess among such answers is right (``blind_chance``) and one wrong key
    # (``blind_wrong``). The answer is the solution alone: r_accuracy is scored, and without
    # premises nothing that depends on the instance is, so right and wrong each earn one reward.
    def blind_chance(self, instance: Instance) -> float:
        raise NotImplementedError

    def blind_wrong(self, instance: Instance, key: str) -> str:
        raise NotImplementedError

    def chance_reward(self, instance: Instance) -> float:
        """The chance line: a uniform guess, right :meth:`blind_chance` of the time, written as the
        solution alone (0.6 right, 0 wrong under the ``spring`` preset)."""
        right, wrong = self._blind_rewards(instance)
        p = self.blind_chance(instance)
        return p * right + (1.0 - p) * wrong

    def _blind_rewards(self, instance: Instance) -> tuple[float, float]:
        """The reward of the solution-only answer when right and when wrong, scored once per problem
        (it depends on the preset, not on the instance)."""
        if getattr(self, "_blind_frame", None) is None:
            gold = self.blind_candidates(instance)[0]
            render = getattr(self, "blind_answer", None)
            texts = [k if render is None else render(instance, k) for k in (gold, self.blind_wrong(instance, gold))]
            self._blind_frame = tuple(sum(self.score(instance, t).components.values()) for t in texts)
        return self._blind_frame

    def sample_answer(self, instance: Instance, rng: np.random.Generator) -> str:
        """The family's schema with a random solution and no steps (so r_format 0 in the
        interleaved presets)."""
        ans = self.family.random_answer(instance, rng)
        return format_answer(ans if self.reward_config.interleaved else self.family.solution_only(ans))
