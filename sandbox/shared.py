"""One pool for the whole process, and the lease its users take on it.

Envs share one pool per process, so making a thousand envs does not start a thousand servers.
:func:`acquire_default_pool` / :func:`release_default_pool` count the references; the servers
stop :data:`IDLE_SHUTDOWN_S` seconds after the last release. A user that runs programs holds a
:class:`PoolLease` (:func:`shared_pool`): the pool it was given, or else the process-wide one,
taken on first use, taken anew when it was shut down under the user, and given back on close;
its runs never raise for want of a sandbox (the result is ``killed``, with the reason), except
where the executor it was given cannot run programs (:class:`~.result.ExecutorUnavailable`: Ray
missing, checked when the lease is made; a cluster that cannot be joined or host a slot, at the
first program), which is the caller's setting and raises.

    with shared_pool() as lease:   # or shared_pool(my_pool): used, never closed
        r = lease.run("print(1)", Limits(timeout_s=5))

Another executor (``shared_pool(executor="ray")``) has its own process-wide pool
(:func:`executor_pool`), started on first use and kept until it is shut down or the interpreter
exits (a Ray pool costs actors on a cluster to start; envs made and closed in a loop reuse it).
"""
from __future__ import annotations

import os
import threading
from typing import Iterable, Sequence

from .config import Limits
from .executor import parse_executor, require_executor
from .pool import SandboxPool
from .result import ExecutorUnavailable, SandboxError, SandboxResult

_default: SandboxPool | None = None
_default_refs = 0
_default_lock = threading.Lock()
_default_timer: threading.Timer | None = None
#: seconds the shared pool outlives its last user (so a script that closes one env and makes the
#: next does not pay a server start each time); interpreter exit closes it in any case
IDLE_SHUTDOWN_S = float(os.environ.get("SOLVERGYM_SANDBOX_IDLE_S", "10"))


def default_pool() -> SandboxPool:
    """The process-wide pool (created on first use; sized by ``SOLVERGYM_SANDBOX_SERVERS`` or
    the number of cores). A program whose server dies under it runs once more on a fresh server
    (``retries=1``): the envs and adapters that share this pool never lose a reward to a dying
    server (``SOLVERGYM_SANDBOX_RETRIES`` sets another count)."""
    global _default
    with _default_lock:
        if _default is None or _default.closed:
            size = int(os.environ.get("SOLVERGYM_SANDBOX_SERVERS", "0")) or None
            _default = SandboxPool(size, retries=_env_retries(1))
        return _default


_executor_pools: dict[str, SandboxPool] = {}


def executor_pool(executor: str | None) -> SandboxPool:
    """The process-wide pool of ``executor`` (``"local"``: :func:`default_pool`; ``"ray"`` or a Ray
    address: a Ray pool sized by ``SOLVERGYM_SANDBOX_SERVERS`` or the cluster's CPUs), made on
    first use and again after it was closed."""
    kind, address = parse_executor(executor)
    if kind == "local":
        return default_pool()
    key = address or kind
    with _default_lock:
        pool = _executor_pools.get(key)
        if pool is None or pool.closed:
            size = int(os.environ.get("SOLVERGYM_SANDBOX_SERVERS", "0")) or None
            pool = _executor_pools[key] = SandboxPool(size, executor=executor, retries=_env_retries(2))
        return pool


def _env_retries(default: int) -> int:
    value = os.environ.get("SOLVERGYM_SANDBOX_RETRIES", "")
    return int(value) if value.strip() else default


def acquire_default_pool() -> SandboxPool:
    """Take a reference on the shared pool (envs call this; :func:`release_default_pool` gives
    it back, and the servers stop ``IDLE_SHUTDOWN_S`` seconds after the last release)."""
    global _default_refs, _default_timer
    pool = default_pool()
    with _default_lock:
        _default_refs += 1
        if _default_timer is not None:
            _default_timer.cancel()
            _default_timer = None
    return pool


def release_default_pool() -> None:
    """Give back a reference taken with :func:`acquire_default_pool` (after the last one, the
    servers stop ``IDLE_SHUTDOWN_S`` seconds later, or at once when it is 0 or less)."""
    global _default_refs, _default_timer
    with _default_lock:
        _default_refs = max(0, _default_refs - 1)
        if _default_refs or _default is None:
            return
        if IDLE_SHUTDOWN_S <= 0:
            _close_default_locked()
            return
        if _default_timer is not None:
            _default_timer.cancel()
        _default_timer = threading.Timer(IDLE_SHUTDOWN_S, _idle_shutdown)
        _default_timer.daemon = True
        _default_timer.start()


def _idle_shutdown() -> None:
    with _default_lock:
        if _default_refs == 0:
            _close_default_locked()


def _close_default_locked() -> None:
    global _default, _default_timer
    if _default_timer is not None:
        _default_timer.cancel()
        _default_timer = None
    if _default is not None:
        _default.close()
        _default = None


def shutdown_default_pool() -> None:
    """Stop the shared pools now, the local one and every executor's (their users get fresh ones
    on their next call)."""
    global _default_refs
    with _default_lock:
        _default_refs = 0
        _close_default_locked()
        pools = list(_executor_pools.values())
        _executor_pools.clear()
    for pool in pools:
        pool.close()


class PoolLease:
    """A user's hold on a pool: ``pool`` (the caller's own, used and never closed) or, without
    one, the process-wide pool, taken on the first run (:func:`acquire_default_pool`) and again
    if it was shut down meanwhile (:func:`shutdown_default_pool`), and given back by
    :meth:`close` (a later run takes it again). ``executor`` (``"ray"`` or a Ray address, without a
    ``pool``): that executor's process-wide pool (:func:`executor_pool`) instead; Ray is imported
    here, so a lease on it without Ray raises :class:`~.result.ExecutorUnavailable` at once
    (every env makes its lease in ``gym.make``). Thread-safe; a context manager."""

    def __init__(self, pool: SandboxPool | None = None, executor: str | None = None):
        if pool is not None and executor is not None:
            raise ValueError("give a lease either a pool or an executor, not both")
        self._executor = executor
        self._remote = require_executor(executor)[0] != "local"
        self._given = pool
        self._taken: SandboxPool | None = None
        self._lock = threading.Lock()

    @property
    def pool(self) -> SandboxPool:
        """The pool runs go to now (taking the process-wide one if this lease holds none)."""
        if self._given is not None:
            return self._given
        if self._remote:
            return executor_pool(self._executor)
        with self._lock:
            if self._taken is None or self._taken.closed:
                if self._taken is not None:  # shut down under us: the reference goes with it
                    release_default_pool()
                self._taken = acquire_default_pool()
            return self._taken

    def run(self, code: str, limits: Limits | None = None, rehearse: Sequence[str] = ()) -> SandboxResult:
        """:meth:`SandboxPool.run` on :attr:`pool`; a sandbox that cannot start gives a ``killed``
        result saying so instead of :class:`SandboxError`, but an executor that cannot run
        programs raises :class:`~.result.ExecutorUnavailable`."""
        try:
            return self.pool.run(code, limits, rehearse)
        except ExecutorUnavailable:
            raise  # the caller's setting: paying programs as killed would hide it in the rewards
        except SandboxError as e:
            return _unavailable(e)

    def run_many(self, codes: Sequence[str] | Iterable[str], limits: Limits | None = None,
                 rehearse: Sequence[str] = ()) -> list[SandboxResult]:
        """:meth:`SandboxPool.run_many` on :attr:`pool` (results in input order); a sandbox that
        cannot start gives every program a ``killed`` result instead of :class:`SandboxError`, but
        an executor that cannot run programs raises :class:`~.result.ExecutorUnavailable`."""
        codes = list(codes)
        try:
            return self.pool.run_many(codes, limits, rehearse)
        except ExecutorUnavailable:
            raise
        except SandboxError as e:
            return [_unavailable(e) for _ in codes]

    def close(self) -> None:
        """Give the process-wide pool back if this lease took it (the caller's own pool stays
        open)."""
        with self._lock:
            taken, self._taken = self._taken, None
        if taken is not None:
            release_default_pool()

    def __reduce__(self):
        # a copy (or an unpickled lease) is a new holder: it shares the given pool, not the
        # reference this one took (a lock and a taken pool do not travel)
        return PoolLease, (self._given, self._executor)

    def __enter__(self) -> "PoolLease":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def shared_pool(pool: SandboxPool | None = None, executor: str | None = None) -> PoolLease:
    """A lease on ``pool`` or, without one, on the process-wide pool of ``executor`` (default:
    the local one; :class:`PoolLease`)."""
    return PoolLease(pool, executor)


def _unavailable(e: SandboxError) -> SandboxResult:
    return SandboxResult.failure("killed", f"the sandbox is unavailable: {e}")
