"""Session management against a scripted agent (v1 and v2): every page of the agent's
`session/list` with titles, resume without replay and load with replay, fork, and the editor's
other workspace folders as `additionalDirectories`. What acpls sends is checked against the
vendored ACP schemas."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pygls.exceptions import JsonRpcException

from tests.e2e.conftest import agent_log, command, notifications, scripted, start
from tests.schema import validate_client_message


def sent(log: Path, method: str, protocol: int, *, unstable: bool = False) -> list[dict[str, Any]]:
    out = []
    for message in agent_log(log):
        if message.get("method") == method:
            envelope = {"jsonrpc": "2.0", "id": 1, **message}
            validate_client_message(protocol, envelope, unstable=unstable)
            out.append(message["params"])
    return out


def init(protocol: int, **session_caps: Any) -> dict[str, Any]:
    if protocol == 1:
        caps = {"list": {}, "resume": {}, "close": {}, **session_caps}
        return {
            "protocolVersion": 1,
            "agentInfo": {"name": "scripted-agent", "version": "0"},
            "agentCapabilities": {"loadSession": True, "sessionCapabilities": caps},
        }
    return {
        "protocolVersion": 2,
        "info": {"name": "scripted-agent", "version": "0"},
        "capabilities": {"session": session_caps},
    }


def page(ids: list[str], cursor: str | None) -> dict[str, Any]:
    listed = [{"sessionId": i, "cwd": "$cwd", "title": f"Title {i}"} for i in ids]
    return {"sessions": listed, **({"nextCursor": cursor} if cursor else {})}


PAGES = {"": page(["a", "b"], "c1"), "c1": page(["c"], "c2"), "c2": page(["d"], None)}


@pytest.mark.parametrize("protocol", [1, 2])
async def test_every_page_with_titles(client, workspace, tmp_path, protocol):
    log = tmp_path / "agent.jsonl"
    script = {"protocol": protocol, "on_initialize": init(protocol), "on_list": {"pages": PAGES}}
    await start(client, workspace, scripted(script, log))
    one = await command(client, "acpls.listSessions", {"cwd": str(workspace)})
    assert [s["sessionId"] for s in one["sessions"]] == ["a", "b"]
    assert one["nextCursor"] == "c1"
    every = await command(client, "acpls.listSessions", {"cwd": str(workspace), "all": True})
    assert [(s["sessionId"], s["title"]) for s in every["sessions"]] == [
        ("a", "Title a"),
        ("b", "Title b"),
        ("c", "Title c"),
        ("d", "Title d"),
    ]
    assert "nextCursor" not in every
    assert every["offers"] == {
        "load": True,  # v2: session/resume with replayFrom
        "resume": True,
        "fork": False,
        "close": True,
        "delete": False,
        "logout": protocol == 2,
    }
    cursors = [p.get("cursor") for p in sent(log, "session/list", protocol)]
    assert cursors == [None, None, "c1", "c2"]
    with pytest.raises(JsonRpcException, match="all must be"):
        await command(client, "acpls.listSessions", {"all": "yes"})


async def test_a_cursor_that_comes_back_ends_the_listing(client, workspace, tmp_path):
    log = tmp_path / "agent.jsonl"
    pages = {"": page(["a"], "loop"), "loop": page(["b"], "loop")}
    script = {"protocol": 1, "on_initialize": init(1), "on_list": {"pages": pages}}
    await start(client, workspace, scripted(script, log))
    every = await command(client, "acpls.listSessions", {"all": True})
    assert [s["sessionId"] for s in every["sessions"]] == ["a", "b"]
    assert len(sent(log, "session/list", 1)) == 2


TITLE = {"sessionUpdate": "session_info_update", "title": "Renamed by the agent"}


@pytest.mark.parametrize("protocol", [1, 2])
async def test_open_sessions_carry_their_latest_title(client, workspace, tmp_path, protocol):
    log = tmp_path / "agent.jsonl"
    script = {
        "protocol": protocol,
        "on_initialize": init(protocol),
        "on_prompt": [{"update": TITLE}],
        # scripted-1 is listed with its old title; acpls knows the newer one.
        "on_list": {"sessions": [{"sessionId": "scripted-1", "cwd": "$cwd", "title": "Old"}]},
    }
    await start(client, workspace, scripted(script, log))
    await command(client, "acpls.prompt", {"text": "hi"})
    listed = await command(client, "acpls.listSessions", {"all": True})
    assert listed["sessions"][0]["title"] == "Renamed by the agent"
    assert listed["sessions"][0]["open"] is True
    known = await command(client, "acpls.sessions", {})
    assert known["sessions"][0]["title"] == "Renamed by the agent"


REPLAYED = {
    "sessionUpdate": "agent_message_chunk",
    "content": {"type": "text", "text": "from before"},
}


@pytest.mark.parametrize("protocol", [1, 2])
async def test_resume_without_replay_and_load_with_it(client, workspace, tmp_path, protocol):
    log = tmp_path / "agent.jsonl"
    replay = [{"update": REPLAYED}]
    script = {
        "protocol": protocol,
        "on_initialize": init(protocol),
        "on_load": replay,
        "on_resume": replay if protocol == 2 else [],
    }
    await start(client, workspace, scripted(script, log))
    resumed = await command(client, "acpls.resumeSession", {"sessionId": "old-1"})
    assert resumed["sessionId"] == "old-1"
    loaded = await command(client, "acpls.loadSession", {"sessionId": "old-2"})
    assert loaded["sessionId"] == "old-2"
    resumes = sent(log, "session/resume", protocol)
    if protocol == 1:
        assert [r["sessionId"] for r in resumes] == ["old-1"]
        assert [r["sessionId"] for r in sent(log, "session/load", 1)] == ["old-2"]
    else:
        assert [(r["sessionId"], r.get("replayFrom")) for r in resumes] == [
            ("old-1", None),
            ("old-2", {"type": "start"}),
        ]
    shown = {
        p["sessionId"]
        for p in notifications(client, "acpls/sessionUpdate")
        if p["update"]["sessionUpdate"] == "message"
    }
    assert "old-2" in shown
    assert (await command(client, "acpls.sessions", {}))["current"] == "old-2"


@pytest.mark.parametrize("protocol", [1, 2])
async def test_fork_makes_the_current_session(client, workspace, tmp_path, protocol):
    log = tmp_path / "agent.jsonl"
    script = {"protocol": protocol, "on_initialize": init(protocol, fork={})}
    await start(client, workspace, scripted(script, log))
    first = (await command(client, "acpls.newSession", {}))["sessionId"]
    forked = await command(client, "acpls.forkSession", {"sessionId": first})
    assert forked["forkedFrom"] == first and forked["sessionId"] != first
    forks = sent(log, "session/fork", protocol, unstable=True)
    assert forks == [{"sessionId": first, "cwd": str(workspace), "mcpServers": []}]
    listed = await command(client, "acpls.listSessions", {})
    assert listed["offers"]["fork"] is True
    await command(client, "acpls.prompt", {"text": "on the fork"})
    prompts = sent(log, "session/prompt", protocol)
    assert [p["sessionId"] for p in prompts] == [forked["sessionId"]]


async def test_fork_needs_the_capability(client, workspace, tmp_path):
    log = tmp_path / "agent.jsonl"
    await start(client, workspace, scripted({"protocol": 1}, log))
    await command(client, "acpls.newSession", {})
    with pytest.raises(JsonRpcException, match="does not fork"):
        await command(client, "acpls.forkSession", {})


@pytest.mark.parametrize("protocol", [1, 2])
async def test_workspace_folders_become_additional_directories(
    client, workspace, tmp_path, protocol
):
    log = tmp_path / "agent.jsonl"
    other = tmp_path / "other"
    other.mkdir()
    script = {"protocol": protocol, "on_initialize": init(protocol, additionalDirectories={})}
    await start(client, workspace, scripted(script, log), more_folders=(other,))
    await command(client, "acpls.newSession", {})
    await command(client, "acpls.resumeSession", {"sessionId": "old-1"})
    news = sent(log, "session/new", protocol)
    assert news[0]["cwd"] == str(workspace)
    assert news[0]["additionalDirectories"] == [str(other)]
    assert sent(log, "session/resume", protocol)[0]["additionalDirectories"] == [str(other)]


async def test_no_additional_directories_without_the_capability(client, workspace, tmp_path):
    log = tmp_path / "agent.jsonl"
    other = tmp_path / "other"
    other.mkdir()
    await start(client, workspace, scripted({"protocol": 1}, log), more_folders=(other,))
    await command(client, "acpls.newSession", {})
    assert "additionalDirectories" not in sent(log, "session/new", 1)[0]


@pytest.mark.parametrize("protocol", [1, 2])
async def test_generic_editor_picks_the_session_to_load(client, workspace, tmp_path, protocol):
    """Without a sessionId (an editor with no picker of its own) acpls asks which, by title."""
    log = tmp_path / "agent.jsonl"
    script = {"protocol": protocol, "on_initialize": init(protocol), "on_list": {"pages": PAGES}}
    asked: list[Any] = []

    def answer(params: Any) -> Any:
        asked.append(params)
        return next(a for a in params.actions if a.title == "Title c")

    client.answer_message_request = answer
    await start(client, workspace, scripted(script, log), custom=False)
    loaded = await command(client, "acpls.loadSession", {})
    assert loaded["sessionId"] == "c"
    assert [a.title for a in asked[0].actions] == ["Title a", "Title b", "Title c", "Title d"]
    method = "session/load" if protocol == 1 else "session/resume"
    assert [m["sessionId"] for m in sent(log, method, protocol)] == ["c"]
    client.answer_message_request = lambda params: None
    with pytest.raises(JsonRpcException, match="no session was chosen"):
        await command(client, "acpls.resumeSession", {})
