"""Knights & Knaves (Spring App. A.3): ``generator`` (2-8 characters, statement depth and width,
unique solution by brute force over 2^n worlds), ``verify`` (vocabulary, schema, Puzzle/Person
Acc), ``problem`` (the family as a problem: trace mode, and step mode through Spring's ``steps`` capability)."""
from .problem import KnightsProblem
from .generator import KnightsInstance, generate_knights
from .verify import KNIGHTS, KnightsTheory

__all__ = ["KNIGHTS", "KnightsProblem", "KnightsInstance", "KnightsTheory", "generate_knights"]
