"""The reaper: a small helper process that ends every process of a uid.

A program's processes can leave its process group (``setsid``) and its process tree (a double
fork re-parents to the zygote, which the supervisor sweeps, but a process forking while it is
killed can slip past one sweep). What a uid may signal is exactly its own processes, and each
program has its own uid, so one ``kill(-1, SIGKILL)`` sent *as that uid* reaches all of them.
The supervisor cannot take a program's uid itself (it must stay root), so it forks this helper
once, at start-up, while its interpreter is still small (a fork per sweep would copy it); for
each sweep the helper forks a child that takes the uid and signals. Root only.
"""
from __future__ import annotations

import os
import signal
import struct

from . import linux

_UID = struct.Struct(">I")


class Reaper:
    """The helper process and the pipes to it; :meth:`kill_uid` sweeps one uid."""

    def __init__(self):
        req_r, req_w = os.pipe()
        rep_r, rep_w = os.pipe()
        pid = os.fork()
        if pid == 0:
            try:
                os.close(req_w)
                os.close(rep_r)
                _serve(req_r, rep_w)
            except BaseException:
                os._exit(1)
        os.close(req_r)
        os.close(rep_w)
        self.pid, self.req_w, self.rep_r = pid, req_w, rep_r

    @property
    def fds(self) -> tuple[int, int]:
        """The supervisor's ends of the pipes (a process forked from it closes them)."""
        return self.req_w, self.rep_r

    def kill_uid(self, uid: int) -> None:
        """SIGKILL every process of ``uid``, and wait until the helper has."""
        os.write(self.req_w, _UID.pack(uid))
        os.read(self.rep_r, 1)


def _serve(req_r: int, rep_w: int) -> None:
    """The helper's loop: one uid per request, one byte of answer per sweep; exits when the
    supervisor is gone."""
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
