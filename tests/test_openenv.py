"""`solvergym serve`: an env as an OpenEnv server on localhost, talked to by an OpenEnv client.

The server is the real command in a child process; the client is OpenEnv's ``EnvClient`` over
its WebSocket. Rewards equal the env's own on the same instances; ``reset(seed)`` is
deterministic; sessions are independent; a bad action is refused without taking the server down.
OpenEnv's HTTP ``/reset``, ``/step`` and ``/state`` are off by default and, with ``--http-routes``,
play one shared episode that holds one of ``--max-sessions``; ``--no-client-instances`` refuses a
client's seed, instance and difficulty (issue 43, item 9).
"""
from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor

import gymnasium as gym
import numpy as np
import pytest

import solvergym  # noqa: F401

pytest.importorskip("openenv.core")

from websockets.sync.client import connect  # noqa: E402  (openenv-core's dependency)

from solvergym.adapters.openenv import SolverGymClient, environment_class, make_app, manifest  # noqa: E402

KWARGS = {"family": "subset-sum", "query": "solving"}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _serve(out, *args: str):
    """``solvergym serve SolverLogic-v0 --port PORT *args`` in a child process, once ``/health``
    answers: ``(process, url)``."""
    port = _free_port()
    proc = subprocess.Popen([sys.executable, "-m", "solvergym.cli", "serve", "SolverLogic-v0", "--port", str(port),
                             "--manifest", str(out), *args, "--kwargs", *(f"{k}={v}" for k, v in KWARGS.items())],
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
    return proc, url


def _stop(proc) -> None:
    proc.terminate()
    proc.wait(timeout=60)


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    out = tmp_path_factory.mktemp("serve")
    proc, url = _serve(out)
    yield url, out
    _stop(proc)


@pytest.fixture(scope="module")
def http_server(tmp_path_factory):
    """The HTTP routes on, two sessions: the HTTP episode's and one WebSocket session."""
    proc, url = _serve(tmp_path_factory.mktemp("serve_http"), "--http-routes", "--max-sessions", "2")
    yield url
    _stop(proc)


@pytest.fixture(scope="module")
def closed_server(tmp_path_factory):
    """No client instances, and the HTTP routes on to show they are held to the same rule."""
    out = tmp_path_factory.mktemp("serve_closed")
    proc, url = _serve(out, "--no-client-instances", "--http-routes", "--max-sessions", "3")
    yield url, out
    _stop(proc)


def _http(url: str, method: str = "GET", body: dict | None = None) -> tuple[int, dict]:
    """``(status, JSON body)`` of one real HTTP request; an error status is a value, not a raise."""
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, method=method, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=120) as r:
            return r.status, json.loads(r.read() or b"null")
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"null")


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


def test_the_http_routes_are_off_by_default(server):
    """OpenEnv's simulation routes made a fresh env per request, outside ``--max-sessions`` (six
    concurrent ``POST /reset`` all served under a cap of three), and ``/step`` always failed
    with 500; by default they are not served at all, and the WebSocket still is."""
    url, _ = server
    assert _http(url + "/reset", "POST", {"seed": 1})[0] == 404
    assert _http(url + "/step", "POST", {"action": {"text": "```answer 1```"}})[0] == 404
    assert _http(url + "/state")[0] == 404
    assert _http(url + "/health") == (200, {"status": "healthy"})
    with SolverGymClient(base_url=url).sync() as client:
        assert client.reset(seed=1).observation["text"] == _local(1)[1]


def test_the_http_routes_play_one_episode_held_to_the_cap(http_server):
    """``--http-routes``: ``/reset`` then ``/step`` is an episode with the env's own rewards (the
    state persists between requests), concurrent resets are served one at a time by that one
    episode, and it holds one of ``--max-sessions 2``, so a second WebSocket session is refused."""
    url = http_server
    status, body = _http(url + "/step", "POST", {"action": {"text": "```answer 1```"}})
    assert status == 409 and "before reset" in body["detail"]  # the env's own error, not a 500

    seeds = list(range(20, 26))
    with ThreadPoolExecutor(len(seeds)) as pool:
        answers = list(pool.map(lambda seed: _http(url + "/reset", "POST", {"seed": seed}), seeds))
    assert [a[0] for a in answers] == [200] * len(seeds)
    assert [a[1]["observation"]["text"] for a in answers] == [_local(seed)[1] for seed in seeds]

    local, obs = _local(3)
    _, want, *_ = local.step(local.gold().answer)
    status, first = _http(url + "/reset", "POST", {"seed": 3, "episode_id": "http-3"})
    assert status == 200 and first["observation"]["text"] == obs and first["done"] is False
    status, stepped = _http(url + "/step", "POST", {"action": {"text": local.gold().answer}})
    assert status == 200 and stepped["reward"] == want == pytest.approx(1.1) and stepped["done"] is True
    assert stepped["observation"]["info"]["correct"] is True
    status, state = _http(url + "/state")
    assert status == 200 and state["episode_id"] == "http-3" and state["step_count"] == 1
    assert state["instance_id"] == first["observation"]["info"]["instance_id"]
    assert _http(url + "/step", "POST", {"action": {"text": "again"}})[0] == 409  # the episode ended
    assert _http(url + "/step", "POST", {"action": {"text": 5}})[0] == 422  # not text: the schema's
    status, body = _http(url + "/reset", "POST", {"seed": 1, "difficulty": {"no_such_knob": 1}})
    assert status == 422 and "no_such_knob" in body["detail"]

    with SolverGymClient(base_url=url).sync() as a:
        assert a.reset(seed=10).observation["text"] == _local(10)[1]
        # a refused session is told so as soon as it connects, before it sends anything (a
        # client that sent first could see the close before the reason, so read the reason)
        with connect(url.replace("http://", "ws://") + "/ws") as b:
            refusal = json.loads(b.recv(timeout=120))  # sent already: a bound, not a timing
        assert refusal["data"]["code"] == "CAPACITY_REACHED" and refusal["data"]["max_sessions"] == 1
        assert _http(url + "/reset", "POST", {"seed": 4})[1]["observation"]["text"] == _local(4)[1]


def test_without_client_instances_the_server_draws_every_instance(closed_server):
    """``--no-client-instances``: a reset that gives a seed, an instance or a difficulty is
    refused, over the WebSocket and HTTP alike, and a plain reset poses an instance the server
    drew; the manifest keeps the setting for a server started from it."""
    url, out = closed_server
    row_instance = _local(0)[0].instance.to_json()
    with SolverGymClient(base_url=url).sync() as client:
        for given in ({"seed": 0}, {"instance": row_instance}, {"difficulty": {"n": 3}}):
            with pytest.raises(RuntimeError, match=f"no-client-instances.*reset takes no {next(iter(given))}"):
                client.reset(**given)
        first = client.reset()
        info = first.observation["info"]
        assert first.observation["text"] and info["instance_id"] and first.done is False
        local, _ = _local(0)
        _, want, *_ = local.step("no answer")
        result = client.step({"text": "no answer"})
        assert result.done and result.reward == want
    status, body = _http(url + "/reset", "POST", {"seed": 1})
    assert status == 422 and "reset takes no seed" in body["detail"]
    status, body = _http(url + "/reset", "POST", {})
    assert status == 200 and body["observation"]["info"]["instance_id"]
    yaml = (out / "openenv.yaml").read_text()
    assert "SOLVERGYM_SERVE='{\"client_instances\": false, \"http_routes\": true, \"max_sessions\": 3}'" in yaml
    assert "--http-routes --no-client-instances" in yaml


def test_make_app_checks_its_settings():
    with pytest.raises(ValueError, match="max_sessions >= 2"):
        make_app("SolverSATBench-v0", max_sessions=1, http_routes=True)
    for bad in (0, True, "2"):
        with pytest.raises(ValueError, match="max_sessions must be an int >= 1"):
            make_app("SolverSATBench-v0", max_sessions=bad)
    env = environment_class("SolverSATBench-v0", client_instances=False)()
    with pytest.raises(ValueError, match="reset takes no seed, difficulty"):
        env.reset(seed=1, difficulty={"dims": [3, 2, 2]})
    assert env.reset().info["instance_id"]
