"""Issue 24 items 10-11: the clipped ratio (completions the token limit cut, per turn) beside
episodes out of turns, the temperature a report names, and compare's one-estimator columns.
Real envs and real run directories; the agents are the user's kind (objects with ``.text``
and ``.clipped``, or strings)."""
import json
import sys
from pathlib import Path
from types import SimpleNamespace

import gymnasium as gym
import pytest

from solvergym.agents import OracleAgent
from solvergym.agents.base import reply_parts
from solvergym.agents.hf import SamplingConfig
from solvergym.agents.models import load_tokenizer
from solvergym.algorithms.rollout import clipped_ratio, rollout
from solvergym.agents.scripted import oracle_action
from solvergym.evaluation import EvalConfig, load_records, run_eval, write_report
from solvergym.evaluation.agents import act, make_agent, sampling_temperature, spec_temperature
from solvergym.evaluation.report import compare, metric_headers

sys.path.insert(0, str(Path(__file__).parent))
import toy_env  # noqa: E402

toy_env.register()


class _RetryAgent:
    """A user's agent on SolverSAT-v0 with two turns: a first completion it says the token limit
    cut (no answer in it), then the oracle's answer, not cut."""

    name = "retry"

    def __init__(self):
        self.turn: dict[int, int] = {}

    def act(self, observations, envs):
        out = []
        for o, e in zip(observations, envs):
            k = self.turn[id(e)] = self.turn.get(id(e), 0) + 1
            out.append(SimpleNamespace(text="Let me think step by", clipped=True) if k % 2 == 1
                       else SimpleNamespace(text=oracle_action(e, o), clipped=False))
        return out


class _Silent:
    """Strings only: whether anything was cut is not known."""

    name = "silent"

    def act(self, observations, envs):
        return ["no answer"] * len(observations)


def _cells(md: str, label: str = "**all**") -> dict[str, str]:
    lines = md.splitlines()
    header = next(line for line in lines if line.startswith("| level |"))
    row = next(line for line in lines if line.startswith(f"| {label} |"))
    return dict(zip([c.strip() for c in header.strip("|").split("|")], [c.strip() for c in row.strip("|").split("|")]))


def test_clipped_turns_reach_the_records_and_the_report_beside_episodes_out_of_turns(tmp_path):
    cfg = EvalConfig("SolverSAT-v0", agent="retry", instances=3, env_kwargs={"max_turns": 2})
    rep = write_report(run_eval(cfg, tmp_path / "retry", agent=_RetryAgent(), progress=False), png=False)
    records = load_records(tmp_path / "retry")
    assert [(r["turns"], r["clipped"], r["truncated"], r["correct"]) for r in records] == [(2, [True, False], False,
                                                                                            True)] * 3
    assert rep["overall"]["clipped_ratio"] == 0.5 and rep["overall"]["clipped_turns_known"] == 6
    assert rep["overall"]["truncation_rate"] == 0.0
    cells = _cells((tmp_path / "retry" / "report.md").read_text())
    assert cells["clipped"] == "50.0%" and cells["out of turns"] == "0.0%"
    # strings: nothing known about clipping ("-"), and every episode ran out of its two turns
    cfg = EvalConfig("SolverSAT-v0", agent="silent", instances=3, env_kwargs={"max_turns": 2})
    rep = write_report(run_eval(cfg, tmp_path / "silent", agent=_Silent(), progress=False), png=False)
    assert [r["clipped"] for r in load_records(tmp_path / "silent")] == [[None, None]] * 3
    assert rep["overall"]["clipped_ratio"] is None and rep["overall"]["truncation_rate"] == 1.0
    cells = _cells((tmp_path / "silent" / "report.md").read_text())
    assert cells["clipped"] == "-" and cells["out of turns"] == "100.0%"


def test_records_read_with_and_without_the_clipped_field_and_bad_ones_are_refused(tmp_path):
    run = run_eval(EvalConfig("SolverSAT-v0", agent="oracle", instances=2), tmp_path / "run", progress=False)
    path = run / "records.jsonl"
    records = [json.loads(line) for line in path.read_text().splitlines()]
    assert [r["clipped"] for r in records] == [[False], [False]]  # the oracle has no token limit
    assert write_report(run, png=False)["overall"]["clipped_ratio"] == 0.0

    def rewrite(change):
        path.write_text("".join(json.dumps(change(dict(r)), sort_keys=True) + "\n" for r in records))

    rewrite(lambda r: {k: v for k, v in r.items() if k != "clipped"})  # a record of before the field
    assert len(load_records(run)) == 2 and write_report(run, png=False)["overall"]["clipped_ratio"] is None
    rewrite(lambda r: {**r, "clipped": ["yes"]})
    with pytest.raises(ValueError, match=r"records.jsonl:1: clipped must be a list of true, false or null"):
        load_records(run)
    rewrite(lambda r: {**r, "clipped": [False, True]})
    with pytest.raises(ValueError, match=r"clipped has 2 entries for 1 turns"):
        load_records(run)


def test_reply_parts_and_act_read_each_kind_of_agent():
    assert reply_parts("x") == ("x", None)
    assert reply_parts(SimpleNamespace(text="y", clipped=True)) == ("y", True)
    assert reply_parts(SimpleNamespace(text="z")) == ("z", None)
    assert reply_parts(7) == ("7", None)
    with pytest.raises(TypeError, match=r"\.clipped must be True, False or None, got 'yes'"):
        reply_parts(SimpleNamespace(text="y", clipped="yes"))
    env = gym.make("SolverSAT-v0")
    try:
        obs, info = env.reset(seed=0)
        texts, clipped = act(OracleAgent(), [obs], [env], [info["messages"]])
        assert texts == [oracle_action(env, obs)] and clipped == [False]
        assert act(_Silent(), [obs], [env], [info["messages"]]) == (["no answer"], [None])
    finally:
        env.close()


def test_the_report_names_the_temperature_the_agent_sampled_at(tmp_path):
    assert spec_temperature("hf:default", None) == spec_temperature("openai:u#m", None) == 1.0
    assert spec_temperature("vllm:default", 0) == 0.0 and spec_temperature("logic-lm:hf:default", 0.5) == 0.5
    assert spec_temperature("oracle", 0.5) is None and spec_temperature("mymodule:agent", None) is None
    assert sampling_temperature(make_agent("openai:http://127.0.0.1:9/v1#m")) == 1.0  # no request is sent
    assert sampling_temperature(make_agent("openai:http://127.0.0.1:9/v1#m", temperature=0.3)) == 0.3
    assert sampling_temperature(SimpleNamespace(sampling=SamplingConfig(greedy=True))) == 0.0

    run = run_eval(EvalConfig("SolverSAT-v0", agent="oracle", instances=2), tmp_path / "oracle", progress=False)
    write_report(run, png=False)
    md = (run / "report.md").read_text()
    assert "no sampling temperature (a scripted agent)" in md and "default" not in md.splitlines()[2]
    # a user's agent with a sampling config: its temperature, as run.json recorded it
    agent = SimpleNamespace(name="sampler", sampling=SamplingConfig(temperature=0.7),
                            act=lambda obs, envs: [oracle_action(e, o) for o, e in zip(obs, envs)])
    run = run_eval(EvalConfig("SolverSAT-v0", agent="sampler", instances=2), tmp_path / "user", agent=agent,
                   progress=False)
    assert json.loads((run / "run.json").read_text())["agent_temperature"] == 0.7
    assert write_report(run, png=False)["temperature"] == 0.7
    assert "temperature 0.7" in (run / "report.md").read_text()
    # a run.json from before the recorded temperature: what the spec made of --temperature
    meta = json.loads((run / "run.json").read_text())
    del meta["agent_temperature"]
    meta["config"]["agent"] = "hf:default"
    (run / "run.json").write_text(json.dumps(meta))
    rep = write_report(run, png=False)
    assert rep["temperature"] == 1.0 and rep["temperature_requested"] is None
    assert "temperature 1.0" in (run / "report.md").read_text()


def test_compare_names_one_estimator_per_column(tmp_path):
    assert metric_headers([1], [4]) == {"pass@1": "pass@1 (unbiased, n=4)", "avg@1": "avg@1 (first sample)",
                                        "pass^1": "pass^1 (unbiased, n=4)"}
    for agent, n in (("oracle", 2), ("random", 3)):
        run_eval(EvalConfig("SolverSAT-v0", agent=agent, instances=3, n_samples=n, ks=[1, 2]), tmp_path / agent,
                 progress=False)
    text, data = compare([tmp_path / "oracle", tmp_path / "random"])
    header = [c.strip() for c in text.splitlines()[0].strip("|").split("|")]
    assert header[5:11] == ["temperature", "instances", "pass@1 (unbiased, n=2/3)", "pass@2 (unbiased, n=2/3)",
                            "avg@2 (first 2 samples)", "pass^2 (unbiased, n=2/3)"]
    assert header[-4:] == ["format err", "out of turns", "clipped", "reward"]
    assert data["columns"]["avg@2"] == "avg@2 (first 2 samples)"
    oracle = [c.strip() for c in text.splitlines()[2].strip("|").split("|")]
    assert oracle[5] == "-" and oracle[7:11] == ["1.000"] * 4 and oracle[-3] == "0.0%"
    assert "avg@k: the mean correctness of its first k samples" in text


def test_rollout_episodes_say_which_turns_the_token_limit_cut():
    tok = load_tokenizer()

    class _Clipping(toy_env.ScriptedPolicy):
        """The toy policy, with the completions ``cut`` names ended by the token limit."""

        def __init__(self, cut, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self.cut = cut

        def generate(self, prompts, n=1, sampling=None):
            out = super().generate(prompts, n, sampling)
            for j, c in enumerate(out):
                if (self.calls - 1, j) in self.cut:
                    c.finish_reason = "length"
            return out

    make_env = lambda: gym.make("TestLetter-v0", turns=2)  # noqa: E731
    policy = _Clipping({(0, 0)}, tok, [["tree tree"] * 2, ["leaf"] * 2])
    eps = rollout(make_env, policy, [0], group_size=2, sampling=SamplingConfig(max_new_tokens=8),
                  max_total_tokens=512)
    assert [e.turn_clipped for e in eps] == [[True, False], [False, False]] and clipped_ratio(eps) == 0.25
    # the rollout's own budget cuts a completion it keeps only part of: clipped though it stopped
    env = make_env()
    prompt = len(policy.chat_ids(env.reset(seed=0)[1]["messages"]))
    env.close()
    policy = _Clipping(set(), tok, [["tree"] * 2], tokens=20)
    eps = rollout(lambda: gym.make("TestLetter-v0", turns=1), policy, [0], group_size=2,
                  sampling=SamplingConfig(max_new_tokens=32), max_total_tokens=prompt + 5)
    assert [e.turn_clipped for e in eps] == [[True], [True]] and clipped_ratio(eps) == 1.0
    assert [e.turn_tokens for e in eps] == [[5], [5]]
