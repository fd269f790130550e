"""The v1 terminal output line fast path (translate/v1_output_lines.py) reads a line exactly as
parsing the whole line does, or declines it: for any bytes between the learned prefix and suffix
(escapes, quotes, backslashes, surrogates, control characters, invalid UTF-8, JSON that changes
the message's structure), the fast text is either None or the `data` the whole parse gives, and
it is None whenever the whole line is not the learned message with another string as `data`."""

from __future__ import annotations

import json
from typing import Any

import orjson
from hypothesis import example, given
from hypothesis import strategies as st

from acpls.translate.v1_output_lines import OutputLine, learn

SESSION = "sess_1"


def _message(data: str, *, key: str = "terminal_output", extra: Any = None) -> dict[str, Any]:
    item: dict[str, Any] = {"terminal_id": "t1", "data": data}
    if extra is not None:
        item["extra"] = extra
    update = {"sessionUpdate": "tool_call_update", "toolCallId": "c1", "_meta": {key: item}}
    return {
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": {"sessionId": SESSION, "update": update},
    }


# How agents write a line: Node's JSON.stringify and orjson (compact, UTF-8, escapes control
# characters as \u00XX), Python's json.dumps (spaces, ASCII only), other key orders.
ENCODERS = {
    "orjson": lambda m: orjson.dumps(m),
    "json compact": lambda m: json.dumps(m, separators=(",", ":")).encode(),
    "json default": lambda m: json.dumps(m).encode(),
    "json utf-8 sorted": lambda m: json.dumps(m, ensure_ascii=False, sort_keys=True).encode(),
    "json spaced": lambda m: json.dumps(m, separators=(" , ", " : ")).encode(),
}

_SAMPLE_DATA = '\x1b[32mok\x1b[0m lorem "ipsum" \\ é 😀 \r\n'


def _template(encoder: str, data: str = _SAMPLE_DATA) -> OutputLine:
    message = _message(data)
    template = learn(ENCODERS[encoder](message), message, data)
    assert template is not None, encoder
    return template


def _whole_line_data(line: bytes, learned: dict[str, Any]) -> str | None:
    """The slow path: parse the whole line; its `data` if the line is the learned message with
    another string as `data`, else None."""
    try:
        message = orjson.loads(line)
    except orjson.JSONDecodeError:
        return None
    try:
        data = message["params"]["update"]["_meta"]["terminal_output"]["data"]
    except (KeyError, TypeError):
        return None
    if not isinstance(data, str):
        return None
    expected = orjson.loads(orjson.dumps(learned))
    expected["params"]["update"]["_meta"]["terminal_output"]["data"] = data
    return data if message == expected else None


# Raw bytes of the string body: JSON escapes whole and cut, quotes and backslashes that change
# where the string ends, raw control characters, UTF-8 whole and cut, invalid bytes, and JSON
# that would add a key to the object if the string ended early.
_FRAGMENTS = [
    b"a",
    b"lorem ",
    b"\\u001b[31m",
    b"\\u001b",
    b"\\u00",
    b"\\u",
    b"\\r\\n",
    b"\\n",
    b"\\r",
    b"\\t",
    b'\\"',
    b"\\\\",
    b"\\",
    b'"',
    b"\\/",
    b"\\x",
    b"\\ud83d",
    b"\\ude00",
    b"\\ud83d\\ude00",
    "é".encode(),
    "😀".encode(),
    "😀".encode()[:2],
    b"\xff",
    b"\x01",
    b"\n",
    b"}",
    b'","extra":"y',
    b'","data":"y',
    b'",',
    b" ",
]
_body = st.lists(st.sampled_from(_FRAGMENTS), max_size=10).map(b"".join)


@given(body=_body, encoder=st.sampled_from(sorted(ENCODERS)))
@example(body=b'x","data":"y', encoder="orjson")  # a duplicate key: the whole parse takes y
@example(body=b"\\ud83d", encoder="orjson")  # a lone surrogate is refused either way
@example(body=b"ab\\", encoder="orjson")  # the closing quote escaped: not JSON
def test_fast_text_is_the_whole_parse_or_declines(body: bytes, encoder: str) -> None:
    learned = _message(_SAMPLE_DATA)
    template = _template(encoder)
    line = template.prefix + body + template.suffix
    fast = template.text(line)
    slow = _whole_line_data(line, learned)
    if fast is not None:
        assert fast == slow
    if slow is None:
        assert fast is None
    if slow is not None and b'"' not in body:
        assert fast == slow  # no quote in the string: its bytes are exactly the body


@given(data=st.text(), encoder=st.sampled_from(sorted(ENCODERS)))
def test_every_text_an_agent_encodes_comes_back_by_the_fast_path(data: str, encoder: str) -> None:
    template = _template(encoder)
    line = ENCODERS[encoder](_message(data))
    assert template.text(line) == data


@given(data=st.text(), encoder=st.sampled_from(sorted(ENCODERS)))
def test_learning_from_any_text_gives_a_template_that_reads_its_own_line(
    data: str, encoder: str
) -> None:
    message = _message(data)
    line = ENCODERS[encoder](message)
    template = learn(line, message, data)
    assert template is not None
    assert template.text(line) == data
    assert template.text(ENCODERS[encoder](_message("other"))) == "other"


def test_a_line_of_another_form_is_declined() -> None:
    template = _template("orjson")
    assert template.text(orjson.dumps(_message("x", key="terminal_output_delta"))) is None
    assert template.text(orjson.dumps(_message("x", extra=1))) is None
    assert template.text(b"") is None
    # Prefix and suffix overlapping: too short to hold both.
    assert template.text(template.prefix[:-1] + template.suffix[1:]) is None


def test_nothing_is_learned_where_the_string_cannot_be_located_for_certain() -> None:
    # Two `data` keys: which one is the output cannot be told from the bytes.
    message = _message("x", extra={"data": "x"})
    assert learn(orjson.dumps(message), message, "x") is None
    # The key written with an escape is not found (the line takes the ordinary path).
    message = _message("x")
    line = orjson.dumps(message).replace(b'"data"', b'"d\\u0061ta"')
    assert learn(line, message, "x") is None
