"""AR-LSAT's Spring splits (Table 3: 300 / 50 training / validation games per game type, and a
test split of AR-LSAT's official shape, 112 ordering, 49 grouping and 69 assignment: 230), built
from the generator by :func:`~..logic_steps.splits.build_splits` (``solvergym dataset spring-lsat``).
"""
from __future__ import annotations

import os
from typing import Any

import numpy as np

from ..instance import Instance
from ..logic_steps.splits import build_splits
from .generator import GAMES, generate_lsat

__all__ = ["LSAT_SPLITS", "build_spring_lsat"]

#: AR-LSAT by game type; the test column is the official test split's.
LSAT_SPLITS: dict[str, dict[str, int]] = {
    "ordering": {"train": 300, "val": 50, "test": 112},
    "grouping": {"train": 300, "val": 50, "test": 49},
    "assignment": {"train": 300, "val": 50, "test": 69},
}

def build_spring_lsat(out: str | os.PathLike, *, seed: int = 0, scale: float = 1.0,
                      progress: bool = True) -> dict[str, Any]:
    """AR-LSAT's Spring splits (300 / 50 per game type, test 112 / 49 / 69) into ``out``."""
    def make(game: str, i: int, rng: np.random.Generator) -> Instance:
        return generate_lsat(rng, game=game)

    generator = {"function": "envs.lsat.generator.generate_lsat", "games": list(GAMES), "max_solutions": 12,
                 "drawn": ["n_entities", "n_groups", "question_type"]}
    return build_splits("spring-lsat", out, LSAT_SPLITS, make, category="game", generator=generator,
                        seed=seed, scale=scale, progress=progress)
