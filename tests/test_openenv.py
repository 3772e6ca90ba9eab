"""`solvergym serve`: an env as an OpenEnv server on localhost, talked to by an OpenEnv client.

The server is the real command in a child process; the client is OpenEnv's ``EnvClient`` over
its WebSocket. Rewards equal the env's own on the same instances; ``reset(seed)`` is
deterministic; sessions are independent; a bad action is refused without taking the server down.
"""
from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
import urllib.request

import gymnasium as gym
import numpy as np
import pytest

import solvergym  # noqa: F401

pytest.importorskip("openenv.core")

from solvergym.adapters.openenv import SolverGymClient, environment_class, manifest  # noqa: E402

KWARGS = {"family": "subset-sum", "query": "solving"}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    port = _free_port()
    out = tmp_path_factory.mktemp("serve")
    proc = subprocess.Popen([sys.executable, "-m", "solvergym.cli", "serve", "SolverLogic-v0", "--port", str(port),
                             "--manifest", str(out), "--kwargs", *(f"{k}={v}" for k, v in KWARGS.items())],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    url = f"http://127.0.0.1:{port}"
    for _ in range(600):  # readiness, not a timing check: the server imports torch-free solvergym
        if proc.poll() is not None:
            raise RuntimeError(f"solvergym serve exited: {proc.stdout.read()}")
        try:
            urllib.request.urlopen(url + "/health", timeout=5)
            break
        except OSError:
            time.sleep(0.5)
    yield url, out
    proc.terminate()
    proc.wait(timeout=60)


def _local(seed):
    env = gym.make("SolverLogic-v0", **KWARGS).unwrapped
    obs, _ = env.reset(seed=seed)
    return env, obs


def test_rewards_through_the_server_are_the_envs_own(server):
    url, out = server
    rng = np.random.default_rng(0)
    with SolverGymClient(base_url=url).sync() as client:
        for seed in range(3):
            local, obs = _local(seed)
            for answer in (local.gold().answer, local.sample_answer(rng), "no answer"):
                first = client.reset(seed=seed)
                assert first.observation["text"] == obs and first.done is False
                _, want, *_ = local.step(answer)
                local.reset(seed=seed)
                got = client.step({"text": answer})
                assert got.reward == want and got.done
                assert got.observation["info"]["reward_components"]
                assert "messages" not in got.observation["info"]
    yaml = (out / "openenv.yaml").read_text()
    assert "spec_version: 1" in yaml and "name: solverlogic_v0" in yaml and json.dumps(KWARGS, sort_keys=True) in yaml


def test_sessions_are_independent_and_a_bad_action_leaves_the_server_up(server):
    url, _ = server
    a_env, a_obs = _local(10)
    b_env, b_obs = _local(11)
    with SolverGymClient(base_url=url).sync() as a, SolverGymClient(base_url=url).sync() as b:
        assert a.reset(seed=10).observation["text"] == a_obs
        assert b.reset(seed=11).observation["text"] == b_obs
        assert a.step({"text": a_env.gold().answer}).reward == pytest.approx(1.1)
        assert b.step({"text": b_env.gold().answer}).reward == pytest.approx(1.1)
        with pytest.raises(RuntimeError, match="VALIDATION_ERROR"):
            a.step({"text": 5})
    with SolverGymClient(base_url=url).sync() as c:
        with pytest.raises(RuntimeError):
            c.step({"text": "```answer 1```"})  # before any reset: the env's own error, sent back
    with SolverGymClient(base_url=url).sync() as d:
        assert d.reset(seed=10).observation["text"] == a_obs


def test_the_environment_class_and_manifest_in_process():
    cls = environment_class("SolverSATBench-v0")
    env = cls()
    assert cls.SUPPORTS_CONCURRENT_SESSIONS
    first = env.reset(seed=4, episode_id="e1")
    assert env.state.episode_id == "e1" and env.state.instance_id == first.info["instance_id"]
    with pytest.raises(ValueError, match="unknown env"):
        environment_class("SolverSatBench-v9")
    assert manifest("SolverSATBench-v0", 9000).count("port: 9000") == 1
