"""The agent protocol: turn a batch of observations into a batch of actions.

Every agent has ``act(observations, envs=None) -> actions``. Scripted agents (oracle, random)
read the episode's instance from ``envs`` (the envs those observations came from); model-backed
agents ignore ``envs`` and read only the text. Trainable policies (:class:`ChatPolicy`
subclasses: :class:`~solvergym.agents.hf.HFAgent`, :class:`~solvergym.agents.vllm.VLLMAgent`) add
``generate(prompts, n, sampling)``: per completion its token ids and log-probs, which the
trainer's rollouts need.

An action is a string, or an object with ``.text`` (the action) and ``.clipped``: whether the
token limit cut the completion (``True``/``False``; ``None`` or no attribute: not known). The
model-backed agents' completions (:class:`~solvergym.agents.hf.Completion`,
:class:`~solvergym.agents.openai_agent.ChatResult`) are such objects, so a user's agent that wraps
a model can return them as they are; :func:`reply_parts` reads either form. Evaluation records the
flag per turn and reports the clipped ratio (TRL's name: the share of completions cut by the
token limit).
"""
from __future__ import annotations

from typing import Any, Protocol, Sequence, runtime_checkable

__all__ = ["Agent", "ChatPolicy", "reply_parts"]


def reply_parts(reply: Any) -> tuple[str, bool | None]:
    """``(text, clipped)`` of one action (module docstring): a string is ``(it, None)``, an
    object with a string ``.text`` gives that and its ``.clipped`` (``None`` if it has none),
    anything else its ``str()`` and ``None``. A ``.clipped`` that is neither a bool nor ``None``
    is a ``TypeError``: a report's clipped ratio must not count a guess."""
    if isinstance(reply, str):
        return reply, None
    text = getattr(reply, "text", None)
    if not isinstance(text, str):
        return str(reply), None
    clipped = getattr(reply, "clipped", None)
    if clipped is not None and not isinstance(clipped, bool):
        raise TypeError(f"an action's .clipped must be True, False or None, got {clipped!r} "
                        f"({type(reply).__name__})")
    return text, clipped


@runtime_checkable
class Agent(Protocol):
    name: str

    def act(self, observations: Sequence[str], envs: Sequence[Any] | None = None) -> list[str]:
        ...


class ChatPolicy:
    """What the model-backed agents (HF, vLLM) share: the chat template and ``act`` over ``generate``.

    Subclasses set ``tokenizer`` and ``system_prompt`` and implement ``generate(prompts, n, sampling)``.
    """

    tokenizer: Any
    system_prompt: str | None = None

    def chat_ids(self, messages: list[dict[str, str]]) -> list[int]:
        """The token ids of ``messages`` with the generation prompt (the chat template applied)."""
        if self.system_prompt and (not messages or messages[0]["role"] != "system"):
            messages = [{"role": "system", "content": self.system_prompt}, *messages]
        return list(self.tokenizer.apply_chat_template(
            messages, add_generation_prompt=True, tokenize=True, return_dict=False))

    def act(self, observations: Sequence[str], envs: Sequence[Any] | None = None) -> list[str]:
        """One-turn chats: each observation as a user message; the completions' texts."""
        prompts = [self.chat_ids([{"role": "user", "content": o}]) for o in observations]
        return [c.text for c in self.generate(prompts)]

    def generate(self, prompts, n: int = 1, sampling=None):  # pragma: no cover - interface
        raise NotImplementedError
