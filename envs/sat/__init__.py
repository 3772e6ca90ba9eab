"""The SAT family: SATURN's planted (n,k,l)-SAT and SAT-Bench-style SAT/UNSAT decision.

``generator`` (SAT_Construction, planted instances, D(n,k,l), model counts, certified UNSAT),
``verify`` (assignment check, SATURN and SAT-RL rewards, DRUP check), ``env`` (the two envs),
``curriculum`` (SATURN Algorithm 1), ``datasets`` (SATURN JSONL in and out, SATURN-2.6k, SAT-Bench).
"""
from .datasets import (
    build_sat_bench,
    build_saturn_2_6k,
    instance_from_saturn_record,
    load_sat_bench_jsonl,
    load_saturn_jsonl,
)
from .generator import (
    DecisionInstance,
    SATInstance,
    count_models,
    decision_instance,
    difficulty,
    plant,
    sat_construction,
)
from .verify import check_drup, first_violated, saturn_reward

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
