"""AR-LSAT-style generator: every game and question type, exactly one correct option (decided again
by Z3, independently of the generator's enumeration), irredundant rules, determinism."""
import numpy as np
import pytest
import z3
from hypothesis import given, settings, strategies as st

from solvergym.envs.logic_steps.formula import parse_formula
from solvergym.envs.lsat.generator import (
    GAMES, OPTION_LETTERS, QUESTION_TYPES, LSATInstance, evaluate, generate_lsat, same_group_formula, worlds_of,
)
from solvergym.envs.lsat.verify import LSATTheory


def z3_classify(inst: LSATInstance) -> list[bool]:
    """Which options answer the question, decided by Z3 over the verifier's encoding."""
    th = LSATTheory(inst)
    s = z3.Solver()
    s.add(*th.domain(), *[th.compile_text(f) for f in inst.rule_formulas + inst.fact_formulas])
    assert s.check() == z3.sat
    out = []
    for f in inst.option_formulas:
        o = th.compile_text(f)
        possible = s.check(o) == z3.sat
        necessary = s.check(z3.Not(o)) == z3.unsat
        out.append({"must_be_true": necessary, "if_then": necessary, "could_be_true": possible,
                    "cannot_be_true": not possible}[inst.question_type])
    return out


@settings(max_examples=40)
@given(game=st.sampled_from(GAMES), qtype=st.sampled_from(QUESTION_TYPES), seed=st.integers(0, 2**31 - 1))
def test_exactly_one_option_is_correct_by_z3(game, qtype, seed):
    inst = generate_lsat(seed, game=game, question_type=qtype)
    assert (inst.game, inst.question_type) == (game, qtype)
    right = z3_classify(inst)
    assert sum(right) == 1 and OPTION_LETTERS[right.index(True)] == inst.answer
    assert len(set(inst.option_formulas)) == 5
    if qtype == "if_then":
        assert len(inst.facts) == 1 and inst.question.startswith("If ")


@settings(max_examples=20)
@given(game=st.sampled_from(GAMES), seed=st.integers(0, 2**31 - 1))
def test_rules_are_irredundant_and_leave_several_outcomes(game, seed):
    inst = generate_lsat(seed, game=game, question_type="could_be_true")
    worlds = worlds_of(inst)
    masks = [evaluate(parse_formula(f), inst, worlds) for f in inst.rule_formulas]
    alive = np.logical_and.reduce(masks)
    assert alive.sum() >= 2
    for i in range(len(masks)):
        rest = [m for j, m in enumerate(masks) if j != i]
        assert (np.logical_and.reduce(rest) if rest else np.ones_like(alive)).sum() > alive.sum()


@settings(max_examples=30)
@given(game=st.sampled_from(GAMES), qtype=st.sampled_from(["must_be_true", "if_then"]), seed=st.integers(0, 2**31 - 1))
def test_the_right_option_needs_more_than_one_premise(game, qtype, seed):
    # Z3, independently of the generator: no single rule (or the supposed fact) implies the answer
    # under the domain alone, else no deduction towards it could be novel (Spring Def. 4)
    inst = generate_lsat(seed, game=game, question_type=qtype)
    th = LSATTheory(inst)
    answer = th.compile_text(inst.option_formulas[OPTION_LETTERS.index(inst.answer)])
    for premise in inst.rule_formulas + inst.fact_formulas:
        s = z3.Solver()
        s.add(*th.domain(), th.compile_text(premise), z3.Not(answer))
        assert s.check() == z3.sat, premise


def test_enumeration_agrees_with_z3_model_counts():
    for seed, game in [(0, "ordering"), (1, "grouping"), (2, "assignment")]:
        inst = generate_lsat(seed, game=game, question_type="must_be_true")
        th = LSATTheory(inst)
        s = z3.Solver()
        s.add(*th.domain(), *[th.compile_text(f) for f in inst.rule_formulas])
        count = 0
        while s.check() == z3.sat and count < 100:
            m = s.model()
            count += 1
            s.add(z3.Or(*[v != m.eval(v, model_completion=True) for v in th.state_vars()]))
        assert count == inst.n_solutions


def test_world_counts():
    shell = dict(scenario="", rules=[], rule_formulas=[], question_type="must_be_true", question="", facts=[],
                 fact_formulas=[], options=[""] * 5, option_formulas=[""] * 5, answer="A")
    assert worlds_of(LSATInstance(game="ordering", entities=list("ABCDE"), groups=[], capacities=[], **shell)).shape == (120, 5)
    assert worlds_of(LSATInstance(game="grouping", entities=list("ABCD"), groups=["X", "Y", "Z"], capacities=[],
                                  **shell)).shape == (81, 4)
    # 6 people into 3 shifts of 2: 6! / (2! 2! 2!) = 90
    assert worlds_of(LSATInstance(game="assignment", entities=list("ABCDEF"), groups=["X", "Y", "Z"],
                                  capacities=[2, 2, 2], **shell)).shape == (90, 6)


def test_same_group_formula():
    assert same_group_formula("A", "B", ["X", "Y"]) == "Assign(A, X) == Assign(B, X)"
    assert same_group_formula("A", "B", ["X", "Y", "Z"]) == "And(Assign(A, X) == Assign(B, X), Assign(A, Y) == Assign(B, Y))"


def test_seed_determinism_and_round_trip():
    a = generate_lsat(9)
    assert a.to_json() == generate_lsat(np.random.default_rng(9)).to_json()
    assert LSATInstance.from_json(a.to_json()) == a
    assert {generate_lsat(s).game for s in range(12)} == set(GAMES)
    with pytest.raises(ValueError):
        generate_lsat(0, game="sorting")
