"""Instance-enhanced self-consistency (SIRL §3.1, fig. 2, eq. 2-3) and the value-vote baseline
(Table 2).

Given K candidate answers to one question, each run once, SIRL scores a candidate r by how many
candidates agree with it on four features of the model it solved: the objective value O_r, the
direction D_r (max or min), the number of binary variables N_bin and of general integer
variables N_int. With ψ(X_r) the number of candidates whose feature X equals r's (eq. 2),

    S(r) = w1 √ψ(O_r) + w2 √ψ(D_r) + w3 √ψ(N_bin,r) + w4 √ψ(N_int,r)      (eq. 3)

and the best-scoring candidate is kept (all weights 1 in the paper's implementation). Value
voting keeps a candidate of the most common objective value.

A candidate here is what the sandbox captured from its last solve (``SandboxResult.optimum``:
``objective``, ``sense``, ``num_bin``, ``num_int``, ``status``), so the features are the solver's,
not parsed from the candidate's text. Candidates whose program did not solve (``None``, or a
status other than optimal / infeasible) have no features: they never count towards ψ and are
chosen only when no candidate solved. An infeasible verdict is a value of its own
(``"infeasible"``), so K programs that agree a problem is infeasible agree. Objective values are
compared after rounding to ``rel_tol`` (relative, default 1e-6, SIRL §11's accuracy tolerance):
two programs a solver tolerance apart are the same answer. Ties go to the earliest candidate.

Pure: :func:`select` and :func:`value_vote` take the captured features; running the candidates is
the caller's (``agents/consistency.py`` wraps an agent; ``benchmarks/or_modelling.py`` measures).
"""
from __future__ import annotations

import math
from collections import Counter
from typing import Any, Sequence

__all__ = ["features_of", "scores", "select", "value_vote", "FEATURES"]

FEATURES = ("objective", "sense", "num_bin", "num_int")
_SOLVED = ("optimal", "infeasible", "inf_or_unbd")


def _value(objective: Any, status: str | None) -> Any:
    if status in ("infeasible", "inf_or_unbd"):
        return "infeasible"
    if not isinstance(objective, (int, float)) or not math.isfinite(objective):
        return None
    return float(objective)


def features_of(candidate: dict[str, Any] | None, rel_tol: float = 1e-6) -> dict[str, Any] | None:
    """The four features of one captured optimum, or ``None`` when it did not solve."""
    if not isinstance(candidate, dict) or candidate.get("status", "optimal") not in _SOLVED:
        return None
    value = _value(candidate.get("objective"), candidate.get("status"))
    if value is None:
        return None
    return {"objective": value, "sense": candidate.get("sense"), "num_bin": candidate.get("num_bin"),
            "num_int": candidate.get("num_int")}


def _same_value(a: Any, b: Any, rel_tol: float) -> bool:
    if isinstance(a, str) or isinstance(b, str):
        return a == b
    return abs(a - b) <= rel_tol * (1.0 + max(abs(a), abs(b)))


def _psi(feats: list[dict | None], k: int, key: str, rel_tol: float) -> int:
    """ψ of candidate k's feature ``key`` (eq. 2): the candidates that share it (k included)."""
    mine = feats[k][key]
    if key == "objective":
        return sum(1 for f in feats if f is not None and _same_value(f[key], mine, rel_tol))
    return sum(1 for f in feats if f is not None and f[key] == mine)


def scores(candidates: Sequence[dict[str, Any] | None], weights: Sequence[float] = (1, 1, 1, 1),
           rel_tol: float = 1e-6) -> list[float]:
    """S(r) of eq. 3 for every candidate (``-inf`` for one that did not solve)."""
    if len(weights) != len(FEATURES):
        raise ValueError(f"weights are one per feature {FEATURES}, got {len(weights)}")
    feats = [features_of(c, rel_tol) for c in candidates]
    out = []
    for k, f in enumerate(feats):
        if f is None:
            out.append(-math.inf)
            continue
        out.append(sum(w * math.sqrt(_psi(feats, k, key, rel_tol)) for w, key in zip(weights, FEATURES)))
    return out


def select(candidates: Sequence[dict[str, Any] | None], weights: Sequence[float] = (1, 1, 1, 1),
           rel_tol: float = 1e-6) -> int:
    """The index of the candidate SIRL's instance-enhanced self-consistency keeps (eq. 3); the
    first candidate when none solved. ``ValueError`` for no candidates."""
    if not candidates:
        raise ValueError("no candidates")
    s = scores(candidates, weights, rel_tol)
    best = max(s)
    return s.index(best) if best > -math.inf else 0


def value_vote(candidates: Sequence[dict[str, Any] | None], rel_tol: float = 1e-6) -> int:
    """The index of the first candidate of the most common objective value (Table 2's
    value-based self-consistency); the first candidate when none solved."""
    if not candidates:
        raise ValueError("no candidates")
    feats = [features_of(c, rel_tol) for c in candidates]
    counts = Counter()
    for k, f in enumerate(feats):
        if f is not None:
            counts[k] = sum(1 for g in feats if g is not None and _same_value(g["objective"], f["objective"], rel_tol))
    if not counts:
        return 0
    top = max(counts.values())
    return min(k for k, c in counts.items() if c == top)
