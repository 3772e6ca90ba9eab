"""The Ray executor: each pool slot is a Ray actor owning one fork server on the node Ray chose.

Why Ray: the trainers that outgrow one machine (verl, OpenRLHF, SkyRL) are Ray programs, so the
cluster that generates can also run the programs, with no service to deploy; the peers' HTTP
sandbox (SandboxFusion) is what their users report timing out at 128 workers
(``references/interop.md`` §5). Each actor asks for ``num_cpus=1``, so Ray spreads the slots over
the cluster's nodes and never puts more programs on a node than it has CPUs; the pool's size is
the concurrency cap (one program per slot at a time).

An actor holds a :class:`~.process.ServerProcess` (the same fork server, zygote, isolation and
record as the local executor) and answers with the :class:`~.result.SandboxResult` it returned.
An actor that dies (its node went away, someone ``ray.kill``-ed it, its process crashed) raises
in the caller; :class:`RayServer` then reports its server lost and the pool runs the program again
on a fresh actor (``SandboxPool(retries=...)``, 2 by default for Ray). The fork server notices its
actor's death by the end of its stdin and ends itself and its program.

Ray is imported only when Ray is asked for (the ``ray`` extra: ``pip install 'solvergym[ray]'``):
by a lease on the Ray executor (:func:`ray_module`, so ``gym.make(..., executor="ray")`` fails at
once where Ray is missing) and by a Ray pool. Ray missing, a cluster that cannot be joined and a
slot whose actor cannot start are :class:`~.result.ExecutorUnavailable`, which no lease turns into
a program's ``killed`` result: the executor is the caller's setting, and a program's status is no
place to report it.
"""
from __future__ import annotations

import os
import socket
import threading
from typing import Any, Callable, Sequence

from .config import Limits, SandboxConfig
from .process import ServerProcess
from .result import LOST, ExecutorUnavailable, SandboxResult

#: seconds an answer may take beyond the program's own timeout before the actor is taken for
#: dead (scheduling on a loaded cluster, moving the result): a hung actor is replaced
ANSWER_MARGIN_S = 30.0

_remote_class: Any = None
_remote_lock = threading.Lock()


class SandboxActor:
    """The body of one actor: a fork server on this node and the calls the pool makes."""

    def __init__(self, config: SandboxConfig, slot: int):
        self.server = ServerProcess(config, slot)

    def start(self) -> dict:
        self.server.start()
        return self.hello()

    def hello(self) -> dict:
        return {**self.server.hello, "server_pid": self.server.pid, "uid_base": self.server.uid_base,
                "node": _node_id(), "host": socket.gethostname(), "actor_pid": os.getpid()}

    def run(self, code: str, limits: Limits, rehearse: Sequence[str]) -> tuple[SandboxResult, dict | None]:
        """The program's result, and the new server's hello where its server had died between
        programs and was started again (as the local pool does)."""
        hello = None
        if not self.server.alive():
            self.server.kill()
            self.server.start()
            hello = self.hello()
        return self.server.request(code, limits, tuple(rehearse)), hello

    def close(self) -> None:
        self.server.close()


def _node_id() -> str | None:
    try:
        return ray_module().get_runtime_context().get_node_id()
    except Exception:
        return None


class RayServer:
    """One pool slot on Ray (the :class:`~.executor.Server` interface): an actor made on
    :meth:`start`, asked to run one program per :meth:`request`, killed on :meth:`kill`."""

    def __init__(self, config: SandboxConfig, slot: int, address: str | None):
        self.config, self.slot, self.address = config, slot, address
        self.actor: Any = None
        self.hello: dict = {}
        self._ever = False
        self._ray: Any = None  # the ray module, connected (on start)

    @property
    def pid(self) -> int | None:
        return self.hello.get("server_pid") if self.actor is not None else None

    @property
    def uid_base(self) -> int:
        """The first uid of the server's programs (on its node)."""
        return self.hello.get("uid_base", 0)

    @property
    def started(self) -> bool:
        return self._ever

    def alive(self) -> bool:
        return self.actor is not None

    def start(self) -> None:
        ray = self._ray = connect(self.address)
        self._ever = True
        # num_cpus=1: Ray places one slot per CPU across the nodes; no Ray-side restarts, the
        # pool replaces a dead actor itself (and knows it did)
        self.actor = _remote().options(num_cpus=1, max_restarts=0, max_task_retries=0).remote(self.config, self.slot)
        try:
            self.hello = ray.get(self.actor.start.remote(), timeout=self.config.start_timeout_s + ANSWER_MARGIN_S)
        except Exception as e:
            self.kill()
            free = _free_cpus(ray)
            hint = (f" (the cluster has {free:g} CPUs free: an actor waits for one, so a second Ray pool on a "
                    f"cluster the first fills cannot start; share one pool, executor_pool)") if free < 1 else ""
            # every later program would wait for a slot that cannot start and come back killed:
            # the cluster is the caller's setting, so this is the caller's error
            raise ExecutorUnavailable(f"the sandbox server failed to start on Ray: {type(e).__name__}: {e}{hint}") from None

    def request(self, code: str, limits: Limits, rehearse: Sequence[str] = ()) -> SandboxResult:
        """Run one program on this slot's actor; an actor that died or stopped answering is killed
        and the result is ``killed`` (the pool retries it on a new actor)."""
        pid = self.pid
        try:
            result, hello = self._ray.get(self.actor.run.remote(code, limits, tuple(rehearse)),
                                    timeout=limits.timeout_s + ANSWER_MARGIN_S)
        except Exception as e:  # RayActorError, GetTimeoutError, a lost node, ...
            self.kill()
            return SandboxResult.failure("killed", f"the sandbox's Ray actor died or stopped answering "
                                         f"({type(e).__name__}); {LOST}", pid=pid)
        if hello is not None:
            self.hello = hello
        return result

    def kill(self) -> None:
        actor, self.actor = self.actor, None
        if actor is None:
            return
        try:
            self._ray.kill(actor, no_restart=True)  # its fork server sees stdin end and stops
        except Exception:
            pass

    def close(self) -> None:
        actor = self.actor
        if actor is None:
            return
        try:
            self._ray.get(actor.close.remote(), timeout=15)
        except Exception:
            pass
        self.kill()


def _free_cpus(ray) -> float:
    try:
        return float(ray.available_resources().get("CPU", 0.0))
    except Exception:
        return float("nan")


#: what to do where Ray is missing (setup.cfg's ``ray`` extra)
INSTALL_HINT = "pip install 'solvergym[ray]'"


def ray_module():
    """The ``ray`` module (Ray is optional: imported here, the one place, when a Ray executor is
    asked for); :class:`~.result.ExecutorUnavailable` with the install hint where it cannot be
    imported (not installed, or an install that fails to import: its error is in the message)."""
    try:
        import ray
    except ImportError as e:
        why = str(e)
    else:
        return ray
    # raised outside the handler so that it chains no import traceback (the message says why):
    # the CLI answers it in one line wherever the failed import's frames were
    raise ExecutorUnavailable(f"executor='ray' needs Ray, which cannot be imported here ({why}): {INSTALL_HINT}")


def connect(address: str | None):
    """The ``ray`` module, initialised: as it is, or ``ray.init(address)`` (``None``: Ray's own
    default, ``RAY_ADDRESS`` or a new local cluster)."""
    ray = ray_module()
    if not ray.is_initialized():
        try:
            ray.init(address=address, include_dashboard=False, log_to_driver=False,
                     ignore_reinit_error=True)
        except Exception as e:
            raise ExecutorUnavailable(f"could not connect to Ray at {address or 'the default address'}: {e}") from None
    return ray


def cluster_cpus(address: str | None) -> int:
    """The CPUs of the cluster Ray is connected to (at least one)."""
    ray = connect(address)
    return max(1, int(ray.cluster_resources().get("CPU", 1)))


def factory(config: SandboxConfig, address: str | None) -> tuple[Callable[[int], RayServer], int]:
    """Slot ``i``'s :class:`RayServer`, and the pool size Ray suggests (the cluster's CPUs)."""
    return (lambda slot: RayServer(config, slot, address)), cluster_cpus(address)


def _remote():
    global _remote_class
    with _remote_lock:
        if _remote_class is None:
            _remote_class = ray_module().remote(SandboxActor)
        return _remote_class
