"""The equivalence service (SAT-RL §3.4's ``equivalence`` reward): formula kinds to Z3
(:mod:`.formulas`), the ground truth a family states (:class:`Truth`) and the check
(:mod:`.check`). The tool mode asks it; a family only builds its :class:`Truth`.

    verdict = check_equivalence(result.formula, Truth(clauses, names, align), timeout_ms=5000)
    verdict.equivalent, verdict.status, verdict.reason
"""
from .check import AUXILIARY, DEFAULT_TIMEOUT_MS, EQUIVALENCE_RULES, EquivalenceVerdict, Truth, check_equivalence
from .formulas import MAX_DEPTH, MAX_NODES, FormulaError, FormulaTooLarge, formula_size, formula_to_z3

__all__ = ["AUXILIARY", "DEFAULT_TIMEOUT_MS", "EQUIVALENCE_RULES", "EquivalenceVerdict", "Truth", "check_equivalence", "MAX_DEPTH",
           "MAX_NODES", "FormulaError", "FormulaTooLarge", "formula_size", "formula_to_z3"]
