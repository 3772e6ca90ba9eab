"""sympy's capture: ``satisfiable`` (wherever sympy re-exports it), its argument serialised as
a ``sympy`` formula tree of the Boolean connectives (bounded in size and depth: the record is
JSON read with a bounded nesting depth)."""
from __future__ import annotations

from .core import Capture, is_wrapped, wrap_call

MAX_SYMPY_NODES = 200_000
MAX_SYMPY_DEPTH = 100


def install(cap: Capture) -> None:
    """Wrap ``satisfiable`` in every sympy module that re-exports it."""
    import sympy
    import sympy.logic
    import sympy.logic.inference as inf

    orig = inf.satisfiable
    if is_wrapped(orig):
        return

    def snap(expr, *args, **kwargs):
        return expr

    wrapped = wrap_call(cap, "sympy", "satisfiable", "sympy", orig, snap)
    for mod in (inf, sympy.logic, sympy):
        if getattr(mod, "satisfiable", None) is orig:
            mod.satisfiable = wrapped


_SYMPY_OPS = {"And", "Or", "Not", "Implies", "Equivalent", "Xor", "ITE", "Nand", "Nor", "Xnor"}


def formula(expr, cap: Capture) -> dict:
    """``satisfiable``'s argument as a tree of Boolean connectives over named variables."""
    nodes = [0]

    def tree(e, depth=1):
        nodes[0] += 1
        if nodes[0] > MAX_SYMPY_NODES:
            raise ValueError(f"formula too large (more than {MAX_SYMPY_NODES} nodes)")
        if depth > MAX_SYMPY_DEPTH:  # the record is JSON, read with a bounded nesting depth
            raise ValueError(f"formula too deep (more than {MAX_SYMPY_DEPTH} levels)")
        if e is True or type(e).__name__ == "BooleanTrue":
            return True
        if e is False or type(e).__name__ == "BooleanFalse":
            return False
        if getattr(e, "is_Symbol", False):
            return {"var": str(e.name)}
        op = type(e).__name__
        if op in _SYMPY_OPS:
            return {"op": op, "args": [tree(a, depth + 1) for a in e.args]}
        return {"unsupported": op, "text": str(e)[:200]}

    return {"kind": "sympy", "tree": tree(expr)}


FORMULAS = {"sympy": formula}
