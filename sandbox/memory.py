"""The memory a program's processes hold together, from ``/proc``: the budget
``Limits.memory_mb`` is checked against.

One process alone is bounded by RLIMIT_AS; a program that forks (or shares memory between
processes) is not, so every few milliseconds the supervisor sums what the program's whole
process tree holds (:func:`program_kb`). No cgroup is created or joined: the sum is read from
the processes' proportional set sizes and the shared-memory objects they map or hold open.

Runs in the server process (standard library only).
"""
from __future__ import annotations

import os


def program_kb(pids: list[int], zygote_pid: int) -> int:
    """The memory the processes ``pids`` (a program's, all forked from the zygote
    ``zygote_pid``) hold together, in KiB; 0 while there is one process and it holds no shared
    memory object (RLIMIT_AS bounds it, and reading ``smaps_rollup`` is not free).

    Mapped memory, from proportional set sizes (PSS): the PSS of the program's processes and
    of the zygote sum to every page they map exactly once, and the zygote's resident set is
    the image the children share with it, so sum(PSS of the program) + PSS(zygote) -
    RSS(zygote) is what the program mapped (a sum of private memory would miss pages two of
    its processes share, a sum of RSS would count the image once per child). Shared-memory
    objects (``MAP_SHARED`` anonymous regions, memfds) are counted once each at their
    allocated size, mapped or only held open: a page of one need not be in any page table
    (two children that never touch the region they inherited hide it from every RSS, and a
    memfd written to and never mapped is in none). Files of the program's ``/tmp`` are
    bounded by its size (``tmp_mb``); kernel buffers (pipes, sockets) are not counted."""
    objects: dict[tuple[int, int], int] = {}
    for p in pids:
        # a lone process's mappings are in its address space (RLIMIT_AS): only what it holds
        # open can be elsewhere, and reading the maps of every program every 10 ms is not free
        shared_objects(p, objects, maps=len(pids) > 1)
    if len(pids) < 2 and not objects:
        return 0
    mapped = 0
    for p in pids:
        rss, pss, pss_shmem = smaps_kb(p)
        mapped += pss - pss_shmem  # shared-memory objects are counted whole below
    z_rss, z_pss, _ = smaps_kb(zygote_pid)
    return max(0, mapped + z_pss - z_rss) + sum(objects.values())


def smaps_kb(pid: int) -> tuple[int, int, int]:
    """``(Rss, Pss, Pss_Shmem)`` of a process, in KiB (zeros when it is gone)."""
    vals = {"Rss": 0, "Pss": 0, "Pss_Shmem": 0}
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                key, _, rest = line.partition(":")
                if key in vals:
                    vals[key] = int(rest.split()[0])
    except (OSError, ValueError, IndexError):
        pass
    return vals["Rss"], vals["Pss"], vals["Pss_Shmem"]


#: shared-memory objects as /proc names them (files of the program's /tmp are bounded by tmp_mb)
SHMEM_NAMES = ("/memfd:", "/dev/zero (deleted)", "/SYSV")


def shared_objects(pid: int, out: dict[tuple[int, int], int], maps: bool = True) -> None:
    """Add the shared-memory objects a process holds open (and, with ``maps``, maps),
    ``(dev, inode) -> KiB``."""
    paths = []
    try:
        if maps:
            with open(f"/proc/{pid}/maps") as f:
                for line in f:
                    parts = line.split(maxsplit=5)
                    if len(parts) == 6 and parts[1][3] == "s" and parts[5].startswith(SHMEM_NAMES):
                        paths.append(f"/proc/{pid}/map_files/{parts[0]}")
        fd_dir = f"/proc/{pid}/fd"
        for fd in os.listdir(fd_dir):
            try:
                target = os.readlink(f"{fd_dir}/{fd}")
            except OSError:
                continue
            if target.startswith(SHMEM_NAMES):
                paths.append(f"{fd_dir}/{fd}")
    except OSError:
        return
    for path in paths:
        try:
            st = os.stat(path)
        except OSError:
            continue
        out[(st.st_dev, st.st_ino)] = st.st_blocks // 2  # 512-byte blocks actually allocated
