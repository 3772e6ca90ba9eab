import itertools
import math

import numpy as np
import pytest
from hypothesis import given, strategies as st
from pysat.solvers import Solver

from solvergym.envs.sat import cnf as C
from solvergym.envs.sat import generator as G
from solvergym.envs.sat.cnf import (
    check_drup, count_models, first_violated, format_clauses, formula_key, parse_clauses, var_index, var_name,
)
from solvergym.envs.sat.datasets import SATURN_HARD_LEVELS
from solvergym.envs.sat.decision import decision_instance
from solvergym.envs.sat.generator import clauses_per_solution, difficulty, plant, sat_construction
from solvergym.envs.sat.verify import saturn_reward, satisfies_batch


def brute_force_models(clauses, k):
    """Independent reference: every assignment as a bit string, checked literal by literal."""
    out = []
    for bits in itertools.product("01", repeat=k):
        if all(any((bits[abs(x) - 1] == "1") == (x > 0) for x in c) for c in clauses):
            out.append("".join(bits))
    return out


# D(n,k,l) worked out by hand for Table 10's levels: log2 k + 2 log2 l - n + k/n.
TABLE_10_D = {
    (3, 7, 40): 12.784544, (3, 5, 25): 10.276307, (3, 5, 20): 9.632451, (3, 6, 20): 10.228819,
    (3, 7, 20): 10.784544, (4, 7, 40): 11.201211, (4, 8, 40): 11.643856, (4, 7, 20): 9.201211,
    (6, 7, 40): 8.617878, (5, 8, 40): 10.243856,
}


def test_difficulty_matches_hand_values_for_table_10():
    assert set(TABLE_10_D) == set(SATURN_HARD_LEVELS)
    for level, d in TABLE_10_D.items():
        assert difficulty(*level) == pytest.approx(d, abs=1e-6)
    assert difficulty(3, 5, 5) < difficulty(3, 5, 6) < difficulty(3, 5, 13)


def test_variable_naming_round_trips_beyond_26():
    names = [var_name(i) for i in range(300)]
    assert names[:3] == ["A", "B", "C"] and names[25] == "Z" and names[26] == "A1" and names[53] == "B2"
    assert len(set(names)) == 300
    assert [var_index(n) for n in names] == list(range(300))
    clauses = [[1, -27, 300], [-53, 2, 26]]
    assert parse_clauses(format_clauses(clauses)) == clauses
    for bad in ["", "A & ", "!!A", "a", "A0", "AB & 1", "A!"]:
        with pytest.raises(ValueError):
            parse_clauses(bad)
    with pytest.raises(ValueError, match="out of range"):
        parse_clauses("AB!F", k=5)


@given(n=st.integers(1, 5), extra=st.integers(0, 5), l=st.integers(1, 30), seed=st.integers(0, 2**32 - 1))
def test_planted_instances_are_satisfied_and_well_formed(n, extra, l, seed):
    k = n + extra
    l = min(l, clauses_per_solution(n, k))
    inst = plant(n, k, l, seed)
    assert first_violated(inst.clauses, inst.solution) is None
    assert inst.l == l and len({tuple(c) for c in inst.clauses}) == l  # distinct clauses
    for c in inst.clauses:
        assert len(c) == n and len({abs(x) for x in c}) == n and all(1 <= abs(x) <= k for x in c)
        assert [abs(x) for x in c] == sorted(abs(x) for x in c)  # SATURN orders literals by variable
    models = brute_force_models(inst.clauses, k)
    assert inst.solution in models
    assert inst.model_count == len(models) and inst.model_count_exact
    assert inst.chance_success == pytest.approx(len(models) / 2**k)
    assert plant(n, k, l, seed) == inst  # seeded


def test_verifier_agrees_with_brute_force_on_every_assignment():
    for seed in range(20):
        inst = plant(3, 6, 12, seed)
        models = set(brute_force_models(inst.clauses, 6))
        for bits in map("".join, itertools.product("01", repeat=6)):
            v = saturn_reward(f"\\boxed{{{bits}}}", inst.clauses, 6)
            assert v.correct == (bits in models)
            assert sum(v.components.values()) == (1.0 if bits in models else 0.0)
        masks = np.array([int(b[::-1], 2) for b in map("".join, itertools.product("01", repeat=6))])
        assert satisfies_batch(inst.clauses, masks).sum() == len(models)


def test_any_model_from_a_cdcl_solver_is_accepted_and_a_flipped_bit_rejected():
    checked_flips = 0
    for seed in range(40):
        inst = plant(3, 8, 25, seed)
        with Solver(name="glucose4", bootstrap_with=inst.clauses) as s:
            assert s.solve()
            model = s.get_model()
            # find several distinct models by blocking
            for _ in range(3):  # several distinct models, found by blocking each one
                got = {abs(x): x > 0 for x in model}
                bits = "".join("1" if got.get(i + 1, False) else "0" for i in range(8))
                assert saturn_reward(f"\\boxed{{{bits}}}", inst.clauses, 8).correct
                s.add_clause([-x for x in model])
                if not s.solve():
                    break
                model = s.get_model()
        # a flip that breaks a clause: a variable that is the only true literal of some clause
        for c in inst.clauses:
            true_lits = [x for x in c if (inst.solution[abs(x) - 1] == "1") == (x > 0)]
            if len(true_lits) == 1:
                v = abs(true_lits[0]) - 1
                flipped = inst.solution[:v] + ("0" if inst.solution[v] == "1" else "1") + inst.solution[v + 1:]
                verdict = saturn_reward(f"\\boxed{{{flipped}}}", inst.clauses, 8)
                assert not verdict.correct and sum(verdict.components.values()) == 0.0
                assert "falsifies clause" in verdict.reason
                checked_flips += 1
                break
    assert checked_flips > 20


def test_model_count_paths_agree():
    for seed, (k, l) in enumerate([(9, 4), (9, 20), (14, 10), (14, 60), (16, 70), (16, 8)]):
        inst = plant(3, k, l, seed)
        by_enum = C._count_by_enumeration(inst.clauses, k)
        assert C._count_by_cdcl(inst.clauses, k, 10**9) == (by_enum, True)
        assert count_models(inst.clauses, k) == (by_enum, True) == (inst.model_count, inst.model_count_exact)
    inst = plant(3, 9, 20, 1)
    assert C._count_by_enumeration(inst.clauses, 9) == len(brute_force_models(inst.clauses, 9))
    # above k = 20 the limit turns the count into a lower bound
    count, exact = count_models([[1, 2, 3]], 24, limit=50)
    assert count >= 50 and not exact
    assert count_models([[1, 2, 3], [-1], [-2], [-3]], 24) == (0, True)
    assert count_models([[1], [2]], 22) == (2**20, False)  # 2^20 > the default limit of 100,000


@given(st.data())
def test_the_bitset_count_is_the_enumeration_and_brute_force(data):
    k = data.draw(st.integers(0, 12))
    literal = st.integers(1, k).flatmap(lambda v: st.sampled_from([v, -v])) if k else st.nothing()
    clauses = data.draw(st.lists(st.lists(literal, max_size=min(k, 4)), max_size=12))
    by_bits = C._count_by_bitsets(clauses, k)
    assert by_bits == C._count_by_enumeration(clauses, k)  # a repeated literal or x | -x included
    if k <= 8:
        assert by_bits == sum(all(any((a >> (abs(x) - 1) & 1) == (x > 0) for x in c) for c in clauses)
                              for a in range(1 << k))


def test_chance_success_is_visible_and_controllable():
    easy = [plant(6, 7, 40, s) for s in range(60)]
    mean = np.mean([i.chance_success for i in easy])
    assert 0.40 < mean < 0.62  # SATURN's (6,7,40): a random guess wins about half the time
    bounded = [plant(6, 7, 40, s, max_chance_success=0.5) for s in range(30)]
    assert all(i.chance_success <= 0.5 for i in bounded)
    # with 6 literals per clause over 7 variables, no instance goes much below 1/2: the bound says so
    with pytest.raises(ValueError, match="chance success"):
        plant(6, 7, 40, 0, max_chance_success=0.3, max_tries=50)
    harder = [plant(5, 8, 40, s, max_chance_success=0.25) for s in range(10)]
    assert all(i.chance_success <= 0.25 for i in harder)


@pytest.mark.parametrize("level", [(3, 5, 13), (4, 8, 40), (5, 8, 40), (6, 7, 40)])
def test_sat_construction_gives_distinct_satisfied_instances(level):
    n, k, l = level
    insts = sat_construction(n, k, l, 120, 7)
    keys = {formula_key(i.clauses) for i in insts}
    assert len(insts) == 120 and len(keys) == 120
    for i in insts:
        assert (i.n, i.k, i.l) == level and first_violated(i.clauses, i.solution) is None
        assert len({tuple(c) for c in i.clauses}) == l
    again = sat_construction(n, k, l, 120, 7)
    assert [i.to_json() for i in again] == [i.to_json() for i in insts]
    excl = sat_construction(n, k, l, 60, 8, exclude=keys)
    assert not keys & {formula_key(i.clauses) for i in excl}


def test_sat_construction_reports_impossible_requests():
    with pytest.raises(ValueError, match="no cluster"):
        sat_construction(3, 20, 40, 5, 0)  # 100,000 pairs over 2^20 solutions: clusters too small
    with pytest.raises(ValueError, match="distinct instances"):
        sat_construction(2, 2, 3, 10, 0)  # each of the 4 solutions has exactly one 3-clause formula
    with pytest.raises(ValueError):
        plant(4, 3, 2)


def test_capped_pool_has_the_cap_and_uniform_clusters():
    clusters = G._capped_pool(np.random.default_rng(0), 4, 8, G.POOL_CAP)
    sizes = np.array([len(rows) for _, rows in clusters])
    assert sizes.sum() == G.POOL_CAP and len(clusters) == 2**8
    # a uniform subset of 268,800 pairs: each of the 256 clusters holds ~390.6 of its 1,050 clauses
    assert abs(sizes.mean() - G.POOL_CAP / 256) < 1e-9 and sizes.std() < 40


def test_planted_and_pool_construction_have_the_same_law():
    # (4,8,40) uses the capped pool; its statistics must match the pool-free planted generator
    pool = sat_construction(4, 8, 40, 600, 1)
    planted = [plant(4, 8, 40, s) for s in range(600)]
    for stat in (lambda i: i.model_count, lambda i: sum(x > 0 for c in i.clauses for x in c)):
        a = np.array([stat(i) for i in pool], float)
        b = np.array([stat(i) for i in planted], float)
        se = math.sqrt(a.var() / len(a) + b.var() / len(b))
        assert abs(a.mean() - b.mean()) < 4 * se


@pytest.mark.parametrize("target", [True, False])
def test_decision_labels_agree_across_solvers_and_are_certified(target):
    for seed in range(25):
        dims = [[3, 2], [3, 2, 2], [4, 3, 2]][seed % 3]
        inst = decision_instance(dims, [6, 12, 30][seed % 3], seed, satisfiable=target)
        assert inst.satisfiable is target
        for name in ("glucose4", "minisat22"):
            with Solver(name=name, bootstrap_with=inst.clauses) as s:
                assert s.solve() is target
        if target:
            assert first_violated(inst.clauses, "".join("1" if x > 0 else "0" for x in inst.model)) is None
        else:
            ok, why = check_drup(inst.clauses, inst.proof)
            assert ok, why
        inst.validate()


def test_drup_checker_rejects_bogus_proofs():
    sat_formula = [[1, 2], [-1, 2]]
    assert check_drup(sat_formula, ["0"])[0] is False
    assert check_drup(sat_formula, ["-2 0", "0"])[0] is False
    unsat = [[1, 2], [1, -2], [-1, 2], [-1, -2]]
    assert check_drup(unsat, ["1 0", "0"])[0] is True
    assert check_drup(unsat, ["1 0"])[0] is True  # propagation refutes after the lemma
    assert check_drup(unsat, ["x 0"])[0] is False
    inst = decision_instance([3, 2, 2], 8, 3, satisfiable=False)
    bad = dict(inst.to_dict(), proof=["0"])
    with pytest.raises(ValueError, match="does not check|not derive|does not follow"):
        type(inst).from_dict(bad)
    bad_model = dict(decision_instance([3, 2, 2], 8, 3, satisfiable=True).to_dict())
    bad_model["model"] = [-x for x in bad_model["model"]]
    with pytest.raises(ValueError):
        type(inst).from_dict(bad_model)


def test_decision_balance_and_mapping():
    labels = [decision_instance([3, 2, 2], 10, s, satisfiable=None).satisfiable for s in range(100)]
    assert 25 < sum(labels) < 75
    inst = decision_instance([3, 2, 2], 10, 5)
    assert len(inst.mapping) == 12 and list(inst.mapping)[0] == "x(0,0,0)"
    for clause, sentence in zip(inst.clauses, inst.conditions):
        for lit in clause:
            meaning = inst.mapping[inst.variables[abs(lit) - 1]]
            assert meaning.split(" ", 1)[0] in sentence  # the entity named in the sentence
