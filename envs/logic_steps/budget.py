"""The verification budget: wall-clock seconds for the solver work of one env action.

All solver work of one env action shares one :class:`VerifyBudget` — in trace mode the whole
``env.step`` (premise checks, steps, the Def. 6 check), in step mode each ``env.step``. The step
verifier (:class:`~.verifier.StepVerifier`) gives each check the timeout min(``timeout_ms``, what
is left of the budget) and starts no check once it is spent, so the solver time of an action is
at most the budget (Z3 stops a check within a few milliseconds of its timeout): an ``env.step``
takes at most budget + one check timeout, parsing included. Steps not judged in time are labelled
``"unverified"`` with the reason (they are in Z but not in P^nc); the Def. 6 check then counts as
undecided (r_consistency 0), and premise checks that run out leave s_sat 0.

Why a budget per action rather than per check: a policy chooses how many steps it writes and how
hard each one is, so per-check timeouts alone bound nothing — a trace of a few hundred random
disjunctions over a large Zebra grid keeps Z3 busy for minutes in one ``env.step``. The default
(:data:`~.trace.DEFAULT_VERIFY_BUDGET_S`) is far above what an honest trace needs, so honest
traces are always judged in full and their reward stays deterministic.
"""
from __future__ import annotations

import math
import time
from typing import Any

__all__ = ["VerifyBudget"]


class VerifyBudget:
    """Wall-clock seconds for the solver work of one env action (see the module docstring).

    :meth:`start` opens a new period (each ``env.step``); ``budget_s=None`` is unlimited. The
    clock runs from the start, so whatever happens between checks counts too; ``used_s`` is the
    time from the start to the end of the last solver call (0 when the action made none, so an
    action that fails before any check reports the same every time).
    """

    def __init__(self, budget_s: float | None):
        if budget_s is not None and not budget_s > 0:
            raise ValueError(f"the verification budget must be > 0 seconds or None, got {budget_s!r}")
        self.budget_s = None if budget_s is None else float(budget_s)
        self.start()

    def start(self) -> None:
        """Open a new period: the clock restarts and the budget is whole again."""
        self._t0 = time.monotonic()
        self._deadline = math.inf if self.budget_s is None else self._t0 + self.budget_s
        self._last = self._t0
        self.exhausted = False

    def note(self) -> None:
        """A solver call just ended."""
        self._last = time.monotonic()

    def remaining(self) -> float:
        """Seconds left in this period (``math.inf`` when unlimited; negative once past)."""
        return self._deadline - time.monotonic()

    def spent(self) -> bool:
        """True once the budget has run out (and from then on, until :meth:`start`)."""
        if not self.exhausted and self.remaining() <= 0:
            self.exhausted = True
        return self.exhausted

    def reason(self) -> str:
        """The reason given for a step left unverified by this budget."""
        return f"not verified: the verification budget of {self.budget_s:g} s for this action ran out"

    def as_dict(self) -> dict[str, Any]:
        """``{"budget_s", "used_s", "exhausted"}`` for ``info`` and trace results."""
        return {"budget_s": self.budget_s, "used_s": self._last - self._t0, "exhausted": self.exhausted}
