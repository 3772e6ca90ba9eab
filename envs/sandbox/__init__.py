"""The solver sandbox (DESIGN.md "Sandbox"; SAT-RL §3.4): model-written programs run in children
of a fork server that imported the solvers once, under rlimits, a dropped uid and (where the
kernel allows) namespaces and a minimal read-only root; results are typed and carry the solver
calls the program made and the formula its last call was handed.

    from solvergym.envs.sandbox import SandboxPool, Limits
    with SandboxPool() as pool:
        r = pool.run("from z3 import *\\nx = Bool('x'); s = Solver(); s.add(x); print(s.check())")
        r.status, r.stdout, r.solver_calls, r.formula["text"]

``server.py`` is the fork server (standard library + solvers; never imports solvergym),
``instrument.py`` the solver-call capture inside each child, ``client.py`` the pool.

Isolation levels (``SandboxPool.isolation`` reports which are active and why others are not):

- **default, ``isolation="auto"``**: when the process runs as root and the kernel allows it, each
  server lives in new mount, network, IPC and UTS namespaces, ``chroot``-ed into a read-only root
  that holds only the system directories and the interpreter's prefixes (no solvergym sources, no
  home directories, no datasets), with ``/proc`` mounted ``hidepid=2`` and a private tmpfs
  ``/tmp``; every child additionally gets its own uid (so RLIMIT_NPROC and the clean-up are per
  program), rlimits, ``no_new_privs``, a fresh working directory and an empty environment. This
  is the default because it costs nothing per program (the namespaces are made once per server,
  children share them one at a time: the network namespace has no interface up and an
  unprivileged uid cannot configure one) and needs no package or binary beyond the kernel.
- without root (or with ``isolation="basic"``): rlimits, process group, clean environment and
  working directory, and Landlock (when the kernel has it: writes only in the working directory):
  no uid drop (RLIMIT_NPROC then counts all of the user's processes), no network isolation, files
  readable by the user stay readable. ``bwrap=True`` where bubblewrap is installed adds the
  namespaces back.
- opt-in, defence in depth: ``landlock=True`` under the namespaces too (kernel >= 5.13; writes
  confined to the working directory), ``seccomp=True`` (``pip install pyseccomp``; no sockets but AF_UNIX, no ptrace,
  mount, namespaces, bpf, io_uring, keyrings), ``bwrap=True`` (bubblewrap runs the server, adding
  a PID namespace). They are off by default because on a root machine they close no path the
  default leaves open, and each needs something (a kernel option, a package, a binary) that not
  every machine has.
"""
from .client import (
    SOLVER_FAMILIES,
    STATUSES,
    Limits,
    SandboxConfig,
    SandboxError,
    SandboxPool,
    SandboxResult,
    acquire_default_pool,
    default_pool,
    release_default_pool,
    shutdown_default_pool,
)

__all__ = [
    "SOLVER_FAMILIES",
    "STATUSES",
    "Limits",
    "SandboxConfig",
    "SandboxError",
    "SandboxPool",
    "SandboxResult",
    "acquire_default_pool",
    "default_pool",
    "release_default_pool",
    "shutdown_default_pool",
]
