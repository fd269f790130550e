"""Recognise, from its bytes, an agent line that carries only v1 terminal output.

claude-agent-acp streams a command's output as `tool_call_update`s whose only content is
`_meta.terminal_output` (translate/terminals.py): thousands of lines a second that differ only in
the output's JSON string. Parsing each whole line and routing the message through the generic
path cost more than the output itself (P1, bench/RESULTS.md). `learn()` takes such a line once it
was parsed and routed the ordinary way and returns the bytes around its `data` string;
`OutputLine.text()` then reads a later line with the same bytes around it by decoding only that
string.

Why the result is exact: the template's prefix ends with the string's opening quote and its suffix
starts with the closing one. `text()` hands json_loads just `"<body>"`; it succeeds only when that
is one complete, valid JSON string (an unescaped quote inside would end it early and leave the final
quote as trailing data, a trailing backslash leaves it unterminated, bad escapes, lone surrogates,
control characters and invalid UTF-8 are refused as in the whole line). A JSON parser reading the
whole line then goes through the prefix exactly as through the template's line, reads the same
string token, and goes through the same suffix: the message is the template's with that string as
`data`. Anything else (no template matches, or the string is not valid) returns None and the line
takes the ordinary path, which logs and drops what is invalid as before. `learn()` checks where it
cut: the prefix and suffix around another string must parse to the learned message with that
string as `data`.
"""

from __future__ import annotations

import re
from typing import Any, Final

from acpls.speedups import JSONDecodeError, json_dumps, json_loads

__all__ = ["OutputLine", "learn"]

_DATA_KEY: Final = re.compile(rb'"data"[ \t\r\n]*:[ \t\r\n]*"')
# The rest of a JSON string after its opening quote, up to and including the closing quote.
_STRING_REST: Final = re.compile(rb'(?:[^"\\]|\\.)*+"', re.DOTALL)


class OutputLine:
    """The bytes around the `data` string of one kind of v1 terminal output line."""

    __slots__ = ("min_len", "prefix", "start", "stop", "suffix")

    def __init__(self, prefix: bytes, suffix: bytes) -> None:
        self.prefix = prefix  # ends with the string's opening quote
        self.suffix = suffix  # starts with its closing quote
        self.min_len = len(prefix) + len(suffix)
        self.start = len(prefix) - 1  # the string with both quotes: line[start:len - stop]
        self.stop = len(suffix) - 1

    def text(self, line: bytes) -> str | None:
        """The `data` text of `line` if it is this kind of line and valid JSON, else None."""
        if len(line) < self.min_len or not (
            line.startswith(self.prefix) and line.endswith(self.suffix)
        ):
            return None
        try:
            return json_loads(memoryview(line)[self.start : len(line) - self.stop])
        except JSONDecodeError:
            return None


def learn(line: bytes, message: Any, data: str) -> OutputLine | None:
    """The template of `line`, which parses to `message` whose only `data` key holds the output
    `data`; None if the string cannot be located for certain."""
    keys = list(_DATA_KEY.finditer(line))
    if len(keys) != 1:  # a string cannot hold `"data":` unescaped: every match is a key
        return None
    opening = keys[0].end() - 1
    rest = _STRING_REST.match(line, opening + 1)
    if rest is None:
        return None
    closing = rest.end() - 1
    template = OutputLine(line[: opening + 1], line[closing:])
    probe = "\x00" if data != "\x00" else "\x01"
    try:
        probed = json_loads(template.prefix[:-1] + json_dumps(probe) + template.suffix[1:])
    except JSONDecodeError:
        return None
    if probed != _with_data(message, probe) or template.text(line) != data:
        return None
    return template


def _with_data(message: Any, data: str) -> Any:
    """`message` (a v1 terminal output notification) with its output's `data` replaced."""
    copy = json_loads(json_dumps(message))
    meta = copy["params"]["update"]["_meta"]
    for item in meta.values():
        item["data"] = data
    return copy
