"""Zebra puzzles (Spring App. A.1, E.1): ``generator`` (unique-solution puzzles, minimal clue sets,
every size of Table 5), ``verify`` (vocabulary, Γ_dom, App. E.1 schema, Puzzle/Cell Acc), ``problem`` (the family as a problem: its trace mode), ``env``
(``SolverZebra-v0`` in trace and step mode)."""
from .env import ZebraEnv
from .problem import ZebraProblem
from .generator import BUCKETS, SIZES, ZebraInstance, generate_zebra
from .verify import ZEBRA, ZebraTheory

__all__ = ["BUCKETS", "SIZES", "ZEBRA", "ZebraEnv", "ZebraProblem", "ZebraInstance", "ZebraTheory", "generate_zebra"]
