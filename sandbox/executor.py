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

An executor that cannot run programs is the caller's error, not a program's status
(:class:`~.result.ExecutorUnavailable`): :func:`require_executor` imports Ray where a lease on it is
taken (an env's ``executor="ray"`` fails at ``gym.make`` without Ray, naming the install hint),
and a cluster that cannot be joined or cannot start a slot raises at the first program. The local
executor keeps its rule: a server that cannot start on this machine is a ``killed`` result.
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


def require_executor(executor: Any) -> tuple[str, str | None]:
    """:func:`parse_executor`, and for Ray the import of Ray: ``(kind, address)``, or
    :class:`~.result.ExecutorUnavailable` with the install hint where Ray cannot be imported.

    Called where a caller names the executor (a lease, so every env's ``gym.make``), not in
    :func:`parse_executor`, which only reads the setting. Nothing is started or joined here:
    ``ray.init`` waits for the first program (joining an unreachable address can take minutes,
    and a lease is made in every env and in every copy of one)."""
    kind, address = parse_executor(executor)
    if kind == "ray":
        ray_executor.ray_module()
    return kind, address


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
