"""Policies that turn observations into actions: scripted oracles and a random baseline, the
transformers agent (the embedded model by default), vLLM and any OpenAI-compatible server.

Backends import their heavy dependencies (torch, vllm) only when an agent is created.
"""
from .base import Agent
from .openai_agent import OpenAIAgent
from .scripted import OracleAgent, RandomAgent, SolverToolOracle

__all__ = ["Agent", "OracleAgent", "RandomAgent", "SolverToolOracle", "HFAgent", "VLLMAgent", "OpenAIAgent",
           "SamplingConfig"]


def __getattr__(name):  # lazy: `import solvergym.agents` must not import torch or vllm
    if name in ("HFAgent", "SamplingConfig"):
        from . import hf

        return getattr(hf, name)
    if name == "VLLMAgent":
        from .vllm import VLLMAgent

        return VLLMAgent
    raise AttributeError(name)
