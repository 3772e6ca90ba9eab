"""Where a training step's time goes: seconds per phase, logged with every step as ``time/<phase>_s``.

The phases of one :meth:`Trainer.train_step <solvergym.algorithms.trainer.Trainer.train_step>`
(verl logs the same split as ``timing_s/*``):

- ``generate``: the rollout outside the envs (prefill, decode, chat rendering); ``env``: the envs'
  ``step`` calls (parsing, verification, reward, solver tools); together they are ``rollout_s``
  (less the collation of the batch);
- ``old_logprobs``: the forward that recomputes pi_old's log-probs (0 when the sampler's are used),
  ``ref``: the reference model's forward (0 when beta is 0);
- ``forward`` / ``backward``: the policy's training forward passes (loss included) and
  ``accelerator.backward``, summed over micro-batches; ``optimizer``: gradient clipping, the
  optimizer's and the scheduler's step.

Times are wall-clock on the host. On a CPU that is where the work runs; on an accelerator kernels
run asynchronously, so a phase's time is the time until the host had queued its work and the next
call that waits (a ``.item()``) is charged the rest: there the split is a hint, the sum exact.
"""
from __future__ import annotations

import contextlib
import time
from typing import Iterator

__all__ = ["PHASES", "PhaseTimes"]

PHASES = ("generate", "env", "old_logprobs", "ref", "forward", "backward", "optimizer")


class PhaseTimes:
    """Seconds per phase of one step; every phase is reported, 0.0 when it did not run (so that a
    metrics table has the same columns on every row)."""

    def __init__(self) -> None:
        self.seconds = dict.fromkeys(PHASES, 0.0)

    def add(self, phase: str, seconds: float) -> None:
        if phase not in self.seconds:
            raise KeyError(f"unknown phase {phase!r}; the phases are {PHASES}")
        self.seconds[phase] += seconds

    @contextlib.contextmanager
    def __call__(self, phase: str) -> Iterator[None]:
        """``with times("forward"): ...`` adds the block's wall time to ``phase``."""
        t = time.perf_counter()
        try:
            yield
        finally:
            self.add(phase, time.perf_counter() - t)

    def stats(self) -> dict[str, float]:
        return {f"time/{phase}_s": s for phase, s in self.seconds.items()}
