"""What the supervisor and the zygote must agree on, defined once: the exit code of a child that
could not be set up, the CPU limit a request's limits give, and the path and ``/proc`` helpers
both use.

Standard library only (the server loads it with the rest of the package, before the file-system
view shrinks).
"""
from __future__ import annotations

import os

#: a child that could not be set up exits with this code (and says so on its stderr)
SETUP_FAILED = 125


def cpu_limit(lim: dict) -> int:
    """CPU seconds (RLIMIT_CPU): ``cpu_s``, or the wall-clock timeout rounded up plus one."""
    cpu = lim.get("cpu_s")
    return max(1, int(cpu) if cpu is not None else int(float(lim.get("timeout_s", 10.0))) + 1)


def within(path: str, tree: str) -> bool:
    """Whether ``path`` is ``tree`` or lies inside it (both absolute)."""
    return path == tree or path.startswith(tree.rstrip("/") + "/")


def children_of(pid: int) -> list[int]:
    """The children of every thread of process ``pid`` (empty when it is gone)."""
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return []
    out: list[int] = []
    for t in tasks:
        try:
            with open(f"/proc/{pid}/task/{t}/children") as f:
                out += [int(x) for x in f.read().split()]
        except (OSError, ValueError):
            pass
    return out
