"""The vLLM engine a training run generates with (``rollout_backend="vllm"``), from its config.

Colocated generation: every training process builds its own engine in its own process, on its own
GPU, beside the policy (TRL's ``vllm_mode="colocate"``). Under ``accelerate launch`` with several
processes the engines are started with vLLM's ``external_launcher`` (each rank is already a
process of the launch; vLLM joins its torch.distributed group instead of spawning workers), one
engine per rank; ``vllm_tensor_parallel_size`` > 1 is for one training process that sees several
GPUs (ranks pooling their prompts into a shared tensor-parallel engine is not built). The memory share
is TRL's colocate default, 0.3 of the GPU: vLLM's own default of 0.9 leaves the policy, its
gradients and AdamW no room (TRL's users hit OOM on 8 x H100 until they lowered it to 0.3).
``vllm_enable_sleep_mode`` frees the engine's weights and KV cache while the policy trains
(vLLM's sleep level 1: weights offloaded to the host, cache dropped), and wakes it before the
weights are synced for the next rollout.

On the CPU (the tests, ``make test-vllm``) the engine keeps :class:`~solvergym.agents.vllm.VLLMAgent`'s
CPU defaults: float32, eager, no GPU memory share, no sleep mode.
"""
from __future__ import annotations

from typing import Any

__all__ = ["engine_kwargs"]


def engine_kwargs(cfg: Any, *, cuda: bool, world: int = 1, rank: int = 0) -> dict[str, Any]:
    """``vllm.LLM`` keyword arguments for a run of ``cfg`` on this process (``cuda``: on a GPU)."""
    kwargs: dict[str, Any] = {"max_model_len": cfg.max_total_tokens}
    if cfg.vllm_dtype != "auto":
        kwargs["dtype"] = cfg.vllm_dtype
    if cfg.vllm_enforce_eager is not None:
        kwargs["enforce_eager"] = bool(cfg.vllm_enforce_eager)
    if not cuda:
        if cfg.vllm_enable_sleep_mode or cfg.vllm_tensor_parallel_size != 1:
            raise ValueError("vllm_enable_sleep_mode and vllm_tensor_parallel_size > 1 need CUDA GPUs; on the "
                             "CPU the engine runs as VLLMAgent's CPU defaults say")
        return kwargs  # VLLMAgent's CPU defaults fill in dtype and enforce_eager
    tp = cfg.vllm_tensor_parallel_size
    if world > 1 and tp != 1:  # ranks of a group would have to pool their prompts: not built yet
        raise ValueError(f"vllm_tensor_parallel_size={tp} with {world} training processes: each process "
                         "generates its own prompts with its own engine (tensor parallel size 1); a "
                         "tensor-parallel engine goes with one training process that sees several GPUs")
    kwargs.setdefault("dtype", "bfloat16")  # generation in bf16 as TRL and verl do; the weights are cast on sync
    kwargs.setdefault("enforce_eager", False)  # CUDA graphs
    kwargs.update(gpu_memory_utilization=cfg.vllm_gpu_memory_utilization, tensor_parallel_size=tp,
                  enable_sleep_mode=bool(cfg.vllm_enable_sleep_mode),
                  seed=cfg.seed + rank)  # the trainer reseeds every rollout; this is the engine's own start
    if world > 1:
        kwargs["distributed_executor_backend"] = "external_launcher"
    return kwargs
