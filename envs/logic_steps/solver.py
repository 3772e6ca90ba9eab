"""The Z3 solver behind one trace's checks: Γ_dom plus named formulas behind guard literals,
every check under the action's verification budget.

:class:`GuardedSolver` answers one question, asked many times per trace: is Γ_dom ∪ {the formulas
named by these keys} satisfiable (and which literals over some atoms does it entail)? A formula is
:meth:`~GuardedSolver.define`\\ d once under a key (the premises, each step z_t and its negation
¬z_t, the final solution F, auxiliary formulas); a check names the keys it needs.

Why one incremental solver per trace: Γ_dom is asserted once, and each defined formula φ is
asserted, the first time a check names it, behind its own guard literal g (``g → φ``); a check is
``solver.check(*guards)`` on the same solver. Nothing is ever retracted, so nothing is rebuilt and
every check reuses what Z3 learned in the earlier ones. ``incremental=False`` runs the same checks
on a fresh solver each time (the baseline ``benchmarks/step_verify.py`` compares against); both
give the same answers (tested through the step verifier's verdicts).

Budget: each check's timeout is min(``timeout_ms``, what is left of the
:class:`~.budget.VerifyBudget`), and no check starts once the budget is spent (the answer is then
``unknown``); see :mod:`.budget` for what that bounds.
"""
from __future__ import annotations

import math
from typing import Any, Hashable

import z3

from .budget import VerifyBudget

__all__ = ["GuardedSolver", "SAT", "UNSAT", "conj", "py_value"]

SAT, UNSAT = z3.sat, z3.unsat


class GuardedSolver:
    """Satisfiability of Γ_dom ∪ {named formulas} on one incremental Z3 solver (see the module
    docstring).

    ``domain`` is Γ_dom, ``logic`` the Z3 logic the solver is made for (``z3.SolverFor``),
    ``timeout_ms`` the per-check limit (0: none but the budget's). ``checks`` counts the solver
    calls made (benchmarks report it); ``model`` is a model of the last :meth:`check` that asked
    for one and was SAT, else None.
    """

    def __init__(self, domain: list[z3.BoolRef], logic: str, *, incremental: bool, timeout_ms: int,
                 budget: VerifyBudget):
        self.dom = list(domain)
        self.logic = logic
        self.incremental = incremental
        self.timeout_ms = int(timeout_ms)
        self.budget = budget
        self.checks = 0
        self.exprs: dict[Hashable, z3.BoolRef] = {}
        self.model: z3.ModelRef | None = None
        self._guards: dict[Hashable, z3.BoolRef] = {}
        self._solver = self._new_solver() if incremental else None
        self._solver_timeout: int | None = None

    def _new_solver(self) -> z3.Solver:
        s = z3.SolverFor(self.logic)
        s.add(*self.dom)
        return s

    def define(self, key: Hashable, expr: z3.BoolRef) -> Hashable:
        """Name ``expr`` by ``key`` and return the key. Define a key once: from the first check
        that names it, its guard stays tied to the formula it named then."""
        self.exprs[key] = expr
        return key

    def _limit(self, s: z3.Solver) -> bool:
        """Set the solver's timeout to min(``timeout_ms``, what is left of the budget); False
        (and no check may start) when the budget is spent."""
        if self.budget.spent():
            return False
        left = self.budget.remaining()
        ms = self.timeout_ms if self.timeout_ms > 0 else 2**31 - 1
        if left != math.inf:
            ms = max(1, min(ms, int(math.ceil(left * 1000))))
        if ms != self._solver_timeout or not self.incremental:
            s.set("timeout", ms)
            self._solver_timeout = ms if self.incremental else None
        return True

    def _solver_for(self, keys: list[Hashable]) -> tuple[z3.Solver, list[z3.BoolRef]]:
        """The solver and the assumptions that make it Γ_dom ∪ {the formulas named by keys}."""
        if not self.incremental:
            s = self._new_solver()
            s.add(*[self.exprs[k] for k in keys])
            return s, []
        s = self._solver
        guards = []
        for key in keys:
            g = self._guards.get(key)
            if g is None:
                g = z3.Bool(f"__g{len(self._guards)}")
                s.add(z3.Implies(g, self.exprs[key]))
                self._guards[key] = g
            guards.append(g)
        return s, guards

    def check(self, keys: list[Hashable], want_model: bool = False) -> z3.CheckSatResult:
        """Is Γ_dom ∪ {the formulas named by keys} satisfiable? (unknown: timeout or budget)"""
        s, guards = self._solver_for(keys)
        self.model = None
        if not self._limit(s):
            return z3.unknown
        self.checks += 1
        r = _check_assuming(s, guards)
        self.budget.note()
        if r == z3.unknown:
            self.budget.spent()
        elif want_model and r == SAT:
            self.model = s.model()
        return r

    def consequences(self, keys: list[Hashable], atoms: list[z3.BoolRef]) -> tuple[z3.CheckSatResult, list]:
        """The literals over ``atoms`` that Γ_dom ∪ {the formulas named by keys} entails (Z3's
        backbone computation, one call)."""
        s, guards = self._solver_for(keys)
        if not self._limit(s):
            return z3.unknown, []
        self.checks += 1
        try:
            r, cons = s.consequences(guards, atoms)
        except z3.Z3Exception:  # interrupted by the timeout
            r, cons = z3.unknown, []
        self.budget.note()
        if r == z3.unknown:
            self.budget.spent()
        return r, cons


def _check_assuming(s: z3.Solver, guards: list[z3.BoolRef]) -> z3.CheckSatResult:
    """``s.check(*guards)`` without z3's per-assumption sort cast (about 35 µs each, paid for
    every guard of P^nc in every check): the guards are Boolean constants made here."""
    if not guards:
        return s.check()
    arr = (z3.Ast * len(guards))(*[g.as_ast() for g in guards])
    return z3.CheckSatResult(z3.Z3_solver_check_assumptions(s.ctx.ref(), s.solver, len(guards), arr))


def conj(items: list[z3.BoolRef]) -> z3.BoolRef:
    """``And`` of ``items`` (the item itself when there is one, True when there is none)."""
    if not items:
        return z3.BoolVal(True)
    return items[0] if len(items) == 1 else z3.And(*items)


def py_value(v: z3.ExprRef) -> Any:
    """A model's value as Python: an int, a bool, else its text."""
    if z3.is_int_value(v):
        return v.as_long()
    if z3.is_true(v):
        return True
    if z3.is_false(v):
        return False
    return str(v)
