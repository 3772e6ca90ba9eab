"""The zygote: the one process every sandboxed program is forked from, and the child's set-up.

The supervisor (``supervisor.py``) reads programs, their output and their records; if children
were forked from it, each would start with a copy of everything the server had held: a program
that walks its stack up to the server's loop, or scans its own heap, would read earlier
programs' code, output and records. So the server forks this zygote once, at start-up, before it has read
any request; the zygote imports and warms the solvers, installs the solver-call capture
(``capture/``), freezes its heap, and from then on only forks. It never receives a byte of
a program: the server sends it the child's pipe ends (``SCM_RIGHTS`` over a ``SOCK_SEQPACKET``
socket) and a uid, and the program itself goes from the server straight to the waiting child
through its control pipe. Every child therefore starts from the same clean image.

The zygote is a child subreaper, so the orphans of a program (double forks, ``setsid``) stay its
descendants and the server finds them by walking its children; it reaps them when the server
asks, and reports, unasked, the exit status and CPU time of each program's first process as soon
as it exits (the server is not its parent; the message is also how the server learns of the
exit). It dies with the server (``PR_SET_PDEATHSIG``), and its children die with it.

A child, before its program arrives (off the latency path: the server has the next child forked
as soon as it has answered the last program): own process group; stdin on ``/dev/null``,
stdout/stderr into the server's pipes, the record pipe on :data:`REPORT_FD`; a fresh uid; ceiling
rlimits; root dropped; ``PR_SET_NO_NEW_PRIVS``; parent-death signal; a clean environment; its
working directory is ``/``. Then it waits for the server's first message, which comes once the
``/tmp`` it will use is its own (the last program's is gone and a fresh one mounted): it creates
its working directory there, with the unpredictable name the server chose, and rehearses the
optimisation libraries the message names (:meth:`Zygote._rehearse`) unless its program is
already waiting. When the program arrives it sets the program's own limits (no POSIX message
queues among them), then optional Landlock and seccomp, and runs the program as ``__main__`` on
a stack unwound to the interpreter's top (:class:`Start`), with the capture armed with the
run's secret.

While it has nothing to do, the zygote backs its image with transparent huge pages, 2 MiB at a
time (:meth:`Zygote.serve`): a fork copies, and an exit frees, one page-table entry per 4 KiB of
private memory, and the image has ~100 MB of it.
"""
from __future__ import annotations

import builtins
import gc
import io
import linecache
import json
import os
import resource
import select
import signal
import socket
import sys
import time
import traceback
import types

from . import linux
from .common import SETUP_FAILED, children_of, cpu_limit, within
from .rehearsals import PROBES, REHEARSALS

REPORT_FD = 1000  # where the child's capture writes its record (its control pipe: REPORT_FD + 1)
CEIL_NPROC = 1024  # RLIMIT_NPROC of a child waiting for its program (lowered when it arrives)
MSG_MAX = 1 << 16  # zygote messages are small: a few ints
#: this package, under the name the server loaded it by
PACKAGE = __name__.rpartition(".")[0]


class Start(BaseException):
    """Raised in a freshly set-up child to unwind the zygote's frames before the program runs
    (caught by the server's ``main``); ``job`` is what :func:`run_program` needs."""

    def __init__(self, job: list):
        super().__init__()
        self.job = job


# ----------------------------------------------------------------------------- the zygote
class Zygote:
    """The zygote, on its end of the supervisor's socket ``sock``: :meth:`prepare` once, then
    :meth:`serve`. ``cfg``: ``landlock_abi``, ``seccomp`` and ``hide`` (the trees a program must
    not import from); ``install_capture``: the capture's installer (``capture.install``)."""

    def __init__(self, sock: socket.socket, cfg: dict, install_capture):
        self.sock = sock
        self.cfg = cfg
        self.install_capture = install_capture
        self.root = os.geteuid() == 0
        self.landlock = int(cfg.get("landlock_abi", 0))
        self.seccomp = None
        self.capture = None
        self.huge: list[int] = []  # the image's 2 MiB chunks still to back with huge pages
        #: library -> the pages of the image its probe wrote ("write": copied ahead) and the file
        #: pages it read ("read": mapped ahead) (:data:`PROBES`)
        self.prefault: dict[str, dict[str, list[tuple[int, int]]]] = {}

    def prepare(self) -> dict:
        """Import and warm the solvers, install the capture, freeze the heap: what every child
        inherits. Returns the facts the server's hello reports."""
        linux.prctl(linux.PR_SET_CHILD_SUBREAPER, 1)
        linux.prctl(linux.PR_SET_PDEATHSIG, signal.SIGKILL)
        if self.cfg.get("seccomp"):
            self.seccomp = linux.seccomp_filter()
        import_ms = import_solvers()
        warm()
        self.capture, install = self.install_capture()
        # fork() copies only the calling thread. OR-Tools' import starts one idle thread (parked on a
        # futex, holding nothing); the count is reported so that a new one does not go unnoticed.
        threads = len(os.listdir("/proc/self/task"))
        _hide(self.cfg)
        # The sandbox's own modules (the capture's among them) must not be found by name (the
        # capture's "Trust"); nothing needs them by name from here on. Dropped here, once: dropped
        # in every child, each would copy the pages of the module objects it decrefs.
        for name in [n for n in sys.modules if n == PACKAGE or n.startswith(PACKAGE + ".")]:
            del sys.modules[name]
        gc.collect()
        gc.freeze()  # children do not touch the shared pages when they collect
        self.prefault = {lib: self._probe(code) for lib, code in PROBES.items()}
        self.huge = linux.anonymous_chunks()
        pages = {lib: {k: sum(n for _, n in r) // linux.PAGE for k, r in p.items()} for lib, p in self.prefault.items()}
        return {"import_ms": import_ms, "instrumentation": install, "threads": threads, "prefault_pages": pages,
                "seccomp": self.seccomp is not None, "rss_kb": _status_kb("VmRSS"),
                "vms_kb": _status_kb("VmSize"), "huge_page_chunks": len(self.huge)}

    def _probe(self, code: str) -> dict[str, list[tuple[int, int]]]:
        """The pages of the image a child running ``code`` (through the capture, its record
        serialised) writes ("write") and the file pages it reads ("read": code and read-only data,
        which a fork does not map): run once, in a child forked now and thrown away; empty when
        it fails."""
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:
            try:
                os.close(r)
                regions, files = linux.private_writable_regions(), linux.file_regions()
                null = os.open(os.devnull, os.O_WRONLY)
                os.dup2(null, 1)
                os.dup2(null, 2)

                def run():
                    exec(code, {"__name__": "__main__"})
                    self.capture.report()

                self.capture.rehearse("/nonexistent", run)
                linux.write_all(w, json.dumps({"write": linux.written_ranges(regions),
                                                "read": linux.mapped_ranges(files)}).encode())
            finally:
                os._exit(0)
        os.close(w)
        data = bytearray()
        while chunk := os.read(r, 1 << 16):
            data += chunk
        os.close(r)
        os.waitpid(pid, 0)
        try:
            return {k: [(int(a), int(n)) for a, n in v] for k, v in json.loads(data).items() if k in ("write", "read")}
        except (ValueError, TypeError, AttributeError):
            return {}

    def serve(self) -> None:
        """Answer the server until it goes away (then exit), and tell it, unasked, when a
        program's first process exits (its status and CPU time: the server is not its parent).
        In a child, raises :class:`Start`."""
        poller = select.poll()
        poller.register(self.sock.fileno(), select.POLLIN)
        exits: dict[int, int] = {}  # pidfd -> pid
        while True:
            events = poller.poll(0 if self.huge else None)
            if not events and self.huge:
                # Idle: back one more 2 MiB of the image with a huge page (a few ms each; the
                # next request waits for at most one). A fork copies, and an exit frees, one
                # page-table entry per 4 KiB of private memory (milliseconds each way for this
                # image); a huge page is one entry, and a child's first write into one
                # still copies only the 4 KiB it writes (the kernel splits the mapping).
                linux.collapse(self.huge.pop())
                continue
            for fd, _ in events:
                if fd in exits:
                    pid = exits.pop(fd)
                    poller.unregister(fd)
                    os.close(fd)
                    try:
                        _, status, ru = os.wait4(pid, 0)
                        cpu = ru.ru_utime + ru.ru_stime
                    except ChildProcessError:  # cannot happen: only _sweep reaps, and never these
                        status, cpu = 0, 0.0
                    if _has_zombie():  # and the zombies the program left (one syscall to know)
                        self._sweep(set(exits.values()))
                    self.sock.send(json.dumps({"exit": pid, "status": status, "cpu": cpu}).encode())
                    continue
                try:
                    msg, fds, _, _ = socket.recv_fds(self.sock, MSG_MAX, 4)
                except OSError:
                    os._exit(0)
                if not msg:
                    os._exit(0)
                req = json.loads(msg)
                op = req.get("op")
                if op == "fork":
                    pid = self._fork(req, fds)
                    pidfd = os.pidfd_open(pid)
                    exits[pidfd] = pid
                    poller.register(pidfd, select.POLLIN)
                    reply = {"pid": pid}
                else:
                    for f in fds:
                        os.close(f)
                    if op == "reap":
                        self._sweep(set(exits.values()))
                        reply = {"ok": True}
                    else:
                        reply = {"error": f"unknown op {op!r}"}
                self.sock.send(json.dumps(reply).encode())

    def _fork(self, req: dict, fds: list[int]) -> int:
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child never returns from here
            try:
                self.sock.close()
                job = self._child(int(req["uid"]), str(req["workdir"]), fds)
            except BaseException as e:
                _setup_failed(e)
            raise Start(job)
        for fd in fds:
            os.close(fd)
        try:
            os.setpgid(pid, pid)
        except OSError:
            pass  # the child did it first, or is already gone
        return pid

    def _sweep(self, keep: set[int]) -> None:
        """Reap the zombies among this process's children: the orphans programs left. The
        first processes (``keep``) are waited for by pid when their pidfd fires."""
        for pid in children_of(os.getpid()):
            if pid not in keep:
                try:
                    os.waitpid(pid, os.WNOHANG)
                except ChildProcessError:
                    pass

    # -- the child --------------------------------------------------------------------------
    def _child(self, uid: int, workdir: str, fds: list[int]) -> list:
        out_w, err_w, rep_w, ctl_r = fds
        os.setpgid(0, 0)
        devnull = os.open(os.devnull, os.O_RDONLY)
        os.dup2(devnull, 0)
        os.dup2(out_w, 1)
        os.dup2(err_w, 2)
        os.dup2(rep_w, REPORT_FD)
        os.dup2(ctl_r, REPORT_FD + 1)
        os.closerange(3, REPORT_FD)
        os.closerange(REPORT_FD + 2, 1 << 16)
        os.chdir("/")
        # ceilings while waiting; the program's own limits are set (lowered) once it arrives
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        resource.setrlimit(resource.RLIMIT_NPROC, (CEIL_NPROC, CEIL_NPROC))
        if self.root:
            os.setgroups([])
            os.setgid(uid)
            os.setuid(uid)
        linux.prctl(linux.PR_SET_NO_NEW_PRIVS, 1)
        linux.prctl(linux.PR_SET_PDEATHSIG, signal.SIGKILL)  # after setuid, which clears it
        if os.getppid() == 1:
            os._exit(SETUP_FAILED)
        licence = os.environ.get("GRB_LICENSE_FILE")  # a full Gurobi licence the pool was started with
        os.environ.clear()
        os.environ.update({"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": workdir, "TMPDIR": workdir,
                           "LANG": "C.UTF-8", "PYTHONIOENCODING": "utf-8"})
        if licence:
            os.environ["GRB_LICENSE_FILE"] = licence
        # The first message says the /tmp this directory belongs in is this child's own: it may
        # have been forked while the previous program ran, before the server mounted a fresh one.
        ready = linux.read_frame(REPORT_FD + 1)
        if ready is None:  # the server discarded this child
            os._exit(0)
        os.mkdir(workdir, 0o700)  # as the program's uid
        os.chdir(workdir)
        self._rehearse([str(x) for x in ready.get("rehearse") or ()], workdir, REPORT_FD + 1)
        # the program arrives in run_program, once this stack is unwound (not on its path)
        return [workdir, self.capture, self.landlock, self.seccomp]

    def _rehearse(self, libraries: list[str], workdir: str, ctl: int) -> None:
        """Solve a tiny model with each of ``libraries`` (:data:`REHEARSALS`), through the
        capture (and its MPS export), while no program is waiting; then forget what the capture
        saw.

        A program's first solve in a fresh child is slow for reasons that have nothing to do
        with its model: each page of the shared image the solver and the capture write to is
        copied on that first write (a page fault each, hundreds of them); the libraries' lazily
        built tables and caches are built. The rehearsal pays that before the program arrives, so
        its first solve takes a small fraction of those faults (``tests/test_sandbox_speedups.py``
        checks the drop; ``benchmarks/or_modelling.py`` measures the end-to-end latency). What a
        program prints and what the capture reports are the same in a rehearsed child and a cold
        one (tested), which is why z3 and pysmt get only their probes' page copies
        (:data:`PROBES`, :attr:`prefault`), no rehearsal.
        It runs only while the control pipe is empty (checked before each library), so a
        program that is already waiting starts at once, unrehearsed; its output goes to
        /dev/null, and HiGHS's worker threads are stopped afterwards. Nothing of a program is
        involved: the models are fixed text here, and the child is the program's own, forked
        from the clean image."""
        if not libraries:
            return
        for lib in libraries:  # the page copies and mappings alone (z3, pysmt): no code runs, no state changes
            if lib in self.prefault and not select.select([ctl], [], [], 0)[0]:
                linux.populate_write(self.prefault[lib].get("write", ()))
                linux.populate_read(self.prefault[lib].get("read", ()))
        if not any(lib in REHEARSALS for lib in libraries):
            return
        saved = os.dup(1), os.dup(2)
        null = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(null, 1)
            os.dup2(null, 2)
            for lib in libraries:
                if lib not in REHEARSALS or select.select([ctl], [], [], 0)[0]:
                    continue
                try:
                    self.capture.rehearse(workdir, lambda: exec(REHEARSALS[lib], {"__name__": "__rehearsal__"}))
                except Exception:
                    pass  # the program will meet the same error, in its own time
            try:
                sys.stdout.flush()
                sys.stderr.flush()
            except Exception:
                pass
            linux.libc.fflush(None)  # C stdio buffers, written into /dev/null now, not later
        finally:
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            for fd in (*saved, null):
                os.close(fd)





def _has_zombie() -> bool:
    """Whether some child of this process has exited and not been waited for (not reaping it)."""
    try:
        return os.waitid(os.P_ALL, 0, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    except ChildProcessError:
        return False


def _setup_failed(e: BaseException) -> None:
    try:
        os.write(2, f"sandbox setup failed: {type(e).__name__}: {e}\n".encode())
    finally:
        os._exit(SETUP_FAILED)


def _limits(lim: dict, image_kb: int) -> None:
    cpu = cpu_limit(lim)
    used = resource.getrusage(resource.RUSAGE_SELF)
    spent = int(used.ru_utime + used.ru_stime)  # seconds this child spent before the program
    mem_mb = int(lim.get("memory_mb", 2048))
    fsize = int(lim.get("fsize_mb", 16)) << 20
    nproc = min(int(lim.get("nproc", 32)), CEIL_NPROC)
    nofile = int(lim.get("nofile", 256))
    resource.setrlimit(resource.RLIMIT_CPU, (spent + cpu, spent + cpu + 1))
    # the address space the program may add on top of the pre-imported solvers
    vm = (image_kb << 10) + (mem_mb << 20)
    resource.setrlimit(resource.RLIMIT_AS, (vm, vm))
    resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))
    resource.setrlimit(resource.RLIMIT_NPROC, (nproc, nproc))
    resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, nofile))
    resource.setrlimit(resource.RLIMIT_MSGQUEUE, (0, 0))  # no POSIX message queues either


def _status_kb(key: str) -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    return 0


# ----------------------------------------------------------------------------- solvers
def import_solvers() -> dict:
    """Import every solver a program may use (what the zygote's image holds); the milliseconds
    each took, or why it is unavailable."""
    times = {}
    for mod, stmt in (
        ("z3", "import z3"),
        ("pysmt", "import pysmt.shortcuts, pysmt.typing, pysmt.smtlib.script"),
        ("pysat", "import pysat.formula, pysat.solvers, pysat.card"),
        ("ortools", "from ortools.sat.python import cp_model; from ortools.linear_solver import pywraplp"),
        ("sympy", "import sympy, sympy.logic, sympy.logic.inference, sympy.logic.boolalg"),
        ("gurobipy", "import gurobipy"),
        # imported, never solved with: a HiGHS solve starts worker threads, which fork() does not copy
        ("highspy", "import highspy"),
        ("mathopt", "from ortools.math_opt.python import mathopt"),
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
    return times


def warm() -> None:
    """Pay the solvers' first-call costs once, in the image every child shares."""
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
        # HiGHS prints its banner once per process, at the first Highs(): here, into /dev/null, so
        # that no child prints it (whether a child was rehearsed must not change its output). A
        # Highs object starts no thread until it solves.
        "import highspy\nhighspy.Highs()",
    ):
        try:
            exec(code, {"__name__": "__warmup__"})
        except Exception:
            pass


def _hide(cfg: dict) -> None:
    """Belt and braces next to the file-system view: nothing left in this interpreter that
    would import from a tree the config hides (``cfg["hide"]``: the host package's sources).

    Gone are the finders of editable installs (each points into a source checkout) and any
    finder whose mapping leads into a hidden tree, the modules loaded from one, and the
    ``sys.path`` entries inside one; the interpreter's own prefix (a venv inside a hidden
    checkout) stays."""
    hidden = [os.path.abspath(h) for h in cfg.get("hide", [])]
    venv = os.path.abspath(sys.prefix)

    def is_hidden(path: str) -> bool:
        path = os.path.abspath(path)
        return not within(path, venv) and any(within(path, h) for h in hidden)

    for finder in list(sys.meta_path):
        mapping = getattr(finder, "MAPPING", None) or getattr(getattr(finder, "__self__", None), "MAPPING", None)
        module = str(getattr(finder, "__module__", "")) + " " + type(finder).__module__
        if "__editable__" in module or (isinstance(mapping, dict) and any(
                isinstance(v, str) and is_hidden(v) for v in mapping.values())):
            sys.meta_path.remove(finder)
    for name, mod in list(sys.modules.items()):
        path = mod.__dict__.get("__file__") if isinstance(mod, types.ModuleType) else None
        if isinstance(path, str) and is_hidden(path):
            del sys.modules[name]
    sys.path[:] = [p for p in sys.path if p and not is_hidden(p)]


# ----------------------------------------------------------------------------- the program
def run_program(job: list) -> None:
    """Wait for the child's program, then run it as ``__main__`` with the capture armed; never
    returns.

    Everything that does not need the program (the zygote's frames unwound, the standard streams,
    ``__main__``) is done before it is read, while the child waits; once it arrives, its limits,
    Landlock and seccomp go on, and the capture is armed with the run's secret (the sandbox's
    modules are not in ``sys.modules``: :meth:`Zygote.prepare` dropped them). ``job`` is emptied
    first and the request deleted, so no frame below the program holds the secret."""
    workdir, capture, landlock, seccomp = job
    job.clear()
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
    image_kb = _status_kb("VmSize")
    try:
        req = linux.read_frame(REPORT_FD + 1)
        os.close(REPORT_FD + 1)
        if req is None:  # the server discarded this child
            os._exit(0)
        _limits(req.get("limits") or {}, image_kb)
        if landlock:
            linux.apply_landlock(workdir, landlock)
        if seccomp is not None:
            seccomp.load()
    except BaseException as e:
        _setup_failed(e)
    del landlock, seccomp
    code, secret = str(req.get("code", "")), str(req.get("secret", ""))
    del req
    linecache.cache[filename] = (len(code), None, code.splitlines(True), filename)
    capture.begin(REPORT_FD, secret)
    del secret
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
        capture.note_memory_error()
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
            # nor the capture's wrappers and import hook, which sit under every solver call and import
            own = capture.source_files
            te.stack = traceback.StackSummary.from_list([f for f in te.stack if f.filename not in own])
            sys.stderr.write("".join(te.format()))
        except BaseException:
            pass
        if isinstance(value, MemoryError) or "MemoryError" in repr(value):
            capture.note_memory_error()
        status = 1
    capture.exit(status)
