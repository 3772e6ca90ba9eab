"""The sandbox server: a supervisor and its zygote, solvers imported once, one child per program.

Started by :class:`solvergym.envs.sandbox.client.SandboxPool` as
``python -I server.py CONFIG_JSON`` with a minimal environment: a fresh interpreter that never
held an instance, a seed or a ground truth (``docs/design.md``, "Sandbox"; the SAT-RL rollouts
of §3.4 run thousands of model-written programs per step). It speaks length-prefixed JSON over
its stdin and stdout (the requests carry only code and limits) and never imports solvergym:
everything it needs is in this file and its siblings ``linux.py`` (system calls, the pipe
protocol), ``zygote.py`` (the forking side), ``record.py`` (the record's schema) and
``instrument.py`` (the solver-call capture), loaded by path, the standard library and the solvers.

Two processes (three with the reaper):

- the **supervisor** (this file's :class:`Server`) reads requests, sends each program to a
  waiting child, drains and caps its output, enforces the wall clock, the output limit and the
  memory budget of all the program's processes together, reads and validates its record, kills
  and sweeps everything the program started, and answers. It holds every program's data, so it
  never forks a program;
- the **zygote** (``zygote.py``), forked once at start-up before any request, imports the
  solvers and forks the children; it never sees a program (so no program can find an earlier
  one's code, output or record in its own memory).

Start-up, in this order:

1. the protocol pipes move to high descriptors; 0/1/2 point at ``/dev/null`` so a solver's banner
   (Gurobi prints one) cannot corrupt the protocol;
2. ``PR_SET_CHILD_SUBREAPER`` (the zygote is one too): every process a program spawns stays a
   descendant, so none can escape the clean-up by double-forking;
3. a small *reaper* helper is forked while the interpreter is still small: to end every process
   of a child's uid it forks, takes that uid and sends ``kill(-1, SIGKILL)`` (what a uid may
   signal is exactly its own processes);
4. isolation ("namespaces" level, when running as root and the kernel allows it): new mount,
   network, IPC and UTS namespaces; a new root on a tmpfs holding read-only binds of the system
   directories and the interpreter's prefixes only (so neither solvergym's sources nor datasets
   nor anybody's home are there), a fresh ``/proc`` mounted with ``hidepid=2`` (a program sees
   only its own processes); then ``chroot``;
5. the zygote is forked; it imports and warms the solvers, installs the capture, freezes its
   heap and says hello;
6. a hello message reports the pid, the active isolation levels, import times and memory.

Per program: the waiting child (``zygote.py``: a fresh uid, rlimits, no new privileges; forked
after the previous answer) was told when the ``/tmp`` mounted fresh for it (:class:`_FreshTmp`)
was ready, made its working directory there and, if the last request asked, rehearsed the
solver libraries it named; it now gets the code, its limits and a per-run secret through its
control pipe. The supervisor polls the program's output pipes, its exit (the zygote reports it,
unasked) and, every :data:`MEMORY_POLL_S`, the memory all the program's processes hold together
(:meth:`Server._program_memory_kb`; one process alone is bounded by RLIMIT_AS). Past
``memory_mb`` the group is killed (status ``memory``); past the wall clock, ``timeout``; past
``output_bytes``, ``output_limit``.

The answer goes out as soon as it is final: when the program's capture has written its record
and closed the output on its way out and the kernel has the process exiting with the status the
record declares (``linux.exit_state``), without waiting for the kernel to free the ~200 MB image
it shared (a few ms); otherwise (a signal, a descendant holding the pipes) when the zygote
reports the exit. Then the next child is forked, and the clean-up (whatever happened) kills the
process group, waits for the exit, kills every process of the child's uid until no descendant
is left, and detaches the program's ``/tmp``, all before the next request is read.
"""
from __future__ import annotations

import importlib.util
import json
import os
import secrets
import select
import shutil
import signal
import socket
import struct
import sys
import time
import traceback

_HERE = os.path.dirname(os.path.abspath(__file__))


def _sibling(name: str):
    """A sibling file as a module, loaded by path (the server runs as a script, outside the
    package, before its file-system view shrinks)."""
    key = "_solvergym_sandbox_" + name
    mod = sys.modules.get(key)
    if mod is None:
        spec = importlib.util.spec_from_file_location(key, os.path.join(_HERE, name + ".py"))
        mod = importlib.util.module_from_spec(spec)
        sys.modules[key] = mod
        spec.loader.exec_module(mod)
    return mod


try:
    from . import linux, record
except ImportError:  # run as a script by the pool (python -I server.py): no package
    linux, record = _sibling("linux"), _sibling("record")

PROTOCOL_VERSION = 2
#: System V IPC limits of the server's IPC namespace: no segments, queues or semaphore sets
SYSV_IPC_OFF = (("shmmni", "0"), ("shmall", "0"), ("msgmni", "0"), ("sem", "0 0 0 0"))
REPORT_MAX = record.MAX_BYTES
MEMORY_POLL_S = 0.01  # how often the memory of a program's processes is summed
_UID = struct.Struct(">I")


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
    linux.mount(src, dst, None, linux.MS_BIND | linux.MS_REC)
    linux.mount(None, dst, None, linux.MS_BIND | linux.MS_REMOUNT | linux.MS_RDONLY | linux.MS_NOSUID | linux.MS_NODEV)
    for h in hidden:  # a hidden path inside a bound one gets an empty read-only tmpfs over it
        if h != src and h.startswith(src.rstrip("/") + "/") and os.path.isdir(h):
            linux.mount("tmpfs", root + h, "tmpfs", linux.MS_NOSUID | linux.MS_NODEV | linux.MS_RDONLY, "size=4k,mode=555")


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
    stage = _staging_dir(visible)
    linux.mount("tmpfs", stage, "tmpfs", linux.MS_NOSUID | linux.MS_NODEV, "size=8m,mode=755")
    root = stage + "/root"
    os.mkdir(root, 0o755)
    linux.mount("tmpfs", root, "tmpfs", linux.MS_NOSUID | linux.MS_NODEV, "size=4m,mode=755")
    # the private /tmp first, so that a visible tree under /tmp is bound on top of it, not hidden;
    # programs never write here: each gets a fresh tmpfs stacked on it (_FreshTmp)
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
                data = linux.read_exact(req_r, 4)
                if data is None:
                    os._exit(0)
                (uid,) = _UID.unpack(data)
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


# ----------------------------------------------------------------------------- the supervisor
class Server:
    def __init__(self, cfg: dict):
        self.cfg = cfg
        self.uid_base = int(cfg.get("uid_base", 0))
        self.uid_span = int(cfg.get("uid_span", 4096))
        self.counter = 0
        self.root = os.geteuid() == 0
        self.levels: list[str] = []
        self.notes: dict[str, str] = {}
        self.reaper = None
        self.ready: _Child | None = None
        self.forking: _Child | None = None  # asked of the zygote, its pid not read yet
        self.exits: dict[int, tuple[int, float]] = {}  # pid -> (wait status, CPU s), as reported
        self.answers: list[dict] = []  # zygote answers read early (while waiting for an exit)
        self.zpid = 0
        self.zsock: socket.socket | None = None
        self.tmp: _FreshTmp | None = None
        self.tmp_used = False  # a program has run since /tmp was last made fresh
        self.rehearse: list[str] = []  # what the next waiting child rehearses (the last request's wish)
        self.rehearsable: frozenset[str] = frozenset()

    # -- start-up ---------------------------------------------------------------------------
    def start(self, in_fd: int, out_fd: int) -> None:
        self.in_fd, self.out_fd = in_fd, out_fd
        t0 = time.perf_counter()
        # loaded before the file system view shrinks: the files are not visible afterwards
        instrument = _sibling("instrument")
        zygote = _sibling("zygote")
        self.rehearsable = frozenset(zygote.REHEARSALS)
        linux.prctl(linux.PR_SET_CHILD_SUBREAPER, 1)
        if self.root:
            self.reaper = _start_reaper()
        want = self.cfg.get("isolation", "auto")
        bwrap = self.cfg.get("bwrap", "off (setting)")
        visible: list[str] = []
        if bwrap == "active":
            self.levels += ["bwrap", "netns", "ipcns", "utsns", "pidns", "mountns", "readonly-root",
                            "private-tmp", "hidden-package"]
        else:
            self.notes["bwrap"] = bwrap
        if bwrap == "active":
            pass  # the namespaces are bubblewrap's
        elif want in ("auto", "namespaces") and self.root:
            try:
                levels, visible = setup_namespaces(self.cfg)
                self.levels += levels
            except OSError as e:
                if want == "namespaces":
                    raise
                self.notes["namespaces"] = f"unavailable: {e}"
        elif want != "basic":
            self.notes["namespaces"] = "unavailable: needs root (CAP_SYS_ADMIN)"
        else:
            self.notes["namespaces"] = "off (isolation='basic')"
        # a fresh /tmp per program: where this server made its own mount namespace (bubblewrap
        # keeps CAP_SYS_ADMIN from the server)
        self.tmp = _FreshTmp(int(self.cfg.get("tmp_mb", 64)), [p for p in visible if _within(p, "/tmp")]) \
            if "chroot" in self.levels else None
        if self.tmp is not None:
            self.tmp.cycle()
            self.levels.append("fresh-tmp-per-program")
        else:
            self.notes["fresh-tmp-per-program"] = "unavailable: needs the namespaces level (root)"
        if "sysv-ipc-off" not in self.levels:
            self.notes["sysv-ipc-off"] = "unavailable: needs the namespaces level (root)"
        self.notes["cgroup"] = ("not used: the memory budget adds up what a program's processes map and the "
                                "shared-memory objects they hold (no cgroup is created or joined)")
        self.levels += ["rlimits", "memory-budget", "own-process-group", "subreaper", "zygote", "no-new-privs",
                        "clean-env", "fresh-workdir", "record-secret"]
        if self.root:
            self.levels += ["uid-drop"]
        else:
            self.notes["uid-drop"] = "unavailable: not running as root"
        landlock = 0
        want_ll = self.cfg.get("landlock")
        if want_ll is None:  # auto: the write confinement the namespaces would otherwise give
            want_ll = "readonly-root" not in self.levels
        if want_ll:
            landlock = linux.landlock_abi()
            if landlock:
                self.levels.append(f"landlock(abi {landlock})")
            else:
                self.notes["landlock"] = "unavailable: the kernel has no Landlock"
        else:
            self.notes["landlock"] = "off (setting)" if self.cfg.get("landlock") is not None else \
                "off (the namespaces already confine writes)"
        t_iso = time.perf_counter() - t0
        zcfg = {"landlock_abi": landlock, "seccomp": bool(self.cfg.get("seccomp")), "hide": self.cfg.get("hide", [])}
        hello = self._start_zygote(zygote, instrument, zcfg)
        if self.cfg.get("seccomp"):
            if hello.get("seccomp"):
                self.levels.append("seccomp")
            else:
                self.notes["seccomp"] = "unavailable: pip install pyseccomp (and libseccomp2)"
        else:
            self.notes["seccomp"] = "off (setting)"
        linux.write_frame(out_fd, {
            "hello": PROTOCOL_VERSION,
            "pid": os.getpid(),
            "zygote_pid": self.zpid,
            "isolation": self.levels,
            "isolation_notes": self.notes,
            "isolation_ms": round(1000 * t_iso, 1),
            "import_ms": hello.get("import_ms"),
            "instrumentation": hello.get("instrumentation"),
            "rss_kb": hello.get("rss_kb"),
            "vms_kb": hello.get("vms_kb"),
            "python": sys.version.split()[0],
            "threads": hello.get("threads"),
            "huge_page_chunks": hello.get("huge_page_chunks"),
        })

    def _start_zygote(self, zygote, instrument, zcfg: dict) -> dict:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        pid = os.fork()
        if pid == 0:  # the zygote: nothing of the supervisor's descriptors, then the solvers
            ours.close()
            for fd in (self.in_fd, self.out_fd) + ((self.reaper[1], self.reaper[2]) if self.reaper else ()):
                os.close(fd)
            try:
                z = zygote.Zygote(theirs, zcfg, instrument)
                facts = z.prepare()
            except Exception as e:
                theirs.send(json.dumps({"error": f"{type(e).__name__}: {e}"[:2000]}).encode())
                os._exit(3)
            devnull = os.open(os.devnull, os.O_RDWR)
            os.dup2(devnull, 2)
            os.close(devnull)
            theirs.send(json.dumps(facts).encode())
            z.serve()  # raises zygote.Start in every child it forks
            os._exit(0)
        theirs.close()
        self.zpid, self.zsock = pid, ours
        hello = self._zreply()
        if hello is None or "error" in hello:
            raise OSError(f"the zygote failed to start: {(hello or {}).get('error', 'no answer')}")
        return hello

    # -- the zygote's protocol ------------------------------------------------------------------
    def _zcall(self, msg: dict, fds: tuple[int, ...] = ()) -> dict:
        self._zsend(msg, fds)
        return self._zrecv()

    def _zsend(self, msg: dict, fds: tuple[int, ...] = ()) -> None:
        data = json.dumps(msg).encode()
        try:
            if fds:
                socket.send_fds(self.zsock, [data], list(fds))
            else:
                self.zsock.send(data)
        except OSError:
            raise ZygoteGone("the zygote is gone") from None

    def _zrecv(self) -> dict:
        """The zygote's answer to the oldest request (exit reports that come first are kept)."""
        if self.answers:
            return self.answers.pop(0)
        while True:
            msg = self._zreply()
            if msg is None:
                raise ZygoteGone("the zygote is gone")
            if "exit" not in msg:
                return msg
            self._note_exit(msg)

    def _zreply(self, flags: int = 0) -> dict | None:
        try:
            data = self.zsock.recv(1 << 16, flags)
        except BlockingIOError:
            raise
        except OSError:
            return None
        return json.loads(data) if data else None

    def _note_exit(self, msg: dict) -> None:
        self.exits[int(msg["exit"])] = (int(msg["status"]), float(msg["cpu"]))

    def _drain_exits(self) -> None:
        """Read what waits on the zygote's socket (never blocks): exit reports, and answers
        (a fork asked for while a program runs), kept for :meth:`_zrecv`."""
        while True:
            try:
                msg = self._zreply(socket.MSG_DONTWAIT)
            except BlockingIOError:
                return
            if msg is None:
                raise ZygoteGone("the zygote is gone")
            if "exit" in msg:
                self._note_exit(msg)
            else:
                self.answers.append(msg)

    def _await_exit(self, pid: int, timeout: float = 10.0) -> tuple[int, float]:
        """Block until the zygote reports ``pid``'s exit (after it was killed)."""
        end = time.monotonic() + timeout
        while pid not in self.exits:
            left = end - time.monotonic()
            if left <= 0 or not select.select([self.zsock], [], [], left)[0]:
                raise ZygoteGone(f"no exit report for {pid}")
            self._drain_exits()
        return self.exits.pop(pid)

    # -- serving ----------------------------------------------------------------------------
    def serve(self) -> None:
        try:
            self._serve()
        finally:
            try:
                self._discard_ready()
            except ZygoteGone:
                pass

    def _serve(self) -> None:
        while True:
            if self.ready is None and self.forking is None:
                self._prefork_start()  # the zygote forks while this process waits for the request
            req = linux.read_frame(self.in_fd)
            if req is None:
                return
            if req.get("ping"):
                linux.write_frame(self.out_fd, {"pong": req["ping"], "pid": os.getpid()})
                continue
            gone = False
            child = None
            try:
                resp, child = self.run(req)
            except Exception as e:  # never leave the client without an answer, nor show it our internals
                gone = isinstance(e, ZygoteGone)
                resp = {"status": "killed", "reason": f"sandbox server error ({type(e).__name__})",
                        "exit_code": None, "signal": None, "stdout": "", "stderr": "", "stdout_bytes": 0,
                        "stderr_bytes": 0, "duration_s": 0.0, "cpu_s": 0.0, "report": None}
            resp["id"] = req.get("id")
            linux.write_frame(self.out_fd, resp)
            if self.ready is None and self.forking is None and not gone:
                # The next child is forked as soon as the client has taken the answer: while this
                # one is taken down (the two overlap: a program sent at once waits for neither
                # alone), but not while a program runs or its answer is on its way. The fork is
                # ~3-7 ms of kernel time copying page tables; on two cores, started any earlier,
                # it held a core from the program, the server or the client (whose answer then
                # came ~1.5 ms later).
                linux.wait_read(self.out_fd, 0.002)
                self._prefork_start()
            if child is not None:
                # After the answer: everything the program can still do is over (its output and
                # record are complete), but it is gone, with all it left, before the next one runs.
                # A request already waiting gets a child that does not rehearse first.
                if select.select([self.in_fd], [], [], 0)[0]:
                    self.rehearse = []
                try:
                    self._cleanup(child)
                except ZygoteGone:
                    return
            if resp.get("client_gone") or gone:
                return

    def run(self, req: dict) -> tuple[dict, "_Child"]:
        """Run one program; returns the answer and the child, which :meth:`_cleanup` must still
        take down (the answer can go out first)."""
        lim = req.get("limits") or {}
        wish = req.get("rehearse") or []
        self.rehearse = sorted({x for x in wish if isinstance(x, str) and x in self.rehearsable}) \
            if isinstance(wish, list) else []
        timeout = float(lim.get("timeout_s", 10.0))
        keep = int(lim.get("keep_bytes", 65536))
        out_limit = int(lim.get("output_bytes", 1 << 20))
        mem_kb = int(lim.get("memory_mb", 2048)) << 10
        secret = secrets.token_hex(16)
        body = json.dumps({"code": req.get("code", ""), "limits": lim, "secret": secret}).encode()
        for attempt in range(2):
            child = self._take_ready()
            t0 = time.perf_counter()
            try:
                self._release(child)
                self.tmp_used = True
                linux.write_all(child.ctl, len(body).to_bytes(4, "big") + body)
                os.close(child.ctl)
                break
            except OSError:  # the waiting child is gone (killed from outside): use a fresh one
                _close_quietly(child.ctl, child.out, child.err, child.rep)
                self._cleanup(child)
                if attempt:
                    raise
        try:
            return self._supervise(child, timeout, _cpu_limit(lim), keep, out_limit, mem_kb, t0, secret), child
        except BaseException:
            self._cleanup(child)
            raise

    def _take_ready(self) -> "_Child":
        if self.ready is None:
            if self.forking is None:
                self._prefork_start()
            self._prefork_finish()
        child, self.ready = self.ready, None
        return child

    def _prefork_start(self) -> None:
        """Have the zygote fork the next child now, while no program is waiting: it takes its
        uid, working directory and descriptors, then blocks until a program arrives (the fork
        and the set-up are off the latency path of the next request). The zygote's answer is
        read by :meth:`_prefork_finish`, once a program needs the child."""
        self.counter += 1
        uid = self.uid_base + self.counter % self.uid_span if self.root else os.getuid()
        name = "sg-" + secrets.token_hex(8)  # unpredictable: no program can occupy the next one's
        if self.tmp is not None:
            workdir = "/tmp/" + name  # in the /tmp mounted fresh for this program
        else:
            base = "/tmp" if "private-tmp" in self.levels else (self.cfg.get("tmp_root") or "/tmp")
            workdir = os.path.join(base, name)
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        rep_r, rep_w = os.pipe()
        ctl_r, ctl_w = os.pipe()
        for fd in (out_r, err_r, rep_r, ctl_w):
            os.set_inheritable(fd, False)
        try:
            self._zsend({"op": "fork", "uid": uid, "workdir": workdir}, (out_w, err_w, rep_w, ctl_r))
        except BaseException:
            _close_quietly(out_r, err_r, rep_r, ctl_w)
            raise
        finally:
            _close_quietly(out_w, err_w, rep_w, ctl_r)
        self.forking = _Child(0, uid, workdir, out_r, err_r, rep_r, ctl_w)
        if not self.tmp_used:
            self._release(self.forking)

    def _release(self, child: "_Child") -> None:
        """Tell a waiting child that ``/tmp`` is its own (no program has run in it), so that it
        makes its working directory there, and what to rehearse while it waits (once)."""
        if child.released:
            return
        child.released = True
        try:
            linux.write_frame(child.ctl, {"rehearse": self.rehearse})
        except OSError:
            pass  # the child is gone: the program's own write finds out, and takes another

    def _prefork_finish(self) -> None:
        child, self.forking = self.forking, None
        try:
            child.pid = int(self._zrecv()["pid"])
        except BaseException:
            _close_quietly(child.out, child.err, child.rep, child.ctl)
            raise
        self.ready = child

    def _discard_ready(self) -> None:
        if self.forking is not None:
            self._prefork_finish()
        child, self.ready = self.ready, None
        if child is not None:
            _close_quietly(child.ctl, child.out, child.err, child.rep)
            self._cleanup(child)

    def _supervise(self, child: "_Child", timeout, cpu_limit, keep, out_limit, mem_kb, t0, secret) -> dict:
        pid, out_r, err_r, rep_r = child.pid, child.out, child.err, child.rep
        streams = {out_r: _Tail(keep), err_r: _Tail(keep)}
        report = bytearray()
        report_over = False
        zfd = self.zsock.fileno()  # the zygote reports the exit
        poller = select.poll()
        for fd in (out_r, err_r, rep_r):
            poller.register(fd, select.POLLIN)
        poller.register(zfd, select.POLLIN)
        poller.register(self.in_fd, select.POLLHUP | select.POLLERR)
        open_fds = {out_r, err_r, rep_r}
        deadline = t0 + timeout
        next_poll = t0 + MEMORY_POLL_S
        killed_for = None
        exited = False
        client_gone = False
        drain_until = None
        peak_kb = 0
        rep, rep_error = None, None
        early = None  # (wait status, CPU s) read from /proc before the exit was reported
        looks = 0
        while True:
            now = time.perf_counter()
            if not exited and pid in self.exits:  # reported while another answer was awaited
                exited = True
                drain_until = now + 0.05
                poller.unregister(zfd)
            if exited and (not open_fds or now >= drain_until or client_gone):
                break
            if not exited and not open_fds and killed_for is None and rep is not None and "exit_code" in rep:
                # The capture wrote the record and closed the output on its way out (instrument.py,
                # _report_writer): the answer is complete once the kernel has the process exiting
                # with the status the record declares; its teardown need not be waited for.
                state = linux.exit_state(pid)
                if state is not None and state[0] == rep["exit_code"] << 8:
                    early = state
                    break
                looks += 1
                if looks <= 20:  # the last close and the kernel's flag are microseconds apart
                    time.sleep(0.0001)
                    continue
            if not exited and killed_for is None:
                if now >= deadline:
                    killed_for = "timeout"
                    self._kill_group(pid)
                elif now >= next_poll:
                    used = self._program_memory_kb(pid)
                    # the supervisor spends at most about a third of its time measuring
                    next_poll = now + max(MEMORY_POLL_S, 2 * (time.perf_counter() - now))
                    peak_kb = max(peak_kb, used)
                    if used > mem_kb:
                        killed_for = "memory"
                        self._kill_group(pid)
            # a program may close its pipes and go on computing: until it exits, the deadline rules
            wait = (drain_until - now) if exited else max(0.0, min(deadline, next_poll) - now)
            events = poller.poll(int(1000 * min(wait, 0.5)) + 1 if wait > 0 else 1)
            for fd, ev in events:
                if fd == zfd:
                    self._drain_exits()
                    if pid in self.exits and not exited:
                        exited = True
                        # descendants may still hold the pipes: give them a moment, then clean up
                        drain_until = time.perf_counter() + 0.05
                        poller.unregister(zfd)
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
                    if fd == rep_r:
                        rep, rep_error = _parse_record(report, report_over, secret)
                    continue
                if fd == rep_r:
                    if len(report) + len(data) <= REPORT_MAX:
                        report += data
                    else:
                        report_over = True
                    continue
                streams[fd].add(data)
                if killed_for is None and streams[out_r].total + streams[err_r].total > out_limit:
                    killed_for = "output_limit"
                    self._kill_group(pid)
        rep_open = rep_r in open_fds
        _close_quietly(out_r, err_r, rep_r)
        if early is not None:
            status, cpu = early  # the zygote's report of this exit is awaited by _cleanup
        else:
            if not exited:
                self._kill_group(pid)
            status, cpu = self._await_exit(pid)
            child.waited = True
        duration = time.perf_counter() - t0
        if rep_open:  # killed, or its descendants held the pipe: what it sent so far
            rep, rep_error = _parse_record(report, report_over, secret)
        if rep is not None:
            rep.pop("exit_code", None)  # the server's to read; the answer has the kernel's
        return _classify(status, killed_for, streams[out_r], streams[err_r], rep, rep_error, duration, cpu, timeout,
                         cpu_limit, client_gone, mem_kb, peak_kb)

    def _program_pids(self, first: int | None = None) -> list[int]:
        """Every process under the zygote but the child waiting for the next program: the
        running program's, and the orphans it left (the zygote is their subreaper). While that
        child's fork is not answered yet (its pid unknown), only the tree of ``first`` (the
        program's first process) when given; the clean-up reads the answer first."""
        out: list[int] = []
        if self.forking is not None and first is not None:
            stack = [first]
        else:
            waiting = {c.pid for c in (self.ready,) if c is not None}
            stack = [p for p in _children_of(self.zpid) if p not in waiting]
        while stack:
            p = stack.pop()
            out.append(p)
            stack.extend(_children_of(p))
        return out

    def _program_memory_kb(self, first: int | None = None) -> int:
        """The memory the program's processes hold together (0 while there is one process and
        it holds no shared memory object: RLIMIT_AS bounds it, and reading ``smaps_rollup`` is
        not free).

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
        self._drain_exits()
        if self.forking is not None and any("pid" in a for a in self.answers):
            self._prefork_finish()  # the next child's pid, to leave it out (without waiting for it)
        pids = self._program_pids(first)
        objects: dict[tuple[int, int], int] = {}
        for p in pids:
            # a lone process's mappings are in its address space (RLIMIT_AS): only what it holds
            # open can be elsewhere, and reading the maps of every program every 10 ms is not free
            _shared_objects(p, objects, maps=len(pids) > 1)
        if len(pids) < 2 and not objects:
            return 0
        mapped = 0
        for p in pids:
            rss, pss, pss_shmem = _smaps_kb(p)
            mapped += pss - pss_shmem  # shared-memory objects are counted whole below
        z_rss, z_pss, _ = _smaps_kb(self.zpid)
        return max(0, mapped + z_pss - z_rss) + sum(objects.values())

    def _kill_group(self, pid: int) -> None:
        try:
            os.killpg(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass

    def _cleanup(self, child: "_Child") -> None:
        try:
            uid, pid = child.uid, child.pid
            self._kill_group(pid)
            if not child.waited:
                self._await_exit(pid)
                child.waited = True
            if self.forking is not None:  # the next child's pid, so that it is not a leftover
                self._prefork_finish()
            swept = False
            deadline = time.perf_counter() + 2.0
            while True:
                leftovers = self._program_pids()  # the exit report came after a sweep of zombies
                if leftovers:
                    self._zcall({"op": "reap"})
                    leftovers = self._program_pids()
                if not leftovers or time.perf_counter() > deadline:
                    break
                if not swept and self.reaper is not None:
                    # one signal to every process of the uid, however it re-grouped itself
                    _, req_w, rep_r = self.reaper
                    os.write(req_w, _UID.pack(uid))
                    os.read(rep_r, 1)
                    swept = True
                for p in leftovers:
                    try:
                        os.kill(p, signal.SIGKILL)
                    except ProcessLookupError:
                        pass
                time.sleep(0.001)
        finally:
            # nothing the program wrote survives it: every process is gone, so its /tmp can go
            try:
                if self.tmp is not None:
                    self.tmp.cycle()
                else:
                    shutil.rmtree(child.workdir, ignore_errors=True)
            except Exception:  # a tree too deep for rmtree: the next program's directory is new anyway
                pass
            self.tmp_used = False
            waiting = self.forking or self.ready
            if waiting is not None:
                self._release(waiting)


def _parse_record(report: bytearray, over: bool, secret: str) -> tuple[dict | None, str | None]:
    """The validated record and None, or None and why it was rejected."""
    try:
        if over:
            raise record.RecordError(f"the record is larger than {REPORT_MAX >> 20} MiB")
        return record.parse(bytes(report), secret), None
    except record.RecordError as e:
        return None, str(e)


class _FreshTmp:
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


class ZygoteGone(RuntimeError):
    """The zygote died: this server cannot fork any more (the pool replaces it)."""


def _children_of(pid: int) -> list[int]:
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


def _smaps_kb(pid: int) -> tuple[int, int, int]:
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
_SHMEM_NAMES = ("/memfd:", "/dev/zero (deleted)", "/SYSV")


def _shared_objects(pid: int, out: dict[tuple[int, int], int], maps: bool = True) -> None:
    """Add the shared-memory objects a process holds open (and, with ``maps``, maps),
    ``(dev, inode) -> KiB``."""
    paths = []
    try:
        if maps:
            with open(f"/proc/{pid}/maps") as f:
                for line in f:
                    parts = line.split(maxsplit=5)
                    if len(parts) == 6 and parts[1][3] == "s" and parts[5].startswith(_SHMEM_NAMES):
                        paths.append(f"/proc/{pid}/map_files/{parts[0]}")
        fd_dir = f"/proc/{pid}/fd"
        for fd in os.listdir(fd_dir):
            try:
                target = os.readlink(f"{fd_dir}/{fd}")
            except OSError:
                continue
            if target.startswith(_SHMEM_NAMES):
                paths.append(f"{fd_dir}/{fd}")
    except OSError:
        return
    for path in paths:
        try:
            st = os.stat(path)
        except OSError:
            continue
        out[(st.st_dev, st.st_ino)] = st.st_blocks // 2  # 512-byte blocks actually allocated


def _close_quietly(*fds: int) -> None:
    for fd in fds:
        try:
            os.close(fd)
        except OSError:
            pass


class _Child:
    """A forked child waiting for (or running) its program."""

    __slots__ = ("pid", "uid", "workdir", "out", "err", "rep", "ctl", "waited", "released")

    def __init__(self, pid, uid, workdir, out, err, rep, ctl):
        self.pid, self.uid, self.workdir = pid, uid, workdir
        self.out, self.err, self.rep, self.ctl = out, err, rep, ctl
        self.waited = False
        self.released = False  # told that /tmp is its own (zygote.Zygote._child)


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


def _classify(wstatus, killed_for, out: _Tail, err: _Tail, rep, rep_error, duration, cpu, timeout, cpu_limit,
              client_gone, mem_kb, peak_kb) -> dict:
    exit_code = os.waitstatus_to_exitcode(wstatus)
    sig = -exit_code if exit_code < 0 else None
    stderr_text = err.text()
    if killed_for == "timeout":
        status, reason = "timeout", f"wall-clock limit of {timeout:g} s reached; the process group was killed"
    elif killed_for == "output_limit":
        status, reason = "output_limit", (f"the program wrote {out.total + err.total} bytes of output; "
                                          "it was killed at the output limit")
    elif killed_for == "memory":
        status, reason = "memory", (f"the program's processes used more than memory_mb={mem_kb >> 10} MiB together "
                                    f"({peak_kb >> 10} MiB); the process group was killed")
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
    elif exit_code == _SETUP_FAILED and "sandbox setup failed" in stderr_text:
        status, reason = "killed", "the sandbox could not set the child up: " + stderr_text.strip()[-300:]
    elif rep_error is not None:
        status, reason = "error", "the program's solver-call record was rejected: " + rep_error
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


_SETUP_FAILED = 125  # zygote.SETUP_FAILED: a child that could not be set up exits with this code


def main() -> None:
    cfg = json.loads(sys.argv[1]) if len(sys.argv) > 1 else {}
    in_fd = os.dup(0)
    out_fd = os.dup(1)
    os.set_inheritable(in_fd, False)
    os.set_inheritable(out_fd, False)
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 0)
    os.dup2(devnull, 1)
    zygote = _sibling("zygote")  # now: a child no longer finds it by name, nor its file
    server = Server(cfg)
    job = None
    try:
        server.start(in_fd, out_fd)
    except zygote.Start as start:
        # a sandbox child: its program runs below, outside this handler, once every frame of the
        # zygote and of this server is gone (sys.exc_info() must not lead back to them)
        job = start.job
    except BaseException as e:
        os.write(2, f"sandbox server failed to start: {type(e).__name__}: {e}\n".encode())
        traceback.print_exc()
        os._exit(3)
    if job is not None:
        del server
        zygote.run_program(job)
    # start-up errors went to the client's stderr pipe; from now on nothing does
    os.dup2(devnull, 2)
    server.serve()
    os._exit(0)


if __name__ == "__main__":
    main()
