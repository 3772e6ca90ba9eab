"""The supervisor: the server process's request loop, and everything it does for one program.

It reads requests from the pool (length-prefixed JSON on its stdin: code and limits only), hands
each program to the child the zygote forked for it, drains and caps the program's output,
enforces the wall clock, the output limit and the memory budget of all the program's processes
together, reads and validates its record, answers (stdout), and takes the program down with
everything it started before it reads the next request. It holds every program's data, so it
never forks a program: the zygote (``zygote.py``, forked once at start-up) does.

Per program: the waiting child (a fresh uid, rlimits, no new privileges; forked while the
previous program ran) was told when the ``/tmp`` mounted fresh for it (``isolation.FreshTmp``) was
ready, made its working directory there and, if the last request asked, rehearsed the solver
libraries it named; it now gets the code, its limits and a per-run secret through its control
pipe. The supervisor polls the program's output pipes, its exit (the zygote reports it, unasked:
``zygote_link.py``) and, every :data:`MEMORY_POLL_S`, the memory all the program's processes hold
together (``memory.py``; one process alone is bounded by RLIMIT_AS). Past ``memory_mb`` the
group is killed (status ``memory``); past the wall clock, ``timeout``; past ``output_bytes``,
``output_limit`` (``classify.py`` says which).

The answer goes out as soon as it is final: when the program's capture has written its record
and closed the output on its way out and the kernel has the process exiting with the status the
record declares (``linux.exit_state``), without waiting for the kernel to free the ~200 MB image
it shared (a few ms); otherwise (a signal, a descendant holding the pipes) when the zygote
reports the exit. Then the clean-up (whatever happened) kills the
process group, waits for the exit, kills every process of the child's uid until no descendant
is left (``reaper.py``), and detaches the program's ``/tmp``, all before the next request is read.
A first process that is exiting with nothing of the program left beside it is not waited for
(:meth:`Server._cleanup`): it runs no more code, and the next program need not wait while the
kernel frees its image.

Runs in the server process (standard library only; loaded, with the zygote and the capture,
before the file-system view shrinks).
"""
from __future__ import annotations

import json
import os
import secrets
import select
import shutil
import signal
import sys
import time

from . import capture, isolation, linux, memory, record, zygote_link
from .classify import classify, parse_record
from .common import children_of, cpu_limit
from .reaper import Reaper
from .rehearsals import PROBES, REHEARSALS
from .zygote_link import ZygoteGone, ZygoteLink

PROTOCOL_VERSION = 2
MEMORY_POLL_S = 0.01  # how often the memory of a program's processes is summed


class Server:
    """One sandbox server: :meth:`start` isolates it and starts the zygote, :meth:`serve`
    answers requests until the pool closes its stdin.

    ``cfg`` is the pool's server config (``uid_base``/``uid_span``: the block of uids programs
    run under; ``isolation``, ``bwrap``, ``landlock``, ``seccomp``, ``hide``, ``extra_ro``,
    ``tmp_mb``: ``isolation.set_up``)."""

    def __init__(self, cfg: dict):
        self.cfg = cfg
        self.uid_base = int(cfg.get("uid_base", 0))
        self.uid_span = int(cfg.get("uid_span", 4096))
        self.counter = 0
        self.root = os.geteuid() == 0
        self.levels: list[str] = []
        self.notes: dict[str, str] = {}
        self.reaper: Reaper | None = None
        self.zygote: ZygoteLink | None = None
        self.ready: _Child | None = None
        self.forking: _Child | None = None  # asked of the zygote, its pid not read yet
        self.tmp: isolation.FreshTmp | None = None
        self.tmp_used = False  # a program has run since /tmp was last made fresh
        #: first processes of earlier programs that were exiting, alone, when they were cleaned
        #: up: their exit is not waited for (:meth:`_cleanup`), and its report is dropped
        self.dying: set[int] = set()
        self.rehearse: list[str] = []  # what the next waiting child rehearses (the last request's wish)
        self.rehearsable = frozenset(REHEARSALS) | frozenset(PROBES)
        #: when each phase of the current request ended (perf_counter: CLOCK_MONOTONIC, the same
        #: clock in the client), answered to a request that asks for its ``profile``
        self.marks: dict[str, float] = {}
        #: what the work after the last answer took (off the latency path; reported with the next)
        self.after: dict[str, float] = {}

    # -- start-up ---------------------------------------------------------------------------
    def start(self, in_fd: int, out_fd: int) -> None:
        """Isolate this process, start the reaper and the zygote, and say hello on ``out_fd``
        (in every child the zygote forks, raises ``zygote.Start`` instead of returning)."""
        self.in_fd, self.out_fd = in_fd, out_fd
        t0 = time.perf_counter()
        linux.prctl(linux.PR_SET_CHILD_SUBREAPER, 1)
        if self.root:
            self.reaper = Reaper()
        iso = isolation.set_up(self.cfg, self.root)
        self.levels, self.notes, self.tmp = iso.levels, iso.notes, iso.tmp
        t_iso = time.perf_counter() - t0
        zcfg = {"landlock_abi": iso.landlock_abi, "seccomp": bool(self.cfg.get("seccomp")),
                "hide": self.cfg.get("hide", [])}
        close = (in_fd, out_fd) + (self.reaper.fds if self.reaper else ())
        self.zygote, hello = zygote_link.start(zcfg, capture.install, close)
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
            "zygote_pid": self.zygote.pid,
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
            "prefault_pages": hello.get("prefault_pages"),
        })

    # -- serving ----------------------------------------------------------------------------
    def serve(self) -> None:
        """Answer requests until the pool goes away (or the zygote dies); then discard the
        child waiting for a program."""
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
            self.marks = {"read": time.perf_counter()}
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
            if req.get("profile"):
                resp["phases"] = {**self.marks, "answer": time.perf_counter(), **self.after}
            linux.write_frame(self.out_fd, resp)
            t_after = time.perf_counter()
            self.after = {}
            if self.ready is None and self.forking is None and not gone:
                # The next child was not forked while a program ran (:meth:`run` failed before
                # it did): fork it as soon as the client has taken the answer.
                linux.wait_read(self.out_fd, 0.002)
                t = time.perf_counter()
                self._prefork_start()
                self.after["prefork_s"] = time.perf_counter() - t
            if child is not None:
                # After the answer: everything the program can still do is over (its output and
                # record are complete), but it is gone, with all it left, before the next one runs.
                # A request already waiting gets a child that does not rehearse first.
                if select.select([self.in_fd], [], [], 0)[0]:
                    self.rehearse = []
                try:
                    t = time.perf_counter()
                    self._cleanup(child)
                    self.after["cleanup_s"] = time.perf_counter() - t
                except ZygoteGone:
                    return
            self.after["after_answer_s"] = time.perf_counter() - t_after
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
            t0 = self.marks["ready"] = time.perf_counter()
            try:
                self._release(child)
                self.tmp_used = True
                linux.write_all(child.ctl, len(body).to_bytes(4, "big") + body)
                os.close(child.ctl)
                self.marks["sent"] = time.perf_counter()
                break
            except OSError:  # the waiting child is gone (killed from outside): use a fresh one
                _close_quietly(child.ctl, child.out, child.err, child.rep)
                self._cleanup(child)
                if attempt:
                    raise
        if self.forking is None and self.ready is None:
            # The next child is forked while this program runs: the fork (~2 ms of page-table
            # copying for the ~200 MB image) then overlaps the run instead of delaying the next
            # program sent back to back (docs/design.md, "What a program waits for"). It is released
            # (told its /tmp is its own) only after this program's clean-up.
            t = time.perf_counter()
            self._prefork_start()
            self.after["prefork_s"] = time.perf_counter() - t
        try:
            return self._supervise(child, timeout, cpu_limit(lim), keep, out_limit, mem_kb, t0, secret), child
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
            self.zygote.send({"op": "fork", "uid": uid, "workdir": workdir}, (out_w, err_w, rep_w, ctl_r))
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
            child.pid = int(self.zygote.recv()["pid"])
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

    def _supervise(self, child: "_Child", timeout, cpu_limit_s, keep, out_limit, mem_kb, t0, secret) -> dict:
        pid, out_r, err_r, rep_r = child.pid, child.out, child.err, child.rep
        exits = self.zygote.exits
        streams = {out_r: _Tail(keep), err_r: _Tail(keep)}
        report = bytearray()
        report_over = False
        zfd = self.zygote.sock.fileno()  # the zygote reports the exit
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
            if not exited and pid in exits:  # reported while another answer was awaited
                exited = True
                drain_until = now + 0.05
                poller.unregister(zfd)
            if exited and (not open_fds or now >= drain_until or client_gone):
                break
            if not exited and not open_fds and killed_for is None and rep is not None and "exit_code" in rep:
                # The capture wrote the record and closed the output on its way out (capture/core.py,
                # the exit function): the answer is complete once the kernel has the process exiting
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
                    self.zygote.drain()
                    if pid in exits and not exited:
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
                        rep, rep_error = parse_record(report, report_over, secret)
                    continue
                if fd == rep_r:
                    if len(report) + len(data) <= record.MAX_BYTES:
                        report += data
                    else:
                        report_over = True
                    continue
                streams[fd].add(data)
                if killed_for is None and streams[out_r].total + streams[err_r].total > out_limit:
                    killed_for = "output_limit"
                    self._kill_group(pid)
        self.marks["ended"] = time.perf_counter()  # exited (or killed) with its output read
        rep_open = rep_r in open_fds
        _close_quietly(out_r, err_r, rep_r)
        if early is not None:
            status, cpu = early  # the zygote's report of this exit is awaited by _cleanup
        else:
            if not exited:
                self._kill_group(pid)
            status, cpu = self.zygote.await_exit(pid)
            child.waited = True
        duration = time.perf_counter() - t0
        if rep_open:  # killed, or its descendants held the pipe: what it sent so far
            rep, rep_error = parse_record(report, report_over, secret)
        if rep is not None:
            rep.pop("exit_code", None)  # the server's to read; the answer has the kernel's
        self.marks["collected"] = time.perf_counter()
        return classify(status, killed_for, streams[out_r], streams[err_r], rep, rep_error, duration, cpu, timeout,
                        cpu_limit_s, client_gone, mem_kb, peak_kb)

    def _program_pids(self, first: int | None = None) -> list[int]:
        """Every process under the zygote but the child waiting for the next program and the
        earlier programs' :attr:`dying` first processes: the running program's, and the orphans
        it left (the zygote is their subreaper). While that child's fork is not answered yet (its
        pid unknown), only the tree of ``first`` (the program's first process) when given; the
        clean-up reads the answer first."""
        out: list[int] = []
        if self.forking is not None and first is not None:
            stack = [first]
        else:
            self._forget_exited()
            stack = [p for p in children_of(self.zygote.pid) if not self._waiting_or_dying(p)]
        while stack:
            p = stack.pop()
            out.append(p)
            stack.extend(children_of(p))
        return out

    def _exiting_alone(self, pid: int) -> bool:
        """Whether the first process ``pid`` is exiting (``PF_EXITING`` on every thread: no more
        user code) with no process of the program left beside it. Its own children are read
        before the zygote's (the waiting child's pid known): one the exit hands to the zygote, its
        subreaper, in between is seen there, so none is missed. Anything else left takes the full
        clean-up."""
        if not linux.all_exiting(pid) or children_of(pid):
            return False
        return all(p == pid or self._waiting_or_dying(p) for p in children_of(self.zygote.pid))

    def _waiting_or_dying(self, pid: int) -> bool:
        """The child waiting for the next program, or an earlier program's first process still
        exiting (a pid the kernel gave again to a live process is neither: it runs)."""
        if self.ready is not None and pid == self.ready.pid:
            return True
        return pid in self.dying and linux.all_exiting(pid)

    def _forget_exited(self) -> None:
        """Drop the exit reports of :attr:`dying` processes (no one waits for them)."""
        if self.dying:
            self.zygote.drain()
            for pid in [p for p in self.dying if p in self.zygote.exits]:
                self.dying.discard(pid)
                del self.zygote.exits[pid]

    def _program_memory_kb(self, first: int | None = None) -> int:
        """The memory the program's processes hold together (``memory.program_kb``)."""
        self.zygote.drain()
        if self.forking is not None and any("pid" in a for a in self.zygote.answers):
            self._prefork_finish()  # the next child's pid, to leave it out (without waiting for it)
        return memory.program_kb(self._program_pids(first), self.zygote.pid)

    def _kill_group(self, pid: int) -> None:
        try:
            os.killpg(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass

    def _cleanup(self, child: "_Child") -> None:
        """Take a program down: its process group, its exit, every process it left (by tree,
        then by uid), its ``/tmp``; then the waiting child may make its directory.

        When the program's first process is all that is left of it and is already exiting (the
        common case: the answer went out early, ``linux.exit_state``), its exit is not waited
        for: it runs no more user code, so its ``/tmp`` is detached and the next child released
        at once, while the kernel frees its image (milliseconds for the ~200 MB it shared, the
        largest share of a back-to-back program's latency, ``SandboxPool.profile``). It is
        :attr:`dying` until the zygote reports the exit, and no program's process meanwhile."""
        try:
            uid, pid = child.uid, child.pid
            self._kill_group(pid)
            self._forget_exited()
            if self.forking is not None:  # the next child's pid, so that it is not a leftover
                self._prefork_finish()
            if not child.waited:
                if self._exiting_alone(pid):
                    self.dying.add(pid)
                    return
                self.zygote.await_exit(pid)
                child.waited = True
            swept = False
            deadline = time.perf_counter() + 2.0
            while True:
                leftovers = self._program_pids()  # the exit report came after a sweep of zombies
                if leftovers:
                    self.zygote.call({"op": "reap"})
                    leftovers = self._program_pids()
                if not leftovers or time.perf_counter() > deadline:
                    break
                if not swept and self.reaper is not None:
                    # one signal to every process of the uid, however it re-grouped itself
                    self.reaper.kill_uid(uid)
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
                    shutil.rmtree(child.workdir + capture.core.EXPORT_SUFFIX, ignore_errors=True)
            except Exception:  # a tree too deep for rmtree: the next program's directory is new anyway
                pass
            self.tmp_used = False
            waiting = self.forking or self.ready
            if waiting is not None:
                self._release(waiting)


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
        """Keep the tail of ``data`` (bounded: trimmed to ``keep`` bytes now and then)."""
        self.total += len(data)
        self.buf += data
        if len(self.buf) > 2 * self.keep + (1 << 16):
            del self.buf[: len(self.buf) - self.keep]

    def text(self) -> str:
        """The kept tail as text, headed by how many bytes were left out."""
        data = bytes(self.buf[-self.keep:]) if self.keep else b""
        text = data.decode("utf-8", "replace")
        if self.total > len(data):
            text = f"[... {self.total - len(data)} bytes truncated ...]\n" + text
        return text
