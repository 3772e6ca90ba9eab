"""SolverTool-v0 (SAT-RL §3.4) end to end: real sandbox children, real solvers, real rewards."""
import json
import os
import warnings
from collections import Counter
from pathlib import Path

import gymnasium as gym
import pytest
from gymnasium.error import ResetNeeded
from gymnasium.utils.env_checker import check_env
from hypothesis import given, settings, strategies as st

import solvergym  # noqa: F401
from solvergym.agents.scripted import OracleAgent, SolverToolOracle, oracle_action, random_action
from solvergym.sandbox import SOLVER_FAMILIES, default_pool, shutdown_default_pool
from solvergym.envs.sat.decision import DecisionInstance
from solvergym.envs.modes.tool import SolverToolEnv, ToolInstance
from solvergym.envs.sat.problem import SATProblem
from solvergym.envs.sat.tool import SATTool
from solvergym.envs.sat.programs import cnf_program, hack_program
from solvergym.agents.sft_data import build_sat_rl_sft

ENV_ID = "SolverTool-v0"

E1 = DecisionInstance.from_dict(json.loads((Path(__file__).parent / "data" / "sat_rl_e1_instance.json").read_text()))
E1_IMPLIED_DROPPED = [[12, -5], [-12, -5], [12, 5]]
E1_FREE_DROPPED = [[12, -3], [12, -5], [-12, -5]]
FULL = {"format": 0.1, "correct": 1.0, "tool": 0.1, "equivalence": 1.0}

# App. E.1's tool call, verbatim (its dead `if False` branch included)
E1_PROGRAM = '''from z3 import Bool, Or, Not, And, Solver, sat, unsat
# Define the variables
x_2_1_1 = Bool("x_2_1_1") # Clara, dark matter, field
x_1_0_0 = Bool("x_1_0_0") # Ben, gravitational waves, laboratory
# Create the conditions
condition1 = Or(x_2_1_1, Not(x_0_1_0)) if False else Or(x_2_1_1, Not(Bool("x_0_1_0")))
condition2 = Or(x_2_1_1, Not(x_1_0_0))
condition3 = Or(Not(x_2_1_1), Not(x_1_0_0))
condition4 = Or(x_2_1_1, x_1_0_0)
# Create solver and add constraints
solver = Solver()
solver.add(And(condition2, condition3, condition4))
# Check satisfiability
result = solver.check()
print(result)
'''


def e1_env(solver, **kw):
    env = SolverToolEnv(tool_sampling=False, solver=solver, **kw)
    env.reset(seed=0, options={"instance": E1})
    return env


def play(env, *actions):
    out = None
    for a in actions:
        out = env.step(a)
    return out


def call(code):
    return f"<think>\nencode and solve\n</think>\n<tool_call>\n{code}</tool_call>"


# ----------------------------------------------------------------------------- the contract
def test_check_env_passes_without_warnings():
    env = gym.make(ENV_ID)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(env.unwrapped)
    env.close()


def test_prompt_is_the_app_c_template():
    env = e1_env("pysmt")
    obs = env.reset(seed=0, options={"instance": E1})[0]
    assert obs.startswith("Solve the problem step by step and put your final answer in the format "
                          "```answer yes``` or ```answer no```. If the evidence is genuinely insufficient after using "
                          "the tool, you may output ```idk```. For this instance, you must import and use the "
                          "`pysmt` as the solver/tool call.")
    assert "\nVariable Mapping:\nx(0,0,0): Anna successfully conducts" in obs
    assert "\nProblem Statement:\nScenario: A team of three scientists" in obs
    assert "4. Either Clara successfully conducts an experiment on dark matter in the field, or Ben" in obs
    assert "<tool_call>" in obs and "<tool_response>" in obs
    env.close()


def test_tool_sampling_is_uniform_seeded_and_optional():
    env = SolverToolEnv()
    draws = [env.reset(seed=s)[1]["solver"] for s in range(250)]
    counts = Counter(draws)
    assert set(counts) == set(SOLVER_FAMILIES) and all(25 <= c <= 75 for c in counts.values()), counts
    assert [env.reset(seed=s)[1]["solver"] for s in range(20)] == draws[:20]
    # the instance is SolverSATBench-v0's for the same seed: the solver is drawn after it
    bench = gym.make("SolverSATBench-v0").unwrapped
    bench.reset(seed=7)
    env.reset(seed=7)
    assert env.problem_instance() == bench.instance
    fixed = SolverToolEnv(tool_sampling=False, solver="sympy")
    assert {fixed.reset(seed=s)[1]["solver"] for s in range(10)} == {"sympy"}
    free = SolverToolEnv(tool_sampling=False)
    obs, info = free.reset(seed=1)
    assert info["solver"] is None and "you must import and use" not in obs
    assert SolverToolEnv(solver="z3").reset(seed=3)[1]["solver"] == "z3"  # a fixed solver: no sampling
    with pytest.raises(ValueError):
        SolverToolEnv(tool_sampling=True, solver="z3")  # sampling and a fixed solver at once
    with pytest.raises(ValueError):
        SolverToolEnv(tool_sampling=False, solver="cvc5")


# ----------------------------------------------------------------------------- rewards (acceptance)
@pytest.mark.parametrize("solver", SOLVER_FAMILIES)
def test_app_e1_rewards_for_every_solver(solver):
    env = e1_env(solver)
    # the oracle: a correct program for the sampled solver, then the answer
    obs, r, term, trunc, info = env.step(oracle_action(env, env._last_obs))
    assert (r, term, trunc) == (0.0, False, False) and "error" not in info
    assert obs == "<tool_response>\nstdout: sat\nstderr: \n</tool_response>"
    assert info["tool_result"]["solver_calls"][0][0] == solver
    obs, r, term, trunc, info = env.step(oracle_action(env, env._last_obs))
    assert info["reward_components"] == FULL and r == pytest.approx(2.2) and term and not trunc
    assert info["equivalence"]["status"] == "equivalent"

    # clause 1 missing: implied by clauses 2 and 4, so still equivalent (App. E.1)
    env.reset(seed=0, options={"instance": E1})
    _, r, term, _, info = play(env, call(cnf_program(solver, E1_IMPLIED_DROPPED, E1.variables)), "```answer yes```")
    assert info["reward_components"] == FULL, info["equivalence"]

    # clause 4 missing: not implied, equivalence 0 (the other rewards stand)
    env.reset(seed=0, options={"instance": E1})
    _, r, _, _, info = play(env, call(cnf_program(solver, E1_FREE_DROPPED, E1.variables)), "```answer yes```")
    assert info["reward_components"] == {**FULL, "equivalence": 0.0}
    assert info["equivalence"]["status"] == "not_equivalent"

    # SAT-RL §4.3's reward hack: an import earns neither tool nor equivalence
    env.reset(seed=0, options={"instance": E1})
    obs, *_ = env.step(call(hack_program(solver)))
    assert f"stdout: {solver} imported" in obs
    _, r, _, _, info = env.step("```answer yes```")
    assert info["reward_components"] == {"format": 0.1, "correct": 1.0, "tool": 0.0, "equivalence": 0.0}
    assert "importing a solver is not using it" in info["tool_reward_reason"]
    assert info["equivalence"]["status"] == "no_formula"
    env.close()


def test_app_e1_verbatim_program():
    env = e1_env("z3")
    obs, *_ = env.step(call(E1_PROGRAM))
    assert "stdout: sat" in obs
    _, r, term, _, info = env.step("<think>\nsat means yes\n</think>\n```answer\nyes\n```")
    assert info["reward_components"] == FULL and term
    assert info["equivalence"]["aligned"] == {"x_1_0_0": "x(1,0,0)", "x_2_1_1": "x(2,1,1)"}
    env.close()


def test_tool_reward_needs_the_sampled_solver_and_a_clean_exit():
    env = e1_env("z3")
    # a correct sympy program when z3 was sampled: equivalent, but no tool reward
    _, _, _, _, info = play(env, call(cnf_program("sympy", E1.clauses, E1.variables)), "```answer yes```")
    assert info["reward_components"] == {**FULL, "tool": 0.0}
    assert "(it called sympy)" in info["tool_reward_reason"]
    # a correct z3 call followed by a crash: the last call did not run without error
    env.reset(seed=0, options={"instance": E1})
    crash = cnf_program("z3", E1.clauses, E1.variables) + "raise RuntimeError('late')\n"
    _, _, _, _, info = play(env, call(crash), "```answer yes```")
    assert info["reward_components"]["tool"] == 0.0 and info["reward_components"]["equivalence"] == 1.0
    # only the LAST tool call counts: a good call then a hack earns nothing
    env = e1_env("z3", max_turns=5)
    _, _, _, _, info = play(env, call(cnf_program("z3", E1.clauses, E1.variables)), call(hack_program("z3")),
                            "```answer yes```")
    assert info["reward_components"] == {"format": 0.1, "correct": 1.0, "tool": 0.0, "equivalence": 0.0}
    env.close()


def test_answers_idk_and_wrong():
    env = e1_env("z3")
    _, r, term, _, info = env.step("```idk```")
    assert term and info["reward_components"] == {"format": 0.1, "correct": 0.0, "tool": 0.0, "equivalence": 0.0}
    env.reset(seed=0, options={"instance": E1})
    _, r, _, _, info = env.step("```answer no```")
    assert r == pytest.approx(0.1 - 1.1) and info["correct"] is False


# ----------------------------------------------------------------------------- episode mechanics
def test_turn_budget_format_failures_and_combined_turns():
    env = e1_env("ortools", max_turns=3)
    obs, r, term, trunc, info = env.step("I am thinking, no tool and no answer")
    assert not term and not trunc and r == 0.0 and "Format error" in obs and info["error"]
    obs, r, term, trunc, info = env.step(call("print('hello')"))
    assert "error" not in info and obs.startswith("<tool_response>\nstdout: hello")
    # the third turn is the last: a tool call there ends the episode and the rewards are paid
    obs, r, term, trunc, info = env.step(call(cnf_program("ortools", E1.clauses, E1.variables)))
    assert trunc and not term
    assert info["reward_components"] == {"format": 0.0, "correct": 0.0, "tool": 0.1, "equivalence": 1.0}
    with pytest.raises(ResetNeeded):
        env.step("```answer yes```")
    # with one turn left the oracle calls the tool and answers in the same turn
    env = e1_env("python-sat", max_turns=1)
    action = oracle_action(env, env._last_obs)
    assert "<tool_call>" in action and action.rstrip().endswith("```")
    obs, r, term, trunc, info = env.step(action)
    assert term and info["reward_components"] == FULL and obs.startswith("<tool_response>") and obs.endswith("Correct.")
    env.close()


def test_many_tool_calls_in_one_turn_run_the_first():
    env = e1_env("z3")
    obs, _, _, _, info = env.step(call("print('first')") + "\n" + call("print('second')"))
    assert "stdout: first" in obs and info["ignored_tool_calls"] == 1


def test_hostile_programs_leave_the_env_working():
    env = e1_env("z3", max_turns=12, limits={"timeout_s": 1.5, "output_bytes": 1 << 20})
    hostile = {
        "timeout": "while True:\n    pass",
        "memory": "x = bytearray(10 * 1024 ** 3)",
        "output_limit": "import sys\nwhile True:\n    sys.stdout.write('y' * 65536)",
        "error": "import os\nwhile True:\n    os.fork()",
    }
    for status, code in hostile.items():
        obs, r, term, trunc, info = env.step(call(code))
        assert not term and not trunc and "error" not in info
        got = info["tool_result"]["status"]
        assert got == status or (status == "error" and got in ("error", "timeout", "killed")), (status, got)
        assert env.observation_space.contains(obs) and len(obs) < 10_000
        if got not in ("ok", "error"):
            assert f"[sandbox: {got}:" in obs
    obs, *_ = env.step(call("import sys\nsys.stdout.buffer.write(b'\\x00\\x1b[31m\\xff end')"))
    assert env.observation_space.contains(obs) and "end" in obs
    _, r, term, _, info = play(env, call(cnf_program("z3", E1.clauses, E1.variables)), "```answer yes```")
    assert info["reward_components"] == FULL and term
    env.close()


def test_sat_task_with_assignments():
    env = SolverToolEnv("sat", tool_sampling=False, solver="sympy", n=3, k=6, l=12)
    env.reset(seed=3)
    inst = env.problem_instance()
    obs, *_ = env.step(oracle_action(env, env._last_obs))
    bits = obs.split("stdout: ")[1].split("\n")[1]
    assert len(bits) == 6 and set(bits) <= {"0", "1"}
    _, r, term, _, info = env.step(oracle_action(env, env._last_obs))
    assert info["reward_components"] == FULL and info["answer"] == bits
    from solvergym.envs.sat.cnf import first_violated

    every = [format(i, "06b") for i in range(64)]
    wrong = next(b for b in every if first_violated(inst.clauses, b) is not None)
    p = sum(first_violated(inst.clauses, b) is None for b in every) / 64  # brute force
    assert 0 < p < 1 and p == inst.chance_success
    env.reset(seed=3)
    _, r, _, _, info = env.step(f"```answer {wrong}```")
    # eq. 1's penalty scaled to the chance a guess has (wrong_penalty="chance", the default)
    assert info["reward_components"]["correct"] == pytest.approx(-p / (1 - p) - 0.1)
    assert info["reward_components"]["format"] == 0.1
    env.reset(seed=3)
    _, r, term, _, info = env.step("```answer 101```")  # not 6 bits: a format failure, retry allowed
    assert not term and info["error"]
    env.close()
    for rule, expected in (("binary", -1.1), ("choices", -1 / 63 - 0.1), ("chance", -p / (1 - p) - 0.1)):
        other = SolverToolEnv("sat", tool_sampling=False, solver="sympy", n=3, k=6, l=12, wrong_penalty=rule)
        other.reset(seed=3)
        assert other.step(f"```answer {wrong}```")[4]["reward_components"]["correct"] == pytest.approx(expected)
        other.close()
    with pytest.raises(ValueError, match="wrong_penalty must be one of"):
        SolverToolEnv("sat", wrong_penalty="harsh")


def test_guessing_an_assignment_never_pays_under_the_chance_penalty():
    """SAT-RL §3.4: eq. 1 makes 'uniform random guessing strictly suboptimal in expectation'. Over
    every assignment of each instance, the mean reward is exactly -(1 - p) eps under "chance"; the
    n-choice rule read literally ("choices", n = 2^k) pays a guesser where several assignments
    satisfy; "binary" charges a wrong assignment as a wrong yes/no."""
    from solvergym.envs.sat.cnf import first_violated

    env = SolverToolEnv("sat", tool_sampling=False, solver="z3", n=2, k=4, l=3)
    paid_by_choices = 0
    for seed in range(12):
        env.reset(seed=seed)
        inst = env.problem_instance()
        every = [format(i, "04b") for i in range(16)]
        p = sum(first_violated(inst.clauses, b) is None for b in every) / 16
        means = {}
        for rule in ("chance", "choices", "binary"):
            problem = SATTool(SATProblem(), wrong_penalty=rule)
            means[rule] = sum(problem.score(inst, f"```answer {b}```").components["correct"] for b in every) / 16
        assert means["chance"] == pytest.approx(-(1 - p) * 0.1, abs=1e-12)
        assert means["binary"] == pytest.approx(p - (1 - p) * 1.1)
        paid_by_choices += means["choices"] > 0
    env.close()
    assert paid_by_choices > 0  # 3 clauses of 2 literals over 4 variables leave several models


def test_instances_round_trip_and_reset_options():
    env = SolverToolEnv()
    env.reset(seed=5)
    inst = env.instance
    assert isinstance(inst, ToolInstance) and ToolInstance.from_json(inst.to_json()) == inst
    for given in (inst, inst.to_dict(), inst.to_json()):
        obs, info = env.reset(seed=99, options={"instance": given})
        assert env.instance == inst and info["solver"] == inst.solver
    env.reset(options={"difficulty": {"num_clauses": 12}})
    assert len(env.problem_instance().clauses) == 12 and env.difficulty["num_clauses"] == 12
    with pytest.raises(ValueError):
        env.reset(options={"difficulty": {"k": 3}})
    with pytest.raises(TypeError):
        env.reset(options={"instance": 42})


def test_agents_drive_the_env():
    env = gym.make(ENV_ID, max_turns=3)
    for agent in (OracleAgent(), SolverToolOracle()):
        obs, info = env.reset(seed=11)
        done, total = False, 0.0
        while not done:
            obs, r, term, trunc, info = env.step(agent.act([obs], envs=[env])[0])
            total += r
            done = term or trunc
        assert total == pytest.approx(2.2) and info["reward_components"] == FULL
    ep = SolverToolOracle().episode(env, seed=12)
    assert [m["role"] for m in ep["messages"]] == ["user", "assistant", "user", "assistant"]
    import numpy as np

    env.reset(seed=11)
    a = random_action(env, np.random.default_rng(0))
    assert a in ("```answer\nyes\n```", "```answer\nno\n```")
    env.close()


# ----------------------------------------------------------------------------- fuzz
@settings(max_examples=25)
@given(code=st.text(max_size=200), prefix=st.text(max_size=40))
def test_fuzz_tool_calls_never_break_step(code, prefix):
    env = _fuzz_env()
    env.reset(seed=2)
    obs, r, term, trunc, info = env.step(prefix + "<tool_call>" + code + "</tool_call>")
    assert env.observation_space.contains(obs) and r == sum(info["reward_components"].values())
    if "error" not in info and "</tool_call>" not in code and "```" not in prefix + code:
        assert obs.startswith("<tool_response>") and info["tool_result"]["status"] in (
            "ok", "error", "timeout", "memory", "killed", "output_limit")


@given(action=st.text(max_size=300) | st.binary(max_size=100))
def test_fuzz_any_action(action):
    env = _fuzz_env()
    env.reset(seed=3)
    obs, r, term, trunc, info = env.step(action)
    assert env.observation_space.contains(obs) and isinstance(r, float)
    assert r == pytest.approx(sum(info["reward_components"].values()))


_FUZZ = {}


def _fuzz_env():
    if "env" not in _FUZZ:
        _FUZZ["env"] = SolverToolEnv(max_turns=2, limits={"timeout_s": 2.0})
    return _FUZZ["env"]


# ----------------------------------------------------------------------------- pool sharing and data
def test_envs_share_one_pool():
    envs = [SolverToolEnv(tool_sampling=False, solver="z3") for _ in range(12)]
    for i, env in enumerate(envs):
        env.reset(seed=i)
        env.step(oracle_action(env, env._last_obs))
    pool = default_pool()
    assert len(pool.server_pids()) <= pool.size and all(e.lease.pool is pool for e in envs)
    for env in envs:
        env.close()
    pids = pool.server_pids()
    shutdown_default_pool()
    assert pool.closed and all(
        not os.path.exists(f"/proc/{p}") or open(f"/proc/{p}/stat").read().split()[2] == "Z" for p in pids)
    env = SolverToolEnv(tool_sampling=False, solver="z3")  # a fresh pool after a shutdown
    env.reset(seed=0)
    assert env.step(oracle_action(env, env._last_obs))[4]["tool_result"]["status"] == "ok"
    env.close()


def test_sat_rl_sft_dataset(tmp_path):
    m1 = build_sat_rl_sft(tmp_path / "a", seed=3, n_train=6, n_test=2, progress=False)
    m2 = build_sat_rl_sft(tmp_path / "b", seed=3, n_train=6, n_test=2, progress=False)
    assert m1["files"] == m2["files"]
    assert (tmp_path / "a" / "train.jsonl").read_bytes() == (tmp_path / "b" / "train.jsonl").read_bytes()
    assert m1["files"]["train.jsonl"]["tasks"] == {"sat-bench": 3, "sat": 3}
    recs = [json.loads(line) for line in (tmp_path / "a" / "train.jsonl").read_text().splitlines()]
    assert [r["id"] for r in recs] == list(range(6))
    for r in recs:
        assert r["reward_components"] == FULL and r["reward"] == pytest.approx(2.2)
        roles = [m["role"] for m in r["messages"]]
        assert roles == ["user", "assistant", "user", "assistant"]
        assert "<tool_call>" in r["messages"][1]["content"] and r["messages"][2]["content"].startswith("<tool_response>")
        assert f"`{r['solver']}`" in r["messages"][0]["content"]
    assert json.loads((tmp_path / "a" / "manifest.json").read_text())["files"] == m1["files"]


def test_bare_yes_no_fence_ends_the_episode_like_answer_yes():
    """SAT-RL App. E.1's own transcript: a z3 call, then a bare ```yes```; App. E.1 scores it
    format 0.1, correctness 1.0, tool 0.1, equivalence 1.0, as ```answer yes```."""
    env = e1_env("z3")
    obs, *_ = env.step(call(E1_PROGRAM))
    _, r, term, _, info = env.step("<think>\nThe solver returned sat.\n</think>\n```yes```")
    assert term and info["answer"] == "yes" and info["reward_components"] == FULL
    # the tool call and the bare answer in one turn: the call runs, then the answer counts
    env.reset(seed=0, options={"instance": E1})
    _, r, term, _, info = env.step(call(E1_PROGRAM) + "\n```yes```")
    assert term and info["reward_components"] == FULL and info["tool_calls"] == 1
    # a bare ```yes``` inside the program is code: the turn is a tool call, not an answer
    env.reset(seed=0, options={"instance": E1})
    obs, r, term, _, info = env.step(call("print('```yes```')"))
    assert not term and obs.startswith("<tool_response>\nstdout: ```yes```")
    env.reset(seed=0, options={"instance": E1})
    _, r, term, _, info = env.step("```no```")
    assert term and r == pytest.approx(0.1 - 1.1) and info["answer"] == "no"
    env.close()
    # SATURN's task answers with bits: a bare ```yes``` there is no answer, as before
    sat = SolverToolEnv("sat", tool_sampling=False, solver="z3", n=3, k=6, l=12)
    sat.reset(seed=3)
    _, r, term, _, info = sat.step("```yes```")
    assert not term and r == 0.0 and "no <tool_call>" in info["error"]
    sat.close()


def test_reward_weights_compute_and_log_a_component_without_paying_it():
    # SAT-RL Table 6's "w/o r_equiv": the equivalence is computed (and logged), not paid
    env = e1_env("z3", reward_weights={"equivalence": 0.0})
    env.step(oracle_action(env, env._last_obs))
    _, r, _, _, info = env.step(oracle_action(env, env._last_obs))
    assert info["reward_components_computed"] == FULL and info["equivalence"]["status"] == "equivalent"
    assert info["reward_components"] == {**FULL, "equivalence": 0.0} and r == pytest.approx(1.2)
    env.close()


def test_weights_scale_what_is_paid_and_unknown_components_are_refused():
    env = e1_env("z3", reward_weights={"equivalence": 0.0, "correct": 2.0})
    env.step(oracle_action(env, env._last_obs))
    _, r, _, _, info = env.step(oracle_action(env, env._last_obs))
    assert info["reward_components_computed"] == FULL
    assert info["reward_components"] == {"format": 0.1, "correct": 2.0, "tool": 0.1, "equivalence": 0.0}
    assert r == pytest.approx(2.2)
    env.close()
    with pytest.raises(ValueError, match="does not compute"):
        SolverToolEnv(reward_weights={"equivalance": 0.0})
    with pytest.raises(ValueError, match="finite number"):
        gym.make("SolverSAT-v0", reward_weights={"correct": float("nan")})
    # every env takes them: a single-turn one too
    sat = gym.make("SolverSAT-v0", reward_weights={"format": 0.0})
    sat.reset(seed=0)
    _, r, _, _, info = sat.step("no box here")
    assert info["reward_components_computed"]["format"] < 0 and info["reward_components"]["format"] == 0.0 and r == 0.0


def test_retool_pays_any_clean_run_and_no_solver_incentive():
    # SAT-RL §4's ReTool baseline: format + correctness + a successful tool run
    env = e1_env("z3", tool_reward="retool")
    program = "print('sat')\n"  # runs cleanly, calls no solver
    _, r, _, _, info = play(env, call(program), "```answer yes```")
    assert info["reward_components"] == {"format": 0.1, "correct": 1.0, "tool": 0.1, "equivalence": 0.0}
    assert "ReTool" in info["tool_reward_reason"]
    # the oracle's z3 program: equivalence computed (1.0) but not paid
    env.reset(seed=0, options={"instance": E1})
    env.step(oracle_action(env, env._last_obs))
    _, r, _, _, info = env.step(oracle_action(env, env._last_obs))
    assert info["reward_components_computed"]["equivalence"] == 1.0 and info["reward_components"]["equivalence"] == 0.0
    assert r == pytest.approx(1.2)
    # the default pays nothing for a program that calls no solver
    sat_rl = e1_env("z3")
    _, _, _, _, info = play(sat_rl, call(program), "```answer yes```")
    assert info["reward_components"]["tool"] == 0.0
    with pytest.raises(ValueError, match="tool_reward"):
        SolverToolEnv(tool_reward="free")
    env.close()
    sat_rl.close()


def test_chance_penalty_counts_uncounted_records_and_distrusts_a_lower_bound():
    """A record without its model count is counted (the same penalty as the counted instance); a
    count that is only a lower bound says nothing of how often a guess is right from above, so the
    wrong answer is charged eq. 1's -1 - eps."""
    from solvergym.envs.sat.cnf import first_violated
    from solvergym.envs.sat.generator import SATInstance

    clauses = [[1, 2], [-1, 3], [-2, -3]]
    every = [format(i, "03b") for i in range(8)]
    models = [b for b in every if first_violated(clauses, b) is None]
    wrong = next(b for b in every if b not in models)
    p = len(models) / 8
    problem = SATTool(SATProblem())  # wrong_penalty="chance"
    answer = f"```answer {wrong}```"
    counted = SATInstance(n=2, k=3, clauses=clauses, solution=models[0], model_count=len(models))
    uncounted = SATInstance(n=2, k=3, clauses=clauses, solution=models[0])
    bound = SATInstance(n=2, k=3, clauses=clauses, solution=models[0], model_count=1, model_count_exact=False)
    assert problem.score(counted, answer).components["correct"] == pytest.approx(-p / (1 - p) - 0.1)
    assert problem.score(uncounted, answer).components["correct"] == pytest.approx(-p / (1 - p) - 0.1)
    assert problem.score(bound, answer).components["correct"] == pytest.approx(-1.1)
