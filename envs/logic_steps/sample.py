"""Formulas evaluated on a sample of random Γ_dom worlds with numpy: a cheap test of difference.

Def. 4 asks whether a step is equivalent to some premise modulo Γ_dom. Two formulas that differ
on any world satisfying Γ_dom are not equivalent, so evaluating the step and every premise on a
fixed sample of such worlds (drawn by the family's :meth:`Theory.sample_worlds`) rules out almost
every premise without a solver call; only premises that agree with the step on the whole sample
go to Z3. The filter is sound by construction (it only ever says "different" when a world shows
it), so verdicts do not depend on it — only the number of solver calls does.
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from .formula import Node

__all__ = ["WorldSample", "evaluate_sample", "truth_mask"]


class WorldSample:
    """``size`` worlds; ``name(x)`` gives an int array (a number per world), ``pred(op, args)`` a
    bool array (``Assign``, ``Knight``, ``Knave``)."""

    def __init__(self, size: int, name: Callable[[str], np.ndarray],
                 pred: Callable[[str, list[str]], np.ndarray]):
        self.size = size
        self.name = name
        self.pred = pred


def evaluate_sample(node: Node, w: WorldSample, options: dict[str, np.ndarray] | None = None) -> np.ndarray:
    """The formula's value on every sampled world (bool or int64 array)."""
    op = node.op
    if op == "int":
        return np.full(w.size, node.value, dtype=np.int64)
    if op == "bool":
        return np.full(w.size, bool(node.value))
    if op == "name":
        return w.name(str(node.value))
    if op == "":
        return evaluate_sample(node.args[0], w, options)
    if op in ("Assign", "Knight", "Knave"):
        return w.pred(op, [str(a.value) for a in node.args])
    if op == "Unsat":
        if not options or str(node.args[0].value) not in options:
            raise KeyError(node.args[0].value)
        return ~options[str(node.args[0].value)]
    a = [evaluate_sample(x, w, options) for x in (node.args[1:] if op in ("AtLeast", "AtMost", "Exactly")
                                                  else node.args)]
    if op == "+":
        return a[0] + a[1]
    if op == "-":
        return a[0] - a[1]
    if op == "neg":
        return -a[0]
    if op == "==":
        return a[0] == a[1]
    if op == "!=":
        return a[0] != a[1]
    if op == "<":
        return a[0] < a[1]
    if op == ">":
        return a[0] > a[1]
    if op == "<=":
        return a[0] <= a[1]
    if op == ">=":
        return a[0] >= a[1]
    if op == "Not":
        return ~a[0]
    if op == "And":
        return np.logical_and.reduce(a)
    if op == "Or":
        return np.logical_or.reduce(a)
    if op == "Xor":
        return a[0] ^ a[1]
    if op == "Implies":
        return ~a[0] | a[1]
    k = int(node.args[0].value)
    count = np.sum([x.astype(np.int64) for x in a], axis=0)
    if op == "AtLeast":
        return count >= k
    if op == "AtMost":
        return count <= k
    if op == "Exactly":
        return count == k
    raise ValueError(f"cannot evaluate {op!r}")


def truth_mask(node: Node, w: WorldSample, options: dict[str, np.ndarray] | None = None) -> np.ndarray | None:
    """The formula's truth value on every sampled world, or None where it has none there (not
    a statement, or a name or predicate the sample cannot evaluate)."""
    try:
        m = evaluate_sample(node, w, options)
    except (KeyError, ValueError, IndexError, TypeError):
        return None
    return m if m.dtype == bool and m.shape == (w.size,) else None
