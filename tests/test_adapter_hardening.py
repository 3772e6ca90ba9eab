"""Issue 43, items 4-7: the adapters never crash a run or change a reward silently.

- verl collates the reward dicts of a batch by the first row's keys: every row, of any env and
  scored or not, returns the same keys (replayed with verl 0.9.1's own statements).
- A row nested far too deep, or with a keyword its env does not take, scores 0.0 with its reason
  through every adapter (TRL, verl, verl's tools, reasoning-gym, TRL's environment_factory).
- A row names registered env ids only: it never imports a module, from the working directory or
  anywhere else; the user still imports one by naming it to an adapter.
- A row cannot carry its own score into verl_tool.compute_score: the return is only what the
  tool itself recorded for the rollout.
"""
from __future__ import annotations

import ast
import asyncio
import json
import pickle
import sys
import types
import warnings
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

import solvergym  # noqa: F401
from solvergym.adapters.scoring import ENV_COLUMN, INSTANCE_COLUMN, KWARGS_COLUMN, completion_text
from solvergym.adapters.trl import reward_fn, trl_rows
from solvergym.adapters.verl import compute_score, compute_score_async, verl_rows

#: what a deeply nested row holds: JSON text 100,000 levels deep (json.loads raises RecursionError)
DEEP_TEXT = "[" * 100_000 + "]" * 100_000


def _deep_dict(levels: int = 100_000) -> dict:
    top = cur = {}
    for _ in range(levels):
        cur["a"] = {}
        cur = cur["a"]
    return top


def _own(env_id, kwargs, instance_text, completion):
    """The env's own reward and components for ``completion`` on the instance."""
    env = gym.make(env_id, **kwargs).unwrapped
    env.reset(options={"instance": json.loads(instance_text)})
    _, reward, *_, info = env.step(completion)
    env.close()
    return reward, info["reward_components"]


def _gold(env_id, kwargs, instance_text):
    env = gym.make(env_id, **kwargs).unwrapped
    env.reset(options={"instance": json.loads(instance_text)})
    answer = env.gold().answer
    env.close()
    return answer


# ------------------------------------------------------------------ item 4: verl's collation
def _verl_statements(relpath: str, function: str):
    """verl 0.9.1's own statements that collate per-row reward dicts, compiled from its installed
    source: in ``function`` of ``verl/<relpath>``, from ``reward_extra_infos = [...]`` through the
    ``for key in reward_extra_keys`` loop that indexes every row with the first row's keys
    (agent_loop.py ``AgentLoopWorker._postprocess``, lines 1107-1111 in 0.9.1; reward_loop.py
    ``RewardLoopManager.compute_rm_score``, lines 365-369). Reading them from the file means the
    replay is verl's code, and fails if verl changes it."""
    import verl

    path = Path(verl.__file__).parent / relpath
    tree = ast.parse(path.read_text())
    fn = next(n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == function)
    start = next(i for i, s in enumerate(fn.body)
                 if isinstance(s, ast.Assign) and ast.unparse(s.targets[0]) == "reward_extra_infos")
    end = next(i for i in range(start, len(fn.body)) if isinstance(fn.body[i], ast.For))
    stmts = fn.body[start:end + 1]
    assert "reward_extra_keys = list(reward_extra_infos[0].keys())" in [ast.unparse(s) for s in stmts]
    assert ast.unparse(stmts[-1].body[0]) == "non_tensor_batch[key] = np.array([info[key] for info in reward_extra_infos])"
    return compile(ast.Module(body=stmts, type_ignores=[]), str(path), "exec")


def verl_collate(results: list[dict]) -> dict[str, np.ndarray]:
    """What verl 0.9.1 makes of ``compute_score``'s dicts, one per row, on both of its paths: the
    naive reward manager turns a dict result into ``reward_extra_info`` key by key
    (``reward_loop/reward_manager/naive.py``, ``run_single``: ``for key, value in result.items()``),
    then the agent loop's ``_postprocess`` (streamed rewards) and the reward loop's
    ``compute_rm_score`` (batch rewards) collate them with the statements above. Both must agree."""
    infos = [{key: value for key, value in r.items()} for r in results]
    agent = {"inputs": [types.SimpleNamespace(extra_fields={"reward_extra_info": i}) for i in infos],
             "non_tensor_batch": {}, "np": np}
    exec(_verl_statements("experimental/agent_loop/agent_loop.py", "_postprocess"), agent)
    batch = {"outputs_flat": [{"reward_score": r["score"], "reward_extra_info": i} for r, i in zip(results, infos)],
             "np": np}
    exec(_verl_statements("experimental/reward_loop/reward_loop.py", "compute_rm_score"), batch)
    assert agent["reward_extra_keys"] == batch["reward_extra_keys"]
    assert {k: list(v) for k, v in agent["non_tensor_batch"].items()} == \
        {k: list(v) for k, v in batch["non_tensor_batch"].items()}
    return agent["non_tensor_batch"]


def test_verl_collates_a_batch_of_mixed_envs_and_failed_rows():
    pytest.importorskip("verl", reason="verl is not installed")
    sat, zebra, clique = ({"n": 3, "k": 5, "l": 6}, {}, {"family": "clique"})
    batch = []  # (data_source, completion, ground truth, extra_info, what the env pays: (reward, components) or None)
    for env_id, kw in (("SolverSAT-v0", sat), ("SolverZebra-v0", zebra), ("SolverLogic-v0", clique)):
        row = verl_rows(env_id, 1, seed=3, **kw)[0]
        gt = row["reward_model"]["ground_truth"]
        for completion in (_gold(env_id, kw, gt), "no idea"):
            batch.append((row["data_source"], completion, gt, row["extra_info"], _own(env_id, kw, gt, completion)))
    sat_row = verl_rows("SolverSAT-v0", 1, seed=3, **sat)[0]
    gt, info = sat_row["reward_model"]["ground_truth"], sat_row["extra_info"]
    batch += [("NoSuchEnv-v0", "x", gt, info, None),                  # an unknown env
              ("SolverSAT-v0", "x", '{"n": 3', info, None),            # a broken instance
              ("SolverSAT-v0", "x", gt, {"env_kwargs": "[1]"}, None),  # keyword arguments that are no object
              ("SolverSAT-v0", b"bytes", gt, info, None)]              # a completion that is not text
    results = [compute_score(*args) for *args, _ in batch]
    # each row first in turn: verl indexes the others with its keys, as it does in a real batch
    orders = [list(range(first, len(batch))) + list(range(first)) for first in range(len(batch))]
    collated = [verl_collate([results[i] for i in order]) for order in orders]
    from solvergym.adapters.verl import COMPONENTS

    keys = ["score", "status", "reason", "correct", *(f"component/{c}" for c in COMPONENTS)]
    assert all(list(r) == keys for r in results), [sorted(r) for r in results]
    for order, columns in zip(orders, collated):
        assert list(columns) == keys
        for j, i in enumerate(order):
            paid = batch[i][-1]
            if paid is None:
                assert columns["score"][j] == 0.0 and columns["status"][j] in ("bad_row", "bad_completion")
                assert all(columns[f"component/{c}"][j] == 0.0 for c in COMPONENTS)
                continue
            reward, components = paid
            assert columns["score"][j] == reward and columns["status"][j] == "ok"
            assert set(components) <= set(COMPONENTS)
            for c in COMPONENTS:  # the env's own components, and 0.0 for those it does not pay
                assert columns[f"component/{c}"][j] == components.get(c, 0.0), (batch[i][0], c)
    assert max(r["score"] for r in results) > 1.0  # the Zebra gold pays its process reward, summed
    # a dataset that names its own set (verl's reward_kwargs) gets exactly that set on every row
    mine = [compute_score(*args, components=["format", "correct"]) for *args, _ in batch]
    assert all(list(r) == ["score", "status", "reason", "correct", "component/format", "component/correct"]
               for r in mine)
    assert [r["score"] for r in mine] == [r["score"] for r in results]  # the score is always the whole reward
    verl_collate(mine)
    async_mine = asyncio.run(compute_score_async(*batch[0][:4], components=["format", "correct"]))
    assert async_mine == mine[0]


def test_the_default_components_are_every_single_turn_envs():
    from solvergym import registry
    from solvergym.adapters.verl import COMPONENTS

    seen = set()
    for env_id in registry.env_ids():
        for mode in registry.modes(env_id):
            env = gym.make(env_id, **({"mode": mode} if len(registry.modes(env_id)) > 1 else {})).unwrapped
            if env.max_turns == 1:
                seen |= set(env.components)
            env.close()
    from solvergym.envs.logic import FAMILIES

    for family in FAMILIES:
        seen |= set(registry.components("SolverLogic-v0", family=family))
    assert set(COMPONENTS) == seen and len(COMPONENTS) == len(seen)


def test_verl_tool_scores_have_the_same_keys_with_and_without_an_episode():
    pytest.importorskip("verl", reason="verl is not installed")
    from solvergym.adapters.verl_tool import SolverGymTool, verl_tool_rows
    from solvergym.adapters.verl_tool import compute_score as tool_score

    kw = {"task": "sat-bench", "solver": "z3"}
    row = verl_tool_rows("SolverTool-v0", 1, seed=1, **kw)[0]
    tool = SolverGymTool({"env_id": "SolverTool-v0", "env_kwargs": kw, "tool": "answer"})
    agent_data = types.SimpleNamespace(request_id="keys-1", extra_fields={})
    iid, _ = asyncio.run(tool.create(create_kwargs=row["extra_info"]["tools_kwargs"]["answer"]["create_kwargs"]))
    asyncio.run(tool.execute(iid, {"answer": "yes"}, agent_data=agent_data))
    asyncio.run(tool.release(iid))
    played = tool_score(row["data_source"], "", "", {**row["extra_info"], **agent_data.extra_fields})
    none = tool_score(row["data_source"], "", "", row["extra_info"])
    assert played["status"] == "ok" and none["status"] == "no_episode" and list(played) == list(none)
    columns = verl_collate([none, played])
    assert list(columns["status"]) == ["no_episode", "ok"]


# ------------------------------------------------------------------ item 5: a bad row is a zero with its reason
def test_a_row_nested_deep_or_with_an_unknown_keyword_scores_zero_with_its_reason():
    row = trl_rows("SolverSAT-v0", 1, seed=0)[0]
    answer = _gold("SolverSAT-v0", {}, row[INSTANCE_COLUMN])
    bad_rows = {  # what each row holds -> words of its reason
        "deep instance": ({**row, INSTANCE_COLUMN: DEEP_TEXT}, "nested deeper"),
        "deep kwargs": ({**row, KWARGS_COLUMN: DEEP_TEXT}, "nested deeper"),
        "deep kwargs dict": ({**row, KWARGS_COLUMN: _deep_dict()}, "nested deeper"),
        "unknown keyword": ({**row, KWARGS_COLUMN: '{"bogus": 1}'}, "bogus"),
        "deep env id": ({**row, ENV_COLUMN: [[[[1]]]]}, "env"),
    }
    # TRL: the reward function of the scorer's env
    fn = reward_fn("SolverSAT-v0")
    for name, (bad, why) in bad_rows.items():
        cols = {k: [bad[k], row[k]] for k in (ENV_COLUMN, KWARGS_COLUMN, INSTANCE_COLUMN)}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the warning names each status once; the scores say more
            got = fn(completions=[answer, answer], **cols)
        assert got == [0.0, 1.0], name
        assert fn.last_scores[0].status == "bad_row" and why in fn.last_scores[0].reason, (name, fn.last_scores[0])
    fn.scorer.close()
    # verl: the env comes from the row
    for name, (bad, why) in bad_rows.items():
        got = compute_score(bad[ENV_COLUMN], answer, bad[INSTANCE_COLUMN], {"env_kwargs": bad[KWARGS_COLUMN]})
        assert (got["score"], got["status"]) == (0.0, "bad_row") and why in got["reason"], (name, got)
        got = asyncio.run(compute_score_async(bad[ENV_COLUMN], answer, bad[INSTANCE_COLUMN],
                                              {"env_kwargs": bad[KWARGS_COLUMN]}))
        assert got["status"] == "bad_row", name
    # reasoning-gym: score_answer reads the entry's metadata
    import reasoning_gym

    from solvergym.adapters.reasoning_gym import register

    score = reasoning_gym.get_score_answer_fn(register(["SolverSAT-v0"])[0])
    assert score(answer, {"metadata": row}) == 1.0
    for name, (bad, _) in bad_rows.items():
        assert score(answer, {"metadata": bad}) == 0.0, name
    assert score(answer, {"metadata": DEEP_TEXT}) == 0.0 and score(answer, _deep_dict()) == 0.0


def test_a_deep_or_unknown_keyword_row_through_the_episode_adapters_is_a_zero_with_its_reason():
    from solvergym.adapters.trl_env import environment_factory
    from solvergym.adapters.verl_tool import SolverGymTool, verl_tool_rows

    kw = {"task": "sat-bench", "solver": "z3"}
    vrow = verl_tool_rows("SolverTool-v0", 1, seed=2, **kw)[0]
    gt = vrow["reward_model"]["ground_truth"]
    tool = SolverGymTool({"env_id": "SolverTool-v0", "env_kwargs": kw, "tool": "answer"})
    for ground_truth, env_kwargs, why in ((gt, DEEP_TEXT, "nested deeper"), (gt, _deep_dict(), "nested deeper"),
                                          (DEEP_TEXT, None, "nested deeper"), (_deep_dict(), None, "nested deeper"),
                                          (gt, '{"bogus": 1}', "bogus")):
        iid, _ = asyncio.run(tool.create(ground_truth=ground_truth, env_kwargs=env_kwargs))
        resp, reward, metrics = asyncio.run(tool.execute(iid, {"answer": "yes"}))
        assert (reward, metrics["status"]) == (0.0, "bad_row") and why in metrics["reason"], metrics
        assert asyncio.run(tool.calc_reward(iid)) == 0.0
        asyncio.run(tool.release(iid))
    # TRL's environment_factory: reset(**row) with such a row ends the episode at 0.0 with the reason
    cls = environment_factory("SolverTool-v0", **kw)
    row = trl_rows("SolverTool-v0", 1, seed=2, **kw)[0]
    for bad in ({**row, INSTANCE_COLUMN: DEEP_TEXT}, {**row, INSTANCE_COLUMN: _deep_dict()},
                {**row, INSTANCE_COLUMN: '{"n": 3'}):
        env = cls()
        out = env.reset(**bad)
        assert isinstance(out, str) and "cannot be posed" in out, out
        assert env.run_z3(code="print(1)").startswith("The row cannot be posed") and env.get_reward() == 0.0
        assert env.error and env.answer(answer="yes").startswith("The row cannot be posed")
        env._close()
    good = cls()
    assert good.reset(**row) is None and good.error == ""
    good._close()


# ------------------------------------------------------------------ item 6: a row imports no code
_PROBE = """
from pathlib import Path
Path(__file__).with_suffix(".ran").write_text("imported")
"""


def test_a_row_names_registered_ids_only_and_imports_nothing(tmp_path, monkeypatch):
    import reasoning_gym

    from solvergym.adapters.reasoning_gym import register
    from solvergym.adapters.scoring import EnvScorer

    monkeypatch.chdir(tmp_path)  # a module in the working directory: what a row must never run
    (tmp_path / "rowprobe_mod.py").write_text(_PROBE)
    monkeypatch.delitem(sys.modules, "this", raising=False)
    monkeypatch.delitem(sys.modules, "rowprobe_mod", raising=False)
    monkeypatch.setattr(sys, "path", list(sys.path))  # whatever an import adds is undone after the test
    row = verl_rows("SolverSAT-v0", 1, seed=0)[0]
    gt, info = row["reward_model"]["ground_truth"], row["extra_info"]
    answer = _gold("SolverSAT-v0", {}, gt)
    rg = reasoning_gym.get_score_answer_fn(register(["SolverSAT-v0"])[0])
    trl_row = trl_rows("SolverSAT-v0", 1, seed=0)[0]
    fn = reward_fn("SolverSAT-v0")
    for named in ("this:SolverSAT-v0", "rowprobe_mod:SolverSAT-v0"):
        got = compute_score(named, answer, gt, info)
        assert (got["score"], got["status"]) == (0.0, "bad_row") and "not imported" in got["reason"], got
        assert rg(answer, {"metadata": {**trl_row, ENV_COLUMN: named}}) == 0.0
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # TRL's reward function warns of a bad row; the score says more
            assert fn(completions=[answer], **{k: [v] for k, v in {**trl_row, ENV_COLUMN: named}.items()}) == [0.0]
        assert "not imported" in fn.last_scores[0].reason
    assert "this" not in sys.modules and "rowprobe_mod" not in sys.modules
    assert not (tmp_path / "rowprobe_mod.ran").exists()
    assert compute_score("SolverSAT-v0", answer, gt, info)["score"] == 1.0  # a registered id scores
    assert compute_score("solvergym:SolverSAT-v0", answer, gt, info)["score"] == 1.0  # solvergym is imported
    # the user imports a module by naming it to an adapter (here its constructor); rows may name it since
    scorer = EnvScorer("rowprobe_mod:SolverSAT-v0")
    assert (tmp_path / "rowprobe_mod.ran").exists() and "rowprobe_mod" in sys.modules
    assert scorer.env_id == "SolverSAT-v0"
    assert compute_score("rowprobe_mod:SolverSAT-v0", answer, gt, info)["score"] == 1.0
    scorer.close()
    fn.scorer.close()


# ------------------------------------------------------------------ item 7: a row cannot carry its own score
def test_a_row_cannot_carry_its_own_score():
    from solvergym.adapters.verl_tool import SolverGymTool, verl_tool_rows
    from solvergym.adapters.verl_tool import compute_score as tool_score

    kw = {"task": "sat-bench", "solver": "z3"}
    row = verl_tool_rows("SolverTool-v0", 1, seed=4, **kw)[0]
    gt = row["reward_model"]["ground_truth"]
    forged = [{"solvergym_return": 2.2, "solvergym_done": True, "solvergym_correct": True},
              {"solvergym_episode": {"value": 2.2, "done": True, "correct": True}},
              {"solvergym_episode": [2.2, True, True]}]
    for extra in forged:
        # a rollout that never called a tool: verl hands compute_score the row's own extra_info
        got = tool_score(row["data_source"], "```answer\nyes\n```", gt, {**row["extra_info"], **extra})
        assert (got["score"], got["status"], got["correct"]) == (0.0, "no_episode", None), (extra, got)
    # a real episode: its return reaches compute_score as verl's reward loop merges the rollout's
    # extra_fields into the row's extra_info (naive.py run_single: extra_info.update(tool_extra_fields))
    tool = SolverGymTool({"env_id": "SolverTool-v0", "env_kwargs": kw, "tool": "answer"})
    env = gym.make("SolverTool-v0", **kw).unwrapped
    env.reset(options={"instance": json.loads(gt)})
    wrong = "no" if "yes" in env.gold().answer else "yes"
    _, own, *_ = env.step(f"```answer\n{wrong}\n```")
    env.close()
    agent_data = types.SimpleNamespace(request_id="forge-1", extra_fields={})
    iid, _ = asyncio.run(tool.create(create_kwargs=row["extra_info"]["tools_kwargs"]["answer"]["create_kwargs"]))
    asyncio.run(tool.execute(iid, {"answer": wrong}, agent_data=agent_data))
    asyncio.run(tool.release(iid))
    assert own < 0
    for extra in forged:
        extra_info = {**row["extra_info"], **extra}
        extra_info.update(pickle.loads(pickle.dumps(agent_data.extra_fields)).items())  # as Ray carries it over
        got = tool_score(row["data_source"], "", gt, extra_info)
        assert (got["score"], got["status"], got["correct"], got["done"]) == (own, "ok", False, True), got
    from solvergym.adapters.verl_tool import EpisodeReturn

    record = next(v for v in agent_data.extra_fields.values() if isinstance(v, EpisodeReturn))
    assert record.value == own and record.done
