"""Spring's split builder (``spring.txt`` §5.1 (a), App. B.1, Table 3), shared by the three
step-verified families; each family's own table and builder live in its folder
(``envs/zebra/datasets.py``, ``envs/lsat/datasets.py``, ``envs/knights/datasets.py``).

AR-LSAT's and K&K's "official" test sets (and ZebraLogic's 1,000 puzzles) are *replaced* by
generated ones of the same shape: nothing is downloaded, and scores on these files are not
comparable with the paper's numbers, only the split sizes are.

Files: ``train.jsonl``, ``val.jsonl`` (where the table has it) and ``test.jsonl``, one record per
line, each exactly ``inst.to_dict()`` (so ``env.reset(options={"instance": record})`` takes it;
the instance classes reject extra keys), category by category in the table's order; and
``manifest.json`` (also returned): name, seed, scale, the counts per category and split, the
generator and its settings, and ``files`` (count and sha256 of each file).

Randomness: one independent stream per (dataset, split, category), ``SeedSequence([seed, 3,
dataset, split, category])`` (``dataset`` the builder's number in :data:`SPRING_DATASETS`), so a
file depends on neither the other categories nor the other splits' sizes. Splits are built in
the order train, val, test with one set of seen instances (their ``key``: the canonical JSON, or
a family's notion of the same puzzle) for the whole dataset: an instance equal to one already
written (in any split) is dropped and redrawn from the same stream, which keeps every split free
of repeats and the splits disjoint. ``scale`` multiplies every cell of the table (rounded half
up, at least 1 for a nonzero cell), so that tests can build a small version quickly; with it,
each cell's instances are a prefix of the full build's (up to such redraws).
"""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Callable

import numpy as np
from tqdm import tqdm

from ..datafiles import stream_rng, write_jsonl
from ..instance import Instance

__all__ = ["SPRING_DATASETS", "SPLITS", "build_splits", "even_counts"]

#: the Spring datasets, in the order that numbers their random streams
SPRING_DATASETS = ("spring-zebra", "spring-lsat", "spring-knights")
SPLITS = ("train", "val", "test")

#: consecutive redraws of one instance after which a category is declared too small to fill
_MAX_REDRAWS = 1000


def even_counts(total: int, k: int) -> list[int]:
    """``total`` split into ``k`` counts as evenly as possible, the first ones larger."""
    return [total // k + (i < total % k) for i in range(k)]


def _scaled(table: dict[Any, dict[str, int]], scale: float) -> dict[Any, dict[str, int]]:
    """Every cell times ``scale``, rounded half up; a nonzero cell keeps at least one instance."""
    return {cat: {split: (max(1, int(n * scale + 0.5)) if n else 0) for split, n in row.items()}
            for cat, row in table.items()}


def build_splits(
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
            rng = stream_rng(seed, 3, dataset, s, c)
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
