"""SATURN's Algorithm 1 driven by a scripted agent whose accuracy depends on difficulty in a known way."""
import itertools

import pytest

from solvergym.algorithms.schedules.curriculum import CurriculumConfig, SaturnCurriculum
from solvergym.envs.sat.cnf import first_violated, formula_key
from solvergym.envs.sat.verify import saturn_reward


class ScriptedLearner:
    """Solves every instance with l <= skill, and exactly a quarter of the others (the first
    quarter of the validation set); each training call adds ``gain`` to the skill. Answers go
    through the real verifier."""

    def __init__(self, skill, gain):
        self.skill, self.gain = skill, gain
        self.val_keys: set = set()
        self.train_sets: list = []

    def answer(self, inst, solve):
        if solve:
            return f"\\boxed{{{inst.solution}}}"
        wrong = next(b for b in map("".join, itertools.product("01", repeat=inst.k))
                     if first_violated(inst.clauses, b) is not None)
        return f"\\boxed{{{wrong}}}"

    def evaluate(self, val):
        self.val_keys = {formula_key(x.clauses) for x in val}
        quota = len(val) // 4
        solved = 0
        for i, inst in enumerate(val):
            solve = inst.l <= self.skill or i < quota
            solved += saturn_reward(self.answer(inst, solve), inst.clauses, inst.k).correct
        return solved / len(val)

    def train(self, train_set):
        assert not self.val_keys & {formula_key(x.clauses) for x in train_set}
        self.train_sets.append(train_set)
        self.skill += self.gain


def run(skill, gain, **cfg):
    learner = ScriptedLearner(skill, gain)
    config = CurriculumConfig(initial=(3, 5, 5), epsilon=0.5, train_size=6, val_size=20, d_step=1, **cfg)
    cur = SaturnCurriculum(config, seed=0)
    return cur, cur.run(learner.evaluate, learner.train), learner


def test_levels_follow_algorithm_1():
    cur, final, learner = run(skill=5, gain=1, iterations=4, max_steps_per_level=3)
    kinds = [(e.kind, e.level[2], e.pass_at_1) for e in cur.history]
    assert kinds == [
        ("estimate", 5, 1.0), ("advance", 6, None),          # t=0: mastered, l -> 6
        ("estimate", 6, 0.25), ("train", 6, None), ("validate", 6, 1.0),  # t=1: train once, pass
        ("estimate", 6, 1.0), ("advance", 7, None),          # t=2: advance only at estimation
        ("estimate", 7, 0.25), ("train", 7, None), ("validate", 7, 1.0),  # t=3
    ]
    assert final == (3, 5, 7) and cur.levels_visited() == [(3, 5, 5), (3, 5, 6), (3, 5, 7)]
    assert all(len(t) == 6 and all(x.l == 7 or x.l == 6 for x in t) for t in learner.train_sets)


def test_training_stops_at_max_steps_per_level():
    cur, final, learner = run(skill=4, gain=0.4, iterations=2, max_steps_per_level=2)
    # skill 4 -> 4.4 -> 4.8 in iteration 0 (never reaches l=5), 5.2 after iteration 1's first step
    assert [e.kind for e in cur.history] == [
        "estimate", "train", "validate", "train", "validate",
        "estimate", "train", "validate",
    ]
    assert [e.pass_at_1 for e in cur.history if e.kind == "validate"] == [0.25, 0.25, 1.0]
    assert final == (3, 5, 5)


def test_table_6_presets_and_validation():
    assert CurriculumConfig.saturn_1_5b() == CurriculumConfig(
        initial=(3, 5, 5), epsilon=0.5, train_size=250, val_size=40, d_step=1, iterations=2, max_steps_per_level=10)
    c7 = CurriculumConfig.saturn_7b()
    assert (c7.initial, c7.epsilon, c7.d_step) == ((3, 5, 13), 0.75, 2)
    assert SaturnCurriculum.increase_difficulty((3, 5, 13), 2) == (3, 5, 15)
    with pytest.raises(ValueError):
        CurriculumConfig(epsilon=1.5)
    bad = SaturnCurriculum(CurriculumConfig(val_size=5))
    with pytest.raises(ValueError, match="pass@1"):
        bad.run(lambda v: 2.0, lambda t: None)
