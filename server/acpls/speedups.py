"""The optional fast paths, each with the standard library as its fallback.

- base64: PyPI `pybase64` (SIMD) decodes v2 terminal output where it is installed; the standard
  library's `binascii` otherwise (no wheel for the platform), and for short chunks either way.
  63 % of the v2 relay's time was CPython's decoder. On by default.
- the event loop: asyncio's own by default; `uvloop` (where installed, not on Windows) only when
  asked for. Measured both ways (bench/RESULTS.md, "uvloop measured both ways"), uvloop cost CPU
  instead of saving it: its subprocess pipes are socketpairs, so every block the agent writes
  and acpls reads goes through a unix socket, and acpls' relay has too few loop turns for a
  faster loop to make up for that.

`ACPLS_SPEEDUPS` chooses (bench/run.py measures the choices in the same run): unset or empty
the default (`base64`); `0` or `none` neither; `1` or `all` both; otherwise names separated by
commas (`base64`, `loop`).
"""

from __future__ import annotations

import asyncio
import binascii
import logging
import os
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

T = TypeVar("T")

logger = logging.getLogger(__name__)

NAMES = frozenset({"base64", "loop"})
DEFAULT = frozenset({"base64"})


def chosen(value: str | None) -> frozenset[str]:
    """The fast paths an `ACPLS_SPEEDUPS` value asks for (unknown names are logged, not used)."""
    text = (value or "").strip().lower()
    if not text:
        return DEFAULT
    if text in ("0", "none"):
        return frozenset()
    if text in ("1", "all"):
        return NAMES
    names = frozenset(part.strip() for part in text.split(",") if part.strip())
    if names - NAMES:
        logger.warning("ACPLS_SPEEDUPS: unknown %s ignored", ", ".join(sorted(names - NAMES)))
    return names & NAMES


_WANTED = chosen(os.environ.get("ACPLS_SPEEDUPS"))


def _stdlib_b64decode(data: str) -> bytes:
    # What base64.b64decode(validate=True) does, minus a Python-level wrapper per chunk.
    return binascii.a2b_base64(data, strict_mode=True)


# Shorter base64 text is decoded by binascii even where pybase64 is installed.
SMALL_BASE64 = 160


def _pick_b64decode(wanted: frozenset[str]) -> tuple[Callable[[str], bytes], str]:
    if "base64" in wanted:
        try:
            import pybase64
        except ImportError:
            pass
        else:
            decode = pybase64.b64decode
            small = binascii.a2b_base64

            def fast(data: str) -> bytes:
                # Below ~160 characters pybase64's call costs more than its SIMD saves (64 B
                # chunks, 88 characters: 0.39 us against binascii's 0.15 us; 512 characters:
                # 0.26 against 0.76), and the two accept and refuse the same input.
                if len(data) < SMALL_BASE64:
                    return small(data, strict_mode=True)
                return decode(data, validate=True)

            return fast, "pybase64"
    return _stdlib_b64decode, "binascii"


b64decode, BASE64 = _pick_b64decode(_WANTED)
"""`b64decode(text)`: strict base64 decoding (binascii.Error on invalid input)."""


def loop_factory(
    wanted: frozenset[str],
) -> tuple[Callable[[], asyncio.AbstractEventLoop] | None, str]:
    """The event loop `wanted` asks for, if installed (None: asyncio's default), and its name."""
    if "loop" in wanted:
        try:
            import uvloop
        except ImportError:
            pass
        else:
            return uvloop.new_event_loop, "uvloop"
    return None, "asyncio"


def run(main: Coroutine[Any, Any, T]) -> T:
    """`asyncio.run(main)` on the event loop ACPLS_SPEEDUPS chose."""
    factory, _ = loop_factory(_WANTED)
    with asyncio.Runner(loop_factory=factory) as runner:
        return runner.run(main)


def describe(wanted: frozenset[str] | None = None) -> str:
    """Which fast paths this process uses (or `wanted` would use), for the log and the bench."""
    if wanted is None:
        return f"base64: {BASE64}, event loop: {loop_factory(_WANTED)[1]}"
    return f"base64: {_pick_b64decode(wanted)[1]}, event loop: {loop_factory(wanted)[1]}"
