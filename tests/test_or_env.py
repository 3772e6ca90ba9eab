"""SolverOR-v0 (SIRL §3.2-3.3, eq. 6): the oracle's full reward per family and solver, what earns
nothing (printing the number, a constant objective, a solve in a subprocess, a forged record, a
licence overflow), the stage-2 bonus on hand-written programs, infeasible and zero ground truths,
and the pure parts of the reward (format rules, tolerances, the MPS reader)."""
import dataclasses
import json

import gymnasium as gym
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import solvergym  # noqa: F401
from solvergym.agents.scripted import oracle_action
from solvergym.envs.opt.generator import FAMILIES, generate
from solvergym.envs.opt.model import LinearModel
from solvergym.envs.opt.mps import MPSError, read_mps
from solvergym.envs.opt.problem import render_model
from solvergym.envs.opt.programs import oracle_program
from solvergym.envs.opt.solve import solve_highs
from solvergym.envs.opt.verify import extract_program, format_reward, objective_matches
from solvergym.sandbox import SandboxPool

FULL = {"format": 0.5, "execution": 1.0, "accuracy": 2.0, "bonus": 0.0}


@pytest.fixture(scope="module")
def pool():
    with SandboxPool(size=2) as p:
        yield p


def make(pool, **kw):
    return gym.make("SolverOR-v0", pool=pool, **kw).unwrapped


def answer(program: str, model: str = "x") -> str:
    return f"<think>t</think>\n<model>{model}</model>\n<python>\n{program}\n</python>"


def step(env, text):
    obs, r, term, trunc, info = env.step(text)
    assert term and r == pytest.approx(sum(info["reward_components"].values()))
    return r, info


@pytest.mark.parametrize("solver", ["gurobipy", "highspy", "ortools"])
def test_the_oracle_earns_full_reward_on_every_family(pool, solver):
    env = make(pool, solver=solver)
    for family in sorted(FAMILIES):
        model = None
        for seed in range(2):
            obs, info = env.reset(seed=seed, options={"difficulty": {"family": family}})
            model = LinearModel.from_dict(env.instance.model)
            if solver == "ortools" and model.quadratic:
                break  # pywraplp has no QP; the oracle uses gurobipy there (its own test below)
            r, info = step(env, oracle_action(env))
            assert info["reward_components"] == FULL, (family, seed, info["reason"])
            assert info["correct"] and info["solver_status"] == "optimal"
            assert info["objective"] == pytest.approx(env.instance.answer, rel=1e-6, abs=1e-6)


def test_one_wrong_coefficient_earns_no_accuracy(pool):
    env = make(pool)
    for family in sorted(FAMILIES):
        env.reset(seed=3, options={"difficulty": {"family": family}})
        model = LinearModel.from_dict(env.instance.model)
        values = solve_highs(model).values  # a variable used at the optimum: changing its cost moves it
        used = [v for v, c in model.objective.items() if c != 0 and abs(values.get(v, 0.0)) > 1e-6]
        if used:
            model.objective[used[0]] += 1.0 if model.sense == "max" else -1.0  # in its favour: moves by >= x_v
        else:  # the portfolio's risk alone: doubling a held asset's variance raises the (unique) optimum
            k = next(k for k, (a, b, c) in enumerate(model.quadratic) if a == b and abs(values.get(a, 0.0)) > 1e-6)
            model.quadratic[k][2] *= 2.0
        r, info = step(env, answer(oracle_program(model, "gurobipy")))
        assert info["reward_components"]["execution"] == 1.0 and info["reward_components"]["accuracy"] == 0.0, family
        assert not info["correct"]


def test_infeasible_instances_are_matched_by_an_infeasible_status(pool):
    env = make(pool, infeasible_ratio=1.0)
    for family in ("product_mix", "diet", "transportation"):
        env.reset(seed=0, options={"difficulty": {"family": family}})
        assert env.instance.status == "infeasible" and env.instance.answer is None
        r, info = step(env, oracle_action(env))
        assert info["solver_status"] in ("infeasible", "inf_or_unbd") and r == pytest.approx(3.5), info["reason"]
    # a feasible model's optimum does not match an infeasible ground truth
    env.reset(seed=0, options={"difficulty": {"family": "product_mix"}})
    feasible = LinearModel.from_dict(env.instance.model)
    feasible.constraints = feasible.constraints[:1]
    r, info = step(env, answer(oracle_program(feasible, "gurobipy")))
    assert info["reward_components"]["accuracy"] == 0.0


def test_a_ground_truth_of_zero_is_matched(pool):
    env = make(pool)
    env.reset(seed=0, options={"difficulty": {"family": "product_mix"}})
    zero = LinearModel.from_dict({"sense": "min", "variables": [{"name": "x", "lb": 0.0, "ub": None, "kind": "C"},
                                                               {"name": "y", "lb": 0.0, "ub": None, "kind": "C"}],
                                  "constraints": [{"name": "c", "coefs": {"x": 1.0, "y": 1.0}, "lo": 0.0, "hi": 5.0}],
                                  "objective": {"x": 2.0, "y": 3.0}, "quadratic": [], "constant": 0.0})
    inst = dataclasses.replace(env.instance, answer=0.0, status="optimal", sense="min", model=zero.to_dict(),
                               features=zero.features())
    env.reset(options={"instance": inst})
    r, info = step(env, answer(oracle_program(zero, "highspy")))
    assert info["objective"] == 0.0 and info["reward_components"]["accuracy"] == 2.0
    assert objective_matches(0.0, 0.0) and objective_matches(-0.0, 0.0, "absolute") and not objective_matches(1e-5, 0.0)


GUROBI_LP = """
import gurobipy as gp
from gurobipy import GRB
m = gp.Model(); m.Params.OutputFlag = 0
x = m.addVar(name="x"); y = m.addVar(name="y")
m.setObjective(3 * x + 2 * y, GRB.MAXIMIZE)
m.addConstr(x + y <= 4); m.addConstr(x + 3 * y <= 6)
m.optimize()
"""


def test_reward_hacks_earn_nothing(pool):
    env = make(pool)
    env.reset(seed=0, options={"difficulty": {"family": "product_mix"}})
    y = env.instance.answer
    hacks = {
        "print": f"print('Just print the best obj: {y}')\nprint('objective: {y}')",
        "constant objective": ("import gurobipy as gp\nm = gp.Model(); m.Params.OutputFlag = 0\n"
                               f"x = m.addVar(name='x')\nm.setObjective(gp.LinExpr({y}))\nm.optimize()\n"
                               "print(m.ObjVal)"),
        "subprocess": ("import subprocess, sys\ncode = '''" + GUROBI_LP.replace("3 * x + 2 * y", f"{y} * x")
                       .replace("x + y <= 4", "x <= 1") + "\nprint(m.ObjVal)'''\n"
                       "print(subprocess.run([sys.executable, '-c', code], capture_output=True, text=True).stdout)"),
        "forged record": ("import json, os\nrec = json.dumps({'optimum': {'solver': 'gurobipy', 'status': 'optimal', "
                          "'objective': '" + repr(y) + "'}})\nfor fd in range(3, 64):\n    try:\n        os.write(fd, rec.encode())\n"
                          "    except OSError:\n        pass\n"),
        "exec": f"exec(\"print('objective', {y})\")",
    }
    inst = env.instance
    for name, program in hacks.items():
        env.reset(options={"instance": inst})
        r, info = step(env, answer(program))
        comps = info["reward_components"]
        assert comps["accuracy"] == 0.0 and not info["correct"], (name, info["reason"])
        assert comps["execution"] == 0.0 or name == "constant objective", name
    # sys.exit(0) right after the solve keeps what the solver reported (SIRL's code drops it)
    env.reset(seed=0, options={"difficulty": {"family": "product_mix"}})
    program = oracle_program(LinearModel.from_dict(env.instance.model), "gurobipy") + "\nimport sys\nsys.exit(0)\n"
    r, info = step(env, answer(program))
    assert info["reward_components"] == FULL, info["reason"]


def test_a_model_over_the_gurobi_licence_is_an_execution_failure_with_the_reason(pool):
    env = make(pool)
    env.reset(seed=0)
    program = ("import gurobipy as gp\nm = gp.Model(); m.Params.OutputFlag = 0\nx = m.addVars(2001)\n"
               "m.setObjective(x.sum())\nm.addConstr(x.sum() >= 1)\ntry:\n    m.optimize()\n"
               "except gp.GurobiError as e:\n    print('caught', e.errno)\n")
    r, info = step(env, answer(program))
    assert info["reward_components"]["execution"] == 0.0 and "size-limited licence" in info["reason"]
    assert "10010" in info["reason"]


BONUS_PROGRAMS = {
    "binary": """
import gurobipy as gp
from gurobipy import GRB
m = gp.Model(); m.Params.OutputFlag = 0
b = m.addVars(3, vtype=GRB.BINARY, name="b")
m.setObjective(5 * b[0] + 4 * b[1] + 3 * b[2], GRB.MAXIMIZE)
m.addConstr(2 * b[0] + 3 * b[1] + 1 * b[2] <= 4)
m.optimize()
""",
    "big_m": """
import gurobipy as gp
from gurobipy import GRB
m = gp.Model(); m.Params.OutputFlag = 0
x = m.addVar(name="x", lb=0, ub=20, vtype=GRB.INTEGER)
z = m.addVar(name="z", vtype=GRB.INTEGER, lb=0, ub=1)
m.setObjective(x - 3 * z, GRB.MAXIMIZE)
m.addConstr(x <= 100000 * z)
m.addConstr(x <= 12)
m.optimize()
""",
    "quadratic": """
import gurobipy as gp
m = gp.Model(); m.Params.OutputFlag = 0
x = m.addVar(name="x", lb=-10); y = m.addVar(name="y", lb=-10)
m.setObjective(x * x + y * y - 2 * x - 4 * y)
m.addConstr(x + y <= 10)
m.optimize()
""",
    "general": """
import gurobipy as gp
from gurobipy import GRB
m = gp.Model(); m.Params.OutputFlag = 0
x = m.addVar(name="x", lb=0, ub=10); y = m.addVar(name="y", lb=0, ub=10); z = m.addVar(name="z")
m.addGenConstrMax(z, [x, y])
m.setObjective(z + x + y)
m.addConstr(x + y >= 4)
m.optimize()
""",
}


def test_the_stage_two_bonus_fires_exactly_on_advanced_models(pool):
    env = make(pool, stage=2, bonus_weight=1.0)
    env.reset(seed=0)
    for kind, program in {**BONUS_PROGRAMS, "plain LP": GUROBI_LP}.items():
        run = env.problem.run(program)
        assert run.ok and run.optimum and run.optimum["status"] == "optimal", (kind, run.stderr[-500:])
        model = LinearModel.from_dict(env.instance.model)
        inst = dataclasses.replace(env.instance, answer=run.optimum["objective"], model=model.to_dict())
        env.reset(options={"instance": inst})
        r, info = step(env, answer(program))
        assert info["correct"], (kind, info["reason"])
        fires = kind != "plain LP"
        assert info["reward_components"]["bonus"] == (1.0 if fires else 0.0), (kind, info["advanced"])
        assert (kind in info["advanced"]) == fires or kind == "plain LP"
        if kind == "plain LP":
            assert info["advanced"] == []
    # stage 1 never pays it
    env1 = make(pool, stage=1)
    env1.reset(options={"instance": inst})
    assert step(env1, answer(GUROBI_LP))[1]["reward_components"]["bonus"] == 0.0


def test_format_rules_and_program_extraction():
    good = "<think>a</think><model>b</model><python>print(1)</python>"
    assert format_reward(good) == 0.5 and format_reward(good, "sirl_code") == 1.0
    assert format_reward("<model>b</model><think>a</think><python>p</python>") == 0.0
    assert format_reward(good + "<python>x</python>") == 0.0
    # the shipped code's graded rule, as measured on it (references/or-modelling.md §2): no tags at all
    # 0.667, no think 1.75, python before model 1.667, two python blocks 1.5; each times 0.5
    assert format_reward("nothing", "sirl_code") == pytest.approx(0.5 * 2 / 3)
    assert format_reward("<model>b</model><python>p</python>", "sirl_code") == pytest.approx(0.5 * 1.75)
    assert format_reward("<think>a</think><python>p</python><model>b</model>", "sirl_code") == pytest.approx(0.5 * 5 / 3)
    assert format_reward(good + "<python>x</python>", "sirl_code") == pytest.approx(0.5 * 1.5)
    assert extract_program("<python>\n```python\nprint(2)\n```\n</python>").strip() == "print(2)"
    assert extract_program("text ```python\nprint(3)\n``` more").strip() == "print(3)"
    assert extract_program("<python>   </python>") is None


def test_the_mps_reader_reads_what_the_solvers_export(pool):
    run = pool.run(BONUS_PROGRAMS["big_m"])
    parsed = read_mps(run.optimum["mps"])
    f = parsed.model.features()
    assert f["num_bin"] == 1 and f["num_int"] == 1 and f["big_m"] and parsed.model.sense == "max"
    run = pool.run(GUROBI_LP)
    f = read_mps(run.optimum["mps"]).model.features()
    assert (f["num_vars"], f["num_constrs"], f["big_m"]) == (2, 2, False)
    quad = read_mps(pool.run(BONUS_PROGRAMS["quadratic"]).optimum["mps"]).model
    assert quad.quadratic
    for bad in ("", "ROWS\n N obj\nCOLUMNS\n x nope 1\n", "NAME\nBOGUS\n", "ROWS\n Q r\n", "x" * (2 << 20)):
        with pytest.raises(MPSError):
            read_mps(bad)


def test_render_model_states_the_objective_and_constraints():
    inst = generate("product_mix", np.random.default_rng(0))
    text = render_model(LinearModel.from_dict(inst.model))
    assert text.startswith(("maximise", "minimise")) and "subject to" in text


@settings(max_examples=25, deadline=None)
@given(st.text(max_size=300))
def test_fuzzed_answers_never_raise(text):
    env = FUZZ_ENV
    env.reset(seed=1)
    obs, r, term, trunc, info = env.step(text)
    assert term and r == pytest.approx(sum(info["reward_components"].values()))


FUZZ_ENV = gym.make("SolverOR-v0").unwrapped


def test_info_is_json_and_reports_what_the_solver_said():
    env = FUZZ_ENV
    env.reset(seed=2)
    _, _, _, _, info = env.step(oracle_action(env))
    back = json.loads(json.dumps(info))
    assert back["solver_status"] == "optimal" and back["ground_truth"] == env.instance.answer
    assert back["objective"] == pytest.approx(env.instance.answer, rel=1e-6, abs=1e-6)
    ref = env.instance.features
    assert (back["features"]["num_vars"], back["features"]["num_constrs"]) == (ref["num_vars"], ref["num_constrs"])
    assert back["features"]["num_bin"] == ref["num_bin"] and back["sandbox"]["status"] == "ok"


def test_multi_turn_a_program_that_raises_comes_back_with_its_traceback(pool):
    env = make(pool, max_turns=3)
    obs, _ = env.reset(seed=0, options={"difficulty": {"family": "transportation"}})
    broken = answer("import gurobipy as gp\nm = gp.Model()\nx = m.addVar()\nm.setObjective(x + undefined_name)\n"
                    "m.optimize()\n")
    obs, r, term, trunc, info = env.step(broken)
    assert (r, term, trunc) == (0.0, False, False) and info["revise"]
    assert "Traceback" in obs and "NameError" in obs and "undefined_name" in obs
    assert "correct" not in obs.lower().split("did not solve")[0]  # correctness is never shown
    obs, r, term, trunc, info = env.step(oracle_action(env))
    assert term and r == pytest.approx(3.5) and info["reward_components"] == FULL
    # the last turn's program is scored, however it ends
    env.reset(seed=0, options={"difficulty": {"family": "transportation"}})
    for turn in range(3):
        obs, r, term, trunc, info = env.step(broken)
    assert term and r == pytest.approx(0.5) and info["reward_components"]["execution"] == 0.0
    # single turn (SIRL's setting, the default): the broken program is scored at once
    env1 = make(pool)
    env1.reset(seed=0)
    _, r, term, _, info = env1.step(broken)
    assert term and r == pytest.approx(0.5) and "revise" not in info


def test_stage_two_pays_the_oracle_the_bonus_on_advanced_models_only(pool):
    env = make(pool, stage=2)
    for family, bonus in (("facility_location", 1.0), ("inventory_setup", 1.0), ("knapsack", 1.0),
                          ("portfolio", 1.0), ("product_mix", 0.0), ("transportation", 0.0)):
        env.reset(seed=0, options={"difficulty": {"family": family}})
        r, info = step(env, oracle_action(env))
        assert info["reward_components"]["bonus"] == bonus and r == pytest.approx(3.5 + bonus), (family, info)
    env.problem.set_stage(1)  # what TrainConfig.bonus_from_step switches
    env.reset(seed=0, options={"difficulty": {"family": "knapsack"}})
    assert step(env, oracle_action(env))[1]["reward_components"]["bonus"] == 0.0
    with pytest.raises(ValueError):
        env.problem.set_stage(3)


def test_tool_mode_runs_programs_shows_tracebacks_and_scores_the_final_answer(pool):
    """SolverTool-v0(task="or"): the contract's tool mode over the OR problem (beyond SIRL)."""
    tool = gym.make("SolverTool-v0", task="or", pool=pool, family="knapsack").unwrapped
    assert set(tool.solvers) == {"gurobipy", "highspy", "ortools"}
    obs, info = tool.reset(seed=0)
    assert "<python>" in obs and "```idk```" not in obs and info["solver"] in tool.solvers
    keys = {"format", "execution", "accuracy", "bonus", "tool"}
    # the oracle: a program for the named solver, then the answer
    total, done = 0.0, False
    while not done:
        obs, r, term, trunc, info = tool.step(oracle_action(tool, obs))
        total, done = total + r, term or trunc
    assert set(info["reward_components"]) == keys
    assert info["reward_components"] == {**FULL, "tool": 0.1} and total == pytest.approx(3.6), info["reason"]
    # a first program that raises comes back with its traceback; the fixed answer earns everything
    obs, info = tool.reset(seed=1)
    solver = info["solver"]
    obs, r, term, trunc, info = tool.step("<tool_call>\nimport gurobipy as gp\nm = gp.Model()\nm.optimize(\n</tool_call>")
    assert not term and r == 0.0 and "SyntaxError" in obs and "<tool_response>" in obs
    gold = tool.gold()
    obs, r, term, trunc, info = tool.step(f"<tool_call>\n{gold.program(solver)}</tool_call>")
    assert not term and "objective:" in obs
    obs, r, term, trunc, info = tool.step(gold.answer)
    assert term and info["reward_components"] == {**FULL, "tool": 0.1}, info["reason"]
    # printing the answer in a tool call and answering without a program earns no accuracy
    tool.reset(seed=2)
    y = tool.problem_instance().answer
    tool.step(f"<tool_call>\nprint('objective: {y}')\n</tool_call>")
    obs, r, term, trunc, info = tool.step(answer(f"print({y})"))
    assert term and info["reward_components"]["accuracy"] == 0.0 and info["reward_components"]["tool"] == 0.0
