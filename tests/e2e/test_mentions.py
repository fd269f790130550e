"""@-mentions in `acpls.prompt` end to end: the exact ACP content blocks the scripted agent
receives for each kind of mention (file, line range, selection, symbol, diagnostics, an agent
terminal's output, another session's transcript), with and without the agent's embeddedContext,
over ACP v1 and v2, checked against the vendored schemas; large files go as links; wrong
mentions get InvalidParams."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException

from tests.e2e.conftest import agent_log, command, notifications, scripted, start
from tests.schema import validate_client_message

ON_DISK = "def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n"
BUFFER = ON_DISK.replace("return a - b", "return a + b  # unsaved")


def init(protocol: int, embedded: bool) -> dict[str, Any]:
    if protocol == 1:
        prompt = {"image": False, "audio": False, "embeddedContext": embedded}
        return {"protocolVersion": 1, "agentCapabilities": {"promptCapabilities": prompt}}
    session = {"prompt": {"embeddedContext": {}}} if embedded else {}
    return {"protocolVersion": 2, "capabilities": {"session": session}}


def prompts(log: Path, protocol: int) -> list[list[dict[str, Any]]]:
    out = []
    for message in agent_log(log):
        if message.get("method") == "session/prompt":
            validate_client_message(protocol, {"jsonrpc": "2.0", "id": 1, **message})
            out.append(message["params"]["prompt"])
    return out


def rng(start: int, end: int, end_char: int = 0) -> dict[str, Any]:
    return {"start": {"line": start, "character": 0}, "end": {"line": end, "character": end_char}}


async def open_buffer(client: Any, workspace: Path) -> str:
    path = workspace / "calc.py"
    path.write_text(ON_DISK, encoding="utf-8")
    uri = path.as_uri()
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(
                uri=uri, language_id="python", version=1, text=BUFFER
            )
        )
    )
    return uri


@pytest.mark.parametrize("protocol", [1, 2])
@pytest.mark.parametrize("embedded", [True, False], ids=["embedded", "links"])
async def test_file_range_selection_symbol_and_diagnostics(
    client, workspace, tmp_path, protocol, embedded
):
    log = tmp_path / "agent.jsonl"
    script = {"protocol": protocol, "on_initialize": init(protocol, embedded)}
    await start(client, workspace, scripted(script, log), custom=True)
    uri = await open_buffer(client, workspace)
    readme = workspace / "README.md"
    readme.write_text("# the project\n", encoding="utf-8")  # not open: read from disk
    diagnostic = {
        "range": {"start": {"line": 1, "character": 11}, "end": {"line": 1, "character": 12}},
        "message": "subtracts",
        "severity": 2,
        "source": "mylint",
    }
    mentions = [
        {"type": "file", "uri": uri},
        {"type": "file", "uri": readme.as_uri()},
        {"type": "file", "uri": uri, "range": rng(4, 6)},
        {"type": "selection", "uri": uri, "range": rng(1, 1, 16)},
        {"type": "symbol", "name": "mul", "uri": uri, "range": rng(4, 5, 16)},
        {"type": "diagnostics", "diagnostics": [{"uri": uri, "diagnostic": diagnostic}]},
    ]
    await command(client, "acpls.prompt", {"text": "look", "mentions": mentions})

    ((text, *blocks),) = prompts(log, protocol)
    assert text == {"type": "text", "text": "look"}
    lines = BUFFER.splitlines(keepends=True)
    expected_embedded = [
        {"type": "resource", "resource": {"uri": uri, "text": BUFFER}},
        {"type": "resource", "resource": {"uri": readme.as_uri(), "text": "# the project\n"}},
        {"type": "resource", "resource": {"uri": f"{uri}#L5-6", "text": "".join(lines[4:6])}},
        {"type": "resource", "resource": {"uri": f"{uri}#L2-2", "text": lines[1]}},
        {"type": "resource", "resource": {"uri": f"{uri}#L5-6", "text": "".join(lines[4:6])}},
    ]
    expected_links = [
        {"type": "resource_link", "uri": uri, "name": "calc.py"},
        {"type": "resource_link", "uri": readme.as_uri(), "name": "README.md"},
        {"type": "resource_link", "uri": f"{uri}#L5-6", "name": "calc.py"},
        {"type": "resource_link", "uri": f"{uri}#L2-2", "name": "calc.py"},
        {"type": "resource_link", "uri": f"{uri}#L5-6", "name": "mul (calc.py)"},
    ]
    assert blocks[:5] == (expected_embedded if embedded else expected_links)
    assert blocks[5] == {
        "type": "text",
        "text": "Diagnostics the editor reports:\n\ncalc.py:\n"
        "- line 2, col 12 to line 2, col 13 (warning, mylint): subtracts",
    }


async def test_a_large_file_goes_as_a_link(client, workspace, tmp_path):
    log = tmp_path / "agent.jsonl"
    script = {"protocol": 1, "on_initialize": init(1, True)}
    await start(
        client, workspace, scripted(script, log), custom=False, context={"maxEmbedBytes": 40}
    )
    uri = await open_buffer(client, workspace)
    small = {"type": "file", "uri": uri, "range": rng(0, 1)}  # 15 bytes
    large = {"type": "file", "uri": uri}  # 84 bytes
    await command(client, "acpls.prompt", {"text": "x", "mentions": [small, large]})
    ((_, first, second),) = prompts(log, 1)
    assert first == {
        "type": "resource",
        "resource": {"uri": f"{uri}#L1-1", "text": "def add(a, b):\n"},
    }
    assert second == {"type": "resource_link", "uri": uri, "name": "calc.py"}


TERMINAL_TURN = [
    {
        "request": "terminal/create",
        "params": {"sessionId": "$sessionId", "command": "printf", "args": ["built ok\\n"]},
        "save": "t",
    },
    {
        "request": "terminal/wait_for_exit",
        "params": {"sessionId": "$sessionId", "terminalId": "$t.terminalId"},
    },
    {
        "request": "terminal/release",
        "params": {"sessionId": "$sessionId", "terminalId": "$t.terminalId"},
    },
]


@pytest.mark.parametrize("protocol", [1, 2])
async def test_terminal_output_and_another_sessions_transcript(
    client, workspace, tmp_path, protocol
):
    log = tmp_path / "agent.jsonl"
    script = {
        "protocol": protocol,
        "on_initialize": init(protocol, True),
        "on_prompt": [TERMINAL_TURN, []],
    }
    await start(client, workspace, scripted(script, log), custom=True)
    first = await command(client, "acpls.prompt", {"text": "build it"})
    terminal_id = next(
        m["result"]["terminalId"]
        for m in agent_log(log)
        if isinstance(m.get("result"), dict) and "terminalId" in m["result"]
    )
    second = await command(client, "acpls.newSession", {})
    assert second["sessionId"] != first["sessionId"]
    mentions = [
        {"type": "terminal", "terminalId": terminal_id},
        {"type": "session", "sessionId": first["sessionId"]},
    ]
    await command(
        client,
        "acpls.prompt",
        {"sessionId": second["sessionId"], "text": "continue", "mentions": mentions},
    )
    (_, (_, terminal, transcript)) = prompts(log, protocol)
    assert terminal == {
        "type": "text",
        "text": "Recent output of `printf built ok\\n`:\n\n```\nbuilt ok\n```",
    }
    assert transcript["type"] == "resource"
    assert transcript["resource"]["uri"].endswith(".md")
    assert "**You:** build it" in transcript["resource"]["text"]


async def test_a_transcript_without_embedded_context_is_text(client, workspace, tmp_path):
    log = tmp_path / "agent.jsonl"
    script = {"protocol": 1, "on_initialize": init(1, False)}
    await start(client, workspace, scripted(script, log), custom=True)
    first = await command(client, "acpls.prompt", {"text": "first question"})
    await command(client, "acpls.newSession", {})
    mention = {"type": "session", "sessionId": first["sessionId"]}
    await command(client, "acpls.prompt", {"text": "go on", "mentions": [mention]})
    (_, (_, transcript)) = prompts(log, 1)
    assert transcript["type"] == "text"
    assert transcript["text"].startswith(f"Transcript of the session {first['sessionId']}:\n\n")
    assert "**You:** first question" in transcript["text"]


async def test_a_session_closed_by_a_restart_is_handed_on_from_its_transcript(
    client, workspace, tmp_path
):
    """Moving a task to another agent: after the agent restarts (as when the user switches
    agents) the old session is no longer open, yet mentionCandidates offers it and @session
    sends its transcript from disk."""
    log = tmp_path / "agent.jsonl"
    script = {"protocol": 1, "on_initialize": init(1, True)}
    await start(client, workspace, scripted(script, log), custom=True)
    # Two sessions before the restart, one after: the scripted agent numbers its sessions from 1
    # again, so the second is the one no longer open.
    await command(client, "acpls.newSession", {})
    first = await command(
        client,
        "acpls.prompt",
        {
            "sessionId": (await command(client, "acpls.newSession", {}))["sessionId"],
            "text": "start the parser rewrite",
        },
    )
    await command(client, "acpls.restartAgent", {})
    assert (await command(client, "acpls.newSession", {}))["sessionId"] != first["sessionId"]
    found = await command(client, "acpls.mentionCandidates", {"query": first["sessionId"]})
    stored = [i for i in found["items"] if i["type"] == "session"]
    assert [i["sessionId"] for i in stored] == [first["sessionId"]]
    assert stored[0]["label"].startswith(f"{first['sessionId']} (")
    mention = {"type": "session", "sessionId": first["sessionId"]}
    await command(client, "acpls.prompt", {"text": "carry on", "mentions": [mention]})
    transcript = prompts(log, 1)[-1][1]
    assert transcript["type"] == "resource"
    assert "**You:** start the parser rewrite" in transcript["resource"]["text"]
    with pytest.raises(JsonRpcException, match="not open, and no transcript"):
        await command(
            client,
            "acpls.prompt",
            {"text": "x", "mentions": [{"type": "session", "sessionId": "never-was"}]},
        )


@pytest.mark.parametrize(
    "mentions",
    [
        "file:///a",
        [{"type": "image"}],
        [{"type": "file"}],
        [{"type": "selection", "uri": "file:///a"}],
        [{"type": "symbol", "uri": "file:///a", "range": rng(0, 1)}],
        [{"type": "diagnostics", "diagnostics": [{"uri": "file:///a"}]}],
        [{"type": "terminal"}],
        [{"type": "session"}],
        [{"type": "image", "path": "relative.png"}],
        [{"type": "image", "data": "AAAA", "mimeType": "text/plain"}],
    ],
)
async def test_wrong_mentions_get_invalid_params(client, workspace, tmp_path, mentions):
    log = tmp_path / "agent.jsonl"
    await start(client, workspace, scripted({"protocol": 1}, log), custom=True)
    with pytest.raises(JsonRpcException) as raised:
        await command(client, "acpls.prompt", {"text": "x", "mentions": mentions})
    assert raised.value.code == -32602
    assert prompts(log, 1) == []


async def test_mention_candidates_fuzzy_over_files_respecting_gitignore(
    client, workspace, tmp_path
):
    import subprocess

    subprocess.run(["git", "init", "-q"], cwd=workspace, check=True)
    (workspace / ".gitignore").write_text("build/\n", encoding="utf-8")
    (workspace / "src").mkdir()
    (workspace / "src" / "calculator_test.py").write_text("", encoding="utf-8")
    (workspace / "build").mkdir()
    (workspace / "build" / "calc.py").write_text("", encoding="utf-8")
    log = tmp_path / "agent.jsonl"
    await start(client, workspace, scripted({"protocol": 1}, log), custom=True)
    found = await command(client, "acpls.mentionCandidates", {"query": "calc"})
    labels = [item["label"] for item in found["items"]]
    # The file name matching best comes first; the ignored build/ is left out.
    assert labels == ["calc.py", "src/calculator_test.py"]
    assert found["items"][0] == {
        "type": "file",
        "label": "calc.py",
        "uri": (workspace / "calc.py").as_uri(),
    }
    session = await command(client, "acpls.newSession", {})
    found = await command(client, "acpls.mentionCandidates", {"query": "", "limit": 1})
    assert [i["type"] for i in found["items"]] == ["file", "session"]
    assert found["items"][1]["sessionId"] == session["sessionId"]


# A 1x1 PNG.
PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360000002000100e221bc330000000049454e44ae426082"
)


def image_init(protocol: int, image: bool) -> dict[str, Any]:
    if protocol == 1:
        prompt = {"image": image, "audio": False, "embeddedContext": True}
        return {"protocolVersion": 1, "agentCapabilities": {"promptCapabilities": prompt}}
    prompt = {"embeddedContext": {}, **({"image": {}} if image else {})}
    return {"protocolVersion": 2, "capabilities": {"session": {"prompt": prompt}}}


@pytest.mark.parametrize("protocol", [1, 2])
async def test_images_from_a_file_and_pasted(client, workspace, tmp_path, protocol):
    import base64

    log = tmp_path / "agent.jsonl"
    script = {"protocol": protocol, "on_initialize": image_init(protocol, True)}
    await start(client, workspace, scripted(script, log), custom=True)
    shot = workspace / "shot.png"
    shot.write_bytes(PNG)
    data = base64.b64encode(PNG).decode()
    mentions = [
        {"type": "image", "path": str(shot)},
        {"type": "image", "data": data, "mimeType": "image/png"},
    ]
    await command(client, "acpls.prompt", {"text": "what is wrong here?", "mentions": mentions})
    ((_, from_file, pasted),) = prompts(log, protocol)
    assert from_file == {
        "type": "image",
        "data": data,
        "mimeType": "image/png",
        "uri": shot.as_uri(),
    }
    assert pasted == {"type": "image", "data": data, "mimeType": "image/png"}
    # Front ends learn it from acpls/agentStatus, to refuse a pasted image at once.
    running = [n for n in notifications(client, "acpls/agentStatus") if n["state"] == "running"]
    assert running[-1]["images"] is True


@pytest.mark.parametrize("protocol", [1, 2])
async def test_an_agent_without_images_gets_none_and_the_user_is_told(
    client, workspace, tmp_path, protocol
):
    log = tmp_path / "agent.jsonl"
    script = {"protocol": protocol, "on_initialize": image_init(protocol, False)}
    await start(client, workspace, scripted(script, log), custom=True)
    shot = workspace / "shot.png"
    shot.write_bytes(PNG)
    with pytest.raises(JsonRpcException) as raised:
        await command(
            client,
            "acpls.prompt",
            {"text": "x", "mentions": [{"type": "image", "path": str(shot)}]},
        )
    assert "does not accept images (its promptCapabilities.image is off)" in str(raised.value)
    assert prompts(log, protocol) == []
    running = [n for n in notifications(client, "acpls/agentStatus") if n["state"] == "running"]
    assert running[-1]["images"] is False


async def test_an_image_over_the_limit_is_refused(client, workspace, tmp_path):
    log = tmp_path / "agent.jsonl"
    script = {"protocol": 1, "on_initialize": image_init(1, True)}
    await start(
        client, workspace, scripted(script, log), custom=True, context={"maxImageBytes": 10}
    )
    shot = workspace / "shot.png"
    shot.write_bytes(PNG)
    with pytest.raises(JsonRpcException) as raised:
        await command(
            client,
            "acpls.prompt",
            {"text": "x", "mentions": [{"type": "image", "path": str(shot)}]},
        )
    assert f"{shot} is {len(PNG)} bytes, over the 10 bytes of context.maxImageBytes" in str(
        raised.value
    )
    assert prompts(log, 1) == []
