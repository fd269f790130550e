"""The ACP blocks of mentions that need no editor (translate/mentions.py)."""

from __future__ import annotations

from acpls.translate.mentions import terminal_block


def test_terminal_output_reaches_the_agent_as_plain_text():
    output = (
        "\x1b[32m✓ ok\x1b[0m café\r\n\x1b]0;title\x07\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\\r\n"
    )
    assert terminal_block("make test", output, truncated=False) == {
        "type": "text",
        "text": "Recent output of `make test`:\n\n```\n✓ ok café\nlink\n```",
    }
    assert terminal_block(None, "x\n", truncated=True)["text"] == (
        "Recent output of a terminal (its end):\n\n```\nx\n```"
    )
