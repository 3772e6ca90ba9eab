"""Spring's step verifier: Definitions 1-6 (§3.1) and the solver-state checks of §4.2, with Z3.

Notation (Spring §3.1): Γ_dom the domain constraints, C the (parsed) premises,
Γ_base = Γ_dom ∪ C, P^nc_{t-1} the previously accepted non-contradictory steps,
Γ_ctx^(t) = Γ_base ∪ P^nc_{t-1}.

- Def. 1 (strong implication) A ⇒_Φ B: Φ ∪ {A, B} SAT and Φ ∪ {A, ¬B} UNSAT
  (:func:`strongly_implies`; vacuous implication from an inconsistent Φ ∪ {A} is excluded).
- Def. 2 (valid): Γ_base ∪ {z} SAT and Γ_base ∪ {¬z} UNSAT.
- Def. 3 (tautological): Γ_dom ∪ {¬z} UNSAT.
- Def. 4 (novel): valid, not tautological, P_{t-1} ⇏_{Γ_dom} z (P_{t-1} the conjunction of
  P^nc_{t-1}), and z ≢ C_i for every premise C_i. Equivalence is taken modulo Γ_dom
  (Γ_dom ∪ {z ⊕ C_i} UNSAT): a Zebra clue and a step that say the same thing about houses are
  equivalent even when they differ outside the domain of 1..N.
- Def. 5 (contradictory): Γ_ctx^(t) ∪ {z} UNSAT.
- Def. 6 (consistent with the final solution F): Γ_dom ∪ Z ∪ {F} SAT, Z every parsed formal
  step of the trajectory (contradictory ones included, as the definition says).
- §4.2: Γ_base satisfiable, and with a unique solution.

Which steps enter P^nc: every parsed step that is not contradictory (Def. 5's "previously
accepted non-contradictory formal steps", read literally, so an unsupported guess that is
consistent is kept, and later steps are judged against it). ``accept="valid"`` keeps valid
steps only.

Speed (the issue's "one incremental Z3 solver per trace"): Γ_dom is asserted once; the premises,
each step z_t, its negation ¬z_t, F and every auxiliary formula are asserted behind their own
guard literal g (``g → φ``), and each check is ``solver.check(*guards)`` on the same solver.
Nothing is ever retracted, so nothing is rebuilt. ``incremental=False`` runs the same checks on a
fresh solver each time (the baseline of ``benchmarks/step_verify.py``); both modes give the same
verdicts (tested). Checks implied by earlier answers are skipped — each skip is an entailment,
noted where it happens — so a novel step costs about four solver calls.
"""
from __future__ import annotations

import itertools
from dataclasses import asdict, dataclass, field
from typing import Any, Hashable

import numpy as np
import z3

from .formula import Node
from .sample import WorldSample, evaluate_sample
from .theory import MetaStep, Theory

__all__ = ["StepVerdict", "BaseStatus", "StepVerifier", "strongly_implies", "LABELS", "ACCEPT_MODES", "check_accept"]

#: Which steps enter P^nc (see the module docstring).
ACCEPT_MODES = ("non_contradictory", "valid", "novel")


def check_accept(accept: str) -> str:
    if accept not in ACCEPT_MODES:
        raise ValueError(f"accept must be one of {ACCEPT_MODES}, got {accept!r}")
    return accept

#: Step labels, in the order of precedence used to name a step's single verdict.
LABELS = (
    "novel",  # Def. 4
    "restates_premise",  # valid, equivalent to a premise (Def. 4 excludes it)
    "redundant",  # valid, already implied by P^nc (Def. 4 excludes it)
    "tautological",  # Def. 3
    "unsupported",  # not contradictory, not valid (a guess)
    "contradictory",  # Def. 5
    "parse_error",  # the formula is not in the language
    "unverified",  # no solver state (premises unparsed or unsatisfiable) or over the step budget
    "unknown",  # the solver gave up (timeout)
)

SAT, UNSAT = z3.sat, z3.unsat


def strongly_implies(phi: list[z3.BoolRef], a: z3.BoolRef, b: z3.BoolRef) -> bool:
    """Spring Def. 1: ``a ⇒_phi b`` iff phi ∪ {a, b} is SAT and phi ∪ {a, ¬b} is UNSAT."""
    s = z3.Solver()
    s.add(*phi)
    s.add(a)
    if s.check(b) != SAT:
        return False
    return s.check(z3.Not(b)) == UNSAT


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


class StepVerifier:
    """One solver per trace; :meth:`check` judges the next step and updates P^nc."""

    def __init__(
        self,
        theory: Theory,
        premises: list[z3.BoolRef],
        *,
        premise_texts: list[str] | None = None,
        premise_nodes: list[Node] | None = None,
        incremental: bool = True,
        accept: str = "non_contradictory",
        timeout_ms: int = 5000,
    ):
        check_accept(accept)
        self.theory = theory
        self.dom = list(theory.domain())
        self.premises = list(premises)
        self.premise_texts = list(premise_texts or [])
        self.premise_nodes = list(premise_nodes) if premise_nodes is not None else None
        self._premise_masks: list[np.ndarray | None] | None = None
        self.incremental = incremental
        self.accept = accept
        self.timeout_ms = int(timeout_ms)
        self.checks = 0  # solver calls made (benchmarks report it)
        self._exprs: dict[Hashable, z3.BoolRef] = {"base": _conj(self.premises)}
        self._guards: dict[Hashable, z3.BoolRef] = {}
        self._solver = self._new_solver() if incremental else None
        self._t = 0  # steps seen
        self.accepted: list[Hashable] = []  # keys of P^nc
        self.parsed_steps: list[Hashable] = []  # keys of Z (Def. 6)
        self._sat_claims: set[str] = set()
        self._model: z3.ModelRef | None = None

    # ------------------------------------------------------------------ solver plumbing
    def _new_solver(self) -> z3.Solver:
        s = z3.SolverFor(getattr(self.theory, "logic", "QF_LIA"))
        if self.timeout_ms > 0:
            s.set("timeout", self.timeout_ms)
        s.add(*self.dom)
        return s

    def _define(self, key: Hashable, expr: z3.BoolRef) -> Hashable:
        self._exprs[key] = expr
        return key

    def _check(self, keys: list[Hashable], want_model: bool = False) -> z3.CheckSatResult:
        """Is Γ_dom ∪ {the formulas named by keys} satisfiable?"""
        self.checks += 1
        if self.incremental:
            s = self._solver
            guards = []
            for key in keys:
                g = self._guards.get(key)
                if g is None:
                    g = z3.Bool(f"__g{len(self._guards)}")
                    s.add(z3.Implies(g, self._exprs[key]))
                    self._guards[key] = g
                guards.append(g)
            r = s.check(*guards)
        else:
            s = self._new_solver()
            s.add(*[self._exprs[k] for k in keys])
            r = s.check()
        self._model = s.model() if (want_model and r == SAT) else None
        return r

    # ------------------------------------------------------------------ §4.2 and faithfulness
    def base_status(self, require_unique: bool = True) -> BaseStatus:
        """Γ_base satisfiable (and, with ``require_unique``, with exactly one solution)."""
        r = self._check(["base"], want_model=True)
        if r == UNSAT:
            return BaseStatus(False, False, "the parsed premises are unsatisfiable with the domain constraints")
        if r != SAT:
            return BaseStatus(None, None, "the solver could not decide the parsed premises (timeout)")
        model = self._model
        vars_ = self.theory.state_vars()
        values = {str(v): _py(model.eval(v, model_completion=True)) for v in vars_}
        if not require_unique:
            return BaseStatus(True, None, "the parsed premises are satisfiable", values)
        block = z3.Or(*[v != model.eval(v, model_completion=True) for v in vars_]) if vars_ else z3.BoolVal(False)
        self._define("block", block)
        r2 = self._check(["base", "block"])
        if r2 == UNSAT:
            return BaseStatus(True, True, "the parsed premises are satisfiable with a unique solution", values)
        if r2 == SAT:
            return BaseStatus(True, False, "the parsed premises are satisfiable but have more than one solution", values)
        return BaseStatus(True, None, "the solver could not decide uniqueness (timeout)", values)

    def equivalent_to(self, other: list[z3.BoolRef]) -> bool | None:
        """Is Γ_dom ∪ C equivalent to Γ_dom ∪ other (e.g. the instance's true clues)?"""
        self._define("other", _conj(other))
        self._define("not_base", z3.Not(self._exprs["base"]))
        self._define("not_other", z3.Not(self._exprs["other"]))
        r1 = self._check(["base", "not_other"])
        if r1 == SAT:
            return False
        r2 = self._check(["other", "not_base"])
        if r2 == SAT:
            return False
        if r1 == UNSAT and r2 == UNSAT:
            return True
        return None

    # ------------------------------------------------------------------ Definitions 2-5
    def check(self, z: z3.BoolRef | MetaStep, verdict: StepVerdict, node: Node | None = None) -> StepVerdict:
        """Judge step ``z`` (parsed from ``node``) against Γ_base and P^nc_{t-1}; fill and
        return ``verdict``."""
        t = self._t
        self._t += 1
        verdict.parsed = True
        if isinstance(z, MetaStep):
            return self._check_sat_claim(t, z, verdict)
        pos = self._define(("pos", t), z)
        neg = self._define(("neg", t), z3.Not(z))
        self.parsed_steps.append(pos)
        P = list(self.accepted)

        r_ctx = self._check(["base", *P, pos])  # Def. 5
        if r_ctx == SAT:
            # Γ_base ∪ P ∪ {z} SAT entails Γ_base ∪ {z} SAT and Γ_dom ∪ P ∪ {z} SAT
            r_base_z = SAT
        else:
            r_base_z = self._check(["base", pos])
        r_base_notz = self._check(["base", neg])
        if UNKNOWN_IN(r_ctx, r_base_z, r_base_notz):
            return _unknown(verdict)
        verdict.contradictory = r_ctx == UNSAT
        verdict.valid = r_base_z == SAT and r_base_notz == UNSAT  # Def. 2
        if verdict.valid:
            r_taut = self._check([neg])  # Def. 3
            if r_taut == z3.unknown:
                return _unknown(verdict)
            verdict.tautological = r_taut == UNSAT
        else:
            # Γ_base ∪ {¬z} SAT entails Γ_dom ∪ {¬z} SAT; and Γ_base ∪ {z} UNSAT with Γ_base SAT
            # (the verifier only runs on a satisfiable Γ_base) means Γ_dom ∪ {¬z} SAT too.
            verdict.tautological = False
        verdict.novel = False
        if verdict.valid and not verdict.tautological:
            # Def. 4: P_{t-1} ⇏_{Γ_dom} z, i.e. not (Γ_dom ∪ P ∪ {z} SAT and Γ_dom ∪ P ∪ {¬z} UNSAT)
            r_p_z = SAT if r_ctx == SAT else self._check([*P, pos])
            r_p_notz = self._check([*P, neg], want_model=True)
            if UNKNOWN_IN(r_p_z, r_p_notz):
                return _unknown(verdict)
            verdict.implied_by_previous = r_p_z == SAT and r_p_notz == UNSAT
            witness = self._model  # a model of Γ_dom ∪ P ∪ {¬z}, when there is one
            if not verdict.implied_by_previous:
                verdict.equivalent_premise = self._equivalent_premise(t, z, verdict.formula, witness, node)
                verdict.novel = verdict.equivalent_premise is None
        verdict.label = _label(verdict)
        verdict.reason = _reason(verdict, self.premise_texts)
        if verdict.contradictory and r_base_z == SAT:
            verdict.reason = "the step contradicts earlier accepted steps (the premises alone allow it)"
        if self._accepts(verdict):
            self.accepted.append(pos)
            verdict.accepted = True
        return verdict

    def _sample_masks(self, node: Node | None) -> tuple[np.ndarray | None, list[np.ndarray | None]]:
        """z and the premises evaluated on the theory's sample of Γ_dom worlds (None: unknown)."""
        sample = self.theory.sample_worlds() if node is not None else None
        if sample is None or self.premise_nodes is None:
            return None, []
        opts = self._option_masks(sample)
        if self._premise_masks is None:
            self._premise_masks = [_safe_eval(n, sample, opts) for n in self.premise_nodes]
        return _safe_eval(node, sample, opts), self._premise_masks

    def _option_masks(self, sample: WorldSample) -> dict[str, np.ndarray]:
        out = {}
        for k, n in self.theory.option_nodes.items():
            m = _safe_eval(n, sample, None)
            if m is not None:
                out[f"Option_{k}"] = m
        return out

    def _equivalent_premise(self, t: int, z: z3.BoolRef, text: str | None,
                            witness: z3.ModelRef | None, node: Node | None = None) -> int | None:
        """The first premise C_i with Γ_dom ⊨ z ↔ C_i, else None.

        Only premises that agree with z on every world of the theory's random sample of Γ_dom
        (:mod:`.sample`) and are false in ``witness`` (a model of Γ_dom ∪ P ∪ {¬z}, where z is
        false) can be equivalent to z; only those need a solver call. Identical text needs none.
        """
        z_mask, masks = self._sample_masks(node)
        for i, c in enumerate(self.premises):
            if text is not None and i < len(self.premise_texts) and self.premise_texts[i] == text:
                return i
            if z_mask is not None and i < len(masks) and masks[i] is not None and not np.array_equal(z_mask, masks[i]):
                continue
            if witness is not None and z3.is_true(witness.eval(c, model_completion=True)):
                continue
            key = self._define(("xor", t, i), z3.Xor(z, c))
            if self._check([key]) == UNSAT:
                return i
        return None

    def _check_sat_claim(self, t: int, meta: MetaStep, verdict: StepVerdict) -> StepVerdict:
        """``Sat(Option_X)``: "rules + facts + Option_X is satisfiable" (App. E.2).

        valid: Γ_base ∪ {O_X} SAT; contradictory: Γ_ctx ∪ {O_X} UNSAT (the option is impossible
        in the current state); tautological: Γ_dom ⊨ O_X (possible in every world); novel:
        valid, not tautological, not a repeat of an accepted claim and O_X not already strongly
        implied by P^nc under Γ_dom. A claim adds no formula to P^nc or to Z.
        """
        verdict.claim = "sat"
        o = self._define(("opt", t), meta.formula)
        o_neg = self._define(("optneg", t), z3.Not(meta.formula))
        P = list(self.accepted)
        r_ctx = self._check(["base", *P, o])
        r_base = SAT if r_ctx == SAT else self._check(["base", o])
        if UNKNOWN_IN(r_ctx, r_base):
            return _unknown(verdict)
        verdict.contradictory = r_ctx == UNSAT
        verdict.valid = r_base == SAT
        verdict.tautological = verdict.valid and self._check([o_neg]) == UNSAT
        verdict.novel = False
        if verdict.valid and not verdict.tautological:
            repeat = meta.option in self._sat_claims
            r_p_notz = self._check([*P, o_neg])
            verdict.implied_by_previous = repeat or (r_ctx == SAT and r_p_notz == UNSAT)
            verdict.novel = not verdict.implied_by_previous
        verdict.label = _label(verdict)
        verdict.reason = _reason(verdict, self.premise_texts)
        if verdict.contradictory and r_base == SAT:
            verdict.reason = "the option is impossible given earlier accepted steps (the premises alone allow it)"
        if self._accepts(verdict):
            self._sat_claims.add(meta.option)
            verdict.accepted = True
        return verdict

    def _accepts(self, verdict: "StepVerdict") -> bool:
        if verdict.contradictory:
            return False
        return {"non_contradictory": True, "valid": bool(verdict.valid), "novel": bool(verdict.novel)}[self.accept]

    def add_unverified(self, z: z3.BoolRef) -> None:
        """Record a parsed step that is not judged (no solver state): it still belongs to Z."""
        n = next(_fresh)
        self.parsed_steps.append(self._define(("unverified", n), z))

    # ------------------------------------------------------------------ Definition 6
    def consistent_with(self, final: z3.BoolRef, over: str = "all") -> bool | None:
        """Def. 6: Γ_dom ∪ Z ∪ {F} satisfiable. Z is every parsed formal step (``over="all"``,
        the definition's "formal reasoning steps extracted from a trajectory", so a trace with a
        contradictory step is never consistent) or only P^nc (``over="accepted"``)."""
        if over not in ("all", "accepted"):
            raise ValueError(f"over must be 'all' or 'accepted', got {over!r}")
        self._define("final", final)
        steps = self.parsed_steps if over == "all" else self.accepted
        r = self._check([*steps, "final"])
        return None if r == z3.unknown else r == SAT

    def strongly_implies(self, phi_keys: list[Hashable], a: z3.BoolRef, b: z3.BoolRef) -> bool:
        """Def. 1 on this verifier's solver, Φ = Γ_dom ∪ the named formulas."""
        n = next(_fresh)
        ka = self._define(("A", n), a)
        kb = self._define(("B", n), b)
        knb = self._define(("notB", n), z3.Not(b))
        return self._check([*phi_keys, ka, kb]) == SAT and self._check([*phi_keys, ka, knb]) == UNSAT


_fresh = itertools.count()


def _safe_eval(node: Node, sample: WorldSample, options: dict[str, np.ndarray] | None) -> np.ndarray | None:
    try:
        m = evaluate_sample(node, sample, options)
    except (KeyError, ValueError, IndexError, TypeError):
        return None
    return m if m.dtype == bool and m.shape == (sample.size,) else None


def UNKNOWN_IN(*results: z3.CheckSatResult) -> bool:  # noqa: N802 - reads as a predicate
    return any(r == z3.unknown for r in results)


def _unknown(v: StepVerdict) -> StepVerdict:
    v.label = "unknown"
    v.reason = "the solver could not decide this step within its time limit"
    return v


def _conj(items: list[z3.BoolRef]) -> z3.BoolRef:
    if not items:
        return z3.BoolVal(True)
    return items[0] if len(items) == 1 else z3.And(*items)


def _py(v: z3.ExprRef) -> Any:
    if z3.is_int_value(v):
        return v.as_long()
    if z3.is_true(v):
        return True
    if z3.is_false(v):
        return False
    return str(v)


def _label(v: StepVerdict) -> str:
    if v.contradictory:
        return "contradictory"
    if v.tautological:
        return "tautological"
    if v.valid:
        if v.implied_by_previous:
            return "redundant"
        if v.equivalent_premise is not None:
            return "restates_premise"
        return "novel"
    return "unsupported"


def _reason(v: StepVerdict, premise_texts: list[str]) -> str:
    what = "the claim" if v.claim else "the step"
    if v.label == "contradictory":
        return f"{what} contradicts the premises"
    if v.label == "tautological":
        return f"{what} follows from the domain constraints alone"
    if v.label == "redundant":
        return f"{what} is already implied by the accepted earlier steps"
    if v.label == "restates_premise":
        i = v.equivalent_premise
        shown = premise_texts[i] if i is not None and i < len(premise_texts) else ""
        return f"{what} is equivalent to premise C{(i or 0) + 1}" + (f" ({shown})" if shown else "")
    if v.label == "novel":
        return f"{what} is valid and new"
    if v.label == "unsupported":
        return f"{what} is consistent with the premises but not implied by them"
    return v.reason
