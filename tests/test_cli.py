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
                               (["partial-kl=a", "partial_kl=b"], True, "repeated key 'partial_kl'")):
        with pytest.raises(ValueError, match=msg):
            parse_kv(items, fields=fields)


def test_bad_kwargs_exit_with_a_message():
    with pytest.raises(SystemExit, match=r"^--kwargs: expected key=value, got 'k'$"):
        main(["sample", "SolverSAT-v0", "--kwargs", "k"])
    with pytest.raises(SystemExit, match=r"^--kwargs: repeated key 'k' in 'k=2'$"):
        main(["check-trace", "SolverZebra-v0", "x.jsonl", "--kwargs", "k=1", "k=2"])
