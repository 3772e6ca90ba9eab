"""The supervisor's side of the zygote: forking it once, and the socket protocol to it.

The zygote (``zygote.py``) answers two requests, ``fork`` (the child's pipe ends go along by
``SCM_RIGHTS``; the answer is its pid) and ``reap`` (sweep the zombies programs left), in order,
over a ``SOCK_SEQPACKET`` socket. Between answers it sends, unasked, an exit report (wait
status and CPU time) as soon as a program's first process exits: the supervisor is not that
process's parent, and the report is how it learns of the exit. :class:`ZygoteLink` keeps the
reports (:attr:`ZygoteLink.exits`) and the answers that arrive while it waits for something
else (:attr:`ZygoteLink.answers`), so that neither is lost whichever it reads first.

Runs in the server process (standard library only).
"""
from __future__ import annotations

import json
import os
import select
import socket
import time

from . import zygote


class ZygoteGone(RuntimeError):
    """The zygote died: this server cannot fork any more (the pool replaces it)."""


class ZygoteLink:
    """The supervisor's end of the socket to the zygote ``pid``."""

    def __init__(self, pid: int, sock: socket.socket):
        self.pid, self.sock = pid, sock
        self.exits: dict[int, tuple[int, float]] = {}  # pid -> (wait status, CPU s), as reported
        self.answers: list[dict] = []  # answers read early (while waiting for an exit)

    def call(self, msg: dict, fds: tuple[int, ...] = ()) -> dict:
        """Send a request and wait for its answer."""
        self.send(msg, fds)
        return self.recv()

    def send(self, msg: dict, fds: tuple[int, ...] = ()) -> None:
        data = json.dumps(msg).encode()
        try:
            if fds:
                socket.send_fds(self.sock, [data], list(fds))
            else:
                self.sock.send(data)
        except OSError:
            raise ZygoteGone("the zygote is gone") from None

    def recv(self) -> dict:
        """The zygote's answer to the oldest request (exit reports that come first are kept)."""
        if self.answers:
            return self.answers.pop(0)
        while True:
            msg = self.message()
            if msg is None:
                raise ZygoteGone("the zygote is gone")
            if "exit" not in msg:
                return msg
            self._note_exit(msg)

    def message(self, flags: int = 0) -> dict | None:
        """The next message on the socket (``None``: the zygote is gone); with
        ``MSG_DONTWAIT``, raises ``BlockingIOError`` when there is none."""
        try:
            data = self.sock.recv(1 << 16, flags)
        except BlockingIOError:
            raise
        except OSError:
            return None
        return json.loads(data) if data else None

    def _note_exit(self, msg: dict) -> None:
        self.exits[int(msg["exit"])] = (int(msg["status"]), float(msg["cpu"]))

    def drain(self) -> None:
        """Read what waits on the socket (never blocks): exit reports, and answers (a fork
        asked for while a program runs), kept for :meth:`recv`."""
        while True:
            try:
                msg = self.message(socket.MSG_DONTWAIT)
            except BlockingIOError:
                return
            if msg is None:
                raise ZygoteGone("the zygote is gone")
            if "exit" in msg:
                self._note_exit(msg)
            else:
                self.answers.append(msg)

    def await_exit(self, pid: int, timeout: float = 10.0) -> tuple[int, float]:
        """Block until the zygote reports ``pid``'s exit (after it was killed)."""
        end = time.monotonic() + timeout
        while pid not in self.exits:
            left = end - time.monotonic()
            if left <= 0 or not select.select([self.sock], [], [], left)[0]:
                raise ZygoteGone(f"no exit report for {pid}")
            self.drain()
        return self.exits.pop(pid)


def start(zcfg: dict, install_capture, close_fds: tuple[int, ...]) -> tuple[ZygoteLink, dict]:
    """Fork the zygote and wait until it is ready; returns the link and its facts (what the
    server's hello reports). ``close_fds``: the supervisor's descriptors the zygote must not
    hold. In every child the zygote forks, this raises ``zygote.Start`` (the stack unwinds to
    the server's ``main``)."""
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    pid = os.fork()
    if pid == 0:  # the zygote: nothing of the supervisor's descriptors, then the solvers
        ours.close()
        for fd in close_fds:
            os.close(fd)
        try:
            z = zygote.Zygote(theirs, zcfg, install_capture)
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
    link = ZygoteLink(pid, ours)
    hello = link.message()
    if hello is None or "error" in hello:
        raise OSError(f"the zygote failed to start: {(hello or {}).get('error', 'no answer')}")
    return link, hello
