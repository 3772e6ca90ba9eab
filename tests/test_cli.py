import json
import subprocess
import sys
from pathlib import Path

import pytest

from solvergym import env_ids
from solvergym.cli import main


def test_list_shows_ids_and_defaults(capsys):
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    for env_id in env_ids():
        assert env_id in out
    assert '"k": 5' in out and '"show_mapping": false' in out


def test_sample_prints_observation_and_solution(capsys):
    assert main(["sample", "SolverSAT-v0", "--seed", "3", "--kwargs", "k=7", "l=20", "--solution"]) == 0
    out = capsys.readouterr().out
    assert '"k": 7' in out and "--- solution ---" in out and "\\boxed{" in out
    assert main(["sample", "SolverSATBench-v0", "--kwargs", '{"show_mapping": true}']) == 0
    assert "Variable Mapping:" in capsys.readouterr().out
    assert main(["sample", "NoSuchEnv-v0"]) == 2


def test_demo_prints_the_table(capsys):
    assert main(["demo", "--episodes", "20", "--train-steps", "0"]) == 0
    out = capsys.readouterr().out
    lines = [line for line in out.splitlines() if line.startswith("Solver")]
    assert len(lines) == 2 * len(env_ids())
    oracle = [line for line in lines if " oracle " in line]
    assert all("100.0%" in line for line in oracle)


def test_console_script_entry_point():
    out = subprocess.run([sys.executable, "-m", "solvergym.cli", "list"], capture_output=True, text=True, check=True)
    assert "SolverSAT-v0" in out.stdout


def test_readme_quick_start_runs():
    """The README's first Python block is executed as written (the README stays true)."""
    from pathlib import Path

    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    code = readme.split("```python\n", 1)[1].split("```\n", 1)[0]
    namespace: dict = {}
    exec(compile(code, "README.md", "exec"), namespace)
    assert namespace["info"]["difficulty"] == {"n": 3, "k": 5, "l": 15}
    assert namespace["venv"].num_envs == 8


@pytest.mark.slow
def test_train_cli_writes_metrics_curve_and_model(tmp_path, capsys):
    sys.path.insert(0, str(Path(__file__).parent))
    import toy_env

    toy_env.register()
    out = tmp_path / "run"
    assert main(["train", "--algo", "grpo", "--env", "TestLetter-v0", "--steps", "2", "--out", str(out),
                 "--print-steps", "--set", "prompts_per_step=2", "group_size=2", "max_new_tokens=6",
                 "lr=1e-5", "progress=false"]) == 0
    printed = capsys.readouterr().out
    assert "step    0  reward" in printed and "step    1  reward" in printed
    lines = (out / "metrics.jsonl").read_text().splitlines()
    assert len(lines) == 2 and all("reward/correct" in json.loads(x) for x in lines)
    assert (out / "curves.png").stat().st_size > 1000
    assert (out / "final" / "config.json").exists()
    assert main(["plot", str(out), "--out", str(tmp_path / "p.png")]) == 0
    assert (tmp_path / "p.png").exists()


def test_kv_parser_both_readings():
    from solvergym.kv import coerce_value, parse_kv

    # env kwargs: JSON values (str fallback), {...} objects merged, keys verbatim
    assert parse_kv(["k=7", "l=20", "show_mapping=true", "aggregation=any", '{"n": 3}']) == {
        "k": 7, "l": 20, "show_mapping": True, "aggregation": "any", "n": 3}
    assert parse_kv(None) == {} and parse_kv(["a=b=c"]) == {"a": "b=c"}
    # config overrides: the strings as typed, keys as field names; coerce_value types them
    assert parse_kv(["lr=1", " partial-kl =code", "lora_targets=[\"q\"]"], fields=True) == {
        "lr": "1", "partial_kl": "code", "lora_targets": '["q"]'}
    assert coerce_value("1", 0.5) == 1.0 and isinstance(coerce_value("1", 0.5), float)
    assert coerce_value('["q"]', ("q", "k")) == ("q",) and coerce_value("code", None) == "code"
    assert coerce_value("true", False) is True and coerce_value("2", 1) == 2
    for items, fields, msg in ((["k"], False, "expected key=value"), (["=5"], False, "expected key=value"),
                               ([" =5"], True, "expected key=value"), (["k=1", "k=2"], False, "repeated key 'k'"),
                               (['{"k": 1}', "k=2"], False, "repeated key 'k'"), (["[1]"], False, "expected"),
                               (["{1}"], False, "is not a JSON object"), (['{"a": 1'], False, "is not a JSON object"),
                               (["partial-kl=a", "partial_kl=b"], True, "repeated key 'partial_kl'"),
                               (['{"a": ' + "[" * 100_000 + "]" * 100_000 + "}"], False, "nested too deep"),
                               (["a=" + "[" * 100_000 + "]" * 100_000], False, "'a' is nested too deep")):
        with pytest.raises(ValueError, match=msg):  # a deep value was a RecursionError out of every command
            parse_kv(items, fields=fields)
    with pytest.raises(ValueError, match="nested too deep"):
        coerce_value("[" * 100_000 + "]" * 100_000, [])


def test_bad_kwargs_exit_with_a_message():
    with pytest.raises(SystemExit, match=r"^--kwargs: expected key=value, got 'k'$"):
        main(["sample", "SolverSAT-v0", "--kwargs", "k"])
    with pytest.raises(SystemExit, match=r"^--kwargs: repeated key 'k' in 'k=2'$"):
        main(["check-trace", "SolverZebra-v0", "x.jsonl", "--kwargs", "k=1", "k=2"])


# ------------------------------------------------------------------ the parser: eval compare, dataset, train --help
def test_eval_compare_is_a_subcommand_of_eval(capsys):
    from solvergym.cli.evaluate import cmd_compare
    from solvergym.cli.main import build_parser

    with pytest.raises(SystemExit) as e:
        main(["eval", "compare", "--help"])
    assert e.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: solvergym eval compare") and "RUN_DIR" in out and "--out" in out
    with pytest.raises(SystemExit) as e:
        main(["eval", "--help"])
    assert e.value.code == 0 and "compare" in capsys.readouterr().out
    args = build_parser().parse_args(["eval", "compare", "a", "b", "--out", "d"])
    assert args.fn is cmd_compare and args.runs == ["a", "b"] and args.out == "d"
    args = build_parser().parse_args(["eval", "--env", "SolverSAT-v0", "--agent", "random", "--out", "d"])
    assert args.eval_command is None and (args.env, args.agent, args.out) == ("SolverSAT-v0", "random", "d")
    # eval's own options are still required when it runs, with argparse's message and status
    with pytest.raises(SystemExit) as e:
        main(["eval", "--agent", "random"])
    assert e.value.code == 2
    assert "the following arguments are required: --env, --out" in capsys.readouterr().err


def test_each_dataset_takes_only_its_builders_flags_with_its_defaults(capsys):
    from solvergym.agents.or_sft import build_or_sft
    from solvergym.agents.sft_data import build_sat_rl_sft
    from solvergym.cli.dataset import SPRING_BUILDERS, builder_default
    from solvergym.cli.main import build_parser
    from solvergym.envs.sat.datasets import build_sat_bench

    parse = build_parser().parse_args
    a = parse(["dataset", "sat-bench", "--out", "d"])
    assert (a.n_train, a.n_test, a.seed) == (1575, 525, 0) == (
        builder_default(build_sat_bench, "n_train"), builder_default(build_sat_bench, "n_test"), 0)
    a = parse(["dataset", "sat-tool-sft", "--out", "d"])
    assert (a.n_train, a.n_test) == (1260, 139) == (builder_default(build_sat_rl_sft, "n_train"),
                                                     builder_default(build_sat_rl_sft, "n_test"))
    for name in ("synthetic-logic", "sat-rl-sft"):  # SAT-RL's warm-up data is Synthetic-Logic
        a = parse(["dataset", name, "--out", "d"])
        assert (a.per_combo, a.test_fraction, a.families) == (10, 0.1, None)
    a = parse(["dataset", "or-sft", "--out", "d"])
    assert (a.n, a.solver, a.test_fraction) == (1000, "gurobipy", 0.1) == tuple(
        builder_default(build_or_sft, k) for k in ("n", "solver", "test_fraction"))
    assert parse(["dataset", "saturn-2.6k", "--out", "d"]).max_chance_success is None
    for name in SPRING_BUILDERS:
        assert parse(["dataset", name, "--out", "d", "--scale", "0.1"]).scale == 0.1
    # a flag of another builder is refused, not ignored
    for argv in (["sat-bench", "--out", "d", "--scale", "0.5"], ["spring-zebra", "--out", "d", "--n-train", "3"],
                 ["or-convert", "--out", "d", "--input", "x", "--seed", "1"],
                 ["saturn-2.6k", "--out", "d", "--n", "4"]):
        with pytest.raises(SystemExit) as e:
            parse(["dataset", *argv])
        assert e.value.code == 2 and "unrecognized arguments" in capsys.readouterr().err


def test_train_help_lists_every_config_field_with_the_presets(capsys):
    import dataclasses

    from solvergym.algorithms.config import GROUPS, TrainConfig
    from solvergym.algorithms.presets import PRESET_TABLE

    with pytest.raises(SystemExit) as e:
        main(["train", "--help"])
    assert e.value.code == 0
    out = capsys.readouterr().out
    flat = " ".join(out.split())  # the reference is wrapped to the terminal's width
    fields = dataclasses.fields(TrainConfig)
    assert len(fields) >= 71
    for f in fields:
        assert f.metadata["group"] in GROUPS and f.metadata["help"].strip(), f.name
        assert f"\n  {f.name} = " in out and " ".join(f.metadata["help"].split()) in flat, f.name
    for group in GROUPS:
        assert f"\n{group}: " in out
    # each preset's value and source under the field it sets; the paper's scale marked
    assert "saturn_grpo (grpo): 5e-07 — Table 8: actor learning rate 5e-7" in flat
    assert "dapo_paper (dapo), --paper-scale: 20480 — DAPO §3.4: L_max 20480" in flat
    for preset in PRESET_TABLE.values():
        for value, source in (*preset.fields.values(), *preset.scale.values()):
            assert " ".join(source.split()) in flat
    # the flags of the command itself are still there
    for flag in ("--algo", "--paper-scale", "--env", "--env-kwargs", "--model", "--config", "--steps", "--data",
                 "--eval-data", "--seed", "--out", "--set", "--print-steps"):
        assert flag in out


def _loaded_after(code: str) -> list[str]:
    """Which heavy modules a fresh interpreter has loaded after running ``code`` (stdout silenced)."""
    body = "".join(f"    {line}\n" for line in code.splitlines())
    probe = ("import contextlib, io, json, sys\nfrom solvergym.cli import main\n"
             "with contextlib.redirect_stdout(io.StringIO()):\n" + body
             + "print(json.dumps(sorted(m for m in ('torch', 'accelerate', 'transformers', 'peft', "
               "'solvergym.algorithms.trainer') if m in sys.modules)))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def test_sample_and_train_help_load_no_trainer():
    code = "main(['sample', 'SolverSAT-v0'])\ntry:\n    main(['train', '--help'])\nexcept SystemExit:\n    pass"
    assert set(_loaded_after(code)) <= {"torch"}


def test_sample_loads_no_torch():
    # the config names the KL estimators itself, so reading it needs no torch
    assert _loaded_after("main(['sample', 'SolverSAT-v0'])") == []
