"""SolverZebra-v0, SolverKnights-v0, SolverLSAT-v0 in trace and step mode: the text-env contract,
the oracle's maximal reward, step-mode payments, budgets, hostile input, determinism."""
import json
import subprocess
import sys
import warnings

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.error import ResetNeeded
from gymnasium.utils.env_checker import check_env
from hypothesis import given, settings, strategies as st

import solvergym  # noqa: F401
from solvergym.agents.scripted import oracle_action, random_action
from solvergym.envs.logic_steps.problem import format_answer
from solvergym.envs.modes import SingleTurnEnv, StepEnv, make_env
from solvergym.registry import default_kwargs

IDS = ["SolverZebra-v0", "SolverKnights-v0", "SolverLSAT-v0"]
MODES = ["trace", "step"]
KEYS = {"parsed", "format", "accuracy", "novel", "consistency", "contra"}


def run_oracle(env):
    total, n, done = 0.0, 0, False
    while not done:
        obs, r, term, trunc, info = env.step(oracle_action(env))
        assert r == pytest.approx(sum(info["reward_components"].values()))
        assert set(info["reward_components"]) == KEYS and "error" not in info
        total += r
        n += 1
        done = term or trunc
    assert term and not trunc
    return total, n, info


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("env_id", IDS)
def test_check_env_passes_without_warnings(env_id, mode):
    env = gym.make(env_id, mode=mode)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(env.unwrapped)


@pytest.mark.parametrize("env_id", IDS)
def test_oracle_trace_mode_gets_the_maximum(env_id):
    env = gym.make(env_id).unwrapped
    for seed in range(40):  # seeds 25 and 81 of SolverLSAT-v0 once had no novel gold step
        env.reset(seed=seed)
        total, n, info = run_oracle(env)
        assert n == 1 and total == pytest.approx(1.55), info["reason"]
        assert info["correct"] and info["error_type"] == "correct"
        assert info["steps"] and all(s["label"] == "novel" for s in info["steps"])
        assert info["signals"]["s_sat"] and info["signals"]["premises_equivalent"]


@pytest.mark.parametrize("env_id", IDS)
def test_oracle_step_mode(env_id):
    env = gym.make(env_id, mode="step").unwrapped
    env.reset(seed=1)
    gold = env.problem.gold_steps(env.instance)
    paid = dict.fromkeys(KEYS, 0.0)
    done = False
    n = 0
    while not done:
        obs, r, term, trunc, info = env.step(oracle_action(env))
        for k, v in info["reward_components"].items():
            paid[k] += v
        n += 1
        done = term or trunc
    assert n == len(gold) + 2  # premises, steps, solution
    # the episode's total of every component is the trace-mode score of the same trace
    assert info["trace_reward"] == pytest.approx(1.55)
    assert paid == pytest.approx(info["trace_components"], abs=1e-9)
    assert len(info["steps"]) == len(gold) and info["metrics"]["parsed"] == len(gold)


def _running(n_formal, n_novel, n_contra, parsed=True):
    """Step mode's running value (m = 0.5 while r_accuracy is unknown), Spring's weights."""
    f = (lambda c: c / n_formal if n_formal else 0.0)
    return {"parsed": 0.15 * parsed, "novel": 0.5 * 0.40 * f(n_novel), "contra": -0.5 * 0.15 * f(n_contra)}


def _diff(a, b):
    return {k: a[k] - b[k] for k in a}


def test_step_mode_payments_and_verdicts():
    env = gym.make("SolverZebra-v0", mode="step", n_houses=3, n_attributes=3).unwrapped
    env.reset(seed=0)
    inst = env.instance
    paid = dict.fromkeys(KEYS, 0.0)

    def step(action):
        out = env.step(action)
        for k, v in out[4]["reward_components"].items():
            paid[k] += v
        return out

    obs, r, term, trunc, info = step("hello")  # premises first
    assert "error" in info and "premises" in obs and not term and r == 0.0
    obs, r, term, trunc, info = step("\n".join(f"C{i}: {f}." for i, f in enumerate(inst.clue_formulas, 1)))
    assert r == pytest.approx(0.15) and info["reward_components"]["parsed"] == 0.15
    assert "unique solution" in obs and info["premises"]["equivalent"] is True and info["premises"]["gate"]
    sol = inst.houses()
    name = inst.values[1][0]
    wrong = sol[name] % 3 + 1
    before = _running(0, 0, 0)
    # each step pays the change of the running value: a novel step raises the novel fraction
    obs, r, term, trunc, info = step(f"I think so. S1: {name} == {sol[name]}.")
    assert info["step"]["label"] == "novel" and obs.startswith("S1: novel")
    expect = _diff(_running(1, 1, 0), before)
    assert r == pytest.approx(sum(expect.values())) and r == pytest.approx(0.20)
    # ... a redundant one lowers it, and costs
    obs, r, term, trunc, info = step(f"Again. S2: {name} == {sol[name]}.")
    assert info["step"]["label"] == "redundant" and "redundant" in obs
    assert r == pytest.approx(sum(_diff(_running(2, 1, 0), _running(1, 1, 0)).values())) and r < 0
    obs, r, term, trunc, info = step(f"Wrong. S3: {name} == {wrong}.")
    assert info["step"]["label"] == "contradictory"
    assert info["reward_components"]["contra"] == pytest.approx(-0.5 * 0.15 / 3)
    obs, r, term, trunc, info = step(f"Domain. S4: {name} != {inst.values[1][1]}.")
    assert info["step"]["label"] == "tautological"
    assert r == pytest.approx(sum(_diff(_running(4, 1, 1), _running(3, 1, 1)).values()))
    obs, r, term, trunc, info = step("Typo. S5: nobody == 1.")  # an unparseable step takes r_parsed back
    assert "error" in info and "unknown value" in info["error"] and obs.startswith("Format error") and not term
    assert info["reward_components"]["parsed"] == pytest.approx(-0.15)
    assert r == pytest.approx(sum(_diff(_running(5, 1, 1, parsed=False), _running(4, 1, 1)).values()))
    obs, r, term, trunc, info = step("no formula in this one")
    assert "error" in info and r == 0.0
    sentence, formula = env.problem.gold_steps(env.instance)[0]  # a gold step (numbered after the five sent) is still novel
    obs, r, term, trunc, info = step(f"{sentence.rstrip('.')}. S6: {formula}.")
    assert info["step"]["label"] in ("novel", "redundant")
    sol_action = format_answer(env.problem.family.solution_only(env.problem.family.gold_answer(inst)))
    obs, r, term, trunc, info = step(sol_action)
    assert term and info["correct"] and obs.startswith("Correct")
    full = info["trace_components"]
    assert full["accuracy"] == pytest.approx(0.6)
    assert full["format"] == 0.0  # a step action without a formula broke the format
    assert full["consistency"] == 0.0  # the contradictory step is in Z
    assert paid == pytest.approx(full, abs=1e-12)  # every component: episode sum == trace score
    with pytest.raises(ResetNeeded):
        env.step("more")


def test_step_mode_without_unique_premises_pays_no_process_reward():
    env = gym.make("SolverZebra-v0", mode="step").unwrapped
    env.reset(seed=3)
    inst = env.instance
    obs, r, *_ = env.step(f"C1: {inst.clue_formulas[0]}.")
    assert r == pytest.approx(0.15) and "more than one solution" in obs
    t = inst.values[0][0]
    obs, r, term, trunc, info = env.step(f"Guess. S1: {t} == {inst.houses()[t]}.")
    assert r == 0.0 and "no process reward" in obs
    assert info["step"]["label"] in ("unsupported", "novel", "restates_premise")


def test_step_mode_budget_truncates():
    env = gym.make("SolverKnights-v0", mode="step", max_turns=3).unwrapped
    env.reset(seed=0)
    env.step(oracle_action(env))
    env.step(oracle_action(env))
    obs, r, term, trunc, info = env.step("Still thinking. S9: Knight(nobody).")
    assert trunc and not term


@pytest.mark.parametrize("env_id", IDS)
def test_random_agent_is_well_formed(env_id):
    env = gym.make(env_id).unwrapped
    rng = np.random.default_rng(0)
    for seed in range(5):
        env.reset(seed=seed)
        obs, r, term, trunc, info = env.step(random_action(env, rng))
        assert term and "error" not in info and info["signals"]["r_parsed"] == 1.0


@pytest.mark.parametrize("env_id", IDS)
def test_reward_presets_through_the_env(env_id):
    for preset, expected in [("or_int", 0.75), ("minus_n", 1.15), ("minus_nc", 1.15), ("or_nl", 0.75)]:
        env = gym.make(env_id, reward=preset).unwrapped
        env.reset(seed=2)
        obs, r, *_ , info = env.step(oracle_action(env))
        assert r == pytest.approx(expected), preset
    env = gym.make(env_id, reward="or_nl").unwrapped
    obs, _ = env.reset(seed=2)
    assert "S<k>" not in obs and "selected_option" in obs or "solution" in obs


def test_zebra_bucket_and_difficulty_options():
    env = gym.make("SolverZebra-v0").unwrapped
    sizes = set()
    for seed in range(12):
        _, info = env.reset(seed=seed, options={"difficulty": {"bucket": "X-Large"}})
        sizes.add(info["size"])
        assert info["difficulty"]["bucket"] == "X-Large"
    assert len(sizes) >= 3 and sizes <= {"5x5", "5x6", "6x4", "6x5", "6x6"}
    with pytest.raises(ValueError, match="bucket"):
        env.reset(options={"difficulty": {"bucket": "Huge"}})
    with pytest.raises(ValueError, match="n_houses"):
        gym.make("SolverZebra-v0", n_houses=7)
    _, info = gym.make("SolverLSAT-v0", game="grouping", question_type="if_then").reset(seed=0)
    assert info["difficulty"]["game"] == "grouping" and info["question_type"] == "if_then"


PROBLEM_OF = {"SolverZebra-v0": "zebra", "SolverKnights-v0": "knights", "SolverLSAT-v0": "lsat"}


@pytest.mark.parametrize("env_id", IDS)
def test_trace_mode_is_the_single_turn_mode_posing_the_problem(env_id):
    """Issue 11: a Spring family's trace mode is a Problem: SingleTurnEnv(problem=name) gives the
    family env's observations, rewards and info, for the oracle, a random answer and a failure."""
    single = SingleTurnEnv(problem=PROBLEM_OF[env_id], n_people=4) if env_id == "SolverKnights-v0" else \
        SingleTurnEnv(problem=PROBLEM_OF[env_id])
    family = gym.make(env_id, **({"n_people": 4} if env_id == "SolverKnights-v0" else {})).unwrapped
    assert single.knobs == family.knobs and single.problem.name == PROBLEM_OF[env_id]
    for seed in range(4):
        for action in ("oracle", "random", "no answer"):
            got = []
            for env in (single, family):
                obs, info = env.reset(seed=seed)
                text = {"oracle": lambda: oracle_action(env), "random": lambda: random_action(env, np.random.default_rng(seed)),
                        "no answer": lambda: "I think so."}[action]()
                out = env.step(text)
                got.append((obs, out[0], out[1], out[4]["reward_components"], out[4]["reason"], out[4]["correct"]))
            assert got[0] == got[1], (seed, action)
    # the step mode poses any registered problem with a steps capability by name, as the family ids do
    step = StepEnv(problem=PROBLEM_OF[env_id])
    obs, _ = step.reset(seed=1)
    assert obs == gym.make(env_id, mode="step").unwrapped.reset(seed=1)[0]
    with pytest.raises(ValueError, match="'sat' has no step mode"):
        StepEnv(problem="sat")


def test_settings_are_the_problems_and_a_fixed_one_is_refused():
    want = {"reward", "aggregation", "accept", "novelty", "require_unique", "require_faithful", "incremental",
            "consistency_over", "max_steps", "verify_budget_s", "mode", "step_credit", "max_turns",
            "max_action_chars", "render_mode", "reward_weights", "reward_timing", "retry_penalty"}
    assert set(default_kwargs("SolverZebra-v0")) == want | {"n_houses", "n_attributes", "bucket", "clue_weights"}
    assert set(default_kwargs("SolverLSAT-v0")) == (want - {"require_unique"}) | {
        "game", "n_entities", "n_groups", "question_type", "max_solutions"}
    with pytest.raises(TypeError, match="fixes require_unique=False"):
        gym.make("SolverLSAT-v0", require_unique=True)
    with pytest.raises(ValueError, match="max_solutions"):
        gym.make("SolverLSAT-v0", max_solutions=1)
    with pytest.raises(TypeError, match="unexpected keyword argument 'colour'"):
        gym.make("SolverZebra-v0", colour="red")
    env = make_env("knights", 5, 3, novelty="spring", verify_budget_s=5)  # positional arguments fill the knobs
    assert env.knobs.as_dict() == {"n_people": 5, "depth": 3, "width": 2}
    assert (env.problem.novelty, env.problem.verify_budget_s) == ("spring", 5.0)


@pytest.mark.parametrize("env_id", IDS)
def test_instances_round_trip_and_reset_with_given_instance(env_id):
    env = gym.make(env_id).unwrapped
    obs, info = env.reset(seed=7)
    inst = env.instance
    for given in (inst, inst.to_dict(), inst.to_json()):
        obs2, info2 = env.reset(seed=99, options={"instance": given})
        assert obs2 == obs and info2["instance_id"] == info["instance_id"]
    assert type(inst).from_json(inst.to_json()).to_json() == inst.to_json()


def test_make_vec_sync_both_modes():
    for mode in MODES:
        venv = gym.make_vec("SolverKnights-v0", num_envs=3, vectorization_mode="sync", mode=mode)
        obs, infos = venv.reset(seed=5)
        assert len(set(obs)) == 3
        actions = [oracle_action(e.unwrapped) for e in venv.unwrapped.envs]
        obs, rew, term, trunc, infos = venv.step(actions)
        assert rew.shape == (3,) and (infos["reward_components"]["parsed"] > 0).all()
        venv.close()


def test_seed_determinism_in_a_fresh_interpreter():
    code = ("import json, gymnasium as gym, solvergym\n"
            "out = []\n"
            f"for i in {IDS!r}:\n"
            "    e = gym.make(i); o, _ = e.reset(seed=123); out.append([o, e.unwrapped.instance.to_json()])\n"
            "print(json.dumps(out))\n")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={"PYTHONHASHSEED": "11", "PATH": "/usr/bin:/bin"})
    here = []
    for env_id in IDS:
        e = gym.make(env_id)
        o, _ = e.reset(seed=123)
        here.append([o, e.unwrapped.instance.to_json()])
    assert json.loads(res.stdout) == here


HOSTILE = [
    "<answer>" + "[" * 60000 + "</answer>",
    "<answer>{\"syntactic_clues\": [\"C1: " + "Not(" * 400 + "x" + ")" * 400 + ".\"]}</answer>",
    "<answer>{\"n_houses\": 1e99999, \"solution\": {\"header\": 5}}</answer>",
    "S1: " + "(" * 1500 + "a == 1" + ")" * 1500 + ".",
    "S1: Sat(Option_Q).", "S1: AtLeast(999, Knight(A)).", "<answer>{\"solution\": null}</answer>",
    "<answer>{\"solution\": {\"selected_option\": [\"A\"]}}</answer>", "C1: Alice == .",
    b"\xff\xfe\x00", "\x00\x01", 3.5, None, "x" * (70 * 1024),
]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("env_id", IDS)
def test_hostile_actions_never_raise(env_id, mode):
    env = gym.make(env_id, mode=mode).unwrapped
    for i, action in enumerate(HOSTILE):
        env.reset(seed=i)
        if mode == "step" and i % 2:
            env.step(oracle_action(env))
        obs, r, term, trunc, info = env.step(action)
        assert isinstance(obs, str) and r == pytest.approx(sum(info["reward_components"].values()))


_alphabet = st.sampled_from(list("SC0123456789:()=!<>+-,. ab_\"{}[]") + ["And(", "Or(", "Not(", "Knight(", "Assign(",
                                                                      "<answer>", "</answer>", "S1: ", "==",
                                                                      "\"solution\": "])


@settings(max_examples=40)
@given(text=st.one_of(st.text(max_size=300), st.lists(_alphabet, max_size=60).map("".join)),
       env_id=st.sampled_from(IDS), mode=st.sampled_from(MODES), warm=st.booleans())
def test_fuzzed_actions_never_raise(text, env_id, mode, warm):
    env = _envs[env_id, mode]
    env.reset(seed=1)
    if warm and mode == "step":
        env.step(oracle_action(env))
    obs, r, term, trunc, info = env.step(text)
    assert isinstance(obs, str) and np.isfinite(r)
    assert r == pytest.approx(sum(info["reward_components"].values()))


_envs = {(i, m): gym.make(i, mode=m).unwrapped for i in IDS for m in MODES}


@pytest.mark.parametrize("env_id", IDS)
def test_empty_reasoning_breaks_the_format(env_id):
    """Spring App. E marks ``reasoning`` mandatory: the right answer with ``"reasoning": []`` used
    to earn 1.15 of 1.55 (r_format 1 and Def. 6 over no steps); it is a format issue now."""
    env = gym.make(env_id).unwrapped
    for seed in range(3):
        env.reset(seed=seed)
        answer = env.problem.family.gold_answer(env.instance)
        assert answer["reasoning"] == []
        obs, r, term, trunc, info = env.step(format_answer(answer))
        assert info["correct"] and info["signals"]["r_parsed"] == 1.0
        assert info["signals"]["r_format"] == 0.0 and '"reasoning" is empty' in "; ".join(info["format_issues"])
        assert info["reward_components"]["format"] == 0.0
        assert r == pytest.approx(0.15 + 0.60 + 0.30)  # parsed, accuracy, consistency; no novelty
    # step mode: premises, then the solution with no step in between, pays the same
    step = gym.make(env_id, mode="step").unwrapped
    step.reset(seed=0)
    env.reset(seed=0)
    answer = env.problem.family.gold_answer(env.instance)
    premises = {k: v for k, v in answer.items() if k not in ("reasoning", "solution")}
    paid = 0.0
    for action in (format_answer(premises), format_answer(env.problem.family.solution_only(answer))):
        obs, r, term, trunc, info = step.step(action)
        paid += r
    assert term and info["trace_components"]["format"] == 0.0
    assert info["trace_components"] == pytest.approx(env.problem.score_trace(env.instance, format_answer(answer)).components, abs=1e-12)
    assert paid == pytest.approx(0.15 + 0.60 + 0.30)
    # OR-NL asks for the solution only: no reasoning is the format it asks for
    nl = gym.make(env_id, reward="or_nl").unwrapped
    nl.reset(seed=0)
    obs, r, *_, info = nl.step(oracle_action(nl))
    assert r == pytest.approx(0.75) and info["signals"]["r_format"] == 1.0
