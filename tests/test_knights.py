"""Knights & Knaves generator: unique solutions (checked by an independent brute force over the
premise formulas and by Z3), depth/width bounds, no degenerate statements, determinism."""
import itertools

import numpy as np
import pytest
import z3
from hypothesis import given, settings, strategies as st

from solvergym.envs.knights.generator import (
    KnightsInstance, generate_knights, solutions_of, statement_formula, statement_text,
)
from solvergym.envs.knights.verify import KnightsTheory
from solvergym.envs.logic_steps.formula import parse_formula


def _truth(node, world):
    """Meaning of a Knights formula in one world (name -> is a knight), written apart from the library."""
    op = node.op
    if op == "Knight":
        return world[node.args[0].value]
    if op == "Knave":
        return not world[node.args[0].value]
    a = [_truth(x, world) for x in node.args]
    if op == "Not":
        return not a[0]
    if op == "And":
        return all(a)
    if op == "Or":
        return any(a)
    if op == "Implies":
        return (not a[0]) or a[1]
    if op == "Xor":
        return a[0] != a[1]
    if op == "==":
        return a[0] == a[1]
    if op == "!=":
        return a[0] != a[1]
    if op == "":
        return a[0]
    raise AssertionError(op)


def brute_force(inst: KnightsInstance) -> list[tuple[bool, ...]]:
    premises = [parse_formula(f) for f in inst.formulas()]
    out = []
    for roles in itertools.product([False, True], repeat=inst.n_people):
        world = dict(zip(inst.names, roles))
        if all(_truth(p, world) for p in premises):
            out.append(roles)
    return out


def _depth(t):
    return 1 if t[0] in ("knight", "knave") else 1 + max(_depth(c) for c in t[1:])


def _width(t):
    return 0 if t[0] in ("knight", "knave") else max([len(t) - 1] + [_width(c) for c in t[1:]])


@settings(max_examples=60)
@given(n=st.integers(2, 8), depth=st.integers(2, 3), width=st.integers(2, 3), seed=st.integers(0, 2**31 - 1))
def test_unique_solution_by_brute_force(n, depth, width, seed):
    inst = generate_knights(n, seed, depth=depth, width=width)
    assert brute_force(inst) == [tuple(inst.solution)]
    assert all(_depth(t) <= depth for t in inst.statements)
    assert all(_width(t) <= width for t in inst.statements if t[0] in ("and", "or"))
    for i, t in enumerate(inst.statements):  # nobody only says "I am a knight"
        assert t != ["knight", i]


@pytest.mark.parametrize("n, seed", [(5, 0), (8, 1)])
def test_unique_solution_by_z3(n, seed):
    inst = generate_knights(n, seed, depth=3)
    th = KnightsTheory(inst)
    s = z3.Solver()
    s.add(*[th.compile_text(f) for f in inst.formulas()])
    assert s.check() == z3.sat
    m = s.model()
    assert [z3.is_true(m.eval(th.vars[x])) for x in inst.names] == inst.solution
    s.add(z3.Or(*[v != m.eval(v) for v in th.vars.values()]))
    assert s.check() == z3.unsat


def test_spring_app_a3_rendering():
    inst = KnightsInstance(names=["A", "B", "C"],
                           statements=[["knave", 1], ["iff", ["knight", 0], ["knight", 2]], ["knight", 0]],
                           solution=[False, True, False], depth=2, width=2)
    assert inst.sentences() == ['A says: "B is a knave."', 'B says: "A is a knight if and only if C is a knight."',
                                'C says: "A is a knight."']
    assert inst.formulas() == ["Knight(A) == Knave(B)", "Knight(B) == (Knight(A) == Knight(C))",
                               "Knight(C) == Knight(A)"]
    assert solutions_of(inst.statements, 3) == [0b010]  # only B is a knight
    bad = inst.to_dict()
    bad["solution"] = [True, True, False]
    with pytest.raises(ValueError, match="does not satisfy"):
        KnightsInstance.from_dict(bad)


def test_rendering_of_connectives():
    names = ["A", "B", "C"]
    t = ["implies", ["and", ["knight", 0], ["knave", 1]], ["not", ["knight", 2]]]
    assert statement_text(t, names) == "if (A is a knight and B is a knave) then C is not a knight"
    assert statement_formula(t, names) == "Implies(And(Knight(A), Knave(B)), Not(Knight(C)))"
    t = ["not", ["or", ["knight", 0], ["knight", 1]]]
    assert statement_text(t, names) == "it is not the case that (A is a knight or B is a knight)"


def test_seed_determinism_and_round_trip():
    a = generate_knights(6, 42, depth=3, width=3)
    assert a.to_json() == generate_knights(6, np.random.default_rng(42), depth=3, width=3).to_json()
    assert a.to_json() != generate_knights(6, 43, depth=3, width=3).to_json()
    assert KnightsInstance.from_json(a.to_json()) == a


def test_knob_validation():
    for kw in ({"n_people": 1}, {"n_people": 9}, {"n_people": 3, "depth": 1}, {"n_people": 3, "width": 5}):
        n = kw.pop("n_people")
        with pytest.raises(ValueError):
            generate_knights(n, 0, **kw)
