"""The text-env contract of envs/base.py, checked on every registered env."""
import dataclasses
import json
import subprocess
import sys
import warnings
from pathlib import Path

import gymnasium as gym
import pytest
from gymnasium.error import ResetNeeded
from gymnasium.utils.env_checker import check_env

import solvergym
from solvergym.agents.scripted import oracle_action
from solvergym.envs.text import TextSpace, validate_action
from solvergym.registry import default_kwargs, env_ids, get_entry

IDS = env_ids()
ROOT = Path(__file__).resolve().parents[1]


def play_oracle(env, obs=None):
    """Step the oracle until the episode ends (multi-turn envs take several steps)."""
    for _ in range(env.max_turns - env.turn):
        action = oracle_action(env, obs)  # it reads the last observation (a tool response)
        assert env.action_space.contains(action)
        obs, reward, terminated, truncated, info = env.step(action)
        assert "error" not in info
        assert reward == pytest.approx(sum(info["reward_components"].values()))
        assert info["messages"][-1]["content"] in (action, obs)
        if terminated or truncated:
            return obs, reward, terminated, truncated, info
    raise AssertionError("the oracle did not finish within max_turns")


@pytest.mark.parametrize("env_id", IDS)
def test_check_env_passes_without_warnings(env_id):
    env = gym.make(env_id)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(env.unwrapped)


def test_registry_has_the_foundation_ids():
    assert {"SolverSAT-v0", "SolverSATBench-v0"} <= set(IDS)
    for env_id in IDS:
        assert env_id in gym.registry
        assert get_entry(env_id).modes


def test_make_with_kwargs_and_namespace_import():
    env = gym.make("SolverSAT-v0", n=3, k=5, l=13)
    obs, info = env.reset(seed=0)
    assert info["difficulty"] == {"n": 3, "k": 5, "l": 13}
    assert len(env.unwrapped.instance.clauses) == 13
    # "solvergym:" makes Gymnasium import the package; a fresh interpreter proves it.
    code = ("import gymnasium as gym; e = gym.make('solvergym:SolverSAT-v0', k=6); "
            "o, i = e.reset(seed=1); print(i['difficulty']['k'])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd="/")
    assert out.stdout.strip() == "6"


@pytest.mark.parametrize("env_id", IDS)
def test_make_vec_sync(env_id):
    # max_turns=1: every oracle answers in one step (a tool env's oracle calls its tool and answers)
    venv = gym.make_vec(env_id, num_envs=3, vectorization_mode="sync", max_turns=1)
    obs, infos = venv.reset(seed=5)
    assert len(obs) == 3 and all(isinstance(o, str) and o for o in obs)
    assert len(set(obs)) == 3  # seeds 5, 6, 7 give different instances
    envs = venv.unwrapped.envs
    actions = [oracle_action(e, o) for e, o in zip(envs, obs)]
    obs, rew, term, trunc, infos = venv.step(actions)
    assert rew.shape == (3,) and term.all() and not trunc.any()
    assert infos["correct"].all()  # every env reports info["correct"] on its final step
    venv.close()


@pytest.mark.parametrize("text", ["hello world", "¬(P ∧ Q) → R", "a\tb\nc\r\n", "nbsp\u00a0here",
                                  "👩\u200d💻 emoji zwj", "中文 한국어", "", "\ufffd"])
def test_text_space_accepts_text(text):
    assert TextSpace(1000).contains(text)


@pytest.mark.parametrize("value", ["nul\x00", "esc\x1b[0m", "lone \udc80 surrogate", "x" * 11, b"bytes", 5, None])
def test_text_space_rejects_non_text(value):
    assert not TextSpace(10 if isinstance(value, str) and value.startswith("x") else 1000).contains(value)


def test_text_space_sample_is_member_and_seeded():
    s = TextSpace(50, seed=3)
    a = [s.sample() for _ in range(20)]
    assert all(s.contains(x) for x in a)
    s2 = TextSpace(50, seed=3)
    assert a == [s2.sample() for _ in range(20)]


@pytest.mark.parametrize("action, ok, fragment", [
    ("fine", True, None),
    ("fine".encode(), True, None),
    (b"\xff\xfe broken", False, "not valid UTF-8"),
    ("x" * 101, False, "the limit is 100"),
    (b"x" * 401, False, "the limit is 100"),
    ("ctrl\x07", False, "U+0007"),
    (12, False, "must be a str"),
    (None, False, "must be a str"),
])
def test_validate_action(action, ok, fragment):
    text, err = validate_action(action, 100)
    assert isinstance(text, str) and len(text) <= 100
    assert (err is None) == ok
    if fragment:
        assert fragment in err


@pytest.mark.parametrize("env_id", IDS)
def test_step_contract(env_id):
    env = gym.make(env_id).unwrapped
    with pytest.raises(ResetNeeded):
        env.step("anything")
    obs, info = env.reset(seed=0)
    assert env.observation_space.contains(obs)
    assert {"instance_id", "difficulty", "messages", "turn"} <= set(info)
    assert info["messages"] == [{"role": "user", "content": obs}]
    obs2, reward, terminated, truncated, info2 = play_oracle(env)
    assert terminated and not truncated
    assert info2["messages"][-1]["role"] == "assistant"
    assert info2["instance_id"] == info["instance_id"]
    assert info2["correct"] is True
    with pytest.raises(ResetNeeded, match="episode has ended"):
        env.step("anything")
    # infos are fresh objects: mutating one leaves the next untouched
    info2["difficulty"]["hacked"] = True
    _, info3 = env.reset(seed=0)
    assert "hacked" not in info3["difficulty"]


@pytest.mark.parametrize("env_id", IDS)
def test_bad_actions_are_format_failures(env_id):
    env = gym.make(env_id, max_turns=1).unwrapped
    for bad in [b"\xc3\x28 not utf-8", "a" * (70 * 1024), "no answer at all", "\x00", 3.14]:
        env.reset(seed=1)
        obs, reward, terminated, truncated, info = env.step(bad)
        assert "error" in info and info["error"]
        assert isinstance(obs, str) and "Format error" in obs
        assert reward == pytest.approx(sum(info["reward_components"].values()))
        assert terminated  # single-turn: the one response is the final answer


@pytest.mark.parametrize("env_id", IDS)
def test_multi_turn_budget_truncates(env_id):
    env = gym.make(env_id, max_turns=3).unwrapped
    env.reset(seed=2)
    for turn in (1, 2):
        obs, r, term, trunc, info = env.step("thinking, no answer yet")
        assert not term and not trunc and info["turn"] == turn
        assert info["messages"][-1] == {"role": "user", "content": obs}
    obs, r, term, trunc, info = env.step("still nothing")
    assert trunc and not term
    env.reset(seed=2)
    env.step("no answer")
    obs, r, term, trunc, info = play_oracle(env)  # the oracle still finishes within the budget
    assert term and not trunc and info["correct"] is True


@pytest.mark.parametrize("env_id", IDS)
def test_reset_options(env_id):
    env = gym.make(env_id).unwrapped
    with pytest.raises(ValueError, match="unknown reset options"):
        env.reset(options={"level": 3})
    with pytest.raises(ValueError, match="unknown difficulty keys"):
        env.reset(options={"difficulty": {"nope": 1}})
    _, info = env.reset(seed=4)
    inst = env.instance
    for given in (inst, inst.to_dict(), inst.to_json()):
        obs, info2 = env.reset(seed=99, options={"instance": given})
        assert env.instance == inst and info2["instance_id"] == info["instance_id"]
    with pytest.raises(TypeError):
        env.reset(options={"instance": 42})


@pytest.mark.parametrize("env_id", IDS)
def test_seed_determinism_in_process_and_subprocess(env_id):
    a = gym.make(env_id)
    obs1, _ = a.reset(seed=123)
    j1 = a.unwrapped.instance.to_json()
    obs2, _ = gym.make(env_id).reset(seed=123)
    assert obs1 == obs2 and gym.make(env_id).unwrapped.instance is None
    b = gym.make(env_id)
    b.reset(seed=123)
    assert b.unwrapped.instance.to_json() == j1
    code = ("import json, gymnasium as gym, solvergym; e = gym.make(%r); o, _ = e.reset(seed=123); "
            "print(json.dumps([o, e.unwrapped.instance.to_json()]))" % env_id)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={"PYTHONHASHSEED": "7", "PATH": "/usr/bin:/bin"})
    assert json.loads(out.stdout) == [obs1, j1]
    assert a.reset(seed=124)[0] != obs1


@pytest.mark.parametrize("env_id", IDS)
def test_instances_round_trip_json(env_id):
    env = gym.make(env_id).unwrapped
    for seed in range(5):
        env.reset(seed=seed)
        inst = env.instance
        again = type(inst).from_json(inst.to_json())
        assert again == inst and again.to_json() == inst.to_json()
        # to_json skips asdict's copy; the text (and so instance_id) is the one asdict gives
        assert inst.to_json() == json.dumps(dataclasses.asdict(inst), sort_keys=True, separators=(",", ":"),
                                            ensure_ascii=False)


def test_readme_lists_every_env_and_the_two_commands():
    readme = (ROOT / "README.md").read_text()
    for env_id in IDS:
        assert env_id in readme
    assert "make demo" in readme and "make test" in readme


def test_default_kwargs_come_from_the_constructor():
    assert default_kwargs("SolverSAT-v0")["k"] == 5
    assert default_kwargs("SolverSATBench-v0")["show_mapping"] is False
    assert solvergym.__version__
