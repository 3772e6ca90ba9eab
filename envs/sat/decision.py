"""SAT-Bench-style SAT/UNSAT decision instances (``sat-rl.txt`` §3.2): a CNF over indexed variables
``x(i,j,...)``, told as a scenario (:mod:`~solvergym.envs.sat.render`), with a certified label.

Pure and seeded: every function takes a ``numpy.random.Generator`` (or an int seed) and reads no
other randomness, so the same seed gives the same instances byte for byte on any machine.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..instance import Instance
from .cnf import LABEL_SOLVER, as_rng, check_drup, solve_cnf
from .render import render, variable_names

__all__ = ["DecisionInstance", "decision_instance"]


@dataclass
class DecisionInstance(Instance):
    """A SAT-Bench-style decision instance (``sat-rl.txt`` §3.2): "Can all conditions be satisfied?"

    ``clauses`` range over the variables ``variables[i]`` = ``x(i,j,...)`` (DIMACS ``i + 1``);
    ``mapping`` states what each variable means. The label is certified: ``model`` satisfies
    every clause when ``satisfiable``; otherwise ``proof`` is the labelling solver's DRUP
    refutation, which :func:`~solvergym.envs.sat.cnf.check_drup` re-checks.
    """

    dims: list[int]
    clauses: list[list[int]]
    satisfiable: bool
    scenario: str
    conditions: list[str]
    question: str
    mapping: dict[str, str]
    model: list[int] | None = None
    proof: list[str] | None = None
    labelled_by: str = LABEL_SOLVER

    @property
    def num_vars(self) -> int:
        return math.prod(self.dims)

    @property
    def variables(self) -> list[str]:
        return variable_names(self.dims)

    def validate(self) -> None:
        if not self.dims or any(not isinstance(d, int) or d < 1 for d in self.dims):
            raise ValueError(f"bad dims {self.dims!r}")
        nv = self.num_vars
        for c in self.clauses:
            if not c or any(not isinstance(x, int) or x == 0 or abs(x) > nv for x in c):
                raise ValueError(f"bad clause {c!r} for {nv} variables")
        if len(self.conditions) != len(self.clauses):
            raise ValueError("one condition sentence per clause is required")
        if self.satisfiable:
            if self.model is None or len(self.model) != nv:
                raise ValueError("a satisfiable instance needs a model over every variable")
            true = {x for x in self.model if x > 0}
            for i, c in enumerate(self.clauses):
                if not any((x > 0) == (abs(x) in true) for x in c):
                    raise ValueError(f"the model falsifies clause {i}")
        else:
            if not self.proof:
                raise ValueError("an unsatisfiable instance needs its DRUP proof")
            ok, why = check_drup(self.clauses, self.proof)
            if not ok:
                raise ValueError(f"the UNSAT proof does not check: {why}")


def _core(rng: np.random.Generator, num_vars: int, budget: int) -> list[list[int]]:
    """A small unsatisfiable core that fits in ``budget`` clauses over ``num_vars`` variables.

    Two families, as SAT-Bench's structured cores: the full sign cube over w variables (all 2^w
    clauses) and an implication cycle ``a1 -> a2 -> ... -> ar -> not a1`` with ``a1`` forced true
    by ``(a1 or b) and (a1 or not b)``.
    """
    options = []
    for w in (2, 3):
        if 2**w <= budget and w <= num_vars:
            options.append(("cube", w))
    for r in (2, 3, 4):
        if r + 2 <= budget and r + 1 <= num_vars:
            options.append(("cycle", r))
    if not options:
        raise ValueError(
            f"an UNSAT core needs at least 4 clauses over 2 variables (got {budget} clauses, "
            f"{num_vars} variables)"
        )
    kind, size = options[rng.integers(len(options))]
    if kind == "cube":
        vs = (rng.choice(num_vars, size, replace=False) + 1).tolist()
        return [[v if (mask >> j) & 1 else -v for j, v in enumerate(vs)] for mask in range(2**size)]
    vs = (rng.choice(num_vars, size + 1, replace=False) + 1).tolist()
    a, b = vs[:size], vs[size]
    core = [[-a[i], a[i + 1]] for i in range(size - 1)]
    core += [[-a[-1], -a[0]], [a[0], b], [a[0], -b]]
    return core


def decision_instance(
    dims: list[int],
    num_clauses: int,
    rng: np.random.Generator | int | None = None,
    *,
    satisfiable: bool | None = None,
    widths: tuple[int, ...] = (2, 3),
    max_tries: int = 200,
) -> DecisionInstance:
    """One SAT-Bench-style instance over ``x(i,j,...)`` with ``dims`` and ``num_clauses`` conditions.

    A structured core (see :func:`_core`) is planted, whole when the target label is UNSAT and
    with one clause removed when it is SAT (so the core's presence does not give the label away),
    then random filler clauses of the given ``widths`` complete the formula, shuffled. The CDCL
    solver decides the label; draws whose label differs from ``satisfiable`` are rejected
    (``satisfiable=None`` keeps whatever comes). The label is certified (model or DRUP proof).
    """
    rng = as_rng(rng)
    dims = [int(d) for d in dims]
    nv = math.prod(dims)
    if num_clauses < 1:
        raise ValueError("num_clauses must be >= 1")
    widths = tuple(w for w in widths if 1 <= w <= nv) or (min(nv, 2),)
    for _ in range(max_tries):
        target = satisfiable if satisfiable is not None else bool(rng.integers(2))
        core = _core(rng, nv, num_clauses)
        if target:
            del core[rng.integers(len(core))]
        seen = {tuple(sorted(c)) for c in core}
        clauses = list(core)
        guard = 0
        while len(clauses) < num_clauses and guard < 100 * num_clauses:
            guard += 1
            w = int(widths[rng.integers(len(widths))])
            vs = rng.choice(nv, w, replace=False) + 1
            clause = [int(v) if rng.integers(2) else -int(v) for v in vs]
            key = tuple(sorted(clause))
            if key not in seen:
                seen.add(key)
                clauses.append(clause)
        if len(clauses) < num_clauses:
            raise ValueError(f"cannot place {num_clauses} distinct clauses over {nv} variables")
        clauses = [clauses[i] for i in rng.permutation(len(clauses))]
        sat, model, proof = solve_cnf(clauses, nv)
        if satisfiable is not None and sat != satisfiable:
            continue
        scenario, conditions, question, mapping = render(dims, clauses, rng)
        return DecisionInstance(
            dims=dims, clauses=clauses, satisfiable=sat, scenario=scenario, conditions=conditions,
            question=question, mapping=mapping, model=model, proof=proof,
        )
    raise ValueError(
        f"no {'SAT' if satisfiable else 'UNSAT'} instance with dims={dims} and "
        f"{num_clauses} clauses in {max_tries} tries"
    )
