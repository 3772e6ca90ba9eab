"""Fast seeded draws for the generators.

A scalar call on a ``numpy.random.Generator`` costs about a microsecond of Python overhead, which
dominates a Knights & Knaves generator that needs thousands of small draws per second. :class:`Draws`
pulls uniform doubles from the env's generator in blocks and serves integers from them, so the
stream (and every instance) is still a pure function of the generator's seed.
"""
from __future__ import annotations

import numpy as np

__all__ = ["BLOCK", "Draws", "as_rng"]

#: doubles fetched from numpy at a time; a generator that serves the same draws another way
#: (envs/knights/generator.py) fetches the same blocks, so a seed gives the same instances
BLOCK = 512


def as_rng(seed: np.random.Generator | int | None) -> np.random.Generator:
    return seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)


class Draws:
    """Uniform integers, choices and shuffles served from blocks of ``rng.random``."""

    def __init__(self, rng: np.random.Generator | int | None):
        self.rng = as_rng(rng)
        self._buf: list[float] = []
        self._i = 0

    def random(self) -> float:
        if self._i >= len(self._buf):
            self._buf = self.rng.random(BLOCK).tolist()
            self._i = 0
        u = self._buf[self._i]
        self._i += 1
        return u

    def below(self, n: int) -> int:
        """Uniform in ``0..n-1``."""
        return min(int(self.random() * n), n - 1)

    def between(self, lo: int, hi: int) -> int:
        """Uniform in ``lo..hi`` (inclusive)."""
        return lo + self.below(hi - lo + 1)

    def choice(self, seq):
        return seq[self.below(len(seq))]

    def weighted(self, cumulative: list[float]) -> int:
        """Index drawn with probabilities given by an increasing cumulative list ending at 1."""
        u = self.random() * cumulative[-1]
        for i, c in enumerate(cumulative):
            if u < c:
                return i
        return len(cumulative) - 1

    def shuffle(self, seq: list) -> list:
        """A shuffled copy (Fisher-Yates)."""
        out = list(seq)
        for i in range(len(out) - 1, 0, -1):
            j = self.below(i + 1)
            out[i], out[j] = out[j], out[i]
        return out

    def sample(self, seq, k: int) -> list:
        return self.shuffle(seq)[:k]
