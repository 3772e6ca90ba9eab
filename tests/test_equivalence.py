"""SAT-RL §3.4's equivalence check on captured formulas of every kind (real Z3, no sandbox here:
the capture itself is tested in test_sandbox.py and end to end in test_tool_env.py)."""
import json
from pathlib import Path

import pytest
from hypothesis import given, strategies as st

from solvergym.envs.equivalence import check_equivalence, formula_to_z3
from solvergym.envs.sat.truth import decision_truth, saturn_truth
from solvergym.envs.sat.decision import DecisionInstance
from solvergym.envs.sat.generator import SATInstance

E1 = DecisionInstance.from_dict(json.loads((Path(__file__).parent / "data" / "sat_rl_e1_instance.json").read_text()))
TRUTH = decision_truth(E1)
# App. E.1: x(2,1,1) is 12, x(0,1,0) is 3, x(1,0,0) is 5; clause 1 is implied by clauses 2 and 4
IMPLIED_DROPPED = [[12, -5], [-12, -5], [12, 5]]
FREE_DROPPED = [[12, -3], [12, -5], [-12, -5]]  # without (x211 | x100): x211 = x100 = x010 = 0 now fits
NAMES = {12: "x_2_1_1", 3: "x_0_1_0", 5: "x_1_0_0"}


def _z3_text(clauses, names=NAMES):
    import z3

    v = {k: z3.Bool(n) for k, n in names.items()}
    s = z3.Solver()
    for c in clauses:
        s.add(z3.Or([v[x] if x > 0 else z3.Not(v[-x]) for x in c]))
    return {"kind": "smt2", "text": s.sexpr(), "solver": "z3"}


def _cnf(clauses, names=NAMES):
    ids = {k: i + 1 for i, k in enumerate(sorted(names))}
    return {"kind": "cnf", "clauses": [[ids[abs(x)] * (1 if x > 0 else -1) for x in c] for c in clauses],
            "atmost": [], "names": {str(ids[k]): n for k, n in names.items()}}


def _cpsat(clauses, names=NAMES):
    order = sorted(names)
    idx = {k: i for i, k in enumerate(order)}
    return {"kind": "cpsat", "variables": [{"name": names[k], "domain": [0, 1]} for k in order],
            "constraints": [{"type": "bool_or", "enforcement": [],
                             "literals": [idx[x] if x > 0 else -idx[-x] - 1 for x in c]} for c in clauses]}


def _sympy(clauses, names=NAMES):
    def lit(x):
        return {"var": names[x]} if x > 0 else {"op": "Not", "args": [{"var": names[-x]}]}

    return {"kind": "sympy", "tree": {"op": "And", "args": [{"op": "Or", "args": [lit(x) for x in c]} for c in clauses]}}


BUILDERS = {"smt2": _z3_text, "cnf": _cnf, "cpsat": _cpsat, "sympy": _sympy}


@pytest.mark.parametrize("kind", list(BUILDERS))
def test_app_e1_implied_clause_may_be_missing(kind):
    build = BUILDERS[kind]
    full = check_equivalence(build(E1.clauses), TRUTH)
    assert full.equivalent and full.status == "equivalent"
    assert full.aligned == {"x_0_1_0": "x(0,1,0)", "x_1_0_0": "x(1,0,0)", "x_2_1_1": "x(2,1,1)"}
    implied = check_equivalence(build(IMPLIED_DROPPED), TRUTH)
    assert implied.equivalent, implied.reason
    free = check_equivalence(build(FREE_DROPPED), TRUTH)
    assert free.status == "not_equivalent" and not free.equivalent
    # the counterexample satisfies the program's formula but not the truth: all three false
    cex = free.counterexample
    assert (cex["x(2,1,1)"], cex["x(1,0,0)"]) == (False, False)
    assert "satisfies the program's formula but not the ground truth" in free.reason


def test_the_paper_truth_table():
    """App. E.1's truth table: F_truth and F_pred agree on all 8 rows over (x211, x100, x010)."""
    import itertools

    def holds(clauses, a):
        return all(any(a[abs(x)] == (x > 0) for x in c) for c in clauses)

    rows = []
    for x211, x100, x010 in itertools.product([0, 1], repeat=3):
        a = {12: bool(x211), 5: bool(x100), 3: bool(x010)}
        rows.append((holds(E1.clauses, a), holds(IMPLIED_DROPPED, a)))
    assert [int(f1) for f1, _ in rows] == [0, 0, 0, 0, 1, 1, 0, 0]
    assert all(f1 == f2 for f1, f2 in rows)


@pytest.mark.parametrize("name, canonical", [
    ("x(2,1,1)", "x(2,1,1)"), ("x_2_1_1", "x(2,1,1)"), ("x(2, 1, 1)", "x(2,1,1)"), ("x[2][1][1]", "x(2,1,1)"),
    ("X_2_1_1", "x(2,1,1)"), ("x2_1_1", "x(2,1,1)"), ("('x', 2, 1, 1)", "x(2,1,1)"), ("12", "x(2,1,1)"),
    ("clara successfully conducts an experiment on dark matter in the field", "x(2,1,1)"),
    ("x_3_0_0", None), ("x_2_1", None), ("x_2_1_1_0", None), ("y_2_1_1", None), ("13", None), ("0", None),
    ("x_2_1_1abc", None), ("", None),
])
def test_alignment_rules(name, canonical):
    assert TRUTH.align(name) == canonical


def test_saturn_alignment():
    inst = SATInstance(n=2, k=28, clauses=[[1, 2], [-27, 28]], solution="1" * 28)
    t = saturn_truth(inst)
    assert [t.align(n) for n in ["A", "B", "A1", "B1", "x1", "v2", "x_28", "28", "x29", "C2", "a"]] == \
        ["A", "B", "A1", "B1", "A", "B", "B1", "B1", None, None, None]


def test_unaligned_and_conflicting_variables_fail_with_a_reason():
    v = check_equivalence(_z3_text(E1.clauses, {12: "x_2_1_1", 3: "x_0_1_0", 5: "aux"}), TRUTH)
    assert v.status == "unaligned" and "'aux'" in v.reason and not v.equivalent
    v = check_equivalence(_z3_text([[12, 3]], {12: "x_2_1_1", 3: "x(2,1,1)"}), TRUTH)
    assert v.status == "unaligned" and "both align with x(2,1,1)" in v.reason


def test_auxiliary_variables_can_be_existential():
    # x211 <-> (a & b) with a, b free: exists a b. (...) is just "true" on x211's side
    text = ("(declare-fun x_2_1_1 () Bool)(declare-fun x_1_0_0 () Bool)(declare-fun a () Bool)"
            "(assert (or x_2_1_1 a))(assert (not a))(assert (not x_1_0_0))")
    assert check_equivalence({"kind": "smt2", "text": text}, TRUTH).status == "unaligned"
    v = check_equivalence({"kind": "smt2", "text": text}, TRUTH, auxiliary="exists")
    assert v.equivalent, v.reason  # exists a. (x211 | a) & !a & !x100  ==  x211 & !x100  == truth


def test_integer_encodings_align_as_zero_one():
    text = ("(declare-fun x_2_1_1 () Int)(declare-fun x_1_0_0 () Int)"
            "(assert (<= 0 x_2_1_1 1))(assert (<= 0 x_1_0_0 1))(assert (= x_2_1_1 1))(assert (= x_1_0_0 0))")
    assert check_equivalence({"kind": "smt2", "text": text}, TRUTH).equivalent
    wrong = text.replace("(= x_1_0_0 0)", "(>= x_1_0_0 0)")
    assert check_equivalence({"kind": "smt2", "text": wrong}, TRUTH).status == "not_equivalent"


def test_cpsat_linear_enforcement_and_atmost():
    # x211 = 1 as a linear constraint; x100 = 0 as "x211 => not x100" (bool_and with enforcement)
    f = {"kind": "cpsat", "variables": [{"name": "x_2_1_1", "domain": [0, 1]}, {"name": "x_1_0_0", "domain": [0, 1]}],
         "constraints": [{"type": "linear", "enforcement": [], "vars": [0], "coeffs": [1], "domain": [1, 1]},
                         {"type": "bool_and", "enforcement": [0], "literals": [-2]}]}
    assert check_equivalence(f, TRUTH).equivalent
    f["constraints"][1] = {"type": "exactly_one", "enforcement": [], "literals": [0, 1]}
    assert check_equivalence(f, TRUTH).equivalent
    f["constraints"].append({"type": "circuit", "enforcement": [], "text": "circuit {}"})
    v = check_equivalence(f, TRUTH)
    assert v.status == "unsupported" and "circuit" in v.reason
    cnf = {"kind": "cnf", "clauses": [[12]], "atmost": [[[12, 5], 1]], "names": {}}
    assert check_equivalence(cnf, TRUTH).equivalent  # DIMACS ints align by index


def test_sympy_connectives():
    x, y = {"var": "x_2_1_1"}, {"var": "x_1_0_0"}
    tree = {"op": "And", "args": [x, {"op": "Implies", "args": [x, {"op": "Not", "args": [y]}]}]}
    assert check_equivalence({"kind": "sympy", "tree": tree}, TRUTH).equivalent
    tree = {"op": "Xor", "args": [x, y]}  # x211 xor x100 also allows x100 = 1
    assert check_equivalence({"kind": "sympy", "tree": tree}, TRUTH).status == "not_equivalent"
    v = check_equivalence({"kind": "sympy", "tree": {"unsupported": "Eq", "text": "Eq(x, 1)"}}, TRUTH)
    assert v.status == "unsupported" and "Eq" in v.reason


def test_no_formula_and_other_kinds():
    assert check_equivalence(None, TRUTH).status == "no_formula"
    v = check_equivalence({"kind": "lp", "text": "Minimize ..."}, TRUTH)
    assert v.status == "unsupported" and "LP" in v.reason
    v = check_equivalence({"kind": "smt2", "text": "(assert (and"}, TRUTH)
    assert v.status == "unsupported" and "cannot parse" in v.reason
    v = check_equivalence({"kind": "smt2", "text": "(declare-fun f (Bool) Bool)(assert (f true))"}, TRUTH)
    assert v.status == "unsupported" and "function f" in v.reason


def test_the_check_is_time_bounded():
    # exists aux. pigeonhole(9 pigeons, 8 holes) & x211 & !x100: the quantified part is a hard UNSAT core
    lines, n, m = [], 9, 8
    for p in range(n):
        for h in range(m):
            lines.append(f"(declare-fun p{p}h{h} () Bool)")
        lines.append("(assert (or " + " ".join(f"p{p}h{h}" for h in range(m)) + "))")
    for h in range(m):
        for p in range(n):
            for q in range(p + 1, n):
                lines.append(f"(assert (or (not p{p}h{h}) (not p{q}h{h})))")
    lines += ["(declare-fun x_2_1_1 () Bool)", "(declare-fun x_1_0_0 () Bool)",
              "(assert x_2_1_1)", "(assert (not x_1_0_0))"]
    v = check_equivalence({"kind": "smt2", "text": "\n".join(lines)}, TRUTH, timeout_ms=100, auxiliary="exists")
    assert v.status in ("timeout", "not_equivalent") and not v.equivalent


def test_formula_to_z3_reports_variables():
    expr, consts = formula_to_z3(_cnf(E1.clauses))
    assert sorted(consts) == ["x_0_1_0", "x_1_0_0", "x_2_1_1"]


_json = st.recursive(st.none() | st.booleans() | st.integers(-5, 20) | st.text(max_size=8),
                     lambda c: st.lists(c, max_size=4) | st.dictionaries(st.text(max_size=8), c, max_size=4),
                     max_leaves=20)


@given(kind=st.sampled_from(["smt2", "cnf", "cpsat", "sympy", "lp", "zzz"]),
       body=st.dictionaries(st.sampled_from(["text", "clauses", "atmost", "names", "variables", "constraints", "tree"]),
                            _json, max_size=4))
def test_garbage_formulas_never_raise(kind, body):
    v = check_equivalence({"kind": kind, **body}, TRUTH, timeout_ms=200)
    assert v.status in ("equivalent", "not_equivalent", "unaligned", "unsupported", "timeout", "error", "no_formula")
