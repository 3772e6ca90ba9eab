"""benchmarks/gpu_check.py in its tiny CPU mode: every preset builds a trainer and takes a real step
on SolverSAT-v0, the JSON has a row per preset with positive rates, and what needs CUDA is skipped
by name."""
import json

import pytest

from solvergym.algorithms.presets import PRESET_TABLE
from solvergym.benchmarks import gpu_check


@pytest.mark.slow
def test_gpu_check_tiny_runs_every_preset_on_the_cpu(tmp_path, capsys):
    presets = list(PRESET_TABLE)
    assert gpu_check.main(["--tiny", "--presets", *presets, "--out", str(tmp_path),
                           "--model", str(tmp_path / "no-such-model")]) == 0
    result = json.loads((tmp_path / "gpu_check.json").read_text())
    rows = result["rows"]
    assert [r["preset"] for r in rows] == presets
    for r in rows:
        assert r["steps_per_s"] > 0 and r["tokens_per_s"] > 0 and r["peak_gib"] > 0.1, r
        assert r["backend"] == "hf" and r["precision"] == "no" and r["steps"] == 1
    assert any("vLLM" in s for s in result["skipped"]) and any("no-such-model" in s for s in result["skipped"])
    out = capsys.readouterr().out
    assert "steps/s" in out and "skipped: vLLM rollouts" in out
