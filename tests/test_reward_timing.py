"""``reward_timing`` (issue 24, item 4): SolverTool-v0 and multi-turn SolverOR-v0 pay SAT-RL §3.4's
(and SIRL eq. 6's) end-of-episode reward either when the episode ends (``"end"``, the paper's,
the default) or as each call changes it (``"per_call"``). The same episodes under both timings
sum to the same return; a ``TimeLimit`` wrapper that cuts a ``per_call`` episode short keeps what
its calls earned, where ``"end"`` pays nothing. Real sandbox children, real solvers."""
import gymnasium as gym
import pytest

import solvergym  # noqa: F401
from solvergym.agents.scripted import oracle_action
from solvergym.registry import env_ids

RAISE_CALL = "<tool_call>\nraise ValueError('boom')\n</tool_call>"
NO_ANSWER = "thinking, no answer yet"


def oracle_call(env, obs):
    """The oracle's tool call alone (no answer after it), whatever turn it is."""
    env = env.unwrapped
    solver = env.instance.solver or "z3"
    return f"<tool_call>\n{env.gold().program(solver)}</tool_call>"


def gold_answer(env, obs):
    return env.unwrapped.gold().answer


def oracle(env, obs):
    return oracle_action(env, obs)


#: name -> the actions of one episode, each a function of (env, last observation); ``oracle`` is
#: repeated until the episode ends
SCRIPTS = {
    "oracle": (oracle,),
    "raise-then-clean-then-answer": (lambda e, o: RAISE_CALL, oracle_call, gold_answer),
    "clean-then-raise-then-answer": (oracle_call, lambda e, o: RAISE_CALL, gold_answer),
    "budget-ends-it": (lambda e, o: RAISE_CALL, oracle_call, lambda e, o: NO_ANSWER),
}


def run(env, script, seed):
    obs, _ = env.reset(seed=seed)
    steps, done, i = [], False, 0
    while not done:
        action = script[min(i, len(script) - 1)](env, obs)
        obs, r, term, trunc, info = env.step(action)
        assert r == pytest.approx(sum(info["reward_components"].values()), abs=1e-12)
        steps.append((r, info["reward_components"], term, trunc, info))
        done, i = term or trunc, i + 1
    return steps


def total(steps):
    out = {}
    for _, comps, *_ in steps:
        for k, v in comps.items():
            out[k] = out.get(k, 0.0) + v
    return out


@pytest.fixture(scope="module")
def tool_envs():
    envs = {(task, timing): gym.make("SolverTool-v0", task=task, max_turns=3, reward_timing=timing)
            for task in ("sat-bench", "sat", "or") for timing in ("end", "per_call")}
    yield envs
    for env in envs.values():
        env.close()


#: what each script's episode returns in all (seed 0): SAT-RL's 2.2 for the oracle (format 0.1,
#: correct 1, tool 0.1, equivalence 1); the answer after a raising last call keeps format and
#: correct only; the budget's end pays the last call's tool rewards. SolverOR-v0's answer in tool
#: mode: format 0.5, execution 1, accuracy 2 (+ tool 0.1).
EXPECTED = {
    **{(task, script): want for task in ("sat-bench", "sat") for script, want in (
        ("oracle", 2.2), ("raise-then-clean-then-answer", 2.2), ("clean-then-raise-then-answer", 1.1),
        ("budget-ends-it", 1.1))},
    ("or", "oracle"): 3.6, ("or", "raise-then-clean-then-answer"): 3.6, ("or", "clean-then-raise-then-answer"): 3.5,
    ("or", "budget-ends-it"): 0.1,
}


@pytest.mark.parametrize("task, script", sorted(EXPECTED))
def test_both_timings_pay_the_same_return_on_the_same_episodes(tool_envs, task, script):
    end = run(tool_envs[task, "end"], SCRIPTS[script], seed=0)
    per_call = run(tool_envs[task, "per_call"], SCRIPTS[script], seed=0)
    assert len(end) == len(per_call)
    assert [s[2:4] for s in end] == [s[2:4] for s in per_call]  # the same episode
    assert all(r == 0.0 for r, *_ in end[:-1])  # "end": the paper's, unchanged
    assert sum(r for r, *_ in end) == pytest.approx(EXPECTED[task, script], abs=1e-9)
    assert sum(r for r, *_ in per_call) == pytest.approx(sum(r for r, *_ in end), abs=1e-9)
    want = total(end)
    assert total(per_call) == pytest.approx(want, abs=1e-9)
    assert end[-1][4]["correct"] == per_call[-1][4]["correct"]


def test_per_call_pays_each_call_its_verdict_on_its_own_step(tool_envs):
    for task, equivalence in (("sat-bench", 1.0), ("sat", 1.0)):
        steps = run(tool_envs[task, "per_call"], SCRIPTS["clean-then-raise-then-answer"], seed=0)
        (r1, c1, *_, i1), (r2, c2, *_, i2), (r3, c3, *_, i3) = steps
        # the clean solver call pays tool and equivalence at once; the answer's components wait
        assert c1 == {"format": 0.0, "correct": 0.0, "tool": 0.1, "equivalence": equivalence}
        assert i1["call_components"] == {"tool": 0.1, "equivalence": 1.0}
        assert "ran and called" in i1["tool_reward_reason"] and i1["equivalence"]["equivalent"]
        # the raising call replaces it as the last call (§3.4): what it earned is paid back
        assert c2 == pytest.approx({"format": 0.0, "correct": 0.0, "tool": -0.1, "equivalence": -1.0})
        assert i2["call_components"] == {"tool": 0.0, "equivalence": 0.0}
        assert "did not run cleanly" in i2["tool_reward_reason"]
        # the answer pays its own components on the last step
        assert c3 == pytest.approx({"format": 0.1, "correct": 1.0, "tool": 0.0, "equivalence": 0.0})
        assert i3["correct"] is True and r1 + r2 + r3 == pytest.approx(1.1, abs=1e-9)
    steps = run(tool_envs["or", "per_call"], SCRIPTS["raise-then-clean-then-answer"], seed=0)
    assert [round(r, 9) for r, *_ in steps] == [0.0, 0.1, 3.5]  # raise, the oracle's call, its answer


def test_a_time_limit_keeps_what_per_call_paid():
    for timing, want in (("end", 0.0), ("per_call", 1.1)):
        env = gym.make("SolverTool-v0", task="sat-bench", max_turns=4, reward_timing=timing, max_episode_steps=1)
        obs, _ = env.reset(seed=0)
        obs, r, term, trunc, info = env.step(oracle_call(env, obs))
        assert trunc and not term  # the wrapper's cut, not the env's budget
        assert r == pytest.approx(want, abs=1e-9), timing
        env.close()
    # SolverOR-v0 multi-turn: the retried answer stands until the next one (per_call pays its format)
    for timing, want in (("end", 0.0), ("per_call", 0.5)):
        env = gym.make("SolverOR-v0", max_turns=3, reward_timing=timing, max_episode_steps=1)
        env.reset(seed=0)
        _, r, term, trunc, info = env.step("<think>t</think><model>m</model><python>\nraise ValueError('x')\n</python>")
        assert trunc and not term and info["revise"] and r == pytest.approx(want, abs=1e-9), timing
        env.close()


def test_ids_carry_no_gymnasium_step_limit_and_bad_timings_are_refused():
    for env_id in env_ids():
        assert gym.spec(env_id).max_episode_steps is None, env_id  # max_turns is the budget
    with pytest.raises(ValueError, match=r"reward_timing must be one of \['end', 'per_call'\], got 'stepwise'"):
        gym.make("SolverTool-v0", reward_timing="stepwise")
    with pytest.raises(ValueError, match="reward_timing must be one of"):
        gym.make("SolverSAT-v0", reward_timing="later")
