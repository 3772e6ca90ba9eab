"""Synthetic-Logic (issue 26; SAT-RL §3.1-3.2, App. B.1): every family as decision / solving /
counting on the problem contract, its ground-truth programs run in the real sandbox for every
solver that fits and agree with the truth and with each other, its witness verifier (written
without a solver) accepts the oracle and rejects one changed element, counts equal brute force,
decisions are balanced, and the oracle earns the full reward single-turn and in tool mode."""
from __future__ import annotations

import warnings

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from hypothesis import HealthCheck, given, settings, strategies as st

import solvergym  # noqa: F401
from solvergym.agents.scripted import OracleAgent, play_episode
from solvergym.envs.logic import FAMILIES, QUERIES
from solvergym.envs.logic.family import LogicInstance, family_class
from solvergym.envs.logic.model import brute_force_count
from solvergym.envs.logic.programs import LOGIC_SOLVERS, logic_program, read_output
from solvergym.sandbox import SandboxPool

PAIRS = [(f, q) for f in FAMILIES for q in QUERIES]
#: knobs small enough to enumerate every assignment (at most 20 variables)
SMALL = {"clique": {"n": 8, "k": 3}, "graph-coloring": {"n": 5, "k": 3}, "subset-sum": {"n": 10},
         "partition": {"n": 10}, "n-queens": {"n": 4, "pre": 1}, "latin-square": {"n": 2, "given": 0}}


@pytest.fixture(scope="module")
def pool():
    with SandboxPool(size=2) as p:
        yield p


def _instance(family: str, query: str, seed: int, **knobs) -> tuple[gym.Env, LogicInstance]:
    env = gym.make("SolverLogic-v0", family=family, query=query, **knobs)
    env.reset(seed=seed)
    return env, env.unwrapped.instance


def test_every_family_is_registered_with_its_category_and_solvers():
    from solvergym import registry

    assert set(FAMILIES) <= set(registry.tool_tasks())
    for name, (_, category) in FAMILIES.items():
        cls = family_class(name)
        assert cls.category == category and category in ("puzzle", "program verification", "integer programming", "graph")
        # every solver of §3.1 either fits or the family says why not
        assert set(cls.solvers) | set(cls.unfit) == set(LOGIC_SOLVERS) and not set(cls.solvers) & set(cls.unfit)


@pytest.mark.parametrize("family", list(FAMILIES))
def test_every_instance_fits_the_solvers_the_family_names(family):
    cls = family_class(family)
    for seed in range(10):
        _, inst = _instance(family, "counting", seed)
        model = cls.encode(inst.data)
        assert all(model.fits(s) for s in cls.solvers)
        assert all(not model.fits(s) for s in cls.unfit)


@pytest.mark.parametrize("family,query", PAIRS)
def test_programs_of_every_fitting_solver_agree_with_the_truth(pool, family, query):
    cls = family_class(family)
    for seed in range(2):
        env, inst = _instance(family, query, seed)
        model = cls.encode(inst.data)
        answers = {}
        for solver in cls.solvers:
            r = pool.run(logic_program(solver, model, query))
            assert r.ok and r.called(solver), (solver, r.status, r.stderr[-500:])
            out = read_output(r.stdout, query)
            assert out is not None, (solver, r.stdout[-300:])
            if query == "solving":  # any witness will do; each is checked without a solver
                witness = env.unwrapped.problem.witness_from_true(inst.data, set(out["true"]))
                assert cls.check_witness(inst.data, witness) is None, (solver, witness)
                out = {"sat": out["sat"]}
            answers[solver] = out
        truth = {"count": inst.count} if query == "counting" else {"sat": inst.satisfiable}
        assert all(a == truth for a in answers.values()), (answers, truth)


def _one_changed(witness):
    """Every witness that differs from ``witness`` in one element by +-1."""
    if isinstance(witness[0], list):
        for i, row in enumerate(witness):
            for j in range(len(row)):
                for d in (-1, 1):
                    yield [r if k != i else [*r[:j], r[j] + d, *r[j + 1:]] for k, r in enumerate(witness)]
    else:
        for i in range(len(witness)):
            for d in (-1, 1):
                yield [*witness[:i], witness[i] + d, *witness[i + 1:]]


@pytest.mark.parametrize("family", list(FAMILIES))
def test_the_verifier_accepts_the_witness_and_rejects_one_changed_element(family):
    cls = family_class(family)
    rejected = 0
    for seed in range(10):
        env, inst = _instance(family, "solving", seed)
        problem = env.unwrapped.problem
        model = cls.encode(inst.data)
        assert cls.check_witness(inst.data, inst.witness) is None
        for bad in _one_changed(inst.witness):
            # the verifier, written without a solver, agrees with the encoding on every neighbour
            verdict = cls.check_witness(inst.data, bad)
            in_range = all(0 <= v for v in np.ravel(bad)) and problem.parse_witness(
                inst.data, problem.format_witness(inst.data, bad))[0] is not None
            true = problem.true_from_witness(inst.data, bad) if in_range else set()
            holds = in_range and true <= set(model.names) and model.holds([n in true for n in model.names])
            assert (verdict is None) == holds, (seed, bad, verdict)
            if verdict is not None:
                rejected += 1
                wrong = "```answer\n" + problem.format_witness(inst.data, bad) + "\n```" if in_range else None
                if wrong:  # charged -1 - eps through the env's score
                    assert problem.score(inst, wrong).components == {"format": 0.1, "correct": -1.1}
        assert problem.score(inst, problem.final_answer(inst)).components == {"format": 0.1, "correct": 1.0}
    assert rejected > 0


@pytest.mark.parametrize("family", list(FAMILIES))
def test_counts_equal_brute_force(family):
    cls = family_class(family)
    counts = []
    for seed in range(10):
        knobs = {**SMALL[family], **({"given": seed % 2} if family == "latin-square" else {})}
        _, inst = _instance(family, "counting", seed, **knobs)
        model = cls.encode(inst.data)
        assert len(model.names) <= 20
        assert brute_force_count(model) == inst.count
        counts.append(inst.count)
    assert len(set(counts)) > 1, counts  # the instances differ in what they count


@pytest.mark.parametrize("family", list(FAMILIES))
def test_decisions_are_balanced_over_200_seeds(family):
    # each label is drawn with probability sat_ratio and then met (planted or rejected), so the
    # share is binomial: within 3 standard errors of 0.5 (0.106 at 200); exact in the dataset
    env = gym.make("SolverLogic-v0", family=family, query="decision")
    sat = []
    for seed in range(200):
        env.reset(seed=seed)
        sat.append(env.unwrapped.instance.satisfiable)
    assert abs(np.mean(sat) - 0.5) <= 3 * np.sqrt(0.25 / 200), np.mean(sat)
    skewed = gym.make("SolverLogic-v0", family=family, query="decision", sat_ratio=0.2)
    share = np.mean([skewed.reset(seed=s)[0] is not None and skewed.unwrapped.instance.satisfiable for s in range(200)])
    assert abs(share - 0.2) <= 3 * np.sqrt(0.16 / 200), share


@pytest.mark.parametrize("family,query", PAIRS)
def test_the_oracle_earns_the_full_reward_single_turn(family, query):
    env = gym.make("SolverLogic-v0", family=family, query=query)
    for seed in range(3):
        played = play_episode(env.unwrapped, OracleAgent(), seed=seed)
        assert played["reward_components"] == {"format": 0.1, "correct": 1.0}


@pytest.mark.parametrize("family,query", PAIRS)
def test_the_oracle_earns_the_full_reward_in_tool_mode_with_every_solver(pool, family, query):
    for solver in family_class(family).solvers:
        env = gym.make("SolverTool-v0", task=family, query=query, solver=solver, pool=pool)
        played = play_episode(env.unwrapped, OracleAgent(), seed=0)
        assert played["reward_components"] == {"format": 0.1, "correct": 1.0, "tool": 0.1}, (solver, played["info"])
        response = played["messages"][2]["content"]
        out = read_output(response.split("stdout:", 1)[-1].split("</tool_response>")[0], query)
        inst = env.unwrapped.problem_instance()
        assert out is not None and (out.get("count") == inst.count if query == "counting" else out["sat"] == inst.satisfiable)
        env.close()


@pytest.mark.parametrize("family,query", PAIRS)
def test_check_env(family, query):
    env = gym.make("SolverLogic-v0", family=family, query=query)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(env.unwrapped)


_TEXT = st.one_of(st.text(max_size=120), st.sampled_from(
    ["```answer yes```", "```no```", "```idk```", "```answer\n0 1 2\n```", "```answer 99999999```",
     "```answer -3```", "```answer\n" + "1 " * 5000 + "\n```", "```answer 1.5```", "\x00"]))


@pytest.mark.parametrize("family,query", PAIRS)
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=_TEXT, seed=st.integers(0, 50))
def test_fuzz_any_text_is_scored_within_the_bounds(family, query, text, seed):
    env = gym.make("SolverLogic-v0", family=family, query=query)
    env.reset(seed=seed)
    _, reward, terminated, _, info = env.step(text)
    assert terminated and -1.1 - 1e-9 <= reward <= 1.1 + 1e-9
    assert set(info["reward_components"]) == {"format", "correct"}
    assert info["correct"] == (reward > 1.0)


def test_a_bad_family_or_query_is_an_error_that_lists_the_valid_ones():
    with pytest.raises(ValueError, match="the families are .*clique"):
        gym.make("SolverLogic-v0", family="cliques")
    with pytest.raises(ValueError, match=r"the queries are \['decision', 'solving', 'counting'\]"):
        gym.make("SolverLogic-v0", family="clique", query="count")
    with pytest.raises(ValueError, match="the queries are"):
        gym.make("SolverTool-v0", task="clique", query="optimise")


def test_a_record_cannot_carry_a_wrong_truth():
    env, inst = _instance("clique", "counting", 0)
    forged = {**inst.to_dict(), "count": inst.count + 1}
    with pytest.raises(ValueError, match="models"):
        env.reset(options={"instance": forged})
    flipped = {**_instance("clique", "decision", 1)[1].to_dict()}
    flipped["satisfiable"] = not flipped["satisfiable"]
    with pytest.raises(ValueError, match="satisfiable"):
        gym.make("SolverLogic-v0", family="clique").reset(options={"instance": flipped})
    # the true record is accepted and scores as the generated one
    obs, _ = env.reset(options={"instance": inst.to_dict()})
    assert env.unwrapped.instance == inst
