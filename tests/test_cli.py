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
