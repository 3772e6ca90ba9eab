"""The work model behind ``benchmarks/train_speed.py --profile``: the FLOPs and bytes each phase of
a GRPO step must move, for our trainer (a group's prompt once) and TRL's (every sequence whole),
counted by hand for a toy model."""
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import train_speed  # noqa: E402

MODEL = {"body_params": 100, "head_params": 10, "param_bytes": 440}
SHAPE = dict(prompts=2, group=4, prompt_len=30, response_len=5, model=MODEL)


def test_ours_runs_each_groups_prompt_once():
    w = train_speed.step_work("ours", old_logprobs=False, ref=True, **SHAPE)
    # body: 2 prompts x 30 + 8 rows x 5 sampled tokens; head: the 40 sampled positions
    assert w["forward"]["flops"] == 2 * (100 * (60 + 40) + 10 * 40) == 20_800
    assert w["ref"] == w["forward"] and w["backward"]["flops"] == 2 * 20_800
    assert w["old_logprobs"]["flops"] == 0
    # prefill: the 2 prompts; decode: 8 rows x 4 steps (the first token comes from the prefill)
    assert w["generate"] == {"flops": 2 * 100 * 60 + 2 * 110 * 8 * 4, "bytes": 4 * 440}
    assert w["optimizer"] == {"flops": 0.0, "bytes": 8 * 440}


def test_trl_runs_every_sequence_whole_and_checkpointing_recomputes_the_forward():
    w = train_speed.step_work("trl", old_logprobs=False, ref=False, gc=True, **SHAPE)
    assert w["forward"]["flops"] == 2 * (100 * 8 * 35 + 10 * 40) == 56_800
    assert w["backward"]["flops"] == 3 * 56_800
    assert w["ref"]["flops"] == 0
    assert w["generate"]["flops"] == 2 * 100 * 240 + 2 * 110 * 8 * 4


def test_the_floor_is_whichever_limit_takes_longer():
    rates = {"matmul_gflops": 1.0, "read_gb_s": 2.0}
    assert train_speed.floor_s({"flops": 3e9, "bytes": 2e9}, rates) == pytest.approx(3.0)
    assert train_speed.floor_s({"flops": 1e9, "bytes": 8e9}, rates) == pytest.approx(4.0)
