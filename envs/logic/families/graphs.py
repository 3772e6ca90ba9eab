"""What the graph families share: drawing G(n, p), checking an edge list read from a record,
writing it in words, and the integer knobs' check."""
from __future__ import annotations

from itertools import combinations, permutations
from typing import Any

import numpy as np

__all__ = ["gnp_edges", "check_edges", "edge_text", "int_knob"]


def int_knob(name: str, value: Any, lo: int, hi: int) -> None:
    if not isinstance(value, (int, np.integer)) or isinstance(value, bool) or not lo <= value <= hi:
        raise ValueError(f"{name} must be an int in [{lo}, {hi}], got {value!r}")


def gnp_edges(n: int, p: float, rng: np.random.Generator, *, directed: bool = False) -> list[list[int]]:
    """Every pair (ordered pair, ``directed``) of ``n`` vertices an edge with probability ``p``;
    sorted ``[u, v]`` lists (u < v undirected)."""
    pairs = list(permutations(range(n), 2) if directed else combinations(range(n), 2))
    keep = rng.random(len(pairs)) < p
    return [[u, v] for (u, v), k in zip(pairs, keep) if k]


def check_edges(edges: Any, n: int, *, directed: bool) -> None:
    if not isinstance(edges, list) or len(edges) > n * n:
        raise ValueError("edges must be a list of [u, v] pairs")
    seen = set()
    for e in edges:
        if not (isinstance(e, list) and len(e) == 2 and all(isinstance(x, int) and not isinstance(x, bool) for x in e)):
            raise ValueError(f"an edge is a pair of vertex numbers, got {e!r}")
        u, v = e
        if not (0 <= u < n and 0 <= v < n) or u == v or (not directed and u > v):
            raise ValueError(f"edge {e} is not a pair of distinct vertices in [0, {n})" + ("" if directed else " with u < v"))
        if (u, v) in seen:
            raise ValueError(f"edge {e} is listed twice")
        seen.add((u, v))


def edge_text(edges: list[list[int]], arrow: str = "-") -> str:
    return ", ".join(f"{u}{arrow}{v}" for u, v in edges) if edges else "none"
