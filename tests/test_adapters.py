"""The TRL, verl and reasoning-gym adapters pay the env's own reward, and bad input is a zero
with a reason; TRL's environment_factory runs the tool env's programs in the sandbox.

One table: for several envs (SolverOR-v0's programs run in the real sandbox), the oracle's answer,
a uniformly random answer, text with no answer and the oracle's answer as a chat message, each
scored by the env itself (``reset(options={"instance": ...})``, ``step``), by TRL's reward
function (sync and async), by verl's ``compute_score`` (sync and async) and by reasoning-gym's
``score_answer``: the same floats.
"""
from __future__ import annotations

import asyncio
import json
import os
import signal
import warnings

import gymnasium as gym
import numpy as np
import pytest

import solvergym  # noqa: F401
from solvergym.adapters.scoring import INSTANCE_COLUMN, EnvScorer, completion_text, task_rows
from solvergym.adapters.trl import reward_fn, trl_dataset, trl_rows
from solvergym.adapters.verl import compute_score, compute_score_async, verl_rows, write_verl_parquet

CASES = [
    ("SolverSAT-v0", {"n": 3, "k": 5, "l": 6}),
    ("SolverSATBench-v0", {}),
    ("SolverLogic-v0", {"family": "clique"}),
    ("SolverLogic-v0", {"family": "subset-sum", "query": "solving"}),
    ("SolverKnights-v0", {}),
    ("SolverOR-v0", {}),
]


def _completions(env_id, kwargs, row, rng):
    env = gym.make(env_id, **kwargs).unwrapped
    env.reset(options={"instance": json.loads(row[INSTANCE_COLUMN])})
    gold = env.gold().answer
    out = [gold, env.sample_answer(rng), "I am not sure.", [{"role": "assistant", "content": gold}]]
    env.close()
    return out


def _own_reward(env_id, kwargs, row, completion):
    env = gym.make(env_id, **kwargs).unwrapped
    env.reset(options={"instance": json.loads(row[INSTANCE_COLUMN])})
    _, reward, *_ = env.step(completion_text(completion))
    env.close()
    return reward


@pytest.mark.parametrize("env_id,kwargs", CASES, ids=[f"{e}-{k.get('family', '')}" for e, k in CASES])
def test_every_adapter_pays_the_envs_own_reward(env_id, kwargs):
    rows = trl_rows(env_id, 3, seed=11, **kwargs)
    rng = np.random.default_rng(0)
    pairs = [(c, r) for r in rows for c in _completions(env_id, kwargs, r, rng)]
    own = [_own_reward(env_id, kwargs, r, c) for c, r in pairs]
    assert max(own) > min(own)  # the oracle's answer and the others are told apart
    columns = {k: [r[k] for _, r in pairs] for k in rows[0] if k != "prompt"}
    completions = [c for c, _ in pairs]
    prompts = [r["prompt"] for _, r in pairs]
    trl_sync = reward_fn(env_id, **kwargs)
    assert trl_sync(prompts=prompts, completions=completions, **columns) == own
    assert all(s.status == "ok" for s in trl_sync.last_scores)
    trl_async = reward_fn(env_id, asynchronous=True, **kwargs)
    assert asyncio.run(trl_async(prompts=prompts, completions=completions, **columns)) == own
    vrows = verl_rows(env_id, 3, seed=11, **kwargs)
    assert [v["reward_model"]["ground_truth"] for v in vrows] == [r[INSTANCE_COLUMN] for r in rows]
    by_row = {r[INSTANCE_COLUMN]: v for r, v in zip(rows, vrows)}
    verl = [compute_score(by_row[r[INSTANCE_COLUMN]]["data_source"], completion_text(c),
                          r[INSTANCE_COLUMN], by_row[r[INSTANCE_COLUMN]]["extra_info"])["score"] for c, r in pairs]
    assert verl == own
    v0 = vrows[0]
    got = asyncio.run(compute_score_async(v0["data_source"], completion_text(completions[0]),
                                          v0["reward_model"]["ground_truth"], v0["extra_info"]))
    assert got["score"] == own[0] and got["status"] == "ok"
    assert any(k.startswith("component/") for k in got)
    import reasoning_gym

    from solvergym.adapters.reasoning_gym import register

    rg_score = reasoning_gym.get_score_answer_fn(register([env_id])[0])
    meta = lambda r: {"metadata": {k: v for k, v in r.items() if k.startswith("solvergym_")}}  # noqa: E731
    assert [rg_score(completion_text(c), meta(r)) for c, r in pairs] == own
    trl_sync.scorer.close()
    trl_async.scorer.close()


def test_bad_input_is_a_zero_with_its_reason_never_an_exception():
    rows = trl_rows("SolverSAT-v0", 2, seed=0)
    other = trl_rows("SolverSATBench-v0", 1, seed=0)[0]
    fn = reward_fn("SolverSAT-v0")
    gold = gym.make("SolverSAT-v0").unwrapped
    gold.reset(options={"instance": json.loads(rows[0][INSTANCE_COLUMN])})
    answer = gold.gold().answer
    cols = lambda rs: {k: [r[k] for r in rs] for k in rs[0] if k != "prompt"}  # noqa: E731
    full = _own_reward("SolverSAT-v0", {}, rows[0], answer)
    assert full > 0
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert fn(completions=[None, 123, answer], **cols(rows + rows[:1])) == [0.0, 0.0, full]
        assert [s.status for s in fn.last_scores] == ["bad_completion", "bad_completion", "ok"]
        assert fn(completions=[answer]) == [0.0]  # no solvergym columns at all
        assert "no 'solvergym_instance' column" in fn.last_scores[0].reason
        assert fn(completions=[answer], **cols([other])) == [0.0]  # a row of another env
        assert "SolverSATBench-v0" in fn.last_scores[0].reason
        broken = dict(rows[0], solvergym_instance='{"n": 3')
        assert fn(completions=[answer], **cols([broken])) == [0.0]
        assert "not JSON" in fn.last_scores[0].reason
        forged = dict(rows[0], solvergym_instance=json.dumps({**json.loads(rows[0][INSTANCE_COLUMN]), "clauses": "x"}))
        assert fn(completions=[answer], **cols([forged])) == [0.0]
        assert fn.last_scores[0].status == "bad_row"
        assert fn(completions="not a list") == [0.0]
        # what dataset[name] gives (a datasets Column, not a list) is read as the column it is
        ds = trl_dataset("SolverSAT-v0", 2, seed=0)
        assert fn(completions=[answer, answer], **{k: ds[k] for k in ds.column_names if k != "prompt"})[0] == full
    assert {str(w.message).split(": ")[1] for w in caught} == {"bad_completion", "bad_row"}  # once per kind
    with pytest.raises(ValueError, match="unknown env 'SolverSat-v1'"):
        reward_fn("SolverSat-v1")
    with pytest.raises(ValueError, match="multi-turn"):
        EnvScorer("SolverTool-v0")
    assert compute_score("Nope-v0", answer, rows[0][INSTANCE_COLUMN])["status"] == "bad_row"
    assert compute_score("SolverSAT-v0", answer, rows[0][INSTANCE_COLUMN], {"env_kwargs": "[1]"})["status"] == "bad_row"
    assert compute_score("SolverSAT-v0", b"bytes", rows[0][INSTANCE_COLUMN])["status"] == "bad_completion"
    fn.scorer.close()


def test_a_sandbox_that_dies_under_an_adapter_loses_no_result():
    """The process-wide pool runs a program whose server died under it once more on a fresh
    server, so a reward through an adapter is the program's, not the crash's."""
    import threading
    import time

    from solvergym.sandbox import default_pool

    rows = trl_rows("SolverOR-v0", 2, seed=0, solver="highspy")
    gold = gym.make("SolverOR-v0", solver="highspy").unwrapped
    answers = []
    for r in rows:
        gold.reset(options={"instance": json.loads(r[INSTANCE_COLUMN])})
        # the oracle's program, made to be still running when its server is killed
        answers.append(gold.gold().answer.replace("<python>\n", "<python>\nimport time\ntime.sleep(1.5)\n", 1))
    gold.close()
    full = [_own_reward("SolverOR-v0", {"solver": "highspy"}, r, a) for r, a in zip(rows, answers)]
    assert min(full) == 3.5
    fn = reward_fn("SolverOR-v0", solver="highspy")
    cols = {k: [r[k] for r in rows] for k in rows[0] if k != "prompt"}
    pool = default_pool()
    for through in ("trl", "verl"):
        before = pool.restarts
        killer = threading.Timer(0.7, lambda: [os.kill(pid, signal.SIGKILL) for pid in pool.server_pids()])
        killer.start()
        if through == "trl":
            got = fn(completions=answers, **cols)
        else:
            got = [compute_score("SolverOR-v0", a, r[INSTANCE_COLUMN], {"env_kwargs": r["solvergym_env_kwargs"]})["score"]
                   for r, a in zip(rows, answers)]
        killer.join()
        assert got == full, through
        assert pool.restarts > before  # a server did die, and was replaced
    fn.scorer.close()


def test_the_exporters_write_the_same_rows_for_the_same_seed(tmp_path):
    import pyarrow.parquet as pq

    assert trl_rows("SolverLogic-v0", 4, seed=3, family="sudoku") == trl_rows("SolverLogic-v0", 4, seed=3, family="sudoku")
    assert trl_rows("SolverLogic-v0", 2, seed=3, family="sudoku") != trl_rows("SolverLogic-v0", 2, seed=4, family="sudoku")
    ds = trl_dataset("SolverSAT-v0", 5, seed=0)
    assert len(ds) == 5 and ds[0]["prompt"][0]["role"] == "user"
    a = write_verl_parquet(tmp_path / "a.parquet", "SolverSATBench-v0", 6, seed=1)
    b = write_verl_parquet(tmp_path / "b.parquet", "SolverSATBench-v0", 6, seed=1)
    assert a.read_bytes() == b.read_bytes()
    table = pq.read_table(a).to_pylist()
    assert [r["extra_info"]["index"] for r in table] == list(range(6))
    assert set(table[0]) == {"data_source", "prompt", "ability", "reward_model", "extra_info"}
    assert table[0]["reward_model"]["style"] == "rule" and table[0]["data_source"] == "SolverSATBench-v0"
    with pytest.raises(ValueError, match="count must be >= 0"):
        list(task_rows("SolverSAT-v0", -1))


def test_verls_own_dataset_class_reads_the_rows_and_they_score_as_the_env_does(tmp_path):
    """verl 0.9.1's RLHFDataset (the class its trainer reads parquet with) loads
    write_verl_parquet's file; what it hands the reward loop scores the env's own reward."""
    rl_dataset = pytest.importorskip("verl.utils.dataset.rl_dataset", reason="verl is not installed")
    from omegaconf import DictConfig

    from solvergym.agents.models import load_tokenizer

    path = write_verl_parquet(tmp_path / "train.parquet", "SolverSAT-v0", 4, seed=2, n=3, k=5, l=6)
    config = DictConfig({"prompt_key": "prompt", "max_prompt_length": 4096, "return_raw_chat": True,
                         "filter_overlong_prompts": True, "truncation": "error", "cache_dir": str(tmp_path / "cache")})
    ds = rl_dataset.RLHFDataset(data_files=str(path), tokenizer=load_tokenizer(), config=config)
    assert len(ds) == 4  # none filtered as over-long: every prompt fits 4,096 tokens of the tokenizer
    rows = [ds[i] for i in range(4)]
    exported = verl_rows("SolverSAT-v0", 4, seed=2, n=3, k=5, l=6)
    gold = gym.make("SolverSAT-v0", n=3, k=5, l=6).unwrapped
    for row, mine in zip(rows, exported):
        assert row["data_source"] == "SolverSAT-v0" and row["raw_prompt"] == mine["prompt"]
        assert row["reward_model"] == mine["reward_model"] and row["extra_info"]["index"] == mine["extra_info"]["index"]
        gold.reset(options={"instance": json.loads(row["reward_model"]["ground_truth"])})
        answer = gold.gold().answer
        # as verl's reward loop calls it, with the fields RLHFDataset gave
        got = compute_score(row["data_source"], answer, row["reward_model"]["ground_truth"], row["extra_info"])
        assert got["status"] == "ok" and got["score"] == _own_reward("SolverSAT-v0", {"n": 3, "k": 5, "l": 6},
                                                                      {INSTANCE_COLUMN: row["reward_model"]["ground_truth"]},
                                                                      answer) == 1.0
        assert compute_score(row["data_source"], "\\boxed{no idea}", row["reward_model"]["ground_truth"],
                             row["extra_info"])["score"] < 1.0
    # verl's trainer loads the reward function from its config exactly so (verl/trainer/ppo/reward.py)
    from omegaconf import OmegaConf
    from verl.trainer.ppo.reward import get_custom_reward_fn

    for name in ("compute_score", "compute_score_async"):
        cfg = OmegaConf.create({"reward": {"custom_reward_function": {"path": "pkg://solvergym.adapters.verl",
                                                                     "name": name}}})
        loaded = get_custom_reward_fn(cfg)
        got = loaded(row["data_source"], answer, row["reward_model"]["ground_truth"], row["extra_info"])
        got = asyncio.run(got) if asyncio.iscoroutine(got) else got
        assert got["score"] == 1.0 and got["status"] == "ok", name


def _trl_tools(instance):
    """The tools TRL's GRPOTrainer takes from an environment: its public functions but reset and
    get_reward (grpo_trainer.py, the environment_factory probe)."""
    import inspect

    return {name: getattr(instance, name) for name, _ in inspect.getmembers(type(instance), predicate=inspect.isfunction)
            if name not in ("reset", "get_reward") and not name.startswith("_")}


def test_the_trl_environment_runs_tool_calls_in_the_sandbox_and_pays_the_envs_return():
    import os

    from transformers.utils import get_json_schema

    from solvergym.adapters.trl_env import environment_factory
    from solvergym.agents.scripted import SolverToolOracle, play_episode

    kwargs = {"task": "sat-bench", "solver": "z3"}
    cls = environment_factory("SolverTool-v0", **kwargs)
    rows = trl_rows("SolverTool-v0", 2, seed=5, **kwargs)
    own = gym.make("SolverTool-v0", **kwargs).unwrapped
    for row in rows:
        env = cls()
        tools = _trl_tools(env)
        assert set(tools) == {"run_z3", "answer"}
        for tool in tools.values():  # TRL renders every tool's schema from its hints and docstring
            schema = get_json_schema(tool)["function"]
            assert schema["parameters"]["required"] and schema["description"]
        assert env.reset(**row) is None  # the row holds the prompt
        instance = json.loads(row[INSTANCE_COLUMN])
        played = play_episode(own, SolverToolOracle(), options={"instance": instance})
        own.reset(options={"instance": instance})
        out = tools["run_z3"](code=own.gold().program("z3"))  # as TRL calls it: tool(**arguments)
        assert "stdout: sat" in out or "stdout: unsat" in out
        tools["answer"](answer="no" if "unsat" in out else "yes")
        assert env.get_reward() == pytest.approx(played["reward"]) and played["reward"] == pytest.approx(2.2)
        assert tools["run_z3"](code="print(1)").startswith("The episode has ended")
    # the program runs in a sandbox child, not in this process (where TRL runs its own tools)
    env = cls()
    env.reset(**rows[0])
    out = _trl_tools(env)["run_z3"](code="import os, z3\nprint(os.getpid(), z3.Solver().check())")
    assert f"stdout: {os.getpid()} " not in out and "stdout: " in out
    assert _trl_tools(env)["run_z3"](code=None).startswith("The argument must be text")
    # an episode left without an answer ends as one out of turns: the env's own return for it
    expected = gym.make("SolverTool-v0", **kwargs).unwrapped
    expected.reset(options={"instance": json.loads(rows[0][INSTANCE_COLUMN])})
    total, done = 0.0, False
    for action in ["<tool_call>\nimport os, z3\nprint(os.getpid(), z3.Solver().check())\n</tool_call>"] + [""] * 10:
        if done:
            break
        _, r, term, trunc, _ = expected.step(action)
        total, done = total + r, term or trunc
    assert env.get_reward() == pytest.approx(total)
    with pytest.raises(ValueError, match="offers no solver tools"):
        environment_factory("SolverSAT-v0")
    with pytest.raises(ValueError, match="unknown env"):
        environment_factory("SolverTol-v0")


_GRPO_STEP = """
import json, os, sys
os.environ["TRL_EXPERIMENTAL_SILENCE"] = "1"
from pathlib import Path
import trl
from trl import GRPOConfig, GRPOTrainer
from trl.chat_template_utils import add_response_schema
from solvergym.adapters.trl import trl_dataset
from solvergym.adapters.trl_env import environment_factory
from solvergym.agents.models import default_model_dir, load_tokenizer

path = str(default_model_dir())
tok = load_tokenizer(path)
tok.chat_template = (Path(trl.__file__).parent / "chat_templates" / "qwen2_5.jinja").read_text()
tok = add_response_schema(tok)
kwargs = {"task": "sat-bench", "solver": "z3"}
args = GRPOConfig(output_dir=sys.argv[1], per_device_train_batch_size=2, num_generations=2, max_completion_length=8,
                  max_steps=1, report_to=[], use_cpu=True, logging_steps=1, save_strategy="no")
trainer = GRPOTrainer(model=path, processing_class=tok, environment_factory=environment_factory("SolverTool-v0", **kwargs),
                      train_dataset=trl_dataset("SolverTool-v0", 2, seed=0, **kwargs), args=args)
trainer.train()
print(json.dumps({"tools": [t.__name__ for t in trainer.tools], "rewards": trainer.reward_func_names,
                  "logged": sorted(trainer.state.log_history[0])}))
"""


@pytest.mark.slow
def test_a_trl_grpo_step_with_the_environment_factory(tmp_path):
    # in a child process: TRL's trainer sets Accelerate's process-wide state (cpu=True), which the
    # suite's own trainers would then find already set. TRL 1.16 refuses a chat template without
    # tool calling (SmolLM2's): TRL's ChatML template for Qwen2.5 (SmolLM2's tokens are ChatML) and
    # its response parser make the embedded model usable
    import subprocess
    import sys

    script = tmp_path / "grpo_step.py"
    script.write_text(_GRPO_STEP)
    done = subprocess.run([sys.executable, str(script), str(tmp_path / "out")], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["tools"] == ["answer", "run_z3"] and result["rewards"] == ["SolverTool_v0Environment"]
    assert "rewards/SolverTool_v0Environment/mean" in result["logged"] and "tools/call_frequency" in result["logged"]


def test_reasoning_gym_datasets_score_as_the_env_does():
    import reasoning_gym

    from solvergym.adapters.reasoning_gym import register, single_turn_ids

    ids = single_turn_ids()
    assert {"SolverSAT-v0", "SolverSATBench-v0", "SolverLogic-v0", "SolverOR-v0"} <= set(ids)
    assert "SolverTool-v0" not in ids
    names = register(["SolverLogic-v0", "SolverSAT-v0"])
    assert names == ["solvergym/SolverLogic-v0", "solvergym/SolverSAT-v0"] and register(["SolverSAT-v0"]) == names[1:]
    data = reasoning_gym.create_dataset("solvergym/SolverLogic-v0", size=4, seed=7, env_kwargs={"family": "subset-sum"})
    again = reasoning_gym.create_dataset("solvergym/SolverLogic-v0", size=4, seed=7, env_kwargs={"family": "subset-sum"})
    assert [e["question"] for e in data] == [e["question"] for e in again]  # seeded
    score = reasoning_gym.get_score_answer_fn("solvergym/SolverLogic-v0")  # a default-config dataset's
    rng = np.random.default_rng(1)
    row = lambda e: {INSTANCE_COLUMN: e["metadata"][INSTANCE_COLUMN]}  # noqa: E731
    for entry in data:
        kwargs = {"family": "subset-sum"}
        env = gym.make("SolverLogic-v0", **kwargs).unwrapped
        env.reset(options={"instance": json.loads(entry["metadata"][INSTANCE_COLUMN])})
        for response in (entry["answer"], env.sample_answer(rng), "no idea"):
            assert score(response, entry) == _own_reward("SolverLogic-v0", kwargs, row(entry), response)
        assert score(entry["answer"], entry) > 0
        assert score(None, entry) == 0.0 and score(entry["answer"], {"metadata": {}}) == 0.0
    sat = reasoning_gym.create_dataset("solvergym/SolverSAT-v0", size=2, seed=0)
    assert sat.score_answer(sat[0]["answer"], sat[0]) == _own_reward("SolverSAT-v0", {}, row(sat[0]), sat[0]["answer"])
