"""Knights & Knaves (Spring App. A.3): ``generator`` (2-8 characters, statement depth and width,
unique solution by brute force over 2^n worlds), ``verify`` (vocabulary, schema, Puzzle/Person
Acc), ``problem`` (the family as a problem: its trace mode), ``env`` (``SolverKnights-v0`` in trace and step mode)."""
from .env import KnightsEnv
from .problem import KnightsProblem
from .generator import KnightsInstance, generate_knights
from .verify import KNIGHTS, KnightsTheory

__all__ = ["KNIGHTS", "KnightsEnv", "KnightsProblem", "KnightsInstance", "KnightsTheory", "generate_knights"]
