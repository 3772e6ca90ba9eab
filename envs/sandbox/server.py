"""The sandbox fork server: one clean interpreter, solvers imported once, one child per program.

Started by :class:`solvergym.envs.sandbox.client.SandboxPool` as
``python -I server.py CONFIG_JSON`` with a minimal environment: a fresh interpreter that never
held an instance, a seed or a ground truth (DESIGN.md, "Sandbox"; the SAT-RL rollouts of §3.4 run
thousands of model-written programs per step). It speaks length-prefixed JSON over its stdin and
stdout (the requests carry only code and limits) and never imports solvergym: everything it needs
is in this file, ``instrument.py`` beside it, the standard library and the solvers.

Start-up, in this order:

1. the protocol pipes move to high descriptors; 0/1/2 point at ``/dev/null`` so a solver's banner
   (Gurobi prints one) cannot corrupt the protocol;
2. ``PR_SET_CHILD_SUBREAPER``: every process a program spawns stays a descendant of this server,
   so none can escape the clean-up by double-forking;
3. a small *reaper* helper is forked while the interpreter is still small: to end every process
   of a child's uid it forks, takes that uid and sends ``kill(-1, SIGKILL)`` (what a uid may
   signal is exactly its own processes);
4. isolation ("namespaces" level, when running as root and the kernel allows it): new mount,
   network, IPC and UTS namespaces; a new root on a tmpfs holding read-only binds of the system
   directories and the interpreter's prefixes only (so neither solvergym's sources nor datasets
   nor anybody's home are there), a fresh ``/proc`` mounted with ``hidepid=2`` (a program sees
   only its own processes), a private size-bounded ``/tmp``; then ``chroot``;
5. the solvers are imported and warmed (z3's main context, one tiny solve each), the
   instrumentation patches installed, the heap frozen (``gc.freeze``: children do not touch the
   shared pages when they collect);
6. a hello message reports the pid, the active isolation levels, import times and memory.

Per program (the child, forked from here): own process group, stdin on ``/dev/null``, stdout and
stderr into pipes this server drains and caps (the tail is kept), a fresh empty working directory
owned by a fresh uid (uid_base + counter: no two children share a uid, so RLIMIT_NPROC and the
reaper are per program), rlimits (CPU, address space above the server's own, file size, process
count, core 0), root dropped, ``PR_SET_NO_NEW_PRIVS``, parent-death signal, optional Landlock
(writes only in the working directory) and seccomp (through the ``pyseccomp`` package), a clean
environment, then the program runs as ``__main__``. The wall-clock timeout kills the whole
process group and then every process of the child's uid.
"""
from __future__ import annotations

import ctypes
import errno
import gc
import importlib.util
import io
import json
import os
import resource
import select
import shutil
import signal
import struct
import sys
import time
import traceback

_HERE = os.path.dirname(os.path.abspath(__file__))
PROTOCOL_VERSION = 1
REPORT_FD = 1000  # where the child's instrumentation writes its record
REPORT_MAX = 16 << 20
SETUP_FAILED = 125  # a child that could not be set up exits with this code
CEIL_NPROC = 1024  # RLIMIT_NPROC of a child waiting for its program (lowered when it arrives)
_FRAME = struct.Struct(">I")

# Linux constants (uapi headers); ctypes has no names for them
CLONE_NEWNS, CLONE_NEWUTS, CLONE_NEWIPC, CLONE_NEWNET = 0x20000, 0x4000000, 0x8000000, 0x40000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 32, 4096, 16384, 1 << 18
PR_SET_PDEATHSIG, PR_SET_DUMPABLE, PR_SET_CHILD_SUBREAPER, PR_SET_NO_NEW_PRIVS = 1, 4, 36, 38

_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long


def _check(ret: int, what: str) -> int:
    if ret < 0 or ret == -1:
        e = ctypes.get_errno()
        raise OSError(e, f"{what}: {os.strerror(e)}")
    return ret


def _prctl(option: int, arg: int) -> None:
    _check(_libc.prctl(option, ctypes.c_ulong(arg), 0, 0, 0), f"prctl({option})")


def _mount(src, target, fstype, flags, data=None) -> None:
    enc = lambda s: None if s is None else s.encode()  # noqa: E731
    ret = _libc.mount(enc(src), enc(target), enc(fstype), ctypes.c_ulong(flags), enc(data))
    _check(ret, f"mount {target}")


# ----------------------------------------------------------------------------- protocol
def read_frame(fd: int) -> dict | None:
    """One length-prefixed JSON message from ``fd`` (``None`` at end of file)."""
    head = _read_exact(fd, 4)
    if head is None:
        return None
    (n,) = _FRAME.unpack(head)
    body = _read_exact(fd, n)
    if body is None:
        return None
    return json.loads(body)


def write_frame(fd: int, msg: dict) -> None:
    body = json.dumps(msg, separators=(",", ":")).encode()
    data = memoryview(_FRAME.pack(len(body)) + body)
    while data:
        n = os.write(fd, data)
        data = data[n:]


def _read_exact(fd: int, n: int) -> bytes | None:
    chunks, got = [], 0
    while got < n:
        b = os.read(fd, n - got)
        if not b:
            return None
        chunks.append(b)
        got += len(b)
    return b"".join(chunks)


# ----------------------------------------------------------------------------- isolation
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
    _mount(src, dst, None, MS_BIND | MS_REC)
    _mount(None, dst, None, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV)
    for h in hidden:  # a hidden path inside a bound one gets an empty read-only tmpfs over it
        if h != src and h.startswith(src.rstrip("/") + "/") and os.path.isdir(h):
            _mount("tmpfs", root + h, "tmpfs", MS_NOSUID | MS_NODEV | MS_RDONLY, "size=4k,mode=555")


def _within(path: str, tree: str) -> bool:
    return path == tree or path.startswith(tree.rstrip("/") + "/")


def _visible_paths(hidden: list[str], extra: list[str]) -> list[str]:
    """The trees a program may read: system directories and the interpreter's prefixes.

    A prefix inside a hidden tree (a venv inside the solvergym checkout) is bound on its own, so
    the checkout around it stays invisible.
    """
    venv = {os.path.abspath(sys.prefix), os.path.abspath(sys.exec_prefix)}
    cands = ["/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc"]
    cands += [sys.prefix, sys.exec_prefix, sys.base_prefix, sys.base_exec_prefix]
    cands += [p for p in sys.path if p and os.path.isdir(p)] + list(extra)
    out: list[str] = []
    for p in sorted({os.path.abspath(c) for c in cands}, key=len):
        if not os.path.lexists(p) or any(_within(p, q) for q in out):
            continue
        if any(_within(p, h) for h in hidden) and not any(_within(p, v) for v in venv):
            continue
        out.append(p)
    return out


def _staging_dir(visible: list[str]) -> str:
    for d in ("/mnt", "/media", "/srv", "/var/tmp", "/tmp"):
        if os.path.isdir(d) and not os.path.islink(d) and not any(_within(p, d) or _within(d, p) for p in visible):
            return d
    raise OSError("no directory to stage the sandbox root in (tried /mnt, /media, /srv, /var/tmp, /tmp)")


def setup_namespaces(cfg: dict) -> list[str]:
    """New mount/net/IPC/UTS namespaces and a minimal read-only root; returns the active levels."""
    hidden = [os.path.abspath(h) for h in cfg.get("hide", [])]
    _check(_libc.unshare(CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS), "unshare")
    levels = ["netns", "mountns", "ipcns", "utsns"]
    _mount(None, "/", None, MS_REC | MS_PRIVATE)
    visible = _visible_paths(hidden, cfg.get("extra_ro", []))
    # A tmpfs of this namespace holds the new root (nothing of it is visible outside). It goes on
    # a directory that neither holds nor lies in a tree the program must see: a venv may live
    # under /tmp (a checkout in /tmp), and covering it would hide the solvers.
    stage = _staging_dir(visible)
    _mount("tmpfs", stage, "tmpfs", MS_NOSUID | MS_NODEV, "size=8m,mode=755")
    root = stage + "/root"
    os.mkdir(root, 0o755)
    _mount("tmpfs", root, "tmpfs", MS_NOSUID | MS_NODEV, "size=4m,mode=755")
    # the private /tmp first, so that a visible tree under /tmp is bound on top of it, not hidden
    os.makedirs(root + "/tmp", exist_ok=True)
    _mount("tmpfs", root + "/tmp", "tmpfs", MS_NOSUID | MS_NODEV,
           f"size={int(cfg.get('tmp_mb', 256))}m,mode=1777")
    for p in visible:
        _bind_ro(p, root, hidden)
    os.makedirs(root + "/dev", exist_ok=True)
    for dev in ("null", "zero", "full", "random", "urandom"):
        if os.path.exists("/dev/" + dev):
            open(f"{root}/dev/{dev}", "a").close()
            _mount("/dev/" + dev, f"{root}/dev/{dev}", None, MS_BIND)
    for name, target in (("fd", "/proc/self/fd"), ("stdin", "/proc/self/fd/0"),
                         ("stdout", "/proc/self/fd/1"), ("stderr", "/proc/self/fd/2")):
        os.symlink(target, f"{root}/dev/{name}")
    os.makedirs(root + "/proc", exist_ok=True)
    _mount("proc", root + "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, "hidepid=2")
    levels.append("hidepid")
    if os.path.isdir("/sys"):
        os.makedirs(root + "/sys", exist_ok=True)
        _mount("/sys", root + "/sys", None, MS_BIND)
        _mount(None, root + "/sys", None, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC)
    # the root itself read-only: a program writes only in its working directory under /tmp
    _mount(None, root, None, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV)
    os.chdir(root)
    os.chroot(".")
    os.chdir("/")
    levels += ["chroot", "private-tmp", "readonly-root"]
    return levels


# Landlock (Linux >= 5.13): restrict writes to the working directory. ABI 1 rights; the
# truncate right of ABI 3 when present.
_LL_WRITE = (1 << 1) | (1 << 4) | (1 << 5) | (1 << 6) | (1 << 7) | (1 << 8) | (1 << 9) | (1 << 10) | (1 << 11) | (1 << 12)
_LL_EXEC, _LL_READ_FILE, _LL_READ_DIR, _LL_REFER, _LL_TRUNCATE = 1, 1 << 2, 1 << 3, 1 << 13, 1 << 14
SYS_landlock_create_ruleset, SYS_landlock_add_rule, SYS_landlock_restrict_self = 444, 445, 446


def landlock_abi() -> int:
    try:
        return max(0, _libc.syscall(SYS_landlock_create_ruleset, None, ctypes.c_size_t(0), ctypes.c_uint32(1)))
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
    rs = _check(_libc.syscall(SYS_landlock_create_ruleset, ctypes.byref(attr), ctypes.c_size_t(ctypes.sizeof(attr)),
                              ctypes.c_uint32(0)), "landlock_create_ruleset")
    try:
        for path, access in ((workdir, handled), ("/dev", (1 << 1) | (_LL_TRUNCATE if abi >= 3 else 0))):
            fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
            try:
                rule = PathBeneath(access, fd)
                _check(_libc.syscall(SYS_landlock_add_rule, ctypes.c_int(rs), ctypes.c_int(1), ctypes.byref(rule),
                                     ctypes.c_uint32(0)), "landlock_add_rule")
            finally:
                os.close(fd)
        _check(_libc.syscall(SYS_landlock_restrict_self, ctypes.c_int(rs), ctypes.c_uint32(0)),
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


# ----------------------------------------------------------------------------- the reaper
def _start_reaper() -> tuple[int, int, int]:
    """Fork the small helper that ends every process of a uid. Returns (pid, request fd, reply fd)."""
    req_r, req_w = os.pipe()
    rep_r, rep_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(req_w)
            os.close(rep_r)
            while True:
                data = _read_exact(req_r, 4)
                if data is None:
                    os._exit(0)
                (uid,) = _FRAME.unpack(data)
                k = os.fork()
                if k == 0:
                    try:
                        os.setgroups([])
                        os.setgid(uid)
                        os.setuid(uid)
                        for _ in range(4):  # a process forking while we kill: sweep until quiet
                            try:
                                os.kill(-1, signal.SIGKILL)
                            except ProcessLookupError:
                                break
                    finally:
                        os._exit(0)
                os.waitpid(k, 0)
                os.write(rep_w, b"k")
        except BaseException:
            os._exit(1)
    os.close(req_r)
    os.close(rep_w)
    return pid, req_w, rep_r


# ----------------------------------------------------------------------------- the server
class Server:
    def __init__(self, cfg: dict):
        self.cfg = cfg
        self.uid_base = int(cfg.get("uid_base", 0))
        self.uid_span = int(cfg.get("uid_span", 4096))
        self.counter = 0
        self.root = os.geteuid() == 0
        self.levels: list[str] = []
        self.notes: dict[str, str] = {}
        self.landlock = 0
        self.seccomp = None
        self.reaper = None
        self.vm_base_kb = 0
        self.ready: _Child | None = None

    # -- start-up ---------------------------------------------------------------------------
    def start(self, in_fd: int, out_fd: int) -> None:
        self.in_fd, self.out_fd = in_fd, out_fd
        t0 = time.perf_counter()
        # loaded before the file system view shrinks: the file is not visible afterwards
        spec = importlib.util.spec_from_file_location("_solvergym_sandbox_instrument",
                                                      self.cfg["instrument_path"])
        self.instrument = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = self.instrument
        spec.loader.exec_module(self.instrument)
        _prctl(PR_SET_CHILD_SUBREAPER, 1)
        if self.root:
            self.reaper = _start_reaper()
        want = self.cfg.get("isolation", "auto")
        bwrap = self.cfg.get("bwrap", "off (setting)")
        if bwrap == "active":
            self.levels += ["bwrap", "netns", "ipcns", "utsns", "pidns", "mountns", "readonly-root",
                            "private-tmp", "hidden-package"]
        else:
            self.notes["bwrap"] = bwrap
        if bwrap == "active":
            pass  # the namespaces are bubblewrap's
        elif want in ("auto", "namespaces") and self.root:
            try:
                self.levels += setup_namespaces(self.cfg)
            except OSError as e:
                if want == "namespaces":
                    raise
                self.notes["namespaces"] = f"unavailable: {e}"
        elif want != "basic":
            self.notes["namespaces"] = "unavailable: needs root (CAP_SYS_ADMIN)"
        else:
            self.notes["namespaces"] = "off (isolation='basic')"
        self.levels += ["rlimits", "own-process-group", "subreaper", "no-new-privs", "clean-env",
                        "fresh-workdir"]
        if self.root:
            self.levels += ["uid-drop"]
        else:
            self.notes["uid-drop"] = "unavailable: not running as root"
        want_ll = self.cfg.get("landlock")
        if want_ll is None:  # auto: the write confinement the namespaces would otherwise give
            want_ll = "readonly-root" not in self.levels
        if want_ll:
            self.landlock = landlock_abi()
            if self.landlock:
                self.levels.append(f"landlock(abi {self.landlock})")
            else:
                self.notes["landlock"] = "unavailable: the kernel has no Landlock"
        else:
            self.notes["landlock"] = "off (setting)" if self.cfg.get("landlock") is not None else \
                "off (the namespaces already confine writes)"
        if self.cfg.get("seccomp"):
            self.seccomp = seccomp_filter()
            if self.seccomp is not None:
                self.levels.append("seccomp")
            else:
                self.notes["seccomp"] = "unavailable: pip install pyseccomp (and libseccomp2)"
        else:
            self.notes["seccomp"] = "off (setting)"
        t_iso = time.perf_counter() - t0
        self.import_ms, self.install = self._import_solvers()
        self._hide_solvergym()
        gc.collect()
        gc.freeze()
        self.vm_base_kb = _status_kb("VmSize")
        write_frame(out_fd, {
            "hello": PROTOCOL_VERSION,
            "pid": os.getpid(),
            "isolation": self.levels,
            "isolation_notes": self.notes,
            "isolation_ms": round(1000 * t_iso, 1),
            "import_ms": self.import_ms,
            "instrumentation": self.install,
            "rss_kb": _status_kb("VmRSS"),
            "vms_kb": self.vm_base_kb,
            "python": sys.version.split()[0],
            "threads": self.threads,
        })

    def _import_solvers(self):
        times = {}
        for mod, stmt in (
            ("z3", "import z3"),
            ("pysmt", "import pysmt.shortcuts, pysmt.typing, pysmt.smtlib.script"),
            ("pysat", "import pysat.formula, pysat.solvers, pysat.card"),
            ("ortools", "from ortools.sat.python import cp_model; from ortools.linear_solver import pywraplp"),
            ("sympy", "import sympy, sympy.logic, sympy.logic.inference, sympy.logic.boolalg"),
            ("gurobipy", "import gurobipy"),
            ("common", "import itertools, math, collections, functools, re, random, fractions, decimal, "
                       "heapq, bisect, string, typing, dataclasses, copy, operator, statistics, datetime, "
                       "numpy, json, traceback, linecache"),
        ):
            t = time.perf_counter()
            try:
                exec(stmt, {})
                times[mod] = round(1000 * (time.perf_counter() - t), 1)
            except Exception as e:  # a solver that is not installed is not offered
                times[mod] = f"unavailable: {type(e).__name__}: {e}"
        self._warm()
        install = self.instrument.install()
        # fork() copies only the calling thread. OR-Tools' import starts one idle thread (parked on a
        # futex, holding nothing); the count is reported so that a new one does not go unnoticed.
        self.threads = len(os.listdir("/proc/self/task"))
        return times, install

    def _warm(self) -> None:
        # First-call costs (z3's main context ~9 ms, sympy's SAT machinery ~25 ms) paid once here
        # instead of in every child.
        for code in (
            "import z3\nz3.main_ctx()\ns = z3.Solver(); a, b = z3.Bools('a b'); s.add(z3.Or(a, z3.Not(b))); s.check(); s.model()",
            "from pysmt.shortcuts import Symbol, Or, Not, Solver\na = Symbol('a')\n"
            "with Solver(name='z3') as s:\n    s.add_assertion(Or(a, Not(a))); s.solve()",
            "from pysat.solvers import Solver\nwith Solver(name='g3', bootstrap_with=[[1, -2]]) as s: s.solve()",
            "from ortools.sat.python import cp_model\nm = cp_model.CpModel(); x = m.NewBoolVar('x')\n"
            "m.AddBoolOr([x]); s = cp_model.CpSolver(); s.parameters.num_workers = 1; s.Solve(m)",
            "from sympy import symbols\nfrom sympy.logic.inference import satisfiable\n"
            "a, b = symbols('a b'); satisfiable((a | ~b) & (a | b))",
        ):
            try:
                exec(code, {"__name__": "__warmup__"})
            except Exception:
                pass

    def _hide_solvergym(self) -> None:
        # Belt and braces next to the file-system view: no finder left that maps solvergym.
        for finder in list(sys.meta_path):
            mapping = getattr(finder, "MAPPING", None) or getattr(getattr(finder, "__self__", None), "MAPPING", None)
            module = str(getattr(finder, "__module__", "")) + " " + type(finder).__module__
            if "__editable__" in module or (isinstance(mapping, dict) and "solvergym" in mapping):
                sys.meta_path.remove(finder)
        for name in list(sys.modules):
            if name == "solvergym" or name.startswith("solvergym."):
                del sys.modules[name]
        hidden = [os.path.abspath(h) for h in self.cfg.get("hide", [])]
        venv = os.path.abspath(sys.prefix)
        sys.path[:] = [p for p in sys.path if p and (
            _within(os.path.abspath(p), venv) or not any(_within(os.path.abspath(p), h) for h in hidden))]

    # -- serving ----------------------------------------------------------------------------
    def serve(self) -> None:
        try:
            self._serve()
        finally:
            self._discard_ready()

    def _serve(self) -> None:
        while True:
            if self.ready is None:
                self.ready = self._prefork()
            req = read_frame(self.in_fd)
            if req is None:
                return
            if req.get("ping"):
                write_frame(self.out_fd, {"pong": req["ping"], "pid": os.getpid()})
                continue
            try:
                resp = self.run(req)
            except Exception as e:  # never leave the client without an answer
                resp = {"status": "killed", "reason": f"sandbox server error: {type(e).__name__}: {e}",
                        "exit_code": None, "signal": None, "stdout": "", "stderr": traceback.format_exc()[-2000:],
                        "stdout_bytes": 0, "stderr_bytes": 0, "duration_s": 0.0, "cpu_s": 0.0, "report": None}
            resp["id"] = req.get("id")
            write_frame(self.out_fd, resp)
            if resp.get("client_gone"):
                return

    def run(self, req: dict) -> dict:
        lim = req.get("limits") or {}
        timeout = float(lim.get("timeout_s", 10.0))
        keep = int(lim.get("keep_bytes", 65536))
        out_limit = int(lim.get("output_bytes", 1 << 20))
        body = json.dumps({"code": req.get("code", ""), "limits": lim}).encode()
        for attempt in range(2):
            child = self.ready or self._prefork()
            self.ready = None
            t0 = time.perf_counter()
            try:
                _write_all(child.ctl, _FRAME.pack(len(body)) + body)
                os.close(child.ctl)
                break
            except OSError:  # the waiting child is gone (killed from outside): use a fresh one
                for fd in (child.ctl, child.out, child.err, child.rep):
                    try:
                        os.close(fd)
                    except OSError:
                        pass
                self._cleanup(child)
                if attempt:
                    raise
        result = self._supervise(child, timeout, _cpu_limit(lim), keep, out_limit, t0)
        self._cleanup(child)
        return result

    def _prefork(self) -> "_Child":
        """Fork the next child now, while no program is waiting: it takes its uid, working
        directory and descriptors, then blocks until a program arrives (the fork and the set-up
        are off the latency path of the next request)."""
        self.counter += 1
        uid = self.uid_base + self.counter % self.uid_span if self.root else os.getuid()
        workdir = self._workdir()
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        rep_r, rep_w = os.pipe()
        ctl_r, ctl_w = os.pipe()
        for fd in (out_r, err_r, rep_r, ctl_w):
            os.set_inheritable(fd, False)
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child never returns
            self._child(uid, workdir, out_w, err_w, rep_w, ctl_r)
        for fd in (out_w, err_w, rep_w, ctl_r):
            os.close(fd)
        try:
            os.setpgid(pid, pid)
        except OSError:
            pass  # the child did it first, or is already gone
        return _Child(pid, uid, workdir, out_r, err_r, rep_r, ctl_w)

    def _discard_ready(self) -> None:
        child, self.ready = self.ready, None
        if child is not None:
            try:
                os.close(child.ctl)
            except OSError:
                pass
            for fd in (child.out, child.err, child.rep):
                try:
                    os.close(fd)
                except OSError:
                    pass
            self._cleanup(child)

    def _workdir(self) -> str:
        base = "/tmp" if "private-tmp" in self.levels else (self.cfg.get("tmp_root") or "/tmp")
        return os.path.join(base, f"sg-{os.getpid()}-{self.counter}")

    def _supervise(self, child: "_Child", timeout, cpu_limit, keep, out_limit, t0) -> dict:
        pid, out_r, err_r, rep_r = child.pid, child.out, child.err, child.rep
        streams = {out_r: _Tail(keep), err_r: _Tail(keep)}
        report = bytearray()
        pidfd = os.pidfd_open(pid)
        poller = select.poll()
        for fd in (out_r, err_r, rep_r):
            poller.register(fd, select.POLLIN)
        poller.register(pidfd, select.POLLIN)
        poller.register(self.in_fd, select.POLLHUP | select.POLLERR)
        open_fds = {out_r, err_r, rep_r}
        deadline = t0 + timeout
        killed_for = None
        exited = False
        client_gone = False
        drain_until = None
        while True:
            now = time.perf_counter()
            if exited and (not open_fds or now >= drain_until or client_gone):
                break
            if not exited and now >= deadline and killed_for is None:
                killed_for = "timeout"
                self._kill_group(pid)
            # a program may close its pipes and go on computing: until it exits, the deadline rules
            wait = (drain_until - now) if exited else max(0.0, deadline - now)
            events = poller.poll(int(1000 * min(wait, 0.5)) + 1 if wait > 0 else 1)
            for fd, ev in events:
                if fd == pidfd:
                    if not exited:
                        exited = True
                        # descendants may still hold the pipes: give them a moment, then clean up
                        drain_until = time.perf_counter() + 0.05
                        poller.unregister(pidfd)
                    continue
                if fd == self.in_fd:
                    client_gone = True
                    killed_for = killed_for or "client"
                    self._kill_group(pid)
                    poller.unregister(self.in_fd)
                    continue
                data = os.read(fd, 1 << 16) if ev & (select.POLLIN | select.POLLHUP | select.POLLERR) else b""
                if not data:
                    poller.unregister(fd)
                    open_fds.discard(fd)
                    continue
                if fd == rep_r:
                    if len(report) + len(data) <= REPORT_MAX:
                        report += data
                    continue
                streams[fd].add(data)
                if killed_for is None and streams[out_r].total + streams[err_r].total > out_limit:
                    killed_for = "output_limit"
                    self._kill_group(pid)
        for fd in (out_r, err_r, rep_r):
            os.close(fd)
        if not exited:
            self._kill_group(pid)
        _, wstatus, ru = os.wait4(pid, 0)
        os.close(pidfd)
        duration = time.perf_counter() - t0
        cpu = ru.ru_utime + ru.ru_stime
        rep = None
        if report:
            try:
                rep = json.loads(report.decode("utf-8", "replace"))
            except ValueError:
                rep = {"formula_error": "the instrumentation record was unreadable"}
        return _classify(wstatus, killed_for, streams[out_r], streams[err_r], rep, duration, cpu, timeout,
                         cpu_limit, client_gone)

    def _kill_group(self, pid: int) -> None:
        try:
            os.killpg(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass

    def _cleanup(self, child: "_Child") -> None:
        uid, pid, workdir = child.uid, child.pid, child.workdir
        self._kill_group(pid)
        swept = False
        deadline = time.perf_counter() + 2.0
        while True:
            self._reap_zombies()
            leftovers = self._descendants()
            if not leftovers or time.perf_counter() > deadline:
                break
            if not swept and self.reaper is not None:
                # one signal to every process of the uid, however it re-grouped itself
                _, req_w, rep_r = self.reaper
                os.write(req_w, _FRAME.pack(uid))
                os.read(rep_r, 1)
                swept = True
            for p in leftovers:
                try:
                    os.kill(p, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            time.sleep(0.001)
        shutil.rmtree(workdir, ignore_errors=True)

    def _descendants(self) -> list[int]:
        """Processes re-parented to this server (it is a subreaper), the reaper helper excepted."""
        me = os.getpid()
        try:
            with open(f"/proc/{me}/task/{me}/children") as f:
                pids = [int(x) for x in f.read().split()]
        except OSError:
            return []
        keep = {self.reaper[0]} if self.reaper else set()
        return [p for p in pids if p not in keep]

    def _reap_zombies(self) -> None:
        while True:
            try:
                pid, _ = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            if self.reaper and pid == self.reaper[0]:
                self.reaper = None  # it died: clean-up falls back to kill by pid

    # -- the child --------------------------------------------------------------------------
    def _child(self, uid, workdir, out_w, err_w, rep_w, ctl_r):
        try:
            os.setpgid(0, 0)
            devnull = os.open(os.devnull, os.O_RDONLY)
            os.dup2(devnull, 0)
            os.dup2(out_w, 1)
            os.dup2(err_w, 2)
            os.dup2(rep_w, REPORT_FD)
            os.dup2(ctl_r, REPORT_FD + 1)
            os.closerange(3, REPORT_FD)
            os.closerange(REPORT_FD + 2, 1 << 16)
            os.mkdir(workdir, 0o700)
            if self.root:
                os.chown(workdir, uid, uid)
            os.chdir(workdir)
            # ceilings while waiting; the program's own limits are set (lowered) once it arrives
            resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
            resource.setrlimit(resource.RLIMIT_NPROC, (CEIL_NPROC, CEIL_NPROC))
            if self.root:
                os.setgroups([])
                os.setgid(uid)
                os.setuid(uid)
            _prctl(PR_SET_NO_NEW_PRIVS, 1)
            _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)  # after setuid, which clears it
            if os.getppid() == 1:
                os._exit(SETUP_FAILED)
            os.environ.clear()
            os.environ.update({"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": workdir, "TMPDIR": workdir,
                               "LANG": "C.UTF-8", "PYTHONIOENCODING": "utf-8"})
        except BaseException as e:
            _setup_failed(e)
        req = None
        try:
            head = _read_exact(REPORT_FD + 1, 4)
            if head is not None:
                body = _read_exact(REPORT_FD + 1, _FRAME.unpack(head)[0])
                req = json.loads(body) if body is not None else None
            os.close(REPORT_FD + 1)
            if req is None:  # the server discarded this child
                os._exit(0)
            self._limits(req.get("limits") or {})
            if self.landlock:
                apply_landlock(workdir, self.landlock)
            if self.seccomp is not None:
                self.seccomp.load()
        except BaseException as e:
            _setup_failed(e)
        _run_program(req.get("code", ""), workdir, self.instrument)

    def _limits(self, lim: dict) -> None:
        cpu = _cpu_limit(lim)
        used = resource.getrusage(resource.RUSAGE_SELF)
        spent = int(used.ru_utime + used.ru_stime)  # seconds this child spent before the program
        mem_mb = int(lim.get("memory_mb", 2048))
        fsize = int(lim.get("fsize_mb", 16)) << 20
        nproc = min(int(lim.get("nproc", 64)), CEIL_NPROC)
        nofile = int(lim.get("nofile", 256))
        resource.setrlimit(resource.RLIMIT_CPU, (spent + cpu, spent + cpu + 1))
        # the address space the program may add on top of the pre-imported solvers
        vm = (_status_kb("VmSize") << 10) + (mem_mb << 20)
        resource.setrlimit(resource.RLIMIT_AS, (vm, vm))
        resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))
        resource.setrlimit(resource.RLIMIT_NPROC, (nproc, nproc))
        resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, nofile))


def _setup_failed(e: BaseException) -> None:
    try:
        os.write(2, f"sandbox setup failed: {type(e).__name__}: {e}\n".encode())
    finally:
        os._exit(SETUP_FAILED)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


class _Child:
    """A forked child waiting for (or running) its program."""

    __slots__ = ("pid", "uid", "workdir", "out", "err", "rep", "ctl")

    def __init__(self, pid, uid, workdir, out, err, rep, ctl):
        self.pid, self.uid, self.workdir = pid, uid, workdir
        self.out, self.err, self.rep, self.ctl = out, err, rep, ctl


class _Tail:
    """The last ``keep`` bytes of a stream and how many bytes it had in all."""

    def __init__(self, keep: int):
        self.keep = max(0, keep)
        self.buf = bytearray()
        self.total = 0

    def add(self, data: bytes) -> None:
        self.total += len(data)
        self.buf += data
        if len(self.buf) > 2 * self.keep + (1 << 16):
            del self.buf[: len(self.buf) - self.keep]

    def text(self) -> str:
        data = bytes(self.buf[-self.keep:]) if self.keep else b""
        text = data.decode("utf-8", "replace")
        if self.total > len(data):
            text = f"[... {self.total - len(data)} bytes truncated ...]\n" + text
        return text


def _classify(wstatus, killed_for, out: _Tail, err: _Tail, rep, duration, cpu, timeout, cpu_limit,
              client_gone) -> dict:
    exit_code = os.waitstatus_to_exitcode(wstatus)
    sig = -exit_code if exit_code < 0 else None
    stderr_text = err.text()
    if killed_for == "timeout":
        status, reason = "timeout", f"wall-clock limit of {timeout:g} s reached; the process group was killed"
    elif killed_for == "output_limit":
        status, reason = "output_limit", (f"the program wrote {out.total + err.total} bytes of output; "
                                          "it was killed at the output limit")
    elif killed_for == "client":
        status, reason = "killed", "the client went away"
    elif sig is not None:
        name = signal.Signals(sig).name if sig in signal.Signals._value2member_map_ else str(sig)
        if sig == signal.SIGXCPU or (sig == signal.SIGKILL and cpu >= cpu_limit - 0.05):
            status, reason = "timeout", "CPU-time limit reached (SIGXCPU)"
        elif sig == signal.SIGXFSZ:
            status, reason = "error", "file-size limit reached (SIGXFSZ)"
        elif ("MemoryError" in stderr_text[-4000:] or "bad_alloc" in stderr_text[-4000:]
              or "out of memory" in stderr_text[-4000:].lower()):
            status, reason = "memory", f"killed by {name} after running out of memory"
        else:
            status, reason = "killed", f"killed by signal {name}"
    elif exit_code == SETUP_FAILED and "sandbox setup failed" in stderr_text:
        status, reason = "killed", "the sandbox could not set the child up: " + stderr_text.strip()[-300:]
    elif rep and rep.get("memory_error"):
        status, reason = "memory", "the program ran out of memory (MemoryError)"
    elif exit_code == 0:
        status, reason = "ok", "exited normally"
    else:
        status, reason = "error", f"exited with status {exit_code}"
    return {
        "status": status,
        "reason": reason,
        "exit_code": exit_code if sig is None else None,
        "signal": None if sig is None else (signal.Signals(sig).name if sig in signal.Signals._value2member_map_
                                            else str(sig)),
        "stdout": out.text(),
        "stderr": stderr_text,
        "stdout_bytes": out.total,
        "stderr_bytes": err.total,
        "duration_s": duration,
        "cpu_s": cpu,
        "report": rep,
        "client_gone": client_gone,
    }


def _cpu_limit(lim: dict) -> int:
    """CPU seconds (RLIMIT_CPU): ``cpu_s``, or the wall-clock timeout rounded up plus one."""
    cpu = lim.get("cpu_s")
    return max(1, int(cpu) if cpu is not None else int(float(lim.get("timeout_s", 10.0))) + 1)


def _status_kb(key: str) -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    return 0


def _run_program(code: str, workdir: str, instrument) -> None:
    """Run ``code`` as ``__main__`` with the instrumentation armed; never returns."""
    import builtins
    import linecache
    import types

    sys.stdout = io.TextIOWrapper(io.FileIO(1, "w", closefd=False), encoding="utf-8",
                                  errors="backslashreplace", line_buffering=True)
    sys.stderr = io.TextIOWrapper(io.FileIO(2, "w", closefd=False), encoding="utf-8",
                                  errors="backslashreplace", write_through=True)
    sys.stdin = io.TextIOWrapper(io.FileIO(0, "r", closefd=False), encoding="utf-8")
    sys.argv = ["<tool_call>"]
    sys.path.insert(0, workdir)
    main = types.ModuleType("__main__")
    main.__dict__["__builtins__"] = builtins
    sys.modules["__main__"] = main
    filename = "<tool_call>"
    linecache.cache[filename] = (len(code), None, code.splitlines(True), filename)
    instrument.begin(REPORT_FD)
    status = 0
    try:
        exec(compile(code, filename, "exec", dont_inherit=True), main.__dict__)
    except SystemExit as e:
        if e.code is None or isinstance(e.code, bool) and not e.code:
            status = 0
        elif isinstance(e.code, int):
            status = e.code & 0xFF
        else:
            try:
                print(e.code, file=sys.stderr)
            except Exception:
                pass
            status = 1
    except MemoryError:
        instrument.STATE.memory_error = True
        try:
            sys.stderr.write("MemoryError: the program exceeded its memory limit\n")
        except Exception:
            pass
        status = 1
    except BaseException:
        etype, value, tb = sys.exc_info()
        try:
            # the traceback starts at the program: the sandbox frames are noise to a model
            while tb is not None and tb.tb_frame.f_code.co_filename != filename:
                tb = tb.tb_next
            te = traceback.TracebackException(etype, value, tb)
            # nor the import hook of the instrumentation, which sits under every import
            own = getattr(instrument, "__file__", None)
            te.stack = traceback.StackSummary.from_list([f for f in te.stack if f.filename != own])
            sys.stderr.write("".join(te.format()))
        except BaseException:
            pass
        if isinstance(value, MemoryError) or "MemoryError" in repr(value):
            instrument.STATE.memory_error = True
        status = 1
    instrument._exit_with_report(status)


def main() -> None:
    cfg = json.loads(sys.argv[1]) if len(sys.argv) > 1 else {}
    cfg.setdefault("instrument_path", os.path.join(_HERE, "instrument.py"))
    in_fd = os.dup(0)
    out_fd = os.dup(1)
    os.set_inheritable(in_fd, False)
    os.set_inheritable(out_fd, False)
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 0)
    os.dup2(devnull, 1)
    server = Server(cfg)
    try:
        server.start(in_fd, out_fd)
    except BaseException as e:
        os.write(2, f"sandbox server failed to start: {type(e).__name__}: {e}\n".encode())
        traceback.print_exc()
        os._exit(3)
    # start-up errors went to the client's stderr pipe; from now on nothing does
    os.dup2(devnull, 2)
    server.serve()
    os._exit(0)


if __name__ == "__main__":
    main()
