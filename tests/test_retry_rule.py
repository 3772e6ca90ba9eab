"""One retry rule (issue 24, item 5; envs/modes/single.py): with ``max_turns > 1`` an episode's
return is the verdict of the answer that stands, the last one. A retried turn (a format failure,
or SolverOR-v0's program that did not run) pays nothing of its own verdict under ``"end"``
timing, so failed-then-X pays what X pays with ``max_turns=1``, the same in every env;
``retry_penalty`` makes each retry cost. Real solvers and sandbox."""
import gymnasium as gym
import pytest

import solvergym  # noqa: F401
from solvergym.agents.scripted import oracle_action

GARBAGE = "I think the answer is 42."
OR_RAISES = "<think>t</think><model>m</model><python>\nraise ValueError('boom')\n</python>"
#: a format failure that the graded format rule pays 7/12 of its own
OR_NO_PROGRAM = "<think>t</think><model>m</model>"

#: (env id, kwargs, a failed first answer): every kind of env with retries
CASES = (
    ("SolverSAT-v0", {}, GARBAGE),
    ("SolverSATBench-v0", {}, GARBAGE),
    ("SolverOR-v0", {}, OR_RAISES),
    ("SolverOR-v0", {"format_rule": "sirl_code"}, OR_NO_PROGRAM),
    ("SolverKnights-v0", {"mode": "trace"}, GARBAGE),
    ("SolverTool-v0", {"task": "sat"}, GARBAGE),
)


def episode(env, actions, seed=0):
    env.reset(seed=seed)
    out = []
    for a in actions:
        action = oracle_action(env) if a is None else a
        obs, r, term, trunc, info = env.step(action)
        out.append((r, term, trunc, info))
        if term or trunc:
            break
    return out


def single(env_id, kwargs, action, seed=0):
    """The reward of ``action`` alone with ``max_turns=1`` (``None``: the oracle's)."""
    env = gym.make(env_id, max_turns=1, **kwargs)
    (r, term, _, info), = episode(env, [action], seed)
    assert term
    env.close()
    return r


@pytest.mark.parametrize("env_id, kwargs, failed", CASES,
                         ids=["sat", "sat-bench", "or-raises", "or-no-program", "knights-trace", "tool-sat"])
def test_failed_then_x_pays_what_x_pays_alone(env_id, kwargs, failed):
    env = gym.make(env_id, max_turns=2, **kwargs)
    ok = episode(env, [failed, None])
    assert [s[1:3] for s in ok] == [(False, False), (True, False)]
    assert ok[0][0] == 0.0 and all(v == 0.0 for v in ok[0][3]["reward_components"].values())
    assert ok[1][3]["correct"] is True and ok[1][0] == pytest.approx(single(env_id, kwargs, None), abs=1e-9)
    bad = episode(env, [failed, failed])
    assert bad[0][0] == 0.0 and len(bad) == 2 and not bad[1][3]["correct"]
    assert bad[1][0] == pytest.approx(single(env_id, kwargs, failed), abs=1e-9)  # the same scale as max_turns=1
    env.close()


def test_sat_and_or_per_step_rewards_and_what_info_says():
    sat = gym.make("SolverSAT-v0", max_turns=2)
    (r1, *_, i1), (r2, *_, i2) = episode(sat, [GARBAGE, None])
    assert (r1, r2) == (0.0, 1.0)  # was -1 then +1: a correct retry summed to 0, below an idk
    assert i1["revise"] and i1["error"] and i1["verdict_components"] == {"format": -1.0, "correct": 0.0}
    (r1, *_), (r2, *_, i2) = episode(sat, [GARBAGE, GARBAGE])
    assert (r1, r2) == (0.0, -1.0) and i2["reward_components"] == {"format": -1.0, "correct": 0.0}
    or_env = gym.make("SolverOR-v0", max_turns=2, format_rule="sirl_code")
    (r1, *_, i1), (r2, *_, i2) = episode(or_env, [OR_NO_PROGRAM, None])
    assert r1 == 0.0 and i1["verdict_components"]["format"] == pytest.approx(7 / 12) and i1["error"]
    assert i2["correct"] and r2 == pytest.approx(sum(i2["reward_components"].values()))
    # a retried step keeps the ground truth private, whatever sent it back
    assert not {"ground_truth", "reference", "host"} & set(i1) and i2["ground_truth"] == or_env.unwrapped.instance.answer
    or_env.close()
    or_env = gym.make("SolverOR-v0", max_turns=2)
    (r1, *_, i1), (r2, *_) = episode(or_env, [OR_RAISES, OR_RAISES])
    assert (r1, r2) == (0.0, 0.5) and i1["verdict_components"]["execution"] == 0.0
    sat.close()
    or_env.close()


def test_per_call_timing_pays_the_standing_verdict_and_sums_the_same():
    for env_id, failed, want in (("SolverSAT-v0", GARBAGE, [-1.0, 2.0]), ("SolverOR-v0", OR_RAISES, [0.5, 3.0])):
        env = gym.make(env_id, max_turns=2, reward_timing="per_call")
        got = [s[0] for s in episode(env, [failed, None])]
        assert got == pytest.approx(want, abs=1e-9) and sum(got) == pytest.approx(single(env_id, {}, None), abs=1e-9)
        env.close()


def test_retry_penalty_costs_each_retry_in_its_own_component():
    env = gym.make("SolverSAT-v0", max_turns=3, retry_penalty=0.25)
    assert env.unwrapped.components == ("format", "correct", "retry")
    steps = episode(env, [GARBAGE, GARBAGE, None])
    assert [s[0] for s in steps] == [-0.25, -0.25, 1.0]
    assert [s[3]["reward_components"]["retry"] for s in steps] == [-0.25, -0.25, 0.0]
    env.close()
    for bad in (-0.1, float("nan"), True, "1"):
        with pytest.raises(ValueError, match="retry_penalty must be a finite number >= 0"):
            gym.make("SolverSAT-v0", retry_penalty=bad)
