"""The pool: fork servers started lazily, one program per idle server, batched and async runs.

``SandboxPool(size)`` starts ``size`` fork servers (default: one per core) lazily and hands every
program to an idle one (last in, first out: a warm server is reused before a cold one starts). A
server that dies (or stops answering) is killed with everything it started and replaced; the
call that was running on it comes back with status ``killed`` (or, with ``retries``, runs again
on the fresh server) and the next call gets a fresh server. Where the servers run is the
executor's business (``executor.py``: this machine, or Ray actors across a cluster). Pools are
closed at interpreter exit.
"""
from __future__ import annotations

import asyncio
import atexit
import queue
import threading
import weakref
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Iterable, Sequence

from .config import Limits, SandboxConfig, pool_config
from .executor import Server, parse_executor, server_factory
from .host_lock import HOST
from .result import LOST, SandboxError, SandboxResult, server_lost

_POOLS: "weakref.WeakSet[SandboxPool]" = weakref.WeakSet()


class SandboxPool:
    """A pool of fork servers; ``run`` / ``run_many`` / ``arun`` / ``arun_many`` execute programs.

    ``size``: servers (default: one per core, or per CPU of the Ray cluster); ``config``: how they
    isolate programs (default: the process's default config; the default config's ``hide`` is
    kept in any case, see ``config.set_default_config``); ``limits``: the limits of a run given
    none; ``executor``: where the servers run (``"local"``, ``"ray"`` or a Ray address;
    ``executor.py``); ``retries``: how many times a program whose server died under it runs again
    on a fresh server before its result is ``killed`` (default 0 locally, where a dying server is
    rare and a test wants to see it; 2 on Ray, where a node can go away).

    Thread-safe: each call takes an idle server (waiting for one when all are busy), so
    ``run_many`` with ``size`` workers keeps every server busy.
    """

    def __init__(self, size: int | None = None, config: SandboxConfig | None = None,
                 limits: Limits | None = None, executor: str | None = None, retries: int | None = None):
        kind, _ = parse_executor(executor)
        if size is not None and (isinstance(size, bool) or int(size) < 1):
            raise ValueError("a pool needs at least one server")
        if retries is None:
            retries = 2 if kind == "ray" else 0
        if isinstance(retries, bool) or not isinstance(retries, int) or retries < 0:
            raise ValueError(f"retries must be an int >= 0, got {retries!r}")
        self.config = pool_config(config)
        self.executor = executor or "local"
        self.retries = retries
        make, suggested = server_factory(executor, self.config)
        self.size = int(size or suggested)
        self.limits = limits or Limits()
        self._servers: list[Server] = [make(i) for i in range(self.size)]
        # last in, first out: a warm server is reused before a cold one is started
        self._idle: queue.LifoQueue[ServerProcess] = queue.LifoQueue()
        for s in reversed(self._servers):
            self._idle.put(s)
        self._lock = threading.Lock()
        self._executor: ThreadPoolExecutor | None = None
        self._closed = False
        #: servers replaced after they died, each death counted once
        self.restarts = 0
        _POOLS.add(self)

    # -- lifecycle --------------------------------------------------------------------------
    def start(self) -> "SandboxPool":
        """Start every server now (in parallel) instead of at first use."""
        with ThreadPoolExecutor(self.size) as ex:
            list(ex.map(self._ensure, self._servers))
        return self

    def _ensure(self, server: Server) -> None:
        if self._closed:
            raise SandboxError("this sandbox pool is closed")
        if not server.alive():
            if server.started:
                self.restarts += 1
                server.kill()
                server.hello = {}
            server.start()

    def close(self) -> None:
        self._closed = True
        for s in self._servers:
            s.close()
        if self._executor is not None:
            self._executor.shutdown(wait=False)
            self._executor = None

    def __enter__(self) -> "SandboxPool":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    @property
    def closed(self) -> bool:
        return self._closed

    # -- information ------------------------------------------------------------------------
    @property
    def isolation(self) -> dict[str, Any]:
        """The isolation levels active in this pool's servers (starting one if needed), the
        reasons the others are not, and what each server cost to start."""
        server = self._servers[0]
        if not server.hello:
            taken = self._idle.get()
            try:
                self._ensure(taken)
            finally:
                self._idle.put(taken)
            server = taken
        h = server.hello
        return {"active": list(h.get("isolation", [])), "inactive": dict(h.get("isolation_notes", {})),
                "import_ms": h.get("import_ms"), "instrumentation": h.get("instrumentation"),
                "server_rss_kb": h.get("rss_kb"), "server_vms_kb": h.get("vms_kb"),
                "server_threads": h.get("threads")}

    def server_pids(self) -> list[int]:
        return [s.pid for s in self._servers if s.alive()]

    # -- running ----------------------------------------------------------------------------
    def run(self, code: str, limits: Limits | None = None, rehearse: Sequence[str] = ()) -> SandboxResult:
        """Run one program and return its typed result (never raises for the program's sake).

        ``rehearse``: solver libraries (:data:`REHEARSABLE`) the server's next waiting child
        solves a tiny model with, through the capture, before its program arrives and only while
        none is waiting: a program's first solve in a fresh child pays for copying the pages of
        the shared image it writes (hundreds of page faults), which the rehearsal pays off the
        latency path (about half the latency of a small gurobipy program). Name the libraries
        the next programs are likely to use (``SolverOR-v0`` names its three, ``SolverTool-v0`` the
        episode's solver where it can be rehearsed); the default rehearses nothing. A program's
        output and record are the same rehearsed or not."""
        if not isinstance(code, str):
            raise TypeError(f"code must be a str, got {type(code).__name__}")
        rehearse = _rehearsal(rehearse)
        limits = limits or self.limits
        with HOST.released():  # other env steps run while this one waits (host_lock.py)
            server = self._idle.get()
            try:
                for _ in range(self.retries + 1):
                    result = self._request(server, code, limits, rehearse)
                    if not server_lost(result):
                        return result
                return result
            finally:
                self._idle.put(server)

    def _request(self, server: Server, code: str, limits: Limits, rehearse: tuple[str, ...]) -> SandboxResult:
        self._ensure(server)
        try:
            return server.request(code, limits, rehearse)
        except Exception as e:  # one program's result is never another's exception
            pid = server.pid
            server.kill()
            return SandboxResult.failure("killed", f"the sandbox failed on this program ({type(e).__name__}); "
                                         f"{LOST}", pid=pid)

    def profile(self, code: str, limits: Limits | None = None, rehearse: Sequence[str] = ()
                ) -> tuple[SandboxResult, dict[str, float]]:
        """Run one program and say where its latency went, in milliseconds (local servers only).

        On the latency path, in order: ``send`` (the request written, read by the server: a
        request that comes while the server still cleans up after the previous program waits
        here for it),
        ``child_wait`` (a pre-forked child taken; more than ~0 only when none was ready),
        ``handoff`` (the child told its ``/tmp`` and rehearsal, the code written to it), ``run``
        (the child reads and compiles the code and runs it, solver imports and solves included,
        until it exited and its output and record were read), ``collect`` (its exit status
        awaited, the record parsed), ``answer`` (the result classified and written) and
        ``receive`` (read here); ``total`` is their sum. Off the path: ``prefork`` (the next
        child's fork asked of the zygote, which forks it while this program runs: its uid,
        working directory and descriptors; namespaces are the server's, made once), and the
        work the server did after the *previous* answer, ``cleanup`` (the program's processes
        swept, its exit reaped unless it was exiting alone, its fresh ``/tmp`` detached) and
        ``after_answer`` (with the wait for the client to take the answer); ``None`` for the
        first program of a server."""
        if self.executor != "local":
            raise ValueError(f"profile() measures local servers; this pool's executor is {self.executor!r}")
        limits = limits or self.limits
        rehearse = _rehearsal(rehearse)
        server = self._idle.get()
        try:
            self._ensure(server)
            result = server.request(code, limits, rehearse, profile=True)
            m = server.last_phases
        finally:
            self._idle.put(server)
        if not m or not {"read", "ready", "sent", "ended", "collected", "answer"} <= set(m):
            return result, {}
        ms = lambda a, b: 1000.0 * (m[b] - m[a])  # noqa: E731
        out = {"send": ms("client_send", "read"), "child_wait": ms("read", "ready"), "handoff": ms("ready", "sent"),
               "run": ms("sent", "ended"), "collect": ms("ended", "collected"), "answer": ms("collected", "answer"),
               "receive": ms("answer", "client_received"), "total": ms("client_send", "client_received")}
        for key in ("prefork", "cleanup", "after_answer"):
            out[key] = 1000.0 * m[f"{key}_s"] if f"{key}_s" in m else None
        return result, out

    def run_many(self, codes: Sequence[str] | Iterable[str], limits: Limits | None = None,
                 rehearse: Sequence[str] = ()) -> list[SandboxResult]:
        """Run programs on every server at once; results in input order."""
        codes = list(codes)
        if len(codes) <= 1:
            return [self.run(c, limits, rehearse) for c in codes]
        return list(self._pool_executor().map(lambda c: self.run(c, limits, rehearse), codes))

    async def arun(self, code: str, limits: Limits | None = None, rehearse: Sequence[str] = ()) -> SandboxResult:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._pool_executor(), self.run, code, limits, rehearse)

    async def arun_many(self, codes: Sequence[str], limits: Limits | None = None,
                        rehearse: Sequence[str] = ()) -> list[SandboxResult]:
        return list(await asyncio.gather(*(self.arun(c, limits, rehearse) for c in codes)))

    def _pool_executor(self) -> ThreadPoolExecutor:
        with self._lock:
            if self._executor is None:
                self._executor = ThreadPoolExecutor(self.size, thread_name_prefix="sandbox-pool")
            return self._executor


#: what :meth:`SandboxPool.run` can rehearse: the libraries whose answers depend only on the model a
#: program builds solve a tiny one (``rehearsals.REHEARSALS``); z3, and pysmt over it, keep state
#: that steers the search, so for them only the pages their probe wrote are copied ahead
#: (``rehearsals.PROBES``): no code runs
REHEARSABLE = ("python-sat", "ortools", "sympy", "gurobipy", "highspy", "z3", "pysmt")


def _rehearsal(names: Sequence[str]) -> tuple[str, ...]:
    if isinstance(names, str):
        raise TypeError("rehearse takes a sequence of library names, not one string")
    names = tuple(names)
    unknown = [n for n in names if n not in REHEARSABLE]
    if unknown:
        raise ValueError(f"cannot rehearse {unknown}; the choices are {list(REHEARSABLE)}")
    return names


@atexit.register
def _close_all() -> None:
    for pool in list(_POOLS):
        try:
            pool.close()
        except Exception:
            pass
