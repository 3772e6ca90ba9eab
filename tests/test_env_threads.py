"""Env steps off the critical path: a rollout that steps a turn's envs on threads gives the serial
rollout's episodes field by field, on SolverTool-v0 whose steps run real sandboxed programs; the
host lock keeps each env's own work one at a time and lets go only around the sandbox's wait."""
import dataclasses
import sys
import threading
from pathlib import Path

import gymnasium as gym
import pytest

sys.path.insert(0, str(Path(__file__).parent))

import solvergym  # noqa: F401,E402
from solvergym.agents.hf import Completion, SamplingConfig  # noqa: E402
from solvergym.agents.models import load_tokenizer  # noqa: E402
from solvergym.agents.scripted import tool_oracle_action  # noqa: E402
from solvergym.algorithms.rollout import rollout  # noqa: E402
from solvergym.sandbox import HOST, HostLock  # noqa: E402

GROUP = 2


class ToolScript:
    """A policy with the rollout's interface whose first turn is the oracle's program for the
    group's instance (every other group's program fails in the sandbox instead), and whose second
    turn answers: the same texts however the envs are stepped."""

    def __init__(self, tokenizer, envs):
        self.tokenizer, self.envs, self.calls, self.system_prompt = tokenizer, envs, 0, None

    def chat_ids(self, messages):
        return list(self.tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=True,
                                                       return_dict=False))

    def generate(self, prompts, n=1, sampling=None):
        texts = []
        for j in range(len(prompts)):
            if self.calls == 0:
                group = j // GROUP
                text = tool_oracle_action(self.envs[group * GROUP], None)
                if group % 2:
                    text = text.replace("<tool_call>\n", "<tool_call>\nraise SystemExit(3)\n", 1)
            else:
                text = "The solver says so.\n```answer\nSAT\n```"
            texts.append(text)
        self.calls += 1
        out = []
        for text in texts:
            ids = list(self.tokenizer(text, add_special_tokens=False)["input_ids"])
            out.append(Completion(ids, [-0.5] * len(ids), text, "stop"))
        return out


def _timeless(value):
    """``value`` without the wall-clock fields a sandbox result reports (they differ run to run)."""
    if isinstance(value, dict):
        return {k: _timeless(v) for k, v in value.items()
                if not (k.endswith(("_s", "_ms")) or "duration" in k or "time" in k)}
    if isinstance(value, (list, tuple)):
        return type(value)(_timeless(v) for v in value)
    return value


@pytest.mark.slow
def test_threaded_env_steps_give_the_serial_episodes_field_by_field():
    tok = load_tokenizer("default")
    runs = {}
    for threads in (1, 8):
        envs = [gym.make("SolverTool-v0") for _ in range(8 * GROUP)]
        timing = {}
        eps = rollout(None, ToolScript(tok, envs), list(range(100, 108)), group_size=GROUP,
                      sampling=SamplingConfig(max_new_tokens=4096), max_total_tokens=8192, envs=envs,
                      env_threads=threads, timing=timing)
        runs[threads] = eps
        assert timing["env_s"] > 0
    serial, threaded = runs[1], runs[8]
    fields = [f.name for f in dataclasses.fields(serial[0]) if f.name != "env_s"]
    for a, b in zip(serial, threaded):
        for name in fields:
            assert _timeless(getattr(a, name)) == _timeless(getattr(b, name)), name
    # the programs ran: the oracle's groups earned the tool reward, the failing ones did not
    tool = [ep.components.get("tool", 0.0) for ep in serial]
    assert all(t > 0 for t in tool[0::4]) and all(t == 0 for t in tool[2::4])
    assert len({ep.reward for ep in serial}) > 1


def test_the_host_lock_is_let_go_only_by_the_thread_that_holds_it():
    lock = HostLock()
    with lock.released():  # not held: nothing to let go
        assert not lock.holding()
    entered = threading.Event()
    order = []

    def other():
        with lock.held():
            order.append("other")
            entered.set()

    with lock.held():
        with lock.held():  # re-entered by the holder: a no-op
            assert lock.holding()
        worker = threading.Thread(target=other)
        worker.start()
        assert not entered.wait(0.05) and order == []  # blocked while held
        with lock.released():
            entered.wait()  # it ran while the holder waited
            worker.join()
        assert lock.holding() and order == ["other"]
    assert not lock.holding()
    assert HOST.holding() is False
