"""The agent protocol: turn a batch of observations into a batch of actions.

Every agent has ``act(observations, envs=None) -> actions``. Scripted agents (oracle, random)
read the episode's instance from ``envs`` (the envs those observations came from); model-backed
agents ignore ``envs`` and read only the text. Trainable policies add ``generate`` (token ids and
log-probs), which the "agents and trainer" issue brings.
"""
from __future__ import annotations

from typing import Any, Protocol, Sequence, runtime_checkable

__all__ = ["Agent"]


@runtime_checkable
class Agent(Protocol):
    name: str

    def act(self, observations: Sequence[str], envs: Sequence[Any] | None = None) -> list[str]:
        ...
