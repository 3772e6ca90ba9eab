"""A newcomer's own module (tests/test_newcomer.py copies it into an empty folder and uses it from
the command line): a family of their own, a step-verified variant of a built-in one, and agents.

- ``TwoColor-v0``: can the nodes of a small graph be coloured with two colours so that no edge
  joins two nodes of one colour? Single turn (```answer yes``` / ```answer no```) and a tool
  capability (z3 programs; the 2-CNF "node i is red" as the truth).
- ``MyKnights-v0``: Knights & Knaves under an id of the user's, for ``solvergym check-trace``.
- ``MyAgent``: a class (a factory: the CLI instantiates it) that answers by trying every colouring.
- ``broken``: an agent whose ``act`` raises, to show that its traceback names this file.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

from solvergym.envs.capabilities import ToolCapability
from solvergym.envs.equivalence import Truth
from solvergym.envs.instance import Instance
from solvergym.envs.knights.problem import KnightsProblem
from solvergym.envs.parsing import DECISION_WORDS, final_answer_block
from solvergym.envs.problem import Gold, Knobs, Problem, Verdict, register_problem


def colourable(n: int, edges: list) -> bool:
    return any(all(bits[u - 1] != bits[v - 1] for u, v in edges) for bits in itertools.product((0, 1), repeat=n))


@dataclass
class TwoColorInstance(Instance):
    n: int
    edges: list  # [[u, v], ...], nodes 1..n
    colourable: bool

    def validate(self):
        if not all(len(e) == 2 and e[0] != e[1] and all(1 <= x <= self.n for x in e) for e in self.edges):
            raise ValueError("an edge joins two different nodes 1..n")
        if self.colourable != colourable(self.n, self.edges):
            raise ValueError("the label is wrong")


@dataclass(frozen=True)
class TwoColorKnobs(Knobs):
    n: int = 4
    edges: int = 4

    def validate(self):
        if not (isinstance(self.n, int) and 2 <= self.n <= 8 and isinstance(self.edges, int) and self.edges >= 1):
            raise ValueError(f"2 <= n <= 8 nodes and at least one edge, got n={self.n!r}, edges={self.edges!r}")


def _statement(inst):
    said = ", ".join(f"{u}-{v}" for u, v in inst.edges)
    return f"A graph on nodes 1..{inst.n} has the edges {said}. Can it be coloured with two colours?"


class TwoColorTool(ToolCapability):
    """The tool mode: z3 programs, the edges as the statement, "node i is red" as the truth."""

    solvers = ("z3",)
    bare_answers = DECISION_WORDS

    def statement(self, inst):
        return _statement(inst)

    def truth(self, inst):
        names = [f"C{i}" for i in range(1, inst.n + 1)]
        clauses = [c for u, v in inst.edges for c in ([u, v], [-u, -v])]
        return Truth(clauses=clauses, names=names, align=lambda s: s if s in names else None)


class TwoColorProblem(Problem):
    """Two-colouring of a small random graph: yes or no."""

    name = "twocolor"
    instance_cls = TwoColorInstance
    Knobs = TwoColorKnobs
    components = ("format", "correct")
    tool = TwoColorTool

    def generate(self, knobs, rng):
        pairs = list(itertools.combinations(range(1, knobs.n + 1), 2))
        picked = rng.choice(len(pairs), size=min(knobs.edges, len(pairs)), replace=False)
        edges = [list(pairs[int(i)]) for i in picked]
        return TwoColorInstance(knobs.n, edges, colourable(knobs.n, edges))

    def describe(self, inst):
        return {"n": inst.n, "edges": len(inst.edges)}

    def prompt(self, inst):
        return _statement(inst) + "\nAnswer ```answer yes``` or ```answer no```."

    def answer_hint(self, inst):
        return "```answer yes``` or ```answer no```"

    def score(self, inst, text):
        block = final_answer_block(text, bare=DECISION_WORDS)
        word = block[1].strip().lower() if block and block[0] == "answer" else None
        if word not in ("yes", "no"):
            return Verdict({"format": 0.0, "correct": 0.0}, False, False, "no yes/no answer")
        ok = (word == "yes") == inst.colourable
        return Verdict({"format": 0.1, "correct": 1.0 if ok else -1.0}, True, ok, "right" if ok else "wrong", word)

    def gold(self, inst):
        answer = "```answer\n" + ("yes" if inst.colourable else "no") + "\n```"

        def program(solver):
            lines = ["from z3 import Bool, Not, Or, Solver"]
            lines += [f'C{i} = Bool("C{i}")' for i in range(1, inst.n + 1)]
            lines += ["s = Solver()"]
            lines += [f"s.add(Or(C{u}, C{v}), Or(Not(C{u}), Not(C{v})))" for u, v in inst.edges]
            return "\n".join(lines + ["print(s.check())"]) + "\n"

        return Gold(answer, program=program, after_tool=lambda stdout: answer)

    def sample_answer(self, inst, rng):
        return "```answer " + ("yes" if rng.random() < 0.5 else "no") + "```"


register_problem(TwoColorProblem, env_id="TwoColor-v0")


class MyKnights(KnightsProblem):
    """Knights & Knaves under the user's own id: a step-verified family for check-trace."""

    name = "my-knights"


register_problem(MyKnights, env_id="MyKnights-v0")


class MyAgent:
    """Tries every colouring of the instance's graph (a class: the CLI makes one)."""

    def __init__(self):
        self.name = "brute-force"

    def act(self, observations, envs):
        return ["```answer " + ("yes" if colourable(e.unwrapped.instance.n, e.unwrapped.instance.edges) else "no")
                + "```" for e in envs]


class _Broken:
    name = "broken"

    def act(self, observations, envs):
        raise ValueError("the user's agent failed here")


broken = _Broken()
