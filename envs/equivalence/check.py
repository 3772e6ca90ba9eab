"""SAT-RL §3.4's logic-equivalence check: is the formula a program handed its solver the ground truth?

SAT-RL: "Suppose the ground-truth and proposed CNF formulas have aligned variables ... We verify
the equivalence F_truth <-> F_pred using Z3 to check whether (F_pred & !F_truth) | (!F_pred &
F_truth) is unsatisfiable." :func:`check_equivalence` does exactly that for a captured formula
(:mod:`.formulas`) against a :class:`Truth`: the ground-truth CNF and how a program's variable
names align with it (each family says how: ``solvergym.envs.sat.truth``).

A name that aligns with nothing makes the check fail with that name in the reason (SAT-RL's
F_pred has "aligned variables"; an extra variable would be existentially quantified in the
program's intent, and the paper's check does not quantify). ``auxiliary="exists"`` is the
option that does: unaligned variables are then read as ``exists aux. F_pred``. Two program
variables aligning with one instance variable is a failure too (merging them could make a wrong
program right). An integer variable aligned with a Boolean one reads 1 as true and 0 as false.

Every failure is a verdict with a reason, never an exception. Parsing, the walk that collects
the formula's variables and the Z3 call share ``timeout_ms`` (past it: ``timeout``).

**Score** (``verdict.score``, what the reward pays times its weight). ``rule="exact"`` (the
default, SAT-RL's): 1 when equivalent, else 0. ``rule="partial"`` is a deviation from SAT-RL, a
dense signal for small models: the share of the true clauses the program's formula implies
(F_pred |= C) minus the share of its top-level conjuncts the truth does not imply (F_truth |/= D):
1 exactly when equivalent (all true clauses implied, every conjunct implied by the truth), 0 for
an empty program's ``True``, down to -1 for a formula of only false parts. A check Z3 cannot
decide in the time left counts against the program (an unknown clause is not implied, an
unknown part is false), so a timeout never pays. A verdict other than ``equivalent`` /
``not_equivalent`` scores 0 under either rule.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from .formulas import Deadline, FormulaError, FormulaTooLarge, OutOfTime, formula_to_z3, z3_context

__all__ = ["Truth", "EquivalenceVerdict", "check_equivalence", "DEFAULT_TIMEOUT_MS", "AUXILIARY",
           "EQUIVALENCE_RULES"]

DEFAULT_TIMEOUT_MS = 5000
#: how a program variable that aligns with no instance variable is read (module docstring)
AUXILIARY = ("reject", "exists")
#: how a verdict becomes a score (module docstring): SAT-RL's all-or-nothing, or the clause shares
EQUIVALENCE_RULES = ("exact", "partial")


@dataclass
class Truth:
    """A ground-truth CNF over DIMACS variables ``1..len(names)`` and how program names align.

    ``align(name)`` returns the canonical name (an element of ``names``) or ``None``.
    ``constraints``, for a truth that is not a CNF (pseudo-Boolean: cardinality bounds, weighted
    sums, threshold gates), builds its conjuncts instead of ``clauses``: given the Z3 context and
    the Boolean constant of each name, a list of Z3 Boolean expressions.
    """

    clauses: list[list[int]]
    names: list[str]
    align: Callable[[str], str | None]
    constraints: Callable[[Any, dict[str, Any]], list] | None = None


@dataclass
class EquivalenceVerdict:
    """``status``: ``equivalent``, ``not_equivalent``, ``no_formula``, ``unaligned``,
    ``unsupported``, ``too_large``, ``timeout`` or ``error``; ``equivalent`` is True only for the
    first."""

    status: str
    reason: str
    aligned: dict[str, str] = field(default_factory=dict)
    counterexample: dict[str, bool] | None = None
    solver: str | None = None
    #: rule="partial": the true clauses implied and the parts the truth does not imply, as [n, of]
    partial: dict[str, list[int]] | None = None
    #: rule="partial"'s score; None under "exact" (see :attr:`score`)
    partial_score: float | None = None

    @property
    def equivalent(self) -> bool:
        return self.status == "equivalent"

    @property
    def score(self) -> float:
        """What the ``equivalence`` reward pays, before its weight (module docstring)."""
        if self.partial_score is not None:
            return self.partial_score
        return 1.0 if self.equivalent else 0.0

    def to_dict(self) -> dict[str, Any]:
        out = {"equivalent": self.equivalent, "status": self.status, "reason": self.reason,
               "aligned": dict(self.aligned), "counterexample": self.counterexample, "solver": self.solver}
        if self.partial is not None:
            out |= {"partial": dict(self.partial), "score": self.score}
        return out


def check_equivalence(formula: dict | None, truth: Truth, *, timeout_ms: int = DEFAULT_TIMEOUT_MS,
                      auxiliary: str = "reject", rule: str = "exact") -> EquivalenceVerdict:
    """SAT-RL §3.4: ``F_truth <-> F_pred`` iff ``(F_pred & !F_truth) | (!F_pred & F_truth)`` is
    unsatisfiable (Z3, at most ``timeout_ms``). See the module docstring for alignment and for
    ``rule``."""
    if auxiliary not in AUXILIARY:
        raise ValueError(f"auxiliary must be 'reject' or 'exists', got {auxiliary!r}")
    if rule not in EQUIVALENCE_RULES:
        raise ValueError(f"equivalence_rule must be one of {EQUIVALENCE_RULES}, got {rule!r}")
    solver_name = formula.get("solver") if isinstance(formula, dict) else None
    if not formula:
        return EquivalenceVerdict("no_formula", "no formula was captured: the program made no solve/check call")
    deadline = Deadline(timeout_ms if timeout_ms and timeout_ms > 0 else None)
    try:
        return _check(formula, truth, deadline, auxiliary, solver_name, rule)
    except OutOfTime:
        return EquivalenceVerdict("timeout", f"the equivalence check ran out of its {timeout_ms} ms",
                                  solver=solver_name)
    except FormulaTooLarge as e:
        return EquivalenceVerdict("too_large", str(e), solver=solver_name)
    except FormulaError as e:
        return EquivalenceVerdict("unsupported", str(e), solver=solver_name)
    except Exception as e:  # the check must never take the env down
        return EquivalenceVerdict("error", f"equivalence check failed: {type(e).__name__}: {str(e)[:200]}",
                                  solver=solver_name)


def _check(formula, truth: Truth, deadline: Deadline, auxiliary, solver_name, rule="exact") -> EquivalenceVerdict:
    import z3  # lazy: z3 (~50 ms to import) loads only when a formula is checked

    ctx = z3_context()
    pred, consts = formula_to_z3(formula, ctx, deadline=deadline)
    truth_vars = {n: z3.Bool(n, ctx) for n in truth.names}
    aligned: dict[str, str] = {}
    unaligned: list[str] = []
    by_canonical: dict[str, str] = {}
    subst = []
    for name, const in sorted(consts.items()):
        canon = truth.align(name)
        if canon is None or canon not in truth_vars:
            unaligned.append(name)
            continue
        if canon in by_canonical:
            return EquivalenceVerdict(
                "unaligned", f"program variables {by_canonical[canon]!r} and {name!r} both align with {canon}",
                solver=solver_name)
        by_canonical[canon] = name
        aligned[name] = canon
        target = truth_vars[canon]
        if z3.is_bool(const):
            subst.append((const, target))
        elif z3.is_int(const):
            subst.append((const, z3.If(target, z3.IntVal(1, ctx), z3.IntVal(0, ctx))))
        else:
            return EquivalenceVerdict("unsupported", f"variable {name!r} of sort {const.sort()} cannot stand for "
                                      f"the Boolean {canon}", aligned, solver=solver_name)
    if unaligned and auxiliary == "reject":
        shown = ", ".join(repr(u) for u in unaligned[:8]) + (" ..." if len(unaligned) > 8 else "")
        return EquivalenceVerdict(
            "unaligned", f"{len(unaligned)} program variable(s) align with no instance variable: {shown}",
            aligned, solver=solver_name)
    # Z3 refuses to substitute a constant by itself; identical names need no substitution
    subst = [(a, b) for a, b in subst if not a.eq(b)]
    pred = z3.substitute(pred, *subst) if subst else pred
    if unaligned:
        pred = z3.Exists([consts[u] for u in unaligned], pred)
    if truth.constraints is not None:
        clauses = list(truth.constraints(ctx, truth_vars))
    else:
        clauses = [z3.Or([truth_vars[truth.names[abs(x) - 1]] if x > 0 else z3.Not(truth_vars[truth.names[abs(x) - 1]])
                          for x in c], ctx) for c in truth.clauses]
    ftruth = z3.And(clauses, ctx) if clauses else z3.BoolVal(True, ctx)
    s = z3.Solver(ctx=ctx)
    budget = deadline.left_ms()
    if budget:
        s.set("timeout", budget)
    s.add(z3.Or(z3.And(pred, z3.Not(ftruth)), z3.And(z3.Not(pred), ftruth)))
    r = s.check()
    verdict = _verdict(r, s, pred, ftruth, truth, truth_vars, aligned, solver_name, budget)
    if rule == "partial" and verdict.status in ("equivalent", "not_equivalent"):
        _partial(verdict, pred, clauses, ctx, deadline)
    return verdict


def _partial(verdict: EquivalenceVerdict, pred, clauses, ctx, deadline: Deadline) -> None:
    """``rule="partial"``: the clause shares of the module docstring, into ``verdict``."""
    import z3

    ftruth = z3.And(clauses, ctx) if clauses else z3.BoolVal(True, ctx)
    parts = _conjuncts(pred)

    def holds(premise, goal) -> bool:  # premise |= goal, False when Z3 cannot say in time
        s = z3.Solver(ctx=ctx)
        try:
            left = deadline.left_ms()
        except OutOfTime:
            return False
        if left:
            s.set("timeout", left)
        s.add(premise, z3.Not(goal))
        return s.check() == z3.unsat

    implied = sum(holds(pred, c) for c in clauses)
    false = sum(not holds(ftruth, d) for d in parts)
    verdict.partial = {"true_clauses_implied": [implied, len(clauses)], "parts_not_true": [false, len(parts)]}
    score = (implied / len(clauses) if clauses else 1.0) - (false / len(parts) if parts else 0.0)
    # full marks only with the exact check's proof (the shares reach 1 only when equivalent anyway)
    verdict.partial_score = 1.0 if verdict.equivalent else min(score, 0.999)


def _conjuncts(expr) -> list:
    """The top-level conjuncts of ``expr`` (nested ``And`` flattened; ``True`` has none)."""
    import z3

    out, todo = [], [expr]
    while todo:
        e = todo.pop()
        if z3.is_and(e):
            todo.extend(reversed(e.children()))
        elif not z3.is_true(e):
            out.append(e)
    return out


def _verdict(r, s, pred, ftruth, truth: Truth, truth_vars, aligned, solver_name, budget) -> EquivalenceVerdict:
    """The exact check's verdict from the solver's answer ``r``."""
    import z3

    if r == z3.unsat:
        return EquivalenceVerdict("equivalent", "F_pred <-> F_truth: (F_pred & !F_truth) | (!F_pred & F_truth) "
                                  "is unsatisfiable", aligned, solver=solver_name)
    if r == z3.sat:
        m = s.model()
        cex = {n: bool(z3.is_true(m.eval(v, model_completion=True))) for n, v in truth_vars.items()}
        truth_holds = bool(z3.is_true(m.eval(ftruth, model_completion=True)))
        used = sorted({abs(x) for c in truth.clauses for x in c} | {
            truth.names.index(c) + 1 for c in aligned.values()})
        shown = ", ".join(f"{truth.names[i - 1]}={int(cex[truth.names[i - 1]])}" for i in used)
        side = "satisfies the ground truth but not the program's formula" if truth_holds else \
            "satisfies the program's formula but not the ground truth"
        return EquivalenceVerdict("not_equivalent", f"not equivalent: the assignment {shown} {side}",
                                  aligned, cex, solver=solver_name)
    return EquivalenceVerdict("timeout", f"Z3 could not decide equivalence within {budget} ms "
                              f"({s.reason_unknown()})", aligned, solver=solver_name)
