"""What the step verifier decides, and under which rules: the policies that configure
:class:`~.verifier.StepVerifier` and the verdicts it returns.

Notation (Spring §3.1) as in :mod:`.verifier`: Γ_dom the domain constraints, C the premises,
Γ_base = Γ_dom ∪ C, P^nc_{t-1} the accepted non-contradictory steps before step t.

**Which steps enter P^nc** (``accept=``; :data:`ACCEPT_MODES`). ``"non_contradictory"`` (the
default) keeps every parsed step that is not contradictory: Def. 5's "previously accepted
non-contradictory formal steps", read literally, so an unsupported guess that is consistent is
kept and later steps are judged against it. ``"valid"`` and ``"novel"`` keep, of those, only the
valid or only the novel ones. ``"deductions"`` keeps every non-contradictory step except a
restatement (a step equivalent to a premise, or under ``"facts"`` an ``And`` / ``Or`` of premises):
novelty is then judged against the earlier deductions only. Under the default a restated premise
enters P^nc, and the deduction that follows from that premise is then ``"redundant"``: a trace that
restates C3 before using it is penalised twice (the restatement is not novel, the deduction no
longer is), while under ``"deductions"`` the deduction stays novel (README, "Step verifier defaults").

**Novelty** (``novelty=``; :data:`NOVELTY_RULES`):

- ``"spring"`` is Definition 4 exactly as the paper states it: valid, not tautological,
  P_{t-1} ⇏_{Γ_dom} z, and z ≢ C_i for every premise C_i (modulo Γ_dom).
- ``"facts"`` (the default) goes beyond the paper. A valid, non-tautological step not implied by
  P^nc is novel only when it makes a new atomic fact follow (:mod:`.facts`: a Zebra cell
  ``t == h``, a role ``Knight(X)``, an AR-LSAT position, membership or option, or the negation of
  one): Γ_dom ∪ P^nc_{t-1} ∪ {z} ⊨ a while Γ_dom ∪ P^nc_{t-1} ⊭ a, relative to the accepted
  steps under Γ_dom as Def. 4 is (under unique premises Γ_base entails every atom). And it must
  not be a *restatement*: equivalent modulo Γ_dom to a premise (Def. 4's "z ≢ C_i"), or an
  ``And`` / ``Or`` whose every part is one (``And(C1, C2)``, ``Or(C3, C4)``, nested).

  Why: under a unique solution almost every valid formula satisfies Def. 4, so steps that each
  exclude one wrong world (``Not(And(<a full wrong assignment>))``) are as novel as the gold
  deductions and earn the gold trace's process reward, and random true disjunctions or an
  ``And`` / ``Or`` of premises mostly are, while saying nothing a solution is made of; a fact is
  what a solution is made of. Under ``"facts"`` the gold steps stay novel and such steps are
  novel only where they do fix a fact (a disjunction over one or two names can fix a Knights
  role or an AR-LSAT position; a fact that follows is a fact). Case analysis without a fact
  (App. A.3's ``Implies(Knight(A), Knave(B))``) is ``"no_new_fact"`` under the default, novel
  under ``"spring"``. ``benchmarks/step_verify.py`` (novelty table) compares the two rules.

  ``Sat(Option_X)`` claims follow their own rule under both (novel once per option, and only
  while P^nc does not already imply the option, so at most five a trace; see
  :class:`~.verifier.StepVerifier`); ``Unsat(Option_X)`` is the fact Not(O_X).

**Verdicts.** :class:`StepVerdict` records every Definition's answer for one step and names it by
one label of :data:`LABELS` (:func:`label_of`, by precedence) with a sentence saying why
(:func:`reason_of`); :class:`BaseStatus` is §4.2's answer for the premises.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

__all__ = ["ACCEPT_MODES", "NOVELTY_RULES", "LABELS", "StepVerdict", "BaseStatus", "check_accept",
           "check_novelty", "label_of", "reason_of"]

#: Which steps enter P^nc (see the module docstring).
ACCEPT_MODES = ("non_contradictory", "valid", "novel", "deductions")


def check_accept(accept: str) -> str:
    """``accept`` itself when it is one of :data:`ACCEPT_MODES`; ``ValueError`` otherwise."""
    if accept not in ACCEPT_MODES:
        raise ValueError(f"accept must be one of {ACCEPT_MODES}, got {accept!r}")
    return accept

#: Novelty rules: ``"facts"`` (the default: a new atomic fact must follow) and ``"spring"`` (Def. 4).
NOVELTY_RULES = ("facts", "spring")


def check_novelty(novelty: str) -> str:
    """``novelty`` itself when it is one of :data:`NOVELTY_RULES`; ``ValueError`` otherwise."""
    if novelty not in NOVELTY_RULES:
        raise ValueError(f"novelty must be one of {NOVELTY_RULES}, got {novelty!r}")
    return novelty


#: Step labels, in the order of precedence used to name a step's single verdict.
LABELS = (
    "novel",  # Def. 4 (novelty="spring"), or Def. 4 and a new atomic fact (novelty="facts")
    "restates_premise",  # valid, equivalent to a premise (Def. 4 excludes it) or, under "facts",
    # an And / Or of such
    "redundant",  # valid, already implied by P^nc (Def. 4 excludes it)
    "no_new_fact",  # novelty="facts": valid, not implied by P^nc, but no new atomic fact follows
    "tautological",  # Def. 3
    "unsupported",  # not contradictory, not valid (a guess)
    "contradictory",  # Def. 5
    "parse_error",  # the formula is not in the language
    "unverified",  # no solver state (premises unparsed or unsatisfiable), over the step limit, or
    # past the action's verification budget
    "unknown",  # the solver gave up (timeout)
)


@dataclass
class StepVerdict:
    """The solver's judgement of one formal step (all Definitions, and one ``label``)."""

    index: int  # 0-based among the formal steps of the trace
    k: int | None  # the S<k> number as written
    text: str  # the formula as written (prefix and period removed)
    nl: str | None = None  # the natural-language sentence before it
    formula: str | None = None  # canonical text of the parsed formula
    parsed: bool = False
    error: str | None = None
    valid: bool | None = None
    tautological: bool | None = None
    novel: bool | None = None
    contradictory: bool | None = None
    implied_by_previous: bool | None = None
    equivalent_premise: int | None = None  # 0-based index of an equivalent premise
    restates: list[int] | None = None  # novelty="facts": the premises it restates (an And / Or of them)
    # novelty="facts": some of the new atomic facts that follow (up to 5; which ones may depend on
    # the solver's models, so incremental and rebuilt solvers can name different ones)
    new_facts: list[str] | None = None
    accepted: bool = False  # entered P^nc
    claim: str | None = None  # "sat" for Sat(Option_X) steps
    label: str = "unverified"
    reason: str = ""

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class BaseStatus:
    """§4.2: is Γ_base satisfiable, and does it have a unique solution?"""

    sat: bool | None
    unique: bool | None
    reason: str
    solution: dict[str, Any] = field(default_factory=dict)  # the model, when satisfiable


def label_of(v: StepVerdict) -> str:
    """The single label of a judged step, by the precedence of :data:`LABELS` among the labels a
    judged step can have (contradictory, tautological, then the valid ones, else unsupported)."""
    if v.contradictory:
        return "contradictory"
    if v.tautological:
        return "tautological"
    if v.valid:
        if v.implied_by_previous:
            return "redundant"
        if v.equivalent_premise is not None or v.restates:
            return "restates_premise"
        return "novel" if v.novel else "no_new_fact"
    return "unsupported"


def reason_of(v: StepVerdict, premise_texts: list[str]) -> str:
    """The sentence that explains ``v.label`` (naming the restated premise from
    ``premise_texts``); ``v.reason`` unchanged for a label it does not explain."""
    what = "the claim" if v.claim else "the step"
    if v.label == "contradictory":
        return f"{what} contradicts the premises"
    if v.label == "tautological":
        return f"{what} follows from the domain constraints alone"
    if v.label == "redundant":
        return f"{what} is already implied by the accepted earlier steps"
    if v.label == "restates_premise":
        i = v.equivalent_premise
        if i is None and v.restates:
            shown = ", ".join(f"C{j + 1}" for j in v.restates[:8]) + (", ..." if len(v.restates) > 8 else "")
            return f"{what} is equivalent to the conjunction of premises {shown}"
        shown = premise_texts[i] if i is not None and i < len(premise_texts) else ""
        return f"{what} is equivalent to premise C{(i or 0) + 1}" + (f" ({shown})" if shown else "")
    if v.label == "no_new_fact":
        return (f"{what} is valid and not implied by the accepted steps, but no new fact about the "
                "solution follows from it")
    if v.label == "novel":
        if v.new_facts:
            return f"{what} is valid and new: a new fact about the solution follows from it"
        return f"{what} is valid and new"
    if v.label == "unsupported":
        return f"{what} is consistent with the premises but not implied by them"
    return v.reason
