"""The training schedules without a model: each one driven through the trainer's side of the
interface (``TrainerLike``) by a scripted agent, its evaluations through the real evaluation runner."""
import json
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

import gymnasium as gym
import pytest

import solvergym  # noqa: F401  (registers the env ids)
from solvergym.agents import OracleAgent
from solvergym.algorithms.config import make_config
from solvergym.algorithms.schedules import Epochs, FixedSteps, SaturnSchedule, SirlStages, make_schedule
from solvergym.algorithms.schedules.curriculum import CurriculumConfig, Evaluate, SaturnCurriculum, Train
from solvergym.envs.sat.cnf import formula_key
from solvergym.envs.sat.generator import sat_construction


class WrongAgent:
    """Answers every SAT prompt with no assignment: pass@1 is 0."""

    name = "wrong"
    sampling = None

    def act(self, observations, envs):
        return ["I do not know." for _ in observations]


class Loop:
    """What ``Trainer.train`` and ``Trainer.train_step`` do with a schedule, without rollouts:
    each step consumes ``prompts_per_step`` data positions (``rounds`` times with dynamic sampling)."""

    def __init__(self, cfg, policy):
        self.cfg, self.policy = cfg, policy
        if policy is not None and not hasattr(policy, "sampling"):
            policy.sampling = None  # what validation swaps on a model's policy; a scripted agent has none
        self.step = self.data_pos = 0
        self.acc = SimpleNamespace(is_main_process=True)
        self.unwrapped = None
        self.history, self.saved, self.trained = [], [], []

    def log(self, row):
        self.history.append(row)

    def save_model(self, path):
        self.saved.append((self.step, Path(path).name))

    def broadcast_scalar(self, value):
        return value

    def train_step(self, schedule, step, rounds=1):
        row = schedule.before_step(self)
        drawn = []
        for _ in range(rounds):
            instances = step.instances
            if instances is None:
                instances = schedule.draw(self.data_pos, self.cfg.prompts_per_step)
            drawn.append(instances)
            self.data_pos += self.cfg.prompts_per_step
        self.trained.append(drawn)
        row["step"] = self.step
        self.step += 1
        row.update(schedule.after_step(self))
        self.log(row)

    def run(self, schedule, stop_after=None):
        step = schedule.next(self)
        while step is not None and self.step != stop_after:
            self.train_step(schedule, step)
            step = schedule.next(self)
        if step is None:
            schedule.end(self)
        return step


def _curriculum_cfg(tmp_path, **curriculum):
    settings = {"initial": [3, 5, 5], "epsilon": 0.9, "train_size": 5, "val_size": 3, "d_step": 1,
                "iterations": 1, "max_steps_per_level": 2, **curriculum}
    return make_config("grpo", env="SolverSAT-v0", out_dir=str(tmp_path), prompts_per_step=2, group_size=2,
                       max_new_tokens=8, progress=False, curriculum=settings)


def test_curriculum_estimates_through_the_evaluation_runner_and_advances(tmp_path):
    cfg = _curriculum_cfg(tmp_path, iterations=2)
    loop, schedule = Loop(cfg, OracleAgent()), make_schedule(cfg, [])
    assert isinstance(schedule, SaturnSchedule) and schedule.steps is None
    assert loop.run(schedule) is None
    # the oracle passes every estimate: (3,5,5) -> (3,5,6) -> (3,5,7), no training step (SATURN Alg. 1)
    state = schedule.state()["curriculum"]
    assert [(e["kind"], e["level"], e["pass_at_1"]) for e in state["history"]] == [
        ("estimate", (3, 5, 5), 1.0), ("advance", (3, 5, 6), None),
        ("estimate", (3, 5, 6), 1.0), ("advance", (3, 5, 7), None)]
    assert loop.step == 0 and loop.history == [{"step": 0, "curriculum_level": [3, 5, 7]}]
    root = tmp_path / "curriculum"
    assert sorted(p.name for p in root.iterdir()) == ["000_estimate", "000_estimate.jsonl", "001_estimate",
                                                     "001_estimate.jsonl"]
    records = [json.loads(x) for x in (root / "001_estimate" / "records.jsonl").read_text().splitlines()]
    posed = [json.loads(x) for x in (root / "001_estimate.jsonl").read_text().splitlines()]
    # pass@1: one sample of each of the val_size instances, at the training temperature
    assert len(records) == 3 and all(r["correct"] for r in records) and [len(x["clauses"]) for x in posed] == [6] * 3
    assert json.loads((root / "001_estimate" / "run.json").read_text())["config"]["temperature"] == cfg.temperature


def test_curriculum_trains_on_each_training_set_in_steps_and_resumes_mid_set(tmp_path):
    cfg = _curriculum_cfg(tmp_path / "straight")
    loop, schedule = Loop(cfg, WrongAgent()), SaturnSchedule(cfg)
    loop.run(schedule)
    state = schedule.state()["curriculum"]
    # pass@1 stays 0: two training steps of Algorithm 1 at (3,5,5), each re-validated
    assert [e["kind"] for e in state["history"]] == ["estimate", "train", "validate", "train", "validate"]
    assert state["level"] == [3, 5, 5] and state["trained"] == 0
    # a training set of 5 is two trainer steps of prompts_per_step = 2 (the fifth is not trained)
    assert loop.step == 4 and [len(d[0]) for d in loop.trained] == [2, 2, 2, 2]
    assert [r["curriculum_level"] for r in loop.history] == [[3, 5, 5]] * 5  # 4 steps and the last row
    sets = [d[0] for d in loop.trained]
    assert len({formula_key(x.clauses) for s in sets[:2] for x in s}) == 4  # one set, distinct instances
    for n, val in ((0, "000_estimate"), (2, "001_validate")):  # disjoint from the preceding validation set
        seen = {formula_key(json.loads(line)["clauses"])
                for line in (tmp_path / "straight" / "curriculum" / f"{val}.jsonl").read_text().splitlines()}
        assert not seen & {formula_key(x.clauses) for s in sets[n:n + 2] for x in s}

    # stopped after step 1 (the set's second step pending), resumed from the saved state
    cfg = _curriculum_cfg(tmp_path / "resumed")
    first, part = Loop(cfg, WrongAgent()), SaturnSchedule(cfg)
    pending = first.run(part, stop_after=1)
    saved = json.loads(json.dumps(part.state()))
    assert saved["curriculum"]["trained"] == 1 and pending.instances == sets[1]
    resumed = SaturnSchedule(cfg)
    resumed.load_state(saved)
    again = Loop(cfg, WrongAgent())
    again.step, again.data_pos = first.step, first.data_pos
    again.run(resumed)
    assert [d[0] for d in again.trained] == sets[1:]
    assert resumed.state() == schedule.state()


def test_curriculum_replay_rebuilds_the_controller_from_its_history():
    config = CurriculumConfig(initial=(3, 5, 5), epsilon=0.5, train_size=4, val_size=4, iterations=3,
                              max_steps_per_level=2)
    answers = [0.0, 0.25, 1.0, 0.75, 0.0, 0.0, 0.0]

    def answer(cur, given):
        while cur.request is not None:
            cur.advance(next(given) if isinstance(cur.request, Evaluate) else None)

    straight = SaturnCurriculum(config, seed=3)
    answer(straight, iter(answers))
    kinds = [e.kind for e in straight.history]
    assert kinds == ["estimate", "train", "validate", "train", "validate", "estimate", "advance",
                     "estimate", "train", "validate", "train", "validate"]
    # stopped after the second training step: the re-validation is pending
    part = SaturnCurriculum(config, seed=3)
    given = iter(answers)
    while len(part.history) < 4:
        part.advance(next(given) if isinstance(part.request, Evaluate) else None)
    replayed = SaturnCurriculum.replay(config, 3, json.loads(json.dumps(part.history_dicts())))
    assert isinstance(replayed.request, Evaluate) and replayed.request.kind == "validate"
    assert [x.to_json() for x in replayed.request.instances] == [x.to_json() for x in part.request.instances]
    answer(replayed, given)
    assert replayed.history == straight.history and replayed.level == straight.level == (3, 5, 6)
    with pytest.raises(ValueError, match="history"):  # 0.25 passes epsilon 0.2: not this run's decisions
        SaturnCurriculum.replay(replace(config, epsilon=0.2), 3, straight.history_dicts())
    with pytest.raises(RuntimeError, match="ended"):
        straight.advance(1.0)
    assert isinstance(SaturnCurriculum(config, seed=3).advance(0.0), Train)


def _sat_split(path, n, seed):
    path.write_text("".join(x.to_json() + "\n" for x in sat_construction(3, 5, 5, n, seed)))
    return str(path)


def test_epochs_draw_the_split_in_order_validate_when_due_and_stop_early(tmp_path):
    cfg = make_config("grpo", env="SolverSAT-v0", out_dir=str(tmp_path / "run"), prompts_per_step=2, group_size=2,
                      data=_sat_split(tmp_path / "train.jsonl", 8, 0), eval_data=_sat_split(tmp_path / "val.jsonl", 2, 1),
                      epochs=2, eval_every=3, eval_before_train=True, max_new_tokens=8, progress=False)
    loop, schedule = Loop(cfg, OracleAgent()), make_schedule(cfg, [])
    assert isinstance(schedule, Epochs) and schedule.steps == 8
    loop.run(schedule)
    split = schedule.split
    drawn = [x for d in loop.trained for x in d[0]]
    assert drawn == [split.items[i] for e in (0, 1) for i in split.order(e)]  # each epoch in its seeded order
    vals = [r for r in loop.history if "val_accuracy" in r]
    assert [v["step"] for v in vals] == [-1, 2, 5, 7] and all(v["val_accuracy"] == 1.0 for v in vals)
    steps = [r for r in loop.history if "val_accuracy" not in r]
    assert loop.saved == [(0, "best")] and steps[3]["epoch"] == 1.0 and steps[-1]["epoch"] == 2.0
    assert sorted(p.name for p in (tmp_path / "run" / "validation").iterdir()) == [
        "step_000000", "step_000003", "step_000006", "step_000008"]

    # at each epoch's end with eval_every=0; the oracle never beats its first score: patience 1 stops
    cfg = make_config("grpo", env="SolverSAT-v0", out_dir=str(tmp_path / "stop"), prompts_per_step=2, group_size=2,
                      data=cfg.data, eval_data=cfg.eval_data, epochs=5, patience=1, max_new_tokens=8, progress=False)
    loop, schedule = Loop(cfg, OracleAgent()), Epochs(cfg)
    loop.run(schedule)
    vals = [r for r in loop.history if "val_accuracy" in r]
    assert [v["step"] for v in vals] == [3, 7] and [v["val_improved"] for v in vals] == [1.0, 0.0]
    assert loop.history[-1] == {"step": 7, "early_stop": 1.0, "val_best_step": 3} and loop.step == 8
    resumed = Epochs(cfg)
    resumed.load_state(json.loads(json.dumps({"stopping": schedule.state()["stopping"]})))
    assert resumed.stopping == schedule.stopping and resumed.next(loop) is None


def test_epochs_validate_after_the_last_step_when_dynamic_sampling_ends_off_the_grid(tmp_path):
    cfg = make_config("grpo", env="SolverSAT-v0", out_dir=str(tmp_path), prompts_per_step=2, group_size=2,
                      data=_sat_split(tmp_path / "train.jsonl", 6, 0), eval_data=_sat_split(tmp_path / "val.jsonl", 1, 1),
                      epochs=1, eval_every=3, max_new_tokens=8, progress=False)
    loop, schedule = Loop(cfg, OracleAgent()), Epochs(cfg)
    step = schedule.next(loop)
    loop.train_step(schedule, step, rounds=2)  # a replacement round: the next 2 of the split
    assert loop.trained[0][1] == schedule.split.draw(2, 2)
    while (step := schedule.next(loop)) is not None:
        loop.train_step(schedule, step)
    # 6 instances: a step of 2 rounds, then one of 1, the last, validated though 2 is no multiple of 3
    assert loop.step == 2 and [r["step"] for r in loop.history if "val_accuracy" in r] == [1]


def test_sirl_stages_switch_at_bonus_from_step_on_any_schedule(tmp_path):
    envs = [gym.make("SolverOR-v0", family="knapsack", size=2) for _ in range(2)]
    cfg = make_config("sirl_reinforce_pp", env="SolverOR-v0", out_dir=str(tmp_path), steps=3, bonus_from_step=2,
                      progress=False)
    schedule = make_schedule(cfg, envs)
    assert isinstance(schedule, SirlStages) and isinstance(schedule.inner, FixedSteps) and schedule.steps == 3
    loop = Loop(cfg, None)
    stages = []
    step = schedule.next(loop)
    while step is not None:
        loop.train_step(schedule, step)
        stages.append([e.unwrapped.problem.stage for e in envs])
        step = schedule.next(loop)
    assert [r["sirl_stage"] for r in loop.history] == [1.0, 1.0, 2.0] and stages == [[1, 1], [1, 1], [2, 2]]
    loop.step = 2  # a run resumed at step 2 is in stage 2: the stage follows from the step
    schedule.before_step(loop)
    assert [e.unwrapped.problem.stage for e in envs] == [2, 2]
    with pytest.raises(ValueError, match="SIRL's stages"):
        SirlStages(FixedSteps(1), 0, [gym.make("SolverSAT-v0")])
