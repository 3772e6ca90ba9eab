"""``HFAgent``: a transformers causal LM as an agent and as a trainable policy's sampler.

- ``act(observations)`` answers each observation as a one-turn chat (the chat template is applied
  here), for evaluation loops.
- ``generate(prompts, n, sampling)`` continues token-id prompts (what the rollout built,
  token-in/token-out) and returns, per completion, the generated token ids, their log-probs
  under the sampling distribution (``logits / temperature``), the decoded text and why it
  stopped. It stops at EOS, at a stop string (``</tool_call>``, ``</answer>``), or once a
  complete ```` ```answer ...``` ```` / ```` ```idk``` ```` block has been written (SAT-RL §3.4).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

import torch

from ..envs.parsing import final_answer_block
from .models import DEFAULT_MODEL, load_model

__all__ = ["SamplingConfig", "Completion", "HFAgent", "DEFAULT_STOP", "StopChecker"]

DEFAULT_STOP: tuple[str, ...] = ("</tool_call>", "</answer>")


@dataclass
class SamplingConfig:
    max_new_tokens: int = 256
    temperature: float = 1.0
    top_p: float = 1.0
    top_k: int = 0
    greedy: bool = False
    stop: tuple[str, ...] = DEFAULT_STOP
    stop_at_answer_block: bool = True
    seed: int | None = None


@dataclass
class Completion:
    token_ids: list[int]
    logprobs: list[float]
    text: str
    finish_reason: str  # "eos" | "stop" | "length"
    extra: dict[str, Any] = field(default_factory=dict)


class StopChecker:
    """Per-row stop detection on generated text, cheap per token (only the tail is checked; the
    answer-block parse runs only when a fence was just written)."""

    def __init__(self, stops: Sequence[str], answer_block: bool):
        self.stops = tuple(s for s in stops if s)
        self.answer_block = answer_block
        self.tail = max((len(s) for s in self.stops), default=0) + 8

    def done(self, text: str, new_piece: str) -> bool:
        tail = text[-(self.tail + len(new_piece)):]
        if any(s in tail for s in self.stops):
            return True
        if self.answer_block and "`" in new_piece and "```" in text:
            return final_answer_block(text) is not None
        return False


class _Criteria:
    """A transformers StoppingCriteria marking rows done at a stop string (records the step)."""

    def __init__(self, tokenizer, prompt_len: int, checker: StopChecker, batch: int):
        self.tok, self.prompt_len, self.checker = tokenizer, prompt_len, checker
        self.texts = [""] * batch
        self.stopped_at = [None] * batch  # number of generated tokens when the stop string completed

    def __call__(self, input_ids: torch.Tensor, scores, **kwargs) -> torch.Tensor:
        step = input_ids.shape[1] - self.prompt_len
        done = torch.zeros(input_ids.shape[0], dtype=torch.bool, device=input_ids.device)
        for i in range(input_ids.shape[0]):
            if self.stopped_at[i] is not None:
                done[i] = True
                continue
            piece = self.tok.decode(input_ids[i, -1:], skip_special_tokens=False)
            self.texts[i] += piece
            if self.checker.done(self.texts[i], piece):
                self.stopped_at[i] = step
                done[i] = True
        return done


class HFAgent:
    """A transformers model (``"default"``: the embedded SmolLM2-135M-Instruct) as an agent."""

    name = "hf"

    def __init__(
        self,
        model: Any = DEFAULT_MODEL,
        tokenizer: Any = None,
        *,
        sampling: SamplingConfig | None = None,
        system_prompt: str | None = None,
        device: Any = None,
        batch_size: int = 16,
    ):
        if isinstance(model, (str, bytes)) or model is None or hasattr(model, "__fspath__"):
            model, loaded_tok = load_model(model, device=device)
            tokenizer = tokenizer or loaded_tok
        if tokenizer is None:
            raise ValueError("pass the tokenizer with a model object")
        self.model, self.tokenizer = model, tokenizer
        self.sampling = sampling or SamplingConfig()
        self.system_prompt = system_prompt
        self.batch_size = batch_size

    # ------------------------------------------------------------------ chat helpers
    def chat_ids(self, messages: list[dict[str, str]]) -> list[int]:
        """The token ids of ``messages`` with the generation prompt (the chat template applied)."""
        if self.system_prompt and (not messages or messages[0]["role"] != "system"):
            messages = [{"role": "system", "content": self.system_prompt}, *messages]
        return list(self.tokenizer.apply_chat_template(
            messages, add_generation_prompt=True, tokenize=True, return_dict=False))

    def act(self, observations: Sequence[str], envs: Sequence[Any] | None = None) -> list[str]:
        prompts = [self.chat_ids([{"role": "user", "content": o}]) for o in observations]
        return [c.text for c in self.generate(prompts)]

    # ------------------------------------------------------------------ generation
    @torch.no_grad()
    def generate(
        self, prompts: Sequence[Sequence[int]], n: int = 1, sampling: SamplingConfig | None = None
    ) -> list[Completion]:
        """``n`` completions per prompt (prompt-major order), in batches of ``batch_size`` rows."""
        sp = sampling or self.sampling
        rows = [list(p) for p in prompts for _ in range(n)]
        if sp.seed is not None:
            torch.manual_seed(sp.seed)
        out: list[Completion] = []
        for start in range(0, len(rows), self.batch_size):
            out += self._generate_batch(rows[start:start + self.batch_size], sp)
        return out

    def _generate_batch(self, rows: list[list[int]], sp: SamplingConfig) -> list[Completion]:
        tok, model = self.tokenizer, self.model
        device = next(model.parameters()).device
        width = max(len(r) for r in rows)
        pad = tok.pad_token_id
        ids = torch.full((len(rows), width), pad, dtype=torch.long)
        attn = torch.zeros((len(rows), width), dtype=torch.long)
        for i, r in enumerate(rows):  # left padding: generation continues at the right edge
            ids[i, width - len(r):] = torch.tensor(r)
            attn[i, width - len(r):] = 1
        criteria = _Criteria(tok, width, StopChecker(sp.stop, sp.stop_at_answer_block), len(rows))
        kwargs: dict[str, Any] = dict(
            max_new_tokens=sp.max_new_tokens, do_sample=not sp.greedy, pad_token_id=pad,
            eos_token_id=tok.eos_token_id, stopping_criteria=[criteria], return_dict_in_generate=True,
            output_logits=True,
        )
        if not sp.greedy:
            kwargs.update(temperature=sp.temperature, top_p=sp.top_p, top_k=sp.top_k)
        else:
            kwargs.update(temperature=None, top_p=None, top_k=None)
        gen = model.generate(input_ids=ids.to(device), attention_mask=attn.to(device), **kwargs)
        new = gen.sequences[:, width:].cpu()
        logits = torch.stack(gen.logits, dim=1).float().cpu()  # (B, steps, V), before processors
        temp = 1.0 if sp.greedy else sp.temperature
        logp_all = torch.log_softmax(logits / temp, dim=-1)
        out = []
        for i in range(len(rows)):
            seq = new[i].tolist()
            length, reason = len(seq), "length"
            if tok.eos_token_id in seq:
                length, reason = seq.index(tok.eos_token_id) + 1, "eos"
            if criteria.stopped_at[i] is not None and criteria.stopped_at[i] < length:
                length, reason = criteria.stopped_at[i], "stop"
            seq = seq[:length]
            lp = logp_all[i, torch.arange(length), torch.tensor(seq, dtype=torch.long)].tolist() if length else []
            text = tok.decode(seq, skip_special_tokens=True)
            out.append(Completion(seq, lp, text, reason))
        return out
