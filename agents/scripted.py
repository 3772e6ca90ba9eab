"""Scripted agents: the oracle (the upper bound, and the source of SFT traces) and a random
baseline that answers in the right format with a uniformly random answer (the chance level that
``chance_success`` and the decision rewards are about).

The oracle reads only the env's :meth:`gold` (the problem's ground truth,
:class:`~solvergym.envs.problem.Gold`) and what any policy sees: the observation, the turn
count and the turn budget. The random baseline reads only the problem's answer sampler
(``env.sample_answer(rng)``). Neither looks inside an env's episode state.

- single-turn envs: the gold answer;
- ``SolverTool-v0`` (:func:`tool_oracle_action`): the gold program for the solver the prompt
  names, then, once the ``<tool_response>`` is back, the gold final turn for that output (with one
  turn left, the call and the answer in one turn);
- step-verified envs in step mode: the gold episode's actions in order (premises, deductions,
  solution).
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

__all__ = ["OracleAgent", "RandomAgent", "SolverToolOracle", "oracle_action", "random_action",
           "tool_oracle_action", "tool_stdout", "play_episode"]

_RESPONSE = "<tool_response>\nstdout: "


def _unwrapped(env: Any) -> Any:
    return getattr(env, "unwrapped", env)


def tool_stdout(observation: str | None) -> str | None:
    """The program's stdout in a ``<tool_response>`` observation, or ``None`` if it is not one."""
    if not observation or not observation.startswith(_RESPONSE):
        return None
    body = observation[len(_RESPONSE):]
    cut = body.rfind("\nstderr: ")
    return body[:cut] if cut >= 0 else body


def tool_oracle_action(env: Any, observation: str | None) -> str:
    """The oracle's next turn in ``SolverTool-v0`` (SAT-RL §3.3-3.4): a correct program for the
    solver the prompt names, then the answer the program's output supports."""
    env = _unwrapped(env)
    gold = env.gold()
    stdout = tool_stdout(observation)
    if stdout is None:  # no tool response yet: call the tool
        solver = env.instance.solver or "z3"
        call = (f"<think>\n{gold.plan.format(solver=solver)}\n</think>\n"
                f"<tool_call>\n{gold.program(solver)}</tool_call>")
        if env.turn + 1 < env.max_turns:
            return call
        return call + "\n" + gold.answer
    return gold.final_after_tool(stdout)


def oracle_action(env: Any, observation: str | None = None) -> str:
    """The oracle's next action in any solvergym env (see the module docstring)."""
    env = _unwrapped(env)
    if getattr(env, "mode", None) == "tool":
        return tool_oracle_action(env, observation)
    gold = env.gold()
    if gold.steps is not None:
        return gold.steps[min(env.turn, len(gold.steps) - 1)]
    return gold.answer


def random_action(env: Any, rng: np.random.Generator) -> str:
    """A uniformly random answer in the env's answer format (``env.sample_answer``)."""
    return _unwrapped(env).sample_answer(rng)


class OracleAgent:
    """Answers every episode with its ground truth."""

    name = "oracle"

    def act(self, observations: Sequence[str], envs: Sequence[Any] | None = None) -> list[str]:
        if envs is None or len(envs) != len(observations):
            raise ValueError("OracleAgent needs the env of every observation (envs=...)")
        return [oracle_action(e, o) for e, o in zip(envs, observations)]


class RandomAgent:
    """A well-formed, uniformly random answer (a random bit string, a random yes/no, ...)."""

    name = "random"

    def __init__(self, seed: int | None = None):
        self.rng = np.random.default_rng(seed)

    def act(self, observations: Sequence[str], envs: Sequence[Any] | None = None) -> list[str]:
        if envs is None or len(envs) != len(observations):
            raise ValueError("RandomAgent needs the env of every observation (envs=...)")
        return [random_action(e, self.rng) for e in envs]


def play_episode(env: Any, agent: Any, *, seed: int | None = None, options: dict | None = None) -> dict[str, Any]:
    """Play one episode of ``agent`` on ``env``; returns the chat messages, the reward, its
    components and the last ``info`` (the one episode loop of the scripted agents)."""
    env = _unwrapped(env)
    obs, info = env.reset(seed=seed, options=options)
    done, reward = False, 0.0
    while not done:
        obs, r, terminated, truncated, info = env.step(agent.act([obs], [env])[0])
        reward += r
        done = terminated or truncated
    return {"messages": info["messages"], "reward": reward, "reward_components": info["reward_components"],
            "info": info}


class SolverToolOracle(OracleAgent):
    """The oracle of ``SolverTool-v0`` (SAT-RL §3.3-3.4): it writes a correct program for the
    sampled solver, sends it as a tool call, reads the tool response and answers; with one turn
    left it calls the tool and answers in the same turn. Its trajectories are the SFT warm-up data
    (:mod:`solvergym.agents.sft_data`)."""

    name = "tool-oracle"

    def act(self, observations: Sequence[str], envs: Sequence[Any] | None = None) -> list[str]:
        if envs is None or len(envs) != len(observations):
            raise ValueError("SolverToolOracle needs the env of every observation (envs=...)")
        out = []
        for e, o in zip(envs, observations):
            if getattr(_unwrapped(e), "mode", None) != "tool":
                raise TypeError(f"SolverToolOracle drives SolverTool-v0 envs, got {type(_unwrapped(e)).__name__}")
            out.append(tool_oracle_action(e, o))
        return out

    def episode(self, env: Any, *, seed: int | None = None, options: dict | None = None) -> dict[str, Any]:
        """Play one episode; returns the chat messages, the reward and its components."""
        return play_episode(env, self, seed=seed, options=options)
