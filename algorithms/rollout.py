"""Rollouts: run groups of episodes with a policy and turn them into token-level tensors.

Token-in/token-out. The prompt is the env's first ``info["messages"]`` through the chat template;
after that, the sequence only grows: the policy's sampled tokens are kept exactly as sampled
(never decoded and re-tokenised), and each observation is appended as the chat template renders
it — the end of the assistant turn (unless the policy itself emitted it), the observation
message, and the next generation prompt. So the token ids a trainer sees are exactly the ones the
policy was conditioned on (verl#6501 dropped a ``\\n`` at such boundaries).

Groups: ``group_size`` episodes start from the same instance: the first env of the group resets
from a seed, the others reset with ``options={"instance": ...}`` and the same seed, and their
first observations are checked to be identical.

The output tensors (:class:`RolloutBatch`) have a ``loss_mask`` that is 1 only on sampled tokens
(0 on prompt, observations and padding), the sampler's log-probs, the reward of every env step
placed on the last token of the turn that earned it, section masks for named tags
(``<think>``, ``<model>``, ``<python>``...: character offsets -> tokens), and the episodes
themselves (reward components, tokens sampled per turn, whether the token limit cut each turn,
truncation) for shaping and metrics.
"""
from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import torch

from ..sandbox.host_lock import HOST

__all__ = ["Episode", "RolloutBatch", "ChatBoundaries", "rollout", "step_envs", "collate", "section_mask",
           "clipped_ratio"]


@dataclass
class Episode:
    group: int
    token_ids: list[int]
    loss_mask: list[int]
    logprobs: list[float]
    prompt_len: int
    step_rewards: list[tuple[int, float]] = field(default_factory=list)  # (token index, reward)
    components: dict[str, float] = field(default_factory=dict)
    turns: int = 0
    turn_tokens: list[int] = field(default_factory=list)  # tokens the policy sampled in each turn
    #: per turn, whether the token limit cut the completion (``max_new_tokens``, or the rollout's
    #: ``max_total_tokens``): TRL's clipped completions, the trainer's ``clipped_ratio``
    turn_clipped: list[bool] = field(default_factory=list)
    terminated: bool = False
    truncated: bool = False  # by the env's turn budget or the rollout's token budget
    errors: int = 0
    info: dict[str, Any] = field(default_factory=dict)
    instance_id: str = ""
    #: seconds this episode spent in its env's ``step`` (parsing, verification, reward, solver tools)
    env_s: float = 0.0

    @property
    def reward(self) -> float:
        return float(sum(r for _, r in self.step_rewards))

    @property
    def policy_tokens(self) -> int:
        return int(sum(self.loss_mask))

    @property
    def done(self) -> bool:
        return self.terminated or self.truncated


class ChatBoundaries:
    """What the chat template puts between an assistant turn and the next generation prompt.

    Rendered once from the template with marker strings, so any chat template works:
    ``close`` ends an assistant message, ``open(role, content)`` is a new message plus the
    generation prompt.
    """

    def __init__(self, tokenizer):
        self.tok = tokenizer
        marker, obs = "\u2063ASSISTANT\u2063", "\u2063OBSERVATION\u2063"
        base = [{"role": "user", "content": "u"}]
        a = tokenizer.apply_chat_template(base + [{"role": "assistant", "content": marker}], tokenize=False)
        b = tokenizer.apply_chat_template(
            base + [{"role": "assistant", "content": marker}, {"role": "user", "content": obs}],
            tokenize=False, add_generation_prompt=True)
        end = a.index(marker) + len(marker)
        if not b.startswith(a[:end]):
            raise ValueError("the chat template renders earlier turns differently once later turns exist")
        rest = b[end:]
        self.close = a[end:]
        if not rest.startswith(self.close):
            raise ValueError("cannot find the assistant-turn end in the chat template")
        after_close = rest[len(self.close):]
        i = after_close.index(obs)
        self.user_prefix, self.user_suffix = after_close[:i], after_close[i + len(obs):]
        self.eos_text = tokenizer.eos_token or ""

    def observation_ids(self, observation: str, ended_with_eos: bool) -> list[int]:
        close = self.close
        if ended_with_eos and self.eos_text and close.startswith(self.eos_text):
            close = close[len(self.eos_text):]  # the policy already wrote the end-of-turn token
        text = close + self.user_prefix + observation + self.user_suffix
        return list(self.tok(text, add_special_tokens=False)["input_ids"])


@dataclass
class RolloutBatch:
    input_ids: torch.Tensor  # (N, T) right-padded
    attention_mask: torch.Tensor
    loss_mask: torch.Tensor  # 1 on sampled tokens only
    old_logprobs: torch.Tensor  # sampler log-probs on sampled tokens, 0 elsewhere
    token_rewards: torch.Tensor  # each env step's reward (and its shaping) at the last token of its turn
    step_mask: torch.Tensor  # 1 at the token each env step's reward sits on
    rewards: torch.Tensor  # (N,) episode reward = sum of step rewards (+ shaping added later)
    group: torch.Tensor  # (N,)
    turns: torch.Tensor
    section_masks: dict[str, torch.Tensor]
    episodes: list[Episode]  # the per-episode facts metrics read (components, truncation, info)

    def __len__(self) -> int:
        return self.input_ids.shape[0]


def _token_strings(tokenizer, ids: list[int]) -> list[str]:
    return [tokenizer.decode([i], skip_special_tokens=False) for i in ids]


def section_mask(token_strings: list[str], tag: str, *, to_end: bool = False) -> list[int]:
    """1 on tokens overlapping a ``<tag>...</tag>`` section (tags included).

    Works on the concatenation of per-token strings, so the character offsets are exactly the
    tokens' own. A section left open (a truncated generation) runs to the end. With ``to_end``
    the mask runs from the first ``<tag`` to the end of the text (SIRL's shipped partial KL).
    """
    text = "".join(token_strings)
    spans = []
    if to_end:
        s = text.find(f"<{tag}")
        if s != -1:
            spans.append((s, len(text)))
    else:
        pos = 0
        open_t, close_t = f"<{tag}>", f"</{tag}>"
        while True:
            s = text.find(open_t, pos)
            if s == -1:
                break
            e = text.find(close_t, s + len(open_t))
            e = len(text) if e == -1 else e + len(close_t)
            spans.append((s, e))
            pos = e
    out = [0] * len(token_strings)
    if not spans:
        return out
    start = 0
    j = 0
    for i, piece in enumerate(token_strings):
        end = start + len(piece)
        while j < len(spans) and spans[j][1] <= start:
            j += 1
        if j < len(spans) and spans[j][0] < end and start < spans[j][1] and end > start:
            out[i] = 1
        start = end
    return out


def rollout(
    make_env: Callable[[], Any],
    policy,
    seeds: Sequence[int],
    *,
    group_size: int,
    sampling,
    max_total_tokens: int = 4096,
    env_options: dict[str, Any] | None = None,
    envs: list[Any] | None = None,
    instances: Sequence[Any] | None = None,
    env_threads: int = 1,
    timing: dict[str, float] | None = None,
) -> list[Episode]:
    """Run ``len(seeds) * group_size`` episodes with ``policy`` (an agent with ``generate`` and
    ``chat_ids``), all turns batched together; return the finished episodes in group order.

    ``max_total_tokens`` bounds each trajectory (prompt + all turns); an episode that reaches it
    is stopped and marked ``truncated`` with the rewards earned so far.
    ``envs`` may pass in envs to reuse (one per episode); otherwise ``make_env`` builds them.
    ``instances`` (one per seed) makes each group evaluate a given instance instead of drawing one.
    ``env_threads`` > 1 steps a turn's envs on that many threads (:func:`step_envs`): the same
    episodes as one thread, with the sandboxed programs' waits overlapped. ``timing`` (a dict)
    gets ``env_s`` added: the wall time of the env steps (with threads, less than the sum of the
    episodes' own :attr:`Episode.env_s`).
    """
    from copy import copy

    tok = policy.tokenizer
    bounds = ChatBoundaries(tok)
    n = len(seeds) * group_size
    envs = envs if envs is not None else [make_env() for _ in range(n)]
    if len(envs) < n:
        raise ValueError(f"need {n} envs, got {len(envs)}")
    episodes: list[Episode] = []
    for g, seed in enumerate(seeds):
        leader = envs[g * group_size]
        options = dict(env_options or {})
        if instances is not None:
            options["instance"] = instances[g]
        first_obs, info = leader.reset(seed=int(seed), options=options or None)
        instance = leader.unwrapped.instance
        for j in range(group_size):
            env = envs[g * group_size + j]
            if j > 0:
                obs, info = env.reset(seed=int(seed), options={**(env_options or {}), "instance": instance})
                if obs != first_obs:
                    raise RuntimeError("group members must start from the same observation")
            ids = policy.chat_ids(info["messages"])
            episodes.append(Episode(group=g, token_ids=list(ids), loss_mask=[0] * len(ids),
                                    logprobs=[0.0] * len(ids), prompt_len=len(ids), info=info,
                                    instance_id=info["instance_id"]))
    active = [i for i in range(n)]
    while active:
        budget = [max_total_tokens - len(episodes[i].token_ids) for i in active]
        for i, b in zip(list(active), budget):
            if b <= 0:
                episodes[i].truncated = True
        active = [i for i in active if not episodes[i].done]
        if not active:
            break
        sp = copy(sampling)
        sp.max_new_tokens = min(sampling.max_new_tokens, max(max_total_tokens - len(episodes[i].token_ids) for i in active))
        completions = policy.generate([episodes[i].token_ids for i in active], n=1, sampling=sp)
        for i, c in zip(active, completions):
            ep = episodes[i]
            room = max_total_tokens - len(ep.token_ids)
            toks, lps = c.token_ids[:room], c.logprobs[:room]
            ep.token_ids += toks
            ep.loss_mask += [1] * len(toks)
            ep.logprobs += lps
            ep.turn_tokens.append(len(toks))
            ep.turn_clipped.append(c.finish_reason == "length" or len(c.token_ids) > room)
        t = time.perf_counter()
        stepped = step_envs([envs[i] for i in active], [c.text for c in completions], env_threads)
        if timing is not None:
            timing["env_s"] = timing.get("env_s", 0.0) + time.perf_counter() - t
        for i, c, (outcome, seconds) in zip(active, completions, stepped):
            ep = episodes[i]
            obs, reward, terminated, truncated, info = outcome
            ep.env_s += seconds
            ep.turns += 1
            ep.step_rewards.append((len(ep.token_ids) - 1, float(reward)))
            # as computed (reward_weights may pay a component less, or nothing: it is still logged)
            for k, v in info.get("reward_components_computed", info.get("reward_components", {})).items():
                ep.components[k] = ep.components.get(k, 0.0) + float(v)
            ep.errors += "error" in info
            ep.info = info
            ep.terminated, ep.truncated = bool(terminated), bool(truncated)
            if not ep.done:
                obs_ids = bounds.observation_ids(obs, c.finish_reason == "eos")
                ep.token_ids += obs_ids
                ep.loss_mask += [0] * len(obs_ids)
                ep.logprobs += [0.0] * len(obs_ids)
                if len(ep.token_ids) >= max_total_tokens:
                    ep.truncated = True
        active = [i for i in active if not episodes[i].done]
    return episodes


def step_envs(envs: Sequence[Any], actions: Sequence[str], threads: int = 1) -> list[tuple[tuple, float]]:
    """``(env.step(action), seconds)`` for each pair, in order.

    With ``threads`` > 1 the steps run on a thread pool, each holding the sandbox's host lock
    (:data:`solvergym.sandbox.HOST`): an env's own work (parsing, Z3 and other in-process checks,
    which are not thread-safe) runs one step at a time as in the serial loop, and the lock is let
    go only while a step waits on a sandboxed program, so those waits overlap (up to the sandbox
    pool's servers: one per core). Each env is stepped by one thread; the results are the
    serial loop's. ``seconds`` is each step's own time, waits for the lock included."""
    def one(pair: tuple[Any, str]) -> tuple[tuple, float]:
        env, action = pair
        t = time.perf_counter()
        with HOST.held():
            out = env.step(action)
        return out, time.perf_counter() - t

    pairs = list(zip(envs, actions))
    if threads <= 1 or len(pairs) <= 1:
        return [one(p) for p in pairs]
    with ThreadPoolExecutor(min(threads, len(pairs)), thread_name_prefix="env-step") as pool:
        return list(pool.map(one, pairs))


def clipped_ratio(episodes: Sequence[Episode]) -> float:
    """TRL's ``clipped_ratio``: the share of the episodes' completions (one per turn) that the
    token limit cut (:attr:`Episode.turn_clipped`); 0.0 for no turns. Beside ``truncation_rate``,
    which counts episodes ended by the turn or token budget, whatever their last completion."""
    flags = [c for e in episodes for c in e.turn_clipped]
    return sum(flags) / len(flags) if flags else 0.0


def collate(episodes: list[Episode], *, pad_id: int, section_tags: Sequence[str] = (),
            tokenizer=None, to_end_tags: Sequence[str] = ()) -> RolloutBatch:
    """Right-pad episodes into a :class:`RolloutBatch` (section masks need ``tokenizer``)."""
    n = len(episodes)
    width = max(len(e.token_ids) for e in episodes)
    ids = torch.full((n, width), pad_id, dtype=torch.long)
    attn = torch.zeros((n, width), dtype=torch.long)
    mask = torch.zeros((n, width), dtype=torch.long)
    lps = torch.zeros((n, width), dtype=torch.float32)
    trew = torch.zeros((n, width), dtype=torch.float32)
    steps = torch.zeros((n, width), dtype=torch.long)
    sections = {t: torch.zeros((n, width), dtype=torch.long) for t in section_tags}
    sections.update({f"{t}+": torch.zeros((n, width), dtype=torch.long) for t in to_end_tags})
    for i, e in enumerate(episodes):
        L = len(e.token_ids)
        ids[i, :L] = torch.tensor(e.token_ids)
        attn[i, :L] = 1
        mask[i, :L] = torch.tensor(e.loss_mask)
        lps[i, :L] = torch.tensor(e.logprobs)
        for t_idx, r in e.step_rewards:
            trew[i, t_idx] += r
            steps[i, t_idx] = 1
        if section_tags or to_end_tags:
            strings = _token_strings(tokenizer, e.token_ids)
            for t in section_tags:
                sections[t][i, :L] = torch.tensor(section_mask(strings, t))
            for t in to_end_tags:
                # only the response counts: the prompt may mention the tag
                resp = section_mask(strings[e.prompt_len:], t, to_end=True)
                sections[f"{t}+"][i, e.prompt_len:L] = torch.tensor(resp, dtype=torch.long)
    return RolloutBatch(
        input_ids=ids, attention_mask=attn, loss_mask=mask, old_logprobs=lps, token_rewards=trew, step_mask=steps,
        rewards=torch.tensor([e.reward for e in episodes], dtype=torch.float32),
        group=torch.tensor([e.group for e in episodes]), turns=torch.tensor([e.turns for e in episodes]),
        section_masks=sections, episodes=episodes,
    )
