"""verl's multi-turn tool form (adapters/verl_tool.py): a SolverTool-v0 episode driven through the
tool runs its programs in the real sandbox and pays what the env itself pays for the same turns,
in the one-instance-per-rollout form and in verl 0.9's create/execute/release-per-call form; the
schemas, rows, YAML and function tools are verl's shapes; bad input is a message and 0.0 with the
reason, never an exception; the live instances and episodes are bounded.
"""
from __future__ import annotations

import asyncio
import copy
import importlib
import json
import os
import pickle
import types

import gymnasium as gym
import pytest
import yaml

import solvergym  # noqa: F401
from solvergym.adapters import verl_tool
from solvergym.adapters.scoring import MAX_INSTANCE_CHARS
from solvergym.adapters.verl import verl_rows
from solvergym.adapters.verl_tool import (HAVE_VERL, RECORDS_PER_EPISODE, SolverGymTool, ToolResponse,
                                          compute_score, function_tools, tool_config, tool_names, tool_schema,
                                          verl_tool_rows, write_tool_config, write_verl_tool_parquet)
from solvergym.agents.scripted import oracle_action

ENV = "SolverTool-v0"
KW = {"task": "sat-bench", "solver": "z3"}


def run(coro):
    return asyncio.run(coro)


def schema_dict(schema):
    return schema.model_dump(exclude_unset=True, exclude_none=True) if hasattr(schema, "model_dump") else schema


def code_of(action: str) -> str:
    """The program of an oracle turn (``<tool_call>\\n...</tool_call>``)."""
    return action.split("<tool_call>\n", 1)[1].rsplit("</tool_call>", 1)[0]


def own_rewards(instance, actions, **kwargs):
    """What a plain env pays, turn by turn, for ``actions`` on ``instance``."""
    env = gym.make(ENV, **{**KW, **kwargs}).unwrapped
    env.reset(options={"instance": instance})
    out = []
    for a in actions:
        obs, r, term, trunc, _ = env.step(a)
        out.append((obs, r))
        if term or trunc:
            break
    env.close()
    return out


def oracle_turns(instance):
    """The scripted oracle's two turns on ``instance`` (a program, then its answer) and the env's pay."""
    env = gym.make(ENV, **KW).unwrapped
    env.reset(options={"instance": instance})
    first = oracle_action(env, env._last_obs)
    obs, r1, *_ = env.step(first)
    second = oracle_action(env, obs)
    _, r2, term, *_ = env.step(second)
    env.close()
    assert term
    return first, second, obs, [r1, r2]


@pytest.fixture(scope="module")
def rows():
    return verl_tool_rows(ENV, 3, seed=5, **KW)


@pytest.fixture(scope="module")
def tool():
    return SolverGymTool({"env_id": ENV, "env_kwargs": KW})


def test_an_oracle_episode_pays_what_the_env_pays_and_runs_in_the_sandbox(rows, tool):
    for row in rows[:2]:
        gt = row["reward_model"]["ground_truth"]
        first, second, own_obs, own = oracle_turns(gt)
        create = row["extra_info"]["tools_kwargs"]["run_z3"]["create_kwargs"]
        iid, created = run(tool.create("rollout-" + str(row["extra_info"]["index"]), **create))
        assert iid == "rollout-" + str(row["extra_info"]["index"]) and created.text is None
        resp, r1, m1 = run(tool.execute(iid, {"code": code_of(first)}))
        assert isinstance(resp, ToolResponse) and resp.text == own_obs and "stdout: " in resp.text
        assert (r1, m1["status"], m1["tool_status"], m1["done"]) == (own[0], "ok", "ok", False)
        assert run(tool.calc_reward(iid)) == own[0] == 0.0  # reward_timing="end": a tool call pays nothing yet
        resp, r2, m2 = run(tool.execute(iid, {"answer": second}))
        assert resp.text == "Correct." and r2 == own[1] and m2["done"] and m2["correct"] is True
        assert run(tool.calc_reward(iid)) == pytest.approx(sum(own)) == pytest.approx(2.2)
        # the same turns as the tool sends them, stepped on a plain env: the same return
        tool_form = [f"<tool_call>\n{code_of(first)}\n</tool_call>", second]
        assert sum(r for _, r in own_rewards(gt, tool_form)) == run(tool.calc_reward(iid))
        run(tool.release(iid))
        assert run(tool.calc_reward(iid)) == 0.0
    # the program runs in a sandbox child, not in this process
    gt = rows[0]["reward_model"]["ground_truth"]
    probe = "import os, z3\nprint(os.getpid(), z3.Solver().check())"
    iid, _ = run(tool.create(ground_truth=gt))
    resp, _, _ = run(tool.execute(iid, {"code": probe}))
    assert f"stdout: {os.getpid()} " not in resp.text and "stdout: " in resp.text and " sat" in resp.text
    # a bare answer is put in the env's answer fence; a wrong one pays what the env pays for it
    wrong = "yes" if "unsat" in oracle_turns(gt)[2] else "no"
    resp, r, m = run(tool.execute(iid, {"answer": wrong}))
    own = own_rewards(gt, [f"<tool_call>\n{probe}\n</tool_call>", f"```answer\n{wrong}\n```"])
    assert resp.text == "Incorrect." and m["correct"] is False and r == own[1][1] < 0
    assert run(tool.calc_reward(iid)) == pytest.approx(sum(r for _, r in own))
    run(tool.release(iid))


def test_per_call_timing_pays_each_step_as_the_env_does(rows, tool):
    row = rows[2]
    gt = row["reward_model"]["ground_truth"]
    first, second, _, _ = oracle_turns(gt)
    per_call = json.dumps({**KW, "reward_timing": "per_call"})  # a row's kwargs over the config's
    iid, _ = run(tool.create(ground_truth=gt, env_kwargs=per_call))
    hack = "from z3 import *\nprint('z3 imported')"
    calls = [{"code": code_of(first)}, {"code": hack}, {"answer": second}]
    got = [run(tool.execute(iid, c)) for c in calls]
    turns = [f"<tool_call>\n{code_of(first)}\n</tool_call>", f"<tool_call>\n{hack}\n</tool_call>", second]
    own = own_rewards(gt, turns, reward_timing="per_call")
    assert [r for _, r, _ in got] == [r for _, r in own]
    assert [t.text for t, _, _ in got] == [o for o, _ in own]
    assert got[0][1] == pytest.approx(1.1) and got[1][1] == pytest.approx(-1.1)  # paid, then paid back
    assert [m["turn"] for *_, m in got] == [1, 2, 3] and got[2][2]["done"]
    assert run(tool.calc_reward(iid)) == pytest.approx(sum(r for _, r in own))
    run(tool.release(iid))


def test_verl_09_rollout_form_shares_one_episode_across_per_call_instances(rows):
    # verl 0.9's ToolAgentLoop: create(create_kwargs=...), execute(..., agent_data=...), release, per
    # call; the tools come from the YAML entries, one object per tool
    tools = {e["config"]["tool"]: SolverGymTool(e["config"], e["tool_schema"]) for e in tool_config(ENV, **KW)["tools"]}
    assert set(tools) == {"run_z3", "answer"} and {t.name for t in tools.values()} == set(tools)
    row = rows[1]
    gt = row["reward_model"]["ground_truth"]
    first, second, _, _ = oracle_turns(gt)
    agent_data = types.SimpleNamespace(request_id="req-1", extra_fields={})

    async def call(name, arguments):
        tool = tools[name]
        iid, _ = await tool.create(create_kwargs=row["extra_info"]["tools_kwargs"][name]["create_kwargs"])
        try:
            return await tool.execute(iid, arguments, agent_data=agent_data)
        finally:
            await tool.release(iid)

    async def parallel():  # two calls in one turn (verl gathers them): they queue on the episode
        return await asyncio.gather(call("run_z3", {"code": "print('a')"}), call("run_z3", {"code": code_of(first)}))

    a, b = run(parallel())
    assert sorted([a[2]["turn"], b[2]["turn"]]) == [1, 2] and "stdout: a" in a[0].text
    record = agent_data.extra_fields[verl_tool.RETURN_FIELD]
    assert (record.value, record.done, record.turns) == (0.0, False, 2)
    resp, reward, metrics = run(call("answer", {"answer": second}))
    programs = [f"<tool_call>\n{c}\n</tool_call>" for c in ("print('a')", code_of(first))]
    expected = [r for _, r in own_rewards(gt, (programs if a[2]["turn"] == 1 else programs[::-1]) + [second])]
    assert resp.text == "Correct." and metrics["turn"] == 3 and reward == expected[-1]
    assert agent_data.extra_fields[verl_tool.RETURN_FIELD].value == pytest.approx(sum(expected))
    # verl's reward loop merges the rollout's extra_fields into extra_info
    extra_info = {**row["extra_info"], **agent_data.extra_fields}
    score = compute_score(row["data_source"], "the decoded response", gt, extra_info)
    assert score["score"] == pytest.approx(sum(expected)) and score["status"] == "ok" and score["correct"] is True
    assert run(call("run_z3", {"code": "print(1)"}))[2]["status"] == "ended"
    empty = compute_score(row["data_source"], "no tool call", gt, row["extra_info"])
    assert empty["score"] == 0.0 and empty["status"] == "no_episode" and set(empty) == set(score)
    # another rollout of the same row is its own episode
    other = types.SimpleNamespace(request_id="req-2", extra_fields={})
    iid, _ = run(tools["answer"].create(create_kwargs=row["extra_info"]["tools_kwargs"]["answer"]["create_kwargs"]))
    assert run(tools["answer"].execute(iid, {"answer": second}, agent_data=other))[2]["turn"] == 1
    assert run(tools["answer"].calc_reward(iid, agent_data=other)) == other.extra_fields[verl_tool.RETURN_FIELD].value
    run(tools["answer"].release(iid))


def test_schemas_rows_yaml_and_function_tools(rows, tmp_path):
    from transformers.utils import get_json_schema

    assert tool_names(ENV, **KW) == ["run_z3", "answer"]
    sampled = tool_names(ENV, task="sat-bench")
    assert sampled[-1] == "answer" and {"run_z3", "run_python_sat", "run_pysmt"} <= set(sampled)
    run_z3, answer = tool_schema("run_z3"), tool_schema("answer")
    assert run_z3["type"] == "function" and run_z3["function"]["name"] == "run_z3"
    assert run_z3["function"]["parameters"] == {"type": "object", "required": ["code"], "properties": {
        "code": {"type": "string", "description": "the complete Python program; it must print what it finds."}}}
    assert answer["function"]["parameters"]["required"] == ["answer"] and "z3" in run_z3["function"]["description"]
    tool = SolverGymTool({"env_id": ENV, "env_kwargs": json.dumps(KW), "tool": "answer"})
    assert tool.name == "answer" and schema_dict(tool.get_openai_tool_schema()) == answer
    if HAVE_VERL:  # verl imports: the real base class, schema and response
        from verl.tools.base_tool import BaseTool
        from verl.tools.schemas import OpenAIFunctionToolSchema

        assert isinstance(tool, BaseTool) and isinstance(tool.tool_schema, OpenAIFunctionToolSchema)
    # verl deep-copies its tool lists; a copy (or a pickled one) holds no instances
    iid, _ = run(tool.create(ground_truth=rows[0]["reward_model"]["ground_truth"]))
    for twin in (copy.deepcopy(tool), pickle.loads(pickle.dumps(tool))):
        assert twin.name == "answer" and run(twin.execute(iid, {"answer": "no"}))[2]["status"] == "unknown_instance"
    run(tool.release(iid))

    # rows: verl_rows' plus what verl's RLHFDataset reads for tools
    plain = verl_rows(ENV, 3, seed=5, **KW)
    for row, base in zip(rows, plain):
        extra = row["extra_info"]
        assert extra["need_tools_kwargs"] is True and row["agent_name"] == "tool_agent"
        assert set(extra["tools_kwargs"]) == {"run_z3", "answer"}
        for entry in extra["tools_kwargs"].values():
            assert entry["create_kwargs"] == {"ground_truth": row["reward_model"]["ground_truth"],
                                              "env_kwargs": extra["env_kwargs"]}
        kept = {k: v for k, v in extra.items() if k not in ("tools_kwargs", "need_tools_kwargs")}
        trimmed = {**row, "extra_info": kept}
        trimmed.pop("agent_name")
        assert trimmed == base
    import pyarrow.parquet as pq

    table = pq.read_table(write_verl_tool_parquet(tmp_path / "t.parquet", ENV, 2, seed=5, **KW)).to_pylist()
    create = table[0]["extra_info"]["tools_kwargs"]["run_z3"]["create_kwargs"]
    assert create["ground_truth"] == rows[0]["reward_model"]["ground_truth"]

    # the YAML verl reads, and the tools it builds from it (verl's own loader where it imports)
    path = write_tool_config(tmp_path / "conf" / "tools.yaml", ENV, **KW)
    loaded = yaml.safe_load(path.read_text())
    assert loaded == tool_config(ENV, **KW)
    assert [e["class_name"] for e in loaded["tools"]] == ["solvergym.adapters.verl_tool.SolverGymTool"] * 2
    assert all(e["config"]["type"] == "native" and e["config"]["env_kwargs"] == KW for e in loaded["tools"])
    built = []
    for entry in loaded["tools"]:
        module, _, name = entry["class_name"].rpartition(".")
        cls = getattr(importlib.import_module(module), name)  # as verl's get_tool_class finds it
        built.append(cls(config=entry["config"], tool_schema=entry["tool_schema"]))
    assert [t.name for t in built] == ["run_z3", "answer"]
    assert [schema_dict(t.get_openai_tool_schema()) for t in built] == [run_z3, answer]
    try:
        from verl.tools.tool_registry import initialize_tools_from_config
    except Exception:  # noqa: BLE001 - verl (or omegaconf) absent: the loader above is what it does
        initialize_tools_from_config = None
    if initialize_tools_from_config is not None:
        assert [t.name for t in initialize_tools_from_config(str(path))] == ["run_z3", "answer"]

    # the function-tool form: typed functions whose inferred schema is the tool's
    fns = function_tools(ENV, **KW)
    assert [f.__name__ for f in fns] == ["run_z3"]
    inferred = get_json_schema(fns[0])
    inferred["function"].pop("return", None)  # verl's schema model has no return field
    assert inferred == run_z3
    outs = [fns[0](code=f"print({i} * 2)") for i in range(5)]  # past the env's 4 turns: posed again
    assert [f"stdout: {2 * i}\n" in o for i, o in enumerate(outs)] == [True] * 5
    assert fns[0](code=None).startswith("The argument must be text")

    with pytest.raises(ValueError, match="offers no solver tools"):
        SolverGymTool({"env_id": "SolverSAT-v0"})
    with pytest.raises(ValueError, match="unknown env"):
        SolverGymTool({"env_id": "SolverTol-v0"})
    with pytest.raises(ValueError, match="has no tool"):
        SolverGymTool({"env_id": ENV, "env_kwargs": KW, "tool": "run_sympy"})


def test_bad_input_is_a_message_and_zero_with_its_reason_never_an_exception(rows, tool):
    gt = rows[0]["reward_model"]["ground_truth"]
    iid, _ = run(tool.create(ground_truth=gt))

    def bad(instance_id, parameters, status, *words):
        resp, reward, metrics = run(tool.execute(instance_id, parameters))
        assert reward == 0.0 and metrics["status"] == status and resp.text, metrics
        assert all(w in metrics["reason"] for w in words), metrics["reason"]

    for unknown in ("nope", None, 123, ["x"]):
        bad(unknown, {"code": "print(1)"}, "unknown_instance", "no such instance")
        assert run(tool.calc_reward(unknown)) == 0.0 and run(tool.release(unknown)) is None
    for params in ("print(1)", None, ["code"], 7):
        bad(iid, params, "bad_input", "must be a JSON object")
    bad(iid, {}, "bad_input", "missing parameter")
    bad(iid, {"cod": "print(1)"}, "bad_input", "missing parameter")
    bad(iid, {"code": "print(1)", "answer": "no"}, "bad_input", "not both")
    for value in (None, 123, {"x": 1}, b"print(1)"):
        bad(iid, {"code": value}, "bad_input", "'code' must be text")
    bad(iid, {"answer": 1}, "bad_input", "'answer' must be text")
    # none of that stepped the env: the oracle's episode still pays in full
    first, second, _, own = oracle_turns(gt)
    assert run(tool.execute(iid, {"code": code_of(first)}))[2]["turn"] == 1
    assert run(tool.execute(iid, {"answer": second}))[1] == own[1]
    bad(iid, {"code": "print(1)"}, "ended", "ended")
    bad(iid, {"answer": "no"}, "ended", "ended")
    assert run(tool.calc_reward(iid)) == pytest.approx(2.2)
    run(tool.release(iid))

    instance = json.loads(gt)
    rows_bad = {
        "none": (None, "ground_truth must be the instance JSON"),
        "int": (123, "got int"),
        "not json": ('{"task": "sat-bench"', "refuses the row's instance"),
        "a list": ("[1]", "refuses the row's instance"),
        "forged clauses": (json.dumps({**instance, "problem": {**instance["problem"], "clauses": "x"}}), "bad clause"),
        "another task": (json.dumps({**instance, "task": "nope"}), "unknown tool task"),
        "too long": ("x" * (MAX_INSTANCE_CHARS + 1), "over"),
    }
    for name, (ground_truth, why) in rows_bad.items():
        iid, created = run(tool.create(ground_truth=ground_truth))
        assert (created.text is not None) == (name in ("none", "int", "too long"))  # what create can tell alone
        for _ in range(2):  # and again: the row stays refused
            bad(iid, {"code": "print(1)"}, "bad_row", why)
        assert run(tool.calc_reward(iid)) == 0.0
        run(tool.release(iid))
    for kwargs, why in (("[1]", "JSON object"), ("{", "env keyword arguments"), ('{"nope": 1}', "nope")):
        iid, _ = run(tool.create(ground_truth=gt, env_kwargs=kwargs))
        bad(iid, {"answer": "no"}, "bad_row", why)
        run(tool.release(iid))


def test_live_instances_and_episodes_are_bounded(rows):
    tool = SolverGymTool({"env_id": ENV, "env_kwargs": KW, "max_episodes": 2})
    gt = rows[0]["reward_model"]["ground_truth"]
    ids = [run(tool.create(ground_truth=gt))[0] for _ in range(3)]  # the oldest instance is released
    assert run(tool.execute(ids[0], {"answer": "maybe"}))[2]["status"] == "unknown_instance"
    assert len(tool._handles) == 2
    # rollouts that never release: past two open episodes the least recently used is closed
    rollouts = [types.SimpleNamespace(request_id=f"leak-{i}", extra_fields={}) for i in range(3)]
    for agent_data in rollouts:
        iid, _ = run(tool.create(ground_truth=gt))
        _, reward, metrics = run(tool.execute(iid, {"answer": "maybe"}, agent_data=agent_data))  # a refused turn
        assert metrics["status"] == "ok" and not metrics["done"]
    iid, _ = run(tool.create(ground_truth=gt))
    resp, reward, metrics = run(tool.execute(iid, {"answer": "no"}, agent_data=rollouts[0]))
    assert reward == 0.0 and metrics["status"] == "evicted" and "closed" in metrics["reason"]
    assert run(tool.execute(iid, {"answer": "maybe"}, agent_data=rollouts[2]))[2]["turn"] == 2
    episodes = verl_tool._EPISODES
    assert episodes.live <= 2 and len(episodes.records) <= 2 * RECORDS_PER_EPISODE
    assert all(ep.env is None for ep in episodes.records.values() if not ep.live)  # evicted ones are closed
    for i in list(tool._handles):
        run(tool.release(i))
