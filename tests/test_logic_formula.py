"""The formal step language (Spring App. E): safe parsing, canonical text, reasons for rejections."""
import pytest
import z3
from hypothesis import given, settings, strategies as st

from solvergym.envs.logic_steps.formula import (
    MAX_DEPTH, MAX_FORMULA_CHARS, MAX_INT, MAX_NODES, FormulaError, parse_formula, to_text,
)
from solvergym.envs.lsat.generator import LSATInstance
from solvergym.envs.lsat.verify import LSATTheory
from solvergym.envs.zebra.generator import ZebraInstance
from solvergym.envs.zebra.verify import ZEBRA_LANGUAGE, ZebraTheory
from solvergym.envs.knights.verify import KNIGHTS_LANGUAGE

ABC = ZebraInstance(
    n_houses=3, attributes=["Name", "Pet", "Drink"],
    values=[["Alice", "Bob", "Carol"], ["cat", "dog", "fish"], ["coffee", "juice", "tea"]],
    solution=[["Alice", "dog", "coffee"], ["Bob", "cat", "tea"], ["Carol", "fish", "juice"]],
    clues=["Alice lives immediately to the left of the cat owner.", "Bob lives in the house where tea is served.",
           "The person in House 2 drinks tea.", "Carol owns the fish.", "The dog owner drinks coffee.",
           "Bob does not drink coffee."],
    clue_formulas=["Alice + 1 == cat", "Bob == tea", "tea == 2", "Carol == fish", "dog == coffee", "Bob != coffee"],
)


@pytest.mark.parametrize("text, canonical", [
    ("engineer == 2", "engineer == 2"),
    ("cat + 1 == coffee", "cat + 1 == coffee"),
    ("Or(city_breaks == Alice + 1, city_breaks == Alice - 1)", "Or(city_breaks == Alice + 1, city_breaks == Alice - 1)"),
    ("  Not( dog==1 )", "Not(dog == 1)"),
    ("And(cat != 1, cat != 3)", "And(cat != 1, cat != 3)"),
    ("Knight(A) == (Knight(B) == Knave(C))", "Knight(A) == (Knight(B) == Knave(C))"),
    ("Exactly(2, Assign(A, X), Assign(B, X), Assign(C, X))", "Exactly(2, Assign(A, X), Assign(B, X), Assign(C, X))"),
    ("Implies(Assign(A, X), Assign(B, Y))", "Implies(Assign(A, X), Assign(B, Y))"),
    ("Unsat(Option_A)", "Unsat(Option_A)"),
    ("(a + 1) + 2 == b", "a + 1 + 2 == b"),
    ("a - (1 + 2) == b", "a - (1 + 2) == b"),
    ("-a == -3", "-a == -3"),
])
def test_parse_and_canonical_text(text, canonical):
    node = parse_formula(text)
    assert to_text(node) == canonical
    assert parse_formula(to_text(node)) == node


@pytest.mark.parametrize("text, fragment", [
    ("dog = 1", "use == for equality"),
    ("dog == 1 && cat == 2", "use And(...)"),
    ("2 * dog == 4", "no multiplication"),
    ("a < b < c", "chained comparison"),
    ("Foo(a)", "unknown function Foo"),
    ("And", "must be called"),
    ("Not(a == 1, b == 2)", "Not takes 1 argument"),
    ("Xor(a == 1)", "Xor takes 2 argument"),
    ("AtLeast(x, Assign(A, X))", "integer literal"),
    ("Sat(A)", "option name such as Option_A"),
    ("And(Sat(Option_A), a == 1)", "must be a whole step"),
    ("Assign(A, 3)", "must be names"),
    ("dog == 1)", "unexpected ')'"),
    ("Or(dog == 1", "unexpected end"),
    ("", "empty formula"),
    ("dog == " + "9" * 20, f"larger than {MAX_INT}"),
])
def test_rejections_have_reasons(text, fragment):
    with pytest.raises(FormulaError, match=None) as e:
        parse_formula(text)
    assert fragment in str(e.value)


def test_size_and_depth_bounds_never_recurse_out():
    deep = "Not(" * 300 + "a == 1" + ")" * 300  # within the character limit, far past the depth limit
    with pytest.raises(FormulaError, match=f"deeper than {MAX_DEPTH}"):
        parse_formula(deep)
    parens = "(" * 900 + "a == 1" + ")" * 900
    with pytest.raises(FormulaError, match="deeper"):
        parse_formula(parens)
    negs = "-" * 1900 + "a == 1"
    with pytest.raises(FormulaError, match="deeper"):
        parse_formula(negs)
    wide = "And(" + ", ".join(["a == 1"] * (MAX_NODES // 2)) + ")"
    with pytest.raises(FormulaError, match=f"more than {MAX_NODES} parts"):
        parse_formula(wide)
    with pytest.raises(FormulaError, match="the limit is"):
        parse_formula("a" * (MAX_FORMULA_CHARS + 1))
    # just inside the bounds is fine
    ok = "Not(" * (MAX_DEPTH - 1) + "a == 1" + ")" * (MAX_DEPTH - 1)
    assert to_text(parse_formula(ok)) == ok


def test_family_languages_restrict_operators():
    with pytest.raises(FormulaError, match="Implies\\(...\\) is not part of the Zebra language"):
        parse_formula("Implies(a == 1, b == 2)", ZEBRA_LANGUAGE)
    with pytest.raises(FormulaError, match="comparison <= is not part of the Zebra"):
        parse_formula("a <= 2", ZEBRA_LANGUAGE)
    with pytest.raises(FormulaError, match="arithmetic"):
        parse_formula("Knight(A) == 1 + 1", KNIGHTS_LANGUAGE)
    with pytest.raises(FormulaError, match="bare name"):
        parse_formula("A == B", KNIGHTS_LANGUAGE)
    assert to_text(parse_formula("Xor(Knight(A), Knave(B))", KNIGHTS_LANGUAGE)) == "Xor(Knight(A), Knave(B))"


def test_compile_checks_names_and_types():
    th = ZebraTheory(ABC)
    with pytest.raises(FormulaError, match="unknown value 'dgo'; did you mean 'dog'"):
        th.compile_text("dgo == 1")
    with pytest.raises(FormulaError, match="is a number, not a statement"):
        th.compile_text("dog + 1")
    with pytest.raises(FormulaError, match="compares a number with a statement"):
        th.compile_text("dog == (cat == 1)")
    with pytest.raises(FormulaError, match="number where a statement was expected"):
        th.compile_text("Not(dog)")
    e = th.compile_text("Or(dog == cat + 1, dog == cat - 1)")
    s = z3.Solver()
    s.add(th.vars["dog"] == 1, th.vars["cat"] == 2)
    assert s.check(z3.Not(e)) == z3.unsat  # dog in 1, cat in 2: next to each other


def test_lsat_grouping_compile_and_options():
    inst = LSATInstance(game="grouping", entities=["A", "B"], groups=["X", "Y"], capacities=[], scenario="",
                        rules=["r"], rule_formulas=["Assign(A, X)"], question_type="could_be_true", question="q",
                        facts=[], fact_formulas=[], options=["o"] * 5,
                        option_formulas=["Assign(B, X)"] * 5, answer="A")
    th = LSATTheory(inst)
    with pytest.raises(FormulaError, match="unknown group 'Z'"):
        th.compile_text("Assign(A, Z)")
    with pytest.raises(FormulaError, match="names appear inside Assign"):
        th.compile_text("A == 1")
    with pytest.raises(FormulaError, match="not among the parsed options"):
        th.compile_text("Unsat(Option_B)")
    th.options["B"] = th.compile_text("Assign(B, Y)")
    unsat_b = th.compile_text("Unsat(Option_B)")
    s = z3.Solver()
    s.add(*th.domain())
    assert s.check(unsat_b, th.assign["B", "Y"]) == z3.unsat  # Unsat(Option_B) is Not(option B)


_names = st.sampled_from(["a", "b", "cat", "Alice", "x_1"])
_ints = st.integers(0, 9).map(str)


def _terms():
    return st.recursive(st.one_of(_names, _ints),
                        lambda t: st.tuples(t, st.sampled_from([" + ", " - "]), _ints).map("".join), max_leaves=4)


def _formulas():
    atom = st.tuples(_terms(), st.sampled_from([" == ", " != ", " < ", " > "]), _terms()).map("".join)
    return st.recursive(atom, lambda f: st.one_of(
        f.map(lambda x: f"Not({x})"),
        st.lists(f, min_size=1, max_size=3).map(lambda xs: "And(" + ", ".join(xs) + ")"),
        st.lists(f, min_size=1, max_size=3).map(lambda xs: "Or(" + ", ".join(xs) + ")"),
    ), max_leaves=8)


@settings(max_examples=80)
@given(_formulas())
def test_canonical_text_round_trips(text):
    node = parse_formula(text)
    again = parse_formula(to_text(node))
    assert again == node and to_text(again) == to_text(node)


@settings(max_examples=150)
@given(st.text(max_size=200))
def test_arbitrary_text_parses_or_fails_with_a_reason(text):
    try:
        parse_formula(text)
    except FormulaError as e:
        assert str(e)
