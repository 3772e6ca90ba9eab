"""A newcomer's path, scripted (issue 24): a user's own module in an empty folder — a family
registered with ``register_problem(..., env_id="TwoColor-v0")`` (single turn and tool mode), a
step-verified variant of a built-in family (``MyKnights-v0``) and agents (a class, a broken one):
``tests/data/newcomer/mymod.py`` — used from the command line as a subprocess whose working
directory is that folder, with no ``PYTHONPATH``: ``eval`` (``--import`` and ``module:Env-v0``),
``SolverTool-v0 --kwargs task=twocolor``, ``list``, ``sample``, ``check-trace`` and ``train
--steps 1`` (the one model load here), and the one-line errors a newcomer meets first."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import gymnasium as gym
import pytest

import solvergym  # noqa: F401
from solvergym.agents.scripted import oracle_action

MODULE = Path(__file__).parent / "data" / "newcomer" / "mymod.py"
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}  # nothing set for the user's module
#: the console script a newcomer types (``python -m`` would put the working directory on the path itself)
SCRIPT = Path(sys.executable).with_name("solvergym")
COMMAND = [str(SCRIPT)] if SCRIPT.exists() else [sys.executable, "-m", "solvergym.cli"]


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    """An empty folder with the user's module in it, the working directory of every command."""
    d = tmp_path_factory.mktemp("newcomer")
    shutil.copy(MODULE, d / "mymod.py")
    return d


def solvergym_cli(folder: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([*COMMAND, *args], cwd=folder, env=ENV,
                          capture_output=True, text=True)


def _overall(run: Path) -> dict:
    return json.loads((run / "report.json").read_text())["overall"]


def test_eval_a_family_of_ones_own_with_import_and_a_class_agent(folder):
    out = solvergym_cli(folder, "eval", "--import", "mymod", "--env", "TwoColor-v0", "--agent", "mymod:MyAgent",
                        "--instances", "4", "--out", "run", "--no-progress", "--no-plot")
    assert out.returncode == 0, out.stderr[-3000:]
    overall = _overall(folder / "run")
    # the class was instantiated (used unbound, act(observations, envs) would have failed)
    assert overall["episodes"] == 4 and overall["metrics"]["pass@1"]["mean"] == 1.0
    assert overall["mean_reward"] == pytest.approx(1.1)


def test_eval_with_gymnasiums_module_form_and_the_tool_mode(folder):
    out = solvergym_cli(folder, "eval", "--env", "mymod:TwoColor-v0", "--agent", "oracle", "--instances", "3",
                        "--out", "run-module-form", "--no-progress", "--no-plot")
    assert out.returncode == 0, out.stderr[-3000:]
    assert _overall(folder / "run-module-form")["metrics"]["pass@1"]["mean"] == 1.0
    # SolverTool-v0 poses the user's problem: the oracle's z3 program runs in the sandbox
    out = solvergym_cli(folder, "eval", "--import", "mymod", "--env", "SolverTool-v0", "--kwargs", "task=twocolor",
                        "--agent", "oracle", "--instances", "2", "--out", "run-tool", "--no-progress", "--no-plot")
    assert out.returncode == 0, out.stderr[-3000:]
    overall = _overall(folder / "run-tool")
    assert overall["metrics"]["pass@1"]["mean"] == 1.0 and overall["components"]["tool"] > 0


def test_list_and_sample_see_the_users_ids(folder):
    out = solvergym_cli(folder, "list", "--import", "mymod", "--json")
    assert out.returncode == 0, out.stderr[-3000:]
    rows = {row["id"]: row for row in json.loads(out.stdout)}
    assert rows["TwoColor-v0"]["knobs"] == {"n": 4, "edges": 4}
    assert rows["TwoColor-v0"]["components"] == {"mode=single": ["format", "correct"],
                                                 "mode=tool": ["format", "correct", "tool", "equivalence"]}
    assert rows["MyKnights-v0"]["modes"] == ["single", "step"]
    assert "task=twocolor" in rows["SolverTool-v0"]["components"]
    # --import before the command works too
    first = solvergym_cli(folder, "--import", "mymod", "list", "--json")
    assert first.returncode == 0 and {row["id"] for row in json.loads(first.stdout)} == set(rows), first.stderr[-3000:]
    out = solvergym_cli(folder, "sample", "mymod:TwoColor-v0", "--solution")
    assert out.returncode == 0, out.stderr[-3000:]
    assert "Can it be coloured with two colours?" in out.stdout and "--- instance ---" in out.stdout
    instance = out.stdout.split("--- instance ---\n", 1)[1]
    assert json.loads(instance)["n"] == 4 and "\n  [1, 3],\n" in instance  # an edge per line, not a number


def test_check_trace_on_a_step_verified_family_of_ones_own(folder):
    # MyKnights poses Knights & Knaves: the built-in id's gold traces are its traces too
    with open(folder / "traces.jsonl", "w") as f:
        for seed in range(2):
            env = gym.make("SolverKnights-v0")
            obs, _ = env.reset(seed=seed)
            f.write(json.dumps({"id": seed, "instance": env.unwrapped.instance.to_dict(),
                                "output": oracle_action(env, obs)}) + "\n")
    out = solvergym_cli(folder, "check-trace", "--import", "mymod", "MyKnights-v0", "traces.jsonl")
    assert out.returncode == 0, out.stderr[-3000:]
    report = json.loads((folder / "traces.report.json").read_text())
    assert report["env_id"] == "MyKnights-v0" and report["n"] == 2 and report["bad_lines"] == 0
    assert report["summary"]["solved"]["n"] == 2


def test_an_error_inside_the_users_agent_keeps_its_traceback(folder):
    out = solvergym_cli(folder, "eval", "--import", "mymod", "--env", "TwoColor-v0", "--agent", "mymod:broken",
                        "--instances", "2", "--out", "run-broken", "--no-progress", "--no-plot")
    assert out.returncode == 1
    assert "Traceback (most recent call last)" in out.stderr
    assert f'File "{folder / "mymod.py"}", line' in out.stderr and "in act" in out.stderr
    assert out.stderr.rstrip().endswith("ValueError: the user's agent failed here")


def test_first_mistakes_are_one_line_errors(folder):
    for args, want in (
        (("eval", "--import", "mymod", "--env", "TwoColr-v0", "--agent", "oracle", "--out", "x"),
         "--env: unknown env 'TwoColr-v0' (did you mean 'TwoColor-v0'?); known: SolverSAT-v0"),
        (("eval", "--import", "mymod", "--env", "TwoColor-v0", "--agent", "mymod:MyAgnt", "--out", "x"),
         "solvergym eval: cannot load the agent 'mymod:MyAgnt': module 'mymod'"),
        (("list", "--import", "mymodd"), "--import: no module named 'mymodd'"),
        (("eval", "--env", "mymodd:TwoColor-v0", "--agent", "oracle", "--out", "x"),
         "--env: 'mymodd:TwoColor-v0': no module named 'mymodd'"),
    ):
        out = solvergym_cli(folder, *args)
        assert out.returncode != 0 and out.stderr.startswith(want), (args, out.stderr[-2000:])
        assert len(out.stderr.strip().splitlines()) == 1, out.stderr[-2000:]
    assert "did you mean 'MyAgent'?" in solvergym_cli(
        folder, "eval", "--import", "mymod", "--env", "TwoColor-v0", "--agent", "mymod:MyAgnt", "--out", "x").stderr


def test_train_with_an_unknown_env_fails_before_anything_is_loaded(folder):
    probe = ("import sys\nfrom solvergym.cli import main\n"
             "try:\n    main(['train', '--import', 'mymod', '--env', 'TwoColr-v0'])\n"
             "except SystemExit as e:\n    print(e)\n"
             "print(sorted(m for m in ('torch', 'transformers', 'solvergym.algorithms.trainer') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", probe], cwd=folder, env=ENV, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-3000:]
    message, loaded = out.stdout.strip().splitlines()
    assert message.startswith("--env: unknown env 'TwoColr-v0' (did you mean 'TwoColor-v0'?)")
    assert loaded == "[]"


@pytest.mark.slow
def test_train_one_step_on_a_family_of_ones_own(folder):
    """The one model load here: one GRPO step of the embedded model, the cheapest settings."""
    out = solvergym_cli(folder, "train", "--import", "mymod", "--env", "TwoColor-v0", "--steps", "1", "--out", "trun",
                        "--set", "prompts_per_step=1", "group_size=2", "max_new_tokens=4", "progress=false",
                        "save_final=false")
    try:
        assert out.returncode == 0, out.stderr[-3000:]
        lines = (folder / "trun" / "metrics.jsonl").read_text().splitlines()
        assert len(lines) == 1 and "reward/correct" in json.loads(lines[0])
    finally:
        shutil.rmtree(folder / "trun", ignore_errors=True)  # the model written is large
