"""The SAT family's ground truths for the ``equivalence`` reward: the instance's CNF and how a
program's variable names align with it (:class:`~solvergym.envs.equivalence.Truth`).

**Alignment**, in this order:

1. the instance's own name (``x(2,1,1)`` for SAT-Bench, ``A``/``B``/``A1`` for SATURN);
2. the same indices written differently: ``x_2_1_1``, ``x(2, 1, 1)``, ``x[2][1][1]``,
   ``X_2_1_1``, ``x2_1_1``, a tuple ``('x', 2, 1, 1)``: an ``x`` followed by exactly as many
   integers as the instance has dimensions, separated by ``_ , ( ) [ ]``, quotes or spaces;
3. the mapping's sentence for the variable (``Clara runs an experiment on dark matter in the
   field``; case and spacing ignored);
4. a DIMACS index: a name that is a positive integer (python-sat without names), or ``x<n>`` /
   ``v<n>`` / ``x_<n>`` for SATURN's instances (1-based, the order of the answer string).
"""
from __future__ import annotations

import re

from ..equivalence import Truth
from .cnf import var_name

__all__ = ["decision_truth", "saturn_truth"]

_SEPARATORS = set("_,()[] '\"\t")
_INT = re.compile(r"\d+")
_SPACES = re.compile(r"\s+")


def _normal_sentence(text: str) -> str:
    return _SPACES.sub(" ", text.strip().lower()).rstrip(".")


def decision_truth(instance) -> Truth:
    """The truth of a :class:`~solvergym.envs.sat.decision.DecisionInstance` (SAT-Bench)."""
    names = list(instance.variables)
    dims = list(instance.dims)
    canonical = set(names)
    by_sentence = {_normal_sentence(v): k for k, v in instance.mapping.items()}

    def align(name: str) -> str | None:
        name = str(name).strip()
        if name in canonical:
            return name
        low = name.lower()
        stem = low.lstrip("('\"[ ")
        if stem.startswith("x"):
            rest = stem[1:]
            nums = _INT.findall(rest)
            if len(nums) == len(dims) and set(_INT.sub("", rest)) <= _SEPARATORS:
                idx = [int(n) for n in nums]
                if all(0 <= i < d for i, d in zip(idx, dims)):
                    return "x(" + ",".join(map(str, idx)) + ")"
        hit = by_sentence.get(_normal_sentence(name))
        if hit is not None:
            return hit
        if name.isdigit() and 1 <= int(name) <= len(names):
            return names[int(name) - 1]
        return None

    return Truth([list(c) for c in instance.clauses], names, align)


_SATURN_INDEX = re.compile(r"^(?:x|v)_?(\d+)$", re.IGNORECASE)


def saturn_truth(instance) -> Truth:
    """The truth of a SATURN :class:`~solvergym.envs.sat.generator.SATInstance`: letters
    ``A``..``Z``, ``A1``.. (SATURN's names), or 1-based indices ``x3``/``v3``/``x_3``/``3``."""
    names = [var_name(i) for i in range(instance.k)]
    canonical = set(names)

    def align(name: str) -> str | None:
        name = str(name).strip()
        if name in canonical:
            return name
        m = _SATURN_INDEX.match(name)
        if m is not None or name.isdigit():
            i = int(m.group(1) if m is not None else name)
            return names[i - 1] if 1 <= i <= len(names) else None
        return None

    return Truth([list(c) for c in instance.clauses], names, align)
