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
``MODULE:NAME``           the user's own: ``NAME`` in ``MODULE`` (the working directory is on the
                          path, as for ``python -m``), an agent object, or a class or factory
                          called with no arguments that returns one (anything with
                          ``act(observations, envs)``; ``name`` defaults to the spec)
========================  ===========================================================================

Model-backed agents see the whole conversation of a multi-turn episode (the env's
``info["messages"]``: through the chat template for HF and vLLM, as the request's messages for an
OpenAI server, a batch's requests concurrent), scripted and user agents the observation and the
env, as ``Agent.act`` defines. Every batch starts from a seed derived from the run's seed and
the batch (:func:`reseed`), so that a batch run again (a resumed run) samples what it sampled.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from .. import agents as _agents  # HFAgent, VLLMAgent, SamplingConfig load torch / vllm on first use
from ..agents import OpenAIAgent, OracleAgent, RandomAgent
from ..agents.base import ChatPolicy, reply_parts
from ..agents.cdcl import CDCLAgent
from ..agents.logic_lm import LogicLMAgent
from ..agents.models import check_model
from ..registry import import_user_module
from ..suggest import did_you_mean

__all__ = ["make_agent", "act", "reseed", "sampling_temperature", "spec_temperature", "BUILTIN"]

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
        model = check_model(rest or "default")  # a folder that is not there: said before torch loads
        t = 1.0 if temperature is None else float(temperature)
        sampling = _agents.SamplingConfig(max_new_tokens=max_new_tokens, temperature=max(t, 1e-6),
                                          greedy=t == 0.0, seed=seed)
        backend = _agents.HFAgent if kind == "hf" else _agents.VLLMAgent
        return backend(model, sampling=sampling)
    if kind == "openai":
        url, _, model = rest.rpartition("#")
        if not url or not model:
            raise ValueError(f"an OpenAI agent is 'openai:BASE_URL#MODEL', got {spec!r}")
        kw = {} if temperature is None else {"temperature": float(temperature)}
        return OpenAIAgent(url, model, max_tokens=max_new_tokens, seed=seed, **kw)
    if not rest or kind in BUILTIN:
        raise ValueError(f"unknown agent spec {spec!r}: use oracle, random, cdcl[:SOLVER], logic-lm:SPEC, "
                         "hf:PATH, vllm:PATH, openai:URL#MODEL or MODULE:NAME")
    return _user_agent(spec, kind, rest)


def _user_agent(spec: str, module_name: str, attr: str) -> Any:
    """``MODULE:NAME``: the module imported with the working directory on the path
    (:func:`~solvergym.registry.import_user_module`), ``NAME`` in it. A class is a factory and is
    instantiated (a class has ``act`` too, but unbound); another callable without ``act`` is
    called; anything else is the agent. An error raised by the user's module or constructor
    propagates with its traceback; a name that is not there is a one-line ``ValueError``."""
    try:
        module = import_user_module(module_name)
    except ValueError as e:
        raise ValueError(f"cannot load the agent {spec!r}: {e}") from None
    if not hasattr(module, attr):
        names = [n for n in vars(module) if not n.startswith("_")]
        close = did_you_mean(attr, names)
        hint = f"; {close}" if close else ""
        raise ValueError(f"cannot load the agent {spec!r}: module {module_name!r} ({getattr(module, '__file__', '?')}) "
                         f"has no {attr!r}{hint}")
    obj = getattr(module, attr)
    agent = obj() if isinstance(obj, type) or (callable(obj) and not hasattr(obj, "act")) else obj
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


#: agents that write their answers without a token limit: no completion of theirs is ever cut
_UNLIMITED = (OracleAgent, RandomAgent, CDCLAgent)


def act(agent: Any, observations: Sequence[str], envs: Sequence[Any],
        conversations: Sequence[list[dict[str, str]]]) -> tuple[list[str], list[bool | None]]:
    """One turn for each of a batch of episodes: the actions, one string each, and per action
    whether the token limit cut it (``clipped``; ``None``: not known).

    A chat model gets each whole conversation (its completions say whether they were cut:
    HF's and vLLM's ``finish_reason == "length"``, an OpenAI server's ``finish_reason``), any
    other agent ``act(observations, envs)``. Scripted agents (oracle, random, cdcl) have no token
    limit: ``False``. A user's agent may return strings (``None``) or objects with ``.text`` and
    ``.clipped`` (:func:`~solvergym.agents.base.reply_parts`)."""
    if isinstance(agent, ChatPolicy):
        prompts = [agent.chat_ids(list(c)) for c in conversations]
        out = list(agent.generate(prompts))
    elif isinstance(agent, OpenAIAgent):  # concurrent requests, each with its whole conversation
        out = agent.chat_many([list(c) for c in conversations])
    else:
        out = agent.act(list(observations), list(envs))
    if not isinstance(out, (list, tuple)) or len(out) != len(observations):
        raise TypeError(f"the agent returned {type(out).__name__} of {len(out) if hasattr(out, '__len__') else '?'} "
                        f"actions for {len(observations)} observations")
    parts = [reply_parts(a) for a in out]
    unlimited = isinstance(agent, _UNLIMITED)
    return [t for t, _ in parts], [False if unlimited and c is None else c for _, c in parts]


def sampling_temperature(agent: Any) -> float | None:
    """The temperature ``agent`` samples at (0.0: greedy), as the report names it; ``None`` for
    an agent that does not sample from a model (scripted, cdcl) or whose sampler is unknown (a
    user's agent without a ``sampling`` config). Logic-LM's is its model's."""
    if isinstance(agent, LogicLMAgent):
        return sampling_temperature(agent.model)
    if isinstance(agent, OpenAIAgent):
        return float(agent.temperature)
    sp = getattr(agent, "sampling", None)
    if sp is not None and hasattr(sp, "temperature"):
        return 0.0 if getattr(sp, "greedy", False) else float(sp.temperature)
    return None


def spec_temperature(spec: str, temperature: float | None) -> float | None:
    """What :func:`make_agent` makes of ``temperature`` for ``spec``: model-backed specs (``hf``,
    ``vllm``, ``openai``, ``logic-lm:``) sample at 1.0 when it is ``None``; other specs ``None``
    (no model sampled, or a user's agent whose sampling is its own). For a run whose
    ``run.json`` predates the recorded temperature."""
    kind = spec.strip().partition(":")[0] if isinstance(spec, str) else ""
    if kind not in ("hf", "vllm", "openai", "logic-lm"):
        return None
    return 1.0 if temperature is None else float(temperature)
