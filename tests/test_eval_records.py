"""A run directory's records cannot be mixed or forged: its identity (run.json, with the dataset's
content hash and the batching), one run at a time (a lock), and every record checked against
both (issue 23, items 10-12). Real envs, the cheap agents, real run directories."""
import json
import subprocess
import sys

import gymnasium as gym
import pytest

from solvergym.agents import RandomAgent
from solvergym.cli import main
from solvergym.evaluation import EvalConfig, build_report, load_records, run_eval, write_report
from solvergym.evaluation.records import RunLocked, hold_run


def _sat(**kw) -> EvalConfig:
    return EvalConfig("SolverSAT-v0", **{"agent": "random", "instances": 4, "batch_instances": 2, **kw})


def _lines(run) -> list[str]:
    return (run / "records.jsonl").read_text().splitlines(keepends=True)


def _write(run, lines) -> None:
    (run / "records.jsonl").write_text("".join(lines))


# ----------------------------------------------------------------------------- item 10: identity
def test_records_without_run_json_are_not_adopted(tmp_path):
    run = run_eval(_sat(), tmp_path / "run", progress=False)
    (run / "run.json").unlink()
    with pytest.raises(ValueError, match="no run.json"):
        run_eval(_sat(agent="oracle"), run, progress=False)
    with pytest.raises(ValueError, match="no run.json"):
        build_report(run)
    assert not (run / "run.json").exists()  # the refused run adopted nothing


def _dataset(path, seeds) -> None:
    env = gym.make("SolverSAT-v0")
    with open(path, "w") as f:
        for s in seeds:
            env.reset(seed=s)
            f.write(json.dumps(env.unwrapped.instance.to_dict()) + "\n")
    env.close()


def test_a_dataset_replaced_at_the_same_path_is_refused(tmp_path):
    data = tmp_path / "data.jsonl"
    _dataset(data, range(4))
    cfg = _sat(dataset=str(data))
    run = run_eval(cfg, tmp_path / "run", progress=False)
    stored = json.loads((run / "run.json").read_text())["identity"]["dataset_sha256"]
    assert isinstance(stored, str) and len(stored) == 64
    _dataset(data, range(10, 14))  # same path, same size, other instances
    with pytest.raises(ValueError, match="another configuration.*dataset_sha256"):
        run_eval(cfg, run, progress=False)
    # a directory of datasets: one file replaced is a different dataset too
    folder = tmp_path / "levels"
    folder.mkdir()
    _dataset(folder / "a.jsonl", range(2))
    _dataset(folder / "b.jsonl", range(2, 4))
    run_eval(_sat(dataset=str(folder)), tmp_path / "dir", progress=False)
    _dataset(folder / "b.jsonl", range(20, 22))
    with pytest.raises(ValueError, match="dataset_sha256"):
        run_eval(_sat(dataset=str(folder)), tmp_path / "dir", progress=False)


def test_batch_instances_is_part_of_the_identity(tmp_path):
    # the agent is reseeded per batch, so the batching decides what a sampling agent answers
    two = run_eval(_sat(n_samples=2, batch_instances=2), tmp_path / "two", progress=False)
    three = run_eval(_sat(n_samples=2, batch_instances=3), tmp_path / "three", progress=False)
    answers = lambda run: [r["info"].get("answer") for r in load_records(run)]  # noqa: E731
    assert answers(two) != answers(three)
    with pytest.raises(ValueError, match="another configuration.*batch_instances 2 -> 3"):
        run_eval(_sat(n_samples=2, batch_instances=3), two, progress=False)
    # the threads stepping a batch change nothing and stay out of the identity
    run_eval(_sat(n_samples=2, batch_instances=2, workers=1), two, progress=False)


# ----------------------------------------------------------------------------- item 11: records
@pytest.mark.parametrize("bad", ['{"seed": 0, "instance": 1, "sam\n', "garbage\n", "[1, 2]\n", "{}\n", "\n",
                                 "[" * 100_000 + "\n"])
def test_a_bad_line_in_the_middle_is_named(tmp_path, bad):
    run = run_eval(_sat(), tmp_path / "run", progress=False)
    lines = _lines(run)
    _write(run, lines[:2] + [bad] + lines[2:])
    for call in (lambda: build_report(run), lambda: load_records(run), lambda: run_eval(_sat(), run, progress=False)):
        with pytest.raises(ValueError, match=r"records\.jsonl:3: "):
            call()
    with pytest.raises(SystemExit, match=r"records\.jsonl:3: "):
        main(["eval", "--env", "SolverSAT-v0", "--agent", "random", "--instances", "4", "--batch-instances", "2",
              "--out", str(run), "--no-progress", "--no-plot"])
    # the same line last and cut (no newline) is a killed run's half-written record: dropped,
    # and a resumed run continues the file cleanly
    _write(run, lines + [bad.rstrip("\n")])
    assert len(load_records(run)) == 4 and build_report(run)["overall"]["episodes"] == 4
    run_eval(_sat(), run, progress=False)
    assert _lines(run) == lines


def _edit(line: str, **change) -> str:
    return json.dumps({**json.loads(line), **change}, sort_keys=True) + "\n"


@pytest.mark.parametrize("forgery,match", [
    ("conflicting_duplicate", r"records\.jsonl:5: .*seed 0, instance 0, sample 0.*line 1"),
    ("foreign_seed", r"records\.jsonl:5: seed 7 is not one of the run's seeds \[0\]"),
    ("instance_out_of_range", r"records\.jsonl:5: instance 4 is outside 0\.\.3"),
    ("negative_instance", r"records\.jsonl:5: instance -1 is outside 0\.\.3"),
    ("sample_out_of_range", r"records\.jsonl:5: sample 1 is outside 0\.\.0"),
    ("edited_reward", r"records\.jsonl:2: reward 50\.0 is not the weighted sum of its components"),
    ("string_reward", r"records\.jsonl:2: reward must be a finite number"),
    ("list_components", r"records\.jsonl:2: components must be"),
    ("string_correct", r"records\.jsonl:2: correct must be"),
    ("missing_key", r"records\.jsonl:2: .*misses.*turns"),
    ("string_tool_calls", r"records\.jsonl:2: info\.tool_calls must be a non-negative integer"),
    ("bad_trace_metrics", r"records\.jsonl:2: info\.metrics must be a trace's metrics"),
    ("bad_solver_calls", r"records\.jsonl:2: info\.last_tool_result must be"),
])
def test_forged_records_are_refused(tmp_path, forgery, match):
    run = run_eval(_sat(), tmp_path / "run", progress=False)
    lines = _lines(run)
    first = json.loads(lines[0])
    edits = {
        "conflicting_duplicate": lambda: lines + [_edit(lines[0], correct=not first["correct"])],
        "foreign_seed": lambda: lines + [_edit(lines[0], seed=7)],
        "instance_out_of_range": lambda: lines + [_edit(lines[0], instance=4)],
        "negative_instance": lambda: lines + [_edit(lines[0], instance=-1)],
        "sample_out_of_range": lambda: lines + [_edit(lines[0], sample=1)],
        "edited_reward": lambda: [lines[0], _edit(lines[1], reward=50.0)] + lines[2:],
        "string_reward": lambda: [lines[0], _edit(lines[1], reward="1")] + lines[2:],
        "list_components": lambda: [lines[0], _edit(lines[1], components=[1.0])] + lines[2:],
        "string_correct": lambda: [lines[0], _edit(lines[1], correct="yes")] + lines[2:],
        "string_tool_calls": lambda: [lines[0], _edit(lines[1], info={"tool_calls": "3"})] + lines[2:],
        "bad_trace_metrics": lambda: [lines[0], _edit(lines[1], info={"metrics": {"steps": "many"}})] + lines[2:],
        "bad_solver_calls": lambda: [lines[0], _edit(lines[1], info={"last_tool_result": {"solver_calls": [7]}})]
        + lines[2:],
        "missing_key": lambda: [lines[0], json.dumps({k: v for k, v in json.loads(lines[1]).items()
                                                      if k != "turns"}) + "\n"] + lines[2:],
    }
    _write(run, edits[forgery]())
    with pytest.raises(ValueError, match=match):
        build_report(run)
    with pytest.raises(ValueError, match=match):
        run_eval(_sat(), run, progress=False)


def test_an_identical_duplicate_counts_once(tmp_path):
    # what two runs racing on one --out (before the lock) or a re-run batch wrote: the same
    # record twice is one episode
    run = run_eval(_sat(), tmp_path / "run", progress=False)
    before = write_report(run, png=False)
    lines = _lines(run)
    _write(run, lines + lines[1:3])
    rep = build_report(run)
    assert rep["overall"]["episodes"] == 4 and rep["duplicate_records"] == 2
    assert rep["overall"]["mean_reward"] == before["overall"]["mean_reward"] and before["duplicate_records"] == 0
    assert len(load_records(run)) == 4


@pytest.mark.parametrize("env_id,kwargs,agent", [
    ("SolverSAT-v0", {"reward_weights": {"format": 2.0}}, "random"),
    ("SolverTool-v0", {"tool_reward": "retool"}, "oracle"),  # equivalence computed, not paid
    ("SolverZebra-v0", {}, "oracle"),
    ("SolverOR-v0", {}, "oracle"),
])
def test_rewards_are_checked_against_the_env_s_weights(tmp_path, env_id, kwargs, agent):
    cfg = EvalConfig(env_id, agent=agent, instances=2, env_kwargs=kwargs)
    run = run_eval(cfg, tmp_path / "run", progress=False)
    rep = build_report(run)
    assert rep["overall"]["episodes"] == 2
    lines = _lines(run)
    rec = json.loads(lines[0])
    if env_id == "SolverTool-v0":  # the record keeps the computed equivalence, the reward omits it
        assert rec["components"]["equivalence"] == 1.0 and rec["reward"] == pytest.approx(
            sum(rec["components"].values()) - 1.0)
    if env_id == "SolverSAT-v0":
        assert rec["reward"] == pytest.approx(2 * rec["components"]["format"] + rec["components"]["correct"])
    # a component edited alone no longer adds up to the reward
    comp = sorted(rec["components"])[0]
    _write(run, [_edit(lines[0], components={**rec["components"], comp: rec["components"][comp] + 0.5})] + lines[1:])
    with pytest.raises(ValueError, match=r"records\.jsonl:1: reward .* is not the weighted sum"):
        build_report(run)


def test_a_garbage_run_json_is_named(tmp_path):
    run = run_eval(_sat(), tmp_path / "run", progress=False)
    for text in ("not json", "[]", '{"identity": {}}'):
        (run / "run.json").write_text(text)
        with pytest.raises(ValueError, match="run.json"):
            build_report(run)
        with pytest.raises(ValueError, match="run.json"):
            run_eval(_sat(), run, progress=False)


# ----------------------------------------------------------------------------- item 12: one run at a time
_HOLD = """
import sys
from solvergym.evaluation.records import hold_run
with hold_run(sys.argv[1]):
    print("held", flush=True)
    sys.stdin.read()
"""


def test_a_second_run_on_a_held_directory_fails_fast(tmp_path):
    out = tmp_path / "run"
    args = ["eval", "--env", "SolverSAT-v0", "--agent", "random", "--instances", "3", "--n-samples", "2",
            "--out", str(out), "--no-progress", "--no-plot"]
    holder = subprocess.Popen([sys.executable, "-c", _HOLD, str(out)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              text=True)
    try:
        assert holder.stdout.readline() == "held\n"
        with pytest.raises(SystemExit, match=f"another run holds {out}"):
            main(args)
        with pytest.raises(RunLocked, match="another run holds"):
            run_eval(_sat(), out, progress=False)
        assert not (out / "run.json").exists() and not (out / "records.jsonl").exists()
    finally:
        holder.stdin.close()
        assert holder.wait() == 0
    assert main(args) == 0 and len(load_records(out)) == 6


def test_a_run_holds_its_directory_while_it_runs(tmp_path):
    out = tmp_path / "run"

    class Probe(RandomAgent):
        turns = 0

        def act(self, observations, envs=None):
            with pytest.raises(RunLocked):
                with hold_run(out):
                    pass
            Probe.turns += 1
            return super().act(observations, envs)

    run_eval(_sat(), out, agent=Probe(), progress=False)
    assert Probe.turns == 2  # one call per batch, each saw the directory held
    with hold_run(out):  # and released once the run is over
        pass


def test_a_failed_start_leaves_the_directory_free(tmp_path, capsys):
    out = tmp_path / "run"
    base = ["eval", "--env", "SolverSAT-v0", "--instances", "2", "--out", str(out), "--no-progress", "--no-plot"]
    with pytest.raises(SystemExit, match="cannot load the agent"):
        main(base + ["--agent", "no_such_module:Agent"])
    assert not (out / "run.json").exists()
    assert main(base + ["--agent", "random"]) == 0
    assert json.loads((out / "run.json").read_text())["identity"]["agent"] == "random"
    # a run that started but recorded nothing (its agent failed on the first turn) holds no
    # results to mix, so a corrected run may take the directory over
    knights = tmp_path / "knights"
    with pytest.raises(TypeError, match="SolverSAT-v0"):
        run_eval(EvalConfig("SolverKnights-v0", agent="cdcl", instances=1), knights, progress=False)
    assert not load_records_or_none(knights)
    run_eval(EvalConfig("SolverKnights-v0", agent="random", instances=1), knights, progress=False)
    assert len(load_records(knights)) == 1


def load_records_or_none(run):
    return (run / "records.jsonl").exists() and (run / "records.jsonl").read_text()
