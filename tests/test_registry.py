"""The registry derives what it lists from the problems and their modes (issue 22): for every id,
every mode it offers (``SolverTool-v0``: every task with a tool mode), the reward components
``solvergym list`` prints are the keys an episode's ``info["reward_components"]`` reports, and the
knobs and keywords are what the env accepts."""
import json
import subprocess
import sys

import gymnasium as gym
import pytest

import solvergym  # noqa: F401
from solvergym import registry
from solvergym.envs.problem import get_problem

LISTING = {row["id"]: row for row in registry.listing()}
CASES = [(row["id"], key) for row in LISTING.values() for key in row["components"]]


def _kwargs(key: str) -> dict:
    name, _, value = key.partition("=")
    return {name: value} if value else {}


@pytest.mark.parametrize("env_id, key", CASES, ids=[f"{i} {k}" for i, k in CASES])
def test_listed_components_are_what_an_episode_reports(env_id, key):
    env = gym.make(env_id, **_kwargs(key)).unwrapped
    try:
        env.reset(seed=0)
        *_, info = env.step("not an answer")
        assert list(info["reward_components"]) == LISTING[env_id]["components"][key]
        assert env.mode == {"single": "single", "mode=single": "single", "mode=trace": "single",
                            "mode=step": "step"}.get(key, "tool")
    finally:
        env.close()


def test_knobs_and_keywords_are_what_the_env_takes():
    for env_id, row in LISTING.items():
        env = gym.make(env_id, **row["knobs"]).unwrapped
        assert env.difficulty == json.loads(json.dumps(row["knobs"]))  # knobs normalise tuples to lists
        env.close()
        # every listed keyword is accepted with its listed default
        accepted = {k: v for k, v in row["keywords"].items() if v is not None}
        gym.make(env_id, **accepted).unwrapped.close()
    # a logic env with an outcome-only preset (Spring §5.1's OR-INT) has three terms, not six
    assert registry.components("SolverZebra-v0", reward="or_int") == ("parsed", "format", "accuracy")
    assert registry.components("SolverTool-v0", task="or") == ("format", "execution", "accuracy", "bonus", "tool")


def test_tool_tasks_are_the_problems_with_a_tool_capability():
    tasks = registry.tool_tasks()
    assert {"sat", "sat-bench", "or"} <= set(tasks) and not {"zebra", "knights", "lsat"} & set(tasks)
    assert all(get_problem(t).tool is not None for t in tasks)


def test_solvergym_list_prints_the_derived_listing():
    out = subprocess.run([sys.executable, "-m", "solvergym.cli", "list", "--json"], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-2000:]
    printed = {row["id"]: row for row in json.loads(out.stdout)}
    for env_id, row in printed.items():
        want = LISTING[env_id]
        assert row["knobs"] == json.loads(json.dumps(want["knobs"], default=str))
        for key, names in want["components"].items():
            if not key.startswith("task=test-"):  # this process registered test problems the child has not
                assert row["components"][key] == names
