"""``equivalence_rule="partial"``: a dense share of SAT-RL's equivalence (issue 25, item 5's
candidate; a documented deviation from SAT-RL §3.4, whose all-or-nothing check stays the default).

score = (true clauses the program's formula implies) / (true clauses)
      - (parts of the formula the truth does not imply) / (parts)
Checked on SAT-RL App. E.1's instance (clauses (x211 | !x010), (x211 | !x100), (!x211 | !x100),
(x211 | x100)) with every formula kind a sandbox captures, and end to end in the tool env.
"""
from __future__ import annotations

import pytest

from solvergym.envs.equivalence import check_equivalence
from test_equivalence import BUILDERS, E1, FREE_DROPPED, TRUTH


@pytest.mark.parametrize("kind", list(BUILDERS))
def test_the_shares_of_true_and_false_clauses(kind):
    build = BUILDERS[kind]
    exact = check_equivalence(build(E1.clauses), TRUTH, rule="partial")
    assert exact.equivalent and exact.score == 1.0 and exact.partial == {
        "true_clauses_implied": [4, 4], "parts_not_true": [0, 4]}
    # one true clause dropped that the others do not imply: 3 of 4 implied, nothing false
    missing = check_equivalence(build(FREE_DROPPED), TRUTH, rule="partial")
    assert not missing.equivalent and missing.score == pytest.approx(3 / 4)
    # a false clause added: all 4 implied (the formula is stronger), 1 of 5 parts false
    extra = check_equivalence(build(E1.clauses + [[3, 5]]), TRUTH, rule="partial")
    assert not extra.equivalent and extra.score == pytest.approx(1 - 1 / 5)
    # a formula of false parts only: what it implies of the truth, minus all of it
    wrong = check_equivalence(build([[-12], [5]]), TRUTH, rule="partial")
    assert wrong.partial["parts_not_true"] == [2, 2] and wrong.score < 0
    # the default is SAT-RL's all-or-nothing, on the same verdicts
    assert check_equivalence(build(E1.clauses + [[3, 5]]), TRUTH).score == 0.0
    assert check_equivalence(build(E1.clauses), TRUTH).score == 1.0


def test_no_formula_or_an_unaligned_one_scores_zero_and_a_bad_rule_is_refused():
    assert check_equivalence(None, TRUTH, rule="partial").score == 0.0
    unaligned = BUILDERS["sympy"]([[12, -3]], names={12: "nobody", 3: "x_0_1_0"})
    v = check_equivalence(unaligned, TRUTH, rule="partial")
    assert v.status == "unaligned" and v.score == 0.0
    with pytest.raises(ValueError, match="equivalence_rule"):
        check_equivalence(None, TRUTH, rule="share")


def test_the_tool_env_pays_the_share_under_the_option():
    import gymnasium as gym

    import solvergym  # noqa: F401
    from solvergym.sandbox import SandboxPool

    program = ("<tool_call>\nfrom z3 import *\n{decl}\ns = Solver()\n{adds}\nprint(s.check())\n</tool_call>")
    with SandboxPool(size=1) as pool:
        got = {}
        for rule in ("exact", "partial"):
            env = gym.make("SolverTool-v0", task="sat", n=2, k=3, l=4, solver="z3", equivalence_rule=rule, pool=pool)
            env.reset(seed=0)
            inst = env.unwrapped.problem_instance()
            names = sorted({abs(x) for c in inst.clauses for x in c})
            var = {i: f"x{i}" for i in names}
            decl = "\n".join(f"{var[i]} = Bool('{var[i]}')" for i in names)
            lit = lambda x: var[x] if x > 0 else f"Not({var[-x]})"  # noqa: E731
            adds = "\n".join(f"s.add(Or({', '.join(lit(x) for x in c)}))" for c in inst.clauses[:-1])
            env.step(program.format(decl=decl, adds=adds))  # every clause but the last
            *_, info = env.step("```answer\n" + "0" * inst.k + "\n```")
            got[rule] = info["reward_components"]["equivalence"]
            env.close()
    assert got["exact"] == 0.0 and 0.0 < got["partial"] < 1.0
