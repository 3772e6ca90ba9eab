"""Sample-based metrics over ``n`` samples of one instance, and their summaries over instances
and evaluation seeds.

Every estimator here is the unbiased one for drawing ``k`` of the ``n`` samples without
replacement, so a run with ``n = 8`` reports pass@1, pass@3 and pass@5 from the same samples
(SATURN §3.2 and Table 7; Chen et al. 2021, eq. 1, in its product form, which needs no big
binomials):

- ``pass@k`` = 1 - C(n-c, k) / C(n, k): some of ``k`` samples is correct;
- ``pass^k`` = C(c, k) / C(n, k): all ``k`` are (tau-bench's reliability metric);
- ``avg@k``: the mean correctness of the first ``k`` samples (SAT-RL's Avg@8 is ``avg@8`` over
  eight samples; unlike pass@k it needs no ``k``-subset: it is the expected accuracy of one);
- ``maj@k``: the answer most of the first ``k`` samples give (ties go to the one given first) is
  correct; only where answers can be compared (``answer`` is not ``None``).

``n >= k`` is enforced; ``c`` may be 0 or ``n``.
"""
from __future__ import annotations

import json
import math
from collections import Counter
from typing import Any, Hashable, Sequence

__all__ = ["pass_at_k", "pass_hat_k", "avg_at_k", "maj_at_k", "mean_std", "standard_error", "vote_key"]


def _check(n: int, c: int, k: int) -> None:
    if not (isinstance(n, int) and isinstance(c, int) and isinstance(k, int)):
        raise TypeError(f"n, c and k must be integers, got {n!r}, {c!r}, {k!r}")
    if not 0 <= c <= n:
        raise ValueError(f"need 0 <= c <= n, got c={c}, n={n}")
    if not 1 <= k <= n:
        raise ValueError(f"need 1 <= k <= n (k samples drawn from n), got k={k}, n={n}")


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k from ``n`` samples of which ``c`` are correct: ``1 - C(n-c, k) / C(n, k)``,
    as the product ``prod_{i=n-c+1}^{n} (1 - k / i)`` (Chen et al. 2021)."""
    _check(n, c, k)
    if n - c < k:
        return 1.0
    miss = 1.0
    for i in range(n - c + 1, n + 1):
        miss *= 1.0 - k / i
    return 1.0 - miss


def pass_hat_k(n: int, c: int, k: int) -> float:
    """Unbiased pass^k: the chance that ``k`` samples drawn from the ``n`` are all correct,
    ``C(c, k) / C(n, k)``."""
    _check(n, c, k)
    if c < k:
        return 0.0
    p = 1.0
    for i in range(k):
        p *= (c - i) / (n - i)
    return p


def avg_at_k(correct: Sequence[bool], k: int) -> float:
    """Mean correctness of the first ``k`` samples."""
    _check(len(correct), sum(map(bool, correct)), k)
    return sum(map(bool, correct[:k])) / k


def maj_at_k(answers: Sequence[Hashable | None], correct: Sequence[bool], k: int) -> float | None:
    """1.0 when the most frequent answer among the first ``k`` samples (first given wins a tie) is
    a correct one, else 0.0; ``None`` when none of them has an answer to vote with."""
    if len(answers) != len(correct):
        raise ValueError("answers and correct must have one entry per sample")
    _check(len(correct), sum(map(bool, correct)), k)
    votes = Counter(a for a in answers[:k] if a is not None)
    if not votes:
        return None
    top = max(votes.values())
    winner = next(a for a in answers[:k] if a is not None and votes[a] == top)
    return 1.0 if any(ok for a, ok in zip(answers[:k], correct[:k]) if a == winner) else 0.0


def mean_std(values: Sequence[float]) -> tuple[float, float]:
    """Mean and sample standard deviation (0 for one value): SAT-RL Table 4's "mean ± std" over
    seeds."""
    if not values:
        raise ValueError("no values")
    m = sum(values) / len(values)
    if len(values) == 1:
        return m, 0.0
    return m, math.sqrt(sum((v - m) ** 2 for v in values) / (len(values) - 1))


def standard_error(values: Sequence[float]) -> float:
    """Standard error of the mean of ``values`` (sample std / sqrt(len))."""
    return mean_std(values)[1] / math.sqrt(len(values)) if len(values) > 1 else 0.0


def vote_key(answer: Any) -> Hashable | None:
    """What a recorded answer votes as: ``None`` for no answer, else its canonical JSON text (so
    that ``[1, 0]`` from one sample and ``[1, 0]`` from another are one vote)."""
    if answer is None:
        return None
    return json.dumps(answer, sort_keys=True, default=str)
