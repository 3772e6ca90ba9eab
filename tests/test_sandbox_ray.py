"""The sandbox's Ray executor on a real local Ray cluster (``ray.init`` with 2 CPUs): the same typed
results as the local pool, a killed actor replaced with no result lost, and the envs and the
evaluation harness running their programs there with nothing else changed. (The hostile-program
tests of test_sandbox.py and test_sandbox_hardening.py run under both executors.)"""
import random
import threading
import time

import gymnasium as gym
import pytest

import solvergym  # noqa: F401  (registers the envs)
from solvergym.agents.scripted import oracle_action
from solvergym.evaluation import EvalConfig, load_records, run_eval
from solvergym.sandbox import Limits, SandboxPool, executor_pool, parse_executor, shared_pool, shutdown_default_pool

ray = pytest.importorskip("ray", reason="the ray extra is not installed")

# what a result says about the program (durations, cpu and the server's pid are the run's own)
FIELDS = ("status", "exit_code", "stdout", "stderr", "reason", "signal", "stdout_bytes", "stderr_bytes",
          "solvers_imported", "solver_calls", "n_solver_calls", "formula", "formula_error")


def _programs(n: int) -> list[str]:
    """``n`` programs of every kind a model writes: prints, errors, exits, each solver's solve."""
    rng = random.Random(7)
    kinds = [
        lambda i: f"print({i} * {i})",
        lambda i: f"import sys\nprint('out {i}')\nprint('err {i}', file=sys.stderr)\nsys.exit({i % 3})",
        lambda i: f"raise ValueError('bad {i}')",
        lambda i: (f"from z3 import *\nx, y = Ints('x y')\ns = Solver()\ns.add(x + y == {i}, x > y, y >= 0)\n"
                   f"print(s.check())"),
        lambda i: (f"from pysat.solvers import Minisat22\ns = Minisat22(bootstrap_with=[[1, -2], [2, {3 + i % 5}], [-1]])\n"
                   f"print(s.solve())"),
        lambda i: (f"from ortools.sat.python import cp_model\nm = cp_model.CpModel()\nx = m.NewIntVar(0, {i + 1}, 'x')\n"
                   f"m.Maximize(x)\ns = cp_model.CpSolver()\ns.parameters.num_workers = 1\n"
                   f"print(s.Solve(m) == cp_model.OPTIMAL, s.Value(x))"),
        lambda i: f"import sympy\nx = sympy.Symbol('x')\nprint(sympy.solve(x**2 - {i}, x))",
    ]
    return [rng.choice(kinds)(i) for i in range(n)]


def _facts(r) -> tuple:
    return tuple(getattr(r, f) for f in FIELDS) + (_optimum(r.optimum),)


def _optimum(opt):
    return None if opt is None else {k: v for k, v in opt.items()}


@pytest.fixture(scope="module")
def ray_pool(ray_cluster):
    # the process-wide Ray pool, the one envs given executor="ray" use: its 2 actors take the
    # cluster's 2 CPUs (a second pool's actors would wait for CPUs to come free)
    p = executor_pool("ray").start()
    yield p
    shutdown_default_pool()


def test_the_executor_setting_is_checked():
    assert parse_executor(None) == parse_executor("local") == ("local", None)
    assert parse_executor("ray") == ("ray", None)
    assert parse_executor("ray://head:10001") == ("ray", "ray://head:10001")
    assert parse_executor("10.0.0.1:6379") == ("ray", "10.0.0.1:6379")
    for bad in ("rya", "", 3, "docker"):
        with pytest.raises(ValueError, match="executor must be one of"):
            parse_executor(bad)
    with pytest.raises(ValueError, match="executor must be one of"):
        gym.make("SolverTool-v0", executor="ryа")  # a Cyrillic a: no such executor
    with pytest.raises(ValueError, match="retries"):
        SandboxPool(1, retries=-1)


def test_two_hundred_programs_give_the_local_pools_results(ray_pool):
    assert ray_pool.size == 2 and ray_pool.retries == 2  # one actor per cluster CPU by default
    iso = ray_pool.isolation
    with SandboxPool(2) as local:
        assert iso["active"] == local.isolation["active"]  # every isolation layer, on the actor's node
        codes = _programs(200)
        here = local.run_many(codes, Limits(timeout_s=20))
    there = ray_pool.run_many(codes, Limits(timeout_s=20))
    assert len(there) == 200
    assert [_facts(r) for r in there] == [_facts(r) for r in here]
    statuses = {r.status for r in there}
    assert {"ok", "error"} <= statuses and sum(r.called() for r in there) > 50  # the mix is a real one
    assert all(r.server_pid for r in there)


def test_a_killed_actor_is_replaced_and_no_result_is_lost(ray_pool):
    codes = [f"import time\ntime.sleep(0.05)\nprint({i})" for i in range(60)]
    restarts = ray_pool.restarts
    actors = [s.actor for s in ray_pool._servers]
    out: list = []
    runner = threading.Thread(target=lambda: out.extend(ray_pool.run_many(codes, Limits(timeout_s=20))))
    runner.start()
    time.sleep(0.6)  # a few programs in: each actor is busy with one
    ray.kill(actors[0], no_restart=True)
    runner.join(timeout=300)
    assert [r.stdout for r in out] == [f"{i}\n" for i in range(60)]
    assert all(r.status == "ok" for r in out)
    assert ray_pool.restarts == restarts + 1 and ray_pool._servers[0].actor is not actors[0]
    # an actor killed while idle: the next program finds it dead, runs on a new one
    ray.kill(ray_pool._servers[0].actor, no_restart=True)
    time.sleep(0.3)
    assert [r.stdout for r in ray_pool.run_many(["print('a')", "print('b')"])] == ["a\n", "b\n"]


def test_without_retries_a_killed_actor_is_a_killed_result(ray_pool):
    p, restarts = ray_pool, ray_pool.restarts
    p.retries = 0
    try:
        slot = p._idle.get()  # the slot the next program runs on (last in, first out)
        p._idle.put(slot)
        timer = threading.Timer(0.5, lambda: ray.kill(slot.actor, no_restart=True))
        timer.start()
        r = p.run("import time\ntime.sleep(5)\nprint('never')", Limits(timeout_s=10))
        assert (r.status, r.stdout) == ("killed", "") and "Ray actor" in r.reason
        assert p.run("print('back')").stdout == "back\n" and p.restarts == restarts + 1
    finally:
        p.retries = 2


def test_the_tool_env_runs_its_programs_on_ray_with_the_same_rewards(ray_pool):
    rewards = {}
    for executor in ("local", "ray"):
        env = gym.make("SolverTool-v0", task="sat-bench", executor=executor)
        got = []
        for seed in range(3):
            obs, info = env.reset(seed=seed)
            done = False
            while not done:
                obs, r, term, trunc, info = env.step(oracle_action(env.unwrapped, obs))
                done = term or trunc
            got.append((r, info["reward_components"]))
        rewards[executor] = got
        env.close()
    assert rewards["ray"] == rewards["local"] and all(r > 1 for r, _ in rewards["ray"])


def test_the_or_env_runs_its_programs_on_ray_with_the_same_rewards(ray_pool):
    rewards = {}
    for executor in ("local", "ray"):
        env = gym.make("SolverOR-v0", solver="highspy", executor=executor)
        got = []
        for seed in range(2):
            env.reset(seed=seed)
            _, r, term, _, info = env.step(oracle_action(env.unwrapped))
            got.append((r, info["reward_components"], info["correct"]))
        rewards[executor] = got
        env.close()
    assert rewards["ray"] == rewards["local"] and all(c for *_, c in rewards["ray"])


def test_the_evaluation_harness_takes_the_executor(ray_pool, tmp_path):
    cfg = dict(env_id="SolverTool-v0", agent="oracle", instances=3, batch_instances=3)
    run_eval(EvalConfig(**cfg), tmp_path / "local", progress=False)
    run_eval(EvalConfig(**cfg, executor="ray"), tmp_path / "ray", progress=False)
    keep = ("instance", "seed", "sample", "reward", "correct", "components", "messages", "setting")
    local = [{k: r[k] for k in keep} for r in load_records(tmp_path / "local")]
    remote = [{k: r[k] for k in keep} for r in load_records(tmp_path / "ray")]
    assert remote == local and len(remote) == 3
    with pytest.raises(ValueError, match="runs no programs"):
        EvalConfig(env_id="SolverSAT-v0", agent="oracle", instances=1, executor="ray").make_env()


def test_a_lease_on_the_ray_executor_is_the_process_wide_ray_pool(ray_pool):
    with shared_pool(executor="ray") as a, shared_pool(executor="ray") as b:
        assert a.pool is b.pool is ray_pool and a.pool.executor == "ray"
        assert a.run("print('shared')").stdout == "shared\n"
    with pytest.raises(ValueError, match="not both"):
        shared_pool(SandboxPool(1), executor="ray")
    with pytest.raises(ValueError, match="local servers"):  # the phases are read on one machine's clock
        ray_pool.profile("print(1)")


def test_an_adapter_scores_rows_from_anywhere_on_ray(ray_pool):
    """Where programs run is not part of a row: rows written without an executor are scored by a
    reward function whose env runs them on Ray, with the same rewards."""
    import json

    from solvergym.adapters.scoring import INSTANCE_COLUMN
    from solvergym.adapters.trl import reward_fn, trl_rows

    rows = trl_rows("SolverOR-v0", 2, seed=0, solver="highspy")
    assert "executor" not in rows[0]["solvergym_env_kwargs"]
    gold = gym.make("SolverOR-v0", solver="highspy").unwrapped
    answers = []
    for r in rows:
        gold.reset(options={"instance": json.loads(r[INSTANCE_COLUMN])})
        answers.append(gold.gold().answer)
    gold.close()
    cols = {k: [r[k] for r in rows] for k in rows[0] if k != "prompt"}
    here, there = reward_fn("SolverOR-v0", solver="highspy"), reward_fn("SolverOR-v0", solver="highspy", executor="ray")
    assert there(completions=answers, **cols) == here(completions=answers, **cols) == [3.5, 3.5]
    assert [s.status for s in there.last_scores] == ["ok", "ok"]
    here.scorer.close()
    there.scorer.close()
