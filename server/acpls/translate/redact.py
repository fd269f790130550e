"""Secret values out of what acpls writes: `[redacted: NAME]` in their place.

acpls knows some values are secret: what the user typed to sign in (`acpls/authEnv`) and the
environment it gives the agent and its terminals whose names say key, token, secret or password
(`is_secret_name`). A terminal that runs `printenv`, or an agent that repeats its key, would put
them into the transcript and the logs; the writers pass their text through a `Redactor` first.

`Redactor.redact` is for whole texts (a log line); `RedactingStream` is for text written in pieces
(a transcript's appends), where a secret may arrive split across two pieces: it holds back the
end of a piece that could be the start of a secret until the next piece (or `end()`) decides.
Where two secrets overlap, the union of both is replaced, so no part of either is left.

Pure: no I/O. The fast path (no secret in the text) is one search of one compiled alternation.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping

# A value shorter than this is never redacted: "1", "true" or a short word would blank out
# ordinary text everywhere it happens to occur, and hides nothing worth hiding.
MIN_SECRET_LENGTH = 8

# A name is secret when one of its words (split at `_`, `-`, `.`) ends with one of these:
# OPENAI_API_KEY, GITHUB_TOKEN, AWS_SECRET_ACCESS_KEY, PGPASSWORD, DB_PASSWD, GITHUB_PAT,
# GOOGLE_CREDENTIALS, SECRET_KEY_BASE, MYSQL_PWD (PAT and PWD only as whole words). A name whose
# last word says the value only points at a secret or describes it (…_KEY_PATH, …_TOKEN_FILE,
# …_KEY_ID, …_TOKEN_URL) is not secret.
_SECRET_WORD = re.compile(
    r"(?:KEYS?|TOKENS?|SECRETS?|PASSWORDS?|PASSWD|PASSPHRASE|CREDENTIALS?|^PAT|^PWD)$"
)
_POINTER_WORDS = frozenset(
    {"PATH", "FILE", "DIR", "ID", "URL", "URI", "NAME", "HOST", "PORT", "USER", "USERNAME",
     "TYPE", "REGION", "SOCK", "SOCKET", "FD", "HELPER", "COMMAND", "CMD"}
)  # fmt: skip
# Names that end like a secret word and never hold one.
_NOT_SECRET = frozenset({"PWD", "OLDPWD"})


def is_secret_name(name: str) -> bool:
    """Does an environment variable's name say its value is secret (see `_SECRET_WORD`)?"""
    upper = name.upper()
    if upper in _NOT_SECRET:
        return False
    words = [w for w in re.split(r"[_.\-]+", upper) if w]
    if not words or words[-1] in _POINTER_WORDS:
        return False
    return any(_SECRET_WORD.search(word) for word in words)


def secret_environment(env: Mapping[str, str]) -> dict[str, str]:
    """`name -> value` of the variables of `env` whose names are secret."""
    return {name: value for name, value in env.items() if is_secret_name(name)}


class Redactor:
    """Replaces each of a fixed set of secret values with `[redacted: NAME]`."""

    def __init__(self, secrets: Mapping[str, str] | None = None) -> None:
        """`secrets`: value -> the name shown in its place. Values shorter than
        MIN_SECRET_LENGTH are left out."""
        kept = {v: n for v, n in (secrets or {}).items() if len(v) >= MIN_SECRET_LENGTH}
        self._names = kept
        # Longest first: at one position the longest secret wins (a key and a longer key that
        # starts with it).
        ordered = sorted(kept, key=len, reverse=True)
        self._values = tuple(ordered)
        self.longest = len(ordered[0]) if ordered else 0
        self._firsts = frozenset(v[0] for v in ordered)
        if ordered:
            alternation = "|".join(re.escape(v) for v in ordered)
            self._any = re.compile(alternation)
            # Every start of every secret, overlapping ones included (a lookahead consumes
            # nothing, so finditer tries each position).
            self._at = re.compile(f"(?=({alternation}))")
        else:
            self._any = self._at = None

    def __bool__(self) -> bool:
        return self._any is not None

    def redact(self, text: str) -> str:
        if self._any is None or self._any.search(text) is None:
            return text
        return replace_spans(text, self.spans(text))

    def spans(self, text: str) -> list[tuple[int, int, str]]:
        """`(start, end, name)` of the secrets in `text`, overlapping ones merged."""
        if self._any is None or self._at is None or self._any.search(text) is None:
            return []
        merged: list[tuple[int, int, str]] = []
        for match in self._at.finditer(text):
            start, end = match.start(), match.start() + len(match.group(1))
            if merged and start < merged[-1][1]:
                last = merged[-1]
                merged[-1] = (last[0], max(last[1], end), last[2])
            else:
                merged.append((start, end, self._names[match.group(1)]))
        return merged

    def partial_start(self, text: str) -> int:
        """Where the longest end of `text` that could begin a secret (a proper prefix of one)
        starts; len(text) when none could."""
        if self._any is None:
            return len(text)
        first = max(0, len(text) - self.longest + 1)
        for start in range(first, len(text)):
            if text[start] not in self._firsts:
                continue
            tail = text[start:]
            if any(len(v) > len(tail) and v.startswith(tail) for v in self._values):
                return start
        return len(text)


def replace_spans(text: str, spans: Iterable[tuple[int, int, str]]) -> str:
    """`text` with each `(start, end, name)` span replaced by `[redacted: NAME]`."""
    parts: list[str] = []
    at = 0
    for start, end, name in spans:
        parts.append(text[at:start])
        parts.append(f"[redacted: {name}]")
        at = end
    parts.append(text[at:])
    return "".join(parts)


class RedactingStream:
    """Redacts text written in pieces. `source` gives the current Redactor (the secrets acpls
    knows grow while it runs: a sign-in); each piece is judged with the newest."""

    # Held text never grows past this many times the longest secret: a chain of overlapping
    # secrets long enough to need more is written redacted as it stands.
    HOLD_LIMIT = 4

    def __init__(self, source: Callable[[], Redactor]) -> None:
        self._source = source
        self._held = ""

    def feed(self, piece: str) -> str:
        """The part of what was written so far that can be written out now, redacted."""
        redactor = self._source()
        text = self._held + piece if self._held else piece
        if not redactor:
            self._held = ""
            return text
        spans = redactor.spans(text)
        cut = redactor.partial_start(text)
        for start, end, _name in spans:
            if start < cut < end:
                cut = start  # a secret may go on past this piece: hold all of it
        if len(text) - cut > self.HOLD_LIMIT * redactor.longest:
            cut = len(text)
        self._held = text[cut:]
        return replace_spans(text[:cut], [s for s in spans if s[1] <= cut])

    def end(self) -> str:
        """What is still held, redacted: the stream is complete."""
        text, self._held = self._held, ""
        return self._source().redact(text) if text else ""
