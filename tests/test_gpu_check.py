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


@pytest.mark.slow
def test_gpu_check_builds_a_random_model_of_a_shape_and_counts_its_flops(tmp_path):
    assert gpu_check.main(["--tiny", "--presets", "saturn_grpo", "--shapes", "tiny", "--out", str(tmp_path)]) == 0
    rows = json.loads((tmp_path / "gpu_check.json").read_text())["rows"]
    assert [r["model"] for r in rows] == ["default", "tiny"]
    tiny = rows[1]
    # 49,152 x 64 embedding (tied) + 2 layers of 64-wide attention and a 128-wide MLP
    assert 3_000_000 < tiny["parameters"] < 3_300_000 and tiny["steps_per_s"] > 0
    assert tiny["mfu"] is None  # no chip peak on the CPU
    row = {"episodes": 4, "prompt_length": 10.0, "response_length": 5.0, "policy_tokens": 20.0,
           "time/old_logprobs_s": 0.1, "time/ref_s": 0.0}
    # 2P per generated token + (6 + 2) P per token of the batch, over 1 s and a peak of 1e12
    assert gpu_check._mfu(row, 1_000_000, 1.0, 1e12) == pytest.approx(1e6 * (2 * 20 + 8 * 60) / 1e12)
