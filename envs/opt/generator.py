"""Seeded optimisation word problems with solver-verified ground truth (``SolverOR-v0``).

SIRL synthesises its training problems with an LLM from seed cases and scenarios, then labels
them by running ten model-written programs and voting (SIRL §3.1); the labels can still be wrong,
as the public benchmarks' are (or-modelling.md §4). Here the problem is drawn from numbers, the
reference model is built from the same numbers, and the answer is what two independent solvers
agree on (:func:`~.solve.reference_solve`), so every stored answer is the optimum of the stated
problem. The knobs are the complexity axes SIRL §3.1's augmentation raises: ``size``,
``integer`` (LP vs IP), ``side_constraints`` (extra stated requirements), ``infeasible_ratio``
(problems whose correct answer is "infeasible") and ``irrelevant_facts`` (distracting numbers).

No text tell: with ``infeasible_ratio > 0`` every instance, feasible or not, states one more
requirement, its family's *pivot*, drawn in two versions of one template that differ only in
their numbers (or in which items they name); an infeasible instance states the contradicting
version, a feasible one the other. So the same seed and knobs give the same number of sentences
and the same words either way, and only reading the numbers against the rest of the problem
tells feasibility (``tests/test_or_text_tell.py``: a bag-of-words classifier does no better than
chance). Whether the contradiction really contradicts is still the solvers' vote, not the
construction's word: a draw whose vote is not the status asked for is discarded.

Determinism: every draw comes from ``rng``, and the instance holds no timings, so the same seed
gives the same instance byte for byte. A draw the solvers cannot settle (a timeout, an error, a
disagreement, an unbounded model) or whose status is not the one asked for is discarded and the
next draw taken from the same ``rng``; after :data:`MAX_ATTEMPTS` draws ``generate`` raises
``ValueError``. (A timeout depends on the machine; the default sizes solve in milliseconds.)
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ..instance import Instance
from .families import FAMILIES, FAMILY_KIND, FAMILY_NAMES
from .families.common import draw_facts
from .model import SENSES, LinearModel
from .solve import reference_solve

__all__ = ["ORInstance", "generate", "make_instance", "FAMILIES", "FAMILY_KIND", "FAMILY_NAMES", "MAX_ATTEMPTS",
           "OR_STATUSES", "COUNT_RULES"]

#: draws tried before ``generate`` gives up
MAX_ATTEMPTS = 20
#: the statuses an instance may have (its problem is solvable, or provably is not)
OR_STATUSES = ("optimal", "infeasible")


@dataclass
class ORInstance(Instance):
    """One optimisation word problem and its ground truth.

    ``question`` is the text a policy sees; ``answer`` the optimal objective (``None`` when
    ``status == "infeasible"``; ``0.0`` is a real answer, not a missing one); ``model`` the
    reference model (:meth:`LinearModel.to_dict`) the answer is the optimum of; ``data`` the
    family's numbers behind the text; ``features`` ``model.features()`` (what SIRL §3.1 eq. 3
    votes on, and the big-M flag of SIRL §10). ``extra`` records the generator settings.

    An instance read from a public benchmark (:mod:`.datasets`, ``source`` the release name, never
    ``"generated"``) has a question and the benchmark's answer but no reference model: its
    ``model`` and ``features`` are ``{}`` and its ``sense`` is ``""`` (unknown). Only such an
    instance may lack a model; a generated one always has it.
    """

    family: str
    question: str
    answer: float | None
    status: str
    sense: str
    model: dict
    data: dict
    features: dict
    source: str = "generated"
    extra: dict = field(default_factory=dict)

    def validate(self) -> None:
        if not isinstance(self.family, str) or not self.family:
            raise ValueError("family must be a non-empty str")
        if self.source == "generated" and self.family not in FAMILIES:
            raise ValueError(f"unknown family {self.family!r}; generated instances use one of {list(FAMILIES)}")
        if not isinstance(self.question, str) or not self.question.strip():
            raise ValueError("question must be a non-empty str")
        if self.status not in OR_STATUSES:
            raise ValueError(f"status must be one of {OR_STATUSES}, got {self.status!r}")
        if self.status == "infeasible":
            if self.answer is not None:
                raise ValueError("an infeasible instance has answer None")
        elif isinstance(self.answer, bool) or not isinstance(self.answer, (int, float)) or not math.isfinite(self.answer):
            raise ValueError(f"an optimal instance needs a finite numeric answer, got {self.answer!r}")
        # a benchmark record (see the class docstring) has no model, so no known sense or features
        no_model = self.source != "generated" and self.model == {}
        if self.sense not in SENSES and not (no_model and self.sense == ""):
            raise ValueError(f"sense must be one of {SENSES}, got {self.sense!r}")
        if not isinstance(self.data, dict) or not isinstance(self.extra, dict) or not isinstance(self.source, str):
            raise ValueError("data and extra must be dicts and source a str")
        if no_model:
            if self.features != {}:
                raise ValueError("an instance without a model has no features")
            return
        model = LinearModel.from_dict(self.model)
        if model.sense != self.sense:
            raise ValueError(f"sense {self.sense!r} differs from the model's {model.sense!r}")
        if self.features != model.features():
            raise ValueError("features do not match the model")

    def linear_model(self) -> LinearModel:
        """The reference model as a :class:`LinearModel`."""
        return LinearModel.from_dict(self.model)


def make_instance(family: str, question: str, data: dict, model: LinearModel, *, time_limit_s: float = 10.0,
                  extra: dict | None = None, source: str = "generated") -> ORInstance:
    """Label one problem with :func:`reference_solve`. ``ValueError`` when the solvers do not
    settle it as optimal or infeasible (a timeout, an error, a disagreement, unbounded)."""
    inst, result = _labelled(family, question, data, model, time_limit_s, extra, source)
    if inst is None:
        raise ValueError(f"{family}: the reference solvers give {result.status}: {result.reason}")
    return inst


def _labelled(family, question, data, model, time_limit_s, extra, source):
    """``(instance, result)``; the instance is None when the vote is not optimal or infeasible."""
    result = reference_solve(model, time_limit_s)
    if result.status not in OR_STATUSES:
        return None, result
    inst = ORInstance(family=family, question=question, answer=result.objective if result.status == "optimal" else None,
                      status=result.status, sense=model.sense, model=model.to_dict(), data=data,
                      features=model.features(), source=source, extra=dict(extra or {}))
    inst.validate()
    return inst, result


#: how a family whose optimum is a small count draws it (:func:`generate`'s ``counts``)
COUNT_RULES = ("uniform", "natural")


def generate(family: str | None, rng: np.random.Generator, *, size: int = 3, integer: bool | None = None,
             side_constraints: int = 0, infeasible_ratio: float = 0.0, irrelevant_facts: bool = False,
             time_limit_s: float = 10.0, pivot: bool | None = None, counts: str = "uniform") -> ORInstance:
    """A new instance of ``family`` (``None``: one drawn uniformly from :data:`FAMILY_NAMES`).

    ``size`` is the family's main dimension (see each family's ``size_note``); ``integer``
    makes the quantity variables integer (``None``: the family's natural kind, see
    :data:`FAMILY_KIND`); ``side_constraints`` (0-10) extra requirements are stated in the text
    (fewer when the family has no further one that keeps the problem feasible); with
    probability ``infeasible_ratio`` a stated requirement contradicts the others (the answer is
    then "infeasible"); ``irrelevant_facts`` adds one or two true sentences with numbers that do
    not affect the model. Raises ``ValueError`` for a bad setting, or when :data:`MAX_ATTEMPTS`
    draws in a row were discarded (see the module docstring).

    ``pivot`` says whether the family's pivot requirement is stated (see the module docstring):
    ``None`` (default) exactly when ``infeasible_ratio > 0``, so that an instance drawn at ratio 0
    is what it always was; ``True`` always, for a pipeline that mixes ratios (an instance without
    a pivot is surely feasible, so mixing ratio 0 with ratio > 0 would tell again); ``False``
    never: a feasible instance is then the ratio-0 one and an infeasible one states its
    contradiction as one requirement more (the earlier shape, whose sentence count tells).

    ``counts``, for a family whose optimum is a small count (``Family.count_support``: bin
    packing): ``"uniform"`` (default) draws the count first, uniformly from the family's support,
    once per call, and the numbers for it (so no count is the answer more often than a guess among
    them is right: a constant answer earns no more than a guess); ``"natural"`` draws the numbers
    alone (3 bins answered 59% of bin-packing draws). Other families draw the same either way.
    """
    if family is not None and family not in FAMILIES:
        raise ValueError(f"unknown family {family!r}; choose one of {list(FAMILIES)} or None")
    if isinstance(infeasible_ratio, bool) or not isinstance(infeasible_ratio, (int, float)) \
            or not 0.0 <= infeasible_ratio <= 1.0:
        raise ValueError(f"infeasible_ratio must be a number in [0, 1], got {infeasible_ratio!r}")
    if not isinstance(irrelevant_facts, (bool, np.bool_)):
        raise ValueError(f"irrelevant_facts must be a bool, got {irrelevant_facts!r}")
    if pivot is not None and not isinstance(pivot, (bool, np.bool_)):
        raise ValueError(f"pivot must be True, False or None, got {pivot!r}")
    if counts not in COUNT_RULES:
        raise ValueError(f"counts must be one of {COUNT_RULES}, got {counts!r}")
    stated = infeasible_ratio > 0 if pivot is None else bool(pivot)
    name = family if family is not None else FAMILY_NAMES[int(rng.integers(len(FAMILY_NAMES)))]
    fam = FAMILIES[name]
    support = fam.answer_support(size) if counts == "uniform" else None
    # once per call, so that a count whose draws are discarded more often is not drawn less often
    target = support[int(rng.integers(len(support)))] if support else None
    reasons = []
    for attempt in range(1, MAX_ATTEMPTS + 1):
        data = fam.make_data(rng, size, integer, side_constraints, target=target)
        # drawn whatever the ratio, so that the same seed gives the same base problem at any ratio
        infeasible = bool(rng.random() < infeasible_ratio)
        if stated or infeasible:
            # both versions are drawn whichever is stated: the rest of the draw is the same either way
            pv = fam.pivot(rng, data)
            if pv is None:
                reasons.append("no pivot requirement fits this draw")
                continue
            if stated and pv.replaces is not None:
                del data["side"][pv.replaces]
            if infeasible:
                data["contradiction"] = pv.bad
            elif stated:
                data["side"].append(pv.ok)
        if irrelevant_facts:
            data["facts"] = draw_facts(rng, data["org"], 1 + int(rng.integers(2)), bool(data.get("person", False)))
        question, model = fam.finish(data)
        extra = {"kind": FAMILY_KIND[name], "size": int(size),
                 "integer": None if integer is None else bool(integer), "side_constraints": int(side_constraints),
                 "infeasible_by_construction": infeasible, "irrelevant_facts": bool(irrelevant_facts),
                 "attempt": attempt}
        inst, result = _labelled(name, question, data, model, time_limit_s, extra, "generated")
        if inst is not None and inst.status == ("infeasible" if infeasible else "optimal"):
            inst.mark_validated()
            return inst
        reasons.append(f"{result.status}{': ' + result.reason if result.reason else ''}")
    raise ValueError(f"{name}: no usable draw in {MAX_ATTEMPTS} attempts (size={size}, integer={integer}, "
                     f"side_constraints={side_constraints}); outcomes: {reasons}")
