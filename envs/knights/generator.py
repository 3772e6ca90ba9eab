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
from itertools import chain, repeat
from typing import Any, Callable

import numpy as np

from ..instance import Instance
from ..logic_steps.rand import BLOCK, as_rng

__all__ = ["NAMES", "WORLDS", "KnightsInstance", "generate_knights", "statement_formula", "statement_text",
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


@lru_cache(maxsize=16)
def _knave_masks(n: int) -> list[int]:
    """``knave[j]``: the worlds where character j is a knave (the complement of ``person[j]``)."""
    full, person = _masks(n)
    return [full ^ m for m in person]


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


def solutions_of(statements: list[list], n: int) -> list[int]:
    """Every world (bit i set = character i is a knight) consistent with the statements."""
    full, person = _masks(n)
    ok = full
    for i, t in enumerate(statements):
        ok &= full ^ (person[i] ^ _truth(t, full, person))
        if not ok:
            return []
    return [w for w in range(1 << n) if (ok >> w) & 1]


def _uniforms(rng: np.random.Generator | int | None) -> Callable[[], float]:
    """``Draws(rng).random`` as one C-level call: the same doubles, fetched from ``rng`` in the
    same blocks of ``BLOCK`` at the same moments (a block only when the last one runs out, so a
    caller's generator is left in the same state). A block is read through a memoryview, so only
    the doubles actually used become Python floats (``tolist`` made all 512 for ~150 used)."""
    return chain.from_iterable(map(_block, repeat(as_rng(rng)))).__next__


def _block(rng: np.random.Generator) -> memoryview:
    return memoryview(rng.random(BLOCK))


# ``Draws.below(m)`` is ``min(int(u * m), m - 1)``; the clamp never fires for a double u < 1 and
# an integer 1 <= m < 2**53: u * m <= m - m * 2**-53 rounds below m (m * 2**-53 is at least half
# the spacing of doubles just below m, and a full spacing when m is a power of two), so the
# generator computes ``int(u * m)`` directly.


def _sample_names(uniform: Callable[[], float], n: int) -> list[str]:
    """``Draws.sample(NAMES, n)``: a Fisher-Yates shuffle of a copy of NAMES from the top (position
    i swaps with ``below(i + 1)``, one draw each), then the first ``n``.

    Step i fixes position i for good (later steps only touch positions below it), so for the
    positions that are cut off (i >= n) only the other half of the swap matters: the element at
    i moves down to j."""
    out = list(NAMES)
    for i in range(len(out) - 1, n - 1, -1):
        out[int(uniform() * (i + 1))] = out[i]
    for i in range(n - 1, 0, -1):
        j = int(uniform() * (i + 1))
        out[i], out[j] = out[j], out[i]
    return out[:n]


def _statement_drawer(uniform: Callable[[], float], n: int, depth: int, width: int,
                      full: int, person: list[int]) -> Callable[[], tuple[list, int | None]]:
    """A function drawing one statement: ``(tree, mask)``, the truth mask over the 2^n worlds, or
    ``None`` when the statement is degenerate (a constant sub-statement such as "B is a knight and
    B is a knave", or repeated operands such as "C == C").

    A tree is drawn top-down, children left to right, with these draws: at a level below ``depth``
    one draw for "leaf?" (probability 0.2 at the top, 0.4 below; none at ``depth``, where only
    leaves occur); a leaf draws knight/knave (0.5) then its character; a connective draws its op
    (``_OP_CUM``), And/Or with ``width`` > 2 then their operand count (2..width), then the
    children. The mask is computed on the way back up, so drawing and checking are one pass: a
    degenerate sub-statement still draws its whole tree (the next statement starts after it).
    One closure per level (level 1's calls level 2's, ..., down to ``leaf``) keeps the level
    arithmetic out of the recursion. This is what generate_knights spends its time on (~20
    statements per 4-person puzzle), so drawing and checking are one recursion instead of two,
    with the generator's ``Draws`` calls inlined."""
    knave = _knave_masks(n)
    c_not, c_and, c_or, c_implies, _ = _OP_CUM  # in _OPS order; the last is 1 (iff takes the rest)

    def leaf() -> tuple[list, int]:
        if uniform() < 0.5:
            j = int(uniform() * n)
            return ["knight", j], person[j]
        j = int(uniform() * n)
        return ["knave", j], knave[j]

    def connective(level: int, child: Callable[[], tuple[list, int | None]]):
        p_leaf = 0.2 if level == 1 else 0.4

        def draw() -> tuple[list, int | None]:
            if uniform() < p_leaf:
                return leaf()
            u = uniform()  # Draws.weighted(_OP_CUM): the first op whose cumulative weight exceeds u
            if u < c_not:
                t, m = child()
                return ["not", t], None if m is None else full ^ m
            if u < c_or:
                op = "and" if u < c_and else "or"
                k = 2 if width <= 2 else 2 + int(uniform() * (width - 1))
                if k > 2:
                    return _wide(op, k, child, full)
            else:
                op = "implies" if u < c_implies else "iff"
            t1, a = child()
            t2, b = child()
            # "a op not-a" is constant for And/Or too, so one test covers every binary connective
            if a is None or b is None or a == b or a == full ^ b:
                return [op, t1, t2], None
            if op == "and":
                x = a & b
            elif op == "or":
                x = a | b
            elif op == "implies":
                x = (full ^ a) | b
            else:  # iff
                x = full ^ a ^ b
            return [op, t1, t2], None if x == 0 or x == full else x

        return draw

    draw = leaf
    for level in range(depth - 1, 0, -1):
        draw = connective(level, draw)
    return draw


def _wide(op: str, k: int, child: Callable[[], tuple[list, int | None]], full: int) -> tuple[list, int | None]:
    """An And/Or of ``k`` > 2 operands drawn by ``child``: ``(tree, mask)``, mask None when an
    operand is degenerate, two operands are equal, or the result is constant."""
    tree, masks = [op], set()
    for _ in range(k):
        t, m = child()
        tree.append(t)
        masks.add(m)
    if None in masks or len(masks) != k:
        return tree, None
    x = full if op == "and" else 0
    for m in masks:
        x = x & m if op == "and" else x | m
    return tree, None if x == 0 or x == full else x


#: how the solution is drawn (:func:`generate_knights`'s ``world``)
WORLDS = ("uniform", "natural")


def generate_knights(
    n_people: int,
    rng: np.random.Generator | int | None,
    *,
    depth: int = 2,
    width: int = 2,
    max_tries: int = 100_000,
    world: str = "uniform",
    stratum: float | None = None,
) -> KnightsInstance:
    """A puzzle with ``n_people`` characters and exactly one consistent assignment.

    ``world`` is how its solution comes about:

    - ``"uniform"`` (default): the solution is drawn first, uniformly among the 2^n role
      assignments (from ``stratum`` where given, :func:`~solvergym.envs.problem.seed_stratum`,
      so that consecutive seeds cover them evenly; else from ``rng``), and each statement is drawn
      as K&K draws it until it is non-degenerate and true exactly when its speaker is a knight
      in that world; the puzzle is kept when that world is the only consistent one. Given its
      solution, a puzzle has the same law as under ``"natural"`` (each statement's law is K&K's,
      cut to the statements that world allows, and uniqueness is the same test), but every
      solution is equally likely.
    - ``"natural"``: K&K's draw (Xie et al. 2025): statements drawn freely, the puzzle kept when
      exactly one world is consistent, whatever world that is. Knights come out more often than
      knaves (over 8,000 seeds, "everyone is a knight" solves 28% of 2-person puzzles against a
      guess's 25%, 14.5% of 3-person ones against 12.5%, 7.8% of 4-person ones against 6.25%),
      so a policy that reads nothing but the names beats a uniform guess. Its puzzles are the
      generator's before ``world`` existed, draw for draw."""
    if world not in WORLDS:
        raise ValueError(f"world must be one of {WORLDS}, got {world!r}")
    n, depth, width = int(n_people), int(depth), int(width)
    if not 2 <= n <= 8:
        raise ValueError(f"n_people must be in 2..8, got {n}")
    if not 2 <= depth <= 4:
        # with single "X is a knight/knave" statements every constraint is X == Y or X != Y, and
        # flipping everyone keeps them all true: no depth-1 puzzle has a unique solution
        raise ValueError(f"depth must be in 2..4, got {depth}")
    if not 2 <= width <= 4:
        raise ValueError(f"width must be in 2..4, got {width}")
    uniform = _uniforms(rng)
    names = _sample_names(uniform, n)
    full, person = _masks(n)
    draw = _statement_drawer(uniform, n, depth, width, full, person)
    if world == "uniform":
        u = uniform()
        target = min(int((u if stratum is None else stratum) * (1 << n)), (1 << n) - 1)
        return _planted(names, target, draw, full, person, depth, width, max_tries)
    for _ in range(max_tries):
        statements = []
        ok = full
        for own in person:  # the worlds where the speaker is a knight
            t, x = draw()
            if x is None or x == own:  # degenerate, or "I am a knight" (says nothing)
                ok = 0
                break
            statements.append(t)
            ok &= full ^ own ^ x  # the speaker is a knight iff the statement holds
            if not ok:
                break
        if ok and ok & (ok - 1) == 0:  # exactly one world left
            w = ok.bit_length() - 1
            return KnightsInstance(names=names, statements=statements,
                                   solution=[bool((w >> j) & 1) for j in range(n)], depth=depth, width=width)
    raise RuntimeError(f"no unique-solution puzzle in {max_tries} tries")  # pragma: no cover


def _planted(names: list[str], target: int, draw: Callable[[], tuple[list, int | None]], full: int,
             person: list[int], depth: int, width: int, max_tries: int) -> KnightsInstance:
    """``world="uniform"``'s puzzle whose only consistent world is ``target`` (bit j set: character
    j is a knight): each speaker's statement redrawn until it is non-degenerate and holds in
    ``target`` exactly when the speaker is a knight there (so ``target`` stays consistent), the
    whole puzzle redrawn until ``target`` is the only consistent world."""
    bit = 1 << target
    for _ in range(max_tries):
        statements = []
        ok = full
        for j, own in enumerate(person):
            knight = bool((target >> j) & 1)
            for _ in range(max_tries):
                t, x = draw()
                # degenerate, "I am a knight" (says nothing) or false to the speaker's role in target
                if x is not None and x != own and bool(x & bit) == knight:
                    break
            else:  # pragma: no cover - a statement true (or false) in a world is half of all
                raise RuntimeError(f"no statement fits the world in {max_tries} draws")
            statements.append(t)
            ok &= full ^ own ^ x  # the speaker is a knight iff the statement holds
        if ok == bit:  # target is the one world left
            return KnightsInstance(names=names, statements=statements,
                                   solution=[bool((target >> j) & 1) for j in range(len(names))],
                                   depth=depth, width=width)
    raise RuntimeError(f"no unique-solution puzzle in {max_tries} tries")  # pragma: no cover
