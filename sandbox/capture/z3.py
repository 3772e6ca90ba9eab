"""z3's capture: ``Solver.check`` and ``Optimize.check`` (the assertions and the check-time
assumptions), serialised with Z3's own SMT-LIB2 printer as one ``smt2`` formula."""
from __future__ import annotations

from .core import Capture, patch


def install(cap: Capture) -> None:
    """Wrap ``check`` of z3's ``Solver`` and ``Optimize``."""
    import z3

    def snap(self, *assumptions):
        return (list(self.assertions()), list(assumptions))

    patch(cap, z3.Solver, "check", "z3", "Solver.check", "z3", snap)
    patch(cap, z3.Optimize, "check", "z3", "Optimize.check", "z3", snap)


def formula(snapshot, cap: Capture) -> dict:
    """A check's assertions and assumptions as one SMT-LIB2 assertion."""
    import z3

    asserts, assumptions = snapshot
    extra = list(z3.z3._get_args(assumptions)) if assumptions else []
    items = list(asserts) + extra
    ctx = items[0].ctx if items else z3.main_ctx()
    formula = z3.And(*items) if items else z3.BoolVal(True, ctx)
    # Z3's own SMT-LIB2 printer: declarations and one assertion. (A fresh Solver to print with
    # would cost ~5 ms in a forked child: its construction writes to many shared pages.)
    text = z3.Z3_benchmark_to_smtlib_string(ctx.ref(), "", "", "unknown", "", 0, (z3.Ast * 0)(), formula.as_ast())
    return {"kind": "smt2", "text": text, "assertions": len(items)}


FORMULAS = {"z3": formula}
