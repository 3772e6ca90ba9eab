"""An independent reference for Zebra tests: every world of a small puzzle and the meaning of a
formula on all of them at once (numpy), written here, apart from the library's Z3 encoding."""
import itertools

import numpy as np


def zebra_worlds(inst) -> dict[str, np.ndarray]:
    """Every Γ_dom world of a small Zebra, ``token -> house`` arrays over the (N!)^M worlds."""
    n = inst.n_houses
    perms = np.array(list(itertools.permutations(range(1, n + 1))))
    idx = np.array(list(itertools.product(range(len(perms)), repeat=len(inst.values))))
    return {t: perms[idx[:, a]][:, j] for a, vs in enumerate(inst.values) for j, t in enumerate(vs)}


def evaluate_on_worlds(node, houses):
    """The value of a parsed formula on every world (a bool array, or an int array for a term)."""
    op = node.op
    if op == "int":
        return node.value
    if op == "name":
        return houses[node.value]
    a = [evaluate_on_worlds(x, houses) for x in node.args]
    if op == "+":
        return a[0] + a[1]
    if op == "-":
        return a[0] - a[1]
    if op == "==":
        return a[0] == a[1]
    if op == "!=":
        return a[0] != a[1]
    if op == "<":
        return a[0] < a[1]
    if op == ">":
        return a[0] > a[1]
    if op == "Not":
        return ~a[0]
    if op == "And":
        return np.logical_and.reduce(a)
    if op == "Or":
        return np.logical_or.reduce(a)
    raise AssertionError(op)
