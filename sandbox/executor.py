"""Where a pool's servers run: the executor interface behind :class:`~.pool.SandboxPool`.

A pool holds ``size`` slots and hands each program to an idle one; an executor makes the slots.
A slot is anything with the five methods :class:`Server` names (the local
:class:`~.process.ServerProcess` is one), so a backend only has to say how to start a fork server
somewhere, send it one program, and kill it. The typed result, the limits, the isolation and the
rehearsals are the server's own, wherever it runs.

Executors (``SandboxPool(executor=...)``):

- ``"local"`` (the default): fork servers on this machine (``process.py``).
- ``"ray"``: one Ray actor per slot (``num_cpus=1``), each owning one fork server on the node
  Ray placed it on (``ray_executor.py``). ``ray.init()`` is called if Ray is not initialised yet
  (it joins ``RAY_ADDRESS`` or starts a local cluster); the pool's size defaults to the cluster's
  CPUs. A slot whose actor died is given a new actor and the program runs again there.
- ``"ray://host:port"`` (or ``"host:port"``, or ``"auto"``): the same, joining that cluster.
"""
from __future__ import annotations

import os
from typing import Any, Callable, Protocol, Sequence

from . import ray_executor
from .config import Limits, SandboxConfig
from .process import ServerProcess
from .result import SandboxResult

#: the executor names :func:`parse_executor` takes (a Ray address is also accepted)
EXECUTORS = ("local", "ray")


class Server(Protocol):
    """One slot of a pool (used by one thread at a time).

    ``hello``: what the server reported when it started (empty before); ``pid``: the server's
    process id where it runs (``None`` before it started); ``started``: whether a server was
    ever started in this slot (a pool counts a dead started one as a restart)."""

    hello: dict

    @property
    def pid(self) -> int | None: ...

    @property
    def started(self) -> bool: ...

    def alive(self) -> bool: ...

    def start(self) -> None: ...

    def request(self, code: str, limits: Limits, rehearse: Sequence[str] = ()) -> SandboxResult: ...

    def kill(self) -> None: ...

    def close(self) -> None: ...


def parse_executor(executor: Any) -> tuple[str, str | None]:
    """``(kind, address)`` for an executor setting: ``("local", None)``, ``("ray", None)`` (Ray
    as initialised, or ``ray.init()``) or ``("ray", address)``; a clear error for anything else."""
    if executor is None or executor == "local":
        return "local", None
    if executor == "ray":
        return "ray", None
    if isinstance(executor, str) and (executor == "auto" or executor.startswith("ray://")
                                      or _host_port(executor)):
        return "ray", executor
    raise ValueError(f"executor must be one of {list(EXECUTORS)} or a Ray address "
                     f"('ray://host:port', 'host:port', 'auto'), got {executor!r}")


def server_factory(executor: Any, config: SandboxConfig) -> tuple[Callable[[int], Server], int]:
    """The function making slot ``i``'s server for ``executor``, and the pool size that executor
    suggests (the machine's cores, or the Ray cluster's CPUs)."""
    kind, address = parse_executor(executor)
    if kind == "local":
        return (lambda slot: ServerProcess(config, slot)), cores()
    return ray_executor.factory(config, address)


def cores() -> int:
    """The CPUs this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def _host_port(s: str) -> bool:
    host, sep, port = s.rpartition(":")
    return bool(sep and host and port.isdigit())
