"""User code in the command line and the errors a newcomer meets (issue 24, items 1, 2, 9, 10 and
13's ``sample``), in-process and cheap: one resolver of env ids (a family of one's own, Gymnasium's
``module:Env-v0``, "did you mean"), the registry's view of a user's family, ``--import`` on every
subcommand, agents by ``MODULE:NAME`` (a class is instantiated, the user's errors keep their
traceback), ``--set`` and model paths checked with one-line errors, the help texts, compact
instance JSON. ``tests/test_newcomer.py`` runs the same module from the command line."""
from __future__ import annotations

import json
import os
import shutil
import sys
import traceback
from pathlib import Path

import pytest

import solvergym  # noqa: F401
from solvergym import registry
from solvergym.agents.models import ModelNotFound, check_model
from solvergym.algorithms.config import field_value, make_config
from solvergym.cli import main
from solvergym.cli.args import raised_in_user_code
from solvergym.cli.explore import compact_json
from solvergym.cli.main import _subcommands, build_parser
from solvergym.evaluation.agents import make_agent

MODULE = Path(__file__).parent / "data" / "newcomer" / "mymod.py"


@pytest.fixture(scope="module")
def mymod(tmp_path_factory):
    """The newcomer's module, imported as the CLI imports it: from the working directory."""
    d = tmp_path_factory.mktemp("user")
    shutil.copy(MODULE, d / "mymod.py")
    cwd = os.getcwd()
    os.chdir(d)
    try:
        yield registry.import_user_module("mymod")
    finally:
        os.chdir(cwd)


# ----------------------------------------------------------------------------- item 1: env ids
def test_an_unknown_id_is_one_line_with_the_closest_known_ones():
    with pytest.raises(ValueError) as e:
        registry.resolve_env_id("SolverSat-v0")
    msg = str(e.value)
    assert msg.startswith("unknown env 'SolverSat-v0' (did you mean 'SolverSAT-v0'")
    assert "; known: SolverSAT-v0, SolverSATBench-v0, SolverTool-v0," in msg and "--import MODULE" in msg
    assert "\n" not in msg and isinstance(e.value, KeyError)  # check-trace's KeyError handling sees it too
    with pytest.raises(ValueError, match="'CartPole-v1' is a Gymnasium env but not a solvergym one"):
        registry.resolve_env_id("CartPole-v1")
    with pytest.raises(ValueError, match=r"^'nosuchmodule_x:X-v0': no module named 'nosuchmodule_x'"):
        registry.resolve_env_id("nosuchmodule_x:X-v0")
    assert registry.resolve_env_id("solvergym:SolverSAT-v0") == "SolverSAT-v0"


def test_the_module_form_imports_the_module_from_the_working_directory(tmp_path, monkeypatch):
    (tmp_path / "h1_family_mod.py").write_text(
        MODULE.read_text().replace('env_id="TwoColor-v0"', 'env_id="H1TwoColor-v0"')
        .replace('name = "twocolor"', 'name = "h1-twocolor"').replace('env_id="MyKnights-v0"', 'env_id="H1Knights-v0"')
        .replace('name = "my-knights"', 'name = "h1-knights"'))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", str(tmp_path))])  # as without PYTHONPATH
    assert registry.resolve_env_id("h1_family_mod:H1TwoColor-v0") == "H1TwoColor-v0"
    assert registry.resolve_env_id("H1TwoColor-v0") == "H1TwoColor-v0"  # registered from now on


def test_the_registry_sees_a_registered_family_of_ones_own(mymod):
    assert registry.get_entry("TwoColor-v0").modes == ("single", "tool")
    assert registry.modes("MyKnights-v0") == ("single", "step")
    assert registry.knobs("TwoColor-v0") == {"n": 4, "edges": 4}
    kw = registry.default_kwargs("TwoColor-v0")
    assert kw["mode"] == "single" and kw["n"] == 4 and "task" not in kw
    assert kw["max_tool_output_chars"] is None  # the tool mode's own: the single turn refuses it
    assert registry.components("TwoColor-v0", mode="tool") == ("format", "correct", "tool", "equivalence")
    assert "twocolor" in registry.tool_tasks()
    rows = {row["id"]: row for row in registry.listing()}
    assert rows["TwoColor-v0"]["description"] == "Two-colouring of a small random graph: yes or no."
    assert rows["SolverTool-v0"]["components"]["task=twocolor"] == ["format", "correct", "tool", "equivalence"]
    assert registry.solvergym_ids()[:len(registry.env_ids())] == registry.env_ids()


def test_list_takes_ids_in_either_form(mymod, capsys):
    assert main(["list", "mymod:TwoColor-v0", "MyKnights-v0", "--json"]) == 0
    assert [row["id"] for row in json.loads(capsys.readouterr().out)] == ["TwoColor-v0", "MyKnights-v0"]
    with pytest.raises(SystemExit, match=r"^list: unknown env 'TwoColr-v0' \(did you mean 'TwoColor-v0'"):
        main(["list", "TwoColr-v0"])


def test_every_subcommand_takes_import(capsys):
    parsers = _subcommands(build_parser()._subparsers._group_actions[0])
    names = {p.prog.removeprefix("solvergym ") for p in parsers}
    assert {"list", "sample", "demo", "train", "sft", "plot", "check-trace", "eval", "eval compare"} <= names
    assert all("--import" in p._option_string_actions for p in parsers)
    with pytest.raises(SystemExit, match=r"^--import: no module named 'nosuchmodule_y' \(looked in the working"):
        main(["list", "--import", "nosuchmodule_y"])


def test_tool_mode_poses_the_users_problem(mymod):
    import gymnasium as gym

    env = gym.make("SolverTool-v0", task="twocolor")
    obs, info = env.reset(seed=0)
    assert info["task"] == "twocolor" and "Can it be coloured with two colours?" in obs
    env.close()


# ----------------------------------------------------------------------------- item 2: agents
def test_a_class_is_instantiated_and_a_missing_name_says_what_is_there(mymod):
    agent = make_agent("mymod:MyAgent")
    assert type(agent) is mymod.MyAgent and agent.name == "brute-force"
    with pytest.raises(ValueError, match=r"module 'mymod' \(.*mymod.py\) has no 'MyAgnt'; did you mean 'MyAgent'\?"):
        make_agent("mymod:MyAgnt")
    with pytest.raises(ValueError, match="no module named 'nosuchmodule_z'"):
        make_agent("nosuchmodule_z:Agent")


def test_an_error_in_the_users_agent_keeps_its_traceback_and_input_errors_stay_one_line(mymod, tmp_path):
    with pytest.raises(ValueError, match="the user's agent failed here") as e:
        main(["eval", "--env", "TwoColor-v0", "--agent", "mymod:broken", "--instances", "1",
              "--out", str(tmp_path / "run"), "--no-progress", "--no-plot"])
    files = [frame.filename for frame in traceback.extract_tb(e.value.__traceback__)]
    assert files[-1].endswith("mymod.py") and raised_in_user_code(e.value)
    with pytest.raises(SystemExit, match=r"^solvergym eval: unknown agent spec 'oracle:x': use oracle, random, cdcl"):
        main(["eval", "--env", "TwoColor-v0", "--agent", "oracle:x", "--out", str(tmp_path / "r2")])  # solvergym's check


# ----------------------------------------------------------------------------- item 9: --set, model paths
@pytest.mark.parametrize("item, want", [
    ("group_size=abc", r"^--set: group_size='abc' is not int \(the default: group_size=8\)$"),
    ("foo=1", r"^--set: unknown TrainConfig field 'foo' fields: algo, env, env_kwargs, model, .*, bonus_from_step$"),
    ("grup_size=4", r"^--set: unknown TrainConfig field 'grup_size'; did you mean 'group_size'\? fields: algo, "),
    ("progress=yes", r"^--set: progress='yes' is not bool \(the default: progress=true\)$"),
    ("loss_agg=token_mean", r"loss_agg must be one of \('token-mean', .*\), got 'token_mean' "
                            r"\(did you mean 'token-mean'\?\)$"),
])
def test_train_set_errors_name_the_key_and_the_choices(item, want):
    with pytest.raises(SystemExit, match=want):
        main(["train", "--env", "SolverSAT-v0", "--set", item])


def test_set_values_take_the_fields_types():
    cfg = make_config(overrides={"lr": "1", "adam_betas": "[0.9, 0.95]", "lora_targets": '["q"]', "model": "123",
                                 "dual_clip": "null", "steps": "2"})
    assert (cfg.lr, cfg.adam_betas, cfg.lora_targets, cfg.model, cfg.dual_clip, cfg.steps) == (
        1.0, (0.9, 0.95), ("q",), "123", None, 2)
    assert isinstance(cfg.lr, float) and field_value("system_prompt", "null") is None


def test_a_model_written_as_a_path_that_is_not_there(tmp_path):
    for spec in ("/nonexistent/model", "./nope", "~/nonexistent-solvergym-model", "runs/a/b"):
        with pytest.raises(ModelNotFound, match=f"^no such folder or file: {spec}$"):
            check_model(spec)
    assert check_model("HuggingFaceTB/SmolLM2-135M-Instruct") == "HuggingFaceTB/SmolLM2-135M-Instruct"  # a hub id
    assert check_model(str(tmp_path)) == str(tmp_path) and check_model("default") == "default"
    with pytest.raises(SystemExit, match=r"^--model: no such folder or file: /nonexistent/model$"):
        main(["train", "--env", "SolverSAT-v0", "--model", "/nonexistent/model"])
    with pytest.raises(SystemExit, match=r"^solvergym eval: no such folder or file: /nonexistent/model$"):
        main(["eval", "--env", "SolverSAT-v0", "--agent", "hf:/nonexistent/model", "--out", str(tmp_path / "r")])


def test_train_with_an_unknown_env_is_one_line():
    with pytest.raises(SystemExit, match=r"^--env: unknown env 'UnknownEnv'; known: SolverSAT-v0, "):
        main(["train", "--env", "UnknownEnv"])


# ----------------------------------------------------------------------------- item 10: help; 13: sample
def test_help_names_eval_compare_cdcl_logic_lm_and_shows_defaults(capsys):
    for argv in (["--help"], ["eval", "--help"]):
        with pytest.raises(SystemExit):
            main(argv)
        out = " ".join(capsys.readouterr().out.split())  # unwrapped
        assert "eval compare" in out and "cdcl" in out and "logic-lm:SPEC" in out and "--import" in out, argv
        if argv[0] == "eval":
            assert "generated instances (without --dataset) (default: 100)" in out
            assert "(default: 256)" in out and "(default: None)" not in out


def test_sample_prints_compact_instance_json(capsys):
    assert main(["sample", "SolverSAT-v0", "--seed", "3", "--solution"]) == 0
    instance = capsys.readouterr().out.split("--- instance ---\n", 1)[1]
    lines = instance.splitlines()
    assert not any(line.strip().rstrip(",").lstrip("-").isdigit() for line in lines)  # no number on its own line
    assert sum(line.strip().startswith("[") and line.strip().rstrip(",").endswith("]") for line in lines) >= 3
    assert compact_json({"a": [1, 2], "b": [[1, -2], [3]], "c": {}, "d": "x"}) == (
        '{\n "a": [1, 2],\n "b": [\n  [1, -2],\n  [3]\n ],\n "c": {},\n "d": "x"\n}')
