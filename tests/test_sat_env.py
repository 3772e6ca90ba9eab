import copy
import json
from pathlib import Path

import gymnasium as gym
import pytest
from hypothesis import given, strategies as st

import solvergym  # noqa: F401
from solvergym.agents.scripted import oracle_action
from solvergym.envs.sat.datasets import instance_from_saturn_record
from solvergym.envs.sat.cnf import first_violated, parse_clauses
from solvergym.envs.sat.prompts import saturn_prompt
from solvergym.envs.sat.verify import correctness_reward, decision_reward, parse_decision

DATA = Path(__file__).parent / "data" / "saturn_released_sample.jsonl"


def sat_env(**kw):
    env = gym.make("SolverSAT-v0", **kw).unwrapped
    env.reset(seed=11)
    return env


def test_saturn_reward_table():
    """SATURN §2.4: -1 without \\boxed{}, 0 boxed but wrong, 1 correct."""
    env = sat_env()
    sol = env.instance.solution
    wrong = next(b for b in (format(i, "05b") for i in range(32))
                 if not env.problem.score(env.instance, f"\\boxed{{{b}}}").correct)
    cases = [
        ("I think the answer is 10101.", -1.0, {"format": -1.0, "correct": 0.0}, True),
        (f"\\boxed{{{wrong}}}", 0.0, {"format": 0.0, "correct": 0.0}, False),
        ("\\boxed{10}", 0.0, {"format": 0.0, "correct": 0.0}, False),  # not k bits
        ("\\boxed{yes}", 0.0, {"format": 0.0, "correct": 0.0}, False),
        (f"\\boxed{{{sol}}}", 1.0, {"format": 0.0, "correct": 1.0}, False),
        (f"reasoning... \\boxed{{{wrong}}} wait, fix: \\boxed{{{sol}}}", 1.0, None, False),  # the last box
        (f"\\boxed{{{' '.join(sol)}}}", 1.0, None, False),  # spaces between bits are fine
        (f"\\boxed{{{sol}}} \\boxed{{{wrong}", 1.0, None, False),  # an unclosed last box is skipped
    ]
    for action, reward, components, is_error in cases:
        env.reset(seed=11)
        _, r, term, trunc, info = env.step(action)
        assert r == reward, action
        if components:
            assert info["reward_components"] == components
        assert ("error" in info) == is_error
        assert term and not trunc


def test_sat_rl_eq1_reward_table():
    """SAT-RL §3.4: format 0.1 when the answer parses; correct 1 / 0 (idk) / -1-eps."""
    eps = 0.1
    rows = [
        ("```answer\nyes\n```", True, 0.1, 1.0),
        ("```answer no```", False, 0.1, 1.0),
        ("```answer yes```", False, 0.1, -1.0 - eps),
        ("```answer\nNo.\n```", True, 0.1, -1.0 - eps),
        ("```idk```", True, 0.1, 0.0),
        ("```answer idk```", False, 0.1, 0.0),
        ("yes", True, 0.0, 0.0),  # no block: every component stays 0
        ("```answer maybe```", True, 0.0, 0.0),
    ]
    for text, label, fmt, corr in rows:
        v = decision_reward(text, label, eps=eps)
        assert v.components == {"format": fmt, "correct": pytest.approx(corr)}, text
    assert correctness_reward("incorrect", n_choices=5, eps=0.0) == -0.25
    assert correctness_reward("incorrect", eps=0.3) == pytest.approx(-1.3)
    with pytest.raises(ValueError):
        correctness_reward("maybe")
    assert parse_decision("```answer \\boxed{SAT}```") == ("yes", "")
    assert parse_decision("```answer unsatisfiable```") == ("no", "")


def test_satbench_env_rewards_and_eps():
    env = gym.make("SolverSATBench-v0", eps=0.5).unwrapped
    env.reset(seed=0)
    truth = "yes" if env.instance.satisfiable else "no"
    other = "no" if truth == "yes" else "yes"
    assert env.step(f"```answer {truth}```")[1] == pytest.approx(1.1)
    env.reset(seed=0)
    assert env.step(f"```answer {other}```")[1] == pytest.approx(0.1 - 1.5)
    env.reset(seed=0)
    _, r, _, _, info = env.step("```idk```")
    assert r == pytest.approx(0.1) and info["answer"] == "idk"
    env.reset(seed=0)
    _, r, _, _, info = env.step("The answer is yes.")
    assert r == 0.0 and "no ```answer" in info["error"]


def test_satbench_balanced_labels_and_mapping_in_prompt():
    env = gym.make("SolverSATBench-v0", show_mapping=True).unwrapped
    labels = []
    for seed in range(200):
        obs, info = env.reset(seed=seed)
        labels.append(env.instance.satisfiable)
    assert 75 <= sum(labels) <= 125
    assert "Variable Mapping:" in obs and "x(0,0,0): " in obs
    for name, meaning in info["mapping"].items():
        assert f"{name}: {meaning}" in obs
    assert "Question: Can all these conditions be satisfied" in obs
    plain = gym.make("SolverSATBench-v0").unwrapped
    obs, info = plain.reset(seed=0)
    assert "Variable Mapping" not in obs and info["mapping"]
    allsat = gym.make("SolverSATBench-v0", sat_ratio=1.0).unwrapped
    assert all(allsat.reset(seed=s)[1] and allsat.instance.satisfiable for s in range(10))


def test_difficulty_option_changes_and_persists():
    env = gym.make("SolverSAT-v0").unwrapped
    _, info = env.reset(seed=0, options={"difficulty": {"k": 7, "l": 20}})
    assert info["difficulty"] == {"n": 3, "k": 7, "l": 20} and env.instance.k == 7
    assert info["D"] == pytest.approx(10.784544, abs=1e-6)
    _, info = env.reset(seed=1)
    assert info["difficulty"] == {"n": 3, "k": 7, "l": 20}
    with pytest.raises(ValueError, match="n=4"):
        env.reset(options={"difficulty": {"n": 4, "k": 3}})
    bench = gym.make("SolverSATBench-v0").unwrapped
    _, info = bench.reset(seed=0, options={"difficulty": {"dims": [4, 3, 2], "num_clauses": 30}})
    assert info["difficulty"] == {"dims": [4, 3, 2], "num_clauses": 30}
    assert len(bench.instance.conditions) == 30 and len(info["variables"]) == 24


def test_released_saturn_records_load_and_prompt_is_byte_identical():
    records = [json.loads(line) for line in DATA.read_text().splitlines()]
    env = gym.make("SolverSAT-v0").unwrapped
    for rec in records:
        inst = instance_from_saturn_record(rec)
        assert inst.clause_string == rec["clause"] and inst.solution == rec["solution"]
        assert saturn_prompt(inst) == rec["prompt"]
        obs, info = env.reset(options={"instance": rec})  # the raw record works too
        assert obs == rec["prompt"] and info["difficulty"]["k"] == rec["k"]
        _, r, *_ = env.step(f"\\boxed{{{rec['solution']}}}")
        assert r == 1.0
    rec = records[0]
    clauses = parse_clauses(rec["clause"])
    wrong = next(b for b in (format(i, f"0{rec['k']}b") for i in range(2 ** rec["k"]))
                 if first_violated(clauses, b) is not None)
    with pytest.raises(ValueError, match="violates"):
        instance_from_saturn_record(dict(rec, solution=wrong))
    with pytest.raises(ValueError, match="needs n_sat"):
        instance_from_saturn_record({"clause": rec["clause"]})


def test_large_k_prompt_explains_naming():
    env = sat_env(k=30, l=40)
    obs, _ = env.reset(seed=0)
    assert "A1..Z1" in obs and env.instance.k == 30
    _, r, *_ = env.step(oracle_action(env, env._last_obs))
    assert r == 1.0


hostile = st.one_of(
    st.text(max_size=2000),
    st.binary(max_size=2000).map(lambda b: b.decode("utf-8", "surrogateescape")),
    st.binary(max_size=500),
    st.text(alphabet="\\boxed{}01 ", max_size=300),
    st.text(alphabet="`answeridkyno \n", max_size=300),
    st.integers(1, 200).map(lambda n: "\\boxed{" * n * 500),
    st.integers(64 * 1024 - 5, 64 * 1024 + 5).map(lambda n: "\\boxed{" + "1" * (n - 8) + "}"),
)


@given(action=hostile, seed=st.integers(0, 50))
def test_step_never_raises_on_arbitrary_input_sat(action, seed):
    env = gym.make("SolverSAT-v0").unwrapped
    env.reset(seed=seed)
    obs, r, term, trunc, info = env.step(action)
    assert isinstance(obs, str) and term and r in (-1.0, 0.0, 1.0)
    assert r == sum(info["reward_components"].values())
    if isinstance(action, str) and ("\\boxed{" not in action or len(action) > 64 * 1024):
        assert r == -1.0
    if r == -1.0:
        assert info["error"] and info["reason"] and obs.startswith("Format error")
    else:
        assert "error" not in info and info["reason"]


@given(action=hostile, seed=st.integers(0, 20))
def test_step_never_raises_on_arbitrary_input_satbench(action, seed):
    env = gym.make("SolverSATBench-v0").unwrapped
    env.reset(seed=seed)
    obs, r, term, trunc, info = env.step(action)
    assert isinstance(obs, str) and term
    assert r == pytest.approx(sum(info["reward_components"].values()))
    if info["reward_components"]["format"] == 0.0:
        assert info["error"]


def test_bare_yes_no_fences_are_final_answers():
    """SAT-RL App. E.1's transcript ends with a bare ```yes```: read as ```answer yes```, same rewards."""
    eps = 0.1
    rows = [
        ("<think>sat</think>\n```yes```", True, 0.1, 1.0),
        ("```no```", False, 0.1, 1.0),
        ("```yes```", False, 0.1, -1.0 - eps),
        ("```No\n```", True, 0.1, -1.0 - eps),
        ("```answer yes``` on second thought ```no```", False, 0.1, 1.0),  # the last block counts
        ("```no``` on second thought ```answer yes```", True, 0.1, 1.0),
        ("```yes``` but ```idk```", True, 0.1, 0.0),
        ("```\nyes\n```", True, 0.0, 0.0),  # an unlabelled code block is not an answer
        ("```python\nprint('```yes```')\n```", True, 0.0, 0.0),  # inside code: fences pair left to right
    ]
    for text, label, fmt, corr in rows:
        v = decision_reward(text, label, eps=eps)
        assert v.components == {"format": fmt, "correct": pytest.approx(corr)}, text
    assert parse_decision("```yes```") == ("yes", "") and parse_decision("```NO```") == ("no", "")
    for label in (True, False):
        env = gym.make("SolverSATBench-v0", sat_ratio=float(label)).unwrapped
        env.reset(seed=0)
        word = "yes" if label else "no"
        _, bare, term, _, info = env.step(f"The solver says so.\n```{word}```")
        env.reset(seed=0)
        _, labelled, *_ = env.step(f"```answer {word}```")
        assert term and info["answer"] == word and bare == labelled == pytest.approx(1.1)


# ------------------------------------------------------------------ group resets: validate once
@pytest.fixture
def drup_checks(monkeypatch):
    """Every DRUP proof check the library runs (the real check; only counted)."""
    import solvergym.envs.sat.decision as decision

    calls = []
    real = decision.check_drup

    def counted(clauses, proof):
        calls.append(len(proof))
        return real(clauses, proof)

    monkeypatch.setattr(decision, "check_drup", counted)
    return calls


def test_group_followers_do_not_recheck_the_leaders_drup_proof(drup_checks):
    """A GRPO group (algorithms/rollout.py) resets its 7 followers with the leader's instance
    object: its UNSAT proof was checked 7 times per group, once per follower."""
    envs = [gym.make("SolverSATBench-v0", sat_ratio=0.0) for _ in range(8)]
    first_obs, _ = envs[0].reset(seed=0)
    leader = envs[0].unwrapped.instance
    assert not leader.satisfiable and leader.proof
    for env in envs[1:]:
        obs, info = env.reset(seed=0, options={"instance": leader})
        assert obs == first_obs and info["instance_id"] == leader.instance_id
    assert drup_checks == []
    # what comes from outside (a dict, JSON text) is checked once; the object it became is not again
    envs[0].reset(seed=1, options={"instance": leader.to_json()})
    loaded = envs[0].unwrapped.instance
    for env in envs[1:]:
        env.reset(seed=1, options={"instance": loaded})
    assert len(drup_checks) == 1
    # the mark is not part of the instance: same dict, JSON, equality and id
    assert loaded == leader and loaded.to_dict() == leader.to_dict() and loaded.instance_id == leader.instance_id
    # a changed instance is validated again: a copy with one more (ignored) deletion line ...
    changed = copy.deepcopy(loaded)
    changed.proof = changed.proof + ["d 1 0"]
    envs[1].reset(options={"instance": changed})
    assert len(drup_checks) == 2
    envs[2].reset(options={"instance": changed})
    assert len(drup_checks) == 2
    # ... and one whose proof was emptied in place is rejected
    changed.proof.clear()
    with pytest.raises(ValueError, match="DRUP proof"):
        envs[3].reset(options={"instance": changed})
    changed.satisfiable = True
    with pytest.raises(ValueError, match="model"):
        envs[3].reset(options={"instance": changed})


def test_tool_env_followers_do_not_recheck_the_drup_proof(drup_checks):
    """SolverTool-v0 wraps the SAT-Bench instance: its followers coerced the wrapped problem dict
    and checked its proof once each."""
    envs = [gym.make("SolverTool-v0", sat_ratio=0.0) for _ in range(8)]
    first_obs, _ = envs[0].reset(seed=0)
    leader = envs[0].unwrapped.instance
    problem = envs[0].unwrapped.problem_instance()
    assert not problem.satisfiable and problem.proof
    for env in envs[1:]:
        obs, info = env.reset(seed=0, options={"instance": leader})
        assert obs == first_obs and env.unwrapped.problem_instance() == problem
    assert drup_checks == []
    # a bare task instance (the SAT-Bench dataclass) is not checked again either
    for env in envs[1:]:
        env.reset(seed=0, options={"instance": problem})
    assert drup_checks == []
    # a ToolInstance whose problem dict was changed is validated again
    changed = copy.deepcopy(leader)
    changed.problem["proof"] = changed.problem["proof"] + ["d 1 0"]
    envs[1].reset(seed=0, options={"instance": changed})
    assert len(drup_checks) == 1 and envs[1].unwrapped.problem_instance().proof[-1] == "d 1 0"
    changed.problem["proof"] = []
    with pytest.raises(ValueError, match="DRUP proof"):
        envs[2].reset(seed=0, options={"instance": changed})
    for env in envs:
        env.close()
