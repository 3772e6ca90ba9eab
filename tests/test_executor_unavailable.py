"""An executor the caller named that cannot run programs is an error where it is named, never a
program status (issue 43, item 8).

Before, ``executor="ray"`` without Ray installed made every program's result ``killed: the sandbox
is unavailable``: ``solvergym eval --executor ray`` exited 0 having paid the oracle 1.1 of its 2.2
on SolverTool-v0, and ``gym.make`` and training went on the same way. Ray is installed in this
venv (the ``ray`` extra), so each test runs a child interpreter whose ``import ray`` fails for
real: a ``ray`` package first on ``PYTHONPATH`` whose import raises ``ModuleNotFoundError``, as
a missing install does. The local sandbox failing to start stays a ``killed`` result (the
machine's limits, not a setting: ``docs/design.md``, "Sandbox";
``tests/test_sandbox_package.py::test_a_lease_never_raises_for_want_of_a_sandbox``).
"""
import json
import os
import subprocess
import sys
import pytest

HINT = "pip install 'solvergym[ray]'"


@pytest.fixture
def no_ray(tmp_path) -> dict:
    """The environment of a child interpreter in which ``import ray`` fails as it does where Ray
    is not installed."""
    shadow = tmp_path / "no_ray"
    (shadow / "ray").mkdir(parents=True)
    (shadow / "ray" / "__init__.py").write_text(
        "raise ModuleNotFoundError(\"No module named 'ray'\", name='ray')\n")
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(shadow), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    env.pop("RAY_ADDRESS", None)
    return env


def _child(code: str, env: dict, cwd) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], env=env, cwd=cwd, capture_output=True, text=True)


def test_the_shadow_makes_ray_unimportable(no_ray, tmp_path):
    """The premise of the tests below: in the child, Ray cannot be imported."""
    out = _child("import importlib\ntry:\n    importlib.import_module('ray')\nexcept ImportError as e:\n"
                 "    print(type(e).__name__, e.name)\n", no_ray, tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ModuleNotFoundError ray"


def test_gym_make_with_the_ray_executor_raises_the_install_hint(no_ray, tmp_path):
    """Both envs that run programs, a lease and a pool of one's own refuse at once with the
    install hint; the local executor still makes an env that steps."""
    code = f"""
import json
import gymnasium as gym
import solvergym
from solvergym.sandbox import SandboxError, SandboxPool, shared_pool
out = {{}}
for name, make in [("tool", lambda: gym.make("SolverTool-v0", executor="ray")),
                   ("or", lambda: gym.make("SolverOR-v0", executor="ray")),
                   ("address", lambda: gym.make("SolverTool-v0", executor="ray://head:10001")),
                   ("lease", lambda: shared_pool(executor="ray")),
                   ("pool", lambda: SandboxPool(1, executor="ray"))]:
    try:
        make()
        out[name] = "made"
    except SandboxError as e:
        out[name] = [type(e).__name__, str(e)]
env = gym.make("SolverTool-v0", task="sat-bench", solver="z3")
env.reset(seed=0)
obs, _, _, _, _ = env.step("<tool_call>print(6 * 7)</tool_call>")
out["local"] = obs
env.close()
print(json.dumps(out))
"""
    res = _child(code, no_ray, tmp_path)
    assert res.returncode == 0, res.stderr[-3000:]
    out = json.loads(res.stdout.strip().splitlines()[-1])
    for name in ("tool", "or", "address", "lease", "pool"):
        assert out[name][:1] == ["ExecutorUnavailable"], (name, out[name])
        message = out[name][1]
        assert HINT in message and "No module named 'ray'" in message, (name, message)
    assert "stdout: 42" in out["local"]


def test_eval_with_the_ray_executor_fails_before_any_record(no_ray, tmp_path):
    """``solvergym eval --executor ray`` without Ray: one line naming the install hint, status 1,
    and no run directory's records (before: status 0, every episode paid 1.1 instead of 2.2)."""
    run = tmp_path / "run"
    res = subprocess.run([sys.executable, "-m", "solvergym.cli", "eval", "--env", "SolverTool-v0", "--agent",
                          "oracle", "--instances", "2", "--executor", "ray", "--out", str(run), "--no-plot",
                          "--no-progress"], env=no_ray, cwd=tmp_path, capture_output=True, text=True)
    assert res.returncode == 1, (res.returncode, res.stdout[-2000:], res.stderr[-2000:])
    last = res.stderr.strip().splitlines()[-1]
    assert last.startswith("solvergym eval: ") and HINT in last, res.stderr[-2000:]
    assert "Traceback" not in res.stderr
    assert not (run / "records.jsonl").exists() and not (run / "run.json").exists()



@pytest.mark.slow
def test_a_ray_slot_that_cannot_start_raises_instead_of_killing_programs(tmp_path):
    """A Ray cluster with no CPU cannot place a slot's actor (``num_cpus=1``): the program's lease
    raises :class:`ExecutorUnavailable` naming the free CPUs, where it used to pay the program as
    ``killed: the sandbox is unavailable`` (and every later one after the same wait). The program
    comes through a scorer (the adapters' shared entry), which lets the error through too, where
    an env's own failure is a zero. The wait is the server start timeout plus the actor's margin,
    once; nothing here measures it."""
    pytest.importorskip("ray", reason="the ray extra is not installed")
    code = """
import json
import ray
from solvergym.adapters import EnvScorer, task_rows
from solvergym.sandbox import SandboxConfig, SandboxError, SandboxPool
ray.init(num_cpus=0, include_dashboard=False, log_to_driver=False, object_store_memory=100 << 20)
pool = SandboxPool(1, config=SandboxConfig(start_timeout_s=1), executor="ray")
row = next(task_rows("SolverOR-v0", 1, seed=0))
answer = "<think>x</think><model>m</model><python>\\nprint(1)\\n</python>"  # a program: the executor runs it
try:
    sc = EnvScorer("SolverOR-v0", pool=pool).score_row(answer, row)
    out = ["scored", sc.status, sc.reason[:300]]
except SandboxError as e:
    out = [type(e).__name__, str(e)]
pool.close()
ray.shutdown()
print(json.dumps(out))
"""
    env = dict(os.environ)
    env.pop("RAY_ADDRESS", None)
    res = _child(code, env, tmp_path)
    assert res.returncode == 0, res.stderr[-3000:]
    out = json.loads(res.stdout.strip().splitlines()[-1])
    assert out[0] == "ExecutorUnavailable", out
    assert "failed to start on Ray" in out[1] and "the cluster has 0 CPUs free" in out[1], out


@pytest.mark.slow
def test_the_trainer_without_ray_fails_before_its_first_step(no_ray, tmp_path):
    """The trainer makes its envs with ``TrainConfig.env_kwargs`` (``solvergym train --env-kwargs
    executor=ray``): without Ray it stops there with the install hint instead of training on
    rewards that paid every program as killed; the command says so in one line."""
    code = """
from solvergym.algorithms.config import TrainConfig
from solvergym.algorithms.trainer import Trainer
from solvergym.sandbox import SandboxError
try:
    Trainer(TrainConfig(env="SolverTool-v0", env_kwargs={"executor": "ray"}, prompts_per_step=1, group_size=2,
                        progress=False))
    print("made")
except SandboxError as e:
    print(type(e).__name__, e)
"""
    res = _child(code, no_ray, tmp_path)
    assert res.returncode == 0, res.stderr[-3000:]
    last = res.stdout.strip().splitlines()[-1]
    assert last.startswith("ExecutorUnavailable ") and HINT in last, last
    res = subprocess.run([sys.executable, "-m", "solvergym.cli", "train", "--env", "SolverTool-v0", "--env-kwargs",
                          "executor=ray", "--steps", "1", "--out", str(tmp_path / "run")], env=no_ray, cwd=tmp_path,
                         capture_output=True, text=True)
    assert res.returncode == 1 and "Traceback" not in res.stderr, res.stderr[-3000:]
    assert res.stderr.strip().splitlines()[-1].startswith("solvergym train: ") and HINT in res.stderr
