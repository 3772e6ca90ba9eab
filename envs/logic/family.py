"""The contract of a Synthetic-Logic family, and the three queries built once on it (SAT-RL §3.1).

A family (one module of :mod:`.families`) subclasses :class:`LogicProblem` and writes only what is
its own: ``random_data`` / ``planted_data`` (its generator, App. B.1's hyper-parameters as
``Knobs``; planted data is satisfiable by construction), ``encode`` (the instance as a
:class:`~.model.BoolModel` over the names the prompt's variable mapping gives), ``statement``,
``mapping``, and for the solving query the witness: ``parse_witness``, ``format_witness``,
``witness_from_true`` (a solver's true variables -> the witness) and ``check_witness`` (the
independent verifier, written without a solver). Everything else is here, once:

- generation (:meth:`LogicProblem.generate`): decision labels drawn with probability
  ``sat_ratio`` (0.5: §3.2's balanced split) and met by planting (SAT) or rejection (UNSAT); a
  solving instance is satisfiable (a witness exists); a counting instance carries its exact
  count. The truth comes from CP-SAT in this process (:func:`~.model.solve_count`); the
  programs of every fitting solver agree with it in the sandbox (tests, ``benchmarks/logic_suite.py``).
- rewards (§3.4): ``format`` 0.1 when the final ```` ```answer``` ```` parses, ``correct`` 1 /
  0 for ```` ```idk``` ```` / -1-eps wrong. Eq. 1's -1/(n-1)-eps for n choices applies to the
  decision (n = 2); a witness or a count has no small set of choices, so a wrong one is -1-eps.
- the oracle (:meth:`LogicProblem.gold`): the answer, and per solver the ground-truth program
  whose output it answers from.
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from ..instance import Instance
from ..parsing import final_answer_block
from ..problem import Gold, Knobs, Problem, Verdict
from ..sat.verify import DEFAULT_EPS, SATRL_FORMAT, correctness_reward, decision_reward
from . import FAMILIES, QUERIES
from .model import BoolModel, solve_count
from .programs import LOGIC_SOLVERS, logic_program, read_output
from .tool import tool_capability

__all__ = ["LogicInstance", "LogicProblem", "family_class", "MAX_TRIES", "MAX_COUNT"]

#: generation attempts before a label the knobs cannot meet is an error
MAX_TRIES = 500
#: a counting instance with more models than this is redrawn (the programs enumerate them)
MAX_COUNT = 5000


def family_class(name: str) -> type["LogicProblem"]:
    """The problem class of family ``name`` (``ValueError`` listing the families otherwise)."""
    if name not in FAMILIES:
        raise ValueError(f"unknown Synthetic-Logic family {name!r}; the families are {sorted(FAMILIES)}")
    module, _, attr = FAMILIES[name][0].partition(":")
    return getattr(importlib.import_module(module), attr)


def _check_query(query: Any) -> str:
    if query not in QUERIES:
        raise ValueError(f"unknown query {query!r}; the queries are {list(QUERIES)}")
    return query


@dataclass
class LogicInstance(Instance):
    """One question about one family instance. ``data``: the family's instance (JSON);
    ``satisfiable``: whether a model exists; ``count``: the number of models (counting query);
    ``witness``: a model as the family writes it (satisfiable instances; oracles only)."""

    family: str
    query: str
    data: dict
    satisfiable: bool
    count: int | None = None
    witness: Any = None

    def validate(self) -> None:
        cls = family_class(self.family)
        _check_query(self.query)
        cls.check_data(self.data)
        if not isinstance(self.satisfiable, bool):
            raise ValueError("satisfiable must be a bool")
        model = cls.encode(self.data)
        if len(model.names) > 400:
            raise ValueError(f"{len(model.names)} variables is more than a Synthetic-Logic instance holds (400)")
        # the label and the count are re-derived: a record cannot make a wrong answer pay
        count, _, exact = solve_count(model, limit=None if self.query == "counting" else 1, time_limit_s=10.0)
        if not exact and self.query == "counting":
            raise ValueError("the instance's models could not be counted within 10 s")
        if (count > 0) != self.satisfiable:
            raise ValueError(f"satisfiable={self.satisfiable} but the instance {'has' if count else 'has no'} model")
        if self.query == "counting" and self.count != count:
            raise ValueError(f"count={self.count!r} but the instance has {count} models")
        if self.query == "solving" and not self.satisfiable:
            raise ValueError("a solving instance must be satisfiable")
        if self.witness is not None and cls.check_witness(self.data, self.witness) is not None:
            raise ValueError("the witness does not satisfy the instance")


class LogicProblem(Problem):
    """Base of every Synthetic-Logic family (see the module docstring).

    Settings: ``query`` (``decision``, ``solving`` or ``counting``), ``sat_ratio`` (the share of
    decision instances that are satisfiable) and ``eps`` (eq. 1's margin).
    """

    instance_cls = LogicInstance
    components = ("format", "correct")
    thread_safe = True  # scoring reads the stored truth and runs the family's pure verifier
    #: Table 2's category
    category: ClassVar[str] = ""
    #: the solvers whose programs state every instance of this family (:meth:`.model.BoolModel.fits`)
    solvers: ClassVar[tuple[str, ...]] = LOGIC_SOLVERS
    #: why a solver of §3.1 is missing from :attr:`solvers`
    unfit: ClassVar[dict[str, str]] = {}
    #: what the solving query asks for, as the question says it ("a clique of size K")
    witness_noun: ClassVar[str] = "a solution"
    #: what the counting query counts ("cliques of size K")
    count_noun: ClassVar[str] = "solutions"
    #: the difficulty settings the dataset cycles through (§3.2: "across different difficulty
    #: parameter settings"); empty: the knobs' defaults only
    levels: ClassVar[tuple[dict[str, Any], ...]] = ()
    stratified = True  # a decision label is the seed's stratum: balanced over consecutive seeds

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if cls.name:  # the capability names the family's solvers: one per family
            cls.tool = tool_capability(cls)

    def __init__(self, query: str = "decision", sat_ratio: float = 0.5, eps: float = DEFAULT_EPS):
        self.query = _check_query(query)
        if not 0.0 <= float(sat_ratio) <= 1.0:
            raise ValueError(f"sat_ratio must be in [0, 1], got {sat_ratio}")
        self.sat_ratio, self.eps = float(sat_ratio), float(eps)

    # -- the family's own (see the module docstring) -----------------------------------------------
    def random_data(self, knobs: Knobs, rng: np.random.Generator) -> dict:
        raise NotImplementedError

    def planted_data(self, knobs: Knobs, rng: np.random.Generator) -> dict:
        raise NotImplementedError

    @classmethod
    def check_data(cls, data: dict) -> None:
        """Raise ``ValueError`` when ``data`` is not an instance of this family."""
        raise NotImplementedError

    @classmethod
    def encode(cls, data: dict) -> BoolModel:
        raise NotImplementedError

    def statement(self, data: dict) -> str:
        """The instance in words (no question)."""
        raise NotImplementedError

    def mapping(self, data: dict) -> dict[str, str]:
        """Variable name -> what it means (the tool prompt's variable mapping)."""
        raise NotImplementedError

    @classmethod
    def check_witness(cls, data: dict, witness: Any) -> str | None:
        """``None`` when ``witness`` solves ``data``, else why not. No solver."""
        raise NotImplementedError

    def witness_from_true(self, data: dict, true: set[str]) -> Any:
        raise NotImplementedError

    def true_from_witness(self, data: dict, witness: Any) -> set[str]:
        """The variables a witness sets true (the inverse of :meth:`witness_from_true`): what the
        tests hold the verifier against the encoding with."""
        raise NotImplementedError

    def parse_witness(self, data: dict, text: str) -> tuple[Any, str]:
        """``(witness, "")`` or ``(None, why)``."""
        raise NotImplementedError

    def format_witness(self, data: dict, witness: Any) -> str:
        raise NotImplementedError

    def witness_hint(self, data: dict) -> str:
        """How the solving query's answer is written."""
        raise NotImplementedError

    def describe_data(self, data: dict) -> dict[str, Any]:
        """``info["difficulty"]``'s knob values of ``data``."""
        return {}

    # -- generation ---------------------------------------------------------------------------------
    def generate(self, knobs, rng, stratum: float | None = None):
        """``stratum`` (from a mode): the decision's label is ``stratum < sat_ratio``, balanced over
        consecutive seeds (:func:`~solvergym.envs.problem.seed_stratum`); without it a Bernoulli
        draw from ``rng``. The draw is made either way, so the rest of the instance is the same."""
        if self.query == "decision":
            coin = rng.random()
            target = bool((coin if stratum is None else stratum) < self.sat_ratio)
        else:
            target = True if self.query == "solving" else None
        for _ in range(MAX_TRIES):
            plant = target is True or (target is None and rng.random() < 0.5)
            data = self.planted_data(knobs, rng) if plant else self.random_data(knobs, rng)
            model = self.encode(data)
            counting = self.query == "counting"
            count, first, exact = solve_count(model, limit=MAX_COUNT + 1 if counting else 1)
            if not exact and (counting or count == 0):
                continue  # too many models to count, or a solver timeout: discarded (§3.2)
            if target is not None and (count > 0) != target:
                continue
            witness = None
            if count > 0:
                witness = self.witness_from_true(data, {n for n, v in zip(model.names, first) if v})
            inst = LogicInstance(self.name, self.query, data, count > 0, count if counting else None, witness)
            inst.mark_validated()
            return inst
        raise RuntimeError(f"{self.name}: no {'satisfiable' if target else 'unsatisfiable' if target is False else ''} "
                           f"instance at {knobs.as_dict()} in {MAX_TRIES} draws; these knobs make one label rare")

    def coerce(self, obj):
        inst = super().coerce(obj)
        if inst.family != self.name or inst.query != self.query:
            raise ValueError(f"this env poses {self.name}/{self.query}; the instance is {inst.family}/{inst.query}")
        return inst

    def describe(self, inst):
        return self.describe_data(inst.data)

    # -- text ---------------------------------------------------------------------------------------
    def question(self, inst: LogicInstance) -> str:
        if self.query == "decision":
            return f"Question: Does {self.witness_noun} exist? Answer yes or no."
        if self.query == "solving":
            return f"Question: Find {self.witness_noun}."
        return f"Question: How many {self.count_noun} are there?"

    def answer_hint(self, inst):
        if self.query == "decision":
            return "```answer yes``` or ```answer no```"
        if self.query == "solving":
            return self.witness_hint(inst.data)
        return "```answer <the number>```"

    def problem_text(self, inst: LogicInstance) -> str:
        return f"{self.statement(inst.data)}\n\n{self.question(inst)}\nAnswer in the format {self.answer_hint(inst)}."

    def prompt(self, inst):
        # SAT-RL App. C's template for the settings other than SAT-Bench
        return ("Solve the problem step by step and put your final answer in the format ```answer ...```. "
                "If the evidence is genuinely insufficient, you may output ```idk```.\n\n"
                f"Problem Statement:\n{self.problem_text(inst)}")

    # -- scoring ------------------------------------------------------------------------------------
    def score(self, inst, text):
        if self.query == "decision":
            return decision_reward(text, inst.satisfiable, eps=self.eps)
        block = final_answer_block(text)
        if block is None:
            return Verdict({"format": 0.0, "correct": 0.0}, False, False, "no ```answer ...``` or ```idk``` block found")
        kind, body = block
        if kind == "idk":
            return Verdict({"format": SATRL_FORMAT, "correct": 0.0}, True, False, "abstained (idk)", "idk")
        if self.query == "counting":
            word = body.strip().strip("`'\"").replace(",", "")
            if not (word.isdigit() and len(word) <= 30):
                return Verdict({"format": 0.0, "correct": 0.0}, False, False, f"{word[:40]!r} is not a count")
            n = int(word)
            ok = n == inst.count
            return Verdict({"format": SATRL_FORMAT, "correct": self._correct(ok)}, True, ok,
                           f"answered {n}; there are {inst.count} {self.count_noun}", n)
        witness, why = self.parse_witness(inst.data, body)
        if witness is None:
            return Verdict({"format": 0.0, "correct": 0.0}, False, False, why)
        bad = self.check_witness(inst.data, witness)
        return Verdict({"format": SATRL_FORMAT, "correct": self._correct(bad is None)}, True, bad is None,
                       bad or f"{self.witness_noun} checked", witness)

    def _correct(self, ok: bool) -> float:
        return correctness_reward("correct" if ok else "incorrect", eps=self.eps)

    # -- for agents ---------------------------------------------------------------------------------
    def final_answer(self, inst: LogicInstance, output: dict | None = None) -> str:
        """The final answer, from a ground-truth program's ``output`` (:func:`~.programs.read_output`)
        where it is one that is right, else from the stored truth."""
        if self.query == "decision":
            sat = output["sat"] if output and output.get("sat") == inst.satisfiable else inst.satisfiable
            body = "yes" if sat else "no"
        elif self.query == "counting":
            body = str(output["count"] if output and output.get("count") == inst.count else inst.count)
        else:
            witness = inst.witness
            if output and output.get("true") is not None:
                found = self.witness_from_true(inst.data, set(output["true"]))
                witness = found if self.check_witness(inst.data, found) is None else witness
            body = self.format_witness(inst.data, witness)
        return "```answer\n" + body + "\n```"

    def gold(self, inst):
        model = self.encode(inst.data)

        def after_tool(stdout: str | None) -> str:
            out = read_output(stdout or "", self.query)
            return f"<think>\nThe solver's output answers the question.\n</think>\n{self.final_answer(inst, out)}"

        return Gold(self.final_answer(inst), program=lambda solver: logic_program(solver, model, self.query),
                    after_tool=after_tool, plan="I will state every constraint for {solver} and let it answer.")

    def sample_answer(self, inst, rng):
        if self.query == "decision":
            return "```answer\n" + ("yes" if rng.random() < 0.5 else "no") + "\n```"
        if self.query == "counting":
            return "```answer\n" + str(int(rng.integers(0, 2 * (inst.count or 1) + 2))) + "\n```"
        return "```answer\n" + self.random_witness(inst.data, rng) + "\n```"

    def random_witness(self, data: dict, rng: np.random.Generator) -> str:
        """A uniformly random answer of the witness's form (the random agent's)."""
        raise NotImplementedError
