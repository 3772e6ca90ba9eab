"""SolverOR-v0's generators, reference model, solvers and oracle programs, with real solvers.

Every check would fail if the code were wrong: answers are re-solved by two solvers and by
brute force on the family's own data (independent of any solver), numbers are looked up in the
text, oracle programs are executed, and perturbing one coefficient must move the optimum.
"""
from __future__ import annotations

import functools
import itertools
import json
import math
import os
import re
import subprocess
import sys

import numpy as np
import pytest

from solvergym.envs.opt import (FAMILIES, FAMILY_KIND, LinearModel, ORInstance, generate, make_instance,
                                oracle_program, parse_program_output, reference_solve, solve_gurobi, solve_highs,
                                solve_ortools)
from solvergym.envs.opt.families.common import fmt
from solvergym.envs.opt.model import Constraint, Var
from solvergym.envs.opt.solve import objectives_agree

NAMES = list(FAMILIES)
SEEDS = range(5)
#: data keys whose numbers are not part of the problem (a phrasing index, min_cost_flow's witness flow)
NOT_IN_TEXT = {"phrasing", "witness"}


@functools.lru_cache(maxsize=None)
def _json(family: str, seed: int, infeasible: bool = False) -> str:
    inst = generate(family, np.random.default_rng(seed), size=2 + seed % 3, side_constraints=seed % 3,
                    infeasible_ratio=1.0 if infeasible else 0.0, irrelevant_facts=seed % 2 == 1)
    return inst.to_json()


def get(family: str, seed: int, infeasible: bool = False) -> ORInstance:
    return ORInstance.from_json(_json(family, seed, infeasible))


def second_solver(model: LinearModel):
    return solve_gurobi if model.is_quadratic else solve_ortools


def close(a: float, b: float) -> bool:
    return objectives_agree(a, b)


def numbers(obj, key=None):
    """Every (key, number) in a data dict, skipping bools and :data:`NOT_IN_TEXT`."""
    if key in NOT_IN_TEXT or isinstance(obj, bool):
        return
    if isinstance(obj, (int, float)):
        yield key, obj
    elif isinstance(obj, dict):
        for k, v in obj.items():
            yield from numbers(v, k)
    elif isinstance(obj, list):
        for v in obj:
            yield from numbers(v, key)


def in_text(n: float, text: str) -> bool:
    return re.search(r"(?<![\d.])" + re.escape(fmt(n)) + r"(?![\d]|\.\d)", text) is not None


def run_program(source: str) -> tuple[str | None, float | None]:
    proc = subprocess.run([sys.executable, "-c", source], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return parse_program_output(proc.stdout)


# --------------------------------------------------------------------------- per family, 5 seeds
@pytest.mark.parametrize("family", NAMES)
def test_instances_validate_round_trip_and_are_deterministic(family):
    questions = set()
    for seed in SEEDS:
        inst = get(family, seed)
        inst.validate()
        assert ORInstance.from_json(inst.to_json()) == inst
        assert inst.family == family and inst.status == "optimal" and isinstance(inst.answer, float)
        assert inst.features == LinearModel.from_dict(inst.model).features()
        assert inst.sense == inst.model["sense"]
        fresh = generate(family, np.random.default_rng(seed), size=2 + seed % 3, side_constraints=seed % 3,
                         irrelevant_facts=seed % 2 == 1)
        assert fresh.to_json() == inst.to_json()  # the same seed gives the same bytes
        questions.add(inst.question)
    assert len(questions) == len(SEEDS)  # different seeds, different problems


def test_same_seed_same_bytes_in_another_process():
    # another interpreter with another string-hash seed: no set or dict order leaks into a draw
    code = ("import numpy as np\nfrom solvergym.envs.opt import generate, FAMILIES\n"
            "print('\\n'.join(generate(f, np.random.default_rng(7), side_constraints=3, infeasible_ratio=0.4, "
            "irrelevant_facts=True).to_json() for f in FAMILIES))")
    here = [generate(f, np.random.default_rng(7), side_constraints=3, infeasible_ratio=0.4,
                     irrelevant_facts=True).to_json() for f in FAMILIES]
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONHASHSEED": "12345"})
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.splitlines() == here


@pytest.mark.parametrize("family", NAMES)
def test_two_solvers_agree_with_the_stored_answer(family):
    for seed in SEEDS:
        inst = get(family, seed)
        model = inst.linear_model()
        a, b = solve_highs(model, 10.0), second_solver(model)(model, 10.0)
        assert a.status == b.status == "optimal", (a, b)
        assert close(a.objective, inst.answer) and close(b.objective, inst.answer), (a.objective, b.objective, inst.answer)
        # the licence-limited third opinion agrees too (every default size fits it)
        g = solve_gurobi(model, 10.0)
        assert g.status == "optimal" and close(g.objective, inst.answer)
        # HiGHS's solution is feasible and its objective is the answer (checked by hand)
        x = a.values
        for c in model.constraints:
            lhs = sum(k * x[n] for n, k in c.coefs.items())
            assert c.lo is None or lhs >= c.lo - 1e-6 * (1 + abs(c.lo)), c.name
            assert c.hi is None or lhs <= c.hi + 1e-6 * (1 + abs(c.hi)), c.name
        assert close(model.evaluate(x), inst.answer)


@pytest.mark.parametrize("family", NAMES)
def test_every_number_of_the_data_is_in_the_question(family):
    for seed in SEEDS:
        inst = get(family, seed)
        found = list(numbers(inst.data))
        assert len(found) >= 4
        missing = [(k, n) for k, n in found if not in_text(n, inst.question)]
        assert not missing, missing
        for s in inst.data["side"]:  # each side requirement is stated with its numbers
            assert all(in_text(n, inst.question) for _, n in numbers(s))
        if inst.data.get("facts"):
            assert all(f in inst.question for f in inst.data["facts"])


@pytest.mark.parametrize("family", NAMES)
def test_oracle_programs_print_the_answer(family):
    inst = get(family, 0)
    solvers = ("gurobipy", "highspy") if FAMILY_KIND[family] == "QP" else ("gurobipy", "highspy", "ortools")
    for solver in solvers:
        source = oracle_program(inst.model, solver)
        assert "time_limit" in source.lower() or "TimeLimit" in source
        status, objective = run_program(source)
        assert status == "optimal", solver
        assert abs(objective - inst.answer) <= 1e-6 * (1 + abs(inst.answer)), (solver, objective, inst.answer)
    if FAMILY_KIND[family] == "QP":
        with pytest.raises(ValueError, match="quadratic"):
            oracle_program(inst.model, "ortools")


@pytest.mark.parametrize("family", NAMES)
def test_one_wrong_coefficient_changes_the_optimum(family):
    inst = get(family, 0)
    model = inst.linear_model()
    truth = reference_solve(model)
    x = truth.values
    better = 1 if model.sense == "max" else -1
    if model.is_quadratic:
        # halve the variance term of the largest holding: the old plan alone gets cheaper
        i, _, q = max((t for t in model.quadratic if t[0] == t[1]), key=lambda t: x[t[0]])
        d = model.to_dict()
        d["quadratic"] = [[a, b, c / 2 if (a, b) == (i, i) else c] for a, b, c in d["quadratic"]]
    else:
        # move the objective coefficient of the most used variable in the improving direction
        name = max((n for n in model.objective if model.objective[n] != 0), key=lambda n: abs(model.objective[n] * x[n]))
        assert abs(x[name]) > 1e-6
        d = model.to_dict()
        d["objective"][name] += better * 0.5 * abs(d["objective"][name])
    changed = reference_solve(LinearModel.from_dict(d))
    assert changed.status == "optimal"
    assert not close(changed.objective, inst.answer)
    assert (changed.objective - inst.answer) * better > 0


@pytest.mark.parametrize("family", NAMES)
def test_infeasible_ratio_one_gives_a_stated_contradiction(family):
    inst = get(family, 0, infeasible=True)
    assert inst.status == "infeasible" and inst.answer is None
    assert ORInstance.from_json(inst.to_json()) == inst
    assert inst.data["contradiction"] and inst.extra["infeasible_by_construction"]
    assert all(in_text(n, inst.question) for _, n in numbers(inst.data["contradiction"]))
    model = inst.linear_model()
    assert solve_highs(model).status == "infeasible"
    assert second_solver(model)(model).status == "infeasible"
    assert solve_gurobi(model).status == "infeasible"
    # without the contradiction, the same draw is solvable
    data = json.loads(json.dumps(inst.data))
    del data["contradiction"]
    _, plain = FAMILIES[family].finish(data)
    assert reference_solve(plain).status == "optimal"


@pytest.mark.parametrize("family", ["knapsack", "portfolio"])
def test_oracle_programs_report_infeasible(family):
    inst = get(family, 0, infeasible=True)
    for solver in ("gurobipy", "highspy") + (() if family == "portfolio" else ("ortools",)):
        status, objective = run_program(oracle_program(inst.model, solver))
        assert (status, objective) == ("infeasible", None), solver


# --------------------------------------------------------------------------- features and knobs
def test_features_mark_the_model_kinds():
    rng = np.random.default_rng
    pf = generate("portfolio", rng(1)).features
    assert pf["num_q_obj_terms"] > 0 and pf["num_int"] == pf["num_bin"] == 0
    for family in ("facility_location", "inventory_setup"):
        f = generate(family, rng(2)).features
        assert f["big_m"] is True and f["num_bin"] > 0 and f["num_continuous"] > 0
    lp = generate("product_mix", rng(3), size=4).features
    assert lp["num_int"] == lp["num_bin"] == 0 and lp["big_m"] is False and lp["sense"] == "max"
    ip = generate("product_mix", rng(3), size=4, integer=True).features
    assert ip["num_int"] == 4 and ip["num_continuous"] == 0
    for family in ("assignment", "knapsack", "bin_packing"):
        f = generate(family, rng(4)).features
        assert f["num_bin"] == f["num_vars"] and f["big_m"] is False
    assert set(FAMILY_KIND.values()) == {"LP", "IP", "MILP", "QP"} and len(FAMILIES) >= 11


def test_big_m_rule():
    def model(coef, others):
        vs = [Var("b", 0, 1, "B")] + [Var(f"x{k}") for k in range(len(others))]
        row = Constraint("r", {"b": -coef, **{f"x{k}": c for k, c in enumerate(others)}}, hi=0.0)
        m = LinearModel("min", vs, [row], {"b": 1.0})
        m.validate()
        return m.features()["big_m"]
    assert model(1000.0, [1.0, 1.0, 2.0]) is True  # 1000 x the median 1
    assert model(999.0, [1.0, 1.0, 2.0]) is False
    assert model(10000.0, [50.0]) is True  # absolute rule
    assert model(5000.0, []) is False  # a bound on the binary, not a link


def test_side_constraints_and_irrelevant_facts_only_add_what_they_say():
    for family in NAMES:
        for seed in range(11, 30):  # a seed whose first draw is kept both with and without the extras
            base = generate(family, np.random.default_rng(seed))
            sided = generate(family, np.random.default_rng(seed), side_constraints=2)
            if base.extra["attempt"] == sided.extra["attempt"] == 1:
                break
        facts = generate(family, np.random.default_rng(seed), irrelevant_facts=True)
        assert sided.data["side"] and sided.features["num_constrs"] > base.features["num_constrs"], family
        assert {k: v for k, v in sided.data.items() if k != "side"} == {k: v for k, v in base.data.items() if k != "side"}
        assert facts.model == base.model and facts.answer == base.answer  # same problem, more words
        assert 1 <= len(facts.data["facts"]) <= 2 and all(re.search(r"\d", f) for f in facts.data["facts"])
        assert all(f in facts.question and f not in base.question for f in facts.data["facts"])


def test_a_ratio_above_zero_adds_the_pivot_and_nothing_else():
    # ratio 0 draws what it always drew (the golden file's instances); above 0, the same draw plus
    # the family's pivot requirement, last (it may take the place of a side requirement of its kind)
    added = 0
    for family in NAMES:
        for seed in range(4):
            plain = generate(family, np.random.default_rng(seed), side_constraints=2)
            pivoted = generate(family, np.random.default_rng(seed), side_constraints=2, infeasible_ratio=1e-12)
            if plain.extra["attempt"] != 1 or pivoted.extra["attempt"] != 1:
                continue  # a discarded draw used the rng differently in the two
            a, b = plain.data["side"], pivoted.data["side"]
            assert b[:-1] == [s for s in a if s != b[-1]] and len(b) - len(a) in (0, 1), (family, seed)
            assert {k: v for k, v in plain.data.items() if k != "side"} == \
                {k: v for k, v in pivoted.data.items() if k != "side"}
            assert pivoted.status == "optimal" and "contradiction" not in pivoted.data
            added += len(b) == len(a) + 1
    assert added >= 2 * len(NAMES), added  # most draws state the pivot as one requirement more


def test_family_none_draws_from_all_families_deterministically():
    drawn = [generate(None, np.random.default_rng(s)).family for s in range(40)]
    assert set(drawn) <= set(FAMILIES) and len(set(drawn)) >= 7
    assert generate(None, np.random.default_rng(5)).to_json() == generate(None, np.random.default_rng(5)).to_json()


def test_bad_settings_are_value_errors():
    rng = np.random.default_rng(0)
    for kwargs in ({"size": 0}, {"size": 10 ** 4}, {"size": 2.5}, {"infeasible_ratio": 1.5}, {"side_constraints": -1},
                   {"integer": "yes"}):
        with pytest.raises(ValueError):
            generate("product_mix", rng, **kwargs)
    with pytest.raises(ValueError, match="unknown family"):
        generate("no_such_family", rng)
    with pytest.raises(ValueError):
        generate("portfolio", rng, size=21)  # gurobipy's QP limit is 200 variables; the family stops at 20


def test_size_one_is_accepted_by_every_family():
    # the env's knobs run size over 1-10 for every family; a degenerate size is drawn at the floor
    for family, fam in FAMILIES.items():
        inst = generate(family, np.random.default_rng(1), size=1)
        assert inst.status == "optimal" and inst.features["num_vars"] >= 2, family
        assert fam.min_size == 1 and fam.max_size >= 10


def test_zero_is_a_stored_answer_not_none():
    inst = get("min_cost_flow", 0)
    data = json.loads(json.dumps(inst.data))
    data["supply"] = [0] * len(data["supply"])
    data["demand"] = [0] * len(data["demand"])
    data["witness"] = [0] * len(data["witness"])
    data["side"], data["facts"] = [], []
    question, model = FAMILIES["min_cost_flow"].finish(data)
    zero = make_instance("min_cost_flow", question, data, model)
    assert zero.status == "optimal" and zero.answer == 0.0 and zero.answer is not None
    assert math.copysign(1.0, zero.answer) == 1.0  # not -0.0
    back = ORInstance.from_json(zero.to_json())
    assert back == zero and back.answer == 0.0


# --------------------------------------------------------------------------- model and solvers
def test_model_validation_rejects_malformed_models():
    good = {"sense": "min", "variables": [{"name": "x0", "lb": 0.0, "ub": None, "kind": "C"}],
            "constraints": [{"name": "c", "coefs": {"x0": 1.0}, "lo": 1.0, "hi": None}], "objective": {"x0": 2.0}}
    assert LinearModel.from_dict(good).to_dict()["objective"] == {"x0": 2.0}
    bad = [
        {**good, "sense": "minimise"},
        {**good, "objective": {"y": 1.0}},
        {**good, "objective": {"x0": float("nan")}},
        {**good, "variables": [{"name": "x[0]", "lb": 0.0, "ub": None, "kind": "C"}]},
        {**good, "variables": [{"name": "x0", "lb": 0.0, "ub": None, "kind": "Z"}]},
        {**good, "constraints": [{"name": "c", "coefs": {"x0": 1.0}, "lo": None, "hi": None}]},
        {**good, "quadratic": [["x0", "y", 1.0]]},
        {**good, "extra": 1},
    ]
    for d in bad:
        with pytest.raises(ValueError):
            LinearModel.from_dict(d)


def _hand_model() -> LinearModel:
    # max 3a + 2b - c + 5 with a free, b integer in [0, 4], c >= 0;
    # 1 <= a + b <= 6, a - c == 1, -2 <= a - b (ranged rows and an equation)
    # a = 1 + c makes the objective 8 + 2(b + c), and a + b <= 6 is b + c <= 5: the optimum is 18
    # (attained by several points, e.g. b = 4, c = 1, a = 2, where a - b = -2 is tight)
    m = LinearModel("max", [Var("a", None, None), Var("b", 0, 4, "I"), Var("c")],
                    [Constraint("r1", {"a": 1, "b": 1}, lo=1, hi=6), Constraint("r2", {"a": 1, "c": -1}, lo=1, hi=1),
                     Constraint("r3", {"a": 1, "b": -1}, lo=-2)],
                    {"a": 3, "b": 2, "c": -1}, constant=5)
    m.validate()
    return m


def test_every_backend_and_program_solves_a_hand_model():
    m = _hand_model()
    for solve in (solve_highs, solve_ortools, solve_gurobi, reference_solve):
        r = solve(m, 5.0)
        assert r.status == "optimal" and close(r.objective, 18.0), r
    for solver in ("gurobipy", "highspy", "ortools"):
        assert run_program(oracle_program(m, solver, time_limit_s=5.0)) == ("optimal", pytest.approx(18.0, abs=1e-6))


def test_a_concave_maximisation_qp_and_statuses():
    # max 4x - x^2 - y^2 + xy  s.t. x + y <= 3: gradient 4 - 2x + y = 0, -2y + x = 0 -> x = 8/3, y = 4/3
    # exceeds x + y <= 3; on x + y = 3: maximise 4x - x^2 - (3-x)^2 + x(3-x) = -3x^2 + 13x - 9 -> x = 13/6
    x = 13 / 6
    best = 4 * x - x * x - (3 - x) ** 2 + x * (3 - x)
    m = LinearModel("max", [Var("x"), Var("y")], [Constraint("c", {"x": 1, "y": 1}, hi=3)], {"x": 4.0},
                    [["x", "x", -1.0], ["y", "y", -1.0], ["x", "y", 1.0]])
    m.validate()
    for solve in (solve_highs, solve_gurobi, reference_solve):
        r = solve(m)
        assert r.status == "optimal" and abs(r.objective - best) < 1e-6, r
    assert solve_ortools(m).status == "error"
    for solver in ("gurobipy", "highspy"):
        status, value = run_program(oracle_program(m, solver))
        assert status == "optimal" and abs(value - best) < 1e-6
    unbounded = LinearModel("max", [Var("x"), Var("y", kind="I")], [Constraint("c", {"x": 1, "y": -1}, hi=1)], {"x": 1.0})
    unbounded.validate()
    assert reference_solve(unbounded).status == "unbounded"
    infeasible = LinearModel("min", [Var("x", 0, 3, "I")], [Constraint("c", {"x": 1}, lo=4)], {"x": 1.0})
    infeasible.validate()
    r = reference_solve(infeasible)
    assert r.status == "infeasible" and r.objective is None


def test_gurobi_size_limit_is_an_error_result():
    n = 2001
    m = LinearModel("max", [Var(f"x{k}", 0, 1) for k in range(n)],
                    [Constraint("c", {f"x{k}": 1.0 for k in range(n)}, hi=10)], {f"x{k}": 1.0 for k in range(n)})
    m.validate()
    r = solve_gurobi(m)
    assert r.status == "error" and "10010" in r.reason
    assert solve_highs(m).objective == pytest.approx(10.0)


# --------------------------------------------------------------------------- independent checks
def _lp_vertices_max(c, A, b):
    """max c'x, A x <= b, x >= 0 in 2 or 3 dimensions by enumerating vertices (no solver)."""
    n = len(c)
    rows = [list(r) for r in A] + [[-1.0 if k == j else 0.0 for k in range(n)] for j in range(n)]
    rhs = list(b) + [0.0] * n
    best = -math.inf
    for pick in itertools.combinations(range(len(rows)), n):
        M = np.array([rows[i] for i in pick], dtype=float)
        if abs(np.linalg.det(M)) < 1e-12:
            continue
        x = np.linalg.solve(M, np.array([rhs[i] for i in pick], dtype=float))
        if all(np.dot(r, x) <= v + 1e-9 for r, v in zip(rows, rhs)):
            best = max(best, float(np.dot(c, x)))
    return best


def test_product_mix_by_vertices_and_by_enumeration():
    for seed in range(3):
        inst = generate("product_mix", np.random.default_rng(seed), size=2)
        d = inst.data
        assert close(_lp_vertices_max(d["profit"], d["use"], d["available"]), inst.answer)
        ip = generate("product_mix", np.random.default_rng(seed), size=2, integer=True)
        d = ip.data
        top = [int(min(b / row[j] for row, b in zip(d["use"], d["available"]))) for j in range(2)]
        best = max(d["profit"][0] * a + d["profit"][1] * b
                   for a in range(top[0] + 1) for b in range(top[1] + 1)
                   if all(row[0] * a + row[1] * b <= cap + 1e-9 for row, cap in zip(d["use"], d["available"])))
        assert close(best, ip.answer) and ip.answer <= inst.answer + 1e-9


def test_diet_by_enumeration():
    for seed in range(3):
        inst = generate("diet", np.random.default_rng(seed), size=2, integer=True)
        d = inst.data
        top = [math.ceil(max(r / row[j] for row, r in zip(d["content"], d["required"]))) for j in range(2)]
        grid = np.array(list(itertools.product(range(top[0] + 1), range(top[1] + 1))), dtype=float)
        ok = np.all(grid @ np.array(d["content"]).T >= np.array(d["required"]) - 1e-9, axis=1)
        assert close(float((grid[ok] @ np.array(d["cost"])).min()), inst.answer)


def test_transportation_by_enumeration():
    inst = generate("transportation", np.random.default_rng(3), size=2)
    d = inst.data
    # two sources: source 1 sends x_j to sink j and source 2 the rest (over-shipping only adds
    # cost); a vertex of this totally unimodular problem is a multiple of the data's step
    step = math.gcd(*d["supply"], *d["demand"])
    ranges = [range(0, dj + 1, step) for dj in d["demand"]]
    grid = np.array(list(itertools.product(*ranges)), dtype=float)
    dem = np.array(d["demand"], dtype=float)
    ok = (grid.sum(1) <= d["supply"][0]) & ((dem - grid).sum(1) <= d["supply"][1])
    cost = grid @ np.array(d["cost"][0]) + (dem - grid) @ np.array(d["cost"][1])
    assert close(float(cost[ok].min()), inst.answer)


def test_assignment_by_permutations():
    for seed in range(3):
        inst = generate("assignment", np.random.default_rng(seed), size=4)
        v = inst.data["value"]
        totals = [sum(v[i][p[i]] for i in range(4)) for p in itertools.permutations(range(4))]
        assert close(max(totals) if inst.sense == "max" else min(totals), inst.answer)


def test_knapsack_by_subsets():
    for seed in range(3):
        inst = generate("knapsack", np.random.default_rng(seed), size=3)
        d = inst.data
        best = max(sum(d["value"][j] for j in s) for k in range(7) for s in itertools.combinations(range(6), k)
                   if sum(d["weight"][j] for j in s) <= d["capacity"] + 1e-9)
        assert close(best, inst.answer)


def test_bin_packing_by_enumeration():
    for seed in range(2):
        inst = generate("bin_packing", np.random.default_rng(seed), size=2)
        d = inst.data
        n = len(d["sizes"])
        best = n
        for placement in itertools.product(range(n), repeat=n):
            if max(placement) + 1 >= best:  # canonical: bins are opened in order
                continue
            if any(placement[i] > max(placement[:i], default=-1) + 1 for i in range(n)):
                continue
            loads = [0.0] * n
            for i, k in enumerate(placement):
                loads[k] += d["sizes"][i]
            if max(loads) <= d["capacity"] + 1e-9:
                best = max(placement) + 1
        assert best == inst.answer


def _solve_data(family: str, data: dict) -> float:
    question, model = FAMILIES[family].finish(data)
    assert all(in_text(n, question) for k, n in numbers(data) if k not in NOT_IN_TEXT)
    inst = make_instance(family, question, data, model)
    return inst.answer


def test_facility_location_by_hand():
    # open A only: 1000 + 400*2 + 600*5 = 4800; B only: 1500 + 400*4 + 600*1 = 3700;
    # both: 2500 + 400*2 + 600*1 = 3900  ->  3700
    data = {"theme": "warehouses", "org": "the retail chain", "sites": ["Aston", "Bexley"],
            "customers": ["store 1", "store 2"], "demand": [400, 600], "capacity": [1000, 1500],
            "fixed": [1000, 1500], "cost": [[2, 5], [4, 1]], "integer": False, "side": []}
    assert _solve_data("facility_location", data) == 3700.0
    data["side"] = [{"kind": "must_open", "site": "Aston"}]  # then both open is best: 3900
    assert _solve_data("facility_location", data) == 3900.0


def test_shift_scheduling_by_enumeration():
    data = {"theme": "hospital", "org": "the hospital", "integer": True, "side": [], "cyclic": True, "blocks": 6,
            "block_hours": 4, "shift_hours": 8, "demand": [3, 5, 2, 4, 1, 2],
            "shift_cost": [210, 180, 150, 160, 170, 230]}
    grid = np.array(list(itertools.product(range(6), repeat=6)))
    cover = np.stack([grid[:, p] + grid[:, (p - 1) % 6] for p in range(6)], axis=1)  # shift s covers s, s+1
    ok = np.all(cover >= np.array(data["demand"]), axis=1)
    best = float((grid[ok] @ np.array(data["shift_cost"])).min())
    assert _solve_data("shift_scheduling", data) == best


def test_min_cost_flow_by_hand():
    # S->A->T costs 2 but A->T holds 6; S->A->B->T costs 3 (S->A has 4 left); S->B->T costs 4:
    # 6*2 + 4*3 + 2*4 = 32
    data = {"theme": "distribution", "org": "the distributor", "sources": ["Factory One"], "hubs": ["Cross-dock 1", "Cross-dock 2"],
            "sinks": ["City Store"], "supply": [12], "demand": [12],
            "arcs": [["Factory One", "Cross-dock 1"], ["Factory One", "Cross-dock 2"], ["Cross-dock 1", "City Store"],
                     ["Cross-dock 2", "City Store"], ["Cross-dock 1", "Cross-dock 2"]],
            "capacity": [10, 10, 6, 10, 10], "cost": [1, 3, 1, 1, 1], "witness": [6, 6, 6, 6, 0],
            "integer": False, "side": []}
    assert _solve_data("min_cost_flow", data) == 32.0


def test_inventory_setup_by_enumeration():
    data = {"theme": "factory", "org": "the factory", "periods": 3, "initial": 0, "demand": [100, 200, 100],
            "capacity": [300, 300, 300], "setup_cost": [500, 500, 500], "unit_cost": [1.0, 1.0, 1.0],
            "holding_cost": 1.0, "integer": False, "side": []}
    best = math.inf
    for make in itertools.product(range(0, 301, 10), repeat=3):
        stock, cost = 0, 0.0
        for t in range(3):
            stock += make[t] - data["demand"][t]
            if stock < 0:
                break
            cost += data["unit_cost"][t] * make[t] + (500 if make[t] else 0) + data["holding_cost"] * stock
        else:
            best = min(best, cost)
    assert best == 1500.0  # setups in periods 1 and 2: 100, then 300 with 100 held; by hand
    assert _solve_data("inventory_setup", data) == best


def _portfolio_by_active_sets(cov, returns, floor) -> float:
    """min w'Σw, sum w = 1, r'w >= floor, w >= 0: the best feasible KKT point over all supports
    and both states of the return row (the optimum is one of them; each is feasible)."""
    n = len(returns)
    S, r = np.array(cov, dtype=float), np.array(returns, dtype=float)
    best = math.inf
    for k in range(1, n + 1):
        for support in itertools.combinations(range(n), k):
            idx = list(support)
            for active in (False, True):
                A = [np.ones(k)] + ([r[idx]] if active else [])
                b = [1.0] + ([floor] if active else [])
                A = np.array(A)
                K = np.block([[2 * S[np.ix_(idx, idx)], A.T], [A, np.zeros((len(b), len(b)))]])
                if abs(np.linalg.det(K)) < 1e-12:
                    continue
                w_s = np.linalg.solve(K, np.concatenate([np.zeros(k), b]))[:k]
                w = np.zeros(n)
                w[idx] = w_s
                if w.min() >= -1e-12 and r @ w >= floor - 1e-9:
                    best = min(best, float(w @ S @ w))
    return best


def test_portfolio_by_active_sets():
    # by hand: two uncorrelated assets of variance 100 each, floor at the mean return: 50-50 -> 50
    assert _portfolio_by_active_sets([[100, 0], [0, 100]], [5.0, 10.0], 7.5) == pytest.approx(50.0)
    data = {"theme": "funds", "org": "the adviser", "person": True, "assets": ["Fund A", "Fund B"],
            "returns": [5.0, 10.0], "cov": [[100, 0], [0, 100]], "min_return": 7.5, "side": []}
    assert _solve_data("portfolio", data) == pytest.approx(50.0, abs=1e-6)
    for seed in range(3):
        inst = generate("portfolio", np.random.default_rng(seed), size=3)
        d = inst.data
        assert close(_portfolio_by_active_sets(d["cov"], d["returns"], d["min_return"]), inst.answer)


def test_ground_truth_survives_another_highs_with_more_threads():
    """HiGHS refuses threads=1 (and leaves the model status "not set") once another Highs in the
    process started its global scheduler with more threads; solve_highs resets it and solves."""
    import highspy

    other = highspy.Highs()
    other.silent()
    other.setOptionValue("threads", 2)
    x = other.addVariable(lb=0, ub=4)
    other.maximize(x)
    inst = generate("assignment", np.random.default_rng(0))
    from solvergym.envs.opt.solve import solve_highs
    res = solve_highs(LinearModel.from_dict(inst.model))
    assert res.status == "optimal" and res.objective == pytest.approx(inst.answer, rel=1e-9, abs=1e-9)


def test_one_solver_status_vocabulary():
    """A reference solve and a program's captured optimum speak the same words (issue 22)."""
    from solvergym.envs.opt.solve import STATUSES
    from solvergym.envs.opt.verify import OK_STATUSES
    from solvergym.sandbox.record import OPTIMUM_STATUSES

    assert set(STATUSES) <= set(OPTIMUM_STATUSES) and set(OK_STATUSES) <= set(OPTIMUM_STATUSES)
    assert "timeout" not in OPTIMUM_STATUSES  # a program's own "timeout" is a sandbox status, not a solver's
