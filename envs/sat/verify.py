"""Verdicts and rewards for the SAT family. Pure: instance + answer text -> verdict.

- An assignment is correct iff it satisfies every clause: any model counts, not only the planted
  one (SATURN §2.4: "a full satisfying assignment" that "passes a verifier").
- :func:`saturn_reward` is SATURN §2.4: -1 without ``\\boxed{}``, 0 boxed but wrong, 1 correct.
- :func:`correctness_reward` is SAT-RL eq. 1 (§3.4): 1 correct, 0 ``idk``, ``-1/(n-1) - eps``
  incorrect for ``n`` choices (``-1 - eps`` for yes/no).

The formula-level checks these rest on (:func:`~solvergym.envs.sat.cnf.first_violated`, and
:func:`~solvergym.envs.sat.cnf.check_drup`, which certifies an UNSAT label by checking the
solver's DRUP proof by reverse unit propagation, independently of the solver that wrote it) are in
:mod:`~solvergym.envs.sat.cnf`.
"""
from __future__ import annotations

import re
import numpy as np

from ..parsing import DECISION_WORDS, final_answer_block, last_boxed
from ..problem import Verdict
from .cnf import clause_masks, first_violated

__all__ = [
    "SATURN_FORMAT",
    "SATRL_FORMAT",
    "DEFAULT_EPS",
    "parse_bitstring",
    "satisfies_batch",
    "saturn_reward",
    "correctness_reward",
    "WRONG_PENALTIES",
    "wrong_assignment_reward",
    "parse_decision",
    "decision_reward",
]

#: SATURN §2.4 format penalty (no ``\boxed{}``).
SATURN_FORMAT = -1.0
#: SAT-RL §3.4: r_format = 0.1 when the final answer parses.
SATRL_FORMAT = 0.1
#: SAT-RL eq. 1 leaves eps unspecified; any eps > 0 makes guessing worse than ``idk``.
DEFAULT_EPS = 0.1


_SEPARATORS = re.compile(r"[\s,]+")


def parse_bitstring(text: str, k: int) -> tuple[str | None, str]:
    """Read a ``k``-bit answer (``"10110"``; spaces and commas between bits are ignored)."""
    bits = _SEPARATORS.sub("", text)
    if len(bits) != k or set(bits) - {"0", "1"}:
        shown = text if len(text) <= 40 else text[:37] + "..."
        return None, f"the boxed answer {shown!r} is not a string of {k} bits (0/1)"
    return bits, ""


def satisfies_batch(clauses: list[list[int]], assignments: np.ndarray) -> np.ndarray:
    """Vectorised check of many assignments at once (for benchmarks and model counting).

    ``assignments`` is an int64 array of bit masks (bit ``i`` = variable ``i``), k <= 63.
    A clause is false exactly when ``a & vars == negated_vars``.
    """
    mask, neg = clause_masks(clauses)
    a = np.asarray(assignments, dtype=np.int64)
    return ((a[:, None] & mask[None, :]) != neg[None, :]).all(axis=1)


def saturn_reward(text: str, clauses: list[list[int]], k: int) -> Verdict:
    """SATURN §2.4 reward, split into named components that sum to it.

    ``format`` is -1 when no complete ``\\boxed{...}`` exists, else 0; ``correct`` is 1 when the
    last box holds a ``k``-bit assignment satisfying every clause, else 0. The sums are exactly
    the paper's -1 / 0 / 1.
    """
    boxed = last_boxed(text)
    if boxed is None:
        return Verdict({"format": SATURN_FORMAT, "correct": 0.0}, False, False, "no \\boxed{...} answer found")
    bits, why = parse_bitstring(boxed, k)
    if bits is None:
        return Verdict({"format": 0.0, "correct": 0.0}, True, False, why, boxed)
    bad = first_violated(clauses, bits)
    if bad is not None:
        return Verdict(
            {"format": 0.0, "correct": 0.0}, True, False,
            f"assignment {bits} falsifies clause {bad + 1} of {len(clauses)}", bits,
        )
    return Verdict({"format": 0.0, "correct": 1.0}, True, True, "assignment satisfies every clause", bits)


def correctness_reward(outcome: str, *, n_choices: int = 2, eps: float = DEFAULT_EPS) -> float:
    """SAT-RL eq. 1: ``1`` correct, ``0`` idk, ``-1/(n-1) - eps`` incorrect (n answer choices)."""
    if outcome == "correct":
        return 1.0
    if outcome == "idk":
        return 0.0
    if outcome == "incorrect":
        if n_choices < 2:
            raise ValueError("n_choices must be >= 2")
        return -1.0 / (n_choices - 1) - eps
    raise ValueError(f"outcome must be correct/idk/incorrect, got {outcome!r}")


#: the rules for eq. 1's penalty on a wrong k-bit assignment (:func:`wrong_assignment_reward`)
WRONG_PENALTIES = ("chance", "choices", "binary")


def wrong_assignment_reward(rule: str, k: int, chance: float, *, exact: bool = True,
                            eps: float = DEFAULT_EPS) -> float:
    """SAT-RL eq. 1's reward for a wrong answer when the answer is a k-bit assignment.

    SAT-RL §3.4 sets the penalty so that "uniform random guessing [is] strictly suboptimal in
    expectation": ``-1 - eps`` for yes/no, and "-1/(n-1) - eps for multiple-choice problems with n
    choices". An assignment is one of ``n = 2^k`` answers, of which the fraction ``chance`` (the
    instance's ``chance_success``) is right:

    - ``"chance"``: ``-p/(1-p) - eps`` with ``p = chance``. A uniform guess earns exactly
      ``-(1-p) eps`` in expectation, whatever the number of models; with one model this is the
      paper's n-choice rule, and with yes/no (p = 1/2) its ``-1 - eps``. A count that is only a
      lower bound (``exact=False``: k > 20 and CDCL enumeration stopped at its limit) bounds p
      from below, not from above, so the penalty it gives could let a guess pay: such an
      instance is charged ``"binary"``'s ``-1 - eps`` instead.
    - ``"choices"``: ``-1/(2^k - 1) - eps``, the paper's n-choice rule read literally (n = 2^k), as
      if one assignment satisfied: when several do, guessing pays (p > 1/(2^k - 1) + eps).
    - ``"binary"``: ``-1 - eps``, eq. 1 as printed for yes/no. A wrong attempt costs as much as a
      wrong yes/no, so a policy right less than ``(1 + eps) / (2 + eps)`` of the time (52% with
      the default eps) earns more by not answering at all.
    """
    if rule == "binary" or (rule == "chance" and not exact):
        return correctness_reward("incorrect", eps=eps)
    if rule == "choices":
        return correctness_reward("incorrect", n_choices=2**k, eps=eps)
    if rule == "chance":
        if not 0.0 <= chance <= 1.0:
            raise ValueError(f"chance must be a probability, got {chance!r}")
        return -eps if chance >= 1.0 else -chance / (1.0 - chance) - eps  # p = 1: nothing is wrong
    raise ValueError(f"wrong_penalty must be one of {WRONG_PENALTIES}, got {rule!r}")


_YES = {"yes", "sat", "satisfiable", "true"}
_NO = {"no", "unsat", "unsatisfiable", "false"}


def parse_decision(text: str) -> tuple[str | None, str]:
    """The final yes/no/idk of a SAT-RL answer: ``("yes"|"no"|"idk", "")`` or ``(None, reason)``.

    The answer is the last ```` ```answer ...``` ````, ```` ```idk``` ```` or bare ```` ```yes``` ```` /
    ```` ```no``` ```` block (§3.4; SAT-RL's own transcripts end with the bare form, App. E.1).
    Its body, stripped of quotes, backticks, ``\\boxed{}`` and final punctuation, must be yes/no
    (SAT and UNSAT, satisfiable, true/false are read as the same).
    """
    block = final_answer_block(text, bare=DECISION_WORDS)
    if block is None:
        return None, "no ```answer ...```, ```yes```/```no``` or ```idk``` block found"
    kind, body = block
    if kind == "idk":
        return "idk", ""
    word = body.strip().strip("`'\"*").strip()
    inner = last_boxed(word)
    if inner is not None:
        word = inner
    word = word.strip().rstrip(".!").strip().lower()
    if word in _YES:
        return "yes", ""
    if word in _NO:
        return "no", ""
    shown = body if len(body) <= 40 else body[:37] + "..."
    return None, f"the answer block {shown!r} is not yes, no or idk"


def decision_reward(text: str, label_sat: bool, *, eps: float = DEFAULT_EPS) -> Verdict:
    """SAT-RL §3.4 rewards for a yes/no satisfiability question: ``format`` + ``correct``.

    ``format`` is 0.1 when the answer parses (yes, no or idk), else 0; ``correct`` follows eq. 1
    (and is 0 when nothing parsed: "all components are initialized to 0").
    """
    decision, why = parse_decision(text)
    if decision is None:
        return Verdict({"format": 0.0, "correct": 0.0}, False, False, why)
    if decision == "idk":
        return Verdict({"format": SATRL_FORMAT, "correct": 0.0}, True, False, "abstained (idk)", "idk")
    truth = "yes" if label_sat else "no"
    ok = decision == truth
    return Verdict(
        {"format": SATRL_FORMAT, "correct": correctness_reward("correct" if ok else "incorrect", eps=eps)},
        True, ok, f"answered {decision}; the conditions are {'satisfiable' if label_sat else 'unsatisfiable'}",
        decision,
    )
