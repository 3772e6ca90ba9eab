"""SIRL's reward (§3.3, §10, eq. 6) of one response: the pure parts, from the response text and the
model the host re-solved (:mod:`.problem` runs the program, reads its exported model and re-solves
it; nothing here trusts a number the program's process reported).

A response is ``<think>...</think><model>...</model><python>...</python>`` (§3.2). The components,
named as in the paper:

- ``format`` (§10): 0.5 when the three sections are present, each once, in that order. The shipped
  code's graded variant (``format_rule="sirl_code"``: 0.5 x (2 - penalties), up to 1.0; see
  :func:`format_reward`) is an option.
- ``execution`` (§10): 1 when the program ran to a clean exit and its last solve reported a solver
  status (optimal, infeasible, unbounded, a limit with an incumbent). A program that never solved,
  raised, timed out or hit a licence limit earns 0. ``execution_rule`` (:data:`EXECUTION_RULES`):
  ``"model"`` (default) also requires the solved model to have a variable and a row or an
  objective term (:func:`empty_model`: ``m = gp.Model(); m.optimize()`` solves nothing);
  ``"paper"`` is SIRL's rule, any solve that reported a status.
- ``accuracy`` (§3.3, §10): 2 when the host's re-solve of the exported model matches the ground
  truth (:func:`judge_objective`): ``tolerance="relative"`` (default: ``|y - y*| / (|y*| + 1) <
  1e-6``, §11 and the OptMATH protocol) or ``"absolute"`` (``|y - y*| <= 0.01``, §3.3). An
  objective of 0 is a number like any other (SIRL's code never pays a ground truth of 0). The same
  model written as the optimisation of ``-f`` in the other sense (``min -benefit`` for a
  maximisation, HiGHS's default sense) is accepted: its objective is ``-y*``. An infeasible ground
  truth is matched by a proven infeasible re-solve of the problem's own model (:mod:`.problem`).
- ``bonus`` (§10, stage 2 only): ``bonus_weight`` when the answer is correct and the exported
  model uses binaries, big-M, a quadratic term or a general constraint that survive presolve-style
  reductions (:mod:`.audit`). The paper does not state the weight (default 1.0) nor the schedule.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass

from .model import LinearModel

__all__ = [
    "TAGS", "FORMAT_RULES", "EXECUTION_RULES", "TOLERANCES", "TOLERANCE_RULES", "OK_STATUSES", "Sections",
    "sections", "format_reward", "extract_program", "objective_matches", "empty_model", "judge_objective",
]

TAGS = ("think", "model", "python")
FORMAT_RULES = ("paper", "sirl_code")
#: what earns ``execution``: "model" (default) a solve of a model with a variable and a row or an
#: objective term; "paper" any solve that reported a status (SIRL §10)
EXECUTION_RULES = ("model", "paper")
TOLERANCES = ("relative", "absolute")
#: each tolerance's rule, as reports name it (:func:`objective_matches`)
TOLERANCE_RULES = {"relative": "|y - y*| / (|y*| + 1) < 1e-6", "absolute": "|y - y*| <= 0.01"}
#: captured statuses that count as "the solver reported a solution status" (execution)
OK_STATUSES = ("optimal", "infeasible", "unbounded", "inf_or_unbd", "feasible")
_FENCE = re.compile(r"```(?:python|py)?[ \t]*\n(.*?)```", re.S)


@dataclass
class Sections:
    """Where the tags are: ``counts[tag] = (opens, closes)``; ``body[tag]`` the first section's text."""

    counts: dict[str, tuple[int, int]]
    body: dict[str, str | None]
    in_order: bool  # each tag once, opened before closed, think < model < python


def sections(text: str) -> Sections:
    counts, body, spans = {}, {}, []
    for tag in TAGS:
        op, cl = f"<{tag}>", f"</{tag}>"
        counts[tag] = (text.count(op), text.count(cl))
        i = text.find(op)
        j = text.find(cl, i + len(op)) if i >= 0 else -1
        body[tag] = text[i + len(op):j] if i >= 0 and j >= 0 else None
        spans.append((i, j))
    once = all(c == (1, 1) for c in counts.values())
    ordered = once and all(0 <= a < b for a, b in spans) and all(
        spans[k][1] < spans[k + 1][0] for k in range(len(spans) - 1))
    return Sections(counts, body, ordered)


def format_reward(text: str, rule: str = "paper") -> float:
    """SIRL §10's format term. ``"paper"``: 0.5 when all tags appear once, in order, else 0.
    ``"sirl_code"``: the released ``format_reward`` (2 minus penalties: 1/8 per think/model tag
    whose count is not 1, 1/4 per python tag; 1/3 each when ``</think>`` comes after the first
    model/python tag, when an open tag comes after its close, when ``<python>`` is not after every
    think/model tag), times 0.5, floored at 0."""
    if rule == "paper":
        return 0.5 if sections(text).in_order else 0.0
    if rule != "sirl_code":
        raise ValueError(f"format_rule must be one of {FORMAT_RULES}, got {rule!r}")
    pen = 0.0
    for tag, w in (("think", 1 / 8), ("model", 1 / 8), ("python", 1 / 4)):
        pen += w * ((text.count(f"<{tag}>") != 1) + (text.count(f"</{tag}>") != 1))
    pos = {t: (text.find(f"<{t}>"), text.find(f"</{t}>")) for t in TAGS}
    later = [p for p in (pos["model"][0], pos["python"][0]) if p >= 0]
    if later and pos["think"][1] > min(later):
        pen += 1 / 3
    if any(o > c for o, c in pos.values()):
        pen += 1 / 3
    if not all(pos["python"][0] > p for t in ("think", "model") for p in pos[t]):
        pen += 1 / 3  # strictly after: with no tags at all (every find() is -1) this fires, as in the code
    return max(0.0, 0.5 * (2.0 - pen))


def extract_program(text: str) -> str | None:
    """The program: the first ``<python>...</python>`` section (the ```python fence inside it, if
    any), else the first ```python fence of the response (as SIRL's ``extract_code_block``)."""
    body = sections(text).body["python"]
    if body is not None:
        m = _FENCE.search(body)
        code = m.group(1) if m else body
        return code if code.strip() else None
    m = _FENCE.search(text)
    return m.group(1) if m and m.group(1).strip() else None


def objective_matches(y: float | None, y_star: float | None, tolerance: str = "relative") -> bool:
    """Whether a captured objective ``y`` matches the ground truth ``y_star`` (both finite numbers;
    ``None`` never matches a number). ``"relative"``: ``|y - y*| / (|y*| + 1) < 1e-6`` (SIRL §11);
    ``"absolute"``: ``|y - y*| <= 0.01`` (§3.3)."""
    if tolerance not in TOLERANCES:
        raise ValueError(f"tolerance must be one of {TOLERANCES}, got {tolerance!r}")
    if y is None or y_star is None or not (math.isfinite(y) and math.isfinite(y_star)):
        return False
    if tolerance == "absolute":
        return abs(y - y_star) <= 0.01
    return abs(y - y_star) / (abs(y_star) + 1.0) < 1e-6


def empty_model(model: LinearModel, *, extra_rows: int = 0) -> str:
    """Why ``model`` is no model at all for ``execution_rule="model"`` ("": it has a variable and a
    row with a nonzero coefficient or a nonzero objective term). ``extra_rows``: rows the model
    holds beyond its linear ones (quadratic or general constraints the MPS reader only counts)."""
    if not model.variables:
        return "the solved model has no variable"
    if extra_rows > 0 or model.is_quadratic or any(c != 0.0 for c in model.objective.values()):
        return ""
    if any(any(c != 0.0 for c in row.coefs.values()) for row in model.constraints):
        return ""
    return "the solved model has no constraint and no objective term"


def _g(x: float) -> str:
    return f"{x:.10g}"


def judge_objective(y: float, y_star: float, tolerance: str, model_sense: str,
                    problem_sense: str | None) -> tuple[bool, str]:
    """Whether a re-solved objective ``y`` of a model optimised in ``model_sense`` answers a
    problem whose optimum is ``y_star`` in ``problem_sense`` (``None``: not known, as for a
    benchmark record), and why. ``y`` matches (:func:`objective_matches`), or the model is the
    problem's written as the optimisation of ``-f`` in the other sense and ``-y`` matches. The
    reason never states ``y_star`` unless the answer matches it (it becomes an observation)."""
    rule = f"({tolerance} tolerance)"
    if objective_matches(y, y_star, tolerance):
        return True, f"objective {_g(y)} matches {_g(y_star)} {rule}"
    if problem_sense is None:
        return False, (f"objective {_g(y)} does not match the ground truth {rule}; the problem's sense is "
                       "unknown, so a negated objective is not accepted as the same model with its sense flipped")
    if model_sense != problem_sense:
        if objective_matches(-y, y_star, tolerance):
            return True, (f"objective {_g(y)} is {_g(y_star)} negated: the problem's model with its sense flipped "
                          f"(it {model_sense}imises -f) {rule}")
        return False, (f"objective {_g(y)} does not match the ground truth {rule}, nor does its negation (the "
                       f"model {model_sense}imises where the problem {problem_sense}imises)")
    return False, f"objective {_g(y)} does not match the ground truth {rule}"
