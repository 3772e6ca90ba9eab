"""SATURN's planted (n,k,l)-SAT instances (``saturn.txt``).

Pure and seeded: every function takes a ``numpy.random.Generator`` (or an int seed) and reads no
other randomness, so the same seed gives the same instances byte for byte on any machine.

Literals are DIMACS integers: variable ``i`` (0-based) is ``i + 1``, its negation ``-(i + 1)``
(:mod:`~solvergym.envs.sat.cnf` names, parses, counts and checks them).

- :func:`difficulty` is D(n,k,l) of eq. 2 (derived in App. C, eq. 4-12).
- :func:`sat_construction` is ``SAT_Construction(n, k, l, m)`` of App. B / Algorithm 2: a pool of
  distinct (solution, clause) pairs capped at 100,000, grouped by solution, ``l`` clauses sampled
  per cluster and shuffled, duplicate instances removed.
- :func:`plant` draws one instance from the same distribution without a pool (used by ``reset``):
  a uniform solution and ``l`` distinct clauses drawn uniformly among the ``C(k,n)(2^n-1)``
  clauses it satisfies. Why it is the same distribution: when the pool holds every pair (the
  case whenever ``2^k C(k,n)(2^n-1) <= 100,000``), each cluster holds all the clauses its solution
  satisfies and clusters are picked uniformly, which is exactly this; when the pool is capped, it
  is a uniformly random subset of the pairs, and by symmetry the cluster picked and the ``l``
  clauses picked from it are still uniform. Only the cross-instance de-duplication differs.
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

from ..instance import Instance
from .cnf import (DEFAULT_MODEL_LIMIT, ENUMERATION_MAX_K, as_rng, count_models, first_violated, format_clauses,
                  formula_key)

__all__ = [
    "POOL_CAP",
    "SATInstance",
    "model_count_error",
    "cached_model_count",
    "check_model_count",
    "RECOUNT_MAX_WORK",
    "CHECK_MAX_WORK",
    "difficulty",
    "clauses_per_solution",
    "plant",
    "sat_construction",
]

#: App. B: "an upper bound set to 100,000" single-clause samples in the pool.
POOL_CAP = 100_000


def difficulty(n: int, k: int, l: int) -> float:
    """SATURN eq. 2: ``D(n,k,l) = log2(k) + 2 log2(l) - n + k/n``."""
    return math.log2(k) + 2 * math.log2(l) - n + k / n


def clauses_per_solution(n: int, k: int) -> int:
    """How many distinct n-literal clauses one assignment of k variables satisfies (App. B step 3)."""
    return math.comb(k, n) * (2**n - 1)


# ---------------------------------------------------------------------------------- instances
@dataclass
class SATInstance(Instance):
    """An (n,k,l)-SAT instance of SATURN §2.2 (eq. 1) with its planted solution and statistics.

    ``solution[i]`` is the value of variable ``i`` (``"1"``/``"0"``), the bit-string answer format.
    ``model_count`` is the number of satisfying assignments (exact when ``model_count_exact``,
    else a lower bound: CDCL enumeration stopped at its limit).
    """

    n: int
    k: int
    clauses: list[list[int]]
    solution: str
    model_count: int | None = None
    model_count_exact: bool = True

    @property
    def l(self) -> int:  # noqa: E743 - the paper's name
        return len(self.clauses)

    @property
    def difficulty(self) -> float:
        return difficulty(self.n, self.k, self.l)

    @property
    def chance_success(self) -> float | None:
        """Probability that a uniformly random assignment satisfies the formula (``count / 2^k``)."""
        # int division: exact as before, and no float overflow for k >= 1024
        return None if self.model_count is None else self.model_count / (1 << self.k)

    @property
    def clause_string(self) -> str:
        return format_clauses(self.clauses)

    def validate(self) -> None:
        """Raise ``ValueError`` for an inconsistent instance; the model count is checked by
        :func:`check_model_count` (recounted for ``k <= 20``), since the chance penalty of tool
        mode is computed from it."""
        for name in ("n", "k"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a positive int, got {value!r}")
        if not isinstance(self.clauses, list) or not self.clauses:
            raise ValueError("an instance needs at least one clause")
        for c in self.clauses:
            if not isinstance(c, list) or not c or any(
                isinstance(x, bool) or not isinstance(x, int) or x == 0 or abs(x) > self.k for x in c
            ):
                raise ValueError(f"bad clause {c!r} for k={self.k}")
        if not isinstance(self.solution, str) or len(self.solution) != self.k or set(
            self.solution
        ) - {"0", "1"}:
            raise ValueError(f"solution must be a bit string of length k={self.k}")
        bad = first_violated(self.clauses, self.solution)
        if bad is not None:
            raise ValueError(
                f"the planted solution {self.solution} violates clause {bad} "
                f"({format_clauses([self.clauses[bad]])})"
            )
        check_model_count(self.clauses, self.k, self.model_count, self.model_count_exact)


def model_count_error(count, exact, k: int) -> str | None:
    """Why ``(count, exact)`` cannot be the model count of a satisfiable formula over ``k``
    variables, judged by type and range alone (``None``: it can). ``count`` is an int (not a
    bool) in ``[1, 2^k]`` (0 would be unsatisfiable, and a SATURN instance has its planted
    solution) or ``None`` (not counted); ``exact`` a bool."""
    if not isinstance(exact, bool):
        return f"model_count_exact must be a bool, got {type(exact).__name__} {exact!r:.40}"
    if count is None:
        return None
    if isinstance(count, bool) or not isinstance(count, int):
        return f"model_count must be an int or None, got {type(count).__name__} {count!r:.40}"
    # count <= 2^k without building 2^k (k comes from the record)
    if count < 1 or count.bit_length() > k + 1 or (count.bit_length() == k + 1 and count != 1 << k):
        return f"model_count {count} is not in [1, 2^{k}] (the models of a satisfiable formula of {k} variables)"
    return None


#: the most (clause, assignment) checks an exact recount may take (2^k assignments times the
#: clauses, about a second): SATURN's levels need at most 2^8 x 40; a record that would need more
#: is checked as one above k = 20 is (:func:`check_model_count`)
RECOUNT_MAX_WORK = 1 << 30
#: the most (models enumerated x clauses) a CDCL check of an exact count above k = 20 may take
#: (CDCL costs ~30 us a model at SATURN's sizes: a few seconds at most)
CHECK_MAX_WORK = 64 * DEFAULT_MODEL_LIMIT


@functools.lru_cache(maxsize=4096)
def _counted(key: tuple, k: int, limit: int) -> tuple[int, bool]:
    return count_models([list(c) for c in key], k, limit=limit)


def cached_model_count(clauses: list[list[int]], k: int, limit: int = DEFAULT_MODEL_LIMIT) -> tuple[int, bool]:
    """:func:`~.cnf.count_models`, computed once per formula (clause and literal order aside):
    every reset of a record, and every wrong answer to it, asks for the same count."""
    return _counted(formula_key(clauses), k, limit)


def check_model_count(clauses: list[list[int]], k: int, count, exact) -> None:
    """``ValueError`` unless ``(count, exact)`` is the model count of ``clauses``, as far as it can
    be known: for ``k <= 20`` it is recounted exactly (an exact count must equal it, a lower bound
    must not exceed it); above, an exact count is checked by enumerating models with CDCL up to one
    past it (fewer than :data:`~.cnf.DEFAULT_MODEL_LIMIT` models, beyond which a count above 20
    variables is never exact, and :data:`CHECK_MAX_WORK`), and an exact count that neither check
    can afford (:data:`RECOUNT_MAX_WORK`) is refused. A lower bound is only range-checked there
    (the scorer charges a wrong answer eq. 1's ``-1 - eps`` for a bound, whatever its value).
    ``None`` (not counted) passes: the scorer counts it."""
    error = model_count_error(count, exact, k)
    if error is not None:
        raise ValueError(error)
    if count is None:
        return
    if k <= ENUMERATION_MAX_K and len(clauses) << k <= RECOUNT_MAX_WORK:
        true = cached_model_count(clauses, k)[0]  # exact: k <= 20 enumerates
        if exact and count != true:
            raise ValueError(f"model_count {count} is wrong: the formula has {true} models")
        if not exact and count > true:
            raise ValueError(f"model_count {count} (a lower bound) exceeds the formula's {true} models")
        return
    if not exact:
        return
    # count_models enumerates all 2^k assignments for k <= 20, whatever its limit: only CDCL
    # (k > 20) checks a count by enumerating one model past it
    if k <= ENUMERATION_MAX_K or count >= DEFAULT_MODEL_LIMIT or (count + 1) * len(clauses) > CHECK_MAX_WORK:
        raise ValueError(f"model_count {count} is given as exact, but for k={k} variables and {len(clauses)} "
                         f"clauses it cannot be checked within the bounds (an exact recount: {ENUMERATION_MAX_K} "
                         f"variables and {RECOUNT_MAX_WORK} clause checks; a CDCL check: fewer than "
                         f"{DEFAULT_MODEL_LIMIT} models and {CHECK_MAX_WORK} clause-models); give it with "
                         f"model_count_exact false (a lower bound) or leave it out")
    found, complete = cached_model_count(clauses, k, count + 1)
    if not complete:
        raise ValueError(f"model_count {count} is wrong: the formula has at least {found} models")
    if found != count:
        raise ValueError(f"model_count {count} is wrong: the formula has {found} models")


# ---------------------------------------------------------------------------------- planted
def _sample_clause_sets(
    rng: np.random.Generator, n: int, k: int, l: int, solution: np.ndarray
) -> list[list[int]]:
    """``l`` distinct clauses drawn uniformly (without replacement) among those ``solution`` satisfies.

    A clause is a sorted set of ``n`` variables plus an "agreement" pattern in ``[1, 2^n)``: bit j
    set means literal j is true under the solution (App. B step 3: every pattern except all-false).
    """
    total = clauses_per_solution(n, k)
    if l > total:
        raise ValueError(
            f"(n={n}, k={k}) has only {total} distinct clauses per solution; l={l} is too many"
        )
    batch = 2 * l + 8
    subsets, patterns = [], []
    first: dict = {}  # each distinct clause's first draw, in draw order
    while len(first) < l:
        subsets.append(_random_subsets(rng, batch, n, k))  # unsorted: a clause's key is its set
        patterns.append(rng.integers(1, 2**n, size=batch))
        subset, pattern = subsets[-1], patterns[-1]
        if k + n <= 62:  # one int64 key per clause: variable bit mask and pattern
            keys = (((np.int64(1) << subset).sum(axis=1) << n) | pattern).tolist()
        else:
            keys = [(*sorted(v), p) for v, p in zip(subset.tolist(), pattern.tolist())]
        for i, key in enumerate(keys, (len(subsets) - 1) * batch):
            first.setdefault(key, i)
    pick = list(first.values())[:l]
    subset, pattern = (x[0] if len(x) == 1 else np.concatenate(x) for x in (subsets, patterns))
    vars_, pattern = np.sort(subset[pick], axis=1), pattern[pick]
    positive = solution[vars_] == ((pattern[:, None] >> np.arange(n)) & 1)
    lits = np.where(positive, vars_ + 1, -(vars_ + 1))
    return lits.tolist()


def plant(
    n: int,
    k: int,
    l: int,
    rng: np.random.Generator | int | None = None,
    *,
    max_chance_success: float | None = None,
    max_tries: int = 1000,
    model_limit: int = DEFAULT_MODEL_LIMIT,
) -> SATInstance:
    """One (n,k,l)-SAT instance satisfied by a planted uniform solution (same law as App. B).

    ``max_chance_success`` rejects instances that a uniformly random assignment satisfies with
    a higher probability (SATURN's (6,7,40) level pays a random guess about half the time);
    after ``max_tries`` rejections a ``ValueError`` says the bound is unreachable at this level.
    """
    _check_nkl(n, k, l)
    rng = as_rng(rng)
    for _ in range(max_tries):
        solution = rng.integers(0, 2, size=k)
        clauses = _sample_clause_sets(rng, n, k, l, solution)
        inst = _make_instance(n, k, clauses, solution, model_limit)
        if max_chance_success is None or inst.chance_success <= max_chance_success:
            return inst
    raise ValueError(
        f"no (n={n}, k={k}, l={l}) instance with chance success <= {max_chance_success} "
        f"in {max_tries} tries"
    )


def _make_instance(n, k, clauses, solution_bits, model_limit) -> SATInstance:
    count, exact = count_models(clauses, k, limit=model_limit)
    sol = ((np.asarray(solution_bits) != 0).astype(np.uint8) + ord("0")).tobytes().decode()
    return SATInstance(
        n=n, k=k, clauses=clauses, solution=sol, model_count=count, model_count_exact=exact
    )


def _check_nkl(n: int, k: int, l: int) -> None:
    for name, v in (("n", n), ("k", k), ("l", l)):
        if not isinstance(v, (int, np.integer)) or isinstance(v, bool) or v < 1:
            raise ValueError(f"{name} must be a positive int, got {v!r}")
    if n > k:
        raise ValueError(f"a clause has n={n} distinct variables, more than k={k}")
    if n > 30:
        raise ValueError(f"n={n} is too large (at most 30 literals per clause)")


# ---------------------------------------------------------------------------------- App. B
def sat_construction(
    n: int,
    k: int,
    l: int,
    m: int,
    rng: np.random.Generator | int | None = None,
    *,
    pool_cap: int = POOL_CAP,
    exclude: set | None = None,
    max_chance_success: float | None = None,
    model_limit: int = DEFAULT_MODEL_LIMIT,
) -> list[SATInstance]:
    """SATURN's ``SAT_Construction(n, k, l, m)`` (App. B, Algorithm 2): ``m`` distinct instances.

    Steps 1-3: a pool of distinct (solution, clause) pairs, drawn uniformly, until it holds
    ``min(pool_cap, 2^k C(k,n) (2^n-1))`` pairs (when that is every pair, the pool is enumerated
    instead of collected by rejection: the result is the same set). Step 4: grouped by solution.
    Steps 5-6: a cluster drawn uniformly, ``l`` of its clauses drawn without replacement in random
    order, repeated until ``m`` distinct instances exist. Two instances are duplicates when they
    have the same set of clauses (whatever their planted solutions): the formula is the problem.

    ``exclude`` is a set of :func:`formula_key` values that must not be produced (e.g. the
    validation set when drawing a training set). ``ValueError`` when no cluster holds ``l``
    clauses (the pool is too sparse: large ``k``) or ``m`` distinct instances cannot be found.
    """
    _check_nkl(n, k, l)
    rng = as_rng(rng)
    per_solution = clauses_per_solution(n, k)
    total_pairs = per_solution * 2**k
    exclude = set() if exclude is None else exclude
    out: list[SATInstance] = []
    seen: set = set()

    if total_pairs <= pool_cap:
        # Complete pool: every cluster holds all `per_solution` clauses of its solution.
        def draw():
            solution = rng.integers(0, 2, size=k)
            return solution, _sample_clause_sets(rng, n, k, l, solution)
    else:
        clusters = _capped_pool(rng, n, k, pool_cap)
        valid = [c for c in clusters if len(c[1]) >= l]
        if not valid:
            raise ValueError(
                f"SAT_Construction({n},{k},{l}): a pool of {pool_cap} pairs over 2^{k} solutions "
                f"leaves no cluster with {l} clauses; use plant() for this level"
            )

        def draw():
            solution, clause_rows = valid[rng.integers(len(valid))]
            pick = clause_rows[rng.permutation(len(clause_rows))[:l]]
            return solution, _rows_to_lits(pick, solution, n)

    attempts, max_attempts = 0, 20 * m + 100
    while len(out) < m:
        attempts += 1
        if attempts > max_attempts:
            raise ValueError(
                f"SAT_Construction({n},{k},{l}): only {len(out)} of {m} distinct instances "
                f"after {max_attempts} draws"
            )
        solution, clauses = draw()
        key = formula_key(clauses)
        if key in seen or key in exclude:
            continue
        inst = _make_instance(n, k, clauses, solution, model_limit)
        if max_chance_success is not None and inst.chance_success > max_chance_success:
            continue
        seen.add(key)
        out.append(inst)
    return out


def _capped_pool(rng: np.random.Generator, n: int, k: int, cap: int):
    """The first ``cap`` distinct (solution, clause) pairs of a uniform stream, grouped by solution.

    Returns ``[(solution_bits, rows)]`` where ``rows[:, :n]`` are sorted variables and
    ``rows[:, n]`` the agreement pattern.
    """
    if 2 * k + n > 62:
        raise ValueError(f"SAT_Construction's pool supports 2k+n <= 62, got k={k}, n={n}")
    batch = max(cap // 2, 1024)
    distinct = _FirstDraws(2 * k + n)
    while len(distinct) < cap:
        sol = rng.integers(0, 2**k, size=batch, dtype=np.int64)
        vars_ = _random_subsets(rng, batch, n, k)
        varmask = (np.int64(1) << vars_.astype(np.int64)).sum(axis=1)
        pattern = rng.integers(1, 2**n, size=batch, dtype=np.int64)
        distinct.add((sol << (k + n)) | (varmask << n) | pattern)
    # the paper's `while len(P) < 100000: P.add(...)` keeps the first `cap` distinct draws
    keys = distinct.keys()[:cap]
    keys.sort()  # groups by solution (the high bits)
    sols = keys >> (k + n)
    varmasks = (keys >> n) & ((1 << k) - 1)
    patterns = keys & ((1 << n) - 1)
    rows = np.empty((len(keys), n + 1), dtype=np.int64)
    rest = varmasks.copy()
    for j in range(n):  # the mask's set bits, lowest first (a per-row argsort costs 3-4x more)
        low = rest & -rest
        rows[:, j] = np.bitwise_count(low - 1)
        rest ^= low
    rows[:, n] = patterns
    starts = np.flatnonzero(np.r_[True, sols[1:] != sols[:-1]])
    ends = np.r_[starts[1:], len(sols)]
    clusters = []
    for s, e in zip(starts, ends):
        solution = (int(sols[s]) >> np.arange(k)) & 1
        clusters.append((solution, rows[s:e]))
    return clusters


class _FirstDraws:
    """The distinct keys of a stream of batches, each kept at its first draw, in draw order.

    Keys of up to 22 bits are marked in a table (a batch costs a few passes over it, no sort);
    wider ones are found by a stable sort of all the keys so far."""

    TABLE_BITS = 22

    def __init__(self, bits: int):
        self.table = bits <= self.TABLE_BITS
        if self.table:
            self.first = np.full(1 << bits, np.iinfo(np.int32).max, dtype=np.int32)
            self.seen = np.zeros(1 << bits, dtype=bool)
        self.parts: list[np.ndarray] = []
        self.count = 0

    def add(self, keys: np.ndarray) -> None:
        if not self.table:
            keys = np.concatenate([*self.parts, keys])
            _, first = np.unique(keys, return_index=True)
            self.parts, self.count = [keys[np.sort(first)]], len(first)
            return
        order = np.arange(len(keys), dtype=np.int32)
        np.minimum.at(self.first, keys, order)  # each key's first index in this batch
        fresh = (self.first[keys] == order) & ~self.seen[keys]
        self.first[keys] = np.iinfo(np.int32).max
        new = keys[fresh]
        self.seen[new] = True
        self.parts.append(new)
        self.count += len(new)

    def __len__(self) -> int:
        return self.count

    def keys(self) -> np.ndarray:
        return np.concatenate(self.parts) if self.parts else np.empty(0, dtype=np.int64)


def _random_subsets(rng: np.random.Generator, rows: int, n: int, k: int) -> np.ndarray:
    """``rows`` uniformly random n-subsets of ``range(k)`` (unsorted), one per row."""
    return np.argpartition(rng.random((rows, k)), n - 1, axis=1)[:, :n]


def _rows_to_lits(rows: np.ndarray, solution: np.ndarray, n: int) -> list[list[int]]:
    vars_, pattern = rows[:, :n], rows[:, n]
    agree = (pattern[:, None] >> np.arange(n)) & 1
    positive = solution[vars_] == agree
    return np.where(positive, vars_ + 1, -(vars_ + 1)).tolist()
