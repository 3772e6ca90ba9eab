"""Zebra puzzles (Spring App. A.1, E.1): ``generator`` (unique-solution puzzles, minimal clue sets,
every size of Table 5), ``verify`` (vocabulary, Γ_dom, App. E.1 schema, Puzzle/Cell Acc), ``problem`` (the family as a problem: trace mode, and step mode through Spring's ``steps`` capability)."""
from .problem import ZebraProblem
from .generator import BUCKETS, SIZES, ZebraInstance, generate_zebra
from .verify import ZEBRA, ZebraTheory

__all__ = ["BUCKETS", "SIZES", "ZEBRA", "ZebraProblem", "ZebraInstance", "ZebraTheory", "generate_zebra"]
