"""Self-consistency over K candidate answers to an optimisation-modelling question (SIRL §3.1,
eq. 2-3), as a test-time wrapper around any agent and as a filter for synthetic data.

:func:`vote` runs every candidate's program once in the sandbox (the ``or`` problem's pool) and
keeps the one :func:`~solvergym.envs.opt.consistency.select` scores best from the features the
solver reported (objective, direction, binaries, integers), or with ``method="value"`` the first
of the most common objective value (Table 2's baseline). :class:`SelfConsistentAgent` asks the
agent it wraps for K answers per observation (a sampling agent gives K different ones) and acts
with the kept one.
"""
from __future__ import annotations

from typing import Any, Sequence

from ..envs.opt.consistency import select, value_vote
from ..envs.opt.problem import ORProblem
from ..envs.opt.verify import extract_program

__all__ = ["vote", "SelfConsistentAgent", "METHODS"]

METHODS = ("instance", "value")


def vote(problem: ORProblem, texts: Sequence[str], method: str = "instance",
         weights: Sequence[float] = (1, 1, 1, 1)) -> tuple[int, list[dict | None]]:
    """``(index of the kept answer, each answer's captured optimum or None)``."""
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    if not texts:
        raise ValueError("no candidate answers")
    programs = [extract_program(t) for t in texts]
    runnable = [k for k, p in enumerate(programs) if p is not None]
    results = problem.run_many([programs[k] for k in runnable]) if runnable else []
    optima: list[dict | None] = [None] * len(texts)
    for k, r in zip(runnable, results):
        optima[k] = r.optimum if r.ok else None
    best = select(optima, weights) if method == "instance" else value_vote(optima)
    return best, optima


class SelfConsistentAgent:
    """Wraps ``agent``: K answers per observation, the kept one acted (see the module docstring).
    ``envs`` must be ``SolverOR-v0`` envs (their problem runs the candidates)."""

    def __init__(self, agent: Any, k: int = 8, method: str = "instance", weights: Sequence[float] = (1, 1, 1, 1)):
        if k < 1:
            raise ValueError(f"k must be >= 1, got {k}")
        if method not in METHODS:
            raise ValueError(f"method must be one of {METHODS}, got {method!r}")
        self.agent, self.k, self.method, self.weights = agent, int(k), method, tuple(weights)
        self.name = f"{getattr(agent, 'name', type(agent).__name__)}+sc{self.k}"
        self.last_votes: list[tuple[int, list[dict | None]]] = []

    def act(self, observations: Sequence[str], envs: Sequence[Any] | None = None) -> list[str]:
        if envs is None:
            raise ValueError("SelfConsistentAgent runs the candidates through each env's problem: pass envs")
        out, self.last_votes = [], []
        for obs, env in zip(observations, envs):
            problem = getattr(env, "unwrapped", env).problem
            texts = self.agent.act([obs] * self.k, [env] * self.k)
            best, optima = vote(problem, texts, self.method, self.weights)
            self.last_votes.append((best, optima))
            out.append(texts[best])
        return out
