"""SAT instance generators: SATURN's planted (n,k,l)-SAT and SAT-Bench-style SAT/UNSAT decision.

Pure and seeded: every function takes a ``numpy.random.Generator`` (or an int seed) and reads no
other randomness, so the same seed gives the same instances byte for byte on any machine.

Literals are DIMACS integers: variable ``i`` (0-based) is ``i + 1``, its negation ``-(i + 1)``.

SATURN (``saturn.txt``):

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

import math
from dataclasses import dataclass

import numpy as np

from ..base import Instance

__all__ = [
    "POOL_CAP",
    "ENUMERATION_MAX_K",
    "SATInstance",
    "difficulty",
    "clauses_per_solution",
    "var_name",
    "var_index",
    "format_clauses",
    "parse_clauses",
    "plant",
    "sat_construction",
    "count_models",
    "as_rng",
    "formula_key",
    "DecisionInstance",
    "decision_instance",
    "solve_cnf",
]

#: App. B: "an upper bound set to 100,000" single-clause samples in the pool.
POOL_CAP = 100_000
#: Model counts are exact up to this k (enumeration of 2^k assignments or CDCL); above, CDCL with a limit.
ENUMERATION_MAX_K = 20
#: Above ENUMERATION_MAX_K, CDCL model enumeration stops after this many models (count is then a bound).
DEFAULT_MODEL_LIMIT = 100_000


def as_rng(seed: np.random.Generator | int | None) -> np.random.Generator:
    return seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)


def difficulty(n: int, k: int, l: int) -> float:
    """SATURN eq. 2: ``D(n,k,l) = log2(k) + 2 log2(l) - n + k/n``."""
    return math.log2(k) + 2 * math.log2(l) - n + k / n


def clauses_per_solution(n: int, k: int) -> int:
    """How many distinct n-literal clauses one assignment of k variables satisfies (App. B step 3)."""
    return math.comb(k, n) * (2**n - 1)


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
    k = max((abs(x) for c in clauses for x in c), default=0)
    pos = [""] + [var_name(i) for i in range(k)]
    neg = [""] + ["!" + name for name in pos[1:]]
    return " & ".join("".join([pos[x] if x > 0 else neg[-x] for x in c]) for c in clauses)


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
        return None if self.model_count is None else self.model_count / 2.0**self.k

    @property
    def clause_string(self) -> str:
        return format_clauses(self.clauses)

    def validate(self) -> None:
        if not (isinstance(self.k, int) and self.k >= 1):
            raise ValueError(f"k must be a positive int, got {self.k!r}")
        if not isinstance(self.clauses, list) or not self.clauses:
            raise ValueError("an instance needs at least one clause")
        for c in self.clauses:
            if not isinstance(c, list) or not c or any(
                not isinstance(x, int) or x == 0 or abs(x) > self.k for x in c
            ):
                raise ValueError(f"bad clause {c!r} for k={self.k}")
        if not isinstance(self.solution, str) or len(self.solution) != self.k or set(
            self.solution
        ) - {"0", "1"}:
            raise ValueError(f"solution must be a bit string of length k={self.k}")
        from .verify import first_violated  # local: verify imports this module

        bad = first_violated(self.clauses, self.solution)
        if bad is not None:
            raise ValueError(
                f"the planted solution {self.solution} violates clause {bad} "
                f"({format_clauses([self.clauses[bad]])})"
            )


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
    rows = np.empty((0, n + 1), dtype=np.int64)
    while True:
        vars_ = np.sort(_random_subsets(rng, batch, n, k), axis=1)
        pattern = rng.integers(1, 2**n, size=batch)
        rows = np.concatenate([rows, np.column_stack([vars_, pattern])])
        if k + n <= 62:  # one int64 key per clause: variable bit mask and pattern
            keys = ((np.int64(1) << rows[:, :n]).sum(axis=1) << n) | rows[:, n]
            _, first = np.unique(keys, return_index=True)
        else:
            _, first = np.unique(rows, axis=0, return_index=True)
        if len(first) >= l:
            break
    keep = rows[np.sort(first)[:l]]
    vars_, pattern = keep[:, :n], keep[:, n]
    agree = (pattern[:, None] >> np.arange(n)) & 1
    positive = solution[vars_] == agree
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
    sol = "".join("1" if b else "0" for b in solution_bits)
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


def formula_key(clauses: list[list[int]]) -> tuple:
    """A hashable key for a formula, independent of clause and literal order."""
    return tuple(sorted(tuple(sorted(c)) for c in clauses))


def _capped_pool(rng: np.random.Generator, n: int, k: int, cap: int):
    """The first ``cap`` distinct (solution, clause) pairs of a uniform stream, grouped by solution.

    Returns ``[(solution_bits, rows)]`` where ``rows[:, :n]`` are sorted variables and
    ``rows[:, n]`` the agreement pattern.
    """
    if 2 * k + n > 62:
        raise ValueError(f"SAT_Construction's pool supports 2k+n <= 62, got k={k}, n={n}")
    batch = max(cap // 2, 1024)
    keys = np.empty(0, dtype=np.int64)  # distinct pairs so far, in the order first drawn
    while True:
        sol = rng.integers(0, 2**k, size=batch, dtype=np.int64)
        vars_ = _random_subsets(rng, batch, n, k)
        varmask = (np.int64(1) << vars_.astype(np.int64)).sum(axis=1)
        pattern = rng.integers(1, 2**n, size=batch, dtype=np.int64)
        keys = np.concatenate([keys, (sol << (k + n)) | (varmask << n) | pattern])
        _, first = np.unique(keys, return_index=True)
        # the paper's `while len(P) < 100000: P.add(...)` keeps the first `cap` distinct draws
        keys = keys[np.sort(first)[:cap]]
        if len(keys) >= cap:
            break
    keys.sort()  # groups by solution (the high bits)
    sols = keys >> (k + n)
    varmasks = (keys >> n) & ((1 << k) - 1)
    patterns = keys & ((1 << n) - 1)
    bits = (varmasks[:, None] >> np.arange(k)) & 1
    var_rows = np.argsort(-bits, axis=1, kind="stable")[:, :n]
    var_rows.sort(axis=1)
    rows = np.column_stack([var_rows, patterns])
    starts = np.flatnonzero(np.r_[True, sols[1:] != sols[:-1]])
    ends = np.r_[starts[1:], len(sols)]
    clusters = []
    for s, e in zip(starts, ends):
        solution = (int(sols[s]) >> np.arange(k)) & 1
        clusters.append((solution, rows[s:e]))
    return clusters


def _random_subsets(rng: np.random.Generator, rows: int, n: int, k: int) -> np.ndarray:
    """``rows`` uniformly random n-subsets of ``range(k)`` (unsorted), one per row."""
    return np.argpartition(rng.random((rows, k)), n - 1, axis=1)[:, :n]


def _rows_to_lits(rows: np.ndarray, solution: np.ndarray, n: int) -> list[list[int]]:
    vars_, pattern = rows[:, :n], rows[:, n]
    agree = (pattern[:, None] >> np.arange(n)) & 1
    positive = solution[vars_] == agree
    return np.where(positive, vars_ + 1, -(vars_ + 1)).tolist()


# ---------------------------------------------------------------------------------- counting
def clause_masks(clauses: list[list[int]]) -> tuple[np.ndarray, np.ndarray]:
    """Per clause, the bit mask of its variables and of its negated variables (k <= 63)."""
    mask = np.array([sum(1 << (abs(x) - 1) for x in c) for c in clauses], dtype=np.int64)
    neg = np.array([sum(1 << (-x - 1) for x in c if x < 0) for c in clauses], dtype=np.int64)
    return mask, neg


def count_models(
    clauses: list[list[int]], k: int, *, limit: int = DEFAULT_MODEL_LIMIT
) -> tuple[int, bool]:
    """Number of assignments of ``k`` variables satisfying ``clauses``: ``(count, exact)``.

    Exact up to ``k = 20``: by enumerating all ``2^k`` assignments (vectorised), unless CDCL
    model enumeration is cheaper, which it is when the formula has few models; it is tried first
    with a budget of models worth about as much time as the enumeration would take. Above
    ``k = 20`` only CDCL enumeration runs, and stops at ``limit`` models (``exact`` is then False
    and the count a lower bound).
    """
    if k <= 12:
        return _count_by_enumeration(clauses, k), True
    if k <= ENUMERATION_MAX_K:
        # ~2 ns per (assignment, clause) for enumeration vs ~30 us per model for CDCL, measured here
        budget = max(16, (len(clauses) << k) // 15_000)
        count, exact = _count_by_cdcl(clauses, k, budget)
        return (count, True) if exact else (_count_by_enumeration(clauses, k), True)
    return _count_by_cdcl(clauses, k, limit)


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
    from pysat.solvers import Solver

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


# ---------------------------------------------------------------------------------- SAT-Bench
#: The CDCL solver that labels decision instances and writes the DRUP proof of an UNSAT label.
LABEL_SOLVER = "cadical195"


@dataclass
class DecisionInstance(Instance):
    """A SAT-Bench-style decision instance (``sat-rl.txt`` §3.2): "Can all conditions be satisfied?"

    ``clauses`` range over the variables ``variables[i]`` = ``x(i,j,...)`` (DIMACS ``i + 1``);
    ``mapping`` states what each variable means. The label is certified: ``model`` satisfies
    every clause when ``satisfiable``; otherwise ``proof`` is the labelling solver's DRUP
    refutation, which :func:`~solvergym.envs.sat.verify.check_drup` re-checks.
    """

    dims: list[int]
    clauses: list[list[int]]
    satisfiable: bool
    scenario: str
    conditions: list[str]
    question: str
    mapping: dict[str, str]
    model: list[int] | None = None
    proof: list[str] | None = None
    labelled_by: str = LABEL_SOLVER

    @property
    def num_vars(self) -> int:
        return math.prod(self.dims)

    @property
    def variables(self) -> list[str]:
        from .render import variable_names

        return variable_names(self.dims)

    def validate(self) -> None:
        from .verify import check_drup

        if not self.dims or any(not isinstance(d, int) or d < 1 for d in self.dims):
            raise ValueError(f"bad dims {self.dims!r}")
        nv = self.num_vars
        for c in self.clauses:
            if not c or any(not isinstance(x, int) or x == 0 or abs(x) > nv for x in c):
                raise ValueError(f"bad clause {c!r} for {nv} variables")
        if len(self.conditions) != len(self.clauses):
            raise ValueError("one condition sentence per clause is required")
        if self.satisfiable:
            if self.model is None or len(self.model) != nv:
                raise ValueError("a satisfiable instance needs a model over every variable")
            true = {x for x in self.model if x > 0}
            for i, c in enumerate(self.clauses):
                if not any((x > 0) == (abs(x) in true) for x in c):
                    raise ValueError(f"the model falsifies clause {i}")
        else:
            if not self.proof:
                raise ValueError("an unsatisfiable instance needs its DRUP proof")
            ok, why = check_drup(self.clauses, self.proof)
            if not ok:
                raise ValueError(f"the UNSAT proof does not check: {why}")


def solve_cnf(clauses: list[list[int]], num_vars: int, *, name: str = LABEL_SOLVER, proof: bool = True):
    """Label a CNF with a CDCL solver: ``(satisfiable, model or None, DRUP proof or None)``."""
    from pysat.solvers import Solver

    with Solver(name=name, bootstrap_with=clauses, with_proof=proof) as s:
        sat = s.solve()
        if sat:
            got = {abs(x): x for x in s.get_model()}
            model = [got.get(v, -v) for v in range(1, num_vars + 1)]
            return True, model, None
        return False, None, (list(s.get_proof()) if proof else None)


def _core(rng: np.random.Generator, num_vars: int, budget: int) -> list[list[int]]:
    """A small unsatisfiable core that fits in ``budget`` clauses over ``num_vars`` variables.

    Two families, as SAT-Bench's structured cores: the full sign cube over w variables (all 2^w
    clauses) and an implication cycle ``a1 -> a2 -> ... -> ar -> not a1`` with ``a1`` forced true
    by ``(a1 or b) and (a1 or not b)``.
    """
    options = []
    for w in (2, 3):
        if 2**w <= budget and w <= num_vars:
            options.append(("cube", w))
    for r in (2, 3, 4):
        if r + 2 <= budget and r + 1 <= num_vars:
            options.append(("cycle", r))
    if not options:
        raise ValueError(
            f"an UNSAT core needs at least 4 clauses over 2 variables (got {budget} clauses, "
            f"{num_vars} variables)"
        )
    kind, size = options[rng.integers(len(options))]
    if kind == "cube":
        vs = (rng.choice(num_vars, size, replace=False) + 1).tolist()
        return [[v if (mask >> j) & 1 else -v for j, v in enumerate(vs)] for mask in range(2**size)]
    vs = (rng.choice(num_vars, size + 1, replace=False) + 1).tolist()
    a, b = vs[:size], vs[size]
    core = [[-a[i], a[i + 1]] for i in range(size - 1)]
    core += [[-a[-1], -a[0]], [a[0], b], [a[0], -b]]
    return core


def decision_instance(
    dims: list[int],
    num_clauses: int,
    rng: np.random.Generator | int | None = None,
    *,
    satisfiable: bool | None = None,
    widths: tuple[int, ...] = (2, 3),
    max_tries: int = 200,
) -> DecisionInstance:
    """One SAT-Bench-style instance over ``x(i,j,...)`` with ``dims`` and ``num_clauses`` conditions.

    A structured core (see :func:`_core`) is planted, whole when the target label is UNSAT and
    with one clause removed when it is SAT (so the core's presence does not give the label away),
    then random filler clauses of the given ``widths`` complete the formula, shuffled. The CDCL
    solver decides the label; draws whose label differs from ``satisfiable`` are rejected
    (``satisfiable=None`` keeps whatever comes). The label is certified (model or DRUP proof).
    """
    from .render import render

    rng = as_rng(rng)
    dims = [int(d) for d in dims]
    nv = math.prod(dims)
    if num_clauses < 1:
        raise ValueError("num_clauses must be >= 1")
    widths = tuple(w for w in widths if 1 <= w <= nv) or (min(nv, 2),)
    for _ in range(max_tries):
        target = satisfiable if satisfiable is not None else bool(rng.integers(2))
        core = _core(rng, nv, num_clauses)
        if target:
            del core[rng.integers(len(core))]
        seen = {tuple(sorted(c)) for c in core}
        clauses = list(core)
        guard = 0
        while len(clauses) < num_clauses and guard < 100 * num_clauses:
            guard += 1
            w = int(widths[rng.integers(len(widths))])
            vs = rng.choice(nv, w, replace=False) + 1
            clause = [int(v) if rng.integers(2) else -int(v) for v in vs]
            key = tuple(sorted(clause))
            if key not in seen:
                seen.add(key)
                clauses.append(clause)
        if len(clauses) < num_clauses:
            raise ValueError(f"cannot place {num_clauses} distinct clauses over {nv} variables")
        clauses = [clauses[i] for i in rng.permutation(len(clauses))]
        sat, model, proof = solve_cnf(clauses, nv)
        if satisfiable is not None and sat != satisfiable:
            continue
        scenario, conditions, question, mapping = render(dims, clauses, rng)
        return DecisionInstance(
            dims=dims, clauses=clauses, satisfiable=sat, scenario=scenario, conditions=conditions,
            question=question, mapping=mapping, model=model, proof=proof,
        )
    raise ValueError(
        f"no {'SAT' if satisfiable else 'UNSAT'} instance with dims={dims} and "
        f"{num_clauses} clauses in {max_tries} tries"
    )
