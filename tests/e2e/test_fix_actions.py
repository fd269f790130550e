""" "Ask the agent to fix" code actions on the diagnostics an editor passes with
textDocument/codeAction, in generic mode (an Emacs's plain-LSP capabilities) and custom mode: the
actions offered, and the exact content blocks the scripted agent receives when the editor runs one,
with and without the agent's embeddedContext (ACP v1 and v2), checked against the ACP schemas."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Union

import pytest
from lsprotocol import types

from tests.e2e.conftest import agent_log, command, scripted, start
from tests.schema import validate_client_message

# 30 lines on disk; the editor's buffer has an unsaved change on line 1.
ON_DISK = "".join(f"line_{n} = {n}\n" for n in range(1, 31))
BUFFER = ON_DISK.replace("line_1 = 1", "line_1 = 'unsaved'")
UNDEFINED = types.Diagnostic(
    range=types.Range(start=types.Position(line=14, character=4), end=types.Position(14, 9)),
    message='"foo" is not defined',
    severity=types.DiagnosticSeverity.Error,
    source="pyright",
    code="reportUndefinedVariable",
)
UNUSED = types.Diagnostic(
    range=types.Range(start=types.Position(line=15, character=0), end=types.Position(15, 6)),
    message="line too long (120 > 100 characters), and this message is longer than a menu title",
    severity=types.DiagnosticSeverity.Warning,
    source="ruff",
    code=501,
)
DESCRIBED_UNDEFINED = 'line 15, col 5 to line 15, col 10 (error, pyright reportUndefinedVariable): "foo" is not defined'
DESCRIBED_UNUSED = (
    "line 16, col 1 to line 16, col 7 (warning, ruff 501): line too long (120 > 100 characters), "
    "and this message is longer than a menu title"
)


def init(protocol: int, embedded: bool) -> dict[str, Any]:
    if protocol == 1:
        prompt = {"image": False, "audio": False, "embeddedContext": embedded}
        return {"protocolVersion": 1, "agentCapabilities": {"promptCapabilities": prompt}}
    session = {"prompt": {"embeddedContext": {}}} if embedded else {}
    return {"protocolVersion": 2, "capabilities": {"session": session}}


async def open_calc(client: Any, workspace: Path) -> str:
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


def read_code_actions_as_sent(client: Any) -> None:
    """lsprotocol reads every result item with a `command` key as a Command, even a CodeAction
    whose `command` is an object; tell them apart by that key's type, as the LSP spec does."""
    converter = client.protocol._converter

    def structure(item: Any, _: type) -> Any:
        kind = types.Command if isinstance(item.get("command"), str) else types.CodeAction
        return converter.structure(item, kind)

    converter.register_structure_hook(types.Command | types.CodeAction, structure)
    converter.register_structure_hook(Union[types.Command, types.CodeAction], structure)  # noqa: UP007


async def code_actions(client: Any, uri: str, *diagnostics: types.Diagnostic) -> list[Any]:
    read_code_actions_as_sent(client)
    cursor = types.Position(line=14, character=6)
    return await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=types.Range(start=cursor, end=cursor),
            context=types.CodeActionContext(diagnostics=list(diagnostics)),
        )
    )


async def run_action(client: Any, action: types.CodeAction) -> Any:
    """What an editor does with the chosen action: run its command."""
    assert action.command is not None and action.command.arguments
    return await command(client, action.command.command, action.command.arguments[0])


def prompts(log: Path, protocol: int) -> list[list[dict[str, Any]]]:
    out = []
    for message in agent_log(log):
        if message.get("method") == "session/prompt":
            validate_client_message(protocol, {"jsonrpc": "2.0", "id": 1, **message})
            out.append(message["params"]["prompt"])
    return out


def lines(first: int, last: int) -> str:
    """Lines first..last (1-based, inclusive) of the buffer."""
    return "".join(BUFFER.splitlines(keepends=True)[first - 1 : last])


@pytest.mark.parametrize("custom", [False, True], ids=["generic", "custom"])
async def test_one_action_per_diagnostic_and_fix_all(client, workspace, tmp_path, custom):
    log = tmp_path / "agent.jsonl"
    editor = "visual-studio-code" if custom else "emacs"
    await start(client, workspace, scripted({}, log), custom=custom, editor=editor)
    uri = await open_calc(client, workspace)

    actions = await code_actions(client, uri, UNDEFINED, UNUSED)
    titles = [a.title for a in actions]
    assert titles == [
        'Ask the agent to fix: "foo" is not defined',
        "Ask the agent to fix: line too long (120 > 100 characters), and this message is…",
        "Ask the agent to fix all diagnostics in this file",
    ]
    assert {a.kind for a in actions} == {types.CodeActionKind.QuickFix}
    # Each action says which diagnostics it fixes (editors show it beside them).
    assert [list(a.diagnostics) for a in actions] == [[UNDEFINED], [UNUSED], [UNDEFINED, UNUSED]]
    assert all(a.command.command == "acpls.prompt" for a in actions)

    # No diagnostic, no fix actions.
    assert list(await code_actions(client, uri)) == []


@pytest.mark.parametrize("protocol", [1, 2])
@pytest.mark.parametrize("embedded", [True, False], ids=["embedded", "links"])
@pytest.mark.parametrize("custom", [False, True], ids=["generic", "custom"])
async def test_the_agent_receives_the_diagnostic_and_its_code(
    client, workspace, tmp_path, protocol, embedded, custom
):
    log = tmp_path / "agent.jsonl"
    script = {"protocol": protocol, "on_initialize": init(protocol, embedded)}
    editor = "visual-studio-code" if custom else "emacs"
    await start(client, workspace, scripted(script, log), custom=custom, editor=editor)
    uri = await open_calc(client, workspace)

    (fix_one, _, fix_all) = await code_actions(client, uri, UNDEFINED, UNUSED)
    result = await run_action(client, fix_one)
    assert result["stopReason"] == "end_turn"
    await run_action(client, fix_all)

    (one, every) = prompts(log, protocol)
    text = {
        "type": "text",
        "text": f"Fix this diagnostic in calc.py:\n\n- {DESCRIBED_UNDEFINED}\n\n"
        "The code around it and the whole file are attached.",
    }
    around, whole = f"{uri}#L5-25", uri
    if embedded:  # the buffer's text, its unsaved change included
        assert one == [
            text,
            {"type": "resource", "resource": {"uri": around, "text": lines(5, 25)}},
            {"type": "resource", "resource": {"uri": whole, "text": BUFFER}},
        ]
    else:
        assert one == [
            text,
            {"type": "resource_link", "uri": around, "name": "calc.py"},
            {"type": "resource_link", "uri": whole, "name": "calc.py"},
        ]

    assert every[0] == {
        "type": "text",
        "text": "Fix all the diagnostics in calc.py. The editor reported these at the cursor:\n\n"
        f"- {DESCRIBED_UNDEFINED}\n- {DESCRIBED_UNUSED}\n\nAlso fix any other problem that the "
        "project's linters, type checkers or compiler report in this file. "
        "The whole file is attached.",
    }
    assert every[1:] == (
        [{"type": "resource", "resource": {"uri": whole, "text": BUFFER}}]
        if embedded
        else [{"type": "resource_link", "uri": whole, "name": "calc.py"}]
    )


async def test_a_diagnostic_near_the_top_and_one_without_source_or_code(
    client, workspace, tmp_path
):
    log = tmp_path / "agent.jsonl"
    await start(client, workspace, scripted({"protocol": 1}, log), custom=False, editor="emacs")
    uri = await open_calc(client, workspace)
    bare = types.Diagnostic(
        range=types.Range(start=types.Position(line=1, character=0), end=types.Position(1, 0)),
        message="  syntax error\nsecond line of detail  ",
    )
    (fix_one, _) = await code_actions(client, uri, bare)
    assert fix_one.title == "Ask the agent to fix: syntax error"
    await run_action(client, fix_one)
    ((text, around, _),) = prompts(log, 1)
    assert text["text"].startswith(
        "Fix this diagnostic in calc.py:\n\n- line 2, col 1: syntax error\nsecond line of detail\n"
    )
    # Ten lines after the diagnostic; before it, the file's start.
    assert around["resource"] == {"uri": f"{uri}#L1-12", "text": lines(1, 12)}
