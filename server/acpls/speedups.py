"""The optional fast paths, each with the standard library as its fallback.

- base64: PyPI `pybase64` (SIMD) decodes v2 terminal output where it is installed; the standard
  library's `binascii` otherwise (no wheel for the platform), and for short chunks either way.
  63 % of the v2 relay's time was CPython's decoder.
- the event loop: `uvloop` where installed (not on Windows), asyncio's own otherwise.

`ACPLS_SPEEDUPS=0` turns both off (bench/run.py measures acpls both ways in the same run);
`ACPLS_SPEEDUPS=base64` or `=loop` keeps only that one.
"""

from __future__ import annotations

import asyncio
import binascii
import os
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

T = TypeVar("T")

_CHOSEN = os.environ.get("ACPLS_SPEEDUPS", "1").strip().lower()


def _wanted(name: str) -> bool:
    return _CHOSEN in ("1", "", "all", name)


def _stdlib_b64decode(data: str) -> bytes:
    # What base64.b64decode(validate=True) does, minus a Python-level wrapper per chunk.
    return binascii.a2b_base64(data, strict_mode=True)


# Shorter base64 text is decoded by binascii even where pybase64 is installed.
SMALL_BASE64 = 160


def _pick_b64decode() -> tuple[Callable[[str], bytes], str]:
    if _wanted("base64"):
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


b64decode, BASE64 = _pick_b64decode()
"""`b64decode(text)`: strict base64 decoding (binascii.Error on invalid input)."""


def _loop_factory() -> tuple[Callable[[], asyncio.AbstractEventLoop] | None, str]:
    if _wanted("loop"):
        try:
            import uvloop
        except ImportError:
            pass
        else:
            return uvloop.new_event_loop, "uvloop"
    return None, "asyncio"


def run(main: Coroutine[Any, Any, T]) -> T:
    """`asyncio.run(main)` on the fastest event loop available."""
    factory, _ = _loop_factory()
    with asyncio.Runner(loop_factory=factory) as runner:
        return runner.run(main)


def describe() -> str:
    """Which fast paths this process uses, for the log."""
    return f"base64: {BASE64}, event loop: {_loop_factory()[1]}"
