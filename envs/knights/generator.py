"""Knights & Knaves puzzles with a unique solution (Spring App. A.3; K&K of Xie et al. 2025).

Each of ``n`` characters (2-8) says one statement; knights always tell the truth, knaves always
lie. A statement is a formula tree over ``Knight(X)`` / ``Knave(X)`` leaves with the connectives
``Not``, ``And``, ``Or`` (``width`` children at most), ``Implies`` and "if and only if"
(written ``a == b``), nested to ``depth`` levels at most (2-4; a single leaf has depth 1, so the Spring example "A
says: B is a knave" has depth 1 and "A and C are of the same type" depth 2). Puzzles whose
statements are all single leaves never have a unique solution (flipping every character keeps
every "X == Y" / "X != Y" true), so ``depth`` is at least 2; leaves still occur at the top.

Statements are drawn at random and rejected when degenerate: a constant sub-statement ("B is a
knight and B is a knave"), repeated operands, or a character saying only "I am a knight" (true of
knights and knaves alike). Uniqueness is decided by brute force over all 2^n worlds at once: each statement is evaluated on
every world as a 2^n-bit integer (bit w set = true in world w), so "character i's statement
holds iff i is a knight" for all i is a handful of bitwise operations, and the puzzle is kept
iff exactly one world survives. Pure and seeded (the env's ``numpy.random.Generator``).
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from ..instance import Instance
from ..logic_steps.rand import Draws

__all__ = ["NAMES", "KnightsInstance", "generate_knights", "statement_formula", "statement_text",
           "solutions_of", "premise_formula"]

NAMES = [
    "Alice", "Bob", "Carol", "David", "Emma", "Frank", "Grace", "Henry", "Iris", "Jack", "Kate", "Leo",
    "Mia", "Noah", "Olivia", "Paul", "Quinn", "Rose", "Sam", "Tina", "Uma", "Victor", "Wendy", "Xavier",
    "Yara", "Zoe", "Aaron", "Bella", "Caleb", "Diana", "Ethan", "Fiona", "George", "Hannah", "Isaac",
    "Julia", "Kevin", "Lily", "Mason", "Nora",
]

# A statement tree is a nested list (JSON-friendly): ["knight", j] | ["knave", j] | ["not", t] |
# ["and", t1, ..., tk] | ["or", t1, ..., tk] | ["implies", a, b] | ["iff", a, b].
_OPS = ("not", "and", "or", "implies", "iff")
_OP_CUM = [0.15, 0.45, 0.70, 0.85, 1.0]


@dataclass
class KnightsInstance(Instance):
    """``statements[i]`` is what ``names[i]`` says (a tree, see the module); ``solution[i]`` is
    True for a knight."""

    names: list[str]
    statements: list[list]
    solution: list[bool]
    depth: int
    width: int

    @property
    def n_people(self) -> int:
        return len(self.names)

    def sentences(self) -> list[str]:
        return [f'{who} says: "{_cap(statement_text(t, self.names))}."' for who, t in zip(self.names, self.statements)]

    def formulas(self) -> list[str]:
        """The premises: ``Knight(X) == <X's statement>`` for every character X."""
        return [premise_formula(who, t, self.names) for who, t in zip(self.names, self.statements)]

    def validate(self) -> None:
        n = len(self.names)
        if not 1 <= n <= 12 or len(set(self.names)) != n:
            raise ValueError("names must be 1..12 distinct names")
        for name in self.names:
            if not isinstance(name, str) or not name.isidentifier():
                raise ValueError(f"name {name!r} is not an identifier")
        if len(self.statements) != n or len(self.solution) != n:
            raise ValueError("one statement and one role per character")
        if not all(isinstance(b, bool) for b in self.solution):
            raise ValueError("solution entries must be booleans (True = knight)")
        for t in self.statements:
            _check_tree(t, n)
        worlds = solutions_of(self.statements, n)
        truth = sum(1 << i for i, b in enumerate(self.solution) if b)
        if truth not in worlds:
            raise ValueError("the solution does not satisfy the statements")


def _check_tree(t: Any, n: int, level: int = 0) -> None:
    if level > 12 or not isinstance(t, list) or not t:
        raise ValueError(f"bad statement tree {t!r}")
    op = t[0]
    if op in ("knight", "knave"):
        if len(t) != 2 or not isinstance(t[1], int) or not 0 <= t[1] < n:
            raise ValueError(f"bad leaf {t!r}")
        return
    if op not in _OPS:
        raise ValueError(f"unknown connective {op!r}")
    arity = {"not": (1, 1), "implies": (2, 2), "iff": (2, 2)}.get(op, (2, 8))
    if not arity[0] <= len(t) - 1 <= arity[1]:
        raise ValueError(f"{op} has {len(t) - 1} arguments")
    for c in t[1:]:
        _check_tree(c, n, level + 1)


def _cap(s: str) -> str:
    return s[:1].upper() + s[1:]


def statement_text(t: list, names: list[str]) -> str:
    """English for a statement tree (composite sub-statements in parentheses)."""
    op = t[0]
    if op == "knight":
        return f"{names[t[1]]} is a knight"
    if op == "knave":
        return f"{names[t[1]]} is a knave"

    def sub(c):
        s = statement_text(c, names)
        simple = c[0] in ("knight", "knave") or (c[0] == "not" and c[1][0] in ("knight", "knave"))
        return s if simple else f"({s})"

    if op == "not":
        c = t[1]
        if c[0] == "knight":
            return f"{names[c[1]]} is not a knight"
        if c[0] == "knave":
            return f"{names[c[1]]} is not a knave"
        return f"it is not the case that {sub(c)}"
    if op == "and":
        return " and ".join(sub(c) for c in t[1:])
    if op == "or":
        return " or ".join(sub(c) for c in t[1:])
    if op == "implies":
        return f"if {sub(t[1])} then {sub(t[2])}"
    return f"{sub(t[1])} if and only if {sub(t[2])}"


def statement_formula(t: list, names: list[str]) -> str:
    """The statement in the Knights formula language (``Knight(A)``, ``And(...)``, ``a == b``)."""
    op = t[0]
    if op == "knight":
        return f"Knight({names[t[1]]})"
    if op == "knave":
        return f"Knave({names[t[1]]})"
    if op == "iff":
        return f"({statement_formula(t[1], names)} == {statement_formula(t[2], names)})"
    fn = {"not": "Not", "and": "And", "or": "Or", "implies": "Implies"}[op]
    return f"{fn}(" + ", ".join(statement_formula(c, names) for c in t[1:]) + ")"


def premise_formula(who: str, t: list, names: list[str]) -> str:
    return f"Knight({who}) == {statement_formula(t, names)}"


@lru_cache(maxsize=16)
def _masks(n: int) -> tuple[int, list[int]]:
    worlds = 1 << n
    full = (1 << worlds) - 1
    person = [sum(1 << w for w in range(worlds) if (w >> j) & 1) for j in range(n)]
    return full, person


def _truth(t: list, full: int, person: list[int]) -> int:
    op = t[0]
    if op == "knight":
        return person[t[1]]
    if op == "knave":
        return full ^ person[t[1]]
    if op == "not":
        return full ^ _truth(t[1], full, person)
    if op == "and":
        x = full
        for c in t[1:]:
            x &= _truth(c, full, person)
        return x
    if op == "or":
        x = 0
        for c in t[1:]:
            x |= _truth(c, full, person)
        return x
    a, b = _truth(t[1], full, person), _truth(t[2], full, person)
    if op == "implies":
        return (full ^ a) | b
    return full ^ (a ^ b)  # iff


def _checked_truth(t: list, full: int, person: list[int]) -> int | None:
    """Truth mask of ``t``, or None when some connective in it is degenerate: a constant
    sub-statement ("B is a knight and B is a knave") or repeated operands ("C == C")."""
    op = t[0]
    if op in ("knight", "knave"):
        return _truth(t, full, person)
    kids = []
    for c in t[1:]:
        m = _checked_truth(c, full, person)
        if m is None:
            return None
        kids.append(m)
    if len(set(kids)) != len(kids) or (op in ("implies", "iff") and kids[0] == full ^ kids[1]):
        return None
    x = _truth(t, full, person)
    return None if x in (0, full) else x


def solutions_of(statements: list[list], n: int) -> list[int]:
    """Every world (bit i set = character i is a knight) consistent with the statements."""
    full, person = _masks(n)
    ok = full
    for i, t in enumerate(statements):
        ok &= full ^ (person[i] ^ _truth(t, full, person))
        if not ok:
            return []
    return [w for w in range(1 << n) if (ok >> w) & 1]


def _random_tree(d: Draws, n: int, depth: int, width: int, level: int = 1) -> list:
    # statements vary in size up to the bound: a leaf may appear at any level
    if level >= depth or d.random() < (0.2 if level == 1 else 0.4):
        return ["knight" if d.random() < 0.5 else "knave", d.below(n)]
    op = _OPS[d.weighted(_OP_CUM)]
    if op == "not":
        return ["not", _random_tree(d, n, depth, width, level + 1)]
    if op in ("implies", "iff"):
        return [op, _random_tree(d, n, depth, width, level + 1), _random_tree(d, n, depth, width, level + 1)]
    k = 2 if width <= 2 else d.between(2, width)
    return [op] + [_random_tree(d, n, depth, width, level + 1) for _ in range(k)]


def generate_knights(
    n_people: int,
    rng: np.random.Generator | int | None,
    *,
    depth: int = 2,
    width: int = 2,
    max_tries: int = 100_000,
) -> KnightsInstance:
    """A puzzle with ``n_people`` characters and exactly one consistent assignment."""
    n, depth, width = int(n_people), int(depth), int(width)
    if not 2 <= n <= 8:
        raise ValueError(f"n_people must be in 2..8, got {n}")
    if not 2 <= depth <= 4:
        # with single "X is a knight/knave" statements every constraint is X == Y or X != Y, and
        # flipping everyone keeps them all true: no depth-1 puzzle has a unique solution
        raise ValueError(f"depth must be in 2..4, got {depth}")
    if not 2 <= width <= 4:
        raise ValueError(f"width must be in 2..4, got {width}")
    d = Draws(rng)
    names = d.sample(NAMES, n)
    full, person = _masks(n)
    for _ in range(max_tries):
        statements = []
        ok = full
        for i in range(n):
            t = _random_tree(d, n, depth, width)
            x = _checked_truth(t, full, person)
            if x is None or x == person[i]:  # degenerate, or "I am a knight" (says nothing)
                ok = 0
                break
            statements.append(t)
            ok &= full ^ (person[i] ^ x)
            if not ok:
                break
        if ok and ok & (ok - 1) == 0:  # exactly one world left
            w = ok.bit_length() - 1
            return KnightsInstance(names=names, statements=statements,
                                   solution=[bool((w >> j) & 1) for j in range(n)], depth=depth, width=width)
    raise RuntimeError(f"no unique-solution puzzle in {max_tries} tries")  # pragma: no cover
