"""Supervised warm-up on chat transcripts (SAT-RL §3.3): loss on assistant tokens only.

``J_SFT(theta) = E_(x,y) [ sum_t log pi_theta(y_t | x, y_<t) ]`` over the assistant messages of
each conversation (e.g. oracle traces of ``SolverTool-v0``). Data is chat JSONL: one
``{"messages": [{"role": ..., "content": ...}, ...]}`` per line (a bare list works too).

The assistant mask comes from the chat template itself: each assistant message's characters
(its content and the end-of-turn token the template writes after it, so the model learns to
stop) are found by rendering the conversation prefix by prefix, then mapped to tokens with the
tokenizer's offsets. The loss is the mean over every assistant token of an optimizer step,
across processes and accumulation micro-batches (the same global token-mean as the RL trainer).
"""
from __future__ import annotations

import contextlib
import json
import math
import random
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import torch

from ..agents.models import load_model
from .precision import mixed_precision
from .rollout import ChatBoundaries

__all__ = ["SFTConfig", "assistant_token_mask", "load_chat_jsonl", "train_sft"]


@dataclass
class SFTConfig:
    data: str = ""
    model: str = "default"
    out_dir: str = "runs/sft"
    epochs: int = 1  # SAT-RL Table 8: 1 epoch
    lr: float = 1e-5  # SAT-RL Table 8
    batch_size: int = 8  # conversations per optimizer step, over all processes (paper: 64)
    micro_batch_size: int = 4
    max_length: int = 2048
    weight_decay: float = 0.0
    max_grad_norm: float = 1.0
    seed: int = 0
    progress: bool = True
    #: as TrainConfig.mixed_precision: "auto" is bf16 autocast on a GPU that supports it (fp32
    #: master weights), fp32 on the CPU; "no" or "bf16" as Accelerate reads them
    mixed_precision: str = "auto"


def load_chat_jsonl(path: str | Path) -> list[list[dict[str, str]]]:
    out = []
    for lineno, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        rec = json.loads(line)
        msgs = rec["messages"] if isinstance(rec, dict) else rec
        if not isinstance(msgs, list) or not all(isinstance(m, dict) and {"role", "content"} <= set(m) for m in msgs):
            raise ValueError(f"{path}:{lineno}: expected a list of {{role, content}} messages")
        out.append(msgs)
    return out


def assistant_token_mask(tokenizer, messages: list[dict[str, str]], max_length: int | None = None):
    """``(input_ids, mask)`` for a conversation; ``mask`` is 1 on the assistant's tokens."""
    bounds = ChatBoundaries(tokenizer)
    full = tokenizer.apply_chat_template(messages, tokenize=False)
    spans = []
    for i, m in enumerate(messages):
        if m["role"] != "assistant":
            continue
        before = tokenizer.apply_chat_template(messages[:i], tokenize=False, add_generation_prompt=True)
        if not full.startswith(before) or not full[len(before):].startswith(m["content"]):
            raise ValueError("the chat template does not render this conversation prefix by prefix")
        start = len(before)
        end = start + len(m["content"])
        if bounds.eos_text and bounds.close.startswith(bounds.eos_text) and full.startswith(bounds.eos_text, end):
            end += len(bounds.eos_text)
        spans.append((start, end))
    enc = tokenizer(full, add_special_tokens=False, return_offsets_mapping=True)
    ids, offsets = enc["input_ids"], enc["offset_mapping"]
    mask = [int(any(s < e2 and s2 < e for s2, e2 in spans)) for s, e in offsets]
    if max_length is not None:
        ids, mask = ids[:max_length], mask[:max_length]
    return ids, mask


def train_sft(cfg: SFTConfig, conversations: list[list[dict[str, str]]] | None = None, *,
              model: Any = None, tokenizer: Any = None, accelerator: Any = None) -> list[dict[str, Any]]:
    """Fine-tune ``cfg.model`` on ``cfg.data`` (or ``conversations``); save to ``out_dir/final``.

    With ``model`` (its ``tokenizer``, and the ``accelerator`` that prepared it: a
    :class:`~solvergym.algorithms.trainer.Trainer`'s ``model``, ``tokenizer`` and ``acc``) the
    warm-up trains that model in place, inside the RL run that follows, and saves no model: no
    second copy of the weights is written and read back (``solvergym demo`` does this). Its AdamW
    is the warm-up's own and is not registered with the accelerator, so a later checkpoint of the
    run holds the run's optimizer only.
    """
    from accelerate import Accelerator
    from accelerate.utils import set_seed
    from tqdm import tqdm

    given = model is not None
    if given and (tokenizer is None or accelerator is None):
        raise ValueError("train_sft(model=...) needs the model's tokenizer and the accelerator that prepared it")
    acc = accelerator or Accelerator(cpu=not torch.cuda.is_available(), mixed_precision=mixed_precision(cfg.mixed_precision))
    set_seed(cfg.seed)
    if given:
        tok = tokenizer
    else:
        model, tok = load_model(cfg.model)
    convs = conversations if conversations is not None else load_chat_jsonl(cfg.data)
    examples = [assistant_token_mask(tok, c, cfg.max_length) for c in convs]
    examples = [e for e in examples if sum(e[1])]
    if not examples:
        raise ValueError("no conversation has assistant tokens")
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=cfg.lr, weight_decay=cfg.weight_decay, foreach=True)
    if not given:
        model, opt = acc.prepare(model, opt)
    world, rank = acc.num_processes, acc.process_index
    local = max(1, cfg.batch_size // world)
    rng = random.Random(cfg.seed)
    out = Path(cfg.out_dir)
    history: list[dict[str, Any]] = []
    steps = math.ceil(len(examples) / (local * world)) * cfg.epochs
    bar = tqdm(total=steps, desc="sft", disable=not (cfg.progress and acc.is_main_process), unit="step")
    step = 0
    for _ in range(cfg.epochs):
        order = list(range(len(examples)))
        rng.shuffle(order)
        for s in range(0, len(order), local * world):
            mine = order[s:s + local * world][rank::world]
            t0 = time.perf_counter()
            n_tok = torch.tensor([float(sum(sum(examples[i][1]) for i in mine))], device=acc.device)
            total_tokens = float(acc.reduce(n_tok, reduction="sum").item()) if world > 1 else float(n_tok.item())
            loss_sum = 0.0
            micro = [mine[k:k + cfg.micro_batch_size] for k in range(0, len(mine), cfg.micro_batch_size)] or [[]]
            model.train()
            for j, mb in enumerate(micro):
                sync = contextlib.nullcontext() if j == len(micro) - 1 else acc.no_sync(model)
                with sync:
                    if not mb:  # keep DDP in step even with nothing local
                        loss = sum(p.sum() * 0 for p in model.parameters() if p.requires_grad)
                    else:
                        width = max(len(examples[i][0]) for i in mb)
                        ids = torch.full((len(mb), width), tok.pad_token_id, dtype=torch.long)
                        mask = torch.zeros((len(mb), width), dtype=torch.float32)
                        attn = torch.zeros((len(mb), width), dtype=torch.long)
                        for r, i in enumerate(mb):
                            L = len(examples[i][0])
                            ids[r, :L] = torch.tensor(examples[i][0])
                            mask[r, :L] = torch.tensor(examples[i][1], dtype=torch.float32)
                            attn[r, :L] = 1
                        ids, mask, attn = ids.to(acc.device), mask.to(acc.device), attn.to(acc.device)
                        logits = model(input_ids=ids, attention_mask=attn).logits[:, :-1].float()
                        nll = torch.nn.functional.cross_entropy(
                            logits.reshape(-1, logits.shape[-1]), ids[:, 1:].reshape(-1), reduction="none"
                        ).view(len(mb), -1)
                        loss = (nll * mask[:, 1:]).sum() / max(1.0, total_tokens)
                        loss_sum += loss.item()
                    acc.backward(loss * world)
            if cfg.max_grad_norm:
                acc.clip_grad_norm_(params, cfg.max_grad_norm)
            opt.step()
            opt.zero_grad(set_to_none=True)
            loss_all = acc.reduce(torch.tensor([loss_sum], device=acc.device), reduction="sum").item() if world > 1 else loss_sum
            rec = {"step": step, "loss": loss_all, "tokens": total_tokens, "step_s": time.perf_counter() - t0}
            history.append(rec)
            if acc.is_main_process:
                out.mkdir(parents=True, exist_ok=True)
                with open(out / "sft_metrics.jsonl", "a") as f:
                    f.write(json.dumps(rec) + "\n")
            bar.update(1)
            bar.set_postfix(loss=f"{loss_all:.3f}")
            step += 1
    bar.close()
    if given:
        opt.zero_grad(set_to_none=True)
        return history
    acc.wait_for_everyone()
    if acc.is_main_process:
        acc.unwrap_model(model).save_pretrained(str(out / "final"))
        tok.save_pretrained(str(out / "final"))
        (out / "sft_config.json").write_text(json.dumps(asdict(cfg), indent=2) + "\n")
    acc.wait_for_everyone()
    return history
