"""A new family in one file (issues 11 and 22): a small problem defined here (its own generator,
prompt, score and gold) with the core contract and a ``tool`` capability only, registered with one
call, gets a single-turn env and a tool env that pass ``check_env``, a fuzz test of the env
contract and an oracle episode with full reward.

The family: lamps L1..Ln and rules "L1 is on or L3 is off" (a random 2-CNF); can every rule hold
at once? Its program for the tool mode is written here too, so the family needs nothing of any
family folder: the ``Truth`` type it states for the equivalence reward is the service's."""
from __future__ import annotations

import itertools
import warnings
from dataclasses import dataclass

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from hypothesis import given, strategies as st

import solvergym  # noqa: F401
from solvergym.agents.scripted import OracleAgent, RandomAgent, play_episode
from solvergym.envs.capabilities import ToolCapability
from solvergym.envs.equivalence import Truth
from solvergym.envs.instance import Instance
from solvergym.envs.parsing import DECISION_WORDS, final_answer_block
from solvergym.envs.problem import Gold, Knobs, Problem, Verdict, register_problem
from solvergym.sandbox import SandboxPool


# ----------------------------------------------------------------------------- the family, in one module
@dataclass
class LampsInstance(Instance):
    n: int
    rules: list  # [[lit, lit], ...], lit = +i (Li on) or -i (Li off)
    possible: bool

    def validate(self):
        if not all(len(r) == 2 and all(1 <= abs(x) <= self.n for x in r) for r in self.rules):
            raise ValueError("a rule is two literals over the lamps")
        if self.possible != _possible(self.n, self.rules):
            raise ValueError("the label is wrong")


def _possible(n, rules) -> bool:
    return any(all(any((x > 0) == bits[abs(x) - 1] for x in r) for r in rules)
               for bits in itertools.product((False, True), repeat=n))


@dataclass(frozen=True)
class LampsKnobs(Knobs):
    n: int = 3
    rules: int = 5

    def validate(self):
        if not (isinstance(self.n, int) and 2 <= self.n <= 8 and isinstance(self.rules, int) and self.rules >= 1):
            raise ValueError(f"2 <= n <= 8 lamps and at least one rule, got n={self.n!r}, rules={self.rules!r}")


def _statement(inst):
    said = [" or ".join(f"L{abs(x)} is {'on' if x > 0 else 'off'}" for x in r) for r in inst.rules]
    return "Rules:\n" + "\n".join(f"{i}. {s}." for i, s in enumerate(said, 1)) + "\nCan every rule hold at once?"


class LampsTool(ToolCapability):
    """The tool mode: z3 programs, the rules as the statement, the 2-CNF as the truth."""

    solvers = ("z3",)
    bare_answers = DECISION_WORDS

    def statement(self, inst):
        return _statement(inst)

    def truth(self, inst):
        names = [f"L{i}" for i in range(1, inst.n + 1)]
        return Truth(clauses=[list(r) for r in inst.rules], names=names, align=lambda s: s if s in names else None)


class LampsProblem(Problem):
    name = "test-lamps"
    instance_cls = LampsInstance
    Knobs = LampsKnobs
    components = ("format", "correct")
    tool = LampsTool

    def generate(self, knobs, rng):
        rules = [[int(v) * (1 if rng.random() < 0.5 else -1)
                  for v in rng.choice(np.arange(1, knobs.n + 1), size=2, replace=False)] for _ in range(knobs.rules)]
        return LampsInstance(knobs.n, rules, _possible(knobs.n, rules))

    def describe(self, inst):
        return {"n": inst.n, "rules": len(inst.rules)}

    def prompt(self, inst):
        return _statement(inst) + "\nAnswer ```answer yes``` or ```answer no```."

    def answer_hint(self, inst):
        return "```answer yes``` or ```answer no```"

    def score(self, inst, text):
        block = final_answer_block(text, bare=DECISION_WORDS)
        word = block[1].strip().lower() if block and block[0] == "answer" else None
        if word not in ("yes", "no"):
            return Verdict({"format": 0.0, "correct": 0.0}, False, False, "no yes/no answer")
        ok = (word == "yes") == inst.possible
        return Verdict({"format": 0.1, "correct": 1.0 if ok else -1.0}, True, ok, "right" if ok else "wrong", word)

    def gold(self, inst):
        answer = "```answer\n" + ("yes" if inst.possible else "no") + "\n```"

        def program(solver):
            lines = ["from z3 import Bool, Not, Or, Solver"]
            lines += [f'L{i} = Bool("L{i}")' for i in range(1, inst.n + 1)]
            lines += ["s = Solver()"]
            lines += [f"s.add(Or({', '.join(f'L{x}' if x > 0 else f'Not(L{-x})' for x in r)}))" for r in inst.rules]
            return "\n".join(lines + ["print(s.check())"]) + "\n"

        return Gold(answer, program=program, after_tool=lambda stdout: answer)

    def sample_answer(self, inst, rng):
        return "```answer " + ("yes" if rng.random() < 0.5 else "no") + "```"


register_problem(LampsProblem, env_id="TestLamps-v0")


# ----------------------------------------------------------------------------- what it gets
@pytest.fixture(scope="module")
def pool():
    with SandboxPool(size=1) as p:
        yield p


def _envs(pool):
    return {"single": gym.make("TestLamps-v0", n=4, rules=6),
            "tool": gym.make("SolverTool-v0", task="test-lamps", pool=pool, n=4, rules=6)}


def test_registered_with_one_call_and_its_knobs_come_from_the_problem():
    env = gym.make("TestLamps-v0").unwrapped
    assert env.difficulty == {"n": 3, "rules": 5} == env.problem.Knobs.defaults()
    env.reset(seed=0, options={"difficulty": {"rules": 9}})
    assert len(env.instance.rules) == 9
    with pytest.raises(ValueError, match="lamps"):
        env.reset(options={"difficulty": {"n": 20}})

    class NoTool(LampsProblem):
        name = "test-lamps-none"
        tool = None

    register_problem(NoTool)  # a problem without the capability has no tool mode, and says so
    with pytest.raises(ValueError, match="'test-lamps-none' has no tool mode"):
        gym.make("SolverTool-v0", task="test-lamps-none")
    with pytest.raises(ValueError, match="has no step mode"):
        gym.make("TestLamps-v0", mode="step")

    class NoSolvers(LampsTool):
        solvers = ()

    class Unsolvable(LampsProblem):
        name = "test-lamps-unsolvable"
        tool = NoSolvers

    register_problem(Unsolvable)
    with pytest.raises(ValueError, match="no solvers"):
        gym.make("SolverTool-v0", task="test-lamps-unsolvable")


@pytest.mark.parametrize("mode", ["single", "tool"])
def test_check_env_passes(mode):
    # check_env deep-copies the env: the tool env takes the process-wide pool (no lock to copy)
    env = gym.make("TestLamps-v0") if mode == "single" else gym.make("SolverTool-v0", task="test-lamps")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(env.unwrapped)
    env.close()


def test_oracle_earns_the_full_reward_in_both_modes(pool):
    envs = _envs(pool)
    for seed in range(4):
        single = play_episode(envs["single"], OracleAgent(), seed=seed)
        assert single["reward_components"] == {"format": 0.1, "correct": 1.0}
        tool = play_episode(envs["tool"], OracleAgent(), seed=seed)
        # the program ran, called z3, and handed it a formula equivalent to the rules
        assert tool["reward_components"] == {"format": 0.1, "correct": 1.0, "tool": 0.1, "equivalence": 1.0}, \
            tool["info"].get("equivalence")
        assert len(tool["messages"]) == 4 and "<tool_response>" in tool["messages"][2]["content"]
    # the random baseline answers in the format and is right about half the time
    rewards = [play_episode(envs["single"], RandomAgent(seed=1), seed=s)["reward_components"]["format"]
               for s in range(10)]
    assert rewards == [0.1] * 10
    for env in envs.values():
        env.close()


_TEXT = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=200)
_ANSWERS = st.sampled_from(["```answer yes```", "```no```", "```idk```", "<tool_call>print(1)</tool_call>",
                            "```answer\nmaybe\n```", "\x00", "x" * 70_000])


@given(prefix=_TEXT, answer=_ANSWERS, seed=st.integers(0, 10_000))
def test_fuzzed_actions_never_raise(prefix, answer, seed):
    env = _FUZZ_ENV
    env.reset(seed=seed)
    obs, reward, terminated, truncated, info = env.step(prefix + answer)
    assert isinstance(obs, str) and env.observation_space.contains(obs)
    assert reward == pytest.approx(sum(info["reward_components"].values()))
    assert set(info["reward_components"]) == {"format", "correct"}
    assert terminated and not truncated  # single turn: the one response is the answer
    if not info["reward_components"]["format"]:
        assert info["error"]


_FUZZ_ENV = gym.make("TestLamps-v0").unwrapped
