"""The supervisor's verdict on a program: its validated record (:func:`parse_record`) and its
status and reason (:func:`classify`), as the answer the pool turns into a ``SandboxResult``.

The statuses are the pool's ``STATUSES``: ``ok``, ``error``, ``timeout``, ``memory``, ``killed``,
``output_limit``. A record that fails validation is the program's failure (status ``error``
with the reason), never the sandbox's.

Runs in the server process (standard library only).
"""
from __future__ import annotations

import os
import signal

from . import record
from .common import SETUP_FAILED


def parse_record(report: bytearray, over: bool, secret: str) -> tuple[dict | None, str | None]:
    """The validated record and None, or None and why it was rejected (``over``: the program
    wrote more than ``record.MAX_BYTES``, which were not kept)."""
    try:
        if over:
            raise record.RecordError(f"the record is larger than {record.MAX_BYTES >> 20} MiB")
        return record.parse(bytes(report), secret), None
    except record.RecordError as e:
        return None, str(e)


def classify(wstatus, killed_for, out, err, rep, rep_error, duration, cpu, timeout, cpu_limit, client_gone, mem_kb,
             peak_kb) -> dict:
    """The answer for one program: its status and the reason for it, from how it ended
    (``wstatus``, the wait status), what the supervisor killed it for (``killed_for``:
    ``"timeout"``, ``"output_limit"``, ``"memory"``, ``"client"`` or ``None``), its output
    (``out``/``err``: tails with ``text()`` and ``total``), its validated record or the reason it
    was rejected, and the limits it ran under.

    The order is the order of precedence: what the supervisor killed it for, then the signal
    that ended it (SIGXCPU, or SIGKILL at the CPU limit: ``timeout``; SIGXFSZ: ``error``; an
    out-of-memory message: ``memory``), then a child that could not be set up, a rejected record,
    a ``MemoryError``, and the exit code."""
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
    elif exit_code == SETUP_FAILED and "sandbox setup failed" in stderr_text:
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
