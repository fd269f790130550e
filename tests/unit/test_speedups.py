"""The fast paths (acpls/speedups.py) decode exactly as the standard library, and are chosen
at startup by ACPLS_SPEEDUPS."""

from __future__ import annotations

import base64
import binascii
import os
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from acpls import speedups
from acpls.speedups import JSONDecodeError

VALID = ["", "aGk=", "aGVsbG8gd29ybGQ=", "AAEC/w==", "+/+/"]
INVALID = ["aGk", "a!Gk=", "aGk=\n", "aGk= ", "====", "aGk=aGk="]


@pytest.mark.parametrize("text", VALID)
def test_the_chosen_decoder_matches_the_stdlib(text: str) -> None:
    assert speedups.b64decode(text) == binascii.a2b_base64(text, strict_mode=True)


@pytest.mark.parametrize("text", INVALID)
def test_the_chosen_decoder_refuses_what_the_stdlib_refuses(text: str) -> None:
    with pytest.raises(binascii.Error):
        binascii.a2b_base64(text, strict_mode=True)
    with pytest.raises(binascii.Error):
        speedups.b64decode(text)


# Base64 text around and far past the length where the decoder changes (speedups.SMALL_BASE64),
# valid and not: padding in the middle, characters outside the alphabet, whitespace.
_b64_text = st.one_of(
    st.binary(max_size=600).map(lambda raw: base64.b64encode(raw).decode()),
    st.text(alphabet="ABCabc019+/=\n !-_", max_size=600),
    st.tuples(st.binary(max_size=400), st.sampled_from(["=", "!", " ", "A", "=="])).map(
        lambda pair: base64.b64encode(pair[0]).decode() + pair[1]
    ),
)


@given(_b64_text)
def test_the_chosen_decoder_agrees_with_the_stdlib_at_every_length(text: str) -> None:
    try:
        expected: bytes | None = binascii.a2b_base64(text, strict_mode=True)
    except binascii.Error:
        expected = None
    try:
        got: bytes | None = speedups.b64decode(text)
    except binascii.Error:
        got = None
    assert got == expected


def _describe(env_value: str | None) -> str:
    env = {k: v for k, v in os.environ.items() if k != "ACPLS_SPEEDUPS"}
    if env_value is not None:
        env["ACPLS_SPEEDUPS"] = env_value
    code = "from acpls import speedups; print(speedups.describe())"
    return subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    ).stdout.strip()


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (None, {"json", "base64"}),
        ("", {"json", "base64"}),
        ("  ", {"json", "base64"}),
        ("0", set()),
        ("none", set()),
        ("1", {"json", "base64", "loop"}),
        ("ALL", {"json", "base64", "loop"}),
        ("base64", {"base64"}),
        ("json", {"json"}),
        ("loop", {"loop"}),
        ("loop, base64", {"base64", "loop"}),
        ("loop,turbo", {"loop"}),
    ],
)
def test_acpls_speedups_values(value: str | None, expected: set[str]) -> None:
    """Unset: orjson and pybase64 (uvloop did not pay, bench/RESULTS.md); unknown names dropped."""
    assert speedups.chosen(value) == expected


def test_the_startup_choice_follows_acpls_speedups() -> None:
    """This environment installs all three (pyproject.toml): what a fresh process picks at
    import, by default, off with ACPLS_SPEEDUPS=0, one at a time or all by name."""
    assert _describe(None) == "json: orjson, base64: pybase64, event loop: asyncio"
    assert _describe("0") == "json: json, base64: binascii, event loop: asyncio"
    assert _describe("base64") == "json: json, base64: pybase64, event loop: asyncio"
    assert _describe("json") == "json: orjson, base64: binascii, event loop: asyncio"
    assert _describe("loop") == "json: json, base64: binascii, event loop: uvloop"
    assert _describe("all") == "json: orjson, base64: pybase64, event loop: uvloop"


def test_describe_names_a_choice_without_making_it() -> None:
    assert speedups.describe(frozenset()) == "json: json, base64: binascii, event loop: asyncio"
    assert speedups.describe(speedups.NAMES) == "json: orjson, base64: pybase64, event loop: uvloop"


def test_the_stdlib_loop_runs_a_coroutine() -> None:
    async def answer() -> int:
        return 42

    assert speedups.run(answer()) == 42


def test_short_base64_text_is_decoded_by_the_stdlib_even_with_pybase64(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # bench P1 at 64 B (88 characters) compares the default with no speed-up as noise: the two
    # decode such text with the same binascii call; only longer text reaches pybase64.
    import pybase64  # a dependency of acpls (pyproject.toml): missing, this fails

    calls: list[int] = []

    def spy(text: str, validate: bool = False) -> bytes:
        calls.append(len(text))
        return binascii.a2b_base64(text, strict_mode=True)

    monkeypatch.setattr(pybase64, "b64decode", spy)
    decode, name = speedups._pick_b64decode(frozenset({"base64"}))
    assert name == "pybase64"
    short = base64.b64encode(b"x" * 64).decode()
    assert len(short) < speedups.SMALL_BASE64 and decode(short) == b"x" * 64
    assert calls == []
    long = base64.b64encode(b"y" * 4096).decode()
    assert decode(long) == b"y" * 4096 and calls == [len(long)]


# -- the JSON front door: the standard library's path reads and writes as orjson does ---------

_STDLIB_LOADS, _STDLIB_DUMPS, _STDLIB_ENCODE_ERROR, _ = speedups._pick_json(frozenset())
_ORJSON_LOADS, _ORJSON_DUMPS, _ORJSON_ENCODE_ERROR, _ = speedups._pick_json(frozenset({"json"}))

_JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**63 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None)
@given(_JSON_VALUES)
def test_the_stdlib_json_path_reads_and_writes_as_orjson(value: object) -> None:
    encoded = _ORJSON_DUMPS(value)
    assert _STDLIB_LOADS(encoded) == _ORJSON_LOADS(encoded)
    assert _STDLIB_LOADS(memoryview(encoded)) == value
    assert _ORJSON_LOADS(_STDLIB_DUMPS(value)) == _ORJSON_LOADS(encoded)


def test_the_stdlib_json_path_sorts_keys_when_asked() -> None:
    value = {"b": 1, "a": {"d": 2, "c": [3]}}
    sort = speedups.SORT_KEYS
    assert _STDLIB_DUMPS(value, option=sort) == _ORJSON_DUMPS(value, option=sort)
    assert _STDLIB_DUMPS(value) == _ORJSON_DUMPS(value) == b'{"b":1,"a":{"d":2,"c":[3]}}'


@pytest.mark.parametrize(
    "bad",
    [b"NaN", b"[Infinity]", b"[1,]", b"\xff", b'"\xed\xa0\x80"', b"[" * 5000, b"", b"1 2"],
)
def test_the_stdlib_json_path_refuses_what_orjson_refuses(bad: bytes) -> None:
    with pytest.raises(JSONDecodeError):
        _ORJSON_LOADS(bad)
    with pytest.raises(JSONDecodeError):
        _STDLIB_LOADS(bad)


@pytest.mark.parametrize("bad", ["\ud800", {"x": float("inf")}, [object()]])
def test_the_stdlib_json_path_refuses_what_it_cannot_write(bad: object) -> None:
    with pytest.raises(TypeError):
        _STDLIB_DUMPS(bad)
    assert issubclass(_STDLIB_ENCODE_ERROR, TypeError)
    assert issubclass(_ORJSON_ENCODE_ERROR, TypeError)


def test_the_stdlib_json_path_uses_the_default_hook() -> None:
    class Point:
        x = 1

    def default(value: object) -> object:
        if isinstance(value, Point):
            return {"x": value.x}
        raise TypeError("no")

    assert _STDLIB_DUMPS([Point()], default=default) == _ORJSON_DUMPS([Point()], default=default)
