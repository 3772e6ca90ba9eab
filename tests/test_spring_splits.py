"""The Spring-shaped datasets (each family's ``datasets.py`` over ``envs/logic_steps/splits.py``):
Table 3's split sizes, seeded bytes, disjoint splits, records the envs accept."""
import hashlib
import json
from collections import Counter
from pathlib import Path
from types import SimpleNamespace

import gymnasium as gym
import pytest

from solvergym.agents.scripted import oracle_action  # importing solvergym registers the envs
from solvergym.envs.instance import canonical_json
from solvergym.envs.knights import datasets as knights_data
from solvergym.envs.knights.generator import generate_knights
from solvergym.envs.logic_steps.splits import SPRING_DATASETS
from solvergym.envs.lsat import datasets as lsat_data
from solvergym.envs.zebra import datasets as zebra_data
from solvergym.envs.zebra.generator import BUCKETS, bucket_of

#: each family's split builder lives in its own folder; one name per Spring dataset
BUILDERS = {"spring-zebra": zebra_data.build_spring_zebra, "spring-lsat": lsat_data.build_spring_lsat,
            "spring-knights": knights_data.build_spring_knights}
D = SimpleNamespace(SPRING_DATASETS=SPRING_DATASETS, ZEBRA_SPLITS=zebra_data.ZEBRA_SPLITS,
                    LSAT_SPLITS=lsat_data.LSAT_SPLITS, KNIGHTS_SPLITS=knights_data.KNIGHTS_SPLITS,
                    KNIGHTS_PEOPLE=knights_data.KNIGHTS_PEOPLE, build_spring=lambda name, out, **kw: BUILDERS[name](out, **kw),
                    **{f.__name__: f for f in BUILDERS.values()})

# Spring Table 3 (App. B.1), copied by hand: category -> (train, validation, test).
TABLE3_ZEBRA = {"Small": (80, 12, 224), "Medium": (67, 12, 196), "Large": (52, 13, 138), "Extra-Large": (51, 13, 142)}
TABLE3_LSAT = {"Ordering": (300, 50, 112), "Grouping": (300, 50, 49), "Assignment": (300, 50, 69)}
TABLE3_KNIGHTS_TOTAL = (300, None, 700)

SCALE = 0.05
# the cells above times 0.05, rounded half up by hand (at least 1): e.g. 67 -> 3.35 -> 3, 196 -> 9.8 -> 10
SMALL_ZEBRA = {"Small": (4, 1, 11), "Medium": (3, 1, 10), "Large": (3, 1, 7), "X-Large": (3, 1, 7)}
SMALL_LSAT = {"ordering": (15, 3, 6), "grouping": (15, 3, 2), "assignment": (15, 3, 3)}
# 300 over 2..8 characters is 43 x 6 + 42 (-> 2 each at 0.05), 700 is 100 x 7 (-> 5 each)
SMALL_KNIGHTS = {n: (2, 0, 5) for n in range(2, 9)}

ENV_IDS = {"spring-zebra": "SolverZebra-v0", "spring-lsat": "SolverLSAT-v0", "spring-knights": "SolverKnights-v0"}
CATEGORY = {
    "spring-zebra": lambda r: bucket_of(r["n_houses"], len(r["attributes"])),
    "spring-lsat": lambda r: r["game"],
    "spring-knights": lambda r: len(r["names"]),
}
EXPECTED = {"spring-zebra": SMALL_ZEBRA, "spring-lsat": SMALL_LSAT, "spring-knights": SMALL_KNIGHTS}


def read(path):
    return [json.loads(line) for line in Path(path).read_text().splitlines()]


def splits_of(name):
    return ("train", "test") if name == "spring-knights" else ("train", "val", "test")


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    out = {}
    for name in D.SPRING_DATASETS:
        path = tmp_path_factory.mktemp(name)
        out[name] = (path, D.build_spring(name, path, seed=0, scale=SCALE, progress=False))
    return out


def test_constants_are_table_3():
    assert D.SPRING_DATASETS == ("spring-zebra", "spring-lsat", "spring-knights")
    zebra = {("Extra-Large" if b == "X-Large" else b): (r["train"], r["val"], r["test"]) for b, r in D.ZEBRA_SPLITS.items()}
    assert zebra == TABLE3_ZEBRA and list(D.ZEBRA_SPLITS) == list(BUCKETS)
    assert {g.capitalize(): (r["train"], r["val"], r["test"]) for g, r in D.LSAT_SPLITS.items()} == TABLE3_LSAT
    assert D.KNIGHTS_SPLITS == {"train": TABLE3_KNIGHTS_TOTAL[0], "test": TABLE3_KNIGHTS_TOTAL[2]}
    assert D.KNIGHTS_PEOPLE == (2, 3, 4, 5, 6, 7, 8)
    totals = [tuple(sum(r.get(s, 0) for r in t.values()) for s in ("train", "val", "test"))
              for t in (D.ZEBRA_SPLITS, D.LSAT_SPLITS)]
    assert totals == [(250, 50, 700), (900, 150, 230)]
    assert (D.KNIGHTS_SPLITS["train"], D.KNIGHTS_SPLITS.get("val", 0), D.KNIGHTS_SPLITS["test"]) == (300, 0, 700)


@pytest.mark.parametrize("name", D.SPRING_DATASETS)
def test_small_build_has_the_scaled_counts(built, name):
    path, manifest = built[name]
    splits = splits_of(name)
    assert sorted(p.name for p in path.iterdir()) == sorted([f"{s}.jsonl" for s in splits] + ["manifest.json"])
    assert json.loads((path / "manifest.json").read_text()) == manifest
    assert manifest["name"] == name and manifest["seed"] == 0 and manifest["scale"] == SCALE
    assert manifest["splits"] == list(splits)
    want = EXPECTED[name]
    for j, split in enumerate(("train", "val", "test")):
        if split not in splits:
            assert all(cell[j] == 0 for cell in want.values())
            continue
        data = (path / f"{split}.jsonl").read_bytes()
        records = read(path / f"{split}.jsonl")
        got = Counter(CATEGORY[name](r) for r in records)
        assert got == {cat: cell[j] for cat, cell in want.items()}, split
        assert manifest["files"][f"{split}.jsonl"] == {"count": len(records), "sha256": hashlib.sha256(data).hexdigest()}
        assert {str(cat): manifest["counts"][str(cat)][split] for cat in want} == {str(c): v[j] for c, v in want.items()}
        assert manifest["totals"][split] == sum(cell[j] for cell in want.values())


def test_zebra_sizes_round_robin_within_a_bucket(built):
    path, manifest = built["spring-zebra"]
    for split in ("train", "val", "test"):
        records = read(path / f"{split}.jsonl")
        # category-major: the buckets come in BUCKETS order
        buckets = [bucket_of(r["n_houses"], len(r["attributes"])) for r in records]
        assert buckets == sorted(buckets, key=list(BUCKETS).index)
        for bucket, sizes in BUCKETS.items():
            got = [(r["n_houses"], len(r["attributes"])) for r, b in zip(records, buckets) if b == bucket]
            assert got == [sizes[i % len(sizes)] for i in range(len(got))]
    assert manifest["generator"]["sizes"]["X-Large"] == [[5, 5], [5, 6], [6, 4], [6, 5], [6, 6]]


@pytest.mark.parametrize("name", D.SPRING_DATASETS)
def test_splits_are_disjoint(built, name):
    path, _ = built[name]
    keys = [canonical_json(r) for s in splits_of(name) for r in read(path / f"{s}.jsonl")]
    assert len(keys) == sum(sum(c) for c in EXPECTED[name].values())
    assert len(set(keys)) == len(keys)


@pytest.mark.parametrize("name", D.SPRING_DATASETS)
def test_same_seed_same_bytes_other_seed_differs(built, name, tmp_path):
    path, manifest = built[name]
    again = D.build_spring(name, tmp_path / "again", seed=0, scale=SCALE, progress=False)
    assert again == manifest
    for f in manifest["files"]:
        assert (tmp_path / "again" / f).read_bytes() == (path / f).read_bytes()
    other = D.build_spring(name, tmp_path / "other", seed=1, scale=SCALE, progress=False)
    assert all(other["files"][f]["count"] == manifest["files"][f]["count"] for f in manifest["files"])
    for f in manifest["files"]:
        assert other["files"][f]["sha256"] != manifest["files"][f]["sha256"]
        assert not {canonical_json(r) for r in read(tmp_path / "other" / f)} & {canonical_json(r) for r in read(path / f)}


def test_a_split_does_not_depend_on_the_other_splits_sizes(built, tmp_path):
    # test cells come from their own streams: at a larger scale each (split, category) cell of the
    # small build is a prefix of the larger one's
    path, _ = built["spring-knights"]
    D.build_spring_knights(tmp_path, seed=0, scale=0.1, progress=False)
    for split in ("train", "test"):
        small, big = read(path / f"{split}.jsonl"), read(tmp_path / f"{split}.jsonl")
        for n in D.KNIGHTS_PEOPLE:
            s = [r for r in small if len(r["names"]) == n]
            b = [r for r in big if len(r["names"]) == n]
            assert len(b) > len(s) and b[:len(s)] == s


@pytest.mark.parametrize("name", D.SPRING_DATASETS)
def test_records_load_in_the_env_and_the_oracle_is_correct(built, name):
    path, _ = built[name]
    env = gym.make(ENV_IDS[name]).unwrapped
    for split in splits_of(name):
        records = read(path / f"{split}.jsonl")
        assert all(set(r) == set(records[0]) for r in records)  # nothing but the instance's fields
        for rec in (records[0], records[-1]):
            env.reset(options={"instance": rec})
            assert env.instance.to_dict() == rec
            *_, info = env.step(oracle_action(env))
            assert info["correct"] is True


def _fake_knights(pool_size):
    pools = {}

    def fake(n_people, rng, *, depth, width):
        # only pool_size distinct puzzles per size, so repeats are certain
        pool = pools.setdefault(n_people, [generate_knights(n_people, s, depth=depth, width=width)
                                           for s in range(pool_size)])
        fake.calls += 1
        return pool[int(rng.integers(pool_size))]

    fake.calls = 0
    return fake


def test_repeats_are_redrawn_so_splits_stay_disjoint(monkeypatch, tmp_path):
    fake = _fake_knights(9)  # 7 puzzles per size are needed (2 train + 5 test)
    monkeypatch.setattr(knights_data, "generate_knights", fake)
    manifest = D.build_spring_knights(tmp_path, seed=0, scale=SCALE, progress=False)
    keys = [canonical_json(r) for s in ("train", "test") for r in read(tmp_path / f"{s}.jsonl")]
    assert len(keys) == len(set(keys)) == 49 == sum(f["count"] for f in manifest["files"].values())
    assert fake.calls > 49


def test_too_few_distinct_instances_is_an_error(monkeypatch, tmp_path):
    monkeypatch.setattr(knights_data, "generate_knights", _fake_knights(3))
    with pytest.raises(RuntimeError, match="redraws"):
        D.build_spring_knights(tmp_path, seed=0, scale=SCALE, progress=False)


def test_scale_rounding_and_errors(tmp_path):
    m = D.build_spring_lsat(tmp_path, scale=0.001, progress=False)
    assert m["counts"] == {g: {"train": 1, "val": 1, "test": 1} for g in ("ordering", "grouping", "assignment")}
    with pytest.raises(ValueError, match="scale"):
        D.build_spring_zebra(tmp_path, scale=0, progress=False)


def test_knights_splits_share_no_puzzle_even_renamed(tmp_path):
    # names aside, two-character puzzles are few (~670 at depth 2, width 2): with names in the
    # key, 16 of the 100 two-character test puzzles were training puzzles renamed
    manifest = D.build_spring_knights(tmp_path, seed=0, progress=False)
    assert manifest["totals"] == {"train": 300, "test": 700}
    keys = [canonical_json([r["statements"], r["solution"]]) for s in ("train", "test")
            for r in read(tmp_path / f"{s}.jsonl")]
    assert len(keys) == 1000 and len(set(keys)) == 1000
