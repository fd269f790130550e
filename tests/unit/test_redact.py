"""translate/redact.py and core/secrets.py: secret values never reach what acpls writes."""

from __future__ import annotations

import io
import logging
import random

from acpls.core.secrets import KnownSecrets
from acpls.services.transcript import Transcript
from acpls.translate.redact import (
    MIN_SECRET_LENGTH,
    RedactingStream,
    Redactor,
    is_secret_name,
    secret_environment,
)

KEY = "sk-live-0123456789abcdef"
TOKEN = "ghp_TOKENVALUE42xyz"


def test_each_secret_is_replaced_by_its_name() -> None:
    redactor = Redactor({KEY: "OPENAI_API_KEY", TOKEN: "GITHUB_TOKEN"})
    text = f"key={KEY}\ntoken: {TOKEN} and {KEY} again"
    assert redactor.redact(text) == (
        "key=[redacted: OPENAI_API_KEY]\ntoken: [redacted: GITHUB_TOKEN] and "
        "[redacted: OPENAI_API_KEY] again"
    )
    assert redactor.redact("nothing secret here") == "nothing secret here"


def test_short_values_are_never_redacted() -> None:
    short = "x" * (MIN_SECRET_LENGTH - 1)
    redactor = Redactor({"1": "DEBUG_KEY", "true": "USE_TOKEN", short: "SHORT_SECRET"})
    assert not redactor
    assert redactor.redact(f"1 true {short}") == f"1 true {short}"
    assert Redactor({"x" * MIN_SECRET_LENGTH: "LONG"}).redact("x" * 8) == "[redacted: LONG]"


def test_overlapping_secrets_leave_no_part_of_either() -> None:
    first, second = "abcdef123456", "123456uvwxyz"
    redactor = Redactor({first: "FIRST", second: "SECOND"})
    out = redactor.redact("<abcdef123456uvwxyz>")
    assert out == "<[redacted: FIRST]>"
    # A secret inside a longer one, and a longer one that starts with a shorter one.
    nested = Redactor({"0123456789": "SHORT", "xx0123456789yy": "LONG"})
    assert (
        nested.redact("a xx0123456789yy b 0123456789") == "a [redacted: LONG] b [redacted: SHORT]"
    )
    prefix = Redactor({"abcdefgh": "A", "abcdefgh-more": "B"})
    assert prefix.redact("abcdefgh-more abcdefgh") == "[redacted: B] [redacted: A]"


def test_regex_characters_in_a_secret_are_literal() -> None:
    secret = "p@ss.w*rd+(x)?[1]"
    redactor = Redactor({secret: "DB_PASSWORD"})
    assert redactor.redact(f"pw={secret};") == "pw=[redacted: DB_PASSWORD];"
    assert redactor.redact("pXssXwXrd") == "pXssXwXrd"


def _streamed(redactor: Redactor, pieces: list[str]) -> str:
    stream = RedactingStream(lambda: redactor)
    return "".join(stream.feed(p) for p in pieces) + stream.end()


def test_a_secret_split_across_pieces_is_redacted() -> None:
    redactor = Redactor({KEY: "OPENAI_API_KEY"})
    text = f"printenv says {KEY} and then {KEY}!"
    whole = redactor.redact(text)
    for cut in range(len(text) + 1):
        assert _streamed(redactor, [text[:cut], text[cut:]]) == whole, cut
    assert _streamed(redactor, list(text)) == whole  # one character at a time


def test_streamed_text_matches_whole_text_for_overlapping_secrets() -> None:
    redactor = Redactor({"abcdef123456": "FIRST", "123456uvwxyz": "SECOND", "uvwxyz00": "THIRD"})
    rng = random.Random(27)
    alphabet = ["abcdef", "123456", "uvwxyz", "00", " ", "q"]
    for _ in range(300):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 12)))
        cuts = sorted(rng.sample(range(len(text) + 1), k=min(3, len(text) + 1)))
        pieces = [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True)]
        streamed = _streamed(redactor, pieces)
        assert streamed == redactor.redact(text), (text, pieces)
        for value in ("abcdef123456", "123456uvwxyz", "uvwxyz00"):
            assert value not in streamed


def test_a_stream_holds_only_what_could_begin_a_secret() -> None:
    stream = RedactingStream(lambda: Redactor({KEY: "K"}))
    assert stream.feed("plain text, sk-li") == "plain text, "
    assert stream.feed("ght") == "sk-light"  # not the key after all: written at once
    assert stream.feed("") == "" and stream.end() == ""
    assert RedactingStream(lambda: Redactor()).feed("sk-li") == "sk-li"


def test_a_stream_uses_the_newest_secrets() -> None:
    secrets = KnownSecrets()
    stream = RedactingStream(lambda: secrets.redactor)
    assert stream.feed(f"before {TOKEN} ") == f"before {TOKEN} "
    secrets.add({"GITHUB_TOKEN": TOKEN})
    assert stream.feed(f"after {TOKEN}") + stream.end() == "after [redacted: GITHUB_TOKEN]"


def test_secret_names() -> None:
    secret = [
        "OPENAI_API_KEY", "ANTHROPIC_AUTH_TOKEN", "AWS_SECRET_ACCESS_KEY", "GITHUB_TOKEN",
        "PGPASSWORD", "DB_PASSWD", "GITHUB_PAT", "GOOGLE_CREDENTIALS", "SECRET_KEY_BASE",
        "MYSQL_PWD", "gemini_api_key", "NPM_TOKENS", "SSH_PASSPHRASE", "app.secret",
    ]  # fmt: skip
    plain = [
        "PATH", "HOME", "PWD", "OLDPWD", "SSH_AUTH_SOCK", "TERM", "KEY_PATH", "GPG_KEY_ID",
        "API_KEY_FILE", "TOKEN_URL", "COMPAT", "LANG", "XDG_STATE_HOME", "",
    ]  # fmt: skip
    assert [n for n in secret if not is_secret_name(n)] == []
    assert [n for n in plain if is_secret_name(n)] == []
    env = {"OPENAI_API_KEY": KEY, "HOME": "/home/someone", "EDITOR": "nvim"}
    assert secret_environment(env) == {"OPENAI_API_KEY": KEY}


def test_known_secrets_take_sign_in_values_and_secret_named_variables() -> None:
    secrets = KnownSecrets()
    secrets.add_environment({"OPENAI_API_KEY": KEY, "HOME": "/home/someone/far/away"})
    secrets.add({"ACCOUNT": "user-answer-9", "PIN": "1234"})
    text = f"{KEY} /home/someone/far/away user-answer-9 1234"
    assert secrets.redactor.redact(text) == (
        "[redacted: OPENAI_API_KEY] /home/someone/far/away [redacted: ACCOUNT] 1234"
    )


def test_log_records_carrying_a_secret_are_redacted() -> None:
    secrets = KnownSecrets()
    secrets.add({"OPENAI_API_KEY": KEY})
    out = io.StringIO()
    handler = logging.StreamHandler(out)
    root = logging.getLogger()
    root.addHandler(handler)
    try:
        secrets.guard_logs()
        log = logging.getLogger("acpls.agent.stderr")
        log.propagate, level = True, log.level
        log.setLevel(logging.INFO)
        log.info("agent said %s", f"my key is {KEY}")
        try:
            raise ValueError(f"bad key {KEY}")
        except ValueError:
            log.exception("failed")
        log.setLevel(level)
    finally:
        root.removeHandler(handler)
    written = out.getvalue()
    assert KEY not in written
    assert "agent said my key is [redacted: OPENAI_API_KEY]" in written
    assert "ValueError: bad key [redacted: OPENAI_API_KEY]" in written


def test_the_transcript_on_disk_never_holds_a_secret_split_across_flushes(tmp_path) -> None:
    secrets = KnownSecrets()
    secrets.add({"OPENAI_API_KEY": KEY})
    transcript = Transcript.create(tmp_path, "s1", "agent", lambda: secrets.redactor)
    half = len(KEY) // 2
    for piece in (f"the key is {KEY[:half]}", f"{KEY[half:]}, done"):
        chunk = {"type": "text", "text": piece}
        transcript.add_update({"sessionUpdate": "message_chunk", "content": chunk})
        transcript.flush()
    transcript.close()
    text = transcript.path.read_text(encoding="utf-8")
    assert KEY not in text and "the key is [redacted: OPENAI_API_KEY], done" in text


def test_a_secret_split_around_another_block_of_the_transcript_is_redacted(tmp_path) -> None:
    """The halves of a key in two message chunks, with a terminal's output written between
    them (the pump writes terminal output late): neither half is ever written."""
    secrets = KnownSecrets()
    secrets.add({"OPENAI_API_KEY": KEY})
    transcript = Transcript.create(tmp_path, "s1", "agent", lambda: secrets.redactor)
    half = len(KEY) // 2

    def chunk(text: str) -> None:
        content = {"type": "text", "text": text}
        transcript.add_update({"sessionUpdate": "message_chunk", "content": content})
        transcript.flush()

    chunk(f"the key is {KEY[:half]}")
    transcript.terminal_output("t1", f"printed {KEY[:3]}")
    transcript.flush()
    transcript.terminal_output("t1", f"{KEY[3:]} there\n")
    chunk(f"{KEY[half:]}, done")
    transcript.turn_ended("end_turn")
    text = transcript.path.read_text(encoding="utf-8")
    assert KEY[:half] not in text and KEY[half:] not in text
    assert text.count("[redacted: OPENAI_API_KEY]") == 2
    assert "```text\nprinted\n```" in text and "[redacted: OPENAI_API_KEY] there" in text
