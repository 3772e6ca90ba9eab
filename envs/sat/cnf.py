"""CNF utilities shared by the SAT family: naming, parsing, checking, counting, labelling, certificates.

Literals are DIMACS integers: variable ``i`` (0-based) is ``i + 1``, its negation ``-(i + 1)``.

- :func:`var_name` / :func:`var_index`, :func:`format_clauses` / :func:`parse_clauses`: SATURN's
  variable names and clause syntax (``"!A!B!C & A!B!D"``); :func:`formula_key` identifies a
  formula whatever the order of its clauses and literals.
- :func:`first_violated`: the first clause an assignment falsifies.
- :func:`count_models`: exact model counts (enumeration or CDCL), a CDCL bound for large ``k``.
- :func:`solve_cnf`: a CDCL label with its certificate (a model, or a DRUP proof), and
  :func:`check_drup`, which re-checks such a proof by reverse unit propagation, independently of
  the solver that wrote it.

Pure: nothing here draws randomness except through the ``numpy.random.Generator`` that
:func:`as_rng` returns for a seed.
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np

__all__ = [
    "ENUMERATION_MAX_K",
    "DEFAULT_MODEL_LIMIT",
    "LABEL_SOLVER",
    "as_rng",
    "var_name",
    "var_index",
    "format_clauses",
    "parse_clauses",
    "formula_key",
    "first_violated",
    "clause_masks",
    "count_models",
    "solve_cnf",
    "check_drup",
]

#: Model counts are exact up to this k (enumeration of 2^k assignments or CDCL); above, CDCL with a limit.
ENUMERATION_MAX_K = 20
#: Above ENUMERATION_MAX_K, CDCL model enumeration stops after this many models (count is then a bound).
DEFAULT_MODEL_LIMIT = 100_000
#: The CDCL solver that labels decision instances and writes the DRUP proof of an UNSAT label.
LABEL_SOLVER = "cadical195"


def as_rng(seed: np.random.Generator | int | None) -> np.random.Generator:
    return seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)


# ---------------------------------------------------------------------------------- naming
def var_name(i: int) -> str:
    """SATURN's variable names: ``A``..``Z`` for the first 26 variables, then ``A1``..``Z1``,
    ``A2``..``Z2``, ... (letter ``i mod 26`` followed by ``i div 26`` when ``i >= 26``).

    Every name is one capital letter plus optional digits, so a clause written without separators
    (``!A!B12C``) still splits unambiguously; for ``k <= 26`` the names are SATURN's own.
    """
    letter = chr(ord("A") + i % 26)
    return letter if i < 26 else f"{letter}{i // 26}"


def var_index(name: str) -> int:
    """Inverse of :func:`var_name`."""
    if not name or not ("A" <= name[0] <= "Z") or (len(name) > 1 and not name[1:].isdigit()):
        raise ValueError(f"not a variable name: {name!r}")
    if len(name) > 1 and (name[1] == "0" or int(name[1:]) == 0):
        raise ValueError(f"not a variable name: {name!r}")
    return (ord(name[0]) - ord("A")) + 26 * (int(name[1:]) if len(name) > 1 else 0)


def format_clauses(clauses: list[list[int]]) -> str:
    """SATURN's released-data syntax: literals concatenated, ``!`` for negation, clauses joined by
    ``" & "`` (``[[-1,-2,-3],[1,-2,-4]]`` -> ``"!A!B!C & A!B!D"``)."""
    lits = list(filter(None, clauses))
    k = max(max(map(max, lits), default=0), -min(map(min, lits), default=0))
    names = [var_name(i) for i in range(k)]
    # literal x at index x: the names at 1..k, the negations from the end (a list's -x is 2k+1-x)
    text = [""] + names + ["!" + name for name in reversed(names)]
    return " & ".join(["".join(map(text.__getitem__, c)) for c in clauses])


def parse_clauses(text: str, k: int | None = None) -> list[list[int]]:
    """Parse SATURN's clause syntax (inverse of :func:`format_clauses`); ``ValueError`` if malformed."""
    if not isinstance(text, str) or not text.strip():
        raise ValueError("empty clause string")
    clauses = []
    for part in text.split("&"):
        part = part.strip()
        lits, i = [], 0
        if not part:
            raise ValueError(f"empty clause in {text[:80]!r}")
        while i < len(part):
            neg = part[i] == "!"
            if neg:
                i += 1
            j = i + 1
            if i >= len(part) or not ("A" <= part[i] <= "Z"):
                raise ValueError(f"bad literal at {part[max(0, i - 1):i + 3]!r} in clause {part!r}")
            while j < len(part) and part[j].isdigit():
                j += 1
            v = var_index(part[i:j])
            if k is not None and v >= k:
                raise ValueError(f"variable {part[i:j]} is out of range for k={k}")
            lits.append(-(v + 1) if neg else v + 1)
            i = j
        clauses.append(lits)
    return clauses


def formula_key(clauses: list[list[int]]) -> tuple:
    """A hashable key for a formula, independent of clause and literal order."""
    return tuple(sorted(map(tuple, map(sorted, clauses))))


# ---------------------------------------------------------------------------------- checking
def first_violated(clauses: list[list[int]], bits: str) -> int | None:
    """Index of the first clause ``bits`` falsifies, or ``None`` if it satisfies all of them."""
    for i, clause in enumerate(clauses):
        for lit in clause:
            if (bits[abs(lit) - 1] == "1") == (lit > 0):
                break
        else:
            return i
    return None


# ---------------------------------------------------------------------------------- counting
def clause_masks(clauses: list[list[int]]) -> tuple[np.ndarray, np.ndarray]:
    """Per clause, the bit mask of its variables and of its negated variables (k <= 63): the
    clause is false on an assignment ``a`` exactly when ``a & mask == neg``. A literal written
    twice counts once; a clause holding ``x`` and ``-x`` is never false (``mask`` 0, ``neg`` 1)."""
    masks, negs = [], []
    for c in clauses:
        pos = neg = 0
        for x in c:
            if x > 0:
                pos |= 1 << (x - 1)
            else:
                neg |= 1 << (-x - 1)
        both = pos & neg
        masks.append(0 if both else pos | neg)
        negs.append(1 if both else neg)
    return np.array(masks, dtype=np.int64), np.array(negs, dtype=np.int64)


def count_models(
    clauses: list[list[int]], k: int, *, limit: int = DEFAULT_MODEL_LIMIT
) -> tuple[int, bool]:
    """Number of assignments of ``k`` variables satisfying ``clauses``: ``(count, exact)``.

    Exact up to ``k = 20``: up to ``k = 12`` on sets of assignments held as ints
    (:func:`_count_by_bitsets`); above, by enumerating all ``2^k`` assignments (vectorised), unless CDCL
    model enumeration is cheaper, which it is when the formula has few models; it is tried first
    with a budget of models worth about as much time as the enumeration would take. Above
    ``k = 20`` only CDCL enumeration runs, and stops at ``limit`` models (``exact`` is then False
    and the count a lower bound).
    """
    if k <= BITSET_MAX_K:
        return _count_by_bitsets(clauses, k), True
    if k <= ENUMERATION_MAX_K:
        # a CDCL budget worth the enumeration's time: ~2 ns per (assignment, clause) against ~30 us
        # per CDCL model
        budget = max(16, (len(clauses) << k) // 15_000)
        count, exact = _count_by_cdcl(clauses, k, budget)
        return (count, True) if exact else (_count_by_enumeration(clauses, k), True)
    return _count_by_cdcl(clauses, k, limit)


#: up to this k a count is read off 2^k-bit integers (:func:`_count_by_bitsets`)
BITSET_MAX_K = 12


@lru_cache(maxsize=None)
def _assignment_sets(k: int) -> tuple[int, list[int]]:
    """All 2^k assignments as one ``2^k``-bit int, and per variable ``v`` (1-based) the set of
    assignments (bit ``a`` for assignment ``a``) in which ``v`` is true."""
    sets = [0]
    for v in range(k):
        block = ((1 << (1 << v)) - 1) << (1 << v)  # 2^v assignments false, then 2^v true
        sets.append(sum(block << start for start in range(0, 1 << k, 1 << (v + 1))))
    return (1 << (1 << k)) - 1, sets


def _count_by_bitsets(clauses: list[list[int]], k: int) -> int:
    """The enumeration of :func:`_count_by_enumeration` on sets of assignments held as ints: a
    clause is false on the assignments where each of its literals is, and the models are those
    no clause is false on (a few hundred big-int operations for SATURN's levels)."""
    every, true_on = _assignment_sets(k)
    false_somewhere = 0
    for clause in clauses:
        false = every
        for x in clause:
            false &= (every ^ true_on[x]) if x > 0 else true_on[-x]
        false_somewhere |= false
    return (1 << k) - false_somewhere.bit_count()


def _count_by_enumeration(clauses: list[list[int]], k: int) -> int:
    """Count over all 2^k assignments: a clause is false exactly when ``a & vars == negated vars``."""
    mask, neg = clause_masks(clauses)
    count = 0
    chunk = max(1, (1 << 22) // max(1, len(clauses)))
    for start in range(0, 1 << k, chunk):
        a = np.arange(start, min(start + chunk, 1 << k), dtype=np.int64)
        count += int(((a[:, None] & mask[None, :]) != neg[None, :]).all(axis=1).sum())
    return count


def _count_by_cdcl(clauses: list[list[int]], k: int, limit: int) -> tuple[int, bool]:
    """Enumerate models with CaDiCaL and blocking clauses; stop once ``limit`` are counted."""
    from pysat.solvers import Solver  # lazy: pysat (~35 ms to import) loads only when a count needs CDCL

    used = sorted({abs(x) for c in clauses for x in c})
    factor = 1 << (k - len(used))  # a variable in no clause doubles the count
    count = 0
    with Solver(name="cadical195", bootstrap_with=clauses) as s:
        while s.solve():
            count += 1
            if count * factor >= limit:
                return count * factor, False
            model = s.get_model()
            s.add_clause([-model[v - 1] for v in used])
    return count * factor, True


# ---------------------------------------------------------------------------------- labelling
def solve_cnf(clauses: list[list[int]], num_vars: int, *, name: str = LABEL_SOLVER, proof: bool = True):
    """Label a CNF with a CDCL solver: ``(satisfiable, model or None, DRUP proof or None)``."""
    from pysat.solvers import Solver  # lazy: pysat (~35 ms to import) loads only when a formula is labelled

    with Solver(name=name, bootstrap_with=clauses, with_proof=proof) as s:
        sat = s.solve()
        if sat:
            got = {abs(x): x for x in s.get_model()}
            model = [got.get(v, -v) for v in range(1, num_vars + 1)]
            return True, model, None
        return False, None, (list(s.get_proof()) if proof else None)


# ---------------------------------------------------------------------------------- certificates
def check_drup(clauses: list[list[int]], proof: list[str]) -> tuple[bool, str]:
    """Check a DRUP refutation: every added lemma must follow by reverse unit propagation.

    Deletions are ignored (keeping clauses can only make RUP checks succeed more often, and
    every kept clause is implied by the formula, so this stays sound). The formula is refuted
    when the empty clause is derived. Linear scans: meant for the small formulas of this family.
    """
    db = [list(c) for c in clauses]
    for line in proof:
        toks = line.split()
        if not toks:
            continue
        if toks[0] == "d":
            continue
        try:
            lits = [int(t) for t in toks]
        except ValueError:
            return False, f"malformed proof line {line!r}"
        if lits[-1] != 0:
            return False, f"proof line {line!r} does not end with 0"
        lemma = lits[:-1]
        if not _rup(db, lemma):
            return False, f"lemma {lemma} does not follow by unit propagation"
        if not lemma:
            return True, "empty clause derived"
        db.append(lemma)
    if _rup(db, []):
        return True, "unit propagation refutes the formula"
    return False, "the proof does not derive the empty clause"


def _rup(db: list[list[int]], lemma: list[int]) -> bool:
    """True when assigning every literal of ``lemma`` false propagates to a conflict."""
    value: dict[int, bool] = {}
    for lit in lemma:
        v, want = abs(lit), lit < 0  # the literal is false
        if value.get(v, want) != want:
            return True  # the lemma is a tautology
        value[v] = want
    changed = True
    while changed:
        changed = False
        for clause in db:
            unassigned = None
            n_unassigned = 0
            satisfied = False
            for lit in clause:
                val = value.get(abs(lit))
                if val is None:
                    n_unassigned += 1
                    unassigned = lit
                elif val == (lit > 0):
                    satisfied = True
                    break
            if satisfied:
                continue
            if n_unassigned == 0:
                return True
            if n_unassigned == 1:
                value[abs(unassigned)] = unassigned > 0
                changed = True
    return False
