"""Policies that turn observations into actions (scripted now; transformers, vLLM and
OpenAI-compatible backends come with the "agents and trainer" issue)."""
from .base import Agent
from .scripted import OracleAgent, RandomAgent

__all__ = ["Agent", "OracleAgent", "RandomAgent"]
