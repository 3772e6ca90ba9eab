"""A family's vocabulary and domain constraints Γ_dom, and the compiler from formula ASTs to Z3.

Spring §3 splits a problem's theory into Γ_dom ("the structural rules of the problem, such as
exclusivity, uniqueness, admissible assignments, or variable ranges") and the premises C.
A :class:`Theory` owns the Z3 variables of one instance, says what Γ_dom is, and compiles
formulas of the family's :class:`~.formula.Language`, checking names and types with a reason for
every rejection. Families subclass it (``ZebraTheory``, ``KnightsTheory``, ``LSATTheory``).
"""
from __future__ import annotations

import difflib

import numpy as np
import z3

from .facts import FactTable
from .formula import CMP_OPS, COUNT_FUNCS, FormulaError, Language, Node, parse_formula, to_text
from .sample import WorldSample

__all__ = ["Theory", "MetaStep"]


class MetaStep:
    """A step about the solver rather than about the state: AR-LSAT's ``Sat(Option_X)``
    (App. E.2: "rules + facts + Option_X is satisfiable"). It has no formula of its own; the
    verifier checks the claim (:class:`~.verifier.StepVerifier`, the rule in :mod:`.verdict`)."""

    def __init__(self, option: str, formula: z3.BoolRef):
        self.option = option
        self.formula = formula


class Theory:
    """Vocabulary, Γ_dom and compilation for one instance (subclass hooks below)."""

    language: Language

    #: worlds in the random sample of Γ_dom used to rule out premise equivalence (see .sample)
    sample_size = 128

    def __init__(self) -> None:
        #: option letter -> compiled option formula (AR-LSAT); set by the family before compiling steps
        self.options: dict[str, z3.BoolRef] = {}
        #: option letter -> its parsed formula (for the world sample)
        self.option_nodes: dict[str, Node] = {}
        self._sample: WorldSample | None | bool = False

    def sample_worlds(self) -> WorldSample | None:
        """A fixed random sample of worlds satisfying Γ_dom (None if the family has none)."""
        if self._sample is False:
            self._sample = self._make_sample(np.random.default_rng(0), self.sample_size)
        return self._sample

    def _make_sample(self, rng: np.random.Generator, size: int) -> WorldSample | None:
        return None

    def sample_near(self, solution: z3.ModelRef) -> WorldSample | None:
        """:meth:`sample_worlds` and, after them, worlds of Γ_dom a small change away from
        ``solution`` (a model of Γ_dom), e.g. the solution itself and each world one swap from
        it. None (the default) when the family has none; then the verifier keeps the plain sample.

        Why: once §4.2 has found the premises' one solution, every accepted step holds there,
        and a world that differs from it in one place is the likeliest to satisfy the accepted
        steps and not the next one — a witness that a cell fact does not follow yet, without a
        solver call (:class:`~.verifier.StepVerifier`). Every use of the sample needs only worlds
        that satisfy Γ_dom, so the extra worlds change no verdict."""
        return None

    def fact_atoms(self) -> list[Node]:
        """The positive atomic facts of ``novelty="facts"`` (:mod:`.facts`): cells, roles,
        positions, memberships. None by default (then ``"facts"`` judges as Def. 4 does, with
        ``And`` / ``Or`` of premises as restatements)."""
        return []

    def fact_aliases(self) -> dict[int, str]:
        """Names of atoms that have one (AR-LSAT's ``Option_X``), by index in :meth:`fact_atoms`."""
        return {}

    def fact_groups(self) -> list[list[int]]:
        """Groups of atoms (indices in :meth:`fact_atoms`) of which Γ_dom makes exactly one
        true, beyond a name's own values (those the table finds itself): they let the known
        facts propagate without a solver call."""
        return []

    def fact_table(self, sample: WorldSample | None = None) -> FactTable | None:
        """A fresh :class:`~.facts.FactTable` of this theory's atoms (None when it has none),
        on ``sample`` (default: :meth:`sample_worlds`)."""
        nodes = self.fact_atoms()
        if not nodes:
            return None
        return FactTable(nodes, self._fact_expr, sample if sample is not None else self.sample_worlds(),
                         self.fact_aliases(), self.fact_groups())

    def _fact_expr(self, node: Node) -> z3.BoolRef:
        # the usual atoms straight from the vocabulary (compile() walks and type-checks the tree,
        # and z3's ``==`` coerces its operands: 0.1 ms an atom, hundreds of atoms a trace); the
        # same Z3 term either way, so consequences can be read back by term id
        a = node.args
        if node.op == "==" and a[0].op == "name" and a[1].op == "int":
            var = self.name_term(str(a[0].value))
            val = z3.IntVal(int(a[1].value), var.ctx)
            return z3.BoolRef(z3.Z3_mk_eq(var.ctx_ref(), var.as_ast(), val.as_ast()), var.ctx)
        if node.op in ("Knight", "Assign") and all(x.op == "name" for x in a):
            return self.predicate(node.op, [str(x.value) for x in a])
        return self.compile(node)

    # ------------------------------------------------------------------ hooks
    def domain(self) -> list[z3.BoolRef]:
        """Γ_dom as a list of Z3 constraints."""
        raise NotImplementedError

    def state_vars(self) -> list[z3.ExprRef]:
        """The variables whose values make a solution (used to test uniqueness). Every formula
        the theory compiles must be over these alone: then a unique solution decides every step
        (:meth:`~.verifier.StepVerifier.base_status`)."""
        raise NotImplementedError

    def name_term(self, name: str) -> z3.ArithRef:
        """A bare identifier as a number (a Zebra value's house, an entity's position)."""
        raise FormulaError(f"bare name {name!r} is not allowed here")

    def predicate(self, op: str, names: list[str]) -> z3.BoolRef:
        """``Assign(e, g)``, ``Knight(X)``, ``Knave(X)``."""
        raise FormulaError(f"{op}(...) is not part of the {self.language.name} language")

    # ------------------------------------------------------------------ helpers for subclasses
    @staticmethod
    def unknown(kind: str, name: str, known: list[str]) -> FormulaError:
        close = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        shown = ", ".join(known[:12]) + (", ..." if len(known) > 12 else "")
        return FormulaError(f"unknown {kind} {name!r}{hint} (known: {shown})")

    # ------------------------------------------------------------------ compilation
    def parse(self, text: str) -> Node:
        return parse_formula(text, self.language)

    def compile(self, node: Node) -> z3.BoolRef:
        """A Boolean Z3 expression for ``node``; ``Unsat(Option_X)`` becomes ``Not(option X)``
        (the option "cannot be extended to any full valid" solution is a statement that holds in
        every solution: the option is false). ``Sat(...)`` is a :class:`MetaStep`, see
        :meth:`compile_step`."""
        if node.op == "Sat":
            raise FormulaError("Sat(Option_X) is a claim about the solver, allowed only as a whole step")
        if node.op == "Unsat":
            return z3.Not(self._option(node.args[0].value))
        kind, expr = self._compile(node)
        if kind != "bool":
            raise FormulaError(
                f"{to_text(node)!r} is a number, not a statement: compare it, e.g. {to_text(node)} == 1"
            )
        return expr

    def compile_step(self, node: Node) -> z3.BoolRef | MetaStep:
        if node.op == "Sat":
            name = node.args[0].value
            return MetaStep(name, self._option(name))
        return self.compile(node)

    def compile_text(self, text: str) -> z3.BoolRef:
        return self.compile(self.parse(text))

    def _option(self, name: str) -> z3.BoolRef:
        letter = name.split("_", 1)[1]
        if letter not in self.options:
            raise FormulaError(
                f"{name} is not among the parsed options ({', '.join('Option_' + k for k in sorted(self.options)) or 'none'})"
            )
        return self.options[letter]

    def _compile(self, n: Node) -> tuple[str, z3.ExprRef]:
        op = n.op
        if op == "int":
            return "int", z3.IntVal(n.value)
        if op == "bool":
            return "bool", z3.BoolVal(n.value)
        if op == "name":
            return "int", self.name_term(str(n.value))
        if op == "":  # parenthesised (only made by the printer)
            return self._compile(n.args[0])
        if op in ("+", "-"):
            a, b = (self._int(x) for x in n.args)
            return "int", (a + b if op == "+" else a - b)
        if op == "neg":
            return "int", -self._int(n.args[0])
        if op in CMP_OPS:
            (ka, a), (kb, b) = self._compile(n.args[0]), self._compile(n.args[1])
            if op in ("==", "!="):
                if ka != kb:
                    raise FormulaError(
                        f"{to_text(n)!r} compares a number with a statement"
                    )
                # as written: ``a == b`` lets Python try ``IntNumRef.__eq__`` first (a subclass of
                # a's type), which builds ``1 == house_Bob`` — another atom than Γ_dom's
                # ``house_Bob == 1``, for the solver to relate to it
                eq = z3.BoolRef(z3.Z3_mk_eq(a.ctx_ref(), a.as_ast(), b.as_ast()), a.ctx)
                return "bool", (eq if op == "==" else z3.Not(eq))
            if ka != "int" or kb != "int":
                raise FormulaError(f"{op} compares numbers (houses, positions), not statements: {to_text(n)!r}")
            return "bool", {"<": a < b, ">": a > b, "<=": a <= b, ">=": a >= b}[op]
        if op in ("Assign", "Knight", "Knave"):
            return "bool", self.predicate(op, [str(a.value) for a in n.args])
        if op == "Not":
            return "bool", z3.Not(self._bool(n.args[0]))
        if op == "And":
            args = [self._bool(a) for a in n.args]
            return "bool", (args[0] if len(args) == 1 else z3.And(*args))
        if op == "Or":
            args = [self._bool(a) for a in n.args]
            return "bool", (args[0] if len(args) == 1 else z3.Or(*args))
        if op == "Xor":
            return "bool", z3.Xor(self._bool(n.args[0]), self._bool(n.args[1]))
        if op == "Implies":
            return "bool", z3.Implies(self._bool(n.args[0]), self._bool(n.args[1]))
        if op in COUNT_FUNCS:
            k = int(n.args[0].value)
            args = [self._bool(a) for a in n.args[1:]]
            if op == "AtLeast":
                return "bool", z3.AtLeast(*args, k)
            if op == "AtMost":
                return "bool", z3.AtMost(*args, k)
            return "bool", z3.PbEq([(a, 1) for a in args], k)
        if op in ("Sat", "Unsat"):
            raise FormulaError(f"{op}(...) must be a whole step, not part of a formula")
        raise FormulaError(f"unsupported construct {op!r}")

    def _int(self, n: Node) -> z3.ArithRef:
        kind, e = self._compile(n)
        if kind != "int":
            raise FormulaError(f"{to_text(n)!r} is a statement where a number was expected")
        return e

    def _bool(self, n: Node) -> z3.BoolRef:
        kind, e = self._compile(n)
        if kind != "bool":
            raise FormulaError(
                f"{to_text(n)!r} is a number where a statement was expected (compare it, e.g. {to_text(n)} == 1)"
            )
        return e
