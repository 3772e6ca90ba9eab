"""A CDCL solver as an agent: SATURN's Table 18 baseline (the solver answers every satisfiable
(n,k,l)-SAT instance, in its own time).

``CDCLAgent`` reads the episode's formula (the clauses the prompt states, from the env's instance)
and answers with the assignment a CDCL solver finds (python-sat's CaDiCaL 1.5.3 by default), in
the env's answer format (``\\boxed{bits}``). It keeps the wall time of every solve
(``solve_seconds``), what Table 18 reports next to the 100%.
"""
from __future__ import annotations

import time
from typing import Any, Sequence

from pysat.solvers import Solver

__all__ = ["CDCLAgent"]


class CDCLAgent:
    """CDCL on ``SolverSAT-v0`` (SATURN's (n,k,l)-SAT): ``solver`` is a python-sat name."""

    name = "cdcl"

    def __init__(self, solver: str = "cadical153"):
        self.solver = solver
        self.solve_seconds: list[float] = []

    def act(self, observations: Sequence[str], envs: Sequence[Any] | None = None) -> list[str]:
        if envs is None or len(envs) != len(observations):
            raise ValueError("CDCLAgent needs the env of every observation (envs=...)")
        return [self._answer(getattr(e, "unwrapped", e).instance) for e in envs]

    def _answer(self, inst: Any) -> str:
        clauses, k = getattr(inst, "clauses", None), getattr(inst, "k", None)
        if clauses is None or k is None or not hasattr(inst, "solution"):
            raise TypeError(f"CDCLAgent answers SolverSAT-v0's (n,k,l)-SAT instances, not {type(inst).__name__}")
        t = time.perf_counter()
        with Solver(name=self.solver, bootstrap_with=clauses) as s:
            model = s.get_model() if s.solve() else None
        self.solve_seconds.append(time.perf_counter() - t)
        if model is None:  # cannot happen for a planted instance; answer something well-formed
            return "\\boxed{" + "0" * k + "}"
        value = {abs(lit): lit > 0 for lit in model}
        return "The solver's assignment.\n\\boxed{" + "".join("1" if value.get(v, False) else "0"
                                                             for v in range(1, k + 1)) + "}"
