"""Synthetic AR-LSAT-style games (Spring App. A.2, E.2): ordering, grouping and assignment games
with a multiple-choice question whose single correct option is decided by solving the game.

- **ordering**: ``n`` entities take positions 1..n, one each (a permutation). Rules: earlier
  than (``A < B``), immediately before (``A + 1 == B``), not first / not last (``A != 1``), fixed
  position, not consecutive, either-or, and conditionals (``Implies(A < B, C < D)``).
- **grouping**: ``n`` entities are each placed in exactly one of ``k`` groups (2-3), sizes free.
  Rules: in / not in a group (``Assign(A, Red)``), same / different group, conditionals
  (``Implies(Assign(A, Red), Assign(B, Blue))``), exactly-one-of (``Xor``) and group-size bounds
  (``AtLeast(2, Assign(A, Red), ...)``).
- **assignment**: like grouping, but each slot (a day) takes a fixed number of entities
  (Γ_dom holds the capacities), so the game is a one-to-one or k-to-one assignment.

Questions (App. E.2 ``question_type``): ``must_be_true``, ``could_be_true``, ``cannot_be_true``
and ``if_then`` ("If <condition>, which one of the following must be true?"). Exactly one of five
options is correct.

The solver here is exhaustive enumeration: every world of the game (at most 7! = 5,040
orderings or 3^7 = 2,187 groupings) is a row of a numpy array and every formula is evaluated on all
worlds at once by :func:`evaluate` — a second implementation of the formula language's meaning,
independent of the Z3 compiler the verifier uses (the tests check that the two agree on every
option). Rules are drawn true in a planted world until 2..``max_solutions`` worlds remain; then
options are classified (true in every / some / no remaining world) and one correct option is put
among four wrong ones. Pure and seeded.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

from ..instance import Instance
from ..logic_steps.formula import Node, parse_formula
from ..logic_steps.rand import Draws

__all__ = ["GAMES", "QUESTION_TYPES", "LSATInstance", "generate_lsat", "worlds_of", "evaluate",
           "same_group_formula", "OPTION_LETTERS"]

GAMES = ("ordering", "grouping", "assignment")
QUESTION_TYPES = ("must_be_true", "could_be_true", "cannot_be_true", "if_then")
OPTION_LETTERS = ["A", "B", "C", "D", "E"]

ENTITY_NAMES = ["Fiona", "Greg", "Hana", "Ivan", "Jules", "Kara", "Liam", "Mona", "Nate", "Olga",
                "Pavel", "Rita", "Seth", "Tara", "Umar", "Vera"]
GROUP_SETS = [["Red", "Blue", "Green"], ["North", "South", "East"], ["Finance", "Marketing", "Research"]]
SLOT_SETS = [["Monday", "Tuesday", "Wednesday"], ["Morning", "Afternoon", "Evening"], ["Room1", "Room2", "Room3"]]
_ORD = ["first", "second", "third", "fourth", "fifth", "sixth", "seventh"]


@dataclass
class LSATInstance(Instance):
    """A game, its rules (text and formula), a question, five options (text and formula) and the
    letter of the correct option. ``groups`` are the group or slot names (empty for ordering),
    ``capacities`` the fixed slot sizes (assignment only)."""

    game: str
    entities: list[str]
    groups: list[str]
    capacities: list[int]
    scenario: str
    rules: list[str]
    rule_formulas: list[str]
    question_type: str
    question: str
    facts: list[str]
    fact_formulas: list[str]
    options: list[str]
    option_formulas: list[str]
    answer: str
    n_solutions: int = 0
    scenario_kind: str = field(default="")

    def validate(self) -> None:
        if self.game not in GAMES:
            raise ValueError(f"game must be one of {GAMES}, got {self.game!r}")
        if self.question_type not in QUESTION_TYPES:
            raise ValueError(f"question_type must be one of {QUESTION_TYPES}")
        if len(self.options) != 5 or len(self.option_formulas) != 5 or self.answer not in OPTION_LETTERS:
            raise ValueError("five options and an answer letter A-E are required")
        if len(self.rules) != len(self.rule_formulas) or len(self.facts) != len(self.fact_formulas):
            raise ValueError("every rule and fact needs its formula")
        if len(set(self.entities)) != len(self.entities) or not all(e.isidentifier() for e in self.entities):
            raise ValueError("entities must be distinct identifiers")
        if self.game == "ordering" and self.groups:
            raise ValueError("ordering games have no groups")
        if self.game != "ordering" and not 2 <= len(self.groups) <= 4:
            raise ValueError("grouping and assignment games need 2-4 groups")
        if self.game == "assignment" and (len(self.capacities) != len(self.groups)
                                          or sum(self.capacities) != len(self.entities)):
            raise ValueError("assignment capacities must sum to the number of entities")

    def world_index(self) -> dict[str, int]:
        return {e: i for i, e in enumerate(self.entities)}


# --------------------------------------------------------------------------- worlds and meaning
@lru_cache(maxsize=64)
def _worlds(game: str, n: int, k: int, caps: tuple[int, ...]) -> np.ndarray:
    if game == "ordering":
        return np.array(list(itertools.permutations(range(1, n + 1))), dtype=np.int16)
    w = np.array(list(itertools.product(range(k), repeat=n)), dtype=np.int16)
    if game == "assignment":
        counts = np.stack([(w == g).sum(axis=1) for g in range(k)], axis=1)
        w = w[(counts == np.array(caps)).all(axis=1)]
    return w


def worlds_of(inst: LSATInstance) -> np.ndarray:
    """Every world of the game (Γ_dom): rows are worlds, column i is entity i's position
    (ordering, 1-based) or group index."""
    w = _worlds(inst.game, len(inst.entities), len(inst.groups), tuple(inst.capacities))
    w.flags.writeable = False
    return w


def evaluate(node: Node, inst: LSATInstance, worlds: np.ndarray) -> np.ndarray:
    """The value of a formula on every world at once (bool array, or int array for numbers)."""
    ent = inst.world_index()
    grp = {g: i for i, g in enumerate(inst.groups)}
    W = worlds.shape[0]

    def ev(n: Node):
        op = n.op
        if op == "int":
            return np.full(W, n.value, dtype=np.int64)
        if op == "bool":
            return np.full(W, bool(n.value))
        if op == "name":
            return worlds[:, ent[n.value]].astype(np.int64)
        if op == "":
            return ev(n.args[0])
        if op == "+":
            return ev(n.args[0]) + ev(n.args[1])
        if op == "-":
            return ev(n.args[0]) - ev(n.args[1])
        if op == "neg":
            return -ev(n.args[0])
        if op in ("==", "!=", "<", ">", "<=", ">="):
            a, b = ev(n.args[0]), ev(n.args[1])
            return {"==": a == b, "!=": a != b, "<": a < b, ">": a > b, "<=": a <= b, ">=": a >= b}[op]
        if op == "Assign":
            return worlds[:, ent[n.args[0].value]] == grp[n.args[1].value]
        if op == "Not":
            return ~ev(n.args[0])
        if op == "And":
            return np.logical_and.reduce([ev(a) for a in n.args])
        if op == "Or":
            return np.logical_or.reduce([ev(a) for a in n.args])
        if op == "Xor":
            return ev(n.args[0]) ^ ev(n.args[1])
        if op == "Implies":
            return ~ev(n.args[0]) | ev(n.args[1])
        if op in ("AtLeast", "AtMost", "Exactly"):
            k = n.args[0].value
            count = np.sum([ev(a).astype(np.int64) for a in n.args[1:]], axis=0)
            return {"AtLeast": count >= k, "AtMost": count <= k, "Exactly": count == k}[op]
        raise ValueError(f"cannot evaluate {op!r}")

    return ev(node)


def same_group_formula(a: str, b: str, groups: list[str]) -> str:
    """"a and b are in the same group" in App. E.2's vocabulary: the same membership status for
    every group but the last (each entity is in exactly one group, so the last follows)."""
    parts = [f"Assign({a}, {g}) == Assign({b}, {g})" for g in groups[:-1]]
    return parts[0] if len(parts) == 1 else "And(" + ", ".join(parts) + ")"


# --------------------------------------------------------------------------- statements
def _ordering_rule(d: Draws, names: list[str], pos: dict[str, int]) -> tuple[str, str]:
    n = len(names)
    kind = d.choice(["before", "before", "immediately", "not_end", "not_end", "fixed", "not_adjacent",
                     "either", "conditional"])
    a, b = d.sample(names, 2)
    if kind == "before":
        if pos[a] > pos[b]:
            a, b = b, a
        return f"{a} is earlier than {b}.", f"{a} < {b}"
    if kind == "immediately":
        e = [x for x in names if pos[x] < n]
        a = d.choice(e)
        b = next(x for x in names if pos[x] == pos[a] + 1)
        return f"{a} is immediately before {b}.", f"{a} + 1 == {b}"
    if kind == "not_end":
        if pos[a] != 1 and d.random() < 0.5:
            return f"{a} is not first.", f"{a} != 1"
        if pos[a] != n:
            return f"{a} is not last.", f"{a} != {n}"
        return f"{a} is not first.", f"{a} != 1"
    if kind == "fixed":
        return f"{a} is {_ORD[pos[a] - 1]}.", f"{a} == {pos[a]}"
    if kind == "not_adjacent":
        if abs(pos[a] - pos[b]) == 1:
            return f"{a} is adjacent to {b}.", f"Or({a} + 1 == {b}, {b} + 1 == {a})"
        return f"{a} and {b} are not consecutive.", f"And({a} + 1 != {b}, {b} + 1 != {a})"
    if kind == "either":
        k = d.between(1, n)
        first = next(x for x in names if pos[x] == k)
        other = d.choice([x for x in names if x != first])
        pair = [first, other] if d.random() < 0.5 else [other, first]
        return (f"Either {pair[0]} or {pair[1]} is {_ORD[k - 1]}.", f"Or({pair[0]} == {k}, {pair[1]} == {k})")
    c, e = d.sample([x for x in names if x not in (a, b)], 2) if n >= 4 else (a, b)
    holds_a = pos[a] < pos[b]
    if not holds_a or pos[c] < pos[e]:
        return (f"If {a} is earlier than {b}, then {c} is earlier than {e}.", f"Implies({a} < {b}, {c} < {e})")
    return (f"If {a} is earlier than {b}, then {e} is earlier than {c}.", f"Implies({a} < {b}, {e} < {c})")


def _group_rule(d: Draws, names: list[str], groups: list[str], grp: dict[str, int], game: str) -> tuple[str, str]:
    kinds = ["in", "not_in", "not_in", "same", "different", "conditional", "conditional", "xor"]
    if game == "grouping":
        kinds += ["at_least", "at_most"]
    kind = d.choice(kinds)
    a, b = d.sample(names, 2)
    ga, gb = groups[grp[a]], groups[grp[b]]
    word = "on" if game == "grouping" else "assigned to"
    if kind == "in":
        return f"{a} is {word} {ga}.", f"Assign({a}, {ga})"
    if kind == "not_in":
        g = d.choice([x for x in groups if x != ga])
        return f"{a} is not {word} {g}.", f"Not(Assign({a}, {g}))"
    if kind in ("same", "different"):
        same = ga == gb
        f = same_group_formula(a, b, groups)
        noun = "team" if game == "grouping" else "shift"
        if same:
            return f"{a} and {b} are {word} the same {noun}.", f
        neg = f"Not({f})" if len(groups) > 2 else f.replace("==", "!=")
        return f"{a} and {b} are not {word} the same {noun}.", neg
    if kind == "conditional":
        g = d.choice(groups)
        if g == ga:
            return (f"If {a} is {word} {ga}, then {b} is {word} {gb}.", f"Implies(Assign({a}, {ga}), Assign({b}, {gb}))")
        h = d.choice(groups)
        return (f"If {a} is {word} {g}, then {b} is {word} {h}.", f"Implies(Assign({a}, {g}), Assign({b}, {h}))")
    if kind == "xor":
        g = d.choice(groups)
        if (ga == g) != (gb == g):
            return (f"Exactly one of {a} and {b} is {word} {g}.", f"Xor(Assign({a}, {g}), Assign({b}, {g}))")
        return (f"{a} is {word} {g} if and only if {b} is.", f"Assign({a}, {g}) == Assign({b}, {g})")
    g = d.choice(groups)
    size = sum(1 for x in names if groups[grp[x]] == g)
    members = ", ".join(f"Assign({x}, {g})" for x in names)
    if kind == "at_least":
        k = d.between(1, max(1, size))
        return f"{g} has at least {k} member{'s' if k > 1 else ''}.", f"AtLeast({k}, {members})"
    k = d.between(size, max(size, min(size + 1, len(names))))
    return f"{g} has at most {k} member{'s' if k != 1 else ''}.", f"AtMost({k}, {members})"


def _option_pool(inst_game: str, names: list[str], groups: list[str], n: int) -> list[tuple[str, str]]:
    """Candidate options (text, formula) over the vocabulary of the game."""
    out = []
    if inst_game == "ordering":
        for a in names:
            for k in range(1, n + 1):
                out.append((f"{a} is {_ORD[k - 1]}.", f"{a} == {k}"))
        for a, b in itertools.permutations(names, 2):
            out.append((f"{a} is earlier than {b}.", f"{a} < {b}"))
            out.append((f"{a} is immediately before {b}.", f"{a} + 1 == {b}"))
        return out
    word = "on" if inst_game == "grouping" else "assigned to"
    for a in names:
        for g in groups:
            out.append((f"{a} is {word} {g}.", f"Assign({a}, {g})"))
    for a, b in itertools.combinations(names, 2):
        f = same_group_formula(a, b, groups)
        out.append((f"{a} and {b} are {word} the same {'team' if inst_game == 'grouping' else 'shift'}.", f))
    return out


_SCENARIOS = {
    "ordering": [
        "{n} speakers, {names}, each give one talk at a conference. The talks are scheduled one after "
        "another in positions 1 (first) to {n} (last), one talk per position.",
        "{n} runners, {names}, finish a race in positions 1 (first) to {n} (last), with no ties.",
    ],
    "grouping": [
        "{n} students, {names}, are each placed on exactly one of {k} teams: {groups}. A team may have "
        "any number of members, including none.",
    ],
    "assignment": [
        "{n} volunteers, {names}, are each assigned to exactly one of {k} shifts: {groups}. {caps}",
    ],
}


def _join(xs: list[str]) -> str:
    return ", ".join(xs[:-1]) + " and " + xs[-1] if len(xs) > 1 else "".join(xs)


def generate_lsat(
    rng: np.random.Generator | int | None,
    *,
    game: str | None = None,
    n_entities: int | None = None,
    n_groups: int | None = None,
    question_type: str | None = None,
    max_solutions: int = 12,
    max_tries: int = 500,
) -> LSATInstance:
    """One game with one question; ``None`` knobs are drawn at random."""
    d = Draws(rng)
    for _ in range(max_tries):
        inst = _try_generate(d, game, n_entities, n_groups, question_type, max_solutions)
        if inst is not None:
            return inst
    raise RuntimeError("could not build a question with one correct option")  # pragma: no cover


def _try_generate(d: Draws, game, n_entities, n_groups, question_type, max_solutions) -> LSATInstance | None:
    game = game or d.choice(list(GAMES))
    if game not in GAMES:
        raise ValueError(f"game must be one of {GAMES}, got {game!r}")
    qtype = question_type or d.choice(list(QUESTION_TYPES))
    if qtype not in QUESTION_TYPES:
        raise ValueError(f"question_type must be one of {QUESTION_TYPES}, got {qtype!r}")
    if game == "ordering":
        n = n_entities or d.between(4, 6)
        if not 3 <= n <= 7:
            raise ValueError("ordering games take 3..7 entities")
        k, groups, caps = 0, [], []
    else:
        k = n_groups or (2 if d.random() < 0.5 else 3)
        if not 2 <= k <= 3:
            raise ValueError("grouping and assignment games take 2..3 groups")
        if game == "grouping":
            n = n_entities or d.between(4, 6)
            caps = []
        else:
            n = n_entities or (2 * k if d.random() < 0.6 else k + 1 + d.below(k))
            base, extra = divmod(n, k)
            caps = [base + (1 if i < extra else 0) for i in range(k)]
            caps = d.shuffle(caps)
        if not 3 <= n <= 7:
            raise ValueError("grouping and assignment games take 3..7 entities")
        if game == "assignment" and min(caps) < 1:
            raise ValueError("every shift needs at least one volunteer")
        groups = list(d.choice(SLOT_SETS if game == "assignment" else GROUP_SETS)[:k])
    names = sorted(d.sample(ENTITY_NAMES, n))
    shell = LSATInstance(game=game, entities=names, groups=groups, capacities=caps, scenario="", rules=[],
                         rule_formulas=[], question_type=qtype, question="", facts=[], fact_formulas=[],
                         options=[""] * 5, option_formulas=[""] * 5, answer="A")
    worlds = worlds_of(shell)
    planted = worlds[d.below(worlds.shape[0])]
    if game == "ordering":
        where = {e: int(planted[i]) for i, e in enumerate(names)}
    else:
        where = {e: int(planted[i]) for i, e in enumerate(names)}
    alive = np.ones(worlds.shape[0], dtype=bool)
    rules, formulas, seen = [], [], set()
    target = d.between(2, max(2, max_solutions))
    for _ in range(60):
        if alive.sum() <= target:
            break
        text, f = (_ordering_rule(d, names, where) if game == "ordering"
                   else _group_rule(d, names, groups, where, game))
        if f in seen:
            continue
        mask = evaluate(parse_formula(f), shell, worlds)
        new = alive & mask
        if new.sum() == alive.sum() or new.sum() < 2:
            continue  # says nothing new, or pins the game down to one world
        seen.add(f)
        rules.append(text)
        formulas.append(f)
        alive = new
    if alive.sum() > max(target, 2) * 2 or len(rules) < 2:
        return None
    # drop rules the others already imply (in random order), as the Zebra generator does
    masks = [evaluate(parse_formula(f), shell, worlds) for f in formulas]
    keep = list(range(len(rules)))
    for i in d.shuffle(list(range(len(rules)))):
        rest = [j for j in keep if j != i]
        if rest and (np.logical_and.reduce([masks[j] for j in rest]) == alive).all():
            keep = rest
    rules, formulas = [rules[j] for j in keep], [formulas[j] for j in keep]
    pool = _option_pool(game, names, groups, n)
    truth = [(t, f, evaluate(parse_formula(f), shell, worlds)) for t, f in pool]
    # an option that restates a rule, or that the game's structure alone decides, is no question
    kept = [masks[j] for j in keep]
    truth = [(t, f, m) for t, f, m in truth
             if m.any() and not m.all() and not any((m == r).all() for r in kept)]
    facts, fact_formulas = [], []
    scope = alive
    if qtype == "if_then":
        cond = [(t, f, m) for t, f, m in truth if (m & alive).any() and not (m[alive]).all()]
        if not cond:
            return None
        t, f, m = cond[d.below(len(cond))]
        facts, fact_formulas = [t], [f]
        scope = alive & m
    in_scope = scope.sum()
    must = [(t, f) for t, f, m in truth if (m[scope]).all()]
    never = [(t, f) for t, f, m in truth if not (m[scope]).any()]
    could = [(t, f) for t, f, m in truth if (m[scope]).any()]
    not_must = [(t, f) for t, f, m in truth if not (m[scope]).all()]
    if qtype == "if_then":
        base_must = {f for t, f, m in truth if (m[alive]).all()}
        must = [(t, f) for t, f in must if f not in base_must and f not in fact_formulas]
        not_must = [(t, f) for t, f in not_must if f not in fact_formulas]
    # a right answer that one rule (or the supposed fact) implies on its own needs no reasoning:
    # no deduction towards it is novel (Spring Def. 4), so the trace could not earn r_novel
    single = kept + [evaluate(parse_formula(f), shell, worlds) for f in fact_formulas]
    mask_of = {f: m for _, f, m in truth}
    must = [(t, f) for t, f in must if not any((~r | mask_of[f]).all() for r in single)]
    if qtype in ("must_be_true", "if_then"):
        right, wrong = must, not_must
    elif qtype == "could_be_true":
        right, wrong = could, never
    else:
        right, wrong = never, could
    if not right or len(wrong) < 4:
        return None
    correct = right[d.below(len(right))]
    distract = d.sample(wrong, 4)
    slot = d.below(5)
    chosen = distract[:slot] + [correct] + distract[slot:]
    scenario = d.choice(_SCENARIOS[game]).format(
        n=len(names), names=_join(names), k=k, groups=_join(groups),
        caps=" ".join(f"{g} takes exactly {c} volunteer{'s' if c > 1 else ''}." for g, c in zip(groups, caps)))
    qtext = {
        "must_be_true": "Which one of the following must be true?",
        "could_be_true": "Which one of the following could be true?",
        "cannot_be_true": "Which one of the following cannot be true?",
        "if_then": f"If {facts[0][:-1] if facts else ''}, which one of the following must be true?",
    }[qtype]
    return LSATInstance(
        game=game, entities=names, groups=groups, capacities=caps, scenario=scenario, rules=rules,
        rule_formulas=formulas, question_type=qtype, question=qtext, facts=facts, fact_formulas=fact_formulas,
        options=[t for t, _ in chosen], option_formulas=[f for _, f in chosen], answer=OPTION_LETTERS[slot],
        n_solutions=int(in_scope), scenario_kind=game,
    )
