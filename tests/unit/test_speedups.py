"""The fast paths (acpls/speedups.py) decode exactly as the standard library, and are chosen
at startup by ACPLS_SPEEDUPS."""

from __future__ import annotations

import base64
import binascii
import os
import subprocess
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from acpls import speedups

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
        (None, {"base64"}),
        ("", {"base64"}),
        ("  ", {"base64"}),
        ("0", set()),
        ("none", set()),
        ("1", {"base64", "loop"}),
        ("ALL", {"base64", "loop"}),
        ("base64", {"base64"}),
        ("loop", {"loop"}),
        ("loop, base64", {"base64", "loop"}),
        ("loop,turbo", {"loop"}),
    ],
)
def test_acpls_speedups_values(value: str | None, expected: set[str]) -> None:
    """Unset: pybase64 only (uvloop did not pay, bench/RESULTS.md); unknown names dropped."""
    assert speedups.chosen(value) == expected


def test_the_startup_choice_follows_acpls_speedups() -> None:
    """This environment installs both (pyproject.toml): what a fresh process picks at import,
    by default, off with ACPLS_SPEEDUPS=0, one at a time or both by name."""
    assert _describe(None) == "base64: pybase64, event loop: asyncio"
    assert _describe("0") == "base64: binascii, event loop: asyncio"
    assert _describe("base64") == "base64: pybase64, event loop: asyncio"
    assert _describe("loop") == "base64: binascii, event loop: uvloop"
    assert _describe("all") == "base64: pybase64, event loop: uvloop"


def test_describe_names_a_choice_without_making_it() -> None:
    assert speedups.describe(frozenset()) == "base64: binascii, event loop: asyncio"
    assert speedups.describe(speedups.NAMES) == "base64: pybase64, event loop: uvloop"


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
