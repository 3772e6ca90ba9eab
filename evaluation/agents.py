"""Agents by spec, as ``solvergym eval --agent SPEC`` names them, and the one way the evaluation
asks any of them for a batch of turns.

========================  ===========================================================================
spec                      agent
========================  ===========================================================================
``oracle``                the ground truth (:class:`~solvergym.agents.OracleAgent`): pass@k is 1
``random``                a well-formed uniformly random answer (:class:`~solvergym.agents.RandomAgent`)
``cdcl``                  a CDCL solver on SolverSAT-v0 (:class:`~solvergym.agents.cdcl.CDCLAgent`:
                          SATURN Table 18's baseline; ``cdcl:NAME`` picks the python-sat solver)
``logic-lm:SPEC``         Logic-LM (:class:`~solvergym.agents.logic_lm.LogicLMAgent`, Spring Table 1's
                          baseline) on the logic envs: the model ``SPEC`` names writes the formulas,
                          Z3 solves them, up to 3 self-refinements
``hf:default``            the embedded SmolLM2-135M-Instruct through transformers (``hf:PATH``: a
                          local model folder or GGUF file)
``vllm:PATH``             a vLLM engine (``vllm:default``: the embedded model)
``openai:URL#MODEL``      an OpenAI-compatible server, e.g. ``openai:http://127.0.0.1:8000/v1#qwen``
``MODULE:NAME``           the user's own: ``NAME`` in the importable ``MODULE``, an agent object or a
                          factory called with no arguments that returns one (anything with
                          ``name`` and ``act(observations, envs)``)
========================  ===========================================================================

Model-backed agents see the whole conversation of a multi-turn episode (the env's
``info["messages"]``: through the chat template for HF and vLLM, as the request's messages for an
OpenAI server, a batch's requests concurrent), scripted and user agents the observation and the
env, as ``Agent.act`` defines. Every batch starts from a seed derived from the run's seed and
the batch (:func:`reseed`), so that a batch run again (a resumed run) samples what it sampled.
"""
from __future__ import annotations

import importlib
from typing import Any, Sequence

import numpy as np

from .. import agents as _agents  # HFAgent, VLLMAgent, SamplingConfig load torch / vllm on first use
from ..agents import OpenAIAgent, OracleAgent, RandomAgent
from ..agents.base import ChatPolicy
from ..agents.cdcl import CDCLAgent
from ..agents.logic_lm import LogicLMAgent

__all__ = ["make_agent", "act", "reseed", "BUILTIN"]

BUILTIN = ("oracle", "random", "cdcl", "logic-lm", "hf", "vllm", "openai")


def make_agent(spec: str, *, temperature: float | None = None, max_new_tokens: int = 256,
               seed: int = 0) -> Any:
    """The agent ``spec`` names (module docstring). ``temperature`` (``0``: greedy) and
    ``max_new_tokens`` apply to model-backed agents; ``None`` keeps each backend's default (1.0)."""
    if not isinstance(spec, str) or not spec.strip():
        raise ValueError(f"an agent spec is a non-empty string, got {spec!r}")
    spec = spec.strip()
    if spec == "oracle":
        return OracleAgent()
    if spec == "random":
        return RandomAgent(seed)
    kind, _, rest = spec.partition(":")
    if kind == "logic-lm":
        if not rest:
            raise ValueError("a Logic-LM agent names the model it drives: 'logic-lm:hf:default', "
                             "'logic-lm:openai:URL#MODEL', ...")
        return LogicLMAgent(make_agent(rest, temperature=temperature, max_new_tokens=max_new_tokens, seed=seed),
                            seed=seed)
    if kind == "cdcl":
        return CDCLAgent(rest or "cadical153")
    if kind in ("hf", "vllm"):
        t = 1.0 if temperature is None else float(temperature)
        sampling = _agents.SamplingConfig(max_new_tokens=max_new_tokens, temperature=max(t, 1e-6),
                                          greedy=t == 0.0, seed=seed)
        backend = _agents.HFAgent if kind == "hf" else _agents.VLLMAgent
        return backend(rest or "default", sampling=sampling)
    if kind == "openai":
        url, _, model = rest.rpartition("#")
        if not url or not model:
            raise ValueError(f"an OpenAI agent is 'openai:BASE_URL#MODEL', got {spec!r}")
        kw = {} if temperature is None else {"temperature": float(temperature)}
        return OpenAIAgent(url, model, max_tokens=max_new_tokens, seed=seed, **kw)
    if not rest or kind in BUILTIN:
        raise ValueError(f"unknown agent spec {spec!r}: use oracle, random, hf:PATH, vllm:PATH, "
                         "openai:URL#MODEL or MODULE:NAME")
    try:
        obj = getattr(importlib.import_module(kind), rest)
    except (ImportError, AttributeError) as e:
        raise ValueError(f"cannot load the agent {spec!r}: {type(e).__name__}: {e}") from None
    agent = obj if hasattr(obj, "act") else obj()
    if not callable(getattr(agent, "act", None)):
        raise TypeError(f"{spec!r} gave a {type(agent).__name__}, which has no act(observations, envs)")
    if not hasattr(agent, "name"):
        agent.name = spec
    return agent


def reseed(agent: Any, seed: int) -> None:
    """Start the agent's sampling from ``seed``: its own ``reseed`` if it has one, the random
    baseline's generator, a model's sampler (torch's generator, and the sampling config's seed,
    which vLLM and OpenAI servers take per request)."""
    if callable(getattr(agent, "reseed", None)):
        agent.reseed(seed)
        return
    if isinstance(agent, LogicLMAgent):  # its backup guesses, then the model it drives
        agent.rng = np.random.default_rng(seed)
        reseed(agent.model, seed)
        return
    if isinstance(agent, RandomAgent):
        agent.rng = np.random.default_rng(seed)
        return
    sampling = getattr(agent, "sampling", None)
    if sampling is not None and hasattr(sampling, "seed"):
        sampling.seed = seed
    if isinstance(agent, OpenAIAgent):
        agent.seed = seed
    if isinstance(agent, ChatPolicy):
        import torch  # a model-backed agent: torch is loaded already

        torch.manual_seed(seed)


def act(agent: Any, observations: Sequence[str], envs: Sequence[Any],
        conversations: Sequence[list[dict[str, str]]]) -> list[str]:
    """One turn for each of a batch of episodes: a chat model gets each whole conversation,
    any other agent ``act(observations, envs)``; the answers are checked to be one string each."""
    if isinstance(agent, ChatPolicy):
        prompts = [agent.chat_ids(list(c)) for c in conversations]
        out = [c.text for c in agent.generate(prompts)]
    elif isinstance(agent, OpenAIAgent):  # concurrent requests, each with its whole conversation
        out = [r.text for r in agent.chat_many([list(c) for c in conversations])]
    else:
        out = agent.act(list(observations), list(envs))
    if not isinstance(out, (list, tuple)) or len(out) != len(observations):
        raise TypeError(f"the agent returned {type(out).__name__} of {len(out) if hasattr(out, '__len__') else '?'} "
                        f"actions for {len(observations)} observations")
    return [a if isinstance(a, str) else str(a) for a in out]
