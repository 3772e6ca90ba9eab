"""The pool's handle on one fork server: starting it (``python -I server.py`` with an empty
environment, optionally inside bubblewrap), the request/answer protocol, and killing it with
everything its programs left.

A server gets no environment of ours (no secrets, no seeds, no ``PYTHON*`` variables) and only
its config on the command line: the trees to hide (:attr:`SandboxConfig.hide`, resolved), the
trees it may read, its block of uids and isolation settings. Requests and answers are
length-prefixed JSON on its stdin and stdout; its stderr carries start-up errors only.
"""
from __future__ import annotations

import json
import os
import random
import select
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import asdict
from pathlib import Path
from typing import Sequence

from . import linux
from .config import Limits, SandboxConfig
from .result import LOST, SandboxError, SandboxResult

#: this package's directory: ``server.py`` and the modules it loads from it
SANDBOX_DIR = Path(__file__).resolve().parent
SERVER_PATH = SANDBOX_DIR / "server.py"


class ServerProcess:
    """One fork server process and the pipe protocol to it (used by one thread at a time).

    ``slot``: its place in the pool; ``hello``: what the server reported when it started
    (its pid, the zygote's, the isolation levels, import times, memory); ``uid_base``: the
    first of the 4096 uids its programs run under."""

    def __init__(self, cfg: SandboxConfig, slot: int):
        self.cfg = cfg
        self.slot = slot
        self.proc: subprocess.Popen | None = None
        self.hello: dict = {}
        self.uid_base = 0
        self.counter = 0
        self.last_phases: dict[str, float] | None = None

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc is not None else None

    @property
    def started(self) -> bool:
        return self.proc is not None or bool(self.hello)

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def start(self) -> None:
        """Start the server and wait for its hello; raises :class:`SandboxError` when it does not
        come (the server's start-up errors are the message)."""
        # A random block of 4096 uids per server: two pools on one machine do not share uids.
        self.uid_base = random.SystemRandom().randrange(1 << 20, 1 << 30) & ~0xFFF
        hide = [str(Path(h).resolve()) for h in self.cfg.hide]
        extra = [str(Path(p).resolve()) for p in self.cfg.extra_ro]
        lic = os.environ.get("GRB_LICENSE_FILE")
        if lic and os.path.exists(lic):
            extra.append(str(Path(lic).resolve()))
        argv = [sys.executable, "-I", str(SERVER_PATH)]
        bwrap = shutil.which("bwrap") if self.cfg.bwrap else None
        if bwrap:
            argv = _bwrap_argv(bwrap, hide, self.cfg.tmp_mb) + argv
        cfg = {
            "uid_base": self.uid_base,
            "uid_span": 4096,
            "isolation": "basic" if bwrap else self.cfg.isolation,
            "bwrap": "active" if bwrap else ("unavailable: bwrap is not installed" if self.cfg.bwrap else "off (setting)"),
            "landlock": self.cfg.landlock,
            "seccomp": self.cfg.seccomp,
            "hide": hide,
            "extra_ro": extra,
            "tmp_mb": self.cfg.tmp_mb,
        }
        # The server gets no environment of ours: no secrets, no seeds, no PYTHON* variables.
        env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8", "MALLOC_ARENA_MAX": "2",
               "HOME": "/nonexistent", "PYTHONDONTWRITEBYTECODE": "1"}
        if lic:
            env["GRB_LICENSE_FILE"] = lic
        self.proc = subprocess.Popen(
            argv + [json.dumps(cfg)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            env=env, cwd="/", close_fds=True, start_new_session=True,
        )
        hello = self._read(self.cfg.start_timeout_s)
        if not hello or "hello" not in hello:
            proc = self.proc
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            proc.wait()
            err = proc.stderr.read().decode("utf-8", "replace")[-2000:]
            self.kill()
            raise SandboxError("the sandbox server failed to start: " + (err or "no answer"))
        self.proc.stderr.close()  # start-up errors only; the server closed its end after hello
        self.hello = hello

    def request(self, code: str, limits: Limits, rehearse: Sequence[str] = (), profile: bool = False) -> SandboxResult:
        """Run one program on this server; a server that died or hangs is killed and the result
        is ``killed``. ``profile``: the server says when each phase ended, and
        :attr:`last_phases` holds those marks with this side's send and receive times."""
        self.counter += 1
        self.last_phases = None
        msg = {"id": self.counter, "code": code, "limits": asdict(limits)}
        if rehearse:
            msg["rehearse"] = list(rehearse)
        if profile:
            msg["profile"] = 1
        t0 = time.perf_counter()
        try:
            linux.write_frame(self.proc.stdin.fileno(), msg)
        except (OSError, ValueError):
            return self._lost(t0, f"the sandbox server was gone; {LOST}")
        # the server enforces the limit; this margin only catches a server that hangs or died
        resp = self._read(limits.timeout_s + 10.0)
        t1 = time.perf_counter()
        if not isinstance(resp, dict) or resp.get("id") != self.counter:
            return self._lost(t0, f"the sandbox server died or stopped answering while running the "
                                  f"program; {LOST}")
        marks = resp.get("phases")
        if profile and isinstance(marks, dict) and all(type(v) is float for v in marks.values()):
            self.last_phases = {**marks, "client_send": t0, "client_received": t1}
        return SandboxResult.from_response(resp, self.pid)

    def _lost(self, t0: float, reason: str) -> SandboxResult:
        pid = self.pid
        self.kill()
        return SandboxResult.failure("killed", reason, time.perf_counter() - t0, pid)

    def _read(self, timeout: float) -> dict | None:
        fd = self.proc.stdout.fileno()
        deadline = time.monotonic() + timeout
        buf = bytearray()
        need = 4
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            r, _, _ = select.select([fd], [], [], left)
            if not r:
                return None
            chunk = os.read(fd, max(need - len(buf), 1 << 16) if len(buf) >= 4 else 4 - len(buf))
            if not chunk:
                return None
            buf += chunk
            if len(buf) >= 4:
                need = 4 + int.from_bytes(buf[:4], "big")
                if len(buf) >= need:
                    try:
                        return json.loads(bytes(buf[4:need]))
                    except (ValueError, RecursionError):
                        return None

    def ping(self, timeout: float = 5.0) -> bool:
        """Whether the server answers a ping within ``timeout`` seconds."""
        try:
            linux.write_frame(self.proc.stdin.fileno(), {"ping": 1})
        except (OSError, ValueError, AttributeError):
            return False
        resp = self._read(timeout)
        return bool(resp and resp.get("pong") == 1)

    def kill(self) -> None:
        """End the server and anything its children left (by their uids)."""
        proc, self.proc = self.proc, None
        if proc is None:
            return
        for stream in (proc.stdin, proc.stdout, proc.stderr):
            try:
                if stream is not None:
                    stream.close()
            except OSError:
                pass
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass
        if self.uid_base:
            _kill_uids(self.uid_base, self.uid_base + 4096)

    def close(self) -> None:
        """Closing stdin ends a healthy server (it kills its running child); then make sure."""
        proc = self.proc
        if proc is None:
            return
        try:
            proc.stdin.close()
            proc.wait(timeout=2)
        except (OSError, subprocess.TimeoutExpired, ValueError):
            pass
        self.kill()


def _bwrap_argv(bwrap: str, hide: list[str], tmp_mb: int) -> list[str]:
    """Start the server inside bubblewrap: new net/IPC/UTS/PID namespaces, the file system read-only,
    a private /tmp and /proc, the hidden trees replaced by empty tmpfs (the interpreter's prefixes
    inside them bound back), and only the capabilities the server needs to drop each child's uid."""
    argv = [bwrap, "--die-with-parent", "--unshare-net", "--unshare-ipc", "--unshare-uts", "--unshare-pid",
            "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
            "--size", str(tmp_mb << 20), "--tmpfs", "/tmp"]
    for h in hide:
        argv += ["--tmpfs", h]
    for prefix in sorted({sys.prefix, sys.exec_prefix, str(SANDBOX_DIR)}):
        if any(prefix == h or prefix.startswith(h.rstrip("/") + "/") for h in hide):
            argv += ["--ro-bind", prefix, prefix]
    for cap in ("CAP_SETUID", "CAP_SETGID", "CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_FOWNER", "CAP_KILL"):
        argv += ["--cap-add", cap]
    return argv + ["--"]


def _kill_uids(lo: int, hi: int) -> None:
    """SIGKILL every process whose real uid is in ``[lo, hi)`` (what a dead server left)."""
    if os.geteuid() != 0:
        return
    for _ in range(3):
        found = False
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                with open(f"/proc/{entry}/status") as f:
                    for line in f:
                        if line.startswith("Uid:"):
                            uid = int(line.split()[1])
                            break
                    else:
                        continue
            except (OSError, ValueError):
                continue
            if lo <= uid < hi:
                found = True
                try:
                    os.kill(int(entry), signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
        if not found:
            return
