"""One lock for the host process's own solver work, let go while a sandboxed program runs.

A rollout steps many envs at once (``algorithms/rollout.py``, ``env_threads``) so that the GPU or
the CPU does not wait on each sandboxed program in turn. But what an env step does in the host
process is not thread-safe: Z3's Python API shares one context (``z3.main_ctx()``) and its calls
release the GIL inside libz3, so two threads in it at once would corrupt it. So an env step runs
holding :data:`HOST` (:meth:`HostLock.held`), which makes every in-process check one at a time,
exactly as in a serial loop, and the sandbox pool lets it go while it waits for a server and for
its program (:meth:`HostLock.released`, in :meth:`~.pool.SandboxPool.run`): the waits of many
env steps overlap, their own work does not. A thread that does not hold the lock (a serial loop,
an eval, a user's code) is not affected: ``released`` is then a no-op.
"""
from __future__ import annotations

import threading
from contextlib import contextmanager
from typing import Iterator

__all__ = ["HostLock", "HOST"]


class HostLock:
    """A lock a thread holds around an env step and lets go around a sandbox wait."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._mine = threading.local()

    def holding(self) -> bool:
        """Whether the calling thread holds the lock."""
        return bool(getattr(self._mine, "held", False))

    @contextmanager
    def held(self) -> Iterator[None]:
        """Hold the lock for the block (re-entering from the thread that holds it is a no-op)."""
        if self.holding():
            yield
            return
        self._lock.acquire()
        self._mine.held = True
        try:
            yield
        finally:
            self._mine.held = False
            self._lock.release()

    @contextmanager
    def released(self) -> Iterator[None]:
        """Let the lock go for the block if this thread holds it, and take it back after."""
        if not self.holding():
            yield
            return
        self._mine.held = False
        self._lock.release()
        try:
            yield
        finally:
            self._lock.acquire()
            self._mine.held = True


#: the process's one host lock
HOST = HostLock()
