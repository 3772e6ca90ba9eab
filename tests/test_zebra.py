"""Zebra generator: every Table 5 size, unique solutions (checked by brute force and by Z3, neither
of which the generator uses), minimal clue sets, seed determinism, the clue kinds of App. E.1."""
import itertools
import math

import numpy as np
import pytest
import z3
from hypothesis import given, settings, strategies as st

from solvergym.envs.logic_steps.formula import parse_formula
from solvergym.envs.zebra.generator import (
    BUCKETS, CLUE_KINDS, SIZES, ZebraInstance, bucket_of, generate_zebra, puzzle_text, render_clue,
)
from solvergym.envs.zebra.verify import ZebraTheory
from zebra_reference import evaluate_on_worlds, zebra_worlds


# ------------------------------------------------------------------ an independent reference
def brute_force_solutions(inst: ZebraInstance, formulas=None) -> np.ndarray:
    """Boolean mask over every assignment of houses ((N!)^M worlds) that satisfies the clues."""
    houses = zebra_worlds(inst)
    ok = np.ones(len(next(iter(houses.values()))), dtype=bool)
    for f in inst.clue_formulas if formulas is None else formulas:
        ok &= evaluate_on_worlds(parse_formula(f), houses)
    return ok


def z3_count(inst: ZebraInstance, limit: int = 2) -> int:
    th = ZebraTheory(inst)
    s = z3.Solver()
    s.add(*th.domain(), *[th.compile_text(f) for f in inst.clue_formulas])
    count = 0
    while count < limit and s.check() == z3.sat:
        m = s.model()
        count += 1
        s.add(z3.Or(*[v != m.eval(v) for v in th.vars.values()]))
    return count


SMALL = [s for s in SIZES if math.factorial(s[0]) ** s[1] <= 15_000]


def test_table5_sizes_and_buckets():
    assert len(SIZES) == 25 and (2, 2) in SIZES and (6, 6) in SIZES
    assert {b: len(v) for b, v in BUCKETS.items()} == {"Small": 8, "Medium": 7, "Large": 5, "X-Large": 5}
    assert bucket_of(4, 5) == "Large" and bucket_of(6, 2) == "Medium" and bucket_of(5, 6) == "X-Large"
    assert bucket_of(7, 7) is None
    for n, m in SIZES:
        inst = generate_zebra(n, m, n * 10 + m)
        assert (inst.n_houses, len(inst.attributes)) == (n, m) and inst.size == f"{n}x{m}"
        assert inst.attributes[0] == "Name" and inst.solution_header == ["House"] + inst.attributes
        inst.validate()


@settings(max_examples=40)
@given(size=st.sampled_from(SMALL), seed=st.integers(0, 2**31 - 1))
def test_unique_solution_by_brute_force(size, seed):
    inst = generate_zebra(*size, seed)
    ok = brute_force_solutions(inst)
    assert ok.sum() == 1
    # ... and it is the planted one
    hs = inst.houses()
    n = inst.n_houses
    perms = list(itertools.permutations(range(1, n + 1)))
    pick = [perms.index(tuple(hs[t] for t in vs)) for vs in inst.values]
    flat = 0
    for p in pick:
        flat = flat * len(perms) + p
    assert ok[flat]


@settings(max_examples=15)
@given(size=st.sampled_from([s for s in SMALL if s != (4, 3)]), seed=st.integers(0, 2**31 - 1))
def test_clue_sets_are_minimal(size, seed):
    inst = generate_zebra(*size, seed)
    for i in range(len(inst.clue_formulas)):
        rest = inst.clue_formulas[:i] + inst.clue_formulas[i + 1:]
        assert brute_force_solutions(inst, rest).sum() > 1, f"clue {i} is redundant"


@pytest.mark.parametrize("size, seed", [((5, 5), 0), ((6, 6), 1), ((6, 4), 2), ((5, 6), 3)])
def test_unique_solution_by_z3_on_large_sizes(size, seed):
    inst = generate_zebra(*size, seed)
    assert z3_count(inst) == 1


def test_unminimized_sets_are_supersets_and_still_unique():
    full = generate_zebra(3, 3, 7, minimize=False)
    assert brute_force_solutions(full).sum() == 1
    assert len(full.clues) >= len(generate_zebra(3, 3, 7).clues)


def test_seed_determinism_and_json_round_trip():
    a = generate_zebra(5, 4, 123)
    b = generate_zebra(5, 4, np.random.default_rng(123))
    assert a.to_json() == b.to_json() and a.instance_id == b.instance_id
    assert generate_zebra(5, 4, 124).to_json() != a.to_json()
    again = ZebraInstance.from_json(a.to_json())
    assert again == a and isinstance(again.values[0], list)


def test_clue_kinds_and_rendering():
    kinds = set()
    for seed in range(40):
        inst = generate_zebra(5, 3, seed)
        kinds.update(inst.clue_kinds)
        for clue, f in zip(inst.clues, inst.clue_formulas):
            assert clue.endswith(".") and parse_formula(f)
    assert kinds == set(CLUE_KINDS)
    attr_of = {"Alice": "Name", "cat": "Pet", "tea": "Drink"}
    assert render_clue("immediately_left", "Alice", "cat", attr_of) == (
        "Alice lives directly left of the person who keeps the cat.", "Alice + 1 == cat")
    assert render_clue("one_between", "Alice", "tea", attr_of)[1] == "Or(Alice + 2 == tea, tea + 2 == Alice)"
    assert render_clue("next_to", "cat", "tea", attr_of)[1] == "Or(cat == tea + 1, cat == tea - 1)"
    assert render_clue("fixed_house", "cat", 5, attr_of) == ("The person who keeps the cat lives in the fifth house.",
                                                              "cat == 5")
    text = puzzle_text(generate_zebra(3, 3, 0))
    assert "numbered 1 to 3 from left to right" in text and "Clues:" in text


def test_values_are_listed_in_an_order_that_hides_the_solution():
    for seed in range(5):
        inst = generate_zebra(4, 4, seed)
        assert all(vs == sorted(vs) for vs in inst.values)


def test_validation_rejects_broken_instances():
    inst = generate_zebra(3, 3, 0)
    bad = inst.to_dict()
    bad["solution"][0][1], bad["solution"][1][1] = bad["solution"][0][1], bad["solution"][0][1]
    with pytest.raises(ValueError, match="not a permutation"):
        ZebraInstance.from_dict(bad)
    with pytest.raises(ValueError):
        generate_zebra(1, 3, 0)
    with pytest.raises(ValueError, match="unknown clue kinds"):
        generate_zebra(3, 3, 0, clue_weights={"diagonal": 1.0})
