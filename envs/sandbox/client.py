"""The trainer's side of the sandbox: a pool of fork servers, typed results, batched and async runs.

``SandboxPool(size)`` starts ``size`` fork servers (default: one per core) lazily, each a fresh
``python -I envs/sandbox/server.py`` with a minimal environment, and hands every program to an
idle one. A server that dies (or stops answering) is killed with everything it started and
replaced; the call that was running on it comes back with status ``killed`` and the next call
gets a fresh server. Pools are closed at interpreter exit.

Envs share one pool per process (:func:`acquire_default_pool` / :func:`release_default_pool`,
reference counted), so making a thousand envs does not start a thousand servers.
"""
from __future__ import annotations

import asyncio
import atexit
import json
import os
import queue
import random
import select
import shutil
import signal
import subprocess
import sys
import threading
import time
import weakref
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Iterable, Sequence

from . import linux as _proto
from . import record as _record

__all__ = [
    "STATUSES",
    "SOLVER_FAMILIES",
    "Limits",
    "SandboxConfig",
    "SandboxResult",
    "SandboxError",
    "SandboxPool",
    "acquire_default_pool",
    "release_default_pool",
    "default_pool",
    "shutdown_default_pool",
]

#: every status a result can have
STATUSES = ("ok", "error", "timeout", "memory", "killed", "output_limit")
#: solver families as SAT-RL §3.1 names them (python-sat is imported as pysat)
SOLVER_FAMILIES = ("z3", "pysmt", "python-sat", "ortools", "sympy")

_SERVER_PATH = Path(__file__).with_name("server.py")
_SANDBOX_DIR = Path(__file__).resolve().parent  # server.py and the siblings it loads by path
_PACKAGE_ROOT = Path(__file__).resolve().parents[2]  # the solvergym package directory


class SandboxError(RuntimeError):
    """The sandbox could not be started at all (a program's failure is a result, never this)."""


@dataclass(frozen=True)
class Limits:
    """Per-program limits.

    ``memory_mb`` is enforced twice: as each process's address space on top of the pre-imported
    solvers (RLIMIT_AS, which cannot tell shared library mappings from the program's own
    allocations), and over all of the program's processes together: every 10 ms the server
    adds up the memory they hold (pages they share counted once, shared-memory objects such as
    memfds whole) and kills the group past the budget (status ``memory``). Files
    the program writes live in its own ``/tmp`` (a tmpfs of :attr:`SandboxConfig.tmp_mb`).
    ``nproc`` caps the program's processes and threads together (one uid per program).
    ``cpu_s`` defaults to the wall-clock timeout rounded up plus one. ``output_bytes`` bounds
    stdout + stderr together: past it the program is killed (status ``output_limit``);
    ``keep_bytes`` is the tail of each stream that comes back."""

    timeout_s: float = 10.0
    cpu_s: int | None = None
    memory_mb: int = 2048
    fsize_mb: int = 16
    nproc: int = 32
    nofile: int = 256
    output_bytes: int = 1 << 20
    keep_bytes: int = 64 << 10

    def __post_init__(self):
        if not self.timeout_s > 0:
            raise ValueError(f"timeout_s must be positive, got {self.timeout_s}")
        for name in ("memory_mb", "fsize_mb", "nproc", "nofile", "output_bytes"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(self, name)}")


@dataclass(frozen=True)
class SandboxConfig:
    """How the servers isolate programs.

    ``isolation``: ``"auto"`` (default) uses namespaces + a minimal read-only root when the
    process runs as root and the kernel allows it, and says so in :attr:`SandboxPool.isolation`;
    ``"namespaces"`` fails if they are not available; ``"basic"`` uses rlimits, a fresh working
    directory and (as root) a dropped uid only. ``landlock`` (``None``: on exactly when the
    namespaces are not active, to confine writes to the working directory there) and ``seccomp``
    add those layers where the kernel / the ``pyseccomp`` package allow; ``bwrap`` starts each server inside
    bubblewrap (new PID namespace too) when the ``bwrap`` binary is installed, in place of the
    built-in namespaces. ``hide`` lists trees a program must not
    see (the solvergym package is always hidden); ``extra_ro`` trees it may read. ``tmp_mb``:
    the size of the fresh tmpfs each program gets as ``/tmp`` under the namespaces (its files
    there are gone with it).
    """

    isolation: str = "auto"
    landlock: bool | None = None
    seccomp: bool = False
    hide: tuple[str, ...] = ()
    extra_ro: tuple[str, ...] = ()
    tmp_mb: int = 64
    start_timeout_s: float = 120.0
    bwrap: bool = False

    def __post_init__(self):
        if self.isolation not in ("auto", "namespaces", "basic"):
            raise ValueError(f"isolation must be auto, namespaces or basic, got {self.isolation!r}")


@dataclass
class SandboxResult:
    """What one program did (see :data:`STATUSES`).

    ``solvers_imported``: solver families the program imported itself; ``solver_calls``:
    ``(family, function)`` of every solve/check call, outermost only, in order (the first 200;
    ``n_solver_calls`` counts all); ``formula``: what the *last* solve call was handed
    (``kind`` ``smt2``/``cnf``/``cpsat``/``sympy``/``lp``, with ``solver`` and ``call``), or
    ``None`` with ``formula_error`` saying why when serialising failed.

    ``optimum``: the result of the program's *last* optimisation solve (gurobipy
    ``Model.optimize``, highspy ``Highs.run``/``solve``, OR-Tools ``pywraplp`` ``Solve``, CP-SAT
    ``CpSolver.Solve``/``solve``, MathOpt ``mathopt.solve``), read from the solver object right
    after the call returned; ``None`` when the program made no such solve (printing an objective
    is not solving). A dict::

        {"solver": "gurobipy" | "highspy" | "ortools",
         "call": "Model.optimize" | "Highs.run" | "linear_solver.Solve" | "CpSolver.Solve" | "mathopt.solve",
         "status": "optimal" | "infeasible" | "unbounded" | "inf_or_unbd" | "time_limit"
                   | "feasible" (a limit hit with an incumbent) | "error" | "other",
         "raw_status": str,          # the solver's own status name ("OPTIMAL", "kOptimal", ...)
         "objective": float | None,  # the incumbent's objective value (finite or +-inf)
         "sense": "min" | "max" | None,
         "num_vars", "num_int", "num_bin", "num_constrs", "num_qconstrs", "num_q_obj_terms",
         "num_gen_constrs": int,     # -1 where the solver cannot tell
         "mps": str | None,          # the solved model as free MPS text (gurobipy, highspy,
                                     # pywraplp; at most 1 MiB)
         "mps_truncated": bool,      # the MPS was left out for its size
         "error": str | None}        # e.g. "GurobiError 10010: Model too large for size-limited license; ..."

    ``num_int`` counts general integers and ``num_bin`` binaries (an integer variable bounded to
    [0, 1] is binary); general constraints are Gurobi's general constraints plus SOS (MathOpt:
    indicators; CP-SAT: every non-linear constraint). A solve that raised is the last optimum too,
    with status ``error`` (the program saw the exception). Like the call list it is evidence from
    inside the program's process (``instrument.py``, "Trust").
    """

    status: str
    exit_code: int | None
    stdout: str
    stderr: str
    duration_s: float
    reason: str = ""
    signal: str | None = None
    cpu_s: float = 0.0
    stdout_bytes: int = 0
    stderr_bytes: int = 0
    solvers_imported: list[str] = field(default_factory=list)
    solver_calls: list[tuple[str, str]] = field(default_factory=list)
    n_solver_calls: int = 0
    formula: dict | None = None
    formula_error: str | None = None
    optimum: dict | None = None
    server_pid: int | None = None

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    @property
    def stdout_truncated(self) -> bool:
        return self.stdout.startswith("[... ") and self.stdout_bytes > len(self.stdout.encode())

    def called(self, family: str | None = None) -> bool:
        """Whether the program made a solve/check call (of ``family``, when given)."""
        return any(f == family or family is None for f, _ in self.solver_calls)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_response(cls, resp: Any, server_pid: int | None) -> "SandboxResult":
        """The result a server sent, every field checked (a malformed one becomes ``killed`` or,
        for the program's record, ``error``, with the reason; this never raises)."""
        if not isinstance(resp, dict):
            return cls.failure("killed", "the sandbox server sent a malformed answer", pid=server_pid)
        status = resp.get("status")
        if status not in STATUSES:
            return cls.failure("killed", "the sandbox server sent an unknown status", pid=server_pid)
        reason = _text(resp.get("reason"))
        rep: dict = {}
        optimum = None
        if resp.get("report") is not None:
            try:
                rep = _record.clean(resp["report"])
                optimum = rep.get("optimum")
                if optimum is not None:  # the record carries numbers as text (no floats)
                    optimum = {**optimum, "objective": _record.objective_value(optimum["objective"])}
            except _record.RecordError as e:
                status, reason = "error", f"the program's solver-call record was rejected: {e}"
                rep, optimum = {}, None
        code = resp.get("exit_code")
        return cls(
            status=status,
            exit_code=code if type(code) is int else None,
            stdout=_text(resp.get("stdout")),
            stderr=_text(resp.get("stderr")),
            duration_s=_number(resp.get("duration_s")),
            reason=reason,
            signal=resp.get("signal") if isinstance(resp.get("signal"), str) else None,
            cpu_s=_number(resp.get("cpu_s")),
            stdout_bytes=_count(resp.get("stdout_bytes")),
            stderr_bytes=_count(resp.get("stderr_bytes")),
            solvers_imported=list(rep.get("imported", [])),
            solver_calls=[(c[0], c[1]) for c in rep.get("calls", [])],
            n_solver_calls=rep.get("n_calls", 0),
            formula=rep.get("formula"),
            formula_error=rep.get("formula_error"),
            optimum=optimum,
            server_pid=server_pid,
        )

    @classmethod
    def failure(cls, status: str, reason: str, duration: float = 0.0, pid: int | None = None) -> "SandboxResult":
        return cls(status=status, exit_code=None, stdout="", stderr="", duration_s=duration, reason=reason,
                   server_pid=pid)


def _text(x: Any) -> str:
    return x if isinstance(x, str) else ""


def _number(x: Any) -> float:
    return float(x) if type(x) in (int, float) and 0 <= x < 1e12 else 0.0


def _count(x: Any) -> int:
    return x if type(x) is int and x >= 0 else 0


# ----------------------------------------------------------------------------- one server
class _Server:
    """One fork server process and the pipe protocol to it (used by one thread at a time)."""

    def __init__(self, cfg: SandboxConfig, slot: int):
        self.cfg = cfg
        self.slot = slot
        self.proc: subprocess.Popen | None = None
        self.hello: dict = {}
        self.uid_base = 0
        self.counter = 0

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc is not None else None

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def start(self) -> None:
        # A random block of 4096 uids per server: two pools on one machine do not share uids.
        self.uid_base = random.SystemRandom().randrange(1 << 20, 1 << 30) & ~0xFFF
        hide = [str(_PACKAGE_ROOT)] + [str(Path(h).resolve()) for h in self.cfg.hide]
        extra = [str(Path(p).resolve()) for p in self.cfg.extra_ro]
        lic = os.environ.get("GRB_LICENSE_FILE")
        if lic and os.path.exists(lic):
            extra.append(str(Path(lic).resolve()))
        argv = [sys.executable, "-I", str(_SERVER_PATH)]
        bwrap = shutil.which("bwrap") if self.cfg.bwrap else None
        if bwrap:
            argv = _bwrap_argv(bwrap, hide, self.cfg.tmp_mb) + argv
        cfg = {
            "uid_base": self.uid_base,
            "uid_span": 4096,
            "isolation": "basic" if bwrap else self.cfg.isolation,
            "bwrap": "active" if bwrap else ("unavailable: bwrap is not installed" if self.cfg.bwrap else "off (setting)"),
            "landlock": self.cfg.landlock,
            "seccomp": self.cfg.seccomp,
            "hide": hide,
            "extra_ro": extra,
            "tmp_mb": self.cfg.tmp_mb,
        }
        # The server gets no environment of ours: no secrets, no seeds, no PYTHON* variables.
        env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8", "MALLOC_ARENA_MAX": "2",
               "HOME": "/nonexistent", "PYTHONDONTWRITEBYTECODE": "1"}
        if lic:
            env["GRB_LICENSE_FILE"] = lic
        self.proc = subprocess.Popen(
            argv + [json.dumps(cfg)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            env=env, cwd="/", close_fds=True, start_new_session=True,
        )
        hello = self._read(self.cfg.start_timeout_s)
        if not hello or "hello" not in hello:
            proc = self.proc
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            proc.wait()
            err = proc.stderr.read().decode("utf-8", "replace")[-2000:]
            self.kill()
            raise SandboxError("the sandbox server failed to start: " + (err or "no answer"))
        self.proc.stderr.close()  # start-up errors only; the server closed its end after hello
        self.hello = hello

    def request(self, code: str, limits: Limits, rehearse: Sequence[str] = ()) -> SandboxResult:
        self.counter += 1
        msg = {"id": self.counter, "code": code, "limits": asdict(limits)}
        if rehearse:
            msg["rehearse"] = list(rehearse)
        t0 = time.perf_counter()
        try:
            _proto.write_frame(self.proc.stdin.fileno(), msg)
        except (OSError, ValueError):
            return self._lost(t0, "the sandbox server was gone; it has been replaced")
        # the server enforces the limit; this margin only catches a server that hangs or died
        resp = self._read(limits.timeout_s + 10.0)
        if not isinstance(resp, dict) or resp.get("id") != self.counter:
            return self._lost(t0, "the sandbox server died or stopped answering while running the "
                                  "program; it has been replaced")
        return SandboxResult.from_response(resp, self.pid)

    def _lost(self, t0: float, reason: str) -> SandboxResult:
        pid = self.pid
        self.kill()
        return SandboxResult.failure("killed", reason, time.perf_counter() - t0, pid)

    def _read(self, timeout: float) -> dict | None:
        fd = self.proc.stdout.fileno()
        deadline = time.monotonic() + timeout
        buf = bytearray()
        need = 4
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            r, _, _ = select.select([fd], [], [], left)
            if not r:
                return None
            chunk = os.read(fd, max(need - len(buf), 1 << 16) if len(buf) >= 4 else 4 - len(buf))
            if not chunk:
                return None
            buf += chunk
            if len(buf) >= 4:
                need = 4 + int.from_bytes(buf[:4], "big")
                if len(buf) >= need:
                    try:
                        return json.loads(bytes(buf[4:need]))
                    except (ValueError, RecursionError):
                        return None

    def ping(self, timeout: float = 5.0) -> bool:
        try:
            _proto.write_frame(self.proc.stdin.fileno(), {"ping": 1})
        except (OSError, ValueError, AttributeError):
            return False
        resp = self._read(timeout)
        return bool(resp and resp.get("pong") == 1)

    def kill(self) -> None:
        """End the server and anything its children left (by their uids)."""
        proc, self.proc = self.proc, None
        if proc is None:
            return
        for stream in (proc.stdin, proc.stdout, proc.stderr):
            try:
                if stream is not None:
                    stream.close()
            except OSError:
                pass
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass
        if self.uid_base:
            _kill_uids(self.uid_base, self.uid_base + 4096)

    def close(self) -> None:
        """Closing stdin ends a healthy server (it kills its running child); then make sure."""
        proc = self.proc
        if proc is None:
            return
        try:
            proc.stdin.close()
            proc.wait(timeout=2)
        except (OSError, subprocess.TimeoutExpired, ValueError):
            pass
        self.kill()


def _bwrap_argv(bwrap: str, hide: list[str], tmp_mb: int) -> list[str]:
    """Start the server inside bubblewrap: new net/IPC/UTS/PID namespaces, the file system read-only,
    a private /tmp and /proc, the hidden trees replaced by empty tmpfs (the interpreter's prefixes
    inside them bound back), and only the capabilities the server needs to drop each child's uid."""
    argv = [bwrap, "--die-with-parent", "--unshare-net", "--unshare-ipc", "--unshare-uts", "--unshare-pid",
            "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
            "--size", str(tmp_mb << 20), "--tmpfs", "/tmp"]
    for h in hide:
        argv += ["--tmpfs", h]
    for prefix in sorted({sys.prefix, sys.exec_prefix, str(_SANDBOX_DIR)}):
        if any(prefix == h or prefix.startswith(h.rstrip("/") + "/") for h in hide):
            argv += ["--ro-bind", prefix, prefix]
    for cap in ("CAP_SETUID", "CAP_SETGID", "CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_FOWNER", "CAP_KILL"):
        argv += ["--cap-add", cap]
    return argv + ["--"]


def _kill_uids(lo: int, hi: int) -> None:
    """SIGKILL every process whose real uid is in ``[lo, hi)`` (what a dead server left)."""
    if os.geteuid() != 0:
        return
    for _ in range(3):
        found = False
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                with open(f"/proc/{entry}/status") as f:
                    for line in f:
                        if line.startswith("Uid:"):
                            uid = int(line.split()[1])
                            break
                    else:
                        continue
            except (OSError, ValueError):
                continue
            if lo <= uid < hi:
                found = True
                try:
                    os.kill(int(entry), signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
        if not found:
            return


# ----------------------------------------------------------------------------- the pool
_POOLS: "weakref.WeakSet[SandboxPool]" = weakref.WeakSet()


class SandboxPool:
    """A pool of fork servers; ``run`` / ``run_many`` / ``arun`` / ``arun_many`` execute programs.

    Thread-safe: each call takes an idle server (waiting for one when all are busy), so
    ``run_many`` with ``size`` workers keeps every server busy.
    """

    def __init__(self, size: int | None = None, config: SandboxConfig | None = None,
                 limits: Limits | None = None):
        self.size = int(size or _cores())
        if self.size < 1:
            raise ValueError("a pool needs at least one server")
        self.config = config or SandboxConfig()
        self.limits = limits or Limits()
        self._servers = [_Server(self.config, i) for i in range(self.size)]
        # last in, first out: a warm server is reused before a cold one is started
        self._idle: queue.LifoQueue[_Server] = queue.LifoQueue()
        for s in reversed(self._servers):
            self._idle.put(s)
        self._lock = threading.Lock()
        self._executor: ThreadPoolExecutor | None = None
        self._closed = False
        self.restarts = 0
        _POOLS.add(self)

    # -- lifecycle --------------------------------------------------------------------------
    def start(self) -> "SandboxPool":
        """Start every server now (in parallel) instead of at first use."""
        with ThreadPoolExecutor(self.size) as ex:
            list(ex.map(self._ensure, self._servers))
        return self

    def _ensure(self, server: _Server) -> None:
        if self._closed:
            raise SandboxError("this sandbox pool is closed")
        if not server.alive():
            if server.proc is not None or server.hello:
                # ``restarts``: servers replaced after they died, each death counted here once
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
        the shared image it writes (~200-1,000 faults), which the rehearsal pays off the latency
        path (a small gurobipy program, 2 cores: ~14 -> ~7 ms). Name the libraries the next
        programs are likely to use (``SolverOR-v0`` names its three, ``SolverTool-v0`` the
        episode's solver where it can be rehearsed); the default rehearses nothing. A program's
        output and record are the same rehearsed or not."""
        if not isinstance(code, str):
            raise TypeError(f"code must be a str, got {type(code).__name__}")
        rehearse = _rehearsal(rehearse)
        limits = limits or self.limits
        server = self._idle.get()
        try:
            self._ensure(server)
            try:
                return server.request(code, limits, rehearse)
            except Exception as e:  # one program's result is never another's exception
                pid = server.pid
                server.kill()
                return SandboxResult.failure("killed", f"the sandbox failed on this program ({type(e).__name__}); "
                                             "its server has been replaced", pid=pid)
        finally:
            self._idle.put(server)

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
                self._executor = ThreadPoolExecutor(self.size, thread_name_prefix="solvergym-sandbox")
            return self._executor


#: what :meth:`SandboxPool.run` can rehearse (zygote.REHEARSALS): the libraries whose answers
#: depend only on the model a program builds (not z3, nor pysmt over it: see zygote.REHEARSALS)
REHEARSABLE = ("python-sat", "ortools", "sympy", "gurobipy", "highspy")


def _rehearsal(names: Sequence[str]) -> tuple[str, ...]:
    if isinstance(names, str):
        raise TypeError("rehearse takes a sequence of library names, not one string")
    names = tuple(names)
    unknown = [n for n in names if n not in REHEARSABLE]
    if unknown:
        raise ValueError(f"cannot rehearse {unknown}; the choices are {list(REHEARSABLE)}")
    return names


def _cores() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


@atexit.register
def _close_all() -> None:
    for pool in list(_POOLS):
        try:
            pool.close()
        except Exception:
            pass


# ----------------------------------------------------------------------------- shared pool
_default: SandboxPool | None = None
_default_refs = 0
_default_lock = threading.Lock()
_default_timer: threading.Timer | None = None
#: seconds the shared pool outlives its last user (so a script that closes one env and makes the
#: next does not pay a server start each time); interpreter exit closes it in any case
IDLE_SHUTDOWN_S = float(os.environ.get("SOLVERGYM_SANDBOX_IDLE_S", "10"))


def default_pool() -> SandboxPool:
    """The process-wide pool (created on first use; sized by ``SOLVERGYM_SANDBOX_SERVERS`` or
    the number of cores)."""
    global _default
    with _default_lock:
        if _default is None or _default.closed:
            size = int(os.environ.get("SOLVERGYM_SANDBOX_SERVERS", "0")) or None
            _default = SandboxPool(size)
        return _default


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
    """Stop the shared pool now (its users get a fresh one on their next call)."""
    global _default_refs
    with _default_lock:
        _default_refs = 0
        _close_default_locked()
