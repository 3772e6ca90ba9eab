"""AR-LSAT-style games (Spring App. A.2, E.2): ``generator`` (ordering, grouping and assignment
games, four question types, one correct option decided by enumeration), ``verify`` (vocabulary,
Γ_dom, App. E.2's eight-key schema, Acc), ``problem`` (the family as a problem: trace mode, and step mode through Spring's ``steps`` capability)."""
from .problem import LSATProblem
from .generator import GAMES, QUESTION_TYPES, LSATInstance, generate_lsat
from .verify import LSAT, LSATTheory

__all__ = ["GAMES", "LSAT", "LSATProblem", "LSATInstance", "LSATTheory", "QUESTION_TYPES", "generate_lsat"]
