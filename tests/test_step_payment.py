"""Step mode pays each step what its prompt says (issue 24, item 3).

The step prompt (:meth:`~solvergym.envs.logic_steps.problem.StepProblem.step_payment`) tells the
model how a step moves its score: Spring §4.3's novel share and contradiction share as they
stand, paid as their change (``step_credit="running"``). Each verdict class is sent here and the
step's reward checked against that sentence; the episode still sums to the trace-mode score.
"""
from __future__ import annotations

import gymnasium as gym
import pytest

import solvergym  # noqa: F401
from solvergym.envs.logic_steps.problem import format_answer


def _episode(kwargs=None, seed=0):
    env = gym.make("SolverKnights-v0", mode="step", **{"world": "natural", **(kwargs or {})})  # seed 0: the K&K draw
    obs, _ = env.reset(seed=seed)
    problem, inst = env.unwrapped.problem, env.unwrapped.instance
    gold = problem.family.gold_answer(inst)
    paid = {}

    def send(action):
        obs, r, term, trunc, info = env.step(action)
        for k, v in info["reward_components"].items():
            paid[k] = paid.get(k, 0.0) + v
        return obs, r, term, info

    send("\n".join(gold["syntactic_statements"]))
    return env, obs, problem, inst, gold, send, paid


def _steps(problem, inst):
    (s1, f1), (s2, f2), (s3, f3) = problem.gold_steps(inst)[:3]
    return [f"{s1} S{{k}}: {f1}.", f"{s2} S{{k}}: {f2}.", f"{s3} S{{k}}: {f3}."]


def test_the_step_prompt_says_what_is_paid():
    env, obs, *_ = _episode()
    assert "each step is paid the change it makes to your score so far" in obs
    assert "keeps it at 100% while every step so far was novel" in obs and "so more steps do not earn more" in obs
    assert "raises your reward" not in obs  # the old promise, false once the share is at 100%
    for env_id in ("SolverZebra-v0", "SolverLSAT-v0"):
        first, _ = gym.make(env_id, mode="step").reset(seed=0)
        assert "The score counts the share of your steps that are novel" in first
        assert "{step payment}" not in first
    # the sentence follows the settings: no process reward, capped aggregation, final credit
    quiet, _ = gym.make("SolverKnights-v0", mode="step", reward="or_int").reset(seed=0)
    assert "steps earn no reward of their own" in quiet and "share" not in quiet
    capped, _ = gym.make("SolverKnights-v0", mode="step", aggregation="capped", step_credit="final").reset(seed=0)
    assert "up to the 10th" in capped and "nothing is paid before your solution" in capped


def test_every_verdict_class_moves_the_step_reward_as_the_prompt_says():
    env, _, problem, inst, gold, send, paid = _episode()
    g1, g2, g3 = _steps(problem, inst)
    names = inst.names
    truth = gold["solution"]
    role = {n: ("Knight" if truth[n] == "knight" else "Knave") for n in names}
    wrong = {n: ("Knave" if truth[n] == "knight" else "Knight") for n in names}
    k = iter(range(1, 100))

    def step(text):
        obs, r, term, info = send(text.replace("{k}", str(next(k))))
        label = info.get("step", {}).get("label")
        return label, r, info["reward_components"]

    label, r, c = step(g1)  # a novel step raises the share 0 -> 1
    assert label == "novel" and r > 0 and c["novel"] > 0
    label, r, c = step(f"Again. S{{k}}: {role[names[0]]}({names[0]}).")  # a repeat lowers it
    assert label == "redundant" and r < 0 and c["novel"] < 0
    label, r, c = step(g2)  # a novel step raises it 1/2 -> 2/3
    assert label == "novel" and r > 0 and c["novel"] > 0
    label, r, c = step(g3)  # and 2/3 -> 3/4
    assert label == "novel" and r > 0
    label, r, c = step(f"Tina's statement again. S{{k}}: {gold['syntactic_statements'][0].split(': ', 1)[1].rstrip('.')}.")
    assert label in ("restates_premise", "redundant") and r < 0 and c["novel"] < 0
    label, r, c = step(f"Trivially. S{{k}}: Or(Knight({names[1]}), Knave({names[1]})).")
    assert label == "tautological" and r < 0 and c["novel"] < 0
    label, r, c = step(f"A slip. S{{k}}: {wrong[names[2]]}({names[2]}).")  # the contradiction share costs
    assert label == "contradictory" and r < 0 and c["contra"] < 0 and c["novel"] < 0
    label, r, c = step("A typo. S{k}: Knight(Nobody).")  # takes the parsing reward back
    assert label == "parse_error" and c["parsed"] == pytest.approx(-0.15) and r < 0
    obs, r, term, info = send(format_answer({"solution": truth}))
    assert term and info["correct"]
    # the episode's components sum to the trace-mode score of the same premises, steps and solution
    assert paid == pytest.approx(info["trace_components"])


def test_a_step_keeps_the_share_where_the_prompt_says_it_does():
    env, _, problem, inst, gold, send, paid = _episode()
    g1, g2, g3 = _steps(problem, inst)
    premise = gold["syntactic_statements"][0].split(": ", 1)[1].rstrip(".")
    obs, r, term, info = send(f"Tina's statement. S1: {premise}.")  # no step was novel yet: 0
    assert info["step"]["label"] == "restates_premise" and r == 0.0
    a, b = inst.names[:2]
    obs, r, term, info = send(f"A case split. S2: Implies(Knight({b}), Knave({a})).")
    assert info["step"]["label"] == "no_new_fact" and r == 0.0  # still no novel step: kept at 0
    obs, r, term, info = send(g1.replace("{k}", "3"))  # 0 -> 1/3
    assert info["step"]["label"] == "novel" and r > 0
    env, _, problem, inst, gold, send, paid = _episode()
    send(g1.replace("{k}", "1"))
    obs, r, term, info = send(g2.replace("{k}", "2"))  # every step so far was novel: kept at 100%
    assert info["step"]["label"] == "novel" and r == pytest.approx(0.0, abs=1e-12)
