"""The formal step language of Spring App. E, parsed safely (no ``eval``) into a small AST.

One grammar serves the three families; each family's :class:`Language` says which parts it
allows (Spring App. E.1 for Zebra, App. E.2 for AR-LSAT, and the Knights schema defined here in
the same spirit)::

    formula := sum [CMP sum]                  CMP: == != < > <= >=
    sum     := unary (("+" | "-") unary)*
    unary   := "-" unary | atom
    atom    := INT | IDENT | IDENT "(" formula ("," formula)* ")" | "(" formula ")"

Function names: ``Not And Or Xor Implies`` (Boolean), ``AtLeast AtMost Exactly`` (counting, first
argument an integer literal), ``Assign(entity, group)``, ``Knight(X)``, ``Knave(X)``,
``Sat(Option_X)``, ``Unsat(Option_X)``; ``True`` and ``False`` are constants. Types are checked
when a formula is compiled against a family's vocabulary (:mod:`.theory`), because whether an
identifier is a number (a Zebra value's house) or appears only inside ``Assign``/``Knight`` is
family knowledge.

Every rejection is a :class:`FormulaError` whose message says what was wrong and where. Parsing is
linear in the input and bounded: at most :data:`MAX_FORMULA_CHARS` characters, :data:`MAX_NODES`
nodes and nesting depth :data:`MAX_DEPTH` (checked while descending, so a hostile
``Not(Not(Not(...)))`` never reaches Python's recursion limit), integers at most :data:`MAX_INT`.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Union

__all__ = [
    "MAX_FORMULA_CHARS",
    "MAX_NODES",
    "MAX_DEPTH",
    "MAX_INT",
    "FormulaError",
    "Node",
    "Language",
    "parse_formula",
    "to_text",
    "BOOL_FUNCS",
    "COUNT_FUNCS",
]

MAX_FORMULA_CHARS = 2000
MAX_NODES = 400
MAX_DEPTH = 24
MAX_INT = 1000

BOOL_FUNCS = ("Not", "And", "Or", "Xor", "Implies")
COUNT_FUNCS = ("AtLeast", "AtMost", "Exactly")
PRED_FUNCS = ("Assign", "Knight", "Knave")
META_FUNCS = ("Sat", "Unsat")
ALL_FUNCS = BOOL_FUNCS + COUNT_FUNCS + PRED_FUNCS + META_FUNCS
CMP_OPS = ("==", "!=", "<", ">", "<=", ">=")


class FormulaError(ValueError):
    """A formula that is not in the language; the message is the reason shown to the agent."""


@dataclass(frozen=True)
class Node:
    """An AST node. ``op`` is one of: ``int`` (value), ``name`` (value), ``bool`` (value),
    ``+``, ``-``, ``neg``, a comparison (``==`` ...), or a function name (``And`` ...).
    ``args`` holds child nodes; ``value`` holds the literal or identifier."""

    op: str
    args: tuple["Node", ...] = ()
    value: Union[int, str, bool, None] = None


@dataclass(frozen=True)
class Language:
    """What one family's formulas may use (App. E lists the operators per family)."""

    name: str
    functions: frozenset  # allowed function names
    comparisons: frozenset  # allowed comparison operators
    arithmetic: bool  # ``+``/``-`` on numbers (Zebra ``A + 1 == B``, ordering games)
    bare_names: bool  # identifiers outside a predicate are numbers (house, position)

    def describe(self) -> str:
        parts = sorted(self.comparisons) + (["+ k", "- k"] if self.arithmetic else [])
        parts += sorted(self.functions)
        return ", ".join(parts)


_TOKEN = re.compile(
    r"\s*(?:(?P<int>\d+)|(?P<name>[A-Za-z_][A-Za-z0-9_]*)|(?P<op>==|!=|<=|>=|[<>+\-(),])|(?P<bad>\S))"
)


def _tokens(text: str) -> list[tuple[str, str, int]]:
    out = []
    pos = 0
    n = len(text)
    while pos < n:
        m = _TOKEN.match(text, pos)
        if m is None:  # only trailing whitespace is left
            break
        kind = m.lastgroup
        tok = m.group(kind)
        if kind == "bad":
            hint = ""
            if tok == "=":
                hint = " (use == for equality)"
            elif tok in "&|~!":
                hint = " (use And(...), Or(...), Not(...))"
            elif tok == "*":
                hint = " (only + k and - k are allowed: no multiplication)"
            raise FormulaError(f"unexpected character {tok!r} at position {m.start(kind)}{hint}")
        out.append((kind, tok, m.start(kind)))
        pos = m.end()
    return out


class _Parser:
    def __init__(self, text: str):
        self.text = text
        self.toks = _tokens(text)
        self.i = 0
        self.nodes = 0

    def peek(self) -> tuple[str, str, int] | None:
        return self.toks[self.i] if self.i < len(self.toks) else None

    def take(self, expect: str | None = None) -> tuple[str, str, int]:
        t = self.peek()
        if t is None:
            raise FormulaError(
                "unexpected end of formula" + (f" (expected {expect!r})" if expect else "")
            )
        if expect is not None and t[1] != expect:
            raise FormulaError(f"expected {expect!r} at position {t[2]}, found {t[1]!r}")
        self.i += 1
        return t

    def node(self, *a, **kw) -> Node:
        self.nodes += 1
        if self.nodes > MAX_NODES:
            raise FormulaError(f"formula has more than {MAX_NODES} parts")
        return Node(*a, **kw)

    def formula(self, depth: int) -> Node:
        if depth > MAX_DEPTH:
            raise FormulaError(f"formula nests deeper than {MAX_DEPTH} levels")
        left = self.sum(depth)
        t = self.peek()
        if t is not None and t[1] in CMP_OPS:
            self.take()
            right = self.sum(depth)
            nxt = self.peek()
            if nxt is not None and nxt[1] in CMP_OPS:
                raise FormulaError(
                    f"chained comparison at position {nxt[2]}: write And(a < b, b < c) instead"
                )
            return self.node(t[1], (left, right))
        return left

    def sum(self, depth: int) -> Node:
        left = self.unary(depth)
        while True:
            t = self.peek()
            if t is None or t[1] not in ("+", "-"):
                return left
            self.take()
            left = self.node(t[1], (left, self.unary(depth)))

    def unary(self, depth: int) -> Node:
        t = self.peek()
        if t is not None and t[1] == "-":
            self.take()
            if depth + 1 > MAX_DEPTH:
                raise FormulaError(f"formula nests deeper than {MAX_DEPTH} levels")
            return self.node("neg", (self.unary(depth + 1),))
        return self.atom(depth)

    def atom(self, depth: int) -> Node:
        kind, tok, pos = self.take()
        if kind == "int":
            v = int(tok) if len(tok) <= 6 else MAX_INT + 1
            if v > MAX_INT:
                raise FormulaError(f"integer {tok[:12]} at position {pos} is larger than {MAX_INT}")
            return self.node("int", value=v)
        if tok == "(":
            inner = self.formula(depth + 1)
            self.take(")")
            return inner
        if kind == "name":
            nxt = self.peek()
            if tok in ("True", "False") and not (nxt is not None and nxt[1] == "("):
                return self.node("bool", value=(tok == "True"))
            if nxt is not None and nxt[1] == "(":
                if tok not in ALL_FUNCS:
                    raise FormulaError(f"unknown function {tok}(...) at position {pos}")
                self.take("(")
                args = [self.formula(depth + 1)]
                while True:
                    t = self.take()
                    if t[1] == ")":
                        break
                    if t[1] != ",":
                        raise FormulaError(f"expected ',' or ')' at position {t[2]}, found {t[1]!r}")
                    args.append(self.formula(depth + 1))
                return self.node(tok, tuple(args))
            if tok in ALL_FUNCS:
                raise FormulaError(f"{tok} at position {pos} must be called: {tok}(...)")
            return self.node("name", value=tok)
        raise FormulaError(f"unexpected {tok!r} at position {pos}")


def parse_formula(text: str, language: Language | None = None) -> Node:
    """Parse one formula (without its ``S<k>:`` prefix or final period) into an AST.

    Structural checks that need no vocabulary happen here (arity, counting bounds, the family's
    allowed operators); identifiers and types are checked by :meth:`Theory.compile`.
    """
    if not isinstance(text, str):
        raise FormulaError(f"a formula must be a string, got {type(text).__name__}")
    if len(text) > MAX_FORMULA_CHARS:
        raise FormulaError(f"formula is {len(text)} characters; the limit is {MAX_FORMULA_CHARS}")
    if not text.strip():
        raise FormulaError("empty formula")
    p = _Parser(text)
    tree = p.formula(0)
    t = p.peek()
    if t is not None:
        raise FormulaError(f"unexpected {t[1]!r} at position {t[2]} after a complete formula")
    _check_shape(tree, language, top=True)
    return tree


_ARITY = {"Not": (1, 1), "Xor": (2, 2), "Implies": (2, 2), "And": (1, None), "Or": (1, None),
          "Assign": (2, 2), "Knight": (1, 1), "Knave": (1, 1), "Sat": (1, 1), "Unsat": (1, 1)}


def _check_shape(node: Node, lang: Language | None, top: bool) -> None:
    """Arity, literal arguments and the family's operator set; iterative (no recursion)."""
    stack = [(node, top)]
    while stack:
        n, is_top = stack.pop()
        op = n.op
        if op in ALL_FUNCS:
            if lang is not None and op not in lang.functions:
                raise FormulaError(
                    f"{op}(...) is not part of the {lang.name} language (allowed: {lang.describe()})"
                )
            lo, hi = _ARITY.get(op, (2, None))
            if len(n.args) < lo or (hi is not None and len(n.args) > hi):
                want = f"{lo}" if lo == hi else f"at least {lo}"
                raise FormulaError(f"{op} takes {want} argument(s), got {len(n.args)}")
            if op in META_FUNCS:
                if not is_top:
                    raise FormulaError(f"{op}(...) must be a whole step, not part of a formula")
                a = n.args[0]
                if a.op != "name" or not re.fullmatch(r"Option_[A-Z]", str(a.value)):
                    raise FormulaError(f"{op} takes one option name such as Option_A")
                continue
            if op in ("Assign", "Knight", "Knave"):
                if any(a.op != "name" for a in n.args):
                    raise FormulaError(f"the arguments of {op}(...) must be names, e.g. {op}(" +
                                       ("A, X" if op == "Assign" else "A") + ")")
                continue
            if op in COUNT_FUNCS:
                k = n.args[0]
                if k.op != "int":
                    raise FormulaError(f"the first argument of {op} must be an integer literal k")
            for a in (n.args[1:] if op in COUNT_FUNCS else n.args):
                stack.append((a, False))
        elif op in CMP_OPS:
            if lang is not None and op not in lang.comparisons:
                raise FormulaError(
                    f"the comparison {op} is not part of the {lang.name} language (allowed: {lang.describe()})"
                )
            stack.extend((a, False) for a in n.args)
        elif op in ("+", "-", "neg"):
            if lang is not None and not lang.arithmetic:
                raise FormulaError(f"arithmetic ({'-' if op == 'neg' else op}) is not part of the {lang.name} language")
            stack.extend((a, False) for a in n.args)
        elif op == "name":
            if lang is not None and not lang.bare_names:
                raise FormulaError(
                    f"bare name {n.value!r}: in the {lang.name} language names appear inside "
                    + ("Assign(entity, group)" if "Assign" in lang.functions else "Knight(X) / Knave(X)")
                )


def to_text(node: Node) -> str:
    """Canonical text of an AST (parsing it again gives the same AST)."""
    out: list[str] = []
    # iterative printer: items are nodes or literal strings
    stack: list = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            out.append(item)
            continue
        n = item
        op = n.op
        if op == "int":
            out.append(str(n.value))
        elif op == "name":
            out.append(str(n.value))
        elif op == "bool":
            out.append("True" if n.value else "False")
        elif op == "neg":
            a = n.args[0]
            stack.append(a if a.op in ("int", "name", "bool") or a.op in ALL_FUNCS else _paren(a))
            out.append("-")
        elif op in ("+", "-"):
            a, b = n.args
            right = b if b.op not in ("+", "-") and b.op not in CMP_OPS else _paren(b)
            left = a if a.op not in CMP_OPS else _paren(a)
            stack.extend([right, f" {op} ", left])
        elif op in CMP_OPS:
            a, b = n.args
            left = _paren(a) if a.op in CMP_OPS else a
            right = _paren(b) if b.op in CMP_OPS else b
            stack.extend([right, f" {op} ", left])
        else:  # function call
            parts: list = [")"]
            for i, a in enumerate(reversed(n.args)):
                parts.append(a)
                if i < len(n.args) - 1:
                    parts.append(", ")
            parts.append(f"{op}(")
            stack.extend(parts)
    return "".join(out)


def _paren(n: Node) -> Node:
    # the printer treats op "" as a call with an empty name, which prints as "(child)"
    return Node("", (n,))
