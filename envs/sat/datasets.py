"""SATURN-2.6k and SAT-Bench-shaped datasets: reading published files, building new ones.

Reading: :func:`load_saturn_jsonl` turns SATURN's released JSONL records (``n_sat``, ``k``,
``clause`` such as ``"!A!B!C & A!B!D"``, ``solution``) into :class:`SATInstance` objects usable
with ``env.reset(options={"instance": inst})`` (the raw record dict works there too). Files are
read by :mod:`solvergym.envs.records` (regular files only, bounded size and depth); a record of
the wrong shape or types, or whose ``model_count`` is not the formula's
(:func:`~.generator.check_model_count`: it sets tool mode's chance penalty), is a ``ValueError``
naming ``path:line``, and the same record given to ``reset`` a ``ValueError`` saying what is wrong.

Building (seeded; the same seed writes the same bytes):

- :func:`build_saturn_2_6k`: the SATURN-2.6k shape (``saturn.txt`` §3.2): 1,500 training and 160
  test instances at the training levels, and 10 harder levels x 100 exactly as Table 10 lists
  them. The training levels and their sizes are those of SATURN's released ``data/train``
  (3,5,5) x 250, (3,5,6) x 250, (3,5,13) x 500, (3,5,15) x 500; the paper's 160 same-level test
  instances are 40 per training level (the release ships 20 per level, 80 in all).
- :func:`build_sat_bench`: balanced SAT/UNSAT decision instances with mappings, sized as SAT-RL's
  Table 3 (1,575 train / 525 test), clause counts in SAT-Bench's easy (4-15), medium (20-30)
  and hard (31-50) buckets.

Every SATURN record carries the clauses, the planted solution, D(n,k,l), the model count and the
chance that a random assignment succeeds, next to SATURN's own fields (and prompt).
"""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import numpy as np
from tqdm import tqdm

from ..datafiles import stream_rng, write_jsonl
from ..records import check_value, read_jsonl, where
from .cnf import formula_key, parse_clauses
from .decision import DecisionInstance, decision_instance
from .generator import SATInstance, cached_model_count, sat_construction
from .prompts import saturn_prompt

__all__ = [
    "SATURN_TRAIN_LEVELS",
    "SATURN_TEST_PER_TRAIN_LEVEL",
    "SATURN_HARD_LEVELS",
    "SATBENCH_BUCKETS",
    "instance_from_saturn_record",
    "saturn_record",
    "load_saturn_jsonl",
    "build_saturn_2_6k",
    "build_sat_bench",
    "load_sat_bench_jsonl",
]

#: SATURN's released training levels and sizes (``data/train/Train_prompt_<n>_<k>_<l>_<N>``).
SATURN_TRAIN_LEVELS: tuple[tuple[tuple[int, int, int], int], ...] = (
    ((3, 5, 5), 250),
    ((3, 5, 6), 250),
    ((3, 5, 13), 500),
    ((3, 5, 15), 500),
)
SATURN_TEST_PER_TRAIN_LEVEL = 40
#: Table 10's ten harder levels, in the table's order; 100 instances each.
SATURN_HARD_LEVELS: tuple[tuple[int, int, int], ...] = (
    (3, 7, 40), (3, 5, 25), (3, 5, 20), (3, 6, 20), (3, 7, 20),
    (4, 7, 40), (4, 8, 40), (4, 7, 20), (6, 7, 40), (5, 8, 40),
)
SATURN_HARD_SIZE = 100


def _field(record: dict[str, Any], name: str, kind: type, what: str) -> Any:
    value = record[name]
    if (isinstance(value, bool) and kind is not bool) or not isinstance(value, kind):
        raise ValueError(f"{name} must be {what}, got {type(value).__name__} {value!r:.40}")
    return value


def instance_from_saturn_record(record: dict[str, Any]) -> SATInstance:
    """A SATURN JSONL record -> :class:`SATInstance` (``ValueError`` saying what is wrong).

    ``n_sat`` and ``k`` (ints), ``clause`` and ``solution`` (strings) are required; a field of
    another type is an error, not converted (``int(5.5)`` would silently read 5). ``model_count``
    and ``model_count_exact`` are taken from the record when it has them (files written by
    solvergym), else computed; either way :meth:`SATInstance.validate` recounts or checks the
    count, which the chance penalty of tool mode is computed from.
    """
    if not isinstance(record, dict):
        raise ValueError(f"a SATURN record is a JSON object, got {type(record).__name__}")
    check_value(record)
    missing = [name for name in ("n_sat", "k", "clause", "solution") if name not in record]
    if missing:
        raise ValueError(f"a SATURN record needs n_sat, k, clause and solution; missing {missing}")
    n = _field(record, "n_sat", int, "an int")
    k = _field(record, "k", int, "an int")
    text = _field(record, "clause", str, "a string")
    solution = _field(record, "solution", str, "a string of bits")
    clauses = parse_clauses(text, k)
    if any(len(c) != n for c in clauses):
        raise ValueError(f"record says n_sat={n} but has clauses of other widths")
    if "model_count_exact" in record:
        _field(record, "model_count_exact", bool, "a bool")
    if "model_count" in record:
        count, exact = record["model_count"], record.get("model_count_exact", True)
    else:
        count, exact = cached_model_count(clauses, k)  # cached: validate() recounts the same formula
    inst = SATInstance(n=n, k=k, clauses=clauses, solution=solution, model_count=count, model_count_exact=exact)
    inst.checked_validate()
    return inst


def saturn_record(inst: SATInstance, id_: int) -> dict[str, Any]:
    """The JSONL record of ``inst``: SATURN's fields first, then solvergym's statistics."""
    clause = inst.clause_string
    return {
        "id": id_,
        "n_sat": inst.n,
        "k": inst.k,
        "solution": inst.solution,
        "clause": clause,
        "prompt": saturn_prompt(inst, clause),
        "l": inst.l,
        "difficulty": inst.difficulty,
        "model_count": inst.model_count,
        "model_count_exact": inst.model_count_exact,
        "chance_success": inst.chance_success,
    }


def load_saturn_jsonl(path: str | os.PathLike) -> list[SATInstance]:
    """Read a SATURN JSONL file (released or built here); a bad record is a ``ValueError`` naming
    ``path:line`` (:func:`_read_jsonl`)."""
    return _read_jsonl(path, instance_from_saturn_record)


def _read_jsonl(path: str | os.PathLike, parse) -> list:
    """``parse`` of every record of a JSON Lines file, read by :func:`~solvergym.envs.records.read_jsonl`
    (a regular, bounded file; lines bounded in length and depth). The first bad record raises a
    ``ValueError`` starting ``path:line:``; a wrong type ``parse`` trips on is reported the same way."""
    out = []
    for lineno, record, error in read_jsonl(path):
        if error is None:
            try:
                out.append(parse(record))
                continue
            except ValueError as e:
                error = str(e)
            except (TypeError, AttributeError, KeyError, IndexError) as e:
                error = f"a field has the wrong type ({type(e).__name__}: {e})"
        raise ValueError(f"{where(path, lineno)}: {error}")
    return out


def build_saturn_2_6k(
    out: str | os.PathLike,
    *,
    seed: int = 0,
    max_chance_success: float | None = None,
    progress: bool = True,
) -> dict[str, Any]:
    """Write the SATURN-2.6k shape into ``out``; return the manifest (also ``manifest.json``).

    Files: ``train.jsonl`` (1,500, the four training levels in curriculum order),
    ``test.jsonl`` (160, disjoint from train), ``test_levels/n<n>_k<k>_length<l>_sample100.jsonl``
    (Table 10's levels, SATURN's file names). Instances come from :func:`sat_construction`.
    """
    out = Path(out)
    files: dict[str, dict[str, Any]] = {}
    train, test = [], []
    jobs = [("train", lvl, size) for lvl, size in SATURN_TRAIN_LEVELS] + [
        ("hard", lvl, SATURN_HARD_SIZE) for lvl in SATURN_HARD_LEVELS
    ]
    bar = tqdm(jobs, desc="saturn-2.6k", unit="level", disable=not progress)
    for split, (n, k, l), size in bar:
        bar.set_postfix_str(f"({n},{k},{l})")
        if split == "train":
            # train and same-level test drawn together, so they are distinct formulas
            insts = sat_construction(n, k, l, size + SATURN_TEST_PER_TRAIN_LEVEL, stream_rng(seed, 0, n, k, l),
                                     max_chance_success=max_chance_success)
            train += insts[:size]
            test += insts[size:]
        else:
            insts = sat_construction(n, k, l, size, stream_rng(seed, 1, n, k, l),
                                     max_chance_success=max_chance_success)
            name = f"test_levels/n{n}_k{k}_length{l}_sample{size}.jsonl"
            files[name] = {"count": size, "level": [n, k, l],
                           "sha256": write_jsonl(out / name, (saturn_record(x, i) for i, x in enumerate(insts)))}
    files["train.jsonl"] = {"count": len(train),
                            "sha256": write_jsonl(out / "train.jsonl", (saturn_record(x, i) for i, x in enumerate(train)))}
    files["test.jsonl"] = {"count": len(test),
                           "sha256": write_jsonl(out / "test.jsonl", (saturn_record(x, i) for i, x in enumerate(test)))}
    manifest = {
        "name": "saturn-2.6k",
        "seed": seed,
        "generator": "SAT_Construction (saturn.txt App. B), pool cap 100,000",
        "train_levels": [[list(lvl), size] for lvl, size in SATURN_TRAIN_LEVELS],
        "test_per_train_level": SATURN_TEST_PER_TRAIN_LEVEL,
        "hard_levels": [list(lvl) for lvl in SATURN_HARD_LEVELS],
        "max_chance_success": max_chance_success,
        "total": sum(f["count"] for f in files.values()),
        "files": dict(sorted(files.items())),
    }
    (out / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    return manifest


#: SAT-Bench's clause-count buckets and the variable grids used for each (more variables for more
#: clauses, so that both labels stay reachable by rejection).
SATBENCH_BUCKETS: dict[str, tuple[tuple[int, int], tuple[tuple[int, ...], ...]]] = {
    "easy": ((4, 15), ((3, 2), (2, 2, 2), (3, 2, 2))),
    "medium": ((20, 30), ((3, 3, 2), (4, 2, 2), (4, 3, 2))),
    "hard": ((31, 50), ((4, 3, 2), (4, 4, 2), (5, 3, 2))),
}
_RECORD_EXTRAS = ("id", "split", "bucket", "label", "prompt")


def build_sat_bench(
    out: str | os.PathLike,
    *,
    seed: int = 0,
    n_train: int = 1575,
    n_test: int = 525,
    sat_ratio: float = 0.5,
    progress: bool = True,
) -> dict[str, Any]:
    """Write balanced SAT-Bench-style ``train.jsonl`` / ``test.jsonl`` (with mappings) into ``out``.

    Exactly ``round(sat_ratio * size)`` instances of each split are satisfiable; buckets are
    assigned in turn (easy, medium, hard). Test formulas never repeat a training formula.
    """
    out = Path(out)
    files = {}
    seen: set = set()
    for split_code, (split, size) in enumerate((("train", n_train), ("test", n_test))):
        rng = stream_rng(seed, 2, split_code)
        n_sat = round(sat_ratio * size)
        labels = np.array([True] * n_sat + [False] * (size - n_sat))[rng.permutation(size)]
        records = []
        buckets = list(SATBENCH_BUCKETS)
        for i in tqdm(range(size), desc=f"sat-bench {split}", unit="inst", disable=not progress):
            bucket = buckets[i % len(buckets)]
            (lo, hi), grids = SATBENCH_BUCKETS[bucket]
            while True:
                dims = list(grids[rng.integers(len(grids))])
                inst = decision_instance(dims, int(rng.integers(lo, hi + 1)), rng, satisfiable=bool(labels[i]))
                key = formula_key(inst.clauses)
                if key not in seen:
                    seen.add(key)
                    break
            rec = {"id": i, "split": split, "bucket": bucket, "label": "SAT" if inst.satisfiable else "UNSAT"}
            rec.update(inst.to_dict())
            records.append(rec)
        files[f"{split}.jsonl"] = {"count": size, "satisfiable": n_sat,
                                   "sha256": write_jsonl(out / f"{split}.jsonl", records)}
    manifest = {"name": "sat-bench", "seed": seed, "sat_ratio": sat_ratio,
                "buckets": {b: {"clauses": list(r), "dims": [list(g) for g in gs]}
                            for b, (r, gs) in SATBENCH_BUCKETS.items()},
                "files": files}
    (out / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    return manifest


def decision_from_record(record: dict[str, Any]) -> DecisionInstance:
    """A SAT-Bench record written by :func:`build_sat_bench` -> :class:`DecisionInstance`."""
    if not isinstance(record, dict):
        raise ValueError(f"a SAT-Bench record is a JSON object, got {type(record).__name__}")
    return DecisionInstance.from_dict({k: v for k, v in record.items() if k not in _RECORD_EXTRAS})


def load_sat_bench_jsonl(path: str | os.PathLike) -> list[DecisionInstance]:
    """Read a sat-bench JSONL file; every record's certificate is re-checked."""
    return _read_jsonl(path, decision_from_record)
