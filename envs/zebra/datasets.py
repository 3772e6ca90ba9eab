"""ZebraLogic's Spring splits (Table 3: 250 / 50 / 700 train / validation / test puzzles over the
four difficulty buckets: Small 80/12/224, Medium 67/12/196, Large 52/13/138, Extra-Large
51/13/142; the library calls the last one ``"X-Large"``, see :data:`.generator.BUCKETS`), built
from the generator by :func:`~..logic_steps.splits.build_splits` (``solvergym dataset spring-zebra``).

Within a bucket, puzzles go round robin over the bucket's sizes in ``BUCKETS`` order (a fixed
order, restarted for every split), so the sizes of one (split, bucket) cell differ in count by at
most one and the first sizes get the extra ones.
"""
from __future__ import annotations

import os
from typing import Any

import numpy as np

from ..instance import Instance
from ..logic_steps.splits import build_splits
from .generator import BUCKETS, DEFAULT_CLUE_WEIGHTS, generate_zebra

__all__ = ["ZEBRA_SPLITS", "build_spring_zebra"]

# Spring Table 3 (App. B.1): category -> split -> instances.
#: ZebraLogic by difficulty bucket ("Extra-Large" in Spring is the library's "X-Large").
ZEBRA_SPLITS: dict[str, dict[str, int]] = {
    "Small": {"train": 80, "val": 12, "test": 224},
    "Medium": {"train": 67, "val": 12, "test": 196},
    "Large": {"train": 52, "val": 13, "test": 138},
    "X-Large": {"train": 51, "val": 13, "test": 142},
}

def build_spring_zebra(out: str | os.PathLike, *, seed: int = 0, scale: float = 1.0,
                       progress: bool = True) -> dict[str, Any]:
    """ZebraLogic's Spring splits (250 / 50 / 700 by bucket) into ``out``; returns the manifest."""
    def make(bucket: str, i: int, rng: np.random.Generator) -> Instance:
        sizes = BUCKETS[bucket]
        return generate_zebra(*sizes[i % len(sizes)], rng)

    generator = {"function": "envs.zebra.generator.generate_zebra", "minimize": True,
                 "clue_weights": DEFAULT_CLUE_WEIGHTS,
                 "sizes": {b: [list(s) for s in BUCKETS[b]] for b in ZEBRA_SPLITS},
                 "spread": "round robin over a bucket's sizes in BUCKETS order, restarted for every split"}
    return build_splits("spring-zebra", out, ZEBRA_SPLITS, make, category="bucket", generator=generator,
                        seed=seed, scale=scale, progress=progress)
