"""pysmt's capture: ``Solver.solve`` of every incremental solver (the assertions and the
assumptions), serialised with pysmt's SMT-LIB printer as one ``smt2`` formula."""
from __future__ import annotations

from .core import Capture, patch


def install(cap: Capture) -> None:
    """Wrap ``solve`` of pysmt's incremental solvers (every backend derives from it)."""
    from pysmt.solvers.solver import IncrementalTrackingSolver

    def snap(self, assumptions=None):
        return (list(self.assertions), list(assumptions or []))

    patch(cap, IncrementalTrackingSolver, "solve", "pysmt", "Solver.solve", "pysmt", snap)


def formula(snapshot, cap: Capture) -> dict:
    """A solve's assertions and assumptions as one SMT-LIB assertion."""
    import io

    from pysmt.shortcuts import And
    from pysmt.smtlib.script import smtlibscript_from_formula

    asserts, assumptions = snapshot
    items = list(asserts) + list(assumptions)
    formula = And(items) if items else And([])
    buf = io.StringIO()
    smtlibscript_from_formula(formula).serialize(buf, daggify=False)
    return {"kind": "smt2", "text": buf.getvalue(), "assertions": len(items)}


FORMULAS = {"pysmt": formula}
