"""examples/configs/ (each paper's preset at its GPU scale) and examples/accelerate/ (launch
configs) stay what they say: the presets' values and scale, an env that exists, and configs that
Accelerate's own reader takes with the distribution they are named for."""
from pathlib import Path

import gymnasium as gym
import pytest
import yaml

import solvergym  # noqa: F401  (registers the env ids)
from solvergym.algorithms.config import make_config
from solvergym.algorithms.presets import PAPER_SCALE, PRESETS

ROOT = Path(__file__).resolve().parents[1]
CONFIGS = sorted((ROOT / "examples" / "configs").glob("*.yaml"))
LAUNCH = sorted((ROOT / "examples" / "accelerate").glob("*.yaml"))


def test_every_paper_preset_has_its_gpu_config():
    named = {p.stem for p in CONFIGS}
    assert named == {"saturn_grpo", "spring_grpo", "satrl_dapo", "dapo_paper", "sirl_reinforce_pp"}
    assert named <= set(PRESETS)


@pytest.mark.parametrize("path", CONFIGS, ids=lambda p: p.stem)
def test_a_gpu_config_is_its_preset_at_the_paper_scale(path):
    raw = yaml.safe_load(path.read_text())
    cfg = make_config(file=path)
    reference = make_config(raw["algo"], paper_scale=True)
    assert cfg.algo == path.stem
    for name in {*PRESETS[cfg.algo], *PAPER_SCALE[cfg.algo]}:
        assert getattr(cfg, name) == getattr(reference, name), name
    assert cfg.env in gym.registry and cfg.rollout_backend == "vllm" and cfg.vllm_gpu_memory_utilization == 0.3
    assert f"--config examples/configs/{path.name}" in path.read_text()  # its own launch line


@pytest.mark.parametrize("path", LAUNCH, ids=lambda p: p.stem)
def test_an_accelerate_config_reads_as_the_distribution_it_is_named_for(path):
    from accelerate.commands.config.config_args import load_config_from_file

    c = load_config_from_file(str(path))
    expected = {"1gpu": ("NO", 1, 1), "8gpu_ddp": ("MULTI_GPU", 8, 1), "2nodes_ddp": ("MULTI_GPU", 16, 2)}[path.stem]
    assert (str(c.distributed_type).split(".")[-1], c.num_processes, c.num_machines) == expected
    assert c.mixed_precision == "bf16" and not c.use_cpu
