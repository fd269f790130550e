"""Giving the heap's free pages back to the OS after a rare, very large line was released.

CPython frees a large line's bytes to the C allocator, but glibc keeps freed heap memory mapped
unless it lies at the very top of the heap: one small object allocated after the line's pieces
pins all of them, and RSS stays up by the line's size for the rest of the server's life.
`malloc_trim(0)` returns every whole free page, wherever it lies. Elsewhere (macOS, musl,
Windows) there is no such call and nothing is done.
"""

from __future__ import annotations

import ctypes
import gc
import logging
import sys
from collections.abc import Callable

logger = logging.getLogger(__name__)


def _load_malloc_trim() -> Callable[[int], int] | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL("libc.so.6")
    except OSError:
        return None
    trim = getattr(libc, "malloc_trim", None)
    if trim is None:
        return None
    trim.argtypes = [ctypes.c_size_t]
    trim.restype = ctypes.c_int
    return trim


_MALLOC_TRIM = _load_malloc_trim()


def release_free_heap() -> None:
    """Return the heap's free pages to the OS (a few ms on a large heap: call it rarely)."""
    if _MALLOC_TRIM is not None:
        _MALLOC_TRIM(0)
        logger.debug("freed heap pages returned to the OS")


# Allocations (net, of objects the collector tracks) between young collections. CPython's 700
# made a 20,000-update session load run 146 young, 14 middle and one full collection in acpls,
# 120-140 ms of its ~650 ms of CPU (the full one alone 75-100 ms: it walks every object the
# server made at start). At 10,000 the same load runs 7 young collections and no other, 20-30 ms.
# Cyclic garbage waits a little longer; the server makes little of it.
YOUNG_THRESHOLD = 10_000
OLDER_THRESHOLD = 10


def settle_collector() -> None:
    """Once the server and its core are built: what exists now (modules, classes, the hub) lives
    as long as the process, so the collector stops walking it (`gc.freeze`), and it collects
    young objects in larger steps. No `gc.collect()` first: it took 43 ms for 65 objects."""
    gc.freeze()
    gc.set_threshold(YOUNG_THRESHOLD, OLDER_THRESHOLD, OLDER_THRESHOLD)
    logger.debug("collector settled: %d objects frozen", gc.get_freeze_count())
