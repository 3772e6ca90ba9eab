"""The settings a GPU run reads, checked where a CPU can check them: the vLLM engine's arguments per
device and process, the dtypes of policy, reference and SFT, and a real CPU step in bf16.

What needs CUDA (the engine's memory share, sleep mode, CUDA graphs, external_launcher) is checked
as the arguments handed to ``vllm.LLM``; ``benchmarks/gpu_check.py`` runs them on a GPU."""
import sys
from pathlib import Path

import pytest
import torch

sys.path.insert(0, str(Path(__file__).parent))
import toy_env  # noqa: E402

from solvergym.algorithms.config import make_config  # noqa: E402
from solvergym.algorithms.precision import mixed_precision, policy_dtype, reference_dtype  # noqa: E402
from solvergym.algorithms.vllm_engine import engine_kwargs  # noqa: E402

toy_env.register()
TINY = dict(env="TestLetter-v0", env_kwargs={"turns": 1}, prompts_per_step=2, group_size=2, max_new_tokens=6,
            max_total_tokens=256, micro_batch_size=8, lr=1e-3, progress=False, save_final=False, report_to="none")


def test_vllm_engine_arguments_on_the_cpu_are_the_cpu_defaults():
    cfg = make_config("grpo", rollout_backend="vllm", max_total_tokens=1024)
    assert engine_kwargs(cfg, cuda=False) == {"max_model_len": 1024}  # VLLMAgent: float32, eager
    assert engine_kwargs(make_config("grpo", vllm_dtype="bfloat16", vllm_enforce_eager=False), cuda=False) == \
        {"max_model_len": 2048, "dtype": "bfloat16", "enforce_eager": False}
    for bad in ({"vllm_enable_sleep_mode": True}, {"vllm_tensor_parallel_size": 2}):
        with pytest.raises(ValueError, match="need CUDA"):
            engine_kwargs(make_config("grpo", **bad), cuda=False)


def test_vllm_engine_arguments_on_gpus_colocate_one_engine_per_rank():
    cfg = make_config("grpo", rollout_backend="vllm", seed=3, vllm_enable_sleep_mode=True)
    one = engine_kwargs(cfg, cuda=True)
    assert one == {"max_model_len": 2048, "dtype": "bfloat16", "enforce_eager": False, "gpu_memory_utilization": 0.3,
                   "tensor_parallel_size": 1, "enable_sleep_mode": True, "seed": 3}
    eight = engine_kwargs(cfg, cuda=True, world=8, rank=5)
    assert eight["distributed_executor_backend"] == "external_launcher" and eight["seed"] == 8
    assert "distributed_executor_backend" not in one
    tuned = make_config("grpo", vllm_gpu_memory_utilization=0.5, vllm_dtype="float16", vllm_enforce_eager=True,
                        vllm_tensor_parallel_size=4)
    assert {k: engine_kwargs(tuned, cuda=True)[k] for k in ("gpu_memory_utilization", "dtype", "enforce_eager",
                                                            "tensor_parallel_size")} == \
        {"gpu_memory_utilization": 0.5, "dtype": "float16", "enforce_eager": True, "tensor_parallel_size": 4}
    with pytest.raises(ValueError, match="one engine per rank|each process generates its own prompts"):
        engine_kwargs(tuned, cuda=True, world=8)
    with pytest.raises(ValueError, match="vllm_gpu_memory_utilization"):
        make_config("grpo", vllm_gpu_memory_utilization=1.5)
    # TRL's names for them are the same names
    assert make_config("grpo", overrides={"vllm_gpu_memory_utilization": "0.6"}).vllm_gpu_memory_utilization == 0.6


def test_dtypes_per_device():
    assert mixed_precision("auto") == ("bf16" if torch.cuda.is_available() and torch.cuda.is_bf16_supported() else "no")
    assert mixed_precision("bf16") == "bf16" and mixed_precision("no") == "no"
    assert reference_dtype("auto", "cpu") == torch.float32 and reference_dtype("bfloat16", "cpu") == torch.bfloat16
    assert policy_dtype("float32") == torch.float32 and policy_dtype("bfloat16") == torch.bfloat16
    with pytest.raises(ValueError, match="param_dtype must be one of"):
        make_config("grpo", param_dtype="fp16")


@pytest.mark.slow
def test_a_bf16_policy_with_bf16_adamw_and_a_bf16_reference_trains_on_the_cpu(tmp_path):
    from solvergym.algorithms.trainer import Trainer

    trainer = Trainer(make_config("grpo", out_dir=str(tmp_path), steps=1, param_dtype="bfloat16", ref_dtype="bfloat16",
                                  kl_coef=0.01, **TINY))
    assert {p.dtype for p in trainer.unwrapped.parameters()} == {torch.bfloat16}
    assert {p.dtype for p in trainer.ref.parameters()} == {torch.bfloat16}
    before = {k: v.clone() for k, v in trainer.unwrapped.state_dict().items()}
    row = trainer.train()[-1]
    moments = [s["exp_avg"] for s in trainer.optimizer.state.values()]
    assert moments and {m.dtype for m in moments} == {torch.bfloat16}  # AdamW's state in bf16 too
    assert row["time/old_logprobs_s"] > 0  # the sampler's bf16 log-probs are not taken as pi_old
    after = trainer.unwrapped.state_dict()
    assert any(not torch.equal(before[k], after[k]) for k in before)


SFT_SCRIPT = r"""
import json, sys
from solvergym.algorithms.sft import SFTConfig, train_sft
convs = [[{"role": "user", "content": f"Say {w}."}, {"role": "assistant", "content": f"{w} {w} {w}."}]
         for w in ("tree", "river", "stone", "cloud")]
cfg = SFTConfig(out_dir=sys.argv[1], epochs=1, batch_size=4, micro_batch_size=4, progress=False,
                mixed_precision=sys.argv[2])
print(json.dumps(train_sft(cfg, convs)[0]["loss"]))
"""


@pytest.mark.slow
def test_sft_runs_under_bf16_autocast_when_asked(tmp_path):
    import json
    import subprocess

    from solvergym.algorithms.sft import SFTConfig, train_sft

    # bf16 in a process of its own (Accelerate's state is one per process, fp32 in this one)
    out = subprocess.run([sys.executable, "-c", SFT_SCRIPT, str(tmp_path / "bf16"), "bf16"], capture_output=True,
                         text=True, check=True, timeout=600)
    losses = {"bf16": json.loads(out.stdout.strip().splitlines()[-1])}
    convs = [[{"role": "user", "content": f"Say {w}."}, {"role": "assistant", "content": f"{w} {w} {w}."}]
             for w in ("tree", "river", "stone", "cloud")]
    cfg = SFTConfig(out_dir=str(tmp_path / "no"), epochs=1, batch_size=4, micro_batch_size=4, progress=False,
                    mixed_precision="no")
    losses["no"] = train_sft(cfg, convs)[0]["loss"]
    # the same data and weights: bf16 matmuls round the loss, fp32 ones do not
    assert losses["no"] != losses["bf16"] and losses["bf16"] == pytest.approx(losses["no"], rel=0.05)


def test_cpu_speedups_are_one_switch_off_on_gpus_and_under_sharding():
    from solvergym.agents.models import load_model
    from solvergym.algorithms import cpu_speedups

    cfg = make_config("grpo")
    model = load_model("default")[0]
    off = cpu_speedups.apply(model, None, cfg, torch.device("cuda"))
    assert off == [f"{n}: off (not on a GPU)" for n in ("gqa_attention", "lean_activations", "direct_tied_grads",
                                                         "retain_freed_memory")]
    assert model.config._attn_implementation == "sdpa"  # untouched
    assert all("off (not under sharding" in n for n in cpu_speedups.apply(model, None, cfg, "cpu", sharded=True))
    on = cpu_speedups.apply(model, None, cfg, torch.device("cpu"))
    assert on[0] == "gqa_attention: on" and on[1].startswith("lean_activations: on for ") and on[2] == \
        "direct_tied_grads: on"
    assert model.config._attn_implementation != "sdpa"
    none = make_config("grpo", gqa_attention=False, lean_activations=False, direct_tied_grads=False,
                       retain_freed_memory=False)
    assert cpu_speedups.apply(load_model("default")[0], None, none, "cpu") == []


SHARDED_SCRIPT = r"""
from accelerate import Accelerator
from accelerate.utils import DistributedType
from solvergym.algorithms.config import make_config
from solvergym.algorithms.trainer import Trainer
acc = Accelerator(cpu=True)
acc.state.distributed_type = DistributedType.FSDP  # as `accelerate launch` with an FSDP config sets it on GPUs
try:
    Trainer(make_config("grpo"), accelerator=acc)
except NotImplementedError as e:
    print("refused:", e)
"""


def test_a_sharded_launch_is_refused_before_the_model_loads():
    import subprocess

    out = subprocess.run([sys.executable, "-c", SHARDED_SCRIPT], capture_output=True, text=True, timeout=600)
    assert "refused: the trainer does not shard yet: Accelerate is configured for FSDP" in out.stdout, out.stderr[-2000:]
