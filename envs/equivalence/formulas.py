"""Captured formulas as Z3 expressions: the five solver families' formula kinds, bounded.

The sandbox captures the formula a program handed its solver (``solvergym.sandbox``'s capture):

- ``smt2`` (z3 ``Solver``/``Optimize`` assertions, pysmt assertions): parsed by Z3;
- ``cnf`` (python-sat clauses, native at-most-k constraints, assumptions as units), variables
  named by the program's ``IDPool`` when it had one;
- ``cpsat`` (the OR-Tools CP-SAT model): ``bool_or``, ``bool_and``, ``at_most_one``,
  ``exactly_one``, ``bool_xor``, ``linear`` and ``all_diff`` constraints with enforcement
  literals; a variable with domain within {0, 1} is a Boolean;
- ``sympy`` (the argument of ``satisfiable``): And, Or, Not, Implies, Equivalent, Xor, ITE, Nand,
  Nor, Xnor over symbols.

A captured formula is the program's, hostile like everything it writes, so reading it is
bounded: a formula over :data:`MAX_NODES` nodes or :data:`MAX_DEPTH` levels (estimated by
:func:`formula_size` before anything is built: parentheses of the SMT-LIB2 text outside quoted
symbols, literals of a CNF or CP-SAT model, nodes of a sympy tree) raises :class:`FormulaTooLarge`,
and every Python walk checks a shared :class:`Deadline` (without the bounds, a formula of a
million nested ``Not`` keeps the walk alone busy for seconds). Z3 contexts are one per thread
(they are not thread-safe).
"""
from __future__ import annotations

import re
import threading
import time
from typing import Any

import numpy as np

__all__ = ["formula_to_z3", "formula_size", "z3_context", "FormulaError", "FormulaTooLarge", "Deadline",
           "OutOfTime", "MAX_NODES", "MAX_DEPTH", "MAX_FORMULA_CHARS"]

MAX_FORMULA_CHARS = 8 << 20
#: the largest formula checked: the SAT-Bench and SATURN formulas an honest program hands its
#: solver have at most a few thousand nodes; Z3's Python walk costs ~20-30 us a node
MAX_NODES = 200_000
MAX_DEPTH = 5_000


class FormulaError(ValueError):
    """A captured formula that cannot be read as a Boolean formula (the reason is the message)."""


class FormulaTooLarge(FormulaError):
    """A captured formula over :data:`MAX_NODES` or :data:`MAX_DEPTH`."""


class OutOfTime(Exception):
    """The check's time budget ran out."""


class Deadline:
    """The time budget of one check, shared by parsing, the Python walks and Z3."""

    def __init__(self, timeout_ms: float | None):
        self.end = None if timeout_ms is None else time.perf_counter() + timeout_ms / 1000

    def check(self) -> None:
        if self.end is not None and time.perf_counter() > self.end:
            raise OutOfTime()

    def left_ms(self) -> int:
        if self.end is None:
            return 0  # Z3: no timeout
        left = int(1000 * (self.end - time.perf_counter()))
        if left <= 0:
            raise OutOfTime()
        return left


_local = threading.local()


def z3_context():
    """One Z3 context per thread: Z3 contexts are not thread-safe, and making one costs ~10 ms."""
    import z3  # lazy: z3 (~50 ms to import) loads only when a formula is checked

    ctx = getattr(_local, "ctx", None)
    if ctx is None:
        ctx = _local.ctx = z3.Context()
    return ctx


def _constants(expr, deadline: Deadline | None = None) -> dict[str, Any]:
    """The uninterpreted constants of ``expr`` by name (raises for functions of arity > 0)."""
    import z3  # lazy: z3 (~50 ms to import) loads only when a formula is checked

    seen: set[int] = set()
    out: dict[str, Any] = {}
    stack = [expr]
    while stack:
        e = stack.pop()
        eid = e.get_id()
        if eid in seen:
            continue
        seen.add(eid)
        if len(seen) & 1023 == 0:
            if len(seen) > MAX_NODES:
                raise FormulaTooLarge(f"the formula has more than {MAX_NODES} distinct nodes")
            if deadline is not None:
                deadline.check()
        if z3.is_quantifier(e):
            stack.append(e.body())
            continue
        if not z3.is_app(e):
            continue  # bound variables
        d = e.decl()
        if d.kind() == z3.Z3_OP_UNINTERPRETED:
            if d.arity() > 0:
                raise FormulaError(f"uses the uninterpreted function {d.name()}; only variables can be aligned")
            name = d.name()
            if name in out and not out[name].eq(e):
                raise FormulaError(f"the name {name!r} is declared with two sorts")
            out[name] = e
            continue
        stack.extend(e.children())
    return out


def formula_to_z3(formula: dict, ctx=None, *, deadline: Deadline | None = None):
    """A captured formula -> ``(z3 BoolRef, {program name: z3 constant})``; :class:`FormulaError`
    when it cannot be read (:class:`FormulaTooLarge` past the caps)."""
    import z3  # lazy: z3 (~50 ms to import) loads only when a formula is checked

    ctx = ctx or z3_context()
    if not isinstance(formula, dict):
        raise FormulaError("no formula")
    kind = formula.get("kind")
    nodes, depth = formula_size(formula)
    if nodes > MAX_NODES or depth > MAX_DEPTH:
        raise FormulaTooLarge(f"the captured {kind} formula has about {nodes} nodes and {depth} levels; the "
                              f"equivalence check takes at most {MAX_NODES} nodes and {MAX_DEPTH} levels")
    try:
        if kind == "smt2":
            text = formula.get("text") or ""
            if len(text) > MAX_FORMULA_CHARS:
                raise FormulaError(f"the formula is {len(text)} characters; the limit is {MAX_FORMULA_CHARS}")
            try:
                asserts = z3.parse_smt2_string(text, ctx=ctx)
            except z3.Z3Exception as e:
                raise FormulaError(f"Z3 cannot parse the captured SMT-LIB2: {_z3_message(e)}") from None
            expr = z3.And(list(asserts), ctx) if len(asserts) else z3.BoolVal(True, ctx)
        elif kind == "cnf":
            expr = _cnf_to_z3(formula, ctx)
        elif kind == "cpsat":
            expr = _cpsat_to_z3(formula, ctx)
        elif kind == "sympy":
            expr = _sympy_to_z3(formula.get("tree"), ctx, [0])
        elif kind == "lp":
            raise FormulaError("a linear-solver (LP/MIP) model is not a Boolean formula; equivalence is "
                               "checked for z3, pysmt, python-sat, CP-SAT and sympy formulas")
        else:
            raise FormulaError(f"unknown formula kind {kind!r}")
    except FormulaError:
        raise
    except (z3.Z3Exception, KeyError, TypeError, ValueError, IndexError, RecursionError, OverflowError,
            AttributeError) as e:
        raise FormulaError(f"the captured {kind} formula is malformed: {type(e).__name__}: {str(e)[:200]}") from None
    if not z3.is_bool(expr):
        raise FormulaError("the captured formula is not Boolean")
    if deadline is not None:
        deadline.check()
    return expr, _constants(expr, deadline)


_QUOTED = re.compile(r'\|[^|]*\||"(?:[^"]|"")*"')


def formula_size(formula: dict) -> tuple[int, int]:
    """``(nodes, depth)`` of a captured formula, estimated without building it (see the module
    docstring; the estimate errs on the large side)."""
    kind = formula.get("kind")
    if kind == "smt2":
        text = formula.get("text")
        if not isinstance(text, str):
            return 0, 0
        if len(text) > MAX_FORMULA_CHARS:
            return len(text), 0
        # parentheses inside |quoted symbols| and "strings" are not structure
        data = np.frombuffer(_QUOTED.sub("", text).encode("utf-8", "replace"), dtype=np.uint8)
        steps = (data == 40).astype(np.int32) - (data == 41).astype(np.int32)
        depth = int(np.cumsum(steps).max()) if len(steps) else 0
        return int((data == 40).sum()), max(depth, 0)
    if kind == "cnf":
        lits = _total_len(formula.get("clauses")) + sum(
            _total_len([a[0]]) if isinstance(a, (list, tuple)) and a else 1 for a in _items(formula.get("atmost")))
        return lits, 3
    if kind == "cpsat":
        nodes = len(_items(formula.get("variables")))
        for c in _items(formula.get("constraints")):
            if isinstance(c, dict):
                nodes += 1 + sum(len(v) for v in c.values() if isinstance(v, list))
                nodes += sum(len(e.get("vars", ())) for e in _items(c.get("exprs")) if isinstance(e, dict))
        return nodes, 4
    if kind == "sympy":
        nodes = depth = 0
        stack = [(formula.get("tree"), 1)]
        while stack and nodes <= MAX_NODES and depth <= MAX_DEPTH:
            node, d = stack.pop()
            nodes += 1
            depth = max(depth, d)
            if isinstance(node, dict):
                stack.extend((a, d + 1) for a in _items(node.get("args")))
        return nodes, depth
    return 0, 0


def _items(x) -> list:
    return x if isinstance(x, list) else []


def _total_len(rows) -> int:
    return sum(len(r) + 1 if isinstance(r, (list, tuple)) else 1 for r in _items(rows))


def _z3_message(e) -> str:
    msg = getattr(e, "value", None) or str(e)
    if isinstance(msg, bytes):
        msg = msg.decode("utf-8", "replace")
    return str(msg).strip()[:300]


def _cnf_to_z3(formula: dict, ctx):
    import z3  # lazy: z3 (~50 ms to import) loads only when a formula is checked

    names = {str(k): str(v) for k, v in (formula.get("names") or {}).items()}
    cache: dict[int, Any] = {}

    def var(v: int):
        if v not in cache:
            cache[v] = z3.Bool(names.get(str(v), str(v)), ctx)
        return cache[v]

    def lit(x: int):
        x = int(x)
        if x == 0:
            raise FormulaError("a clause holds the literal 0")
        return var(abs(x)) if x > 0 else z3.Not(var(abs(x)))

    parts = [z3.Or([lit(x) for x in c], ctx) if c else z3.BoolVal(False, ctx) for c in formula.get("clauses", [])]
    for lits, k in formula.get("atmost", []):
        parts.append(z3.AtMost(*[lit(x) for x in lits], int(k)) if lits else z3.BoolVal(int(k) >= 0, ctx))
    return z3.And(parts, ctx) if parts else z3.BoolVal(True, ctx)


def _cpsat_to_z3(formula: dict, ctx):
    import z3  # lazy: z3 (~50 ms to import) loads only when a formula is checked

    variables = formula.get("variables", [])
    made: dict[int, Any] = {}
    domains: list = []

    def var(i: int):
        if i not in made:
            spec = variables[i]
            dom = [int(d) for d in spec.get("domain", [])]
            name = spec.get("name") or f"_cpsat_var{i}"
            if dom and min(dom) >= 0 and max(dom) <= 1:
                b = z3.Bool(name, ctx)
                made[i] = ("bool", b)
                if dom[0] == dom[-1]:  # a fixed Boolean
                    domains.append(b if dom[0] == 1 else z3.Not(b))
            else:
                x = z3.Int(name, ctx)
                made[i] = ("int", x)
                if dom:
                    pairs = list(zip(dom[0::2], dom[1::2]))
                    domains.append(z3.Or([z3.And(lo <= x, x <= hi) for lo, hi in pairs], ctx))
        return made[i]

    def lit(ref: int):
        ref = int(ref)
        kind, v = var(ref if ref >= 0 else -ref - 1)
        if kind != "bool":
            raise FormulaError(f"CP-SAT literal {ref} refers to a non-Boolean variable")
        return v if ref >= 0 else z3.Not(v)

    def value(i: int):
        kind, v = var(i)
        return z3.If(v, z3.IntVal(1, ctx), z3.IntVal(0, ctx)) if kind == "bool" else v

    def linear(vars_, coeffs, offset=0):
        terms = [int(c) * value(int(v)) for v, c in zip(vars_, coeffs)]
        return z3.Sum(terms) + int(offset) if terms else z3.IntVal(int(offset), ctx)

    parts = []
    for c in formula.get("constraints", []):
        t = c.get("type")
        lits = [lit(x) for x in c.get("literals", [])]
        if t == "bool_or":
            body = z3.Or(lits, ctx)
        elif t == "bool_and":
            body = z3.And(lits, ctx)
        elif t == "at_most_one":
            body = z3.AtMost(*lits, 1) if lits else z3.BoolVal(True, ctx)
        elif t == "exactly_one":
            body = z3.PbEq([(x, 1) for x in lits], 1) if lits else z3.BoolVal(False, ctx)
        elif t == "bool_xor":
            body = z3.BoolVal(False, ctx)
            for x in lits:
                body = z3.Xor(body, x)
        elif t == "linear":
            s = linear(c.get("vars", []), c.get("coeffs", []))
            dom = [int(d) for d in c.get("domain", [])]
            body = z3.Or([z3.And(lo <= s, s <= hi) for lo, hi in zip(dom[0::2], dom[1::2])], ctx)
        elif t == "all_diff":
            exprs = [linear(e.get("vars", []), e.get("coeffs", []), e.get("offset", 0)) for e in c.get("exprs", [])]
            body = z3.Distinct(*exprs) if len(exprs) > 1 else z3.BoolVal(True, ctx)
        else:
            raise FormulaError(f"CP-SAT constraint {c.get('text') or t!r} is not supported by the equivalence check")
        enf = [lit(x) for x in c.get("enforcement", [])]
        parts.append(z3.Implies(z3.And(enf, ctx), body) if enf else body)
    parts += domains
    return z3.And(parts, ctx) if parts else z3.BoolVal(True, ctx)


_SYMPY_NARY = {"And", "Or", "Xor", "Equivalent", "Nand", "Nor", "Xnor"}


def _sympy_to_z3(node, ctx, count):
    import z3  # lazy: z3 (~50 ms to import) loads only when a formula is checked

    count[0] += 1
    if count[0] > MAX_NODES:
        raise FormulaTooLarge("the sympy formula is too large")
    if node is True or node is False:
        return z3.BoolVal(node, ctx)
    if not isinstance(node, dict):
        raise FormulaError(f"bad sympy node {node!r:.80}")
    if "var" in node:
        return z3.Bool(str(node["var"]), ctx)
    if "unsupported" in node:
        raise FormulaError(f"sympy {node['unsupported']} ({node.get('text', '')[:80]}) is not a Boolean connective")
    op = node.get("op")
    args = [_sympy_to_z3(a, ctx, count) for a in node.get("args", [])]
    if op == "Not" and len(args) == 1:
        return z3.Not(args[0])
    if op == "Implies" and len(args) == 2:
        return z3.Implies(args[0], args[1])
    if op == "ITE" and len(args) == 3:
        return z3.If(args[0], args[1], args[2])
    if op in _SYMPY_NARY:
        if op == "And":
            return z3.And(args, ctx) if args else z3.BoolVal(True, ctx)
        if op == "Or":
            return z3.Or(args, ctx) if args else z3.BoolVal(False, ctx)
        if op == "Nand":
            return z3.Not(z3.And(args, ctx))
        if op == "Nor":
            return z3.Not(z3.Or(args, ctx))
        if op == "Equivalent":
            return z3.And([a == args[0] for a in args[1:]], ctx) if len(args) > 1 else z3.BoolVal(True, ctx)
        parity = z3.BoolVal(False, ctx)
        for a in args:
            parity = z3.Xor(parity, a)
        return parity if op == "Xor" else z3.Not(parity)
    raise FormulaError(f"sympy operator {op!r} with {len(args)} arguments is not supported")
