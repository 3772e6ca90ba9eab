import hashlib
import json
import math
import subprocess
import sys
from pathlib import Path

import gymnasium as gym
import pytest

import solvergym  # noqa: F401
from solvergym.agents.scripted import oracle_action
from solvergym.envs.sat.datasets import (
    SATURN_HARD_LEVELS, SATURN_TRAIN_LEVELS, build_sat_bench, build_saturn_2_6k, load_sat_bench_jsonl,
    load_saturn_jsonl,
)
from solvergym.envs.sat.cnf import first_violated, formula_key
from solvergym.envs.sat.generator import difficulty


@pytest.fixture(scope="module")
def saturn_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("saturn")
    manifest = build_saturn_2_6k(out, seed=0, progress=False)
    return out, manifest


def read(path):
    return [json.loads(line) for line in Path(path).read_text().splitlines()]


def test_saturn_2_6k_shape(saturn_dir):
    out, manifest = saturn_dir
    train, test = read(out / "train.jsonl"), read(out / "test.jsonl")
    assert len(train) == 1500 and len(test) == 160 and manifest["total"] == 2660
    want = {lvl: size for lvl, size in SATURN_TRAIN_LEVELS}
    got = {}
    for r in train:
        got[(r["n_sat"], r["k"], r["l"])] = got.get((r["n_sat"], r["k"], r["l"]), 0) + 1
    assert got == want
    assert sorted({(r["n_sat"], r["k"], r["l"]) for r in test}) == sorted(want)
    assert not {formula_key(x.clauses) for x in load_saturn_jsonl(out / "train.jsonl")} & {
        formula_key(x.clauses) for x in load_saturn_jsonl(out / "test.jsonl")}
    for n, k, l in SATURN_HARD_LEVELS:
        recs = read(out / "test_levels" / f"n{n}_k{k}_length{l}_sample100.jsonl")
        assert len(recs) == 100 and {(r["n_sat"], r["k"], r["l"]) for r in recs} == {(n, k, l)}
        assert len({r["clause"] for r in recs}) == 100


def test_saturn_records_carry_statistics_and_reload(saturn_dir):
    out, _ = saturn_dir
    recs = read(out / "test_levels" / "n6_k7_length40_sample100.jsonl")
    insts = load_saturn_jsonl(out / "test_levels" / "n6_k7_length40_sample100.jsonl")
    env = gym.make("SolverSAT-v0").unwrapped
    for rec, inst in zip(recs, insts):
        assert set(rec) >= {"id", "n_sat", "k", "solution", "clause", "prompt", "difficulty", "model_count",
                            "chance_success"}
        assert first_violated(inst.clauses, rec["solution"]) is None
        assert rec["difficulty"] == pytest.approx(difficulty(6, 7, 40))
        assert rec["chance_success"] == rec["model_count"] / 2**7 == inst.chance_success
        obs, _ = env.reset(options={"instance": inst})
        assert obs == rec["prompt"]
    assert sum(r["chance_success"] for r in recs) / 100 > 0.45  # visible: (6,7,40) is half guessable


def test_same_seed_same_bytes_other_seed_other_bytes(saturn_dir, tmp_path):
    out, manifest = saturn_dir
    again = build_saturn_2_6k(tmp_path / "a", seed=0, progress=False)
    assert again["files"] == manifest["files"]
    for name in manifest["files"]:
        assert (tmp_path / "a" / name).read_bytes() == (out / name).read_bytes()
    other = build_saturn_2_6k(tmp_path / "b", seed=1, progress=False)
    assert other["files"]["train.jsonl"]["sha256"] != manifest["files"]["train.jsonl"]["sha256"]


def test_chance_bound_applies_to_the_build(tmp_path):
    m = build_saturn_2_6k(tmp_path, seed=0, max_chance_success=0.55, progress=False)
    for name in m["files"]:
        assert all(r["chance_success"] <= 0.55 for r in read(tmp_path / name))


def test_sat_bench_balanced_certified_and_usable(tmp_path):
    m = build_sat_bench(tmp_path, seed=3, n_train=24, n_test=10, progress=False)
    train, test = read(tmp_path / "train.jsonl"), read(tmp_path / "test.jsonl")
    assert [len(train), len(test)] == [24, 10]
    assert sum(r["satisfiable"] for r in train) == 12 and sum(r["satisfiable"] for r in test) == 5
    assert {r["bucket"] for r in train} == {"easy", "medium", "hard"}
    for r in train:
        lo, hi = {"easy": (4, 15), "medium": (20, 30), "hard": (31, 50)}[r["bucket"]]
        assert lo <= len(r["clauses"]) <= hi and r["label"] == ("SAT" if r["satisfiable"] else "UNSAT")
        assert len(r["mapping"]) == math.prod(r["dims"])
    insts = load_sat_bench_jsonl(tmp_path / "train.jsonl")  # validates models and DRUP proofs
    assert not {formula_key(i.clauses) for i in insts} & {formula_key(i.clauses)
                                                        for i in load_sat_bench_jsonl(tmp_path / "test.jsonl")}
    env = gym.make("SolverSATBench-v0").unwrapped
    env.reset(options={"instance": train[0]})
    _, r, *_ = env.step(oracle_action(env))
    assert r == pytest.approx(1.1)
    assert m["files"]["train.jsonl"]["satisfiable"] == 12


def test_dataset_cli_is_deterministic(tmp_path):
    def run(out):
        subprocess.run([sys.executable, "-m", "solvergym.cli", "dataset", "sat-bench", "--out", str(out),
                        "--n-train", "6", "--n-test", "3", "--seed", "5"], check=True, capture_output=True)
        return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(out.glob("*.jsonl"))}

    assert run(tmp_path / "x") == run(tmp_path / "y")
