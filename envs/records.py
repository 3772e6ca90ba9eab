"""Reading records from outside: dataset files, JSON text and JSON values, bounded and checked once.

Every dataset loader (``solvergym.envs.opt.datasets``, ``solvergym.envs.sat.datasets``) and every
``reset(options={"instance": ...})`` (:meth:`~solvergym.envs.instance.Instance.coerce`) reads
what a user, a download or a model wrote through these functions, so that one set of bounds
holds everywhere and a bad record is a ``ValueError`` saying what is wrong (and, in a file,
``path:line``), never a ``TypeError``, a ``RecursionError``, a stall or an exhausted memory:

- :func:`read_regular` reads a **regular file** only (symlinks are followed; a device such as
  ``/dev/zero``, a FIFO, a socket or a directory is refused from ``fstat`` of the opened
  descriptor, before a byte is read) and at most ``max_bytes`` of it: a file that reports a
  small size and then grows or never ends (``/proc``) is refused once it passes the bound.
- :func:`parse_json` bounds the text's length, parses it, and checks the value with
  :func:`check_value`.
- :func:`check_value` walks a value iteratively (no recursion, whatever its depth): nesting
  deeper than :data:`MAX_DEPTH` levels and non-finite numbers (``NaN``, ``Infinity``, which
  :mod:`json` reads but are not JSON) are refused. A deep value would otherwise pass the loader
  and make a later ``json.dumps`` or ``copy.deepcopy`` (every reset serialises its instance)
  raise ``RecursionError``.
- :func:`read_jsonl` splits a file into ``(line, value, error)`` records with those checks.

The bounds are far above every real record: the deepest instance of any family is 6 levels (an
OR tool-mode instance: ToolInstance > problem > model > constraints > row > coefficients), the
largest a few hundred kB (an OR instance at its largest size), the largest public dataset file a
few MB.
"""
from __future__ import annotations

import json
import math
import os
import stat
from pathlib import Path
from typing import Any

__all__ = [
    "MAX_DEPTH",
    "MAX_RECORD_CHARS",
    "MAX_FILE_BYTES",
    "read_regular",
    "read_text",
    "check_value",
    "parse_json",
    "read_jsonl",
    "where",
]

#: the deepest nesting of lists and dicts accepted (the top-level record is level 1)
MAX_DEPTH = 32
#: the longest JSON text of one record or instance accepted, in characters
MAX_RECORD_CHARS = 8 << 20
#: the largest dataset file read
MAX_FILE_BYTES = 256 << 20

_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
          (stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"))


def _named(path: str | os.PathLike) -> str:
    """``path`` as an error names it: with its target when it is a symlink."""
    text = os.fspath(path)
    try:
        target = os.path.realpath(text)
    except (OSError, ValueError):
        return text
    return text if target == os.path.abspath(text) else f"{text} (-> {target})"


def read_regular(path: str | os.PathLike, max_bytes: int = MAX_FILE_BYTES) -> bytes:
    """The bytes of the regular file at ``path`` (symlinks followed); ``ValueError`` naming the
    path when it is not a regular file or holds more than ``max_bytes``; ``OSError`` when it cannot
    be opened."""
    # O_NONBLOCK: opening a FIFO for reading must not wait for a writer; it is refused just below.
    fd = os.open(os.fspath(path), os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        st = os.fstat(fd)  # of what was opened: a path swapped after a check cannot slip through
        if not stat.S_ISREG(st.st_mode):
            kind = next((name for test, name in _KINDS if test(st.st_mode)), "not a plain file")
            raise ValueError(f"{_named(path)}: {kind}, not a regular file")
        if st.st_size > max_bytes:
            raise ValueError(f"{_named(path)}: {st.st_size} bytes; the limit is {max_bytes}")
        os.set_blocking(fd, True)
        chunks, total = [], 0
        while True:
            chunk = os.read(fd, min(1 << 20, max_bytes + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
            if total > max_bytes:  # a file that reported less than it holds (/proc) or grew
                raise ValueError(f"{_named(path)}: more than {max_bytes} bytes; the limit is {max_bytes}")
        return b"".join(chunks)
    finally:
        os.close(fd)


def read_text(path: str | os.PathLike, max_bytes: int = MAX_FILE_BYTES) -> str:
    """:func:`read_regular` decoded as UTF-8 (a leading BOM dropped); ``ValueError`` if it is not."""
    data = read_regular(path, max_bytes)
    try:
        return data.decode("utf-8-sig")  # -sig: a BOM some editors write is not a record
    except UnicodeDecodeError as e:
        raise ValueError(f"{_named(path)}: not UTF-8 text ({e.reason} at byte {e.start})") from None


def check_value(value: Any, max_depth: int = MAX_DEPTH) -> None:
    """``ValueError`` when ``value`` nests lists, tuples or dicts deeper than ``max_depth`` levels
    or holds a non-finite float; iterative, so any depth is checked without recursion. Other
    types are left to the instance's own validation."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, float):
            if not math.isfinite(item):
                raise ValueError(f"not plain JSON: {item!r} is not a JSON number")
            continue
        if isinstance(item, dict):
            children = item.values()
        elif isinstance(item, (list, tuple)):
            children = item
        else:
            continue
        if depth > max_depth:
            raise ValueError(f"nested deeper than {max_depth} levels")
        stack.extend((child, depth + 1) for child in children if isinstance(child, (dict, list, tuple, float)))


def parse_json(text: Any, *, max_chars: int = MAX_RECORD_CHARS, max_depth: int = MAX_DEPTH,
               what: str = "the text") -> Any:
    """The JSON value of ``text`` (at most ``max_chars`` characters; checked by
    :func:`check_value`); ``ValueError`` saying what is wrong, starting with ``what``."""
    if isinstance(text, (bytes, bytearray)):
        try:
            text = bytes(text).decode("utf-8")
        except UnicodeDecodeError as e:
            raise ValueError(f"{what} is not UTF-8 ({e.reason} at byte {e.start})") from None
    if not isinstance(text, str):
        raise ValueError(f"{what} must be JSON text, got {type(text).__name__}")
    if len(text) > max_chars:
        raise ValueError(f"{what} is {len(text)} characters; the limit is {max_chars}")
    try:
        value = json.loads(text)
    except json.JSONDecodeError as e:
        raise ValueError(f"{what} is not JSON: {e.msg} at line {e.lineno} column {e.colno}") from None
    except RecursionError:  # the parser's own guard: far deeper than max_depth
        raise ValueError(f"{what} is not usable JSON: nested deeper than {max_depth} levels") from None
    try:
        check_value(value, max_depth)
    except ValueError as e:
        raise ValueError(f"{what} is {e}") from None
    return value


def read_jsonl(path: str | os.PathLike, *, max_bytes: int = MAX_FILE_BYTES, max_line_chars: int = MAX_RECORD_CHARS,
               max_depth: int = MAX_DEPTH, text: str | None = None) -> list[tuple[int, Any, str | None]]:
    """The records of a JSON Lines file: ``[(line, value, error)]``, blank lines skipped, lines
    counted from 1. ``error`` (and ``value`` None) for a line that is too long, not JSON, too deep
    or not plain JSON; the file itself must pass :func:`read_text` (``ValueError`` naming it).
    ``text``: the file's text, already read by :func:`read_text`."""
    if text is None:
        text = read_text(path, max_bytes)
    out: list[tuple[int, Any, str | None]] = []
    for lineno, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        if len(line) > max_line_chars:  # reported without being parsed
            out.append((lineno, None, f"the line is {len(line)} characters; the limit is {max_line_chars}"))
            continue
        try:
            out.append((lineno, parse_json(line, max_chars=max_line_chars, max_depth=max_depth, what="the line"), None))
        except ValueError as e:
            out.append((lineno, None, str(e).removeprefix("the line is ")))
    return out


def where(path: str | os.PathLike, line: int) -> str:
    """``path:line`` as every loader's error starts."""
    return f"{Path(path)}:{line}"
