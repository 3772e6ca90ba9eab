"""How a server isolates its programs: namespaces, a minimal read-only root, ``/proc`` with
``hidepid``, no System V IPC, and a fresh ``/tmp`` for every program; and the report of which
levels are active and why the others are not.

:func:`set_up` runs once per server, as root, before the zygote is forked (so the zygote and every
child live inside what it built). The namespaces level (``isolation="auto"`` or
``"namespaces"``): new mount, network, IPC and UTS namespaces; a new root on a tmpfs holding
read-only binds of the system directories and the interpreter's prefixes only (not the trees the
config hides, such as the host package's sources, nor anybody's home), a fresh ``/proc`` mounted
``hidepid=2`` (a program sees only its own processes); then ``chroot``. Every program then gets
a fresh tmpfs as ``/tmp`` (:class:`FreshTmp`). Under bubblewrap (the pool's ``bwrap=True``) the
namespaces are bubblewrap's and only the report is made here; without root, Landlock stands in
for the read-only root where the kernel has it.

Runs in the server process (standard library only; the files of this package are not visible
after :func:`set_up`).
"""
from __future__ import annotations

import os
import sys

from . import linux
from .common import within

#: System V IPC limits of the server's IPC namespace: no segments, queues or semaphore sets
SYSV_IPC_OFF = (("shmmni", "0"), ("shmall", "0"), ("msgmni", "0"), ("sem", "0 0 0 0"))
#: the levels bubblewrap provides when the pool started the server inside it
BWRAP_LEVELS = ("bwrap", "netns", "ipcns", "utsns", "pidns", "mountns", "readonly-root", "private-tmp",
                "hidden-package")
#: what every server enforces, whatever else is available
ALWAYS = ("rlimits", "memory-budget", "own-process-group", "subreaper", "zygote", "no-new-privs", "clean-env",
          "fresh-workdir", "record-secret")


class Isolation:
    """What a server set up: the active ``levels`` (in the order set up), ``notes`` saying why
    each other level is not active, the per-program ``tmp`` (``None`` without the namespaces)
    and the Landlock ABI its children apply (0: none)."""

    def __init__(self):
        self.levels: list[str] = []
        self.notes: dict[str, str] = {}
        self.tmp: FreshTmp | None = None
        self.landlock_abi = 0


def set_up(cfg: dict, root: bool) -> Isolation:
    """Isolate this process as ``cfg`` asks (the pool's server config: ``isolation``, ``bwrap``,
    ``landlock``, ``hide``, ``extra_ro``, ``tmp_mb``), as far as ``root`` and the kernel allow.
    Raises ``OSError`` when ``isolation="namespaces"`` cannot be had."""
    iso = Isolation()
    want = cfg.get("isolation", "auto")
    bwrap = cfg.get("bwrap", "off (setting)")
    visible: list[str] = []
    if bwrap == "active":
        iso.levels += BWRAP_LEVELS  # the namespaces are bubblewrap's
    else:
        iso.notes["bwrap"] = bwrap
        if want in ("auto", "namespaces") and root:
            try:
                levels, visible = setup_namespaces(cfg)
                iso.levels += levels
            except OSError as e:
                if want == "namespaces":
                    raise
                iso.notes["namespaces"] = f"unavailable: {e}"
        elif want != "basic":
            iso.notes["namespaces"] = "unavailable: needs root (CAP_SYS_ADMIN)"
        else:
            iso.notes["namespaces"] = "off (isolation='basic')"
    # a fresh /tmp per program: where this server made its own mount namespace (bubblewrap
    # keeps CAP_SYS_ADMIN from the server)
    if "chroot" in iso.levels:
        iso.tmp = FreshTmp(int(cfg.get("tmp_mb", 64)), [p for p in visible if within(p, "/tmp")])
        iso.tmp.cycle()
        iso.levels.append("fresh-tmp-per-program")
    else:
        iso.notes["fresh-tmp-per-program"] = "unavailable: needs the namespaces level (root)"
    if "sysv-ipc-off" not in iso.levels:
        iso.notes["sysv-ipc-off"] = "unavailable: needs the namespaces level (root)"
    iso.notes["cgroup"] = ("not used: the memory budget adds up what a program's processes map and the "
                           "shared-memory objects they hold (no cgroup is created or joined)")
    iso.levels += ALWAYS
    if root:
        iso.levels += ["uid-drop"]
    else:
        iso.notes["uid-drop"] = "unavailable: not running as root"
    want_ll = cfg.get("landlock")
    if want_ll is None:  # auto: the write confinement the namespaces would otherwise give
        want_ll = "readonly-root" not in iso.levels
    if want_ll:
        iso.landlock_abi = linux.landlock_abi()
        if iso.landlock_abi:
            iso.levels.append(f"landlock(abi {iso.landlock_abi})")
        else:
            iso.notes["landlock"] = "unavailable: the kernel has no Landlock"
    else:
        iso.notes["landlock"] = "off (setting)" if cfg.get("landlock") is not None else \
            "off (the namespaces already confine writes)"
    return iso


def _bind_ro(src: str, root: str, hidden: list[str]) -> None:
    dst = root + src
    if os.path.islink(src):
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        if not os.path.lexists(dst):
            os.symlink(os.readlink(src), dst)
        return
    if os.path.isdir(src):
        os.makedirs(dst, exist_ok=True)
    else:
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        open(dst, "a").close()
    linux.mount(src, dst, None, linux.MS_BIND | linux.MS_REC)
    linux.mount(None, dst, None, linux.MS_BIND | linux.MS_REMOUNT | linux.MS_RDONLY | linux.MS_NOSUID | linux.MS_NODEV)
    for h in hidden:  # a hidden path inside a bound one gets an empty read-only tmpfs over it
        if h != src and h.startswith(src.rstrip("/") + "/") and os.path.isdir(h):
            linux.mount("tmpfs", root + h, "tmpfs", linux.MS_NOSUID | linux.MS_NODEV | linux.MS_RDONLY, "size=4k,mode=555")


def _visible_paths(hidden: list[str], extra: list[str]) -> list[str]:
    """The trees a program may read: system directories and the interpreter's prefixes.

    A prefix inside a hidden tree (a venv inside the host package's checkout) is bound on its own, so
    the checkout around it stays invisible.
    """
    venv = {os.path.abspath(sys.prefix), os.path.abspath(sys.exec_prefix)}
    cands = ["/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc"]
    cands += [sys.prefix, sys.exec_prefix, sys.base_prefix, sys.base_exec_prefix]
    cands += [p for p in sys.path if p and os.path.isdir(p)] + list(extra)
    out: list[str] = []
    for p in sorted({os.path.abspath(c) for c in cands}, key=len):
        if not os.path.lexists(p) or any(within(p, q) for q in out):
            continue
        if any(within(p, h) for h in hidden) and not any(within(p, v) for v in venv):
            continue
        out.append(p)
    return out


def staging_dir(visible: list[str]) -> str:
    """The directory the new root is staged in: one that neither holds nor lies in a tree the
    program must see (a venv may live under /tmp, and covering it would hide the solvers)."""
    for d in ("/mnt", "/media", "/srv", "/var/tmp", "/tmp"):
        if os.path.isdir(d) and not os.path.islink(d) and not any(within(p, d) or within(d, p) for p in visible):
            return d
    raise OSError("no directory to stage the sandbox root in (tried /mnt, /media, /srv, /var/tmp, /tmp)")


def setup_namespaces(cfg: dict) -> tuple[list[str], list[str]]:
    """New mount/net/IPC/UTS namespaces and a minimal read-only root; returns the active levels
    and the trees bound into it."""
    hidden = [os.path.abspath(h) for h in cfg.get("hide", [])]
    linux.unshare(linux.CLONE_NEWNS | linux.CLONE_NEWNET | linux.CLONE_NEWIPC | linux.CLONE_NEWUTS)
    levels = ["netns", "mountns", "ipcns", "utsns"]
    # no System V IPC at all in this namespace: a segment would outlive its program (a channel to
    # the next one) and hold memory no process's RSS shows
    for key, value in SYSV_IPC_OFF:
        with open(f"/proc/sys/kernel/{key}", "w") as f:
            f.write(value)
    levels.append("sysv-ipc-off")
    linux.mount(None, "/", None, linux.MS_REC | linux.MS_PRIVATE)
    visible = _visible_paths(hidden, cfg.get("extra_ro", []))
    # A tmpfs of this namespace holds the new root (nothing of it is visible outside). It goes on
    # a directory that neither holds nor lies in a tree the program must see: a venv may live
    # under /tmp (a checkout in /tmp), and covering it would hide the solvers.
    stage = staging_dir(visible)
    linux.mount("tmpfs", stage, "tmpfs", linux.MS_NOSUID | linux.MS_NODEV, "size=8m,mode=755")
    root = stage + "/root"
    os.mkdir(root, 0o755)
    linux.mount("tmpfs", root, "tmpfs", linux.MS_NOSUID | linux.MS_NODEV, "size=4m,mode=755")
    # the private /tmp first, so that a visible tree under /tmp is bound on top of it, not hidden;
    # programs never write here: each gets a fresh tmpfs stacked on it (:class:`FreshTmp`)
    os.makedirs(root + "/tmp", exist_ok=True)
    linux.mount("tmpfs", root + "/tmp", "tmpfs", linux.MS_NOSUID | linux.MS_NODEV, "size=4m,mode=755")
    for p in visible:
        _bind_ro(p, root, hidden)
    os.makedirs(root + "/dev", exist_ok=True)
    for dev in ("null", "zero", "full", "random", "urandom"):
        if os.path.exists("/dev/" + dev):
            open(f"{root}/dev/{dev}", "a").close()
            linux.mount("/dev/" + dev, f"{root}/dev/{dev}", None, linux.MS_BIND)
    for name, target in (("fd", "/proc/self/fd"), ("stdin", "/proc/self/fd/0"),
                         ("stdout", "/proc/self/fd/1"), ("stderr", "/proc/self/fd/2")):
        os.symlink(target, f"{root}/dev/{name}")
    os.makedirs(root + "/proc", exist_ok=True)
    linux.mount("proc", root + "/proc", "proc", linux.MS_NOSUID | linux.MS_NODEV | linux.MS_NOEXEC, "hidepid=2")
    levels.append("hidepid")
    if os.path.isdir("/sys"):
        os.makedirs(root + "/sys", exist_ok=True)
        linux.mount("/sys", root + "/sys", None, linux.MS_BIND)
        linux.mount(None, root + "/sys", None, linux.MS_BIND | linux.MS_REMOUNT | linux.MS_RDONLY | linux.MS_NOSUID | linux.MS_NODEV | linux.MS_NOEXEC)
    # the root itself read-only: a program writes only in its working directory under /tmp
    linux.mount(None, root, None, linux.MS_BIND | linux.MS_REMOUNT | linux.MS_RDONLY | linux.MS_NOSUID | linux.MS_NODEV)
    os.chdir(root)
    os.chroot(".")
    os.chdir("/")
    levels += ["chroot", "private-tmp", "readonly-root"]
    return levels, visible


class FreshTmp:
    """A fresh tmpfs on ``/tmp`` for every program, stacked on the server's private ``/tmp``.

    :meth:`cycle` detaches the previous program's tmpfs (its files, its full disk, the names it
    squatted) and mounts a new one. Trees the program must see that lie under ``/tmp`` (the venv
    of a checkout in /tmp) are bound in the base ``/tmp``; they are bound again on every new
    tmpfs from descriptors taken once, so the base is never unmounted."""

    def __init__(self, size_mb: int, binds: list[str]):
        self.size_mb = size_mb
        self.binds = [(p, os.open(p, os.O_PATH | os.O_CLOEXEC)) for p in binds if os.path.lexists(p)]
        self.mounted = False

    def cycle(self) -> None:
        """Detach the last program's tmpfs (if any) and mount a new one, with the binds."""
        if self.mounted:
            linux.umount("/tmp", linux.MNT_DETACH)
            self.mounted = False
        linux.mount("tmpfs", "/tmp", "tmpfs", linux.MS_NOSUID | linux.MS_NODEV, f"size={self.size_mb}m,mode=1777")
        self.mounted = True
        for path, fd in self.binds:
            if os.path.isdir(f"/proc/self/fd/{fd}"):
                os.makedirs(path, exist_ok=True)
            else:
                os.makedirs(os.path.dirname(path), exist_ok=True)
                open(path, "a").close()
            linux.mount(f"/proc/self/fd/{fd}", path, None, linux.MS_BIND | linux.MS_REC)
            linux.mount(None, path, None, linux.MS_BIND | linux.MS_REMOUNT | linux.MS_RDONLY | linux.MS_NOSUID
                        | linux.MS_NODEV)
