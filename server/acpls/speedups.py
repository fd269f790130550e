"""The optional fast paths, each with the standard library as its fallback.

Every compiled dependency is optional: acpls starts on any Python it may be given (a CPython the
.vsix carries no wheels for, a platform without them), only slower.

- JSON: PyPI `orjson` encodes and decodes every ACP line and every acpls/* frame where it is
  installed; the standard library's `json` otherwise, behind the same front door (`json_loads`,
  `json_dumps`, `JSONDecodeError`, `JSONEncodeError`), made to refuse what orjson refuses where
  that is cheap (text that is not UTF-8, NaN and Infinity, nesting too deep, lone surrogates on
  the way out). bench/json_codec.py measures the fallback against orjson in the same run.
  On by default.
- base64: PyPI `pybase64` (SIMD) decodes v2 terminal output where it is installed; the standard
  library's `binascii` otherwise (no wheel for the platform), and for short chunks either way.
  63 % of the v2 relay's time was CPython's decoder. On by default.
- the event loop: asyncio's own by default; `uvloop` (where installed, not on Windows) only when
  asked for. Measured both ways (bench/RESULTS.md, "uvloop measured both ways"), uvloop cost CPU
  instead of saving it: its subprocess pipes are socketpairs, so every block the agent writes
  and acpls reads goes through a unix socket, and acpls' relay has too few loop turns for a
  faster loop to make up for that.

`ACPLS_SPEEDUPS` chooses (bench/run.py measures the choices in the same run): unset or empty
the default (`json`, `base64`); `0` or `none` none (the standard library only); `1` or `all`
all three; otherwise names separated by commas (`json`, `base64`, `loop`).
"""

from __future__ import annotations

import asyncio
import binascii
import json
import logging
import os
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

T = TypeVar("T")

logger = logging.getLogger(__name__)

NAMES = frozenset({"json", "base64", "loop"})
DEFAULT = frozenset({"json", "base64"})


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


class _StdlibEncodeError(TypeError):
    """What the standard library's encoder refused (orjson's JSONEncodeError is a TypeError too)."""


def _stdlib_loads(data: bytes | bytearray | memoryview | str) -> Any:
    # orjson takes UTF-8 only (json.loads would guess UTF-16/32 from the bytes), refuses NaN and
    # Infinity, and refuses nesting past 1024 levels with a decode error, not a RecursionError.
    try:
        text = data if isinstance(data, str) else bytes(data).decode("utf-8")
        return json.loads(text, parse_constant=_refuse_constant)
    except UnicodeDecodeError as exc:
        raise json.JSONDecodeError(f"not UTF-8: {exc.reason}", "", exc.start) from None
    except RecursionError:
        raise json.JSONDecodeError("nested too deep", "", 0) from None


def _refuse_constant(name: str) -> Any:
    raise json.JSONDecodeError(f"{name} is not JSON", name, 0)


_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)
_SORTED_ENCODER = json.JSONEncoder(
    ensure_ascii=False, separators=(",", ":"), allow_nan=False, sort_keys=True
)


def _stdlib_dumps(
    value: Any, default: Callable[[Any], Any] | None = None, option: int | None = None
) -> bytes:
    """orjson.dumps' signature and result (compact UTF-8 bytes); `option` only for sorting."""
    if default is None:
        encoder = _SORTED_ENCODER if option else _ENCODER
    else:
        encoder = json.JSONEncoder(
            ensure_ascii=False,
            separators=(",", ":"),
            allow_nan=False,
            sort_keys=bool(option),
            default=default,
        )
    try:
        return encoder.encode(value).encode("utf-8")
    except (ValueError, UnicodeEncodeError, RecursionError) as exc:
        raise _StdlibEncodeError(str(exc)) from None


SORT_KEYS = 1 << 5
"""`json_dumps(value, option=SORT_KEYS)`: keys in order (orjson.OPT_SORT_KEYS's value)."""


def _pick_json(wanted: frozenset[str]) -> tuple[Any, Any, type[TypeError], str]:
    if "json" in wanted:
        try:
            import orjson
        except ImportError:
            pass
        else:
            assert orjson.OPT_SORT_KEYS == SORT_KEYS
            return orjson.loads, orjson.dumps, orjson.JSONEncodeError, "orjson"
    return _stdlib_loads, _stdlib_dumps, _StdlibEncodeError, "json"


json_loads: Callable[[bytes | bytearray | memoryview | str], Any]
"""`json_loads(data)`: one JSON value from UTF-8 bytes or text (JSONDecodeError otherwise)."""
json_dumps: Callable[..., bytes]
"""`json_dumps(value, default=None, option=None)`: compact UTF-8 JSON (JSONEncodeError, a
TypeError, for what cannot be encoded)."""
json_loads, json_dumps, JSONEncodeError, JSON = _pick_json(_WANTED)
JSONDecodeError = json.JSONDecodeError
"""What `json_loads` raises for bad input (orjson's own error is a subclass of it)."""


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
        return f"json: {JSON}, base64: {BASE64}, event loop: {loop_factory(_WANTED)[1]}"
    return (
        f"json: {_pick_json(wanted)[3]}, base64: {_pick_b64decode(wanted)[1]},"
        f" event loop: {loop_factory(wanted)[1]}"
    )
