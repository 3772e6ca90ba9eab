"""Atomic facts of a family and what a set of formulas entails about them (``novelty="facts"``).

Spring's Definition 4 calls a valid step novel when the accepted steps P^nc do not already imply
it and it is not equivalent to a premise. Under a unique solution that is true of almost every
valid formula (a step that rules out one wrong world, a disjunction of premises, ...), so the
default novelty rule of :mod:`.verdict` asks for more: the step must make a new *atomic fact*
follow, Γ_dom ∪ P^nc_{t-1} ∪ {z} ⊨ a while Γ_dom ∪ P^nc_{t-1} ⊭ a. The atoms are what a solution
is made of:

- Zebra: every cell ``t == h`` (value token t in house h);
- Knights & Knaves: every role ``Knight(X)``;
- AR-LSAT: every position ``e == k`` (ordering) or membership ``Assign(e, g)`` (grouping,
  assignment), and each parsed option ``O_X`` (the question is about the options, so "option X
  is impossible" is a fact; ``Unsat(Option_X)`` states it).

A fact is an atom or its negation: eliminations (``t != h``, ``Knave(X)``, ``Not(Assign(e, g))``,
``Not(O_X)``) count, so App. A.1's "Alice cannot live in House 3" stays novel.

:class:`FactTable` holds the atoms of one theory and the literals known to follow from
Γ_dom ∪ P^nc (``known``: +1 the atom, -1 its negation, 0 neither), and it reads a step that is
itself a conjunction of fact literals (the gold steps, ``Bob == 2``) without a solver call. The
solver work (Z3's ``consequences``, a backbone computation over the candidate atoms) is done by
:class:`~.verifier.StepVerifier`, which owns the solver.
"""
from __future__ import annotations

import numpy as np
import z3

from .formula import Node, to_text
from .sample import WorldSample, evaluate_sample

__all__ = ["FactTable", "int_atoms", "pred_atoms"]


def int_atoms(names: list[str], values: range | list[int]) -> list[Node]:
    """``name == v`` for every name and value (Zebra cells, AR-LSAT positions)."""
    return [Node("==", (Node("name", value=n), Node("int", value=int(v)))) for n in names for v in values]


def pred_atoms(op: str, args: list[tuple[str, ...]]) -> list[Node]:
    """``op(a, ...)`` for every argument tuple (``Knight(A)``, ``Assign(e, g)``)."""
    return [Node(op, tuple(Node("name", value=a) for a in t)) for t in args]


class FactTable:
    """The atoms of one theory, their values on the theory's world sample, and the known facts.

    ``nodes`` are the positive atoms as formulas of the family's language; ``compile_node`` turns
    one into Z3 (called lazily: a gold trace of literal steps never needs the Z3 atoms);
    ``aliases`` names atoms that have a name of their own (AR-LSAT's ``Option_X``).
    """

    def __init__(self, nodes: list[Node], compile_node, sample: WorldSample | None,
                 aliases: dict[int, str] | None = None, groups: list[list[int]] | None = None):
        self.nodes = list(nodes)
        self.aliases = dict(aliases or {})
        self._index: dict[str, int] = {}
        for i, n in enumerate(self.nodes):
            self._index.setdefault(_key(n), i)
        for i, name in self.aliases.items():
            self._index[name] = i
        self._compile = compile_node
        self._exprs: list[z3.BoolRef | None] = [None] * len(self.nodes)
        # Z3 term id -> every atom compiled to that term (an AR-LSAT option can be a position atom's very
        # term: a consequence about it is a fact about both, whichever was compiled first)
        self._ids: dict[int, list[int]] = {}
        # atoms ``name == v`` of one name: when one holds the others do not (a value is unique);
        # and the name an atom is about (a cell's value token, a person, an entity): a step
        # about a name makes facts about it first
        extra_groups = groups
        groups: dict[str, list[int]] = {}
        by_name: dict[str, list[int]] = {}
        for i, n in enumerate(self.nodes):
            if i in self.aliases or not n.args or n.args[0].op != "name":
                continue
            name = str(n.args[0].value)
            by_name.setdefault(name, []).append(i)
            if n.op == "==" and n.args[1].op == "int":
                groups.setdefault(name, []).append(i)
        # Γ_dom's "exactly one of these atoms" groups (a name's values, and what the theory adds:
        # one value per house and attribute, one entity per position, ...), for propagation
        self._groups: dict[int, list[list[int]]] = {}
        for g in list(groups.values()) + [list(x) for x in (extra_groups or [])]:
            if len(g) > 1:
                for i in g:
                    self._groups.setdefault(i, []).append(g)
        self._by_name = {k: np.array(v) for k, v in by_name.items()}
        self._sample = sample
        self._matrix: np.ndarray | None | bool = False
        #: +1 / -1: the atom / its negation follows from Γ_dom ∪ P^nc; 0: neither is known to
        self.known = np.zeros(len(self.nodes), dtype=np.int8)
        #: known is exact (every fact of Γ_dom ∪ P^nc is in it), not just a subset of them
        self.exact = False

    def __len__(self) -> int:
        return len(self.nodes)

    # ------------------------------------------------------------------ reading steps
    def literal(self, node: Node) -> tuple[int, int] | None:
        """``(atom, sign)`` when ``node`` is a fact literal, else None."""
        sign = 1
        while node.op == "Not":
            node, sign = node.args[0], -sign
        if node.op == "!=":
            node, sign = Node("==", node.args), -sign
        elif node.op == "Knave":
            node, sign = Node("Knight", node.args), -sign
        elif node.op == "Unsat":  # Unsat(Option_X) is Not(O_X)
            i = self._index.get(str(node.args[0].value))
            return None if i is None else (i, -sign)
        i = self._index.get(_key(node))
        return None if i is None else (i, sign)

    def literals(self, node: Node) -> list[tuple[int, int]] | None:
        """The literals of a step that is a fact literal or a conjunction of them, else None."""
        parts = node.args if node.op == "And" else (node,)
        out = []
        for p in parts:
            lit = self.literal(p)
            if lit is None:
                return None
            out.append(lit)
        return out

    def atoms_of(self, node: Node) -> np.ndarray:
        """The atoms about the names that occur in ``node``."""
        names: set[str] = set()
        stack = [node]
        while stack:
            n = stack.pop()
            if n.op == "name":
                names.add(str(n.value))
            stack.extend(n.args)
        parts = [self._by_name[x] for x in names if x in self._by_name]
        return np.unique(np.concatenate(parts)) if parts else np.zeros(0, dtype=np.int64)

    # ------------------------------------------------------------------ solver side
    def expr(self, i: int) -> z3.BoolRef:
        """Atom ``i`` in Z3 (compiled on first use)."""
        e = self._exprs[i]
        if e is None:
            e = self._exprs[i] = self._compile(self.nodes[i])
            self._ids.setdefault(e.get_id(), []).append(int(i))
        return e

    def matrix(self) -> np.ndarray | None:
        """Atom values on the world sample, shape (atoms, worlds), or None without a sample."""
        if self._matrix is False:
            self._matrix = None
            if self._sample is not None:
                try:
                    rows = [evaluate_sample(n, self._sample) for n in self.nodes]
                    m = np.array(rows, dtype=bool)
                    self._matrix = m if m.shape == (len(self.nodes), self._sample.size) else None
                except (KeyError, ValueError, IndexError, TypeError):
                    self._matrix = None
        return self._matrix

    def undecided(self, worlds: np.ndarray | None) -> np.ndarray:
        """Atoms with no known fact that the sample worlds in ``worlds`` (a mask of worlds
        satisfying the formulas in question) do not show to take both values: only these can
        follow from those formulas."""
        cand = np.nonzero(self.known == 0)[0]
        m = self.matrix() if worlds is not None and worlds.any() else None
        if m is not None and len(cand):
            sub = m[cand][:, worlds]
            cand = cand[~(sub.any(axis=1) & ~sub.all(axis=1))]
        return cand

    def decode(self, consequences: list[z3.ExprRef]) -> list[tuple[int, int]]:
        """``(atom, sign)`` of each ``Implies(assumptions, literal)`` Z3 returned over atoms
        (compiled before, by :meth:`expr`), for every atom that is that literal's term."""
        ids = self._ids
        out = []
        for c in consequences:
            lit = c.arg(1) if z3.is_implies(c) else c
            sign = 1
            if z3.is_not(lit):
                lit, sign = lit.arg(0), -1
            out.extend((i, sign) for i in ids.get(lit.get_id(), ()))
        return sorted(set(out))

    def learn(self, lits: list[tuple[int, int]]) -> None:
        """Add facts that follow from Γ_dom ∪ P^nc, and what Γ_dom's exactly-one groups make of
        them (one atom of a group holds: the others do not; all but one do not: that one does)."""
        work = list(lits)
        while work:
            i, s = work.pop()
            if self.known[i] == s:
                continue
            self.known[i] = s
            for g in self._groups.get(i, ()):
                if s > 0:
                    work.extend((j, -1) for j in g if j != i and self.known[j] != -1)
                else:
                    open_ = [j for j in g if self.known[j] != -1]
                    if len(open_) == 1 and self.known[open_[0]] == 0:
                        work.append((open_[0], 1))

    def text(self, lit: tuple[int, int]) -> str:
        """A fact literal in the family's language (``Bob != 2``, ``Knave(A)``, ``Unsat(Option_C)``)."""
        i, s = lit
        n = self.nodes[i]
        if i in self.aliases:
            return self.aliases[i] if s > 0 else f"Unsat({self.aliases[i]})"
        if s > 0:
            return to_text(n)
        if n.op == "==":
            return to_text(Node("!=", n.args))
        if n.op == "Knight":
            return to_text(Node("Knave", n.args))
        return f"Not({to_text(n)})"


def _key(node: Node) -> str:
    """The canonical text of an atom, quickly for the usual shapes (``to_text`` otherwise)."""
    a = node.args
    if node.op == "==" and len(a) == 2 and a[0].op == "name" and a[1].op == "int":
        return f"{a[0].value} == {a[1].value}"
    if a and all(x.op == "name" for x in a) and node.op in ("Knight", "Assign"):
        return f"{node.op}(" + ", ".join(str(x.value) for x in a) + ")"
    return to_text(node)
