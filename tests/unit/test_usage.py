"""translate/usage.py and the generic-mode transcript: the context meter's words and its warning."""

from __future__ import annotations

from pathlib import Path

from acpls.services.transcript import Transcript
from acpls.translate import usage


def update(used: int, size: int = 1000, cost: dict | None = None) -> dict:
    body = {"sessionUpdate": "usage", "used": used, "size": size}
    if cost is not None:
        body["cost"] = cost
    return body


def test_describe() -> None:
    assert usage.describe(update(1200, 200000, {"amount": 0.01, "currency": "USD"})) == (
        "context 1,200/200,000 (1%) · 0.01 USD"
    )
    assert usage.describe(update(500)) == "context 500/1,000 (50%)"
    assert usage.describe({"used": 1, "size": 0}) is None
    assert usage.describe({"used": True, "size": 10}) is None


def test_warns_once_until_it_drops_again() -> None:
    meter = usage.WarnOnce()
    assert [meter.crossed(update(u)) for u in (500, 799, 800, 900, 990)] == [
        False,
        False,
        True,
        False,
        False,
    ]
    assert meter.crossed(update(100)) is False  # compacted
    assert meter.crossed(update(850)) is True


def test_transcript_shows_the_meter_at_turn_end_and_warns(tmp_path: Path) -> None:
    transcript = Transcript.create(tmp_path, "s1", "demo")
    assert transcript.add_update(update(300)) is None
    warning = transcript.add_update(update(850))
    assert warning == "the agent's context is nearly full (context 850/1,000 (85%))"
    assert transcript.add_update(update(860)) is None
    transcript.turn_ended("end_turn")
    text = transcript.path.read_text(encoding="utf-8")
    assert "> warning: the agent's context is nearly full (context 850/1,000 (85%))" in text
    assert "*turn ended: end_turn · context 860/1,000 (86%)*" in text


def test_turn_tokens() -> None:
    counts = {"totalTokens": 1234, "inputTokens": 1000, "outputTokens": 234}
    assert usage.turn_usage({"stopReason": "end_turn", "usage": counts}) == counts
    assert usage.turn_usage({"stopReason": "end_turn"}) is None
    assert usage.turn_usage({"usage": {"inputTokens": 1}}) is None
    assert usage.tokens_text(counts) == "1,234 tokens (1,000 in, 234 out)"
    assert usage.tokens_text({"totalTokens": 5}) == "5 tokens"


def test_transcript_shows_an_ended_tool_calls_text_once(tmp_path) -> None:
    """Generic editors read command output that agents put in tool-call content (Copilot CLI,
    Qwen Code) in the transcript: once, when the call ends, without colours."""
    transcript = Transcript.create(tmp_path, "s1", "copilot")
    call = {"toolCallId": "c1", "title": "Write the report", "kind": "execute"}
    output = [{"type": "content", "content": {"type": "text", "text": "\x1b[1mdone\x1b[0m\r\n"}}]
    transcript.add_update({"sessionUpdate": "tool_call", "toolCall": {**call, "status": "pending"}})
    pending = {**call, "status": "pending", "content": output}
    transcript.add_update({"sessionUpdate": "tool_call", "toolCall": pending})
    done = {**call, "status": "completed", "content": [*output, {"type": "terminal"}]}
    transcript.add_update({"sessionUpdate": "tool_call", "toolCall": done})
    transcript.add_update({"sessionUpdate": "tool_call", "toolCall": done})
    transcript.turn_ended("end_turn")
    text = transcript.path.read_text(encoding="utf-8")
    assert text.count("```text\ndone\n```") == 1, text
    assert text.index("— completed") < text.index("```text\ndone")
