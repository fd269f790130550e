"""Session management in Neovim against the real acpls and the scripted agent: `:Acpls history`
lists every page of the agent's sessions with titles, resumes one, forks and closes a chat's
session, deletes a stored one; `:Acpls logout` signs out; the chat header shows the title the agent
gives (`session_info_update`)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.agents import read_log
from tests.schema import validate_client_message

pytestmark = pytest.mark.nvim


def page(ids: list[str], cursor: str | None) -> dict[str, Any]:
    listed = [{"sessionId": i, "cwd": "$cwd", "title": f"Title {i}"} for i in ids]
    return {"sessions": listed, **({"nextCursor": cursor} if cursor else {})}


def script(protocol: int) -> dict[str, Any]:
    caps: dict[str, Any] = {"fork": {}, "delete": {}}
    if protocol == 1:
        init = {
            "agentCapabilities": {
                "loadSession": True,
                "sessionCapabilities": {"list": {}, "resume": {}, "close": {}, **caps},
                "auth": {"logout": {}},
            }
        }
    else:
        init = {"capabilities": {"session": caps}}
    title = {"sessionUpdate": "session_info_update", "title": "Parser work"}
    return {
        "protocol": protocol,
        "on_initialize": init,
        "on_list": {"pages": {"": page(["old-a"], "c1"), "c1": page(["old-b"], None)}},
        "on_prompt": [{"update": title}],
        "on_request": {"logout": {}, "auth/logout": {}},
    }


def sent(ed, method: str, protocol: int) -> list[dict[str, Any]]:
    out = []
    for m in read_log(ed.agent_log):
        if m.get("method") == method:
            envelope = {"jsonrpc": "2.0", "id": 1, **m}
            validate_client_message(protocol, envelope, unstable=method == "session/fork")
            out.append(m["params"])
    return out


def chat_text(ed, index: int) -> str:
    return "\n".join(ed.lua("return T.lines(require('acpls.chat').list()[...].buf)", index))


def pick(ed, kind: str, label_prefix: str) -> list[str]:
    sel = ed.wait_select(kind)
    ed.lua("T.answer_label(...)", sel["index"], label_prefix)
    return sel["labels"]


@pytest.mark.parametrize("protocol", [1, 2])
def test_history_resume_fork_close_delete_logout(editor_factory, protocol):
    ed = editor_factory(script(protocol))
    ed.nvim.command(f"edit {ed.workspace / 'calc.py'}")
    ed.nvim.command("Acpls prompt start")
    ed.wait_turn_end()
    assert "# Parser work" in chat_text(ed, 1)

    # Every page, titled; the open chat's session is marked.
    ed.nvim.command("Acpls history")
    labels = pick(ed, "acpls.sessions", "Title old-b")
    assert labels == ["Title old-a", "Title old-b"]
    actions = pick(ed, "acpls.session_action", "Resume")
    assert "Fork into a new chat" in actions and "Delete" in actions
    assert "Load with its history" in actions  # v2: session/resume with replayFrom
    ed.wait(
        "return #require('acpls.chat').list() == 2"
        " and require('acpls.chat').list()[2].sessionId == 'old-b'",
        what="the resumed session's chat",
    )
    ed.wait(
        "return table.concat(T.lines(require('acpls.chat').list()[2].buf), '\\n')"
        ":find('session resumed') ~= nil",
        what="the resume answered",
    )
    resumes = sent(ed, "session/resume", protocol)
    assert [r["sessionId"] for r in resumes] == ["old-b"] and "replayFrom" not in resumes[0]

    # Fork the first chat's session into a third chat, then close the first chat's session.
    first = ed.lua("return require('acpls.chat').list()[1].sessionId")
    ed.lua("require('acpls.chat').by_session(...):show(true)", first)
    ed.nvim.command("Acpls fork")
    ed.wait("return #require('acpls.chat').list() == 3", what="the fork's chat")
    forks = sent(ed, "session/fork", protocol)
    # (acpls' checkpoints fork after each turn too, where the agent offers it)
    assert forks[-1]["sessionId"] == first
    fork_id = ed.wait("return require('acpls.chat').list()[3].sessionId")
    assert fork_id.startswith("scripted-fork-")
    assert "# Parser work" in chat_text(ed, 3)

    ed.lua("require('acpls.chat').by_session(...):show(true)", first)
    ed.nvim.command("Acpls close")
    ed.wait("return require('acpls.chat').list()[1].sessionId == nil", what="the close")
    assert [c["sessionId"] for c in sent(ed, "session/close", protocol)] == [first]
    assert "session closed" in chat_text(ed, 1)

    # Delete a stored session from the history.
    ed.nvim.command("Acpls history")
    pick(ed, "acpls.sessions", "Title old-a")
    pick(ed, "acpls.session_action", "Delete")
    ed.wait(
        "for _, n in ipairs(T.notes) do if n.msg:find('session deleted') then return true end end",
        what="the delete",
    )
    assert [d["sessionId"] for d in sent(ed, "session/delete", protocol)] == ["old-a"]

    ed.nvim.command("Acpls logout")
    ed.wait(
        "for _, n in ipairs(T.notes) do if n.msg:find('signed out') then return true end end",
        what="the logout",
    )
    assert sent(ed, "logout" if protocol == 1 else "auth/logout", protocol) == [{}]
    assert ed.errors() == []


@pytest.mark.parametrize("protocol", [1, 2])
def test_acpls_load_shows_the_stored_sessions_history(editor_factory, protocol):
    """`:Acpls load` continues a stored session with its history in the chat, from a v1 agent
    (`session/load`) and from a v2 agent (`session/resume` with `replayFrom`): a v2 session once
    came back empty, resumed without it."""
    history = [
        {"update": {"sessionUpdate": "user_message_chunk",
                    "content": {"type": "text", "text": "what did we do"}}},
        {"update": {"sessionUpdate": "agent_message_chunk",
                    "content": {"type": "text", "text": "hello from the history"}}},
    ]  # fmt: skip
    spec = script(protocol)
    spec["on_load" if protocol == 1 else "on_resume"] = history
    ed = editor_factory(spec)
    ed.nvim.command("Acpls load")
    pick(ed, "acpls.sessions", "Title old-b")
    ed.wait(
        "local c = require('acpls.chat').list()[1]"
        " return c and table.concat(T.lines(c.buf), '\\n'):find('hello from the history') ~= nil",
        what="the replayed history in the chat",
    )
    if protocol == 1:
        assert [r["sessionId"] for r in sent(ed, "session/load", 1)] == ["old-b"]
    else:
        resumes = sent(ed, "session/resume", 2)
        assert resumes == [{**resumes[0], "sessionId": "old-b", "replayFrom": {"type": "start"}}]
    assert "what did we do" in chat_text(ed, 1)
    assert ed.errors() == []
