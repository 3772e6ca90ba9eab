"""Linux system calls the sandbox needs and Python has no names for, and the pipe protocol.

Standard library only: the server and its zygote load it with the rest of the package, before
the file-system view shrinks (``server.py``). ``mount``, ``unshare``, ``prctl`` and Landlock go
through ``ctypes``; seccomp through the optional ``pyseccomp`` package. Messages between the pool
and a server are length-prefixed JSON (:func:`read_frame`, :func:`write_frame`).
"""
from __future__ import annotations

import ctypes
import errno
import fcntl
import json
import os
import struct
import sys
import termios
import time

_FRAME = struct.Struct(">I")

# Linux constants (uapi headers); ctypes has no names for them
CLONE_NEWNS, CLONE_NEWUTS, CLONE_NEWIPC, CLONE_NEWNET = 0x20000, 0x4000000, 0x8000000, 0x40000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 32, 4096, 16384, 1 << 18
PR_SET_PDEATHSIG, PR_SET_DUMPABLE, PR_SET_CHILD_SUBREAPER, PR_SET_NO_NEW_PRIVS = 1, 4, 36, 38

libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
libc.madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]


def check(ret: int, what: str) -> int:
    if ret < 0 or ret == -1:
        e = ctypes.get_errno()
        raise OSError(e, f"{what}: {os.strerror(e)}")
    return ret


def prctl(option: int, arg: int) -> None:
    check(libc.prctl(option, ctypes.c_ulong(arg), 0, 0, 0), f"prctl({option})")


def mount(src, target, fstype, flags, data=None) -> None:
    enc = lambda s: None if s is None else s.encode()  # noqa: E731
    ret = libc.mount(enc(src), enc(target), enc(fstype), ctypes.c_ulong(flags), enc(data))
    check(ret, f"mount {target}")


MNT_DETACH = 2


def unshare(flags: int) -> None:
    check(libc.unshare(flags), "unshare")


def umount(target: str, flags: int = 0) -> None:
    check(libc.umount2(target.encode(), ctypes.c_int(flags)), f"umount {target}")


# ----------------------------------------------------------------------------- protocol
def read_frame(fd: int) -> dict | None:
    """One length-prefixed JSON message from ``fd`` (``None`` at end of file)."""
    head = read_exact(fd, 4)
    if head is None:
        return None
    (n,) = _FRAME.unpack(head)
    body = read_exact(fd, n)
    if body is None:
        return None
    return json.loads(body)


def write_frame(fd: int, msg: dict) -> None:
    body = json.dumps(msg, separators=(",", ":")).encode()
    data = memoryview(_FRAME.pack(len(body)) + body)
    while data:
        n = os.write(fd, data)
        data = data[n:]


def wait_read(fd: int, timeout: float) -> None:
    """Wait (at most ``timeout`` s, polling) until the reader of the pipe ``fd`` writes into has
    read everything in it (``FIONREAD``, which Linux answers on either end of a pipe)."""
    end = time.perf_counter() + timeout
    buf = bytearray(4)
    while time.perf_counter() < end:
        try:
            fcntl.ioctl(fd, termios.FIONREAD, buf)
        except OSError:
            return
        if not int.from_bytes(buf, sys.byteorder):
            return
        time.sleep(0.00005)


def read_exact(fd: int, n: int) -> bytes | None:
    chunks, got = [], 0
    while got < n:
        b = os.read(fd, n - got)
        if not b:
            return None
        chunks.append(b)
        got += len(b)
    return b"".join(chunks)


def write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


# ----------------------------------------------------------------------------- Landlock and seccomp
# Landlock (Linux >= 5.13): restrict writes to the working directory. ABI 1 rights; the
# truncate right of ABI 3 when present.
_LL_WRITE = (1 << 1) | (1 << 4) | (1 << 5) | (1 << 6) | (1 << 7) | (1 << 8) | (1 << 9) | (1 << 10) | (1 << 11) | (1 << 12)
_LL_EXEC, _LL_READ_FILE, _LL_READ_DIR, _LL_REFER, _LL_TRUNCATE = 1, 1 << 2, 1 << 3, 1 << 13, 1 << 14
SYS_landlock_create_ruleset, SYS_landlock_add_rule, SYS_landlock_restrict_self = 444, 445, 446


def landlock_abi() -> int:
    try:
        return max(0, libc.syscall(SYS_landlock_create_ruleset, None, ctypes.c_size_t(0), ctypes.c_uint32(1)))
    except Exception:
        return 0


def apply_landlock(workdir: str, abi: int) -> None:
    class Attr(ctypes.Structure):
        _fields_ = [("handled_access_fs", ctypes.c_uint64)]

    class PathBeneath(ctypes.Structure):
        _pack_ = 1
        _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]

    handled = _LL_WRITE | (_LL_TRUNCATE if abi >= 3 else 0)
    attr = Attr(handled)
    rs = check(libc.syscall(SYS_landlock_create_ruleset, ctypes.byref(attr), ctypes.c_size_t(ctypes.sizeof(attr)),
                              ctypes.c_uint32(0)), "landlock_create_ruleset")
    try:
        for path, access in ((workdir, handled), ("/dev", (1 << 1) | (_LL_TRUNCATE if abi >= 3 else 0))):
            fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
            try:
                rule = PathBeneath(access, fd)
                check(libc.syscall(SYS_landlock_add_rule, ctypes.c_int(rs), ctypes.c_int(1), ctypes.byref(rule),
                                     ctypes.c_uint32(0)), "landlock_add_rule")
            finally:
                os.close(fd)
        check(libc.syscall(SYS_landlock_restrict_self, ctypes.c_int(rs), ctypes.c_uint32(0)),
               "landlock_restrict_self")
    finally:
        os.close(rs)


def seccomp_filter():
    """A seccomp filter built with ``pyseccomp`` (``None`` when the package is missing): the
    default allows, and these fail with EPERM: sockets other than AF_UNIX, ptrace and
    process_vm_*, namespace and mount calls, kernel keyrings, bpf, perf, userfaultfd, io_uring
    (which would bypass the socket rule), module loading, reboot, swap, kexec."""
    try:
        import pyseccomp as sc
    except ImportError:
        return None
    f = sc.SyscallFilter(defaction=sc.ALLOW)
    deny = sc.ERRNO(errno.EPERM)
    for name in ("ptrace", "process_vm_readv", "process_vm_writev", "mount", "umount2", "unshare",
                 "setns", "chroot", "pivot_root", "keyctl", "add_key", "request_key", "bpf",
                 "perf_event_open", "userfaultfd", "io_uring_setup", "io_uring_enter",
                 "io_uring_register", "init_module", "finit_module", "delete_module", "reboot",
                 "swapon", "swapoff", "kexec_load", "kexec_file_load", "acct", "quotactl"):
        try:
            f.add_rule(deny, name)
        except Exception:
            pass  # not a syscall on this architecture
    f.add_rule(deny, "socket", sc.Arg(0, sc.NE, 1))  # AF_UNIX = 1
    f.add_rule(deny, "socketpair", sc.Arg(0, sc.NE, 1))
    return f


# ----------------------------------------------------------------------------- huge pages
MADV_HUGEPAGE, MADV_COLLAPSE = 14, 25
HUGE_PAGE = 2 << 20


def anonymous_chunks() -> list[int]:
    """The 2 MiB-aligned chunks of this process's private anonymous memory (the brk heap and
    the unnamed read-write mappings), each given by its address: what :func:`collapse` can back
    with one transparent huge page each."""
    out = []
    with open("/proc/self/maps") as f:
        regions = [line.split() for line in f]
    for parts in regions:
        if not parts[1].startswith("rw") or (len(parts) > 5 and parts[5] != "[heap]"):
            continue  # files, and the named specials ([stack], [vvar]), are not ours to move
        lo, hi = (int(x, 16) for x in parts[0].split("-"))
        out.extend(range(-(-lo // HUGE_PAGE) * HUGE_PAGE, hi // HUGE_PAGE * HUGE_PAGE, HUGE_PAGE))
    return out


MADV_POPULATE_READ = 22  # Linux 5.14: map pages readable, as a read of each would
MADV_POPULATE_WRITE = 23  # Linux 5.14: fault pages in writable, as a write to each would (no byte changes)
PAGE = os.sysconf("SC_PAGE_SIZE")
_EXCLUSIVE, _PRESENT = 1 << 56, 1 << 63  # /proc/PID/pagemap: mapped by this process alone; in memory


def private_writable_regions() -> list[tuple[int, int]]:
    """``(start, end)`` of this process's private writable mappings (heap, data, anonymous)."""
    out = []
    with open("/proc/self/maps") as f:
        for line in f:
            parts = line.split()
            if parts[1].startswith("rw") and parts[1][3] == "p" and not (len(parts) > 5 and parts[5].startswith("[v")):
                lo, hi = (int(x, 16) for x in parts[0].split("-"))
                out.append((lo, hi))
    return out


def file_regions() -> list[tuple[int, int]]:
    """``(start, end)`` of this process's readable mappings of files (code and read-only data of
    the interpreter and the libraries); a fork gets no page-table entries for them, so a child
    maps each page it reads on first touch."""
    out = []
    with open("/proc/self/maps") as f:
        for line in f:
            parts = line.split()
            if len(parts) > 5 and parts[5].startswith("/") and parts[1][0] == "r" and parts[1][1] != "w":
                lo, hi = (int(x, 16) for x in parts[0].split("-"))
                out.append((lo, hi))
    return out


def written_ranges(regions: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """``(address, length)`` runs of pages in ``regions`` this process holds alone (``pagemap``:
    present and exclusively mapped): in a fork, the pages it has written (copied on write) or
    touched first since."""
    return _page_runs(regions, _PRESENT | _EXCLUSIVE)


def mapped_ranges(regions: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """``(address, length)`` runs of pages in ``regions`` this process has mapped (``pagemap``:
    present): in a fork, for the :func:`file_regions`, the pages it has read since."""
    return _page_runs(regions, _PRESENT)


def _page_runs(regions: list[tuple[int, int]], flags: int) -> list[tuple[int, int]]:
    out: list[list[int]] = []
    with open("/proc/self/pagemap", "rb") as f:
        for lo, hi in regions:
            f.seek(lo // PAGE * 8)
            entries = memoryview(f.read((hi - lo) // PAGE * 8)).cast("Q")
            run = None
            for k, e in enumerate(entries):
                addr = lo + k * PAGE
                if (e & flags) == flags:
                    if run is not None and run[0] + run[1] == addr:
                        run[1] += PAGE
                    else:
                        run = [addr, PAGE]
                        out.append(run)
    return [(a, n) for a, n in out]


def populate_write(ranges: list[tuple[int, int]]) -> None:
    """Fault ``ranges`` in writable now (``MADV_POPULATE_WRITE``): the copies a first write to a
    page shared with the zygote makes, made before the program that would write it arrives."""
    _advise(ranges, MADV_POPULATE_WRITE)


def populate_read(ranges: list[tuple[int, int]]) -> None:
    """Map ``ranges`` of file pages now (``MADV_POPULATE_READ``): the page-table entries a first
    read of each would make, a fault apiece (~2 us here), made before the program that would read
    them arrives."""
    _advise(ranges, MADV_POPULATE_READ)


def _advise(ranges: list[tuple[int, int]], advice: int) -> None:
    for addr, length in ranges:
        libc.madvise(addr, length, advice)  # refused (an old kernel): the program pays


def collapse(address: int) -> bool:
    """Back the 2 MiB at ``address`` with one transparent huge page now (``MADV_COLLAPSE``,
    Linux 6.1; allowed where THP is ``madvise`` or ``always``). False where it cannot be (a
    thread stack's guard page, an unpopulated range, no THP)."""
    libc.madvise(address, HUGE_PAGE, MADV_HUGEPAGE)
    return libc.madvise(address, HUGE_PAGE, MADV_COLLAPSE) == 0


# ----------------------------------------------------------------------------- /proc
PF_EXITING = 0x4  # include/linux/sched.h: set at the start of do_exit(), before the memory goes
_CLK_TCK = os.sysconf("SC_CLK_TCK")


def all_exiting(pid: int) -> bool:
    """Whether every thread of process ``pid`` has begun to exit (``PF_EXITING``: none runs user
    code again); False when it is gone. A thread group's leader can exit alone (``SYS_exit``)
    while its other threads run on; an ``exit_group`` or a kill marks them all."""
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
        for task in tasks:
            with open(f"/proc/{pid}/task/{task}/stat", "rb") as f:
                stat = f.read()
            fields = stat[stat.rfind(b")") + 2:].split()
            if len(fields) < 7 or not int(fields[6]) & PF_EXITING:
                return False
    except (OSError, ValueError):
        return False  # gone, or a thread that went between the listing and the read: look again later
    return bool(tasks)


def exit_state(pid: int) -> tuple[int, float] | None:
    """``(wait status, CPU seconds)`` of process ``pid`` once it has begun to exit, read from
    ``/proc``; ``None`` while it runs or when it is gone.

    The kernel marks a task ``PF_EXITING`` before it frees its memory, and frees the memory
    before the parent can wait for it: for a fork of a large image (the sandbox's children share
    ~200 MB) the second step takes milliseconds. From ``PF_EXITING`` on the task runs no more
    user code and its CPU time grows only by the kernel's teardown; its exit status (``stat``
    field 52, in the ``waitpid`` form, readable by a process that may ptrace it) is set a few
    instructions after the flag, so a status of 0 can mean "not yet": the caller compares it
    with the status it expects. CPU time is the sum of the threads' ``schedstat`` run times
    (nanoseconds), or the clock-tick total of ``stat`` where that is more (threads that ended)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
    except OSError:
        return None
    fields = stat[stat.rfind(b")") + 2:].split()
    if len(fields) < 50 or not int(fields[6]) & PF_EXITING:
        return None
    ticks = (int(fields[11]) + int(fields[12])) / _CLK_TCK
    run_ns = 0
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/schedstat", "rb") as f:
                run_ns += int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        pass
    return int(fields[49]), max(ticks, run_ns / 1e9)
