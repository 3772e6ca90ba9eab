"""Spring-shaped datasets for ZebraLogic, AR-LSAT and Knights & Knaves, built from this library's generators.

Spring (``spring.txt`` §5.1 (a), App. B.1, Table 3) trains and evaluates on three benchmarks with
these splits; the builders here write seeded stand-ins of exactly that shape (the same seed writes
the same bytes):

- :func:`build_spring_zebra` (``spring-zebra``): 250 / 50 / 700 train / validation / test puzzles
  over the four difficulty buckets of Table 3 (Small 80/12/224, Medium 67/12/196, Large 52/13/138,
  Extra-Large 51/13/142; the library calls the last one ``"X-Large"``, see
  :data:`~solvergym.envs.zebra.generator.BUCKETS`). Within a bucket, puzzles go round robin over
  the bucket's sizes in ``BUCKETS`` order (a fixed order, restarted for every split), so the
  sizes of one (split, bucket) cell differ in count by at most one and the first sizes get the
  extra ones.
- :func:`build_spring_lsat` (``spring-lsat``): 300 / 50 training / validation games per game type
  (ordering, grouping, assignment) and a test split of AR-LSAT's official shape, 112 ordering,
  49 grouping and 69 assignment (230).
- :func:`build_spring_knights` (``spring-knights``): 300 training and 700 test puzzles, no
  validation split, spread evenly over 2..8 characters (the 700 are 100 per size, as K&K's test
  set; the 300 are 43 per size, 42 for 8 characters).

AR-LSAT's and K&K's "official" test sets (and ZebraLogic's 1,000 puzzles) are *replaced* by
generated ones of the same shape: nothing is downloaded, and scores on these files are not
comparable with the paper's numbers, only the split sizes are.

Files: ``train.jsonl``, ``val.jsonl`` (not for knights) and ``test.jsonl``, one record per line,
each exactly ``inst.to_dict()`` (so ``env.reset(options={"instance": record})`` takes it; the
instance classes reject extra keys), category by category in the table's order; and
``manifest.json`` (also returned): name, seed, scale, the counts per category and split, the
generator and its settings, and ``files`` (count and sha256 of each file).

Randomness: one independent stream per (dataset, split, category), ``SeedSequence([seed, dataset,
split, category])``, so a file depends on neither the other categories nor the other splits'
sizes. Splits are built in the order train, val, test with one set of seen instances (their
canonical JSON; for Knights & Knaves the statements and solution, names aside) for the whole
dataset: an instance equal to one already written (in any split) is dropped and redrawn from the
same stream, which keeps every split free of repeats and the
splits disjoint. ``scale`` multiplies every cell of the table (rounded half up, at least 1 for a
nonzero cell), so that tests can build a small version quickly; with it, each cell's instances
are a prefix of the full build's (up to such redraws).
"""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Callable

import numpy as np
from tqdm import tqdm

from ..base import Instance, canonical_json
from ..knights.generator import generate_knights
from ..lsat.generator import GAMES, generate_lsat
from ..sat.datasets import _level_rng, write_jsonl
from ..zebra.generator import BUCKETS, DEFAULT_CLUE_WEIGHTS, generate_zebra

__all__ = [
    "SPRING_DATASETS",
    "SPLITS",
    "ZEBRA_SPLITS",
    "LSAT_SPLITS",
    "KNIGHTS_SPLITS",
    "KNIGHTS_PEOPLE",
    "KNIGHTS_DEPTH",
    "KNIGHTS_WIDTH",
    "build_spring",
    "build_spring_zebra",
    "build_spring_lsat",
    "build_spring_knights",
]

SPRING_DATASETS = ("spring-zebra", "spring-lsat", "spring-knights")
SPLITS = ("train", "val", "test")

# Spring Table 3 (App. B.1): category -> split -> instances.
#: ZebraLogic by difficulty bucket ("Extra-Large" in Spring is the library's "X-Large").
ZEBRA_SPLITS: dict[str, dict[str, int]] = {
    "Small": {"train": 80, "val": 12, "test": 224},
    "Medium": {"train": 67, "val": 12, "test": 196},
    "Large": {"train": 52, "val": 13, "test": 138},
    "X-Large": {"train": 51, "val": 13, "test": 142},
}
#: AR-LSAT by game type; the test column is the official test split's.
LSAT_SPLITS: dict[str, dict[str, int]] = {
    "ordering": {"train": 300, "val": 50, "test": 112},
    "grouping": {"train": 300, "val": 50, "test": 49},
    "assignment": {"train": 300, "val": 50, "test": 69},
}
#: Knights & Knaves: Table 3 gives only the totals (no validation split); the builder spreads
#: each total evenly over :data:`KNIGHTS_PEOPLE`.
KNIGHTS_SPLITS: dict[str, int] = {"train": 300, "test": 700}
KNIGHTS_PEOPLE = tuple(range(2, 9))
#: statement nesting depth and width of ``generate_knights`` (its defaults, K&K's usual setting)
KNIGHTS_DEPTH = 2
KNIGHTS_WIDTH = 2

#: consecutive redraws of one instance after which a category is declared too small to fill
_MAX_REDRAWS = 1000


def _even(total: int, k: int) -> list[int]:
    """``total`` split into ``k`` counts as evenly as possible, the first ones larger."""
    return [total // k + (i < total % k) for i in range(k)]


def _scaled(table: dict[Any, dict[str, int]], scale: float) -> dict[Any, dict[str, int]]:
    """Every cell times ``scale``, rounded half up; a nonzero cell keeps at least one instance."""
    return {cat: {split: (max(1, int(n * scale + 0.5)) if n else 0) for split, n in row.items()}
            for cat, row in table.items()}


def _build(
    name: str,
    out: str | os.PathLike,
    table: dict[Any, dict[str, int]],
    make: Callable[[Any, int, np.random.Generator], Instance],
    *,
    category: str,
    generator: dict[str, Any],
    key: Callable[[Instance], str] = Instance.to_json,
    seed: int,
    scale: float,
    progress: bool,
) -> dict[str, Any]:
    """Write one Spring dataset: ``table`` is category -> split -> count at scale 1 and
    ``make(category, i, rng)`` draws the ``i``-th instance of a (split, category) cell; ``key``
    says when two instances are the same one."""
    if not scale > 0:
        raise ValueError(f"scale must be > 0, got {scale!r}")
    out = Path(out)
    counts = _scaled(table, scale)
    splits = [s for s in SPLITS if any(s in row for row in counts.values())]
    dataset = SPRING_DATASETS.index(name)
    seen: set[str] = set()
    files: dict[str, dict[str, Any]] = {}
    bar = tqdm(total=sum(sum(row.values()) for row in counts.values()), desc=name, unit="inst",
               disable=not progress)
    for s, split in enumerate(SPLITS):
        if split not in splits:
            continue
        records = []
        for c, (cat, row) in enumerate(counts.items()):
            bar.set_postfix_str(f"{split} {cat}")
            rng = _level_rng(seed, 3, dataset, s, c)
            for i in range(row.get(split, 0)):
                for _ in range(_MAX_REDRAWS):
                    inst = make(cat, i, rng)
                    k = key(inst)
                    if k not in seen:
                        break
                else:
                    raise RuntimeError(f"{name}: {_MAX_REDRAWS} redraws in a row repeated earlier "
                                       f"instances ({split}, {category} {cat}); too few distinct ones")
                seen.add(k)
                records.append(inst.to_dict())
                bar.update()
        files[f"{split}.jsonl"] = {"count": len(records), "sha256": write_jsonl(out / f"{split}.jsonl", records)}
    bar.close()
    manifest = {
        "name": name,
        "seed": seed,
        "scale": scale,
        "source": "Spring Table 3 (App. B.1) split sizes; instances generated here, nothing downloaded",
        "category": category,
        "splits": splits,
        "counts": {str(cat): row for cat, row in counts.items()},
        "totals": {split: sum(row.get(split, 0) for row in counts.values()) for split in splits},
        "generator": generator,
        "files": files,
    }
    (out / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    return manifest


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
    return _build("spring-zebra", out, ZEBRA_SPLITS, make, category="bucket", generator=generator,
                  seed=seed, scale=scale, progress=progress)


def build_spring_lsat(out: str | os.PathLike, *, seed: int = 0, scale: float = 1.0,
                      progress: bool = True) -> dict[str, Any]:
    """AR-LSAT's Spring splits (300 / 50 per game type, test 112 / 49 / 69) into ``out``."""
    def make(game: str, i: int, rng: np.random.Generator) -> Instance:
        return generate_lsat(rng, game=game)

    generator = {"function": "envs.lsat.generator.generate_lsat", "games": list(GAMES), "max_solutions": 12,
                 "drawn": ["n_entities", "n_groups", "question_type"]}
    return _build("spring-lsat", out, LSAT_SPLITS, make, category="game", generator=generator,
                  seed=seed, scale=scale, progress=progress)


def build_spring_knights(out: str | os.PathLike, *, seed: int = 0, scale: float = 1.0,
                         progress: bool = True) -> dict[str, Any]:
    """Knights & Knaves' Spring splits (300 train / 700 test over 2..8 characters) into ``out``."""
    shares = {split: _even(total, len(KNIGHTS_PEOPLE)) for split, total in KNIGHTS_SPLITS.items()}
    table = {n: {split: shares[split][j] for split in KNIGHTS_SPLITS} for j, n in enumerate(KNIGHTS_PEOPLE)}

    def make(n_people: int, i: int, rng: np.random.Generator) -> Instance:
        return generate_knights(n_people, rng, depth=KNIGHTS_DEPTH, width=KNIGHTS_WIDTH)

    generator = {"function": "envs.knights.generator.generate_knights", "depth": KNIGHTS_DEPTH,
                 "width": KNIGHTS_WIDTH, "n_people": list(KNIGHTS_PEOPLE),
                 "spread": "each split's total split evenly over n_people, the smaller sizes taking the remainder"}
    return _build("spring-knights", out, table, make, category="n_people", generator=generator,
                  key=_knights_key, seed=seed, scale=scale, progress=progress)


def _knights_key(inst: Instance) -> str:
    # the same statements under other names are the same puzzle: with names in the key, 16 of
    # the 100 two-character test puzzles were training puzzles renamed (of ~670 distinct ones)
    return canonical_json([inst.statements, inst.solution])


_BUILDERS = {
    "spring-zebra": build_spring_zebra,
    "spring-lsat": build_spring_lsat,
    "spring-knights": build_spring_knights,
}


def build_spring(name: str, out: str | os.PathLike, **kw: Any) -> dict[str, Any]:
    """Build the Spring dataset ``name`` (one of :data:`SPRING_DATASETS`); ``kw`` go to its builder."""
    try:
        builder = _BUILDERS[name]
    except KeyError:
        raise ValueError(f"unknown Spring dataset {name!r}; choose one of {', '.join(SPRING_DATASETS)}") from None
    return builder(out, **kw)
