"""What a pool is told: the limits of each program (:class:`Limits`), how its servers isolate
programs (:class:`SandboxConfig`), and the process's default config (:func:`set_default_config`).

The sandbox knows nothing of the program that uses it. A host whose own sources programs must
not see (a package of environments holding ground truths, say) says so once, at import::

    sandbox.set_default_config(SandboxConfig(hide=(my_package_dir,)))

and every pool made in the process afterwards hides that tree, whatever config it is given.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass


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
    process runs as root and the kernel allows it, and says so in ``SandboxPool.isolation``;
    ``"namespaces"`` fails if they are not available; ``"basic"`` uses rlimits, a fresh working
    directory and (as root) a dropped uid only. ``landlock`` (``None``: on exactly when the
    namespaces are not active, to confine writes to the working directory there) and ``seccomp``
    add those layers where the kernel / the ``pyseccomp`` package allow; ``bwrap`` starts each
    server inside bubblewrap (new PID namespace too) when the ``bwrap`` binary is installed, in
    place of the built-in namespaces. ``hide`` lists trees a program must not see (the default
    config's are hidden too: :func:`set_default_config`); ``extra_ro`` trees it may read.
    ``tmp_mb``: the size of the fresh tmpfs each program gets as ``/tmp`` under the namespaces
    (its files there are gone with it).
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


_default = SandboxConfig()


def set_default_config(config: SandboxConfig) -> None:
    """Make ``config`` the config of every pool made afterwards without one; its ``hide`` is
    hidden by every pool made afterwards, whatever config it is given (a host hides its own
    sources once, and no caller's config can show them again)."""
    global _default
    if not isinstance(config, SandboxConfig):
        raise TypeError(f"set_default_config takes a SandboxConfig, got {type(config).__name__}")
    _default = config


def default_config() -> SandboxConfig:
    """The config a pool made without one gets (:func:`set_default_config`)."""
    return _default


def pool_config(config: SandboxConfig | None) -> SandboxConfig:
    """The config a pool given ``config`` runs with: ``config`` (or the default) hiding the
    default config's trees first, then its own."""
    if config is None:
        return _default
    hide = tuple(dict.fromkeys(_default.hide + config.hide))
    return config if hide == config.hide else dataclasses.replace(config, hide=hide)
