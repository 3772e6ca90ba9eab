"""Spring's Definitions 1-6 (§3.1) and §4.2, checked by the Z3 verifier (not asserted by hand),
including the App. A examples and the edge cases the definitions spell out."""
import numpy as np
import z3
import pytest
from hypothesis import given, settings, strategies as st

from solvergym.envs.knights.generator import KnightsInstance
from solvergym.envs.knights.verify import KNIGHTS, KnightsTheory
from solvergym.envs.logic_steps.reward import get_preset
from solvergym.envs.logic_steps.trace import TraceSession
from solvergym.envs.logic_steps.verdict import StepVerdict
from solvergym.envs.logic_steps.verifier import StepVerifier, strongly_implies
from solvergym.envs.lsat.generator import LSATInstance
from solvergym.envs.lsat.verify import LSAT
from solvergym.envs.zebra.generator import ZebraInstance, generate_zebra
from solvergym.envs.zebra.verify import ZEBRA, ZebraTheory

# Spring App. A.1: three houses, Person / Pet / Drink, six clues; solution Alice-dog-coffee,
# Bob-cat-tea, Carol-fish-juice.
ABC = ZebraInstance(
    n_houses=3, attributes=["Name", "Pet", "Drink"],
    values=[["Alice", "Bob", "Carol"], ["cat", "dog", "fish"], ["coffee", "juice", "tea"]],
    solution=[["Alice", "dog", "coffee"], ["Bob", "cat", "tea"], ["Carol", "fish", "juice"]],
    clues=["Alice lives immediately to the left of the cat owner.", "Bob lives in the house where tea is served.",
           "The person in House 2 drinks tea.", "Carol owns the fish.", "The dog owner drinks coffee.",
           "Bob does not drink coffee."],
    clue_formulas=["Alice + 1 == cat", "Bob == tea", "tea == 2", "Carol == fish", "dog == coffee", "Bob != coffee"],
)

# Spring App. A.2: presentations A, B, C in positions 1-3; A before B, C not first, B not third.
ORDERING = LSATInstance(
    game="ordering", entities=["A", "B", "C"], groups=[], capacities=[],
    scenario="Three presentations, A, B and C, are scheduled in positions 1 to 3.",
    rules=["A must occur before B.", "C cannot be first.", "B cannot be third."],
    rule_formulas=["A < B", "C != 1", "B != 3"], question_type="must_be_true",
    question="Which of the following must be true?", facts=[], fact_formulas=[],
    options=["A is first.", "B is first.", "C is first.", "A is third.", "A is second."],
    option_formulas=["A == 1", "B == 1", "C == 1", "A == 3", "A == 2"], answer="A",
)

# Spring App. A.3: A says "B is a knave"; B says "A and C are of the same type"; C says "A is a knight".
KNK = KnightsInstance(names=["A", "B", "C"],
                      statements=[["knave", 1], ["iff", ["knight", 0], ["knight", 2]], ["knight", 0]],
                      solution=[False, True, False], depth=2, width=2)


def session(family, inst, premises=None, **kw):
    s = TraceSession(family, inst, get_preset("spring"), **kw)
    obj = family.gold_answer(inst)
    if premises is not None:
        obj[family.premise_groups[0].key] = premises
    assert s.set_premises(obj) == []
    return s


def test_app_a1_zebra_examples():
    s = session(ZEBRA, ABC)
    assert (s.base.sat, s.base.unique, s.faithful) == (True, True, True)
    v = s.add_step("From Clue 1, Alice cannot live in House 3.", 1, "Alice != 3")
    assert (v.valid, v.contradictory, v.label) == (True, False, "novel")
    v = s.add_step("Bob drinks coffee.", 2, "Bob == coffee")  # violates clues 2, 3 and 6
    assert (v.valid, v.contradictory, v.label) == (False, True, "contradictory") and not v.accepted
    v = s.add_step("Alice lives in House 1.", 3, "Alice == 1")
    assert v.label == "novel"
    v = s.add_step("Hence Bob owns the cat.", 4, "Bob == cat")  # Clue 1 + Alice in House 1
    assert (v.valid, v.tautological, v.implied_by_previous, v.novel) == (True, False, False, True)


def test_app_a2_ordering_examples():
    s = session(LSAT, ORDERING)
    assert s.base.sat and s.s_sat  # uniqueness is not required of AR-LSAT games
    v = s.add_step("Since C cannot be first, either A or B must be first.", 1, "Or(A == 1, B == 1)")
    # valid, but with three positions it says exactly what Rule 2 says: not novel (Def. 4)
    assert v.valid and v.label == "restates_premise" and v.equivalent_premise == 1
    v = s.add_step("B is first.", 2, "B == 1")
    assert v.contradictory and v.label == "contradictory"  # violates Rule 1
    v = s.add_step("Because A must occur before B, B cannot be first.", 3, "B != 1")
    assert v.label == "novel"
    v = s.add_step("Therefore A must be first.", 4, "A == 1")
    assert v.valid and v.label == "redundant"  # valid, but steps 1 and 3 already give it
    v = s.add_step("B must be second.", 5, "B == 2")  # Rules 1 and 3 with A first
    assert v.valid and v.novel
    v = s.add_step("C must be third.", 6, "C == 3")
    assert v.valid and v.label == "redundant"  # the domain's all-different leaves C only house 3


def test_app_a3_knights_examples():
    # the paper's conditional step is novel under Definition 4 ...
    spring = session(KNIGHTS, KNK, novelty="spring")
    assert spring.add_step("", 1, "Implies(Knight(A), Knave(B))").label == "novel"
    # ... but no role follows from it: the default rule pays facts, not case analysis
    s = session(KNIGHTS, KNK)
    assert (s.base.sat, s.base.unique) == (True, True)
    v = s.add_step("Suppose A is a knight; then B is a knave.", 1, "Implies(Knight(A), Knave(B))")
    assert v.valid and v.label == "no_new_fact" and not v.novel
    v = s.add_step("A is a knight.", 2, "Knight(A)")
    assert v.label == "contradictory"
    for k, (text, f) in enumerate([("A is a knave.", "Knave(A)"), ("B is a knight.", "Knight(B)"),
                                   ("C is a knave.", "Knave(C)")], 3):
        v = s.add_step(text, k, f)
        assert v.valid and not v.contradictory, f
    res = s.finish({"solution": {"A": "knave", "B": "knight", "C": "knave"}}, format_ok=True)
    assert res.correct and res.metrics == {"puzzle_acc": 1.0, "person_acc": 1.0,
                                           "persons_right": 3, "persons_total": 3}
    # Def. 6 over every extracted step: the contradictory "Knight(A)" cannot coexist with F
    assert res.consistent is False
    s2 = session(KNIGHTS, KNK, consistency_over="accepted")
    for k, f in enumerate(["Implies(Knight(A), Knave(B))", "Knight(A)", "Knave(A)", "Knight(B)", "Knave(C)"], 1):
        s2.add_step("", k, f)
    assert s2.finish({"solution": {"A": "knave", "B": "knight", "C": "knave"}}, format_ok=True).consistent is True


def test_definition_1_strong_implication_excludes_vacuous_implication():
    x, y = z3.Ints("x y")
    phi = [x >= 1, x <= 3, y >= 1, y <= 3, x != y]
    assert strongly_implies(phi, x == 1, y != 1)
    assert not strongly_implies(phi, x == 1, y == 2)  # y may be 3
    # Φ ∪ {A} inconsistent: Φ ∪ {A, ¬B} is UNSAT, yet A does not strongly imply B
    assert not strongly_implies(phi, z3.And(x == 1, x == 2), y == 2)
    th = ZebraTheory(ABC)
    v = StepVerifier(th, [])
    assert v.strongly_implies([], th.compile_text("Alice == 1"), th.compile_text("Bob != 1"))
    assert not v.strongly_implies([], th.compile_text("And(Alice == 1, Alice == 2)"), th.compile_text("Bob == 2"))


def test_definition_2_valid():
    s = session(ZEBRA, ABC)
    assert s.add_step("", 1, "Bob == 2").valid  # clues 2 + 3
    v = s.add_step("", 2, "Or(Alice == 1, Alice == 2)")  # true, and forced: Bob is in 2, Alice not in 3
    assert v.valid
    v = s.add_step("", 3, "Carol == 1")  # consistent with nothing forced? no: it is false in the only solution
    assert not v.valid and v.contradictory


def test_definition_2_valid_requires_entailment_not_just_consistency():
    # drop clue 3 (tea == 2): several solutions remain, so a consistent step can be unsupported
    s = session(ZEBRA, ABC, ["C1: Alice + 1 == cat.", "C2: Bob == tea.", "C3: Carol == fish.", "C4: dog == coffee.",
                             "C5: Bob != coffee."])
    assert s.base.sat and s.base.unique is False and not s.s_sat
    v = s.add_step("", 1, "Bob == 3")
    assert (v.valid, v.contradictory, v.label) == (False, False, "unsupported") and v.accepted
    # P^nc keeps the unsupported step (Def. 5 reads "previously accepted non-contradictory"),
    # so a step that contradicts it is contradictory even though the premises allow it
    v = s.add_step("", 2, "Bob == 2")
    assert v.contradictory and v.valid is False and "earlier accepted steps" in v.reason


def test_accept_valid_keeps_unsupported_steps_out_of_the_state():
    s = session(ZEBRA, ABC, ["C1: Alice + 1 == cat.", "C2: Bob == tea.", "C3: Carol == fish.", "C4: dog == coffee.",
                             "C5: Bob != coffee."], accept="valid")
    assert s.add_step("", 1, "Bob == 3").label == "unsupported"
    v = s.add_step("", 2, "Bob == 2")
    assert v.label == "unsupported" and not v.contradictory


def test_accept_novel_keeps_restated_premises_out_of_the_state():
    # Bob == 2 follows from C2 (Bob == tea) and C3 (tea == 2) together: once both are restated and
    # accepted it is "implied by previous steps"; the gold traces accept novel steps only
    labels = {}
    for accept in ("non_contradictory", "novel"):
        s = session(ZEBRA, ABC, accept=accept)
        assert [s.add_step("", k, f).label for k, f in enumerate(["Bob == tea", "tea == 2"], 1)] == \
            ["restates_premise"] * 2
        labels[accept] = s.add_step("", 3, "Bob == 2").label
    assert labels == {"non_contradictory": "redundant", "novel": "novel"}
    with pytest.raises(ValueError, match="accept must be one of"):
        session(ZEBRA, ABC, accept="everything")


def test_definition_3_tautological_steps_follow_from_the_domain_alone():
    s = session(ZEBRA, ABC)
    for f in ["Alice != Bob",  # the same attribute: all-different
              "Or(dog == 1, dog == 2, dog == 3)",  # the range 1..3
              "Not(And(cat == 1, cat == 2))",
              "Or(Alice == 1, Alice != 1)"]:
        v = s.add_step("", None, f)
        assert (v.valid, v.tautological, v.novel, v.label) == (True, True, False, "tautological"), f
    v = s.add_step("", None, "Alice != cat")  # different attributes: needs clue 1, not tautological
    assert (v.valid, v.tautological, v.label) == (True, False, "no_new_fact")  # but it fixes no cell
    v = session(ZEBRA, ABC, novelty="spring").add_step("", None, "Alice != cat")
    assert (v.valid, v.tautological, v.label) == (True, False, "novel")


def test_definition_4_novelty():
    s = session(ZEBRA, ABC)
    v = s.add_step("", 1, "tea == 2")  # literally clue C3
    assert v.valid and not v.novel and v.equivalent_premise == 2 and v.label == "restates_premise"
    v = s.add_step("", 2, "Not(tea != 2)")  # now also implied by the accepted step 1
    assert v.label == "redundant"
    fresh = session(ZEBRA, ABC)
    v = fresh.add_step("", 1, "Not(tea != 2)")  # C3 written differently
    assert v.label == "restates_premise" and v.equivalent_premise == 2
    v = fresh.add_step("", 2, "coffee - 1 + 1 == dog")  # C5 written differently
    assert v.label == "restates_premise" and v.equivalent_premise == 4
    v = s.add_step("", 4, "Bob == 2")
    assert v.label == "novel"
    v = s.add_step("", 5, "Bob == 2")  # already accepted
    assert v.label == "redundant" and v.implied_by_previous
    v = s.add_step("", 6, "Bob != 3")  # implied by Bob == 2 under Γ_dom
    assert v.label == "redundant"
    v = s.add_step("", 7, "Or(Bob == 2, Carol == 1)")  # weaker than an accepted step
    assert v.label == "redundant"


def test_definition_5_contradiction_is_relative_to_the_current_context():
    s = session(ZEBRA, ABC)
    assert s.add_step("", 1, "Alice == 1").label == "novel"
    v = s.add_step("", 2, "Alice == 2")
    assert v.contradictory and not v.accepted
    # a contradictory step is not in P^nc: the next step is judged without it
    v = s.add_step("", 3, "Alice != 2")
    assert v.label == "redundant"  # implied by the accepted Alice == 1


def test_definition_6_consistency_with_the_final_solution():
    s = session(ZEBRA, ABC)
    s.add_step("", 1, "Bob == 2")
    good = {"header": ["House", "Name", "Pet", "Drink"],
            "rows": [["1", "Alice", "dog", "coffee"], ["2", "Bob", "cat", "tea"], ["3", "Carol", "fish", "juice"]]}
    assert s.finish({"solution": good}, format_ok=True).consistent is True
    s = session(ZEBRA, ABC)
    s.add_step("", 1, "Bob == 2")
    swapped = {"header": good["header"], "rows": [["1", "Bob", "dog", "coffee"], ["2", "Alice", "cat", "tea"],
                                                  ["3", "Carol", "fish", "juice"]]}
    res = s.finish({"solution": swapped}, format_ok=True)
    assert res.consistent is False and not res.correct  # the step says Bob is in 2, the table says 1
    # Def. 6 is over Γ_dom ∪ Z ∪ {F}: a wrong table with no steps is still consistent
    s = session(ZEBRA, ABC)
    assert s.finish({"solution": swapped}, format_ok=True).consistent is True
    # ... unless the table itself breaks Γ_dom (a value in two houses)
    dup = {"header": good["header"], "rows": [["1", "Alice", "cat", "coffee"], ["2", "Bob", "cat", "tea"],
                                              ["3", "Carol", "fish", "juice"]]}
    assert session(ZEBRA, ABC).finish({"solution": dup}, format_ok=True).consistent is False


def test_section_4_2_satisfiable_and_unique():
    unsat = session(ZEBRA, ABC, ["C1: Bob == tea.", "C2: tea == 2.", "C3: Bob == 3."])
    assert unsat.base.sat is False and not unsat.s_sat
    v = unsat.add_step("", 1, "Bob == 2")
    assert v.label == "unverified" and v.parsed  # no solver state to judge against
    loose = session(ZEBRA, ABC, ["C1: Bob == tea."])
    assert loose.base.sat and loose.base.unique is False and not loose.s_sat
    strict = session(ZEBRA, ABC)
    assert strict.s_sat and strict.base.solution["house_Bob"] == 2


def test_premises_equivalent_to_the_true_clues():
    rewritten = ["C1: cat - 1 == Alice.", "C2: tea == Bob.", "C3: 2 == tea.", "C4: fish == Carol.",
                 "C5: coffee == dog.", "C6: Not(Bob == coffee)."]
    assert session(ZEBRA, ABC, rewritten).faithful is True
    # premises with the same unique solution have the same models: equivalent, whatever they say
    same = ["C1: Alice == 1.", "C2: Bob == 2.", "C3: dog == 1.", "C4: cat == 2.", "C5: coffee == 1.", "C6: tea == 2."]
    assert session(ZEBRA, ABC, same).faithful is True
    # a mis-parse with another unique solution passes Spring's §4.2 gate but not the default one
    other = ["C1: Alice == 3.", "C2: Bob == 2.", "C3: dog == 1.", "C4: cat == 2.", "C5: coffee == 1.", "C6: tea == 2."]
    s = session(ZEBRA, ABC, other, require_faithful=False)
    assert s.s_sat and s.spring_sat and s.faithful is False
    strict = TraceSession(ZEBRA, ABC, get_preset("spring"))
    obj = ZEBRA.gold_answer(ABC)
    obj["syntactic_clues"] = other
    strict.set_premises(obj)
    assert not strict.s_sat and strict.spring_sat


_STEP_POOL = ["Alice == 1", "Alice == 2", "Bob == 2", "Bob != 3", "cat == 2", "Bob == cat", "Alice != 3",
              "Or(Alice == 1, Alice == 3)", "dog == 3", "tea == 2", "Alice != Bob", "Carol + 1 == dog",
              "And(fish == 3, juice == 3)", "Not(coffee == 1)", "Or(cat < dog, cat > dog)"]


@settings(max_examples=25)
@given(st.lists(st.sampled_from(_STEP_POOL), min_size=1, max_size=8))
def test_incremental_and_rebuild_give_the_same_verdicts(steps):
    a = session(ZEBRA, ABC, incremental=True)
    b = session(ZEBRA, ABC, incremental=False)
    for k, f in enumerate(steps, 1):
        da, db = a.add_step("", k, f).as_dict(), b.add_step("", k, f).as_dict()
        # new_facts are examples, found through the solver's models: only whether there are any
        assert bool(da.pop("new_facts")) == bool(db.pop("new_facts"))
        assert da == db


def test_incremental_matches_rebuild_on_generated_puzzles():
    rng = np.random.default_rng(5)
    for seed in range(3):
        inst = generate_zebra(4, 4, seed)
        tokens = [t for vs in inst.values for t in vs]
        steps = [f"{rng.choice(tokens)} == {rng.integers(1, 5)}" for _ in range(10)]
        a, b = session(ZEBRA, inst), session(ZEBRA, inst, incremental=False)
        for k, f in enumerate(steps, 1):
            assert a.add_step("", k, f).label == b.add_step("", k, f).label


def test_sat_claims():
    inst = LSATInstance(
        game="ordering", entities=["A", "B", "C"], groups=[], capacities=[], scenario="", rules=["r"] * 3,
        rule_formulas=["A < B", "C != 1", "B != 3"], question_type="could_be_true", question="q", facts=[],
        fact_formulas=[], options=["o"] * 5, option_formulas=["A == 1", "B == 1", "C == 1", "A == 3", "C == 2"],
        answer="A")
    s = session(LSAT, inst)
    v = s.add_step("", 1, "Sat(Option_A)")
    assert (v.claim, v.valid, v.label) == ("sat", True, "novel")
    assert s.add_step("", 2, "Sat(Option_A)").label == "redundant"
    v = s.add_step("", 3, "Sat(Option_B)")
    assert v.label == "contradictory" and v.valid is False
    v = s.add_step("", 4, "Unsat(Option_B)")  # Not(B == 1): valid and new
    assert v.label == "novel" and v.claim is None
    v = s.add_step("", 5, "Unsat(Option_A)")  # A == 1 is the only outcome: claiming it impossible contradicts
    assert v.label == "contradictory"


def test_step_verdict_is_json_ready():
    import json

    s = session(KNIGHTS, KNK)
    v = s.add_step("x", 1, "Knave(A)")
    json.dumps(v.as_dict())
    assert isinstance(v, StepVerdict) and v.formula == "Knave(A)"


def test_knights_domain_is_empty_so_tautologies_are_propositional():
    th = KnightsTheory(KNK)
    assert th.domain() == []
    s = session(KNIGHTS, KNK)
    assert s.add_step("", 1, "Or(Knight(A), Knave(A))").label == "tautological"
    assert s.add_step("", 2, "Implies(Knight(B), Knight(B))").label == "tautological"
    assert s.add_step("", 3, "Knight(B) != Knave(B)").label == "tautological"
