"""benchmarks/learning_sat_rl.py: its data are what the README says they are, and the whole pipeline
(random and base evaluations, SFT warm-up, RL with validation before and during training, the
table, JSON and plot) runs end to end at a toy size."""
import itertools
import json

import gymnasium as gym
import numpy as np
import pytest

from solvergym.benchmarks import learning_sat_rl as L
from solvergym.envs.sat.cnf import formula_key


def test_data_are_disjoint_low_chance_instances_and_full_mark_oracle_traces(tmp_path):
    files = L.build_data(tmp_path, n_sft=3, n_train=4, n_val=5, seed=1)
    assert {k: v["count"] for k, v in files.items()} == {"val": 5, "train": 4, "sft": 3}
    env = gym.make(L.ENV, **L.ENV_KWARGS).unwrapped
    keys, chances = {}, []
    try:
        for name in ("val", "train"):
            rows = [json.loads(line) for line in (tmp_path / f"{name}.jsonl").read_text().splitlines()]
            for row in rows:
                env.reset(options={"instance": row})  # a training / validation record is an env instance
                inst = env.problem_instance()
                assert (inst.n, inst.k, inst.l) == (2, 5, 8) and env.instance.solver == "sympy"
                # the chance a uniform assignment has, recounted by brute force: at most 1 in 8
                p = sum(all(any((lit > 0) == bits[abs(lit) - 1] for lit in c) for c in inst.clauses)
                        for bits in itertools.product([False, True], repeat=inst.k)) / 2 ** inst.k
                assert p == inst.chance_success <= 0.125
                keys.setdefault(name, set()).add(formula_key(inst.clauses))
                if name == "val":
                    chances.append(p)
    finally:
        env.close()
    assert files["val"]["mean_chance_success"] == pytest.approx(np.mean(chances))
    sft = [json.loads(line)["messages"] for line in (tmp_path / "sft.jsonl").read_text().splitlines()]
    assert all([m["role"] for m in msgs] == ["user", "assistant", "user", "assistant"] for msgs in sft)
    assert all("from sympy import" in msgs[1]["content"] and "<tool_call>" in msgs[1]["content"] for msgs in sft)
    assert len(keys["val"]) == 5 and len(keys["train"]) == 4 and not keys["val"] & keys["train"]
    # the same seed writes the same files
    again = tmp_path / "again"
    again.mkdir()
    L.build_data(again, n_sft=3, n_train=4, n_val=5, seed=1)
    for name in ("sft", "train", "val"):
        assert (again / f"{name}.jsonl").read_bytes() == (tmp_path / f"{name}.jsonl").read_bytes()


@pytest.mark.slow
def test_the_pipeline_runs_end_to_end_at_a_toy_size(tmp_path, capsys):
    assert L.main(["--n-sft", "2", "--n-train", "2", "--n-val", "2", "--prompts", "1", "--group", "2",
                   "--tokens", "12", "--eval-every", "1", "--random-samples", "8", "--preset", "saturn_grpo",
                   "--out", str(tmp_path)]) == 0
    result = json.loads((tmp_path / "learning_sat_rl.json").read_text())
    assert result["random_exact"] == result["data"]["val"]["mean_chance_success"] <= 0.125
    assert result["random"]["n_samples"] == 8 and result["random"]["n_instances"] == 2
    # 12 tokens cannot hold a tool call: the released model and the warmed-up one answer nothing right
    assert result["base"]["accuracy"] == 0.0
    # validation before the first update (step -1), then after each of the epoch's 2 steps (GRPO:
    # no dynamic sampling, whose replacement groups would take the split's second instance)
    assert [v["step"] for v in result["validation"]] == [-1, 0, 1] and result["train_steps"] == 2
    assert set(result["timings_s"]) == {"data_s", "base_eval_s", "sft_s", "rl_s"}
    assert (tmp_path / "learning_sat_rl.png").stat().st_size > 10_000
    assert "after SFT warm-up (RL update 0)" in capsys.readouterr().out
    # a second call finds every stage done and only reports
    assert L.main(["--n-sft", "2", "--n-train", "2", "--n-val", "2", "--prompts", "1", "--group", "2",
                   "--tokens", "12", "--eval-every", "1", "--random-samples", "8", "--preset", "saturn_grpo",
                   "--out", str(tmp_path)]) == 0
    assert json.loads((tmp_path / "learning_sat_rl.json").read_text())["timings_s"] == result["timings_s"]


def test_transcription_counts_the_clauses_a_program_states():
    """The oracle's sympy program states exactly the formula; dropping one clause and replacing
    another by a false one is seen as such (recall 6/8, precision 6/7, not exact)."""
    env = gym.make(L.ENV, **L.ENV_KWARGS).unwrapped
    try:
        played = L.play_episode(env, L.SolverToolOracle(), seed=5)
        row = env.instance.to_dict()
    finally:
        env.close()
    program = played["messages"][1]["content"]
    truth = {frozenset(c) for c in row["problem"]["clauses"]}
    assert len(truth) == 8 and L.written_clauses(program) == truth
    ors = [line for line in program.splitlines() if line.strip().startswith("Or(")]
    assert len(ors) == 8
    broken = program.replace(ors[0] + "\n", "", 1)
    broken = broken.replace(ors[1], "    Or(A, B, Not(C)),", 1)  # a width-3 clause: not one of the true ones
    records = [
        {"instance": 0, "messages": played["messages"]},
        {"instance": 0, "messages": [played["messages"][0], {"role": "assistant", "content": broken}]},
        {"instance": 0, "messages": [played["messages"][0], {"role": "assistant", "content": "```answer 00000```"}]},
    ]
    got = L.transcription(records, [row])
    assert got["clause_recall"] == pytest.approx((1 + 6 / 8 + 0) / 3)
    assert got["clause_precision"] == pytest.approx((1 + 6 / 7 + 0) / 3)
    assert got["exact_formula"] == pytest.approx(1 / 3)
