"""A step-capable family in one file (issue 22): a problem with the core contract, a ``tool`` and a
``steps`` capability, registered with one call, gets all three modes: its id in the single turn,
``mode="step"`` and ``mode="tool"`` (= ``SolverTool-v0(task=...)``), each passing ``check_env``
and paying the oracle the full reward; it imports nothing of any family folder.

The family: a chain of operations on an integer ("start at 3, add 4, double, add -2"); the answer
is the final value. Step mode states the running value after each operation, one per action
(``S<i>: <value>.``), then the answer; each right value pays its share of ``correct``, a wrong
one ends the episode; the tool mode's program computes the value with z3."""
from __future__ import annotations

import ast
import re
import warnings
from dataclasses import dataclass
from pathlib import Path

import gymnasium as gym
import pytest
from gymnasium.utils.env_checker import check_env
from hypothesis import given, settings, strategies as st

import solvergym  # noqa: F401
from solvergym.agents.scripted import OracleAgent, RandomAgent, play_episode
from solvergym.envs.capabilities import Outcome, StepCapability, StepSession, ToolCapability
from solvergym.envs.instance import Instance
from solvergym.envs.parsing import final_answer_block
from solvergym.envs.problem import Gold, Knobs, Problem, Verdict, register_problem
from solvergym.sandbox import SandboxPool

FORMAT, CORRECT = 0.1, 1.0


# ----------------------------------------------------------------------------- the family, in one module
@dataclass
class ChainInstance(Instance):
    start: int
    ops: list  # [["add", k] | ["double", 0], ...]

    def validate(self):
        if not all(isinstance(o, list) and len(o) == 2 and o[0] in ("add", "double") for o in self.ops):
            raise ValueError("an operation is ['add', k] or ['double', 0]")

    def values(self) -> list[int]:
        out, v = [], self.start
        for op, k in self.ops:
            v = v + k if op == "add" else 2 * v
            out.append(v)
        return out


@dataclass(frozen=True)
class ChainKnobs(Knobs):
    length: int = 3

    def validate(self):
        if not (isinstance(self.length, int) and 1 <= self.length <= 8):
            raise ValueError(f"length must be an int in 1..8, got {self.length!r}")


def _said(inst: ChainInstance) -> str:
    ops = ", ".join(f"add {k}" if op == "add" else "double" for op, k in inst.ops)
    return f"Start at {inst.start}, then {ops}. What is the final value?"


def _answer(text: str) -> int | None:
    block = final_answer_block(text)
    if block is None or block[0] != "answer" or not re.fullmatch(r"-?\d{1,30}", block[1].strip()):
        return None
    return int(block[1].strip())


class ChainTool(ToolCapability):
    """The tool mode: z3 programs; no Boolean truth, so the ``tool`` reward only."""

    solvers = ("z3",)
    rewards = ("tool",)
    allows_idk = False


class ChainSession(StepSession):
    def __init__(self, inst: ChainInstance):
        self.inst, self.done = inst, 0

    def step(self, text):
        values = self.inst.values()
        m = re.fullmatch(r"\s*S(\d+):\s*(-?\d{1,30})\.\s*", text)
        if m is None:
            got = _answer(text)
            if got is None:
                return self.invalid("neither a step 'S<i>: <value>.' nor ```answer <value>```")
            return Outcome({"format": FORMAT, "correct": 0.0}, True, "Done.",
                           {"correct": self.done == len(values) and got == values[-1]})
        i, value = int(m.group(1)), int(m.group(2))
        if i != self.done + 1 or i > len(values) or value != values[i - 1]:
            return Outcome({"format": 0.0, "correct": 0.0}, True, f"S{i} is wrong.", {"correct": False})
        self.done += 1
        return Outcome({"format": 0.0, "correct": CORRECT / len(values)}, False, f"S{i} is right.")

    def invalid(self, reason):
        return Outcome({"format": 0.0, "correct": 0.0}, False, f"Format error: {reason}.", error=reason)

    def sample_answer(self, rng):
        return f"S{self.done + 1}: {int(rng.integers(-50, 50))}."


class ChainSteps(StepCapability):
    """The step mode: the running values one per action, then the answer."""

    default_max_turns = 12

    def session(self, instance):
        return ChainSession(instance)

    def gold(self, instance):
        values = instance.values()
        answer = f"```answer {values[-1]}```"
        return Gold(answer, steps=[f"S{i}: {v}." for i, v in enumerate(values, 1)] + [answer])


class ChainProblem(Problem):
    name = "test-chain"
    instance_cls = ChainInstance
    Knobs = ChainKnobs
    components = ("format", "correct")
    tool = ChainTool
    steps = ChainSteps

    def generate(self, knobs, rng):
        ops = [["double", 0] if rng.random() < 0.3 else ["add", int(rng.integers(-9, 10))]
               for _ in range(knobs.length)]
        return ChainInstance(int(rng.integers(0, 10)), ops)

    def describe(self, inst):
        return {"length": len(inst.ops)}

    def prompt(self, inst):
        return _said(inst) + " Answer ```answer <value>```."

    def score(self, inst, text):
        got = _answer(text)
        if got is None:
            return Verdict({"format": 0.0, "correct": 0.0}, False, False, "no ```answer <value>```")
        ok = got == inst.values()[-1]
        return Verdict({"format": FORMAT, "correct": CORRECT if ok else 0.0}, True, ok, "right" if ok else "wrong", got)

    def gold(self, inst):
        answer = f"```answer {inst.values()[-1]}```"

        def program(solver):
            lines = ["from z3 import Int, Solver, sat", "s = Solver()", "v0 = Int('v0')", f"s.add(v0 == {inst.start})"]
            for i, (op, k) in enumerate(inst.ops, 1):
                lines += [f"v{i} = Int('v{i}')", f"s.add(v{i} == v{i - 1} + {k})" if op == "add"
                          else f"s.add(v{i} == 2 * v{i - 1})"]
            lines += ["assert s.check() == sat", f"print(s.model()[v{len(inst.ops)}])"]
            return "\n".join(lines) + "\n"

        return Gold(answer, program=program, after_tool=lambda stdout: answer)

    def sample_answer(self, inst, rng):
        return f"```answer {int(rng.integers(-50, 50))}```"


register_problem(ChainProblem, env_id="TestChain-v0")


# ----------------------------------------------------------------------------- what it gets
@pytest.fixture(scope="module")
def pool():
    with SandboxPool(size=1) as p:
        yield p


def test_the_family_imports_nothing_of_a_family_folder():
    families = {p.name for p in (Path(solvergym.__file__).parent / "envs").iterdir()
                if p.is_dir() and (p / "problem.py").exists()}
    for test in ("test_new_family.py", "test_new_step_family.py"):
        tree = ast.parse((Path(__file__).parent / test).read_text())
        imported = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
        assert families and not {m for m in imported if any(m.startswith(f"solvergym.envs.{f}") for f in families)}


def test_one_registration_gives_all_three_modes(pool):
    single = gym.make("TestChain-v0", length=4).unwrapped
    step = gym.make("TestChain-v0", mode="step", length=4).unwrapped
    tool = gym.make("SolverTool-v0", task="test-chain", pool=pool, length=4).unwrapped
    same = gym.make("TestChain-v0", mode="tool", pool=pool, length=4).unwrapped
    assert (single.mode, step.mode, tool.mode, same.mode) == ("single", "step", "tool", "tool")
    assert tool.components == ("format", "correct", "tool") and step.components == ("format", "correct")
    for seed in range(3):
        assert play_episode(single, OracleAgent(), seed=seed)["reward_components"] == {"format": FORMAT,
                                                                                      "correct": CORRECT}
        played = play_episode(step, OracleAgent(), seed=seed)
        paid = [m for m in played["messages"] if m["role"] == "assistant"]
        assert len(paid) == 5 and played["info"]["correct"] and played["reward"] == pytest.approx(FORMAT + CORRECT)
        for env in (tool, same):
            done = play_episode(env, OracleAgent(), seed=seed)
            assert done["reward_components"] == {"format": FORMAT, "correct": CORRECT, "tool": 0.1}, done["info"]
        # the three modes pose the same instance for the same seed
        assert single.reset(seed=seed)[0] in tool.reset(seed=seed)[0]
        assert step.reset(seed=seed)[0] == single.reset(seed=seed)[0]
    for env in (single, step, tool, same):
        env.close()


def test_a_wrong_step_ends_the_episode_and_bad_input_never_raises():
    env = gym.make("TestChain-v0", mode="step").unwrapped
    env.reset(seed=0)
    obs, reward, terminated, _, info = env.step("S1: 123456789.")
    assert terminated and reward == 0.0 and obs == "S1 is wrong."
    env.reset(seed=0)
    obs, reward, terminated, truncated, info = env.step(b"\xff\xfe")
    assert not terminated and not truncated and info["error"] and reward == 0.0
    rewards = [play_episode(env, RandomAgent(seed=s), seed=s)["reward"] for s in range(5)]
    assert all(r < FORMAT + CORRECT for r in rewards)


@pytest.mark.parametrize("mode", ["single", "step", "tool"])
def test_check_env_passes_in_every_mode(mode):
    env = gym.make("TestChain-v0", mode=mode)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(env.unwrapped)
    env.close()


_STEP_ENV = gym.make("TestChain-v0", mode="step").unwrapped


@settings(max_examples=60, deadline=None)
@given(actions=st.lists(st.text(max_size=40) | st.sampled_from(["S1: 3.", "```answer 7```", "\x00"]), max_size=6),
       seed=st.integers(0, 1000))
def test_fuzzed_step_episodes_keep_the_contract(actions, seed):
    env = _STEP_ENV
    env.reset(seed=seed)
    for action in actions:
        obs, reward, terminated, truncated, info = env.step(action)
        assert isinstance(obs, str) and env.observation_space.contains(obs)
        assert reward == pytest.approx(sum(info["reward_components"].values()))
        assert set(info["reward_components"]) == {"format", "correct"}
        if terminated or truncated:
            break
