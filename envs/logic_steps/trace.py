"""Reading Spring's structured output (App. E) and scoring it with the step verifier (§4).

:func:`extract_answer` finds the single JSON object in ``<answer>...</answer>``;
:class:`TraceSession` holds one solver state and takes the premises, then steps, then the final
solution — the step-mode env feeds it one action at a time and :func:`score_trace` feeds it a
whole trace (trace mode, offline checking). Both end in a :class:`TraceResult` with the per-step
verdicts, the signals of §4.2-4.3 and the reward components.

Format rules (r_format = 1 iff none is broken; each broken rule is listed in ``format_issues``):
exactly one ``<answer>`` block and nothing outside it but whitespace and an optional leading
``<think>...</think>``; exactly the family's keys; premises as ``C<i>: ... .`` entries numbered
from 1 (AR-LSAT: prefix and period optional); ``reasoning`` not empty (App. E: "reasoning
(MANDATORY)"; OR-NL, whose prompt asks for the solution only, has no such rule), alternating a
natural-language sentence and an ``S<k>: ... .`` entry with k = 1, 2, ...; each entry one line
ending with a period; the family's own fields returned as given (Zebra: ``n_houses``,
``attribute_values``, the solution header).

r_parsed = 1 iff the premises (and AR-LSAT's options), every formal step and the final solution
parse into formulas of the family's language (OR-NL, which asks for the solution only: iff the
solution parses). Counting follows Spring's Tables 2 and 9: "#Steps" (Total) is the number of
``reasoning`` entries, natural-language and formal, and "Parsed" the formal steps that parse, so
a perfect interleaved trace has Parsed/Total = 0.5.
"""
from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass, field
from typing import Any

import z3

from ..instance import Instance
from ..parsing import tag_sections
from .budget import VerifyBudget
from .family import Family, SolutionScore
from .formula import FormulaError, to_text
from .reward import RewardConfig, aggregate, spring_reward
from .theory import MetaStep, Theory
from .verdict import BaseStatus, StepVerdict, check_accept, check_novelty
from .verifier import StepVerifier

__all__ = [
    "DEFAULT_MAX_STEPS",
    "DEFAULT_MAX_PREMISES",
    "DEFAULT_VERIFY_BUDGET_S",
    "extract_answer",
    "format_answer",
    "read_premises",
    "split_prefix",
    "split_step_action",
    "TraceResult",
    "TraceSession",
    "score_trace",
    "ERROR_TYPES",
    "EMPTY_REASONING",
]

#: formal steps verified per trace; later ones are "unverified" and break the format
DEFAULT_MAX_STEPS = 200
DEFAULT_MAX_PREMISES = 200

#: Wall-clock seconds of solver work per env action (trace mode: the whole ``env.step``; step
#: mode: each ``env.step``); an env.step then takes at most this plus one check timeout (5 s),
#: see :class:`~.budget.VerifyBudget`. An honest trace needs far less (the slowest gold trace at
#: the largest preset size 1.7 s, the slowest honest 200-step trace 4.7 s on a loaded 2-core
#: machine: ``benchmarks/step_verify.py``'s headroom table), while every second above that is a
#: second a policy's trace written to keep Z3 busy holds a training step: 10 s cuts a 64 KiB
#: adversarial trace at a sixth of the former 60 s.
DEFAULT_VERIFY_BUDGET_S = 10.0

#: Spring App. C Table 7/8 error categories (plus "correct")
ERROR_TYPES = ("correct", "solver_consistent", "solver_inconsistent", "header_mismatch",
               "format_failure", "missing_output")

_PREFIX = re.compile(r"^\s*([A-Z])\s*(\d{1,6})\s*:\s*")


def split_prefix(entry: str) -> tuple[str | None, int | None, str]:
    """``"C3: dog != 2."`` -> ``("C", 3, "dog != 2")``; no prefix -> ``(None, None, body)``.

    One final period and surrounding quotes are removed (App. E asks for a period)."""
    m = _PREFIX.match(entry)
    letter = k = None
    body = entry
    if m is not None:
        letter, k = m.group(1), int(m.group(2))
        body = entry[m.end():]
    body = body.strip()
    if len(body) >= 2 and body[0] == body[-1] and body[0] in "\"'`":
        body = body[1:-1].strip()
    if body.endswith("."):
        body = body[:-1].rstrip()
    return letter, k, body


_STEP_IN_TEXT = re.compile(r"(?:^|[\s.;:!?\"'(])S\s*(\d{1,6})\s*:")


def split_step_action(text: str) -> tuple[str, int | None, str] | None:
    """A step-mode action ``"<sentence> S<k>: <formula>."`` -> ``(sentence, k, formula)``.

    The last ``S<k>:`` marker splits the text; ``None`` when there is none."""
    last = None
    for m in _STEP_IN_TEXT.finditer(text):
        last = m
    if last is None:
        return None
    start = last.start(0) + (0 if text[last.start(0)] == "S" else 1)
    sentence = text[:start].strip()
    _, k, body = split_prefix(text[start:])
    return sentence, k, body


def format_answer(obj: dict[str, Any]) -> str:
    """An answer object as the ``<answer>...</answer>`` text :func:`extract_answer` reads."""
    return "<answer>" + json.dumps(obj, ensure_ascii=False) + "</answer>"


def extract_answer(text: str) -> tuple[dict | None, str | None, list[str]]:
    """``(object, error, format_issues)`` for the JSON object in the last ``<answer>`` block.

    ``error`` (no block, not JSON, not an object) makes the whole action a format failure.
    Never raises: deep nesting, huge numbers and invalid escapes are errors like any other.
    """
    issues: list[str] = []
    sections = tag_sections(text, "answer")
    if not sections:
        return None, "no <answer>...</answer> block found", issues
    if len(sections) > 1:
        issues.append(f"{len(sections)} <answer> blocks; exactly one is required")
    last = sections[-1]
    outside = text[: sections[0].start] + text[last.end:]
    if len(sections) > 1:
        outside += "".join(text[a.end:b.start] for a, b in zip(sections, sections[1:]))
    think = tag_sections(outside, "think")
    if think:
        outside = outside[: think[0].start] + outside[think[0].end:]
    if outside.strip():
        issues.append("text outside the <answer> block")
    body = last.content.strip()
    if body.startswith("```"):
        issues.append("the JSON is wrapped in a code fence")
        body = body.strip("`").strip()
        if body[:4].lower() == "json":
            body = body[4:]
    try:
        obj = json.loads(body)
    except RecursionError:
        return None, "the <answer> JSON nests too deeply", issues
    except ValueError as e:
        msg = str(e).split(":", 1)[0] if isinstance(e, json.JSONDecodeError) else "invalid value"
        where = f" (line {e.lineno}, column {e.colno})" if isinstance(e, json.JSONDecodeError) else ""
        return None, f"the <answer> block is not valid JSON: {msg}{where}", issues
    if not isinstance(obj, dict):
        return None, f"the <answer> block holds a JSON {type(obj).__name__}, not an object", issues
    return obj, None, issues


@dataclass
class TraceResult:
    """Everything the verifier found about one output (one trace, or one step-mode episode)."""

    answered: bool  # a JSON answer object was found (otherwise: a format failure)
    error: str | None = None  # why there is no answer (format failure)
    error_type: str = "missing_output"  # Table 7 category, or "correct"
    reason: str = ""
    r_parsed: float = 0.0
    r_format: float = 0.0
    r_accuracy: float = 0.0
    r_consistency: float = 0.0
    r_novel: float = 0.0
    r_contra: float = 0.0
    s_sat: bool = False  # the gate of the process terms (see TraceSession's require_faithful)
    spring_sat: bool = False  # Spring §4.2's s_sat: satisfiable (and unique where required)
    base_sat: bool | None = None
    base_unique: bool | None = None
    base_reason: str = ""
    premises_equivalent: bool | None = None  # beyond Spring: parsed premises ≡ the true clues
    consistent: bool | None = None  # Def. 6
    correct: bool = False
    metrics: dict[str, float] = field(default_factory=dict)
    n_entries: int = 0  # reasoning entries (Spring's "#Steps")
    n_formal: int = 0
    n_parsed: int = 0
    n_valid: int = 0
    n_novel: int = 0
    n_contra: int = 0
    format_issues: list[str] = field(default_factory=list)
    parse_issues: list[str] = field(default_factory=list)
    steps: list[StepVerdict] = field(default_factory=list)
    components: dict[str, float] = field(default_factory=dict)
    verify_budget: dict[str, Any] = field(default_factory=dict)  # budget_s, used_s, exhausted

    @property
    def reward(self) -> float:
        return float(sum(self.components.values()))

    def as_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["reward"] = self.reward
        return d

    def signals(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in (
            "r_parsed", "r_format", "r_accuracy", "r_consistency", "r_novel", "r_contra", "s_sat",
            "spring_sat", "base_sat", "base_unique", "premises_equivalent", "consistent")}


def zero_components(config: RewardConfig) -> dict[str, float]:
    keys = ["parsed", "format", "accuracy"] + (["novel", "consistency", "contra"] if config.process else [])
    return {k: 0.0 for k in keys}


class TraceSession:
    """One solver state for one output: premises, then steps, then the solution (§4.1-4.3).

    The gate of the process terms (s_sat): by default (``require_faithful=True``) the parsed
    premises must be satisfiable, have a unique solution where the family asks for one, and be
    equivalent to the instance's true clues (modulo Γ_dom). ``require_faithful=False`` is
    Spring's gate (§4.2: satisfiable and unique only), under which premises that state a wrong
    complete assignment — satisfiable and unique — earn the process terms for a wrong answer.
    ``novelty`` (``"facts"`` or Spring's Def. 4, ``"spring"``; :mod:`.verdict`) and ``budget_s``
    (wall-clock seconds of solver work per action, None for no limit; :meth:`start_action` opens
    a new one; :mod:`.budget`) are those of :class:`~.verifier.StepVerifier`.
    """

    def __init__(
        self,
        family: Family,
        instance: Instance,
        config: RewardConfig,
        *,
        incremental: bool = True,
        accept: str = "non_contradictory",
        novelty: str = "facts",
        require_unique: bool | None = None,
        require_faithful: bool = True,
        max_steps: int = DEFAULT_MAX_STEPS,
        timeout_ms: int = 5000,
        budget_s: float | None = DEFAULT_VERIFY_BUDGET_S,
        consistency_over: str = "all",
    ):
        self.family = family
        self.instance = instance
        self.config = config
        self.incremental = incremental
        self.accept = check_accept(accept)
        self.novelty = check_novelty(novelty)
        self.require_unique = family.require_unique if require_unique is None else require_unique
        self.require_faithful = require_faithful
        self.max_steps = max_steps
        self.timeout_ms = timeout_ms
        self.budget = VerifyBudget(budget_s)
        if consistency_over not in ("all", "accepted"):
            raise ValueError(f"consistency_over must be 'all' or 'accepted', got {consistency_over!r}")
        self.consistency_over = consistency_over
        self.theory = family.theory(instance)
        self.premises_set = False
        self.premises_ok = False
        self.premise_texts: list[str] = []
        self.premise_exprs: list[z3.BoolRef] = []
        self.verifier: StepVerifier | None = None
        self.base: BaseStatus | None = None
        self.s_sat = False
        self.spring_sat = False
        self.faithful: bool | None = None
        self.steps: list[StepVerdict] = []
        self.format_issues: list[str] = []
        self.parse_issues: list[str] = []
        self.n_entries = 0

    # ------------------------------------------------------------------ premises
    def set_premises(self, obj: dict[str, Any]) -> list[str]:
        """Parse the premises (and options) from an answer object and build the solver state.

        Returns the parse problems (empty when every premise parsed)."""
        texts, exprs, nodes, problems = read_premises(self.family, self.theory, self.instance, obj,
                                                      self.format_issues)
        self.premises_set = True
        self.premises_ok = not problems
        self.parse_issues.extend(problems)
        self.premise_texts, self.premise_exprs = texts, exprs
        self.verifier = self._new_verifier(exprs if self.premises_ok else [], texts, nodes)
        if self.premises_ok:
            self.base = self.verifier.base_status(require_unique=self.require_unique)
            try:
                truth = [self.theory.compile_text(t) for t in self.family.true_premises(self.instance)]
                self.faithful = self.verifier.equivalent_to(truth)
            except FormulaError:  # true premises that refer to options the answer did not parse
                self.faithful = False
            self.spring_sat = bool(self.base.sat) and (bool(self.base.unique) or not self.require_unique)
            self.s_sat = self.spring_sat and (bool(self.faithful) or not self.require_faithful)
        else:
            self.base = BaseStatus(None, None, "the premises did not parse: no solver state")
        return problems

    def _new_verifier(self, premises: list[z3.BoolRef], texts: list[str] | None = None,
                      nodes: list[Any] | None = None) -> StepVerifier:
        return StepVerifier(self.theory, premises, premise_texts=texts, premise_nodes=nodes,
                            incremental=self.incremental, accept=self.accept, novelty=self.novelty,
                            timeout_ms=self.timeout_ms, budget=self.budget)

    def start_action(self) -> None:
        """A new env action: a fresh verification budget (step mode calls it at each env.step)."""
        self.budget.start()

    # ------------------------------------------------------------------ steps
    def add_step(self, sentence: str | None, k: int | None, text: str) -> StepVerdict:
        """Parse and judge one formal step (Definitions 2-5) and update P^nc."""
        v = StepVerdict(index=len(self.steps), k=k, text=text[:500], nl=sentence[:500] if sentence else sentence)
        self.steps.append(v)
        if self.verifier is None:  # a step before any premises: judge against Γ_dom only
            self.verifier = self._new_verifier([])
            self.base = BaseStatus(None, None, "no premises were given: no solver state")
        try:
            node = self.theory.parse(text)
            z = self.theory.compile_step(node)
        except FormulaError as e:
            v.error = str(e)
            v.label = "parse_error"
            v.reason = f"the formula does not parse: {e}"
            return v
        v.formula = to_text(node)
        v.parsed = True
        if v.index >= self.max_steps:
            v.label = "unverified"
            v.reason = f"over the limit of {self.max_steps} verified steps"
            return v
        if not (self.premises_ok and self.base is not None and self.base.sat) or self.budget.spent():
            if not isinstance(z, MetaStep):
                self.verifier.add_unverified(z)
            v.label = "unverified"
            v.reason = self.budget.reason() if self.budget.exhausted else (
                f"not verified: {self.base.reason if self.base else 'no premises'}")
            return v
        return self.verifier.check(z, v, node)

    def running_components(self) -> dict[str, float]:
        """What Spring §4.3 would pay for the episode so far if its solution scored 0: the
        steps' fractions as they stand, with m = 0.5 s_sat (r_accuracy unknown, so at its lower
        bound 0), r_consistency and r_format 0 (both need the solution), r_parsed 1 while the
        premises and every step parsed. Step mode pays the change of this value at each action
        and the final action pays what is left (see :mod:`.steps`)."""
        cfg = self.config
        n_formal = len(self.steps)
        r_parsed = float(cfg.interleaved and self.premises_set and self.premises_ok
                         and all(v.parsed for v in self.steps))
        return spring_reward(
            r_parsed=r_parsed, r_format=0.0, r_accuracy=0.0, s_sat=self.s_sat,
            n_novel=sum(v.label == "novel" for v in self.steps),
            n_contra=sum(v.label == "contradictory" for v in self.steps),
            n_formal=n_formal, r_consistency=0.0, config=cfg)

    # ------------------------------------------------------------------ solution
    def finish(self, obj: dict[str, Any] | None, *, format_ok: bool) -> TraceResult:
        """Score the final solution (in ``obj["solution"]``) and compute the reward (§4.3)."""
        fam, inst, cfg = self.family, self.instance, self.config
        res = TraceResult(answered=obj is not None)
        res.format_issues = list(self.format_issues)
        res.parse_issues = list(self.parse_issues)
        parsed_sol, sol_error = None, None
        header_problem = False
        if obj is not None:
            if "solution" not in obj:
                sol_error = '"solution" is missing'
            else:
                parsed_sol, sol_error, issues = fam.parse_solution(obj["solution"], inst)
                res.format_issues.extend(issues)
                header_problem = any("header" in i for i in issues)
        if sol_error:
            res.parse_issues.append(f"solution: {sol_error}")
        sol_problems = fam.solution_problems(parsed_sol) if parsed_sol is not None else []
        res.parse_issues.extend(f"solution: {p}" for p in sol_problems)
        score = fam.score_solution(parsed_sol, inst) if parsed_sol is not None else SolutionScore(
            0.0, False, fam.empty_metrics(inst), sol_error or "no solution")
        res.r_accuracy = float(score.accuracy)
        res.correct = bool(score.correct)
        res.metrics = dict(score.metrics)
        steps = self.steps
        res.steps = steps
        res.n_entries = self.n_entries
        res.n_formal = len(steps)
        res.n_parsed = sum(v.parsed for v in steps)
        res.n_valid = sum(bool(v.valid) for v in steps)
        res.n_novel = sum(v.label == "novel" for v in steps)
        res.n_contra = sum(v.label == "contradictory" for v in steps)
        if cfg.interleaved:
            res.r_parsed = float(
                self.premises_set and self.premises_ok and parsed_sol is not None and not sol_problems
                and all(v.parsed for v in steps)
            )
        else:
            res.r_parsed = float(parsed_sol is not None and not sol_problems)
        res.r_format = float(format_ok and obj is not None and not res.format_issues)
        res.base_sat = self.base.sat if self.base else None
        res.base_unique = self.base.unique if self.base else None
        res.base_reason = self.base.reason if self.base else "no premises were given"
        res.premises_equivalent = self.faithful
        res.s_sat = bool(self.s_sat)
        res.spring_sat = bool(self.spring_sat)
        if parsed_sol is not None and self.verifier is not None:
            try:
                final = fam.solution_formula(parsed_sol, self.theory)
            except FormulaError as e:
                res.parse_issues.append(f"solution: {e}")
                final = None
            if final is not None:
                res.consistent = self.verifier.consistent_with(final, over=self.consistency_over)
        elif parsed_sol is not None:  # no premises, no steps: Def. 6 over Γ_dom ∪ {F}
            res.consistent = self._new_verifier([]).consistent_with(fam.solution_formula(parsed_sol, self.theory))
        res.r_consistency = float(bool(res.consistent))
        res.r_novel = aggregate(res.n_novel, res.n_formal, cfg)
        res.r_contra = aggregate(res.n_contra, res.n_formal, cfg)
        res.components = spring_reward(
            r_parsed=res.r_parsed, r_format=res.r_format, r_accuracy=res.r_accuracy, s_sat=res.s_sat,
            n_novel=res.n_novel, n_contra=res.n_contra, n_formal=res.n_formal,
            r_consistency=res.r_consistency, config=cfg,
        )
        if res.correct:
            res.error_type = "correct"
        elif obj is None:
            res.error_type = "missing_output"
        elif header_problem:
            res.error_type = "header_mismatch"
        elif parsed_sol is None:
            res.error_type = "format_failure"
        elif res.spring_sat:
            res.error_type = "solver_consistent"
        else:
            res.error_type = "solver_inconsistent"
        res.reason = _summary(res, score)
        res.verify_budget = self.budget.as_dict()
        return res


def _summary(res: TraceResult, score: SolutionScore) -> str:
    parts = [("correct" if res.correct else "incorrect") + (f": {score.reason}" if score.reason else "")]
    if res.base_sat is not None or res.base_reason:
        parts.append(res.base_reason)
    if res.premises_equivalent is not None:
        parts.append("the parsed premises are " + ("" if res.premises_equivalent else "not ")
                     + "equivalent to the true clues")
    if res.n_formal:
        parts.append(f"{res.n_formal} formal steps: {res.n_parsed} parsed, {res.n_valid} valid, "
                     f"{res.n_novel} novel, {res.n_contra} contradictory")
    if res.consistent is not None:
        parts.append("the steps are " + ("" if res.consistent else "not ") + "consistent with the final solution")
    if res.format_issues:
        parts.append("format: " + "; ".join(res.format_issues[:3]) + (" ..." if len(res.format_issues) > 3 else ""))
    if res.parse_issues:
        parts.append("parse: " + "; ".join(res.parse_issues[:3]) + (" ..." if len(res.parse_issues) > 3 else ""))
    return ". ".join(parts) + "."


#: Spring App. E marks ``reasoning`` MANDATORY in every interleaved prompt: an answer without a
#: single step breaks the format (else the right table alone would earn 1.15 of 1.55).
EMPTY_REASONING = '"reasoning" is empty; the interleaved format requires reasoning steps'


def _check_reasoning(reasoning: Any, issues: list[str]) -> list[tuple[str | None, int | None, str]]:
    """The formal steps of a ``reasoning`` list as ``(sentence, k, formula text)``; format
    problems go to ``issues`` (an empty list is one, :data:`EMPTY_REASONING`)."""
    if not isinstance(reasoning, list):
        issues.append('"reasoning" must be a list of strings')
        return []
    if not reasoning:
        issues.append(EMPTY_REASONING)
    out = []
    expect_k = 1
    prev_nl: str | None = None
    for i, entry in enumerate(reasoning):
        if not isinstance(entry, str):
            issues.append(f"reasoning[{i + 1}] is not a string")
            prev_nl = None
            continue
        letter, k, body = split_prefix(entry)
        formal = letter == "S" and k is not None
        if formal != (i % 2 == 1):
            issues.append(f"reasoning[{i + 1}] should be " + ("an S<k>: formal step" if i % 2 else
                                                               "a natural-language sentence"))
        if not entry.rstrip().endswith("."):
            issues.append(f"reasoning[{i + 1}] should end with a period")
        if "\n" in entry.strip():
            issues.append(f"reasoning[{i + 1}] spans several lines")
        if formal:
            if k != expect_k:
                issues.append(f"reasoning[{i + 1}] is S{k}; expected S{expect_k}")
            expect_k = (k or 0) + 1
            out.append((prev_nl, k, body))
            prev_nl = None
        else:
            prev_nl = entry.strip()
    if reasoning and len(reasoning) % 2 == 1:
        issues.append("reasoning ends with a sentence that has no formal step")
    return out


def read_premises(family: Family, theory: Theory, instance: Instance, obj: dict[str, Any],
                  format_issues: list[str]) -> tuple[list[str], list[z3.BoolRef], list[Any], list[str]]:
    """The premises of an answer object, parsed and compiled against ``theory`` (the family's
    ``setup`` first: AR-LSAT's options): ``(texts, expressions, nodes, problems)``, where
    ``problems`` are the entries that did not parse; breaches of the prefix / period rules go to
    ``format_issues``."""
    problems: list[str] = list(family.setup(obj, theory, instance))
    texts, exprs, nodes = [], [], []
    count = 0
    for group in family.premise_groups:
        entries = obj.get(group.key)
        if entries is None:
            problems.append(f'"{group.key}" is missing')
            continue
        if not isinstance(entries, list):
            problems.append(f'"{group.key}" must be a list of strings')
            continue
        if not entries and not group.may_be_empty:
            problems.append(f'"{group.key}" is empty')
        for i, entry in enumerate(entries, 1):
            count += 1
            if count > DEFAULT_MAX_PREMISES:
                problems.append(f"more than {DEFAULT_MAX_PREMISES} premises")
                break
            if not isinstance(entry, str):
                problems.append(f"{group.key}[{i}] is not a string")
                continue
            letter, k, body = split_prefix(entry)
            if group.prefix_required and (letter != group.letter or k != i):
                format_issues.append(f"{group.key}[{i}] should start with '{group.letter}{i}: '")
            if group.period_required and not entry.rstrip().endswith("."):
                format_issues.append(f"{group.key}[{i}] should end with a period")
            if "\n" in entry.strip():
                format_issues.append(f"{group.key}[{i}] spans several lines")
            try:
                node = theory.parse(body)
                expr = theory.compile(node)
            except FormulaError as e:
                problems.append(f"{group.letter}{i} ({body[:60]!r}): {e}")
                continue
            texts.append(to_text(node))
            exprs.append(expr)
            nodes.append(node)
    return texts, exprs, nodes, problems


def score_trace(
    family: Family,
    instance: Instance,
    text: str,
    config: RewardConfig,
    **session_kw: Any,
) -> TraceResult:
    """Spring's whole-trace verification and reward (trace mode, offline checking)."""
    obj, error, issues = extract_answer(text)
    if obj is None:
        res = TraceResult(answered=False, error=error, error_type="missing_output" if "no <answer>" in error
                          else "format_failure", reason=error)
        res.components = zero_components(config)
        res.format_issues = issues
        res.metrics = dict(family.empty_metrics(instance))
        return res
    session = TraceSession(family, instance, config, **session_kw)
    session.format_issues.extend(issues)
    if config.interleaved:
        keys = set(obj)
        missing = [k for k in family.answer_keys if k not in keys]
        extra = sorted(keys - set(family.answer_keys))
        if missing:
            session.format_issues.append("missing keys: " + ", ".join(missing))
        if extra:
            session.format_issues.append("unexpected keys: " + ", ".join(extra[:5]))
        session.format_issues.extend(family.check_fields(obj, instance))
        session.set_premises(obj)
        steps = _check_reasoning(obj.get("reasoning"), session.format_issues)
        session.n_entries = len(obj["reasoning"]) if isinstance(obj.get("reasoning"), list) else 0
        for sentence, k, body in steps:
            session.add_step(sentence, k, body)
        if len(steps) > session.max_steps:
            session.format_issues.append(f"more than {session.max_steps} formal steps")
    else:
        session.format_issues.extend(family.check_fields(obj, instance))
    return session.finish(obj, format_ok=True)
