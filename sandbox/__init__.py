"""The solver sandbox (``docs/design.md`` "Sandbox"; SAT-RL §3.4): model-written programs run in
children of a zygote that imported the solvers once, under rlimits, a dropped uid, a memory budget
over all of a program's processes and (where the kernel allows) namespaces and a minimal read-only
root; results are typed and carry the solver calls the program made and the formula its last call
was handed.

    from solvergym.sandbox import SandboxPool, Limits   # `import sandbox` as its own distribution
    with SandboxPool() as pool:
        r = pool.run("from z3 import *\\nx = Bool('x'); s = Solver(); s.add(x); print(s.check())")
        r.status, r.stdout, r.solver_calls, r.formula["text"]

An optimisation program's last solve (gurobipy, highspy, OR-Tools LP / CP-SAT / MathOpt) comes back
as ``r.optimum``: status, objective, sense and model counts read from the solver object after the
solve, and the solved model as MPS text (``capture/optimum.py``).

The package imports nothing of the program that uses it (it can ship as its own distribution). A
host whose sources programs must not see hides them once, for every pool of the process:
``set_default_config(SandboxConfig(hide=(package_dir,)))``. Code that runs programs holds a lease
(:func:`shared_pool`): its own pool, or the process-wide one, taken when first needed, taken anew
if it was shut down, given back on close, and a ``killed`` result when no sandbox can start;
an executor the caller named that cannot run programs (``executor="ray"`` without Ray, a cluster
that cannot be joined) raises :class:`ExecutorUnavailable` instead, at the lease where it can.

The pool's side (this process): ``config.py`` (:class:`Limits`, :class:`SandboxConfig`, the
default config), ``result.py`` (:class:`SandboxResult`, :class:`SandboxError`), ``pool.py``
(:class:`SandboxPool`), ``executor.py`` (where the servers run: this machine, or Ray actors,
``SandboxPool(executor="ray")``), ``process.py`` (one server process and the protocol to it),
``ray_executor.py`` (one Ray actor per slot, each owning a server on its node), ``shared.py`` (the
process-wide pools, :func:`shared_pool`). The server's side, one process tree
per pool slot, started as ``python -I server.py``: ``supervisor.py`` (requests, supervision,
clean-up), ``isolation.py`` (namespaces, read-only root, fresh ``/tmp``), ``memory.py`` (the memory
budget over a program's processes), ``classify.py`` (a program's status and record),
``reaper.py``, ``zygote_link.py`` and ``zygote.py`` (the process every child is forked from: it
never sees a program, so no program finds an earlier one in its memory), ``rehearsals.py``,
``capture/`` (the solver-call capture inside each child, one module per library), ``common.py``
(what supervisor and zygote agree on), ``linux.py`` (system calls, the pipe protocol) and
``record.py`` (the schema of what a child reports, checked on both sides).

What is enforced, per program (``SandboxPool.isolation`` lists the active levels and why others
are not):

- **always**: a child forked from the zygote (no earlier program's code, output or record is in
  its memory); its own process group, subreaper clean-up (every process it started is killed
  after it, however it re-grouped); RLIMIT_CPU/AS/FSIZE/NPROC/NOFILE/MSGQUEUE; the memory budget
  summed over all its processes (``Limits.memory_mb``, checked every 10 ms); the wall clock and the
  output cap; a fresh working directory with an unpredictable name; an empty environment;
  ``no_new_privs``; a record that is validated (schema, size, depth) and must carry the run's
  secret, or the program's status is ``error``; clean-up in ``finally``.
- **as root, ``isolation="auto"`` (the default)**: each server lives in new mount, network, IPC and
  UTS namespaces, ``chroot``-ed into a read-only root that holds only the system directories and
  the interpreter's prefixes (none of the trees the config hides, such as the host's sources, no
  home directories or datasets), ``/proc`` mounted ``hidepid=2``; System V IPC is off in that IPC
  namespace (no segment can outlive a program or hold memory outside its budget); every program
  gets a fresh tmpfs as ``/tmp`` (detached after it: its files, a full disk, squatted names are
  gone) and its own uid. The namespaces are made once per server; the per-program costs are a
  tmpfs mount and a fork.
- without root (or with ``isolation="basic"``): rlimits, the memory budget, process group, clean
  environment and working directory, and Landlock (when the kernel has it: writes only in the
  working directory): no uid drop, no network isolation, /tmp and System V IPC shared with the
  machine. ``bwrap=True`` where bubblewrap is installed adds namespaces back.
- opt-in, defence in depth: ``landlock=True`` under the namespaces too, ``seccomp=True`` (``pip
  install pyseccomp``; no sockets but AF_UNIX, no ptrace, mount, namespaces, bpf, io_uring,
  keyrings), ``bwrap=True``.

What is advisory: the ``tool`` evidence (which solver calls a program made, and the formula of
the last) is recorded inside the program's own process. A single write to the report descriptor
or a call of a function found by name earns nothing, and a call counts only once the solver
returned; a program that walks its interpreter's objects to find the capture and its secret can
still forge a record (``capture/``, "Trust").
"""
from .config import Limits, SandboxConfig, default_config, set_default_config
from .executor import EXECUTORS, parse_executor, require_executor
from .host_lock import HOST, HostLock
from .pool import REHEARSABLE, SandboxPool
from .result import SOLVER_FAMILIES, STATUSES, ExecutorUnavailable, SandboxError, SandboxResult, server_lost
from .shared import (
    PoolLease,
    acquire_default_pool,
    default_pool,
    executor_pool,
    release_default_pool,
    shared_pool,
    shutdown_default_pool,
)

__all__ = [
    "HOST", "HostLock",
    "EXECUTORS",
    "ExecutorUnavailable",
    "REHEARSABLE",
    "SOLVER_FAMILIES",
    "STATUSES",
    "Limits",
    "PoolLease",
    "SandboxConfig",
    "SandboxError",
    "SandboxPool",
    "SandboxResult",
    "acquire_default_pool",
    "default_config",
    "default_pool",
    "executor_pool",
    "parse_executor",
    "release_default_pool",
    "require_executor",
    "server_lost",
    "set_default_config",
    "shared_pool",
    "shutdown_default_pool",
]
