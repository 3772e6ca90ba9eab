"""``solvergym eval`` end to end: real envs, real scripted agents, real run directories."""
import json
import math
import os
import signal
import subprocess
import sys
import threading
import time

import gymnasium as gym
import pytest

from solvergym.agents.scripted import oracle_action
from solvergym.cli import main
from solvergym.envs.zebra.datasets import build_spring_zebra
from solvergym.sandbox import SandboxPool
from solvergym.envs.sat.datasets import build_saturn_2_6k
from solvergym.envs.sat.generator import difficulty
from solvergym.evaluation import EvalConfig, load_records, run_eval, write_report
from solvergym.evaluation import runner as runner_module
from solvergym.evaluation.agents import make_agent
from solvergym.registry import env_ids


@pytest.mark.parametrize("env_id", env_ids())
def test_the_oracle_passes_every_registered_env(env_id, tmp_path):
    cfg = EvalConfig(env_id, agent="oracle", instances=2, n_samples=2, ks=[1, 2], batch_instances=2)
    rep = write_report(run_eval(cfg, tmp_path / "run", progress=False), png=False)
    m = rep["overall"]["metrics"]
    assert m["pass@1"]["mean"] == m["pass@2"]["mean"] == m["pass^2"]["mean"] == 1.0, rep["overall"]
    assert rep["overall"]["format_error_rate"] == 0.0 and rep["instances"] == 2
    records = load_records(tmp_path / "run")
    assert len(records) == 4 and all(r["correct"] for r in records)
    # both samples of an instance were posed the same instance
    assert records[0]["instance_id"] == records[1]["instance_id"] != records[2]["instance_id"]


def test_random_on_sat_measures_the_chance_level(tmp_path):
    # what the harness reports for a uniformly random answer must be what chance_success says a
    # random answer earns: a check that it measures what it claims
    cfg = EvalConfig("SolverSAT-v0", agent="random", instances=300, n_samples=1, batch_instances=50)
    run = run_eval(cfg, tmp_path / "run", progress=False)
    rep = write_report(run, png=False)
    records = load_records(run)
    chance = sum(r["level"]["chance_success"] for r in records) / len(records)
    got = rep["overall"]["metrics"]["avg@1"]
    se = got["se_over_instances"]
    assert 0 < se < 0.05 and abs(got["mean"] - chance) < 3 * se, (got, chance)


class _Killed(Exception):
    pass


def test_a_killed_run_resumed_is_the_uninterrupted_run(tmp_path, monkeypatch):
    cfg = EvalConfig("SolverSAT-v0", agent="random", instances=12, n_samples=3, ks=[1, 3], seeds=[0, 1],
                     batch_instances=4)
    whole = run_eval(cfg, tmp_path / "whole", progress=False)
    # the same run killed after three of its six batches, with half a record written
    real = runner_module._run_batch
    calls = []

    def dying(*a, **kw):
        if len(calls) == 3:
            raise _Killed()
        calls.append(1)
        return real(*a, **kw)

    monkeypatch.setattr(runner_module, "_run_batch", dying)
    with pytest.raises(_Killed):
        run_eval(cfg, tmp_path / "cut", progress=False)
    with open(tmp_path / "cut" / "records.jsonl", "a") as f:
        f.write('{"seed": 1, "instance": 0, "sam')
    assert len(load_records(tmp_path / "cut")) == 3 * 4 * 3
    monkeypatch.setattr(runner_module, "_run_batch", real)
    cut = run_eval(cfg, tmp_path / "cut", progress=False)
    assert (cut / "records.jsonl").read_bytes() == (whole / "records.jsonl").read_bytes()
    assert write_report(cut, png=False) == write_report(whole, png=False)
    # a run directory is resumed only with its own configuration
    with pytest.raises(ValueError, match="another configuration"):
        run_eval(EvalConfig("SolverSAT-v0", agent="oracle", instances=12, n_samples=3, ks=[1, 3], seeds=[0, 1]),
                 tmp_path / "cut", progress=False)


_SLOW_RUN = """
import sys, time
import solvergym
from solvergym.agents import RandomAgent
from solvergym.evaluation import EvalConfig, run_eval

class Slow(RandomAgent):
    def act(self, observations, envs=None):
        time.sleep(0.3)
        return super().act(observations, envs)

cfg = EvalConfig("SolverSAT-v0", agent="random", instances=12, n_samples=3, ks=[1, 3], seeds=[0, 1],
                 batch_instances=4)
run_eval(cfg, sys.argv[1], agent=Slow(), progress=False)
"""


def test_a_run_killed_with_sigkill_resumes_to_the_uninterrupted_run(tmp_path):
    cfg = EvalConfig("SolverSAT-v0", agent="random", instances=12, n_samples=3, ks=[1, 3], seeds=[0, 1],
                     batch_instances=4)
    whole = run_eval(cfg, tmp_path / "whole", progress=False)
    cut = tmp_path / "cut"
    proc = subprocess.Popen([sys.executable, "-c", _SLOW_RUN, str(cut)])
    records, deadline = cut / "records.jsonl", time.monotonic() + 120
    while time.monotonic() < deadline and not (records.exists() and records.stat().st_size > 0):
        time.sleep(0.01)
    os.kill(proc.pid, signal.SIGKILL)
    assert proc.wait() == -signal.SIGKILL
    n_killed = len(load_records(cut))
    assert 0 < n_killed < 72 and n_killed % 12 == 0  # whole batches only
    run_eval(cfg, cut, progress=False)
    assert records.read_bytes() == (whole / "records.jsonl").read_bytes()
    assert write_report(cut, png=False) == write_report(whole, png=False)


def test_levels_and_the_fit_against_d(tmp_path):
    # two SAT levels: the report has a row for each, with its D, and a fit of pass@1 against D
    rows = []
    for n, k, l in ((3, 5, 5), (3, 6, 12)):
        cfg = EvalConfig("SolverSAT-v0", agent="random", instances=8, n_samples=2, ks=[1, 2],
                         env_kwargs={"n": n, "k": k, "l": l}, batch_instances=8)
        rows.append(write_report(run_eval(cfg, tmp_path / f"{k}-{l}", progress=False), png=False))
    for rep, (k, l) in zip(rows, ((5, 5), (6, 12))):
        (level,) = rep["levels"]
        assert level["level"] == {"n": 3, "k": k, "l": l} and level["instances"] == 8 and level["D"] > 0
    assert rows[0]["levels"][0]["D"] < rows[1]["levels"][0]["D"]


def test_agent_specs():
    assert make_agent("oracle").name == "oracle" and make_agent("random").name == "random"
    user = make_agent("solvergym.agents.scripted:OracleAgent")  # a class: called to build the agent
    assert user.name == "oracle"
    for bad in ("", "nope", "no_such_module:Agent", "solvergym.agents.scripted:nothing", "openai:http://x"):
        with pytest.raises(ValueError):
            make_agent(bad)
    with pytest.raises(TypeError):
        make_agent("math:pi")  # a float has no act()


def test_eval_config_is_checked():
    with pytest.raises(ValueError, match="n_samples"):
        EvalConfig("SolverSAT-v0", agent="oracle", n_samples=2, ks=[3])
    with pytest.raises(ValueError, match="repeat"):
        EvalConfig("SolverSAT-v0", agent="oracle", seeds=[0, 0])


def test_the_cli_writes_records_and_a_report(tmp_path, capsys):
    out = tmp_path / "cli"
    assert main(["eval", "--env", "SolverKnights-v0", "--agent", "random", "--instances", "4", "--n-samples", "3",
                 "--k", "1,3", "--seeds", "0,1", "--out", str(out), "--no-progress"]) == 0
    text = capsys.readouterr().out
    assert "| **all** | 4 |" in text and "pass@3" in text and "± " in text
    rep = json.loads((out / "report.json").read_text())
    assert rep["n_samples"] == 3 and rep["seeds"] == [0, 1] and len(load_records(out)) == 24
    assert (out / "report.png").stat().st_size > 0
    p1 = rep["overall"]["metrics"]["pass@1"]
    assert set(p1["per_seed"]) == {"0", "1"} and math.isclose(p1["mean"], sum(p1["per_seed"].values()) / 2)
    with pytest.raises(SystemExit):
        main(["eval", "--env", "NoSuchEnv-v0", "--agent", "oracle", "--out", str(tmp_path / "x")])


def test_the_saturn_report_on_saturn_2_6k_test_levels(tmp_path):
    # SATURN-2.6k's ten test levels: D per level is eq. 2's, the oracle passes every level, and
    # the random baseline's pass@1 falls with D (the regression of Fig. 3, drawn in the PNG)
    build_saturn_2_6k(tmp_path / "s26", progress=False)
    levels = tmp_path / "s26" / "test_levels"
    reports = {}
    for agent, n in (("oracle", 1), ("random", 2)):
        cfg = EvalConfig("SolverSAT-v0", agent=agent, dataset=str(levels), n_samples=n, ks=[1, n], batch_instances=100)
        reports[agent] = write_report(run_eval(cfg, tmp_path / agent, progress=False))
        assert (tmp_path / agent / "report.png").stat().st_size > 0
    for rep in reports.values():
        assert len(rep["levels"]) == 10 and rep["instances"] == 1000
        for lv in rep["levels"]:
            knobs = lv["level"]
            assert knobs["source"] == f"n{knobs['n']}_k{knobs['k']}_length{knobs['l']}_sample100.jsonl"
            assert lv["D"] == pytest.approx(difficulty(knobs["n"], knobs["k"], knobs["l"])) and lv["instances"] == 100
    assert all(lv["metrics"]["pass@1"]["mean"] == 1.0 for lv in reports["oracle"]["levels"])
    fit = reports["random"]["accuracy_vs_D"]
    assert fit["slope"] < 0 and 0 < fit["r2"] <= 1
    assert "pass@1 vs D" in (tmp_path / "random" / "report.md").read_text()


class _PairAgent:
    """The oracle on the 2x2 puzzle, no answer at all on the 6x6 (Table 8's "missing output")."""

    name = "pair"

    def act(self, observations, envs):
        return [oracle_action(e, o) if e.unwrapped.instance.n_houses == 2 else "I have no idea."
                for o, e in zip(observations, envs)]


def test_the_spring_report_micro_averages_cell_accuracy(tmp_path):
    # a solved 2x2 (4 of 4 cells) and a 6x6 with no answer (0 of 36): Cell Acc is 4 / 40 = 0.10,
    # App. B.2's micro-average (the mean of the two puzzles' accuracies would be 0.5)
    env = gym.make("SolverZebra-v0")
    data = tmp_path / "pair.jsonl"
    with open(data, "w") as f:
        for n in (2, 6):
            env.reset(seed=n, options={"difficulty": {"n_houses": n, "n_attributes": n}})
            f.write(json.dumps(env.unwrapped.instance.to_dict()) + "\n")
    cfg = EvalConfig("SolverZebra-v0", agent="pair", dataset=str(data))
    rep = write_report(run_eval(cfg, tmp_path / "run", agent=_PairAgent(), progress=False), png=False)
    traces = rep["overall"]["traces"]
    assert traces["all"]["n"] == 2 and traces["all"]["cell_acc"] == pytest.approx(0.10)
    assert traces["all"]["cell_acc_macro"] == pytest.approx(0.5)
    assert traces["solved"]["n"] == 1 and traces["failed"]["error_types"] == {"missing_output": 1}
    assert rep["overall"]["metrics"]["pass@1"]["mean"] == 0.5
    md = (tmp_path / "run" / "report.md").read_text()
    assert "Cell Acc" in md and "10.0%" in md


def _or_answer(python: str) -> str:
    return f"<think>t</think>\n<model>m</model>\n<python>\n{python}\n</python>"


class _ORAgent:
    """A fixed kind of answer per instance index (the instance's position in the dataset)."""

    name = "or-cases"

    def __init__(self, cases):
        self.cases = cases

    def act(self, observations, envs):
        out = []
        for o, e in zip(observations, envs):
            kind = self.cases[e.unwrapped.instance.instance_id]
            gold = oracle_action(e, o)
            out.append({
                "correct": gold,
                "no_program": "I would use a linear program.",
                "syntax_error": _or_answer("x = (1"),
                "runtime_error": _or_answer("import gurobipy\nraise RuntimeError('boom')"),
                "no_solve": _or_answer("print('objective: 12.0')"),
                "infeasible": _or_answer("import gurobipy as gp\nm = gp.Model()\nx = m.addVar(lb=2, ub=1)\n"
                                         "m.addConstr(x >= 0)\nm.optimize()"),
                # max x with x >= 0 unbounded: Gurobi proves it; with a constraint its presolve
                # can only say "infeasible or unbounded" (INF_OR_UNBD)
                "unbounded": _or_answer("import gurobipy as gp\nm = gp.Model()\nx = m.addVar()\n"
                                        "m.setObjective(x, gp.GRB.MAXIMIZE)\nm.optimize()"),
                "infeasible_or_unbounded": _or_answer(
                    "import gurobipy as gp\nm = gp.Model()\nx = m.addVar(); y = m.addVar()\nm.addConstr(x - y <= 1)\n"
                    "m.setObjective(x + y, gp.GRB.MAXIMIZE)\nm.optimize()"),
                "wrong_objective": _or_answer("import gurobipy as gp\nm = gp.Model()\nx = m.addVar(lb=1, ub=1)\n"
                                              "m.setObjective(x)\nm.optimize()"),
            }[kind])
        return out


def test_the_or_report_says_why_each_answer_earned_nothing(tmp_path):
    kinds = ["correct", "no_program", "syntax_error", "runtime_error", "no_solve", "infeasible", "unbounded",
             "infeasible_or_unbounded", "wrong_objective"]
    env = gym.make("SolverOR-v0")
    data, cases = tmp_path / "or.jsonl", {}
    with open(data, "w") as f:
        for i, kind in enumerate(kinds):
            env.reset(seed=i)
            inst = env.unwrapped.instance
            cases[inst.instance_id] = kind
            f.write(json.dumps(inst.to_dict()) + "\n")
    env.close()
    cfg = EvalConfig("SolverOR-v0", agent="or-cases", dataset=str(data))
    rep = write_report(run_eval(cfg, tmp_path / "run", agent=_ORAgent(cases), progress=False), png=False)
    block = rep["overall"]["or"]
    # an unbounded model is not counted as infeasible (issue 24 item 11): one column each
    assert block["outcomes"] == {k: 1 for k in kinds} | {"timeout": 0}
    assert block["accuracy"] == pytest.approx(1 / 9)
    # execution: the program ran and a solver reported a status (correct, the three statuses
    # without an optimum, wrong objective)
    assert block["execution_rate"] == pytest.approx(5 / 9)
    md = (tmp_path / "run" / "report.md").read_text()
    assert "| **all** | 11.1% | 55.6% | 1 | 1 | 0 | 1 | 1 | 1 | 1 | 1 | 1 |" in md
    assert "| infeasible | unbounded | infeasible_or_unbounded | wrong_objective |" in md
    # the tolerance the env scored with is named though --kwargs did not give it
    assert rep["tolerance"] == "relative (|y - y*| / (|y*| + 1) < 1e-6)"
    assert "objective tolerance: relative (|y - y*| / (|y*| + 1) < 1e-6)" in md and "| accuracy (relative) |" in md


def test_sandbox_envs_run_a_batch_s_programs_concurrently(tmp_path, monkeypatch):
    real, lock, state = SandboxPool.run_many, threading.Lock(), {"now": 0, "most": 0}

    def counting(self, *a, **kw):
        with lock:
            state["now"] += 1
            state["most"] = max(state["most"], state["now"])
        try:
            return real(self, *a, **kw)
        finally:
            with lock:
                state["now"] -= 1

    monkeypatch.setattr(SandboxPool, "run_many", counting)
    cfg = EvalConfig("SolverOR-v0", agent="oracle", instances=4, n_samples=2, batch_instances=4,
                     env_kwargs={"tolerance": "absolute"})
    threaded = run_eval(cfg, tmp_path / "threads", progress=False)
    assert state["most"] > 1  # the default steps a batch's OR episodes in threads
    state["most"] = 0
    serial = run_eval(EvalConfig(**{**cfg.__dict__, "workers": 1}), tmp_path / "serial", progress=False)
    assert state["most"] == 1
    assert (threaded / "records.jsonl").read_bytes() == (serial / "records.jsonl").read_bytes()
    assert write_report(serial, png=False)["tolerance"] == "absolute (|y - y*| <= 0.01)"


@pytest.mark.parametrize("env_id,auto", [("SolverOR-v0", runner_module.AUTO_WORKERS),
                                         ("SolverTool-v0", runner_module.AUTO_WORKERS),
                                         ("SolverSAT-v0", 1), ("SolverZebra-v0", 1)])
def test_threads_only_where_steps_wait_on_the_sandbox(env_id, auto):
    env = gym.make(env_id)
    try:
        assert runner_module._workers(EvalConfig(env_id, agent="oracle"), env.unwrapped) == auto
        if env_id == "SolverZebra-v0":  # Z3's main context is not thread-safe
            with pytest.raises(ValueError, match="cannot be stepped in threads"):
                runner_module._workers(EvalConfig(env_id, agent="oracle", workers=2), env.unwrapped)
    finally:
        env.close()


def test_the_tool_report_counts_the_solvers_asked_for_and_called(tmp_path):
    cfg = EvalConfig("SolverTool-v0", agent="oracle", instances=6)
    rep = write_report(run_eval(cfg, tmp_path / "run", progress=False), png=False)
    t = rep["overall"]["tool"]
    assert t["correct_rate"] == t["tool_rate"] == t["equivalence_rate"] == 1.0 and t["mean_tool_calls"] == 1.0
    assert t["solver_asked"] == t["solver_called"] and sum(t["solver_asked"].values()) == 6


def test_eval_compare_puts_runs_side_by_side(tmp_path, capsys):
    for agent in ("oracle", "random"):
        run_eval(EvalConfig("SolverSAT-v0", agent=agent, instances=10, n_samples=2, ks=[1, 2]), tmp_path / agent,
                 progress=False)
    assert main(["eval", "compare", str(tmp_path / "oracle"), str(tmp_path / "random"), "--out",
                 str(tmp_path / "cmp")]) == 0
    text = capsys.readouterr().out
    lines = [line for line in text.splitlines() if line.startswith("| oracle") or line.startswith("| random")]
    assert len(lines) == 2 and "| 1.000 |" in lines[0] and "pass@2" in text
    data = json.loads((tmp_path / "cmp" / "compare.json").read_text())
    assert [r["agent"] for r in data["runs"]] == ["oracle", "random"] and data["ks"] == [1, 2]
    assert (tmp_path / "cmp" / "compare.png").stat().st_size > 0


def test_the_cdcl_baseline_solves_every_saturn_level(tmp_path):
    # SATURN Table 18: the solver answers 100% of the (n,k,l) instances, and its time is kept
    cfg = EvalConfig("SolverSAT-v0", agent="cdcl", instances=20, env_kwargs={"n": 4, "k": 8, "l": 40})
    agent = make_agent("cdcl")
    rep = write_report(run_eval(cfg, tmp_path / "run", agent=agent, progress=False), png=False)
    assert rep["overall"]["metrics"]["pass@1"]["mean"] == 1.0 and len(agent.solve_seconds) == 20
    with pytest.raises(TypeError, match="SolverSAT-v0"):
        run_eval(EvalConfig("SolverKnights-v0", agent="cdcl", instances=1), tmp_path / "k", progress=False)


def test_two_varying_knobs_make_a_heatmap(tmp_path):
    build_spring_zebra(tmp_path / "zebra", scale=0.03, progress=False)
    cfg = EvalConfig("SolverZebra-v0", agent="random", dataset=str(tmp_path / "zebra" / "test.jsonl"), n_samples=8)
    rep = write_report(run_eval(cfg, tmp_path / "run", progress=False))
    grid = rep["heatmap"]
    assert (grid["x"], grid["y"]) == ("n_attributes", "n_houses")
    by_size: dict = {}
    for r in load_records(tmp_path / "run"):
        by_size.setdefault((r["difficulty"]["n_attributes"], r["difficulty"]["n_houses"]), []).append(r["correct"])
    assert sorted(by_size) == sorted((a, b) for b in grid["ys"] for a in grid["xs"]
                                     if grid["pass@1"][grid["ys"].index(b)][grid["xs"].index(a)] is not None)
    for (a, b), cs in by_size.items():
        assert grid["pass@1"][grid["ys"].index(b)][grid["xs"].index(a)] == pytest.approx(sum(cs) / len(cs))
    assert any(v for row in grid["pass@1"] for v in row if v)  # 2x2 puzzles are guessed now and then
    assert "pass@1 by n_houses (rows) and n_attributes (columns):" in (tmp_path / "run" / "report.md").read_text()
    assert (tmp_path / "run" / "report.png").stat().st_size > 10_000
    # one varying knob (SAT's l at fixed n, k): no heatmap
    one = EvalConfig("SolverSAT-v0", agent="random", instances=3)
    assert "heatmap" not in write_report(run_eval(one, tmp_path / "sat", progress=False), png=False)
