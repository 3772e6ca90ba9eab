"""A Synthetic-Logic instance's ground truth for the ``equivalence`` reward (SAT-RL §3.4): the
family's :class:`~.model.BoolModel` as Z3 pseudo-Boolean constraints over the names the variable
mapping gives (:class:`~solvergym.envs.equivalence.Truth` with ``constraints``).

A program's variable aligns with a model variable when it has the same name (the prompt asks for
the mapping's names; a program that renames its variables has not stated this instance). Its
other variables (a cardinality encoding's counters, python-sat's ``CardEnc`` auxiliaries) are
auxiliaries: the tool mode reads them as ``exists aux. F_pred`` (``auxiliary="exists"``, the
family default), so an encoding is judged by what it says about the named variables only.
"""
from __future__ import annotations

from typing import Any

from ..equivalence import Truth
from .model import BoolModel

__all__ = ["model_truth"]


def model_truth(model: BoolModel) -> Truth:
    """The truth of ``model``: each clause, cardinality bound, weighted sum and threshold gate as
    one Z3 conjunct (``PbLe`` / ``PbGe`` / ``PbEq``), so the partial rule's shares count them."""
    names = list(model.names)
    canonical = set(names)

    def constraints(ctx: Any, var: dict[str, Any]) -> list:
        import z3  # lazy: only a check builds it

        def lit(x: int):
            return var[names[x - 1]] if x > 0 else z3.Not(var[names[-x - 1]], ctx)

        def pb(op: str, terms: list, bound: int):
            if not terms:  # an empty sum is 0
                return z3.BoolVal({"<=": 0 <= bound, ">=": 0 >= bound, "==": bound == 0}[op], ctx)
            return {"<=": z3.PbLe, ">=": z3.PbGe, "==": z3.PbEq}[op](terms, bound)

        out = [z3.Or([lit(x) for x in c.lits], ctx) if c.lits else z3.BoolVal(False, ctx) for c in model.clauses]
        out += [pb(c.op, [(lit(x), 1) for x in c.lits], c.k) for c in model.cards]
        out += [pb(c.op, [(var[names[v - 1]], a) for a, v in zip(c.coefs, c.vars)], c.rhs) for c in model.linears]
        out += [var[names[g.var - 1]] == pb(">=", [(lit(x), 1) for x in g.lits], g.k) for g in model.thresholds]
        return out

    def align(name: str) -> str | None:
        name = str(name).strip()
        return name if name in canonical else None

    return Truth([], names, align, constraints)
