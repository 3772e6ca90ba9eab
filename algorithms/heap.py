"""Freed memory kept for the next step instead of handed back to the kernel: ``retain_freed_memory()``.

A training step on the CPU allocates and frees gigabytes of tensors (activations, logits,
gradients). glibc serves each allocation above its mmap threshold (128 KiB, rising to at most
32 MiB) with a fresh ``mmap`` and returns it with ``munmap`` when freed, so the next step's tensors
land on pages the kernel has to fault in and zero again: ~440,000 page faults per step of the
benchmarked GRPO workload (2 prompts x 4 samples x 64 tokens), and on this VM a fault with its
zeroing costs ~2.8 us (a 1 GiB ``memset`` of fresh pages: 0.75 s; of faulted ones: 0.04 s), i.e.
over a second of each step. Here the process's allocations all come from glibc's main heap
(``M_MMAP_MAX`` 0, one arena) and the heap is trimmed only past 2 GiB free at its top
(``M_TRIM_THRESHOLD``), so a step reuses the pages the last one freed: 440,000 faults per step
-> 175,000 in the second step and 4,000-10,000 from the third on (the heap settles at 2.9 GiB,
1.75 GiB of it free). The peak resident memory is what the step needs either way (the same
4.2 GiB measured), but the process no longer shrinks after it: what it once held stays resident
until it exits, as PyTorch's CUDA caching allocator does with GPU memory. The heap also holds
more than the step's live tensors: torch asks for 64-byte-aligned blocks, and glibc serves such a
request only from a free block ~80 bytes larger than it, so a block freed by one allocation can be
too short for the same allocation next time, until neighbours coalesce (a 64 MiB tensor freed and
made again grows the heap by 1-7 such blocks before it settles, ``tests/test_heap.py``).

It changes glibc's behaviour for the whole process, from the call on: the trainer makes it only on
the CPU and only when ``TrainConfig.retain_freed_memory`` is on (the default). Elsewhere (another C
library, ``mallopt`` missing) it does nothing and returns ``False``.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import sys

__all__ = ["retain_freed_memory"]

# glibc's malloc.h
M_TRIM_THRESHOLD = -1
M_MMAP_MAX = -4
M_ARENA_MAX = -8
#: bytes of free memory at the heap's top before glibc gives any back (mallopt takes a C int: 2 GiB)
TRIM_AT = 2**31 - 1

_done = False


def retain_freed_memory() -> bool:
    """Have glibc serve every later allocation from its main heap and never give that heap's freed
    pages back to the kernel (see the module's docstring). ``True`` once done (a second call is a
    no-op), ``False`` where this is not glibc on Linux."""
    global _done
    if _done:
        return True
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    ok = all(mallopt(param, value) == 1 for param, value in (
        (M_TRIM_THRESHOLD, TRIM_AT), (M_MMAP_MAX, 0), (M_ARENA_MAX, 1)))
    _done = ok
    return ok
