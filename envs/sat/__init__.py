"""The SAT family: SATURN's planted (n,k,l)-SAT and SAT-Bench-style SAT/UNSAT decision.

``cnf`` (naming and parsing, model counts, CDCL labels, assignment and DRUP checks), ``generator``
(SAT_Construction, planted instances, D(n,k,l)), ``decision`` (certified SAT/UNSAT instances told
as scenarios by ``render``), ``verify`` (SATURN and SAT-RL rewards), ``prompts``, ``problem``
(the ``sat`` and ``sat-bench`` problems), ``tool`` (their tool mode), ``truth`` (their ground
truth for the ``equivalence`` reward), ``programs`` (ground-truth solver programs), ``datasets``
(SATURN JSONL in and out, SATURN-2.6k, SAT-Bench).
"""
from .cnf import check_drup, count_models, first_violated
from .datasets import (
    build_sat_bench,
    build_saturn_2_6k,
    instance_from_saturn_record,
    load_sat_bench_jsonl,
    load_saturn_jsonl,
)
from .decision import DecisionInstance, decision_instance
from .generator import SATInstance, difficulty, plant, sat_construction
from .verify import saturn_reward

__all__ = [
    "DecisionInstance",
    "SATInstance",
    "build_sat_bench",
    "build_saturn_2_6k",
    "check_drup",
    "count_models",
    "decision_instance",
    "difficulty",
    "first_violated",
    "instance_from_saturn_record",
    "load_sat_bench_jsonl",
    "load_saturn_jsonl",
    "plant",
    "sat_construction",
    "saturn_reward",
]
