"""``HFAgent``: a transformers causal LM as an agent and as a trainable policy's sampler.

- ``act(observations)`` answers each observation as a one-turn chat (the chat template is applied
  here), for evaluation loops.
- ``generate(prompts, n, sampling)`` continues token-id prompts (what the rollout built,
  token-in/token-out) and returns, per completion, the generated token ids, their log-probs
  under the sampling distribution (``logits / temperature``), the decoded text and why it
  stopped. Its decode loop prefills each distinct prompt once and shares the KV cache among the
  rows that continue it, so a GRPO group of G samples pays for one prompt, not G. Sampling uses
  its own ``torch.Generator`` (``SamplingConfig.seed``, else drawn from torch's global RNG). It stops at EOS, at a stop string (``</tool_call>``, ``</answer>``), or once a
  complete ```` ```answer ...``` ```` / ```` ```idk``` ```` block has been written (SAT-RL §3.4).
"""
from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any, Sequence

import torch

from ..envs.parsing import final_answer_block
from .base import ChatPolicy
from .decode_linears import decode_linears
from .models import DEFAULT_MODEL, cache_kwarg, load_model

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
    ignore_eos: bool = False  # keep generating after EOS (fixed-length workloads for benchmarks)
    #: > 1 penalises every token already in the row (prompt and completion): its logit is divided
    #: by the penalty when positive, multiplied when negative (CTRL, as transformers and vLLM do;
    #: SIRL Table 7: 1.02). The completion's log-probs are then the penalised distribution's.
    repetition_penalty: float = 1.0
    seed: int | None = None


@dataclass
class Completion:
    token_ids: list[int]
    logprobs: list[float]
    text: str
    finish_reason: str  # "eos" | "stop" | "length"
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def clipped(self) -> bool:
        """Whether the token limit cut this completion: it ended at ``max_new_tokens`` (or the
        engine's room under ``max_model_len``) without EOS, a stop string or an answer block,
        TRL's "clipped" completion. The per-turn flag eval records and ``clipped_ratio`` count."""
        return self.finish_reason == "length"


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


class HFAgent(ChatPolicy):
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
        self._pieces: dict[int, str] = {}  # token id -> its text, for the stop checks
        self._cache_kw = cache_kwarg(model)
        self._gen: torch.Generator | None = None  # set by reseed(): one stream over all calls

    def reseed(self, seed: int) -> None:
        """Draw every later sample with the agent's own ``sampling`` from one stream seeded with
        ``seed`` (and set ``sampling.seed``): the samples then depend on the seed and the calls alone,
        not on torch's global RNG. A call given another ``SamplingConfig`` keeps its own seed."""
        self.sampling.seed = int(seed)
        self._gen = torch.Generator(device="cpu")
        self._gen.manual_seed(int(seed))

    # ------------------------------------------------------------------ generation
    @torch.no_grad()
    def generate(
        self, prompts: Sequence[Sequence[int]], n: int = 1, sampling: SamplingConfig | None = None
    ) -> list[Completion]:
        """``n`` completions per prompt (prompt-major order), in batches of ``batch_size`` rows."""
        sp = sampling or self.sampling
        rows = [list(p) for p in prompts for _ in range(n)]
        was_training = self.model.training
        self.model.eval()
        out: list[Completion] = []
        try:
            with decode_linears(self.model):  # a decode step's few rows: weight-first on the CPU
                for start in range(0, len(rows), self.batch_size):
                    out += self._generate_batch(rows[start:start + self.batch_size], sp)
        finally:
            self.model.train(was_training)
        return out

    def _piece(self, token_id: int) -> str:
        piece = self._pieces.get(token_id)
        if piece is None:
            piece = self._pieces[token_id] = self.tokenizer.decode([token_id], skip_special_tokens=False)
        return piece

    def _forward(self, ids, attn, pos, cache):
        kwargs = {self._cache_kw: cache} if cache is not None else {}
        out = self.model(input_ids=ids, attention_mask=attn, position_ids=pos, use_cache=True, logits_to_keep=1,
                         **kwargs)
        return out.logits[:, -1].float(), getattr(out, self._cache_kw)

    def _generate_batch(self, rows: list[list[int]], sp: SamplingConfig) -> list[Completion]:
        """An explicit decode loop: each distinct prompt is prefilled once and its KV cache shared by
        every row that continues it (the G samples of a group), finished rows leave the batch."""
        tok = self.tokenizer
        device = next(self.model.parameters()).device
        uniq: dict[tuple[int, ...], int] = {}
        owner = [uniq.setdefault(tuple(r), len(uniq)) for r in rows]
        prompts = list(uniq)
        width = max(len(p) for p in prompts)
        ids = torch.full((len(prompts), width), tok.pad_token_id, dtype=torch.long)
        attn = torch.zeros((len(prompts), width), dtype=torch.long)
        for i, p in enumerate(prompts):  # left padding: every row continues at the right edge
            ids[i, width - len(p):] = torch.tensor(p)
            attn[i, width - len(p):] = 1
        pos = (attn.cumsum(-1) - 1).clamp(min=0)
        logits, cache = self._forward(ids.to(device), attn.to(device), pos.to(device), None)
        sel = torch.tensor(owner)
        cache.batch_select_indices(sel.to(device))
        reserve_cache(cache, width + sp.max_new_tokens)
        logits, attn, next_pos = logits[sel.to(device)], attn[sel], pos[sel, -1] + 1
        gen = self._gen if sp is self.sampling else None  # reseed()'s stream: the agent's own sampling
        if gen is None:  # else sp.seed for this call, or a draw from torch's global RNG
            gen = torch.Generator(device="cpu")
            gen.manual_seed(sp.seed if sp.seed is not None else int(torch.randint(0, 2**62, (1,)).item()))
        temp = 1.0 if sp.greedy else sp.temperature
        penalty = float(sp.repetition_penalty)
        if penalty <= 0:
            raise ValueError(f"repetition_penalty must be > 0, got {penalty}")
        seen = None
        if penalty != 1.0:  # the tokens of each row so far, prompt included
            seen = torch.zeros((len(rows), logits.shape[-1]), dtype=torch.bool)
            for r, row in enumerate(rows):
                seen[r, torch.tensor(row, dtype=torch.long)] = True
        checker = StopChecker(sp.stop, sp.stop_at_answer_block)
        n = len(rows)
        out_ids: list[list[int]] = [[] for _ in range(n)]
        out_lp: list[list[float]] = [[] for _ in range(n)]
        texts = [""] * n
        reasons = ["length"] * n
        active = torch.arange(n)  # rows still generating, in cache order
        for _ in range(sp.max_new_tokens):
            logits = logits.cpu()
            if seen is not None:
                logits = torch.where(seen, torch.where(logits > 0, logits / penalty, logits * penalty), logits)
            logp = torch.log_softmax(logits / temp, dim=-1)
            if sp.greedy:
                nxt = logp.argmax(-1)
            else:
                nxt = sample(_filter(logp, sp.top_p, sp.top_k), gen)
            picked = logp.gather(1, nxt[:, None]).squeeze(1)
            if seen is not None:
                seen[torch.arange(len(nxt)), nxt] = True
            keep = []
            for j, row in enumerate(active.tolist()):
                t = int(nxt[j])
                out_ids[row].append(t)
                out_lp[row].append(float(picked[j]))
                if t == tok.eos_token_id and not sp.ignore_eos:
                    reasons[row] = "eos"
                    continue
                piece = self._piece(t)
                texts[row] += piece
                if checker.done(texts[row], piece):
                    reasons[row] = "stop"
                    continue
                keep.append(j)
            if not keep:
                break
            if len(keep) < len(active):
                k = torch.tensor(keep)
                cache.batch_select_indices(k.to(device))
                active, nxt, attn, next_pos = active[k], nxt[k], attn[k], next_pos[k]
                if seen is not None:
                    seen = seen[k]
            attn = torch.cat([attn, torch.ones((len(active), 1), dtype=attn.dtype)], dim=1)
            logits, cache = self._forward(nxt[:, None].to(device), attn.to(device), next_pos[:, None].to(device), cache)
            next_pos = next_pos + 1
        return [Completion(out_ids[i], out_lp[i], tok.decode(out_ids[i], skip_special_tokens=True), reasons[i])
                for i in range(n)]


def sample(logp: torch.Tensor, gen: torch.Generator) -> torch.Tensor:
    """One token per row from ``softmax(logp)`` by inverting its CDF with one uniform per row.

    The same law as ``torch.multinomial(p, 1)``, which draws an exponential per vocabulary entry
    (49k per row and token: ~5% of a decode step of the 135M model on the CPU). Tokens of
    probability 0 (filtered to -inf) are never drawn: the first index whose CDF exceeds ``u``.
    """
    cdf = (logp - logp.max(-1, keepdim=True).values).exp().cumsum(-1)
    u = torch.rand((logp.shape[0], 1), generator=gen, dtype=cdf.dtype) * cdf[:, -1:]
    return torch.searchsorted(cdf, u, right=True).squeeze(1).clamp(max=logp.shape[-1] - 1)


class _ReservedLayer:
    """A key/value cache layer that writes new tokens into a buffer reserved ahead (growing by
    doubling if needed) instead of concatenating: Transformers' dynamic layer copies the whole
    cache at every decode step, O(T^2) over a generation and ~15% of a decode step here."""

    def update(self, key_states, value_states, *args, **kwargs):
        n, length = key_states.shape[-2], self.keys.shape[-2]
        if length + n > self._buf_k.shape[-2]:
            self._reserve(2 * (length + n))
        self._buf_k[..., length:length + n, :] = key_states
        self._buf_v[..., length:length + n, :] = value_states
        self.keys, self.values = self._buf_k[..., :length + n, :], self._buf_v[..., :length + n, :]
        return self.keys, self.values

    def batch_select_indices(self, indices: torch.Tensor) -> None:
        length = self.keys.shape[-2]
        self._buf_k, self._buf_v = self._buf_k[indices], self._buf_v[indices]
        self.keys, self.values = self._buf_k[..., :length, :], self._buf_v[..., :length, :]

    def _reserve(self, capacity: int) -> None:
        k, v = self.keys, self.values
        self._buf_k = k.new_empty((*k.shape[:-2], capacity, k.shape[-1]))
        self._buf_v = v.new_empty((*v.shape[:-2], capacity, v.shape[-1]))
        self._buf_k[..., :k.shape[-2], :] = k
        self._buf_v[..., :v.shape[-2], :] = v
        self.keys, self.values = self._buf_k[..., :k.shape[-2], :], self._buf_v[..., :v.shape[-2], :]


def reserve_cache(cache: Any, capacity: int) -> bool:
    """Give each plain dynamic layer of ``cache`` room for ``capacity`` positions (see
    :class:`_ReservedLayer`). Transformers versions or models whose cache is not a list of
    ``DynamicLayer`` (sliding windows, older releases) keep their own cache: returns False."""
    try:
        from transformers.cache_utils import DynamicLayer
    except ImportError:
        return False
    layers = getattr(cache, "layers", None)
    if not layers or any(type(layer) is not DynamicLayer or not layer.is_initialized for layer in layers):
        return False
    reserved = _reserved_layer_class(DynamicLayer)
    for i, layer in enumerate(layers):
        new = reserved.__new__(reserved)
        new.__dict__.update(vars(layer))
        new._reserve(max(capacity, layer.keys.shape[-2]))
        layers[i] = new
    return True


@functools.cache
def _reserved_layer_class(base: type) -> type:
    return type("ReservedDynamicLayer", (_ReservedLayer, base), {})  # built once Transformers is imported


def _filter(logp: torch.Tensor, top_p: float, top_k: int) -> torch.Tensor:
    """Nucleus / top-k filtering of log-probs (-inf outside; the most likely token always stays)."""
    if top_k and top_k < logp.shape[-1]:
        kth = torch.topk(logp, top_k, dim=-1).values[:, -1:]
        logp = logp.masked_fill(logp < kth, float("-inf"))
    if top_p < 1.0:
        sorted_lp, order = torch.sort(logp, descending=True, dim=-1)
        cum = sorted_lp.exp().cumsum(-1)
        drop = cum - sorted_lp.exp() > top_p
        logp = logp.masked_fill(drop.scatter(1, order, drop), float("-inf"))
    return logp
