"""Knights & Knaves' Spring splits (Table 3: 300 training and 700 test puzzles, no validation
split, spread evenly over 2..8 characters: the 700 are 100 per size, as K&K's test set; the 300
are 43 per size, 42 for 8 characters), built from the generator by
:func:`~..logic_steps.splits.build_splits` (``solvergym dataset spring-knights``). Two puzzles with
the same statements under other names are the same puzzle.
"""
from __future__ import annotations

import os
from typing import Any

import numpy as np

from ..instance import Instance, canonical_json
from ..logic_steps.splits import build_splits, even_counts
from .generator import generate_knights

__all__ = ["KNIGHTS_SPLITS", "KNIGHTS_PEOPLE", "KNIGHTS_DEPTH", "KNIGHTS_WIDTH", "build_spring_knights"]

#: Knights & Knaves: Table 3 gives only the totals (no validation split); the builder spreads
#: each total evenly over :data:`KNIGHTS_PEOPLE`.
KNIGHTS_SPLITS: dict[str, int] = {"train": 300, "test": 700}
KNIGHTS_PEOPLE = tuple(range(2, 9))
#: statement nesting depth and width of ``generate_knights`` (its defaults, K&K's usual setting)
KNIGHTS_DEPTH = 2
KNIGHTS_WIDTH = 2


def build_spring_knights(out: str | os.PathLike, *, seed: int = 0, scale: float = 1.0,
                         progress: bool = True) -> dict[str, Any]:
    """Knights & Knaves' Spring splits (300 train / 700 test over 2..8 characters) into ``out``."""
    shares = {split: even_counts(total, len(KNIGHTS_PEOPLE)) for split, total in KNIGHTS_SPLITS.items()}
    table = {n: {split: shares[split][j] for split in KNIGHTS_SPLITS} for j, n in enumerate(KNIGHTS_PEOPLE)}

    def make(n_people: int, i: int, rng: np.random.Generator) -> Instance:
        return generate_knights(n_people, rng, depth=KNIGHTS_DEPTH, width=KNIGHTS_WIDTH)

    generator = {"function": "envs.knights.generator.generate_knights", "depth": KNIGHTS_DEPTH,
                 "width": KNIGHTS_WIDTH, "n_people": list(KNIGHTS_PEOPLE),
                 "spread": "each split's total split evenly over n_people, the smaller sizes taking the remainder"}
    return build_splits("spring-knights", out, table, make, category="n_people", generator=generator,
                        key=_knights_key, seed=seed, scale=scale, progress=progress)


def _knights_key(inst: Instance) -> str:
    # the same statements under other names are the same puzzle: with names in the key, renamed
    # training puzzles would reach the test split (small sizes have only a few hundred distinct
    # puzzles)
    return canonical_json([inst.statements, inst.solution])
