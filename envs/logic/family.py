"""The contract of a Synthetic-Logic family, and the three queries built once on it (SAT-RL §3.1).

A family (one module of :mod:`.families`) subclasses :class:`LogicProblem` and writes only what is
its own: ``random_data`` / ``planted_data`` (its generator, App. B.1's hyper-parameters as
``Knobs``; planted data is satisfiable by construction), ``encode`` (the instance as a
:class:`~.model.BoolModel` over the names the prompt's variable mapping gives), ``statement``,
``mapping``, and for the solving query the witness: ``parse_witness``, ``format_witness``,
``witness_from_true`` (a solver's true variables -> the witness) and ``check_witness`` (the
independent verifier, written without a solver). Everything else is here, once:

- generation (:meth:`LogicProblem.generate`), with no reward for a policy that does not read:
  - *decision*: the label is drawn with probability ``sat_ratio`` (0.5: §3.2's balanced split)
    from the seed's stratum, and the instance is drawn *after* its **shape**
    (:meth:`LogicProblem.draw_shape`: what a reader counts without reading, such as the number
    of edges, the multiset of weights, the number of givens), which is drawn before the label and
    kept for every draw of that instance. Draws at that shape are rejected until the label is
    met, so the shape, and with it the prompt's length and counted quantities, has one
    distribution whatever the label (a classifier over them predicts the label no better than the
    majority class: ``tests/test_blind_policies.py``). A family draws shapes where both labels
    are common (its critical window), so the rejection ends.
  - *counting*: the count is drawn uniformly from the level's **support**
    (:meth:`LogicProblem.count_support`: at most :data:`MAX_SUPPORT` bins of counts, each about
    equally common among the family's natural draws at these knobs, measured once per knobs on a
    fixed seed), by the seed's stratum, and met by rejection; so no count is the answer to more
    than ``1/len(support)`` of the instances and a constant answer is right no more often than a
    uniform guess over the support.
  - *solving*: a satisfiable instance (a witness exists), at a shape drawn the same way.
  The truth comes from CP-SAT or python-sat in this process (:func:`~.model.solve_count`); the
  programs of every fitting solver agree with it in the sandbox (tests, ``benchmarks/logic_suite.py``).
- rewards (§3.4): ``format`` 0.1 when the final ```` ```answer``` ```` parses, ``correct`` 1 /
  0 for ```` ```idk``` ```` / wrong: eq. 1's -1/(n-1)-eps for n choices on the decision (n = 2:
  -1-eps). A witness has no small set of choices, so a wrong one is -1-eps. A wrong count is
  ``wrong_penalty``'s: ``"chance"`` (default) scales eq. 1 to the share ``q = 1/len(support)`` a
  uniform guess over the support has, ``-q/(1-q) - eps`` (a guess, or any constant, then earns
  ``-(1-q) eps`` in expectation, less than abstaining's 0), as ``chance_success`` does for SAT;
  ``"binary"`` is eq. 1 as printed, -1-eps.
- the oracle (:meth:`LogicProblem.gold`): the answer, and per solver the ground-truth program
  whose output it answers from.
"""
from __future__ import annotations

import importlib
from collections import Counter, OrderedDict
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

__all__ = ["LogicInstance", "LogicProblem", "family_class", "MAX_TRIES", "MAX_COUNT", "MAX_SUPPORT",
           "COUNT_PENALTIES", "CALIBRATION_DRAWS"]

#: generation attempts before a label the knobs cannot meet is an error
MAX_TRIES = 500
#: a counting instance with more models than this is redrawn (the programs enumerate them)
MAX_COUNT = 5000
#: the most bins a counting level's support has (so a constant count is right on 1/4 of the
#: instances at best; fewer where the knobs admit fewer counts)
MAX_SUPPORT = 4
#: natural draws a counting support is measured on (once per family and knobs, fixed seed)
CALIBRATION_DRAWS = 160
#: the rules for a wrong count (see the module docstring)
COUNT_PENALTIES = ("chance", "binary")
#: solving instances whose right witnesses a problem keeps (the blind baselines ask twice)
_WITNESS_CACHE = 1024
#: the seed of the draws a support is measured on
_CALIBRATION_SEED = 20261206
#: (family class, knobs) -> its counting support, measured once per process
_SUPPORTS: dict[tuple[type, Knobs], tuple[tuple[int, int], ...]] = {}


def support_bins(counts: list[int], bins: int) -> tuple[tuple[int, int], ...]:
    """At most ``bins`` bins ``(lo, hi)`` of consecutive observed ``counts``, as even in how many of
    them they hold as the counts allow. Walking the counts upwards, a bin closes once it holds
    ``len(counts)/bins``, or before a count that common when it holds a quarter of that (so a rare
    count never shares a bin with a common one); a light last bin joins the one before it; then
    the lightest neighbouring pair merges until ``bins`` are left. Each bin holds at least
    ``len(counts)/(4*bins)``, so rejection meets it in a few draws."""
    tally = sorted(Counter(counts).items())
    need = len(counts) / min(bins, len(tally))
    out: list[list[int]] = []  # [lo, hi, held]
    for value, n in tally:
        if not out or out[-1][2] >= need or (n >= need and out[-1][2] >= need / 4):
            out.append([value, value, 0])
        out[-1][1] = value
        out[-1][2] += n
    if len(out) > 1 and out[-1][2] < need / 4:
        out[-2][1], out[-2][2] = out[-1][1], out[-2][2] + out[-1][2]
        out.pop()
    while len(out) > bins:
        i = min(range(len(out) - 1), key=lambda j: out[j][2] + out[j + 1][2])
        out[i:i + 2] = [[out[i][0], out[i + 1][1], out[i][2] + out[i + 1][2]]]
    return tuple((lo, hi) for lo, hi, _ in out)


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
    ``witness``: a model as the family writes it (satisfiable instances; oracles only);
    ``support`` (counting): the bins of counts the instance's level draws its count from, uniformly
    (``[lo, hi]`` each, inclusive); its length sets the chance a guess has and so the penalty of a
    wrong count. A record without one (written before supports existed) is charged eq. 1's -1-eps,
    the most any support gives, so leaving it out never makes a wrong count cheaper."""

    family: str
    query: str
    data: dict
    satisfiable: bool
    count: int | None = None
    witness: Any = None
    support: list | None = None

    @property
    def count_chance(self) -> float | None:
        """The share of instances a uniform guess over the support's bins is right on
        (``1/len(support)``); None outside counting or without a support."""
        return 1.0 / len(self.support) if self.query == "counting" and self.support else None

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
        if self.support is not None:
            check_support(self.support)
            if self.query != "counting":
                raise ValueError("only a counting instance has a support")
            if not any(lo <= self.count <= hi for lo, hi in self.support):
                raise ValueError(f"count {self.count} is in no bin of the support {self.support}")


def check_support(support: Any) -> None:
    """``ValueError`` unless ``support`` is 1..:data:`MAX_SUPPORT` disjoint ``[lo, hi]`` bins of
    counts in increasing order (a record's support is read like any record: a longer one would
    make a wrong count cheaper)."""
    if not isinstance(support, list) or not 1 <= len(support) <= MAX_SUPPORT:
        raise ValueError(f"a support is a list of 1 to {MAX_SUPPORT} [lo, hi] bins, got {support!r:.80}")
    last = -1
    for b in support:
        if not (isinstance(b, list) and len(b) == 2 and all(isinstance(x, int) and not isinstance(x, bool) for x in b)
                and last < b[0] <= b[1] <= MAX_COUNT):
            raise ValueError(f"a support's bins are increasing, disjoint [lo, hi] counts in [0, {MAX_COUNT}]; "
                             f"got {support!r:.80}")
        last = b[1]


class LogicProblem(Problem):
    """Base of every Synthetic-Logic family (see the module docstring).

    Settings: ``query`` (``decision``, ``solving`` or ``counting``), ``sat_ratio`` (the share of
    decision instances that are satisfiable), ``eps`` (eq. 1's margin) and ``wrong_penalty`` (a
    wrong count's rule, :data:`COUNT_PENALTIES`; see the module docstring).
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

    @classmethod
    def knob_levels(cls) -> list[Knobs]:
        """The default knobs, then each of :attr:`levels` that differs from them: every setting a
        generated dataset poses, which the blind-baseline tests and benchmark measure."""
        out = [cls.Knobs.make()]
        for level in cls.levels:
            knobs = cls.Knobs.make(**level)
            if knobs not in out:
                out.append(knobs)
        return out

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if cls.name:  # the capability names the family's solvers: one per family
            cls.tool = tool_capability(cls)

    def __init__(self, query: str = "decision", sat_ratio: float = 0.5, eps: float = DEFAULT_EPS,
                 wrong_penalty: str = "chance"):
        self.query = _check_query(query)
        if not 0.0 <= float(sat_ratio) <= 1.0:
            raise ValueError(f"sat_ratio must be in [0, 1], got {sat_ratio}")
        if wrong_penalty not in COUNT_PENALTIES:
            raise ValueError(f"wrong_penalty must be one of {COUNT_PENALTIES}, got {wrong_penalty!r}")
        self.sat_ratio, self.eps, self.wrong_penalty = float(sat_ratio), float(eps), wrong_penalty

    # -- the family's own (see the module docstring) -----------------------------------------------
    def draw_shape(self, knobs: Knobs, rng: np.random.Generator) -> Any:
        """What a reader counts without reading (edges, the multiset of weights, givens...), drawn
        once per instance before its label and handed to every draw of it. A family draws shapes
        in its critical window: where a draw at the shape has each decision label often enough
        for :data:`MAX_TRIES` draws to meet either. ``None``: the family has no shape."""
        return None

    def random_data(self, knobs: Knobs, rng: np.random.Generator, shape: Any = None) -> dict:
        """An instance at ``shape`` whose label is whatever it draws: the decision's draw for both
        labels, so a label is a property of the structure, not of the surface."""
        raise NotImplementedError

    def planted_data(self, knobs: Knobs, rng: np.random.Generator, shape: Any = None) -> dict:
        """A satisfiable instance (by construction) at ``shape``: the solving and counting queries'
        draw, where a witness must exist or a count be large."""
        raise NotImplementedError

    def quick_label(self, data: dict) -> bool | None:
        """Whether ``data`` is satisfiable, where the family knows it without a solver (a search of
        its own, a lookup among listed solutions; exact, and tested against the solver), else
        ``None``. Generation skips the solve of a draw whose label this says is not the target:
        the same draws, in the same order, for fewer solver calls (the accepted draw is solved)."""
        return None

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
        """``stratum`` (from a mode): the decision's label is ``stratum < sat_ratio`` and the
        counting query's bin ``support[int(stratum * len(support))]``, balanced over consecutive
        seeds (:func:`~solvergym.envs.problem.seed_stratum`); without it the same from a uniform
        draw of ``rng``. The draw is made either way, so the rest of the instance is the same."""
        coin = rng.random()
        u = coin if stratum is None else stratum
        counting = self.query == "counting"
        target = bool(u < self.sat_ratio) if self.query == "decision" else True if self.query == "solving" else None
        support = [list(b) for b in self.count_support(knobs)] if counting else None
        lo, hi = support[min(int(u * len(support)), len(support) - 1)] if counting else (0, 0)
        shape = self.draw_shape(knobs, rng)
        for _ in range(MAX_TRIES):
            if counting:
                # a fresh shape each draw: the count's bin is the target here, not the label
                data = self._count_draw(knobs, rng)
            else:
                data = self.random_data(knobs, rng, shape) if target is False or self.query == "decision" \
                    else self.planted_data(knobs, rng, shape)
            if target is not None and self.quick_label(data) not in (None, target):
                continue  # the label is known without a solver: a rejected draw costs no solve
            model = self.encode(data)
            count, first, exact = solve_count(model, limit=MAX_COUNT + 1 if counting else 1)
            if not exact and (counting or count == 0):
                continue  # too many models to count, or a solver timeout: discarded (§3.2)
            if target is not None and (count > 0) != target:
                continue
            if counting and not lo <= count <= hi:
                continue
            witness = None
            if count > 0:
                witness = self.witness_from_true(data, {n for n, v in zip(model.names, first) if v})
            inst = LogicInstance(self.name, self.query, data, count > 0, count if counting else None, witness, support)
            inst.mark_validated()
            return inst
        what = (f"count in [{lo}, {hi}]" if counting else "satisfiable" if target else "unsatisfiable")
        raise RuntimeError(f"{self.name}: no {what} instance at {knobs.as_dict()} (shape {shape!r:.60}) in "
                           f"{MAX_TRIES} draws; these knobs make it rare")

    def _count_draw(self, knobs: Knobs, rng: np.random.Generator) -> dict:
        """The counting query's natural draw: a fresh shape, planted or not with even odds."""
        shape = self.draw_shape(knobs, rng)
        return self.planted_data(knobs, rng, shape) if rng.random() < 0.5 else self.random_data(knobs, rng, shape)

    def count_support(self, knobs: Knobs) -> tuple[tuple[int, int], ...]:
        """The counting query's support at ``knobs``: up to :data:`MAX_SUPPORT` bins ``(lo, hi)``
        of counts, each about equally common among :data:`CALIBRATION_DRAWS` natural draws
        (:meth:`_count_draw`, on a fixed seed: a pure function of the family and the knobs,
        measured once per process). A count more common than ``1/MAX_SUPPORT`` is a bin of its
        own, so every bin is met by rejection in a few draws."""
        key = (type(self), knobs)
        if key not in _SUPPORTS:
            rng = np.random.default_rng(_CALIBRATION_SEED)
            counts = []
            for _ in range(CALIBRATION_DRAWS):
                count, _, exact = solve_count(self.encode(self._count_draw(knobs, rng)), limit=MAX_COUNT + 1)
                if exact:
                    counts.append(count)
            if not counts:
                raise RuntimeError(f"{self.name}: no countable instance at {knobs.as_dict()}")
            _SUPPORTS[key] = support_bins(counts, MAX_SUPPORT)
        return _SUPPORTS[key]

    def coerce(self, obj):
        inst = super().coerce(obj)
        if inst.family != self.name or inst.query != self.query:
            raise ValueError(f"this env poses {self.name}/{self.query}; the instance is {inst.family}/{inst.query}")
        return inst

    def describe(self, inst):
        return self.describe_data(inst.data)

    def reset_info(self, inst):
        # a guess's chance, as SolverSAT-v0 reports chance_success: how much a count is a guess
        return {"count_chance": inst.count_chance} if self.query == "counting" else {}

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
            return Verdict({"format": SATRL_FORMAT, "correct": 1.0 if ok else self.wrong_count_reward(inst)}, True, ok,
                           f"answered {n}; there are {inst.count} {self.count_noun}", n)
        witness, why = self.parse_witness(inst.data, body)
        if witness is None:
            return Verdict({"format": 0.0, "correct": 0.0}, False, False, why)
        bad = self.check_witness(inst.data, witness)
        return Verdict({"format": SATRL_FORMAT, "correct": self._correct(bad is None)}, True, bad is None,
                       bad or f"{self.witness_noun} checked", witness)

    def _correct(self, ok: bool) -> float:
        return correctness_reward("correct" if ok else "incorrect", eps=self.eps)

    def wrong_count_reward(self, inst: LogicInstance) -> float:
        """A wrong count's ``correct`` (module docstring): ``"chance"`` ``-q/(1-q) - eps`` with ``q``
        the instance's :attr:`~LogicInstance.count_chance` (a support of one bin, ``q = 1``: -eps,
        since no count is wrong by chance there); ``"binary"``, or an instance with no support,
        -1-eps."""
        q = inst.count_chance
        if self.wrong_penalty == "binary" or q is None:
            return self._correct(False)
        return -self.eps if q >= 1.0 else -q / (1.0 - q) - self.eps

    def chance_reward(self, inst: LogicInstance) -> float | None:
        """A uniform guess's expected reward on ``inst`` (the chance line a blind policy is held to,
        :mod:`solvergym.evaluation.blind`): yes/no at even odds for a decision; for a count, a
        guess right as often as the commonest count can be, ``q = 1/len(support)`` (a count drawn
        uniformly from the support's bins is right that often at best); for a witness,
        :meth:`random_witness`'s guess, right on (distinct right witnesses) / :meth:`witness_space`
        of its draws (``None`` where the family defines no space, or past :data:`MAX_COUNT` models)."""
        if self.query == "decision":
            return SATRL_FORMAT + 0.5 * 1.0 + 0.5 * self._correct(False)
        if self.query == "counting":
            q = inst.count_chance
            return None if q is None else SATRL_FORMAT + q * 1.0 + (1.0 - q) * self.wrong_count_reward(inst)
        space = self.witness_space(inst.data)
        if space is None:
            return None
        right, exact = self._right_witnesses(inst, MAX_COUNT)
        if not exact:
            return None
        p = min(1.0, len(right) / space)
        return SATRL_FORMAT + p * 1.0 + (1.0 - p) * self._correct(False)

    def witness_space(self, data: dict) -> int | None:
        """How many answers :meth:`random_witness` draws from, uniformly (the solving query's
        chance line divides the right ones by it); ``None``: not defined for this family."""
        return None

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
            if inst.support:  # a bin at even odds, then a count in it: a guess that reads nothing
                lo, hi = inst.support[int(rng.integers(len(inst.support)))]
                return "```answer\n" + str(int(rng.integers(lo, hi + 1))) + "\n```"
            return "```answer\n" + str(int(rng.integers(0, 2 * (inst.count or 1) + 2))) + "\n```"
        return "```answer\n" + self.random_witness(inst.data, rng) + "\n```"

    def blind_candidates(self, inst: LogicInstance, limit: int = 64) -> list[str]:
        """Every right final answer to ``inst`` (up to ``limit`` witnesses of a solving instance;
        the one right answer otherwise): the answers a constant policy could be right with, which
        :func:`solvergym.evaluation.blind.constant_baseline` tries on every instance."""
        if self.query != "solving":
            return [self.final_answer(inst)]
        return ["```answer\n" + t + "\n```" for t in self._right_witnesses(inst, limit)[0][:limit]]

    def _right_witnesses(self, inst: LogicInstance, limit: int) -> tuple[list[str], bool]:
        """The distinct right witnesses of ``inst`` as the family writes them, from its first
        ``limit`` models, and whether those are all of them; kept for the last instances asked
        about (the chance line counts them all, the blind candidates take the first few)."""
        cache = self.__dict__.setdefault("_witness_cache", OrderedDict())
        key = inst.instance_id
        if key in cache and (cache[key][1] or cache[key][2] >= limit):
            cache.move_to_end(key)
            return cache[key][0], cache[key][1]
        model, found = self.encode(inst.data), []
        _, _, exact = solve_count(model, limit=limit, models=found)
        texts = list(dict.fromkeys(
            self.format_witness(inst.data, self.witness_from_true(inst.data, {n for n, v in zip(model.names, values) if v}))
            for values in found))
        cache[key] = (texts, exact, limit)
        while len(cache) > _WITNESS_CACHE:
            cache.popitem(last=False)
        return texts, exact

    def random_witness(self, data: dict, rng: np.random.Generator) -> str:
        """A uniformly random answer of the witness's form (the random agent's)."""
        raise NotImplementedError
