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

Which steps enter P^nc (``accept=``), the two novelty rules (``novelty=``: Def. 4 as written, or
the default that also asks for a new atomic fact) and the verdict types are in :mod:`.verdict`;
the wall-clock budget shared by one env action's checks is :class:`~.budget.VerifyBudget`.

Cost of the default novelty rule: a step that is itself a fact literal or a conjunction of them
(every gold step) is decided without a solver call. Any other step first asks the theory's world
sample (an atom the sample worlds of P^nc ∪ {z} show to vary cannot follow); then one check
whether the literals about the names it mentions that a model of z makes true and a model of ¬z
false all follow (they are new if they do); only then one Z3 ``consequences`` call, a backbone
over the atoms left. The facts known to follow from P^nc are kept incrementally
(:class:`.facts.FactTable`).

Speed: all checks of a trace run on one incremental Z3 solver (:class:`~.solver.GuardedSolver`:
Γ_dom asserted once, every other formula behind its own guard literal, nothing ever retracted);
``incremental=False`` runs them on a fresh solver each, with the same verdicts (tested). Checks
whose answer is already known are skipped — each skip is an entailment, noted where it happens:

- when §4.2 proved Γ_base to have one solution M* (Zebra, Knights), Defs. 2 and 5 are read off
  M* (``z`` holds there or not: valid, or contradictory), with no solver call;
- a world of the sample (:mod:`.sample`: worlds of Γ_dom; for Zebra also those one swap from
  M*, :meth:`~.theory.Theory.sample_near`) where ``z`` is false answers Def. 3 (not
  tautological), and one that satisfies P^nc and not ``z`` answers Def. 4's
  Γ_dom ∪ P ∪ {¬z} (SAT) and serves as its model;
- a step of fact literals that are all known facts of P^nc is implied by it (Def. 4, redundant).

So a gold step of a uniquely solved Zebra costs no solver call at all; a step that is not made
of fact literals still needs Z3 to show which facts follow from it (the checks above).
"""
from __future__ import annotations

import itertools
from typing import Hashable, Union

import numpy as np
import z3

from .budget import VerifyBudget
from .facts import FactTable
from .formula import Node, to_text
from .sample import WorldSample, truth_mask
from .solver import SAT, UNSAT, GuardedSolver, conj, py_value
from .theory import MetaStep, Theory
from .verdict import BaseStatus, StepVerdict, check_accept, check_novelty, label_of, reason_of

__all__ = ["StepVerifier", "strongly_implies"]

#: A world in which the verifier reads the value of formulas: a Z3 model, or the index of a
#: world of its sample (:mod:`.sample`; atom values from the fact table's matrix)
World = Union[z3.ModelRef, int]


def strongly_implies(phi: list[z3.BoolRef], a: z3.BoolRef, b: z3.BoolRef) -> bool:
    """Spring Def. 1: ``a ⇒_phi b`` iff phi ∪ {a, b} is SAT and phi ∪ {a, ¬b} is UNSAT."""
    s = z3.Solver()
    s.add(*phi)
    s.add(a)
    if s.check(b) != SAT:
        return False
    return s.check(z3.Not(b)) == UNSAT


class StepVerifier:
    """The verifier of one trace: one solver state, fed the steps in order.

    ``theory`` gives Γ_dom, the compilation of parsed formulas and the world sample; ``premises``
    are the compiled premises C (``premise_texts``: their canonical texts, also shown in reasons;
    ``premise_nodes``: their parsed trees; both optional, they let restatements be recognised with
    fewer solver calls). ``accept`` and
    ``novelty`` are the policies of :mod:`.verdict`; ``timeout_ms`` limits each solver check and
    ``budget`` all checks of one env action (:class:`~.budget.VerifyBudget`, unlimited when None).

    :meth:`base_status` (§4.2) and :meth:`equivalent_to` ask about the premises; :meth:`check`
    judges the next step against Γ_base and P^nc_{t-1}, fills its :class:`~.verdict.StepVerdict`
    and, when the step is accepted, adds it to P^nc (``accepted``); every parsed step, judged or
    recorded with :meth:`add_unverified`, is in Z (``parsed_steps``), which
    :meth:`consistent_with` checks against the final solution (Def. 6). A step the solver does not
    decide is labelled ``"unknown"``, or ``"unverified"`` once the budget is spent.
    """

    def __init__(
        self,
        theory: Theory,
        premises: list[z3.BoolRef],
        *,
        premise_texts: list[str] | None = None,
        premise_nodes: list[Node] | None = None,
        incremental: bool = True,
        accept: str = "non_contradictory",
        novelty: str = "facts",
        timeout_ms: int = 5000,
        budget: VerifyBudget | None = None,
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
        self.novelty = check_novelty(novelty)
        self.timeout_ms = int(timeout_ms)
        self.budget = budget if budget is not None else VerifyBudget(None)
        self._solver = GuardedSolver(self.dom, getattr(theory, "logic", "QF_LIA"), incremental=incremental,
                                     timeout_ms=self.timeout_ms, budget=self.budget)
        self._solver.define("base", conj(self.premises))
        self._t = 0  # steps seen
        self.accepted: list[Hashable] = []  # keys of P^nc
        self.parsed_steps: list[Hashable] = []  # keys of Z (Def. 6)
        self._sat_claims: set[str] = set()
        # novelty="facts": the atoms and the facts known to follow from Γ_dom ∪ P^nc (built on
        # first use), and which worlds of the theory's sample satisfy every accepted step
        self._facts: FactTable | None | bool = False
        self._p_mask: np.ndarray | None | bool = False
        self._opt_masks: dict[str, np.ndarray] | None = None
        # §4.2 found Γ_base to have exactly one solution: that model (see :meth:`_against_base`)
        self._solution: z3.ModelRef | None = None
        # the worlds of Γ_dom every sample test uses: the theory's sample, and once the solution
        # is known the worlds near it (Theory.sample_near); fixed before the first mask is made
        self._sample: WorldSample | None | bool = False

    @property
    def checks(self) -> int:
        """Solver calls made so far (benchmarks report it)."""
        return self._solver.checks

    # ------------------------------------------------------------------ §4.2 and faithfulness
    def base_status(self, require_unique: bool = True) -> BaseStatus:
        """Γ_base satisfiable (and, with ``require_unique``, with exactly one solution)."""
        r = self._solver.check(["base"], want_model=True)
        if r == UNSAT:
            return BaseStatus(False, False, "the parsed premises are unsatisfiable with the domain constraints")
        if r != SAT:
            return BaseStatus(None, None, "the solver could not decide the parsed premises (timeout)")
        model = self._solver.model
        vars_ = self.theory.state_vars()
        values = {str(v): py_value(model.eval(v, model_completion=True)) for v in vars_}
        if not require_unique:
            return BaseStatus(True, None, "the parsed premises are satisfiable", values)
        block = z3.Or(*[v != model.eval(v, model_completion=True) for v in vars_]) if vars_ else z3.BoolVal(False)
        self._solver.define("block", block)
        r2 = self._solver.check(["base", "block"])
        if r2 == UNSAT:
            self._solution = model
            if self._sample is False:  # no mask was made on the plain sample yet
                self._sample = self.theory.sample_near(model) or False
            return BaseStatus(True, True, "the parsed premises are satisfiable with a unique solution", values)
        if r2 == SAT:
            return BaseStatus(True, False, "the parsed premises are satisfiable but have more than one solution", values)
        return BaseStatus(True, None, "the solver could not decide uniqueness (timeout)", values)

    def equivalent_to(self, other: list[z3.BoolRef]) -> bool | None:
        """Is Γ_dom ∪ C equivalent to Γ_dom ∪ other (e.g. the instance's true clues)?"""
        self._solver.define("other", conj(other))
        self._solver.define("not_base", z3.Not(self._solver.exprs["base"]))
        self._solver.define("not_other", z3.Not(self._solver.exprs["other"]))
        r1 = self._solver.check(["base", "not_other"])
        if r1 == SAT:
            return False
        r2 = self._solver.check(["other", "not_base"])
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
        pos = self._solver.define(("pos", t), z)
        neg = self._solver.define(("neg", t), z3.Not(z))
        self.parsed_steps.append(pos)
        P = list(self.accepted)
        # novelty="facts": the step's fact literals when it is a conjunction of them (else None);
        # a model of z is looked at for a step that is not
        table = self._fact_table() if self.novelty == "facts" else None
        lits = table.literals(node) if table is not None and node is not None else None
        want = table is not None and node is not None and lits is None
        r_ctx, r_base_z, r_base_notz, model_z = self._against_base(pos, neg, z, P, want)
        if UNKNOWN_IN(r_ctx, r_base_z, r_base_notz):
            return _unknown(verdict, self.budget)
        verdict.contradictory = r_ctx == UNSAT
        verdict.valid = r_base_z == SAT and r_base_notz == UNSAT  # Def. 2
        z_mask = self._mask(node)
        if verdict.valid and z_mask is not None and not z_mask.all():
            # a world of the sample satisfies Γ_dom and not z: Γ_dom ∪ {¬z} SAT (Def. 3)
            verdict.tautological = False
        elif verdict.valid:
            r_taut = self._solver.check([neg])  # Def. 3
            if r_taut == z3.unknown:
                return _unknown(verdict, self.budget)
            verdict.tautological = r_taut == UNSAT
        else:
            # Γ_base ∪ {¬z} SAT entails Γ_dom ∪ {¬z} SAT; and Γ_base ∪ {z} UNSAT with Γ_base SAT
            # (the verifier only runs on a satisfiable Γ_base) means Γ_dom ∪ {¬z} SAT too.
            verdict.tautological = False
        verdict.novel = False
        learned = None  # novelty="facts": (facts of Γ_dom ∪ P ∪ {z} beyond the known ones, complete)
        if verdict.valid and not verdict.tautological:
            # Def. 4: P_{t-1} ⇏_{Γ_dom} z, i.e. not (Γ_dom ∪ P ∪ {z} SAT and Γ_dom ∪ P ∪ {¬z} UNSAT)
            r_p_z = SAT if r_ctx == SAT else self._solver.check([*P, pos])
            # worlds of the sample that satisfy Γ_dom ∪ P and ¬z, and Γ_dom ∪ P and z (None: unknown)
            p_mask = self._p_mask_now() if table is not None and z_mask is not None else None
            readable = p_mask is not None and (lits is not None or table.matrix() is not None)
            if lits and all(table.known[i] == sg for i, sg in lits):
                # every literal of z is a known fact, so follows from Γ_dom ∪ P: that with ¬z is UNSAT
                r_p_notz, witness = UNSAT, None
            elif readable and (p_mask & ~z_mask).any():
                # a world of the sample is a model of Γ_dom ∪ P ∪ {¬z}: SAT, and that world the witness
                r_p_notz, witness = SAT, int(np.argmax(p_mask & ~z_mask))
                if want and (p_mask & z_mask).any():  # and one of Γ_dom ∪ P ∪ {z} for model_z
                    model_z = int(np.argmax(p_mask & z_mask))
            else:
                r_p_notz = self._solver.check([*P, neg], want_model=True)
                witness = self._solver.model  # a model of Γ_dom ∪ P ∪ {¬z}, when there is one
            if UNKNOWN_IN(r_p_z, r_p_notz):
                return _unknown(verdict, self.budget)
            verdict.implied_by_previous = r_p_z == SAT and r_p_notz == UNSAT
            if not verdict.implied_by_previous and self.novelty == "spring":
                verdict.equivalent_premise = self._equivalent_premise(t, z, verdict.formula, witness, z_mask)
                verdict.novel = verdict.equivalent_premise is None
            elif not verdict.implied_by_previous:
                restated = self._restated_premises(t, z, verdict.formula, node, witness, z_mask)
                if restated:
                    verdict.restates = restated
                    if len(restated) == 1:
                        verdict.equivalent_premise = restated[0]
                else:
                    got = self._new_facts(node, pos, P, z_mask, witness, model_z)
                    if got is None:
                        return _unknown(verdict, self.budget)
                    found, new, complete = got
                    learned = (found, complete)
                    table = self._fact_table()
                    verdict.new_facts = [table.text(lit) for lit in new[:5]] if table is not None else []
                    verdict.novel = bool(new) or table is None
        if self.budget.exhausted:  # a check of this step was cut short: no verdict
            return _unknown(verdict, self.budget)
        verdict.label = label_of(verdict)
        verdict.reason = reason_of(verdict, self.premise_texts)
        if verdict.contradictory and r_base_z == SAT:
            verdict.reason = "the step contradicts earlier accepted steps (the premises alone allow it)"
        accepted = self._accepts(verdict)
        if self.novelty == "facts":
            self._note_facts(node, z_mask, learned, accepted, implied=bool(verdict.implied_by_previous
                                                                          or verdict.tautological))
        if accepted:
            self.accepted.append(pos)
            verdict.accepted = True
        return verdict

    def _against_base(self, pos: Hashable, neg: Hashable, z: z3.BoolRef, P: list[Hashable], want_model: bool,
                      ) -> tuple[z3.CheckSatResult, z3.CheckSatResult, z3.CheckSatResult, z3.ModelRef | None]:
        """``(r_ctx, r_base_z, r_base_notz, model_z)``: Γ_ctx ∪ {z} (Def. 5), Γ_base ∪ {z} and
        Γ_base ∪ {¬z} (Def. 2), and with ``want_model`` a model of Γ_ctx ∪ {z} when it is SAT.

        When §4.2 found Γ_base to have one solution M* (:meth:`base_status`), no solver call:
        every formula the theory compiles is over its state variables, which M* fixes, so
        Γ_base ∪ {z} is SAT exactly when M* ⊨ z, and Γ_base ∪ {¬z} exactly when it does not.
        Every accepted step was non-contradictory (Γ_base ∪ P ∪ {z_s} SAT), so true in M*: M*
        is a model of Γ_ctx, and Γ_ctx ∪ {z} is SAT exactly when M* ⊨ z too (and M* a model of it).
        """
        if self._solution is not None:
            # without completion: a constant M* does not fix (a theory that compiles terms over
            # more than its state variables) leaves the value open, and the solver decides
            value = self._solution.eval(z, model_completion=False)
            if z3.is_true(value):
                return SAT, SAT, UNSAT, self._solution if want_model else None
            if z3.is_false(value):
                return UNSAT, UNSAT, SAT, None
        r_ctx = self._solver.check(["base", *P, pos], want_model=want_model)  # Def. 5
        model_z = self._solver.model  # a model of Γ_base ∪ P ∪ {z}, hence of Γ_dom ∪ P ∪ {z}
        if r_ctx == SAT:
            # Γ_base ∪ P ∪ {z} SAT entails Γ_base ∪ {z} SAT and Γ_dom ∪ P ∪ {z} SAT
            r_base_z = SAT
        else:
            r_base_z = self._solver.check(["base", pos])
        return r_ctx, r_base_z, self._solver.check(["base", neg]), model_z

    # ------------------------------------------------------------------ novelty="facts"
    def _fact_table(self) -> FactTable | None:
        if self._facts is False:
            self._facts = self.theory.fact_table(self._worlds())
        return self._facts

    def _worlds(self) -> WorldSample | None:
        """The sample of Γ_dom worlds (:mod:`.sample`): the theory's, with the worlds near the
        unique solution once §4.2 found one (:meth:`~.theory.Theory.sample_near`)."""
        if self._sample is False:
            self._sample = self.theory.sample_worlds()
        return self._sample

    def _mask(self, node: Node | None) -> np.ndarray | None:
        """The step's value on the sample of Γ_dom worlds (None: no sample, or it cannot be
        evaluated there)."""
        sample = self._worlds() if node is not None else None
        if sample is None:
            return None
        return truth_mask(node, sample, self._option_masks(sample))

    def _p_mask_now(self) -> np.ndarray | None:
        """Sample worlds that satisfy P^nc (None: unknown)."""
        if self._p_mask is False:
            sample = self._worlds()
            self._p_mask = None if sample is None else np.ones(sample.size, dtype=bool)
        return self._p_mask

    def _p_worlds(self, z_mask: np.ndarray | None) -> np.ndarray | None:
        """Sample worlds that satisfy P^nc and z (None: unknown)."""
        p = self._p_mask_now()
        return None if p is None or z_mask is None else p & z_mask

    def _new_facts(self, node: Node | None, pos: Hashable, P: list[Hashable], z_mask: np.ndarray | None,
                   witness: World | None, model_z: World | None = None,
                   ) -> tuple[list[tuple[int, int]], list[tuple[int, int]], bool] | None:
        """``(facts, new, complete)``: fact literals of Γ_dom ∪ P ∪ {z} that ``known`` lacks,
        those of them that do not follow from Γ_dom ∪ P, and whether ``facts`` are all the ones
        ``known`` lacks (None: the solver gave up). ``witness`` and ``model_z`` are worlds
        (:data:`World`: a Z3 model or a world of the sample).

        A step that is a fact literal, or a conjunction of them, and that P does not imply (the
        caller checked) makes its own literals follow, at least one of them new: no solver call.
        Otherwise the candidates are the atoms without a known fact that the sample worlds
        satisfying P ∪ {z} do not show to vary; one ``consequences`` call finds which of them
        follow, and known ∪ facts is then every fact of Γ_dom ∪ P ∪ {z} (an atom that follows
        from P follows from P ∪ {z} too, so it is among the candidates). When ``known`` is exact
        every one of them is new; otherwise a fact false in ``witness`` (a model of
        Γ_dom ∪ P ∪ {¬z}) is new, and only when there is none does one check of P against their
        disjunction decide.

        Before that, a cheaper sufficient test (a deduction usually fixes something about the
        names it mentions): the literals over those names that ``model_z`` (a model of P ∪ {z})
        makes true and ``witness`` false do not follow from P; if P ∪ {z} entails all of them
        (one check of their negated disjunction; a model that refutes some drops those, twice
        at most) the step is novel without the backbone, and ``known`` learns them.
        """
        table = self._fact_table()
        if table is None:
            return [], [], False
        lits = table.literals(node) if node is not None else None
        if lits is not None:
            lits = sorted(set(lits))
            return lits, [lit for lit in lits if table.known[lit[0]] != lit[1]], False
        cand = table.undecided(self._p_worlds(z_mask))
        if not len(cand):
            return [], [], True
        ex = table.expr
        near = np.intersect1d(table.atoms_of(node), cand) if node is not None else cand[:0]
        if len(near) and witness is not None and model_z is not None:
            vz = [self._atom_holds(model_z, i) for i in near]
            lits = [(int(i), 1 if v else -1) for i, v in zip(near, vz) if self._atom_holds(witness, i) != v]
            for _ in range(3):
                if not lits:
                    break
                key = self._solver.define(("near", next(_fresh)), z3.Or(*[_negate(ex(i), sg) for i, sg in lits]))
                r = self._solver.check([*P, pos, key], want_model=True)
                if r == z3.unknown:
                    return None
                if r == UNSAT:
                    return lits, lits, False
                m = self._solver.model
                lits = [(i, sg) for i, sg in lits if self._atom_holds(m, i) == (sg > 0)]
        r, cons = self._solver.consequences([*P, pos], [ex(i) for i in cand])
        if r != SAT:
            return None
        found = table.decode(cons)
        if not found or table.exact:
            return found, found, True
        if witness is not None:
            new = [(i, sg) for i, sg in found if self._atom_holds(witness, i) != (sg > 0)]
            if new:
                return found, new, True
        n = next(_fresh)
        key = self._solver.define(("somefact", n), z3.Or(*[_negate(ex(i), sg) for i, sg in found]))
        r2 = self._solver.check([*P, key], want_model=True)
        if r2 == z3.unknown:
            return None
        if r2 == UNSAT:  # all of them already followed from P
            return found, [], True
        m = self._solver.model
        new = [(i, sg) for i, sg in found if self._atom_holds(m, i) != (sg > 0)]
        return found, new, True

    def _atom_holds(self, world: World, i: int) -> bool:
        """Atom ``i`` of the fact table in ``world`` (a Z3 model, or a world of the sample)."""
        table = self._fact_table()
        if isinstance(world, int):
            return bool(table.matrix()[i, world])
        return z3.is_true(world.eval(table.expr(i), model_completion=True))

    def _note_facts(self, node: Node | None, z_mask: np.ndarray | None,
                    learned: tuple[list[tuple[int, int]], bool] | None, accepted: bool, implied: bool) -> None:
        """Keep ``known`` and the sample mask of P^nc up to date with the step just judged."""
        table = self._fact_table()
        if not accepted or implied or table is None:
            return  # P^nc is unchanged, or grows by a formula it already implies
        if self._p_mask_now() is not None:
            self._p_mask = self._p_mask & z_mask if z_mask is not None else None
        if learned is None:  # not computed (an unsupported or restating step): its own literals
            lits = table.literals(node) if node is not None else None
            table.learn(lits or [])
            table.exact = False
            return
        found, complete = learned
        table.learn(found)
        table.exact = complete

    def _restated_premises(self, t: int, z: z3.BoolRef, text: str | None, node: Node | None,
                           witness: World | None, z_mask: np.ndarray | None) -> list[int]:
        """Premises that z restates: ``[i]`` when z ≡ C_i modulo Γ_dom (Def. 4's test), the
        premises of its parts when z is an ``And`` or ``Or`` whose every part restates premises
        (``And(C1, C2)``, ``Or(C3, C4)``, nested), else [].

        Spring's Def. 4 excludes "z ≡ C_i"; ``And``/``Or`` of premises is the obvious way around
        it. Not "equivalent to the conjunction of the premises it entails": that reading calls real
        deductions restatements whenever the premises they use say no more than they do —
        ``Jules == 6`` from ``Or(Jules == 6, Mona == 6)`` and ``Mona < Jules`` is equivalent to
        those two premises — and can leave a puzzle without a single novel gold step.
        """
        i = self._equivalent_premise(t, z, text, witness, z_mask)
        if i is not None:
            return [i]
        if node is None or node.op not in ("And", "Or") or len(node.args) < 2:
            return []
        out: set[int] = set()
        for j, part in enumerate(node.args):
            try:
                expr = self.theory.compile(part)
            except ValueError:  # FormulaError: a part that is no statement of its own
                return []
            sub = self._restated_premises((t, j), expr, to_text(part), part, None, self._mask(part))
            if not sub:
                return []
            out.update(sub)
        return sorted(out)

    def _premise_sample_masks(self) -> list[np.ndarray | None]:
        sample = self._worlds()
        if sample is None or self.premise_nodes is None:
            return []
        if self._premise_masks is None:
            opts = self._option_masks(sample)
            self._premise_masks = [truth_mask(n, sample, opts) for n in self.premise_nodes]
        return self._premise_masks

    def _option_masks(self, sample: WorldSample) -> dict[str, np.ndarray]:
        if self._opt_masks is None:  # the options are parsed with the premises, before any step
            self._opt_masks = {}
            for k, n in self.theory.option_nodes.items():
                m = truth_mask(n, sample, None)
                if m is not None:
                    self._opt_masks[f"Option_{k}"] = m
        return self._opt_masks

    def _equivalent_premise(self, t: int, z: z3.BoolRef, text: str | None,
                            witness: World | None, z_mask: np.ndarray | None) -> int | None:
        """The first premise C_i with Γ_dom ⊨ z ↔ C_i, else None.

        Only premises that agree with z on every world of the theory's random sample of Γ_dom
        (:mod:`.sample`; ``z_mask``, z there, from :meth:`_mask`) and are false in ``witness`` (a
        model of Γ_dom ∪ P ∪ {¬z}, where z is false) can be equivalent to z; only those need a
        solver call. Identical text needs none. A witness that is a world of the sample filters
        nothing more: a premise that passes the mask test agrees with z there too.
        """
        masks = self._premise_sample_masks() if z_mask is not None else []
        if isinstance(witness, int):
            witness = None
        for i, c in enumerate(self.premises):
            if text is not None and i < len(self.premise_texts) and self.premise_texts[i] == text:
                return i
            if z_mask is not None and i < len(masks) and masks[i] is not None and not np.array_equal(z_mask, masks[i]):
                continue
            if witness is not None and z3.is_true(witness.eval(c, model_completion=True)):
                continue
            key = self._solver.define(("xor", t, i), z3.Xor(z, c))
            if self._solver.check([key]) == UNSAT:
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
        o = self._solver.define(("opt", t), meta.formula)
        o_neg = self._solver.define(("optneg", t), z3.Not(meta.formula))
        P = list(self.accepted)
        r_ctx = self._solver.check(["base", *P, o])
        r_base = SAT if r_ctx == SAT else self._solver.check(["base", o])
        if UNKNOWN_IN(r_ctx, r_base):
            return _unknown(verdict, self.budget)
        verdict.contradictory = r_ctx == UNSAT
        verdict.valid = r_base == SAT
        verdict.tautological = verdict.valid and self._solver.check([o_neg]) == UNSAT
        verdict.novel = False
        if verdict.valid and not verdict.tautological:
            repeat = meta.option in self._sat_claims
            r_p_notz = self._solver.check([*P, o_neg])
            verdict.implied_by_previous = repeat or (r_ctx == SAT and r_p_notz == UNSAT)
            verdict.novel = not verdict.implied_by_previous
        if self.budget.exhausted:
            return _unknown(verdict, self.budget)
        verdict.label = label_of(verdict)
        verdict.reason = reason_of(verdict, self.premise_texts)
        if verdict.contradictory and r_base == SAT:
            verdict.reason = "the option is impossible given earlier accepted steps (the premises alone allow it)"
        if self._accepts(verdict):
            self._sat_claims.add(meta.option)
            verdict.accepted = True
        return verdict

    def _accepts(self, verdict: "StepVerdict") -> bool:
        if verdict.contradictory:
            return False
        if self.accept == "deductions":
            return verdict.equivalent_premise is None and not verdict.restates
        return {"non_contradictory": True, "valid": bool(verdict.valid), "novel": bool(verdict.novel)}[self.accept]

    def add_unverified(self, z: z3.BoolRef) -> None:
        """Record a parsed step that is not judged (no solver state): it still belongs to Z."""
        n = next(_fresh)
        self.parsed_steps.append(self._solver.define(("unverified", n), z))

    # ------------------------------------------------------------------ Definition 6
    def consistent_with(self, final: z3.BoolRef, over: str = "all") -> bool | None:
        """Def. 6: Γ_dom ∪ Z ∪ {F} satisfiable. Z is every parsed formal step (``over="all"``,
        the definition's "formal reasoning steps extracted from a trajectory", so a trace with a
        contradictory step is never consistent) or only P^nc (``over="accepted"``)."""
        if over not in ("all", "accepted"):
            raise ValueError(f"over must be 'all' or 'accepted', got {over!r}")
        self._solver.define("final", final)
        steps = self.parsed_steps if over == "all" else self.accepted
        r = self._solver.check([*steps, "final"])
        return None if r == z3.unknown else r == SAT

    def strongly_implies(self, phi_keys: list[Hashable], a: z3.BoolRef, b: z3.BoolRef) -> bool:
        """Def. 1 on this verifier's solver, Φ = Γ_dom ∪ the named formulas."""
        n = next(_fresh)
        ka = self._solver.define(("A", n), a)
        kb = self._solver.define(("B", n), b)
        knb = self._solver.define(("notB", n), z3.Not(b))
        return self._solver.check([*phi_keys, ka, kb]) == SAT and self._solver.check([*phi_keys, ka, knb]) == UNSAT


_fresh = itertools.count()


def _negate(atom: z3.BoolRef, sign: int) -> z3.BoolRef:
    """The negation of the literal ``atom`` (sign > 0) or ``Not(atom)`` (sign < 0)."""
    return z3.Not(atom) if sign > 0 else atom


def UNKNOWN_IN(*results: z3.CheckSatResult) -> bool:  # noqa: N802 - reads as a predicate
    return any(r == z3.unknown for r in results)


def _unknown(v: StepVerdict, budget: VerifyBudget | None = None) -> StepVerdict:
    if budget is not None and budget.spent():
        v.label = "unverified"
        v.reason = budget.reason()
        return v
    v.label = "unknown"
    v.reason = "the solver could not decide this step within its time limit"
    return v
