"""The logic-equivalence reward of SAT-RL §3.4: is the formula a program handed its solver the
ground truth?

SAT-RL: "Suppose the ground-truth and proposed CNF formulas have aligned variables ... We verify
the equivalence F_truth <-> F_pred using Z3 to check whether (F_pred & !F_truth) | (!F_pred &
F_truth) is unsatisfiable." This module does exactly that for a formula captured by the sandbox
(:mod:`solvergym.envs.sandbox.instrument`) from any of the five solvers:

- ``smt2`` (z3 ``Solver``/``Optimize`` assertions, pysmt assertions): parsed by Z3;
- ``cnf`` (python-sat clauses, native at-most-k constraints, assumptions as units), variables
  named by the program's ``IDPool`` when it had one;
- ``cpsat`` (the OR-Tools CP-SAT model): ``bool_or``, ``bool_and``, ``at_most_one``,
  ``exactly_one``, ``bool_xor``, ``linear`` and ``all_diff`` constraints with enforcement
  literals; a variable with domain within {0, 1} is a Boolean;
- ``sympy`` (the argument of ``satisfiable``): And, Or, Not, Implies, Equivalent, Xor, ITE, Nand,
  Nor, Xnor over symbols.

**Alignment** (how a program's variable names meet the instance's), in this order:

1. the instance's own name (``x(2,1,1)`` for SAT-Bench, ``A``/``B``/``A1`` for SATURN);
2. the same indices written differently: ``x_2_1_1``, ``x(2, 1, 1)``, ``x[2][1][1]``,
   ``X_2_1_1``, ``x2_1_1``, a tuple ``('x', 2, 1, 1)``: an ``x`` followed by exactly as many
   integers as the instance has dimensions, separated by ``_ , ( ) [ ]``, quotes or spaces;
3. the mapping's sentence for the variable (``Clara runs an experiment on dark matter in the
   field``; case and spacing ignored);
4. a DIMACS index: a name that is a positive integer (python-sat without names), or ``x<n>`` /
   ``v<n>`` / ``x_<n>`` for SATURN's instances (1-based, the order of the answer string).

A name that aligns with nothing makes the check fail with that name in the reason (SAT-RL's
F_pred has "aligned variables"; an extra variable would be existentially quantified in the
program's intent, and the paper's check does not quantify). ``auxiliary="exists"`` is the
option that does: unaligned variables are then read as ``exists aux. F_pred``. Two program
variables aligning with one instance variable is a failure too (merging them could make a wrong
program right). An integer variable aligned with a Boolean one reads 1 as true and 0 as false.

Every failure is a verdict with a reason, never an exception. The whole check is bounded: a
formula over :data:`MAX_NODES` nodes or :data:`MAX_DEPTH` levels (estimated before anything is
built: parentheses of the SMT-LIB2 text outside quoted symbols, literals of a CNF or CP-SAT
model, nodes of a sympy tree) is ``too_large``; parsing, the walk that collects its variables
and the Z3 call all share ``timeout_ms`` (past it: ``timeout``). A captured formula is the
program's, hostile like everything it writes: a million nested ``Not`` took 20 s in the Python
walk alone before the bound.
"""
from __future__ import annotations

import re
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from .cnf import var_name

__all__ = [
    "Truth",
    "EquivalenceVerdict",
    "check_equivalence",
    "formula_to_z3",
    "FormulaError",
    "FormulaTooLarge",
    "formula_size",
    "MAX_NODES",
    "MAX_DEPTH",
    "decision_truth",
    "saturn_truth",
]

DEFAULT_TIMEOUT_MS = 5000
MAX_FORMULA_CHARS = 8 << 20
#: the largest formula checked: the SAT-Bench and SATURN formulas an honest program hands its
#: solver have at most a few thousand nodes; Z3's Python walk costs ~20-30 us a node
MAX_NODES = 200_000
MAX_DEPTH = 5_000


class FormulaError(ValueError):
    """A captured formula that cannot be read as a Boolean formula (the reason is the message)."""


class FormulaTooLarge(FormulaError):
    """A captured formula over :data:`MAX_NODES` or :data:`MAX_DEPTH`."""


class _OutOfTime(Exception):
    pass


class _Deadline:
    """The time budget of one check, shared by parsing, the Python walks and Z3."""

    def __init__(self, timeout_ms: float | None):
        self.end = None if timeout_ms is None else time.perf_counter() + timeout_ms / 1000

    def check(self) -> None:
        if self.end is not None and time.perf_counter() > self.end:
            raise _OutOfTime()

    def left_ms(self) -> int:
        if self.end is None:
            return 0  # Z3: no timeout
        left = int(1000 * (self.end - time.perf_counter()))
        if left <= 0:
            raise _OutOfTime()
        return left


@dataclass
class Truth:
    """A ground-truth CNF over DIMACS variables ``1..len(names)`` and how program names align.

    ``align(name)`` returns the canonical name (an element of ``names``) or ``None``.
    """

    clauses: list[list[int]]
    names: list[str]
    align: Callable[[str], str | None]


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

    @property
    def equivalent(self) -> bool:
        return self.status == "equivalent"

    def to_dict(self) -> dict[str, Any]:
        return {"equivalent": self.equivalent, "status": self.status, "reason": self.reason,
                "aligned": dict(self.aligned), "counterexample": self.counterexample, "solver": self.solver}


# ----------------------------------------------------------------------------- alignment
_SEPARATORS = set("_,()[] '\"\t")
_INT = re.compile(r"\d+")
_SPACES = re.compile(r"\s+")


def _normal_sentence(text: str) -> str:
    return _SPACES.sub(" ", text.strip().lower()).rstrip(".")


def decision_truth(instance) -> Truth:
    """The truth of a :class:`~solvergym.envs.sat.decision.DecisionInstance` (SAT-Bench)."""
    names = list(instance.variables)
    dims = list(instance.dims)
    canonical = set(names)
    by_sentence = {_normal_sentence(v): k for k, v in instance.mapping.items()}

    def align(name: str) -> str | None:
        name = str(name).strip()
        if name in canonical:
            return name
        low = name.lower()
        stem = low.lstrip("('\"[ ")
        if stem.startswith("x"):
            rest = stem[1:]
            nums = _INT.findall(rest)
            if len(nums) == len(dims) and set(_INT.sub("", rest)) <= _SEPARATORS:
                idx = [int(n) for n in nums]
                if all(0 <= i < d for i, d in zip(idx, dims)):
                    return "x(" + ",".join(map(str, idx)) + ")"
        hit = by_sentence.get(_normal_sentence(name))
        if hit is not None:
            return hit
        if name.isdigit() and 1 <= int(name) <= len(names):
            return names[int(name) - 1]
        return None

    return Truth([list(c) for c in instance.clauses], names, align)


_SATURN_INDEX = re.compile(r"^(?:x|v)_?(\d+)$", re.IGNORECASE)


def saturn_truth(instance) -> Truth:
    """The truth of a SATURN :class:`~solvergym.envs.sat.generator.SATInstance`: letters
    ``A``..``Z``, ``A1``.. (SATURN's names), or 1-based indices ``x3``/``v3``/``x_3``/``3``."""
    names = [var_name(i) for i in range(instance.k)]
    canonical = set(names)

    def align(name: str) -> str | None:
        name = str(name).strip()
        if name in canonical:
            return name
        m = _SATURN_INDEX.match(name)
        if m is not None or name.isdigit():
            i = int(m.group(1) if m is not None else name)
            return names[i - 1] if 1 <= i <= len(names) else None
        return None

    return Truth([list(c) for c in instance.clauses], names, align)


# ----------------------------------------------------------------------------- z3 helpers
_local = threading.local()


def _context():
    """One Z3 context per thread: Z3 contexts are not thread-safe, and making one costs ~10 ms."""
    import z3  # lazy: z3 (~50 ms to import) loads only when a formula is checked

    ctx = getattr(_local, "ctx", None)
    if ctx is None:
        ctx = _local.ctx = z3.Context()
    return ctx


def _constants(expr, deadline: _Deadline | None = None) -> dict[str, Any]:
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


def formula_to_z3(formula: dict, ctx=None, *, deadline: _Deadline | None = None):
    """A captured formula -> ``(z3 BoolRef, {program name: z3 constant})``; :class:`FormulaError`
    when it cannot be read (:class:`FormulaTooLarge` past the caps)."""
    import z3  # lazy: z3 (~50 ms to import) loads only when a formula is checked

    ctx = ctx or _context()
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


# ----------------------------------------------------------------------------- the check
def check_equivalence(formula: dict | None, truth: Truth, *, timeout_ms: int = DEFAULT_TIMEOUT_MS,
                      auxiliary: str = "reject") -> EquivalenceVerdict:
    """SAT-RL §3.4: ``F_truth <-> F_pred`` iff ``(F_pred & !F_truth) | (!F_pred & F_truth)`` is
    unsatisfiable (Z3, at most ``timeout_ms``). See the module docstring for alignment."""
    if auxiliary not in ("reject", "exists"):
        raise ValueError(f"auxiliary must be 'reject' or 'exists', got {auxiliary!r}")
    solver_name = formula.get("solver") if isinstance(formula, dict) else None
    if not formula:
        return EquivalenceVerdict("no_formula", "no formula was captured: the program made no solve/check call")
    deadline = _Deadline(timeout_ms if timeout_ms and timeout_ms > 0 else None)
    try:
        return _check(formula, truth, deadline, auxiliary, solver_name)
    except _OutOfTime:
        return EquivalenceVerdict("timeout", f"the equivalence check ran out of its {timeout_ms} ms",
                                  solver=solver_name)
    except FormulaTooLarge as e:
        return EquivalenceVerdict("too_large", str(e), solver=solver_name)
    except FormulaError as e:
        return EquivalenceVerdict("unsupported", str(e), solver=solver_name)
    except Exception as e:  # the check must never take the env down
        return EquivalenceVerdict("error", f"equivalence check failed: {type(e).__name__}: {str(e)[:200]}",
                                  solver=solver_name)


def _check(formula, truth: Truth, deadline: _Deadline, auxiliary, solver_name) -> EquivalenceVerdict:
    import z3  # lazy: z3 (~50 ms to import) loads only when a formula is checked

    ctx = _context()
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
    clauses = [z3.Or([truth_vars[truth.names[abs(x) - 1]] if x > 0 else z3.Not(truth_vars[truth.names[abs(x) - 1]])
                      for x in c], ctx) for c in truth.clauses]
    ftruth = z3.And(clauses, ctx) if clauses else z3.BoolVal(True, ctx)
    s = z3.Solver(ctx=ctx)
    budget = deadline.left_ms()
    if budget:
        s.set("timeout", budget)
    s.add(z3.Or(z3.And(pred, z3.Not(ftruth)), z3.And(z3.Not(pred), ftruth)))
    r = s.check()
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
