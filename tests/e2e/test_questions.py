"""Questions from the agent (ACP elicitation, editor contract section 8), end to end: the real acpls,
a scripted agent (v1 and v2) and an LSP client in custom or generic mode."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types

from tests.e2e.conftest import agent_log, command, notifications, scripted, start
from tests.schema import validate_client_message

FIXTURES = Path(__file__).resolve().parents[2] / "editors" / "fixtures"
# The form with every field type, and an answer that fits it: the golden editor fixtures.
FORM: dict[str, Any] = json.loads((FIXTURES / "acpls_elicitation.json").read_text())["params"][
    "requestedSchema"
]
GOOD: dict[str, Any] = json.loads((FIXTURES / "acpls_elicitation.result.json").read_text())[
    "result"
]["content"]
CHOICES = {
    "type": "object",
    "properties": {
        "color": {"type": "string", "title": "Colour", "enum": ["red", "green"]},
        "size": {
            "type": "string",
            "oneOf": [{"const": "s", "title": "Small"}, {"const": "l", "title": "Large"}],
        },
        "ok": {"type": "boolean", "description": "Go ahead?"},
    },
    "required": ["color", "ok"],
}


def form_script(protocol: int, schema: dict[str, Any], *, then: list[Any] = ()) -> dict[str, Any]:  # type: ignore[assignment]
    params = {
        "sessionId": "$sessionId",
        "mode": "form",
        "message": "Tell me about you",
        "requestedSchema": schema,
    }
    return {
        "protocol": protocol,
        "on_prompt": [{"request": "elicitation/create", "params": params}, *then],
    }


def url_script(protocol: int, *, then: list[Any] = (), wait: bool = True) -> dict[str, Any]:  # type: ignore[assignment]
    params = {
        "sessionId": "$sessionId",
        "mode": "url",
        "message": "Sign in to the MCP server",
        "elicitationId": "el-1",
        "url": "https://example.org/sign-in",
    }
    step = {"request": "elicitation/create", "params": params, "wait": wait}
    return {"protocol": protocol, "on_prompt": [step, *then]}


def answers(log: Path, protocol: int) -> list[dict[str, Any]]:
    """The elicitation/create results acpls sent, each checked against the official schema."""
    out = []
    for message in agent_log(log):
        result = message.get("result")
        if "method" not in message and isinstance(result, dict) and "action" in result:
            validate_client_message(protocol, message, method="elicitation/create")
            out.append(result)
    return out


async def until(condition: Callable[[], Any], limit: float = 20) -> None:
    """Wait for something the editor or agent does (bounded; no fixed sleeps in assertions)."""
    async with asyncio.timeout(limit):
        while not condition():  # noqa: ASYNC110 - the agent's log file has no event to await
            await asyncio.sleep(0.02)


def ask_with(client: Any, answer: Callable[[dict[str, Any]], Any]) -> list[dict[str, Any]]:
    """Answer acpls/elicitation with `answer(params)`; returns the list of questions asked."""
    asked: list[dict[str, Any]] = []
    client.questions_cancelled = []

    @client.feature("acpls/elicitation")
    async def on_question(params: Any) -> Any:
        asked.append(params)
        try:
            result = answer(params)
            if asyncio.iscoroutine(result):
                result = await result
        except asyncio.CancelledError:
            client.questions_cancelled.append(params)
            raise
        return result

    return asked


# -- custom mode ----------------------------------------------------------------------------------


@pytest.mark.parametrize("protocol", [1, 2])
async def test_custom_form_misfit_is_asked_again_then_accepted(
    client, workspace: Path, tmp_path: Path, protocol: int
):
    log = tmp_path / "agent.jsonl"
    misfit = {"name": "A", "email": "nope", "age": 5, "tags": [], "first-name": "Ann"}
    replies = iter([{"action": "accept", "content": misfit}, {"action": "accept", "content": GOOD}])
    asked = ask_with(client, lambda p: next(replies))
    await start(client, workspace, scripted(form_script(protocol, FORM), log))
    await command(client, "acpls.prompt", {"text": "ask me"})
    assert len(asked) == 2
    first, second = asked
    assert first["mode"] == "form" and first["message"] == "Tell me about you"
    assert first["requestedSchema"] == FORM
    assert isinstance(first["sessionId"], str)
    for problem in (
        "Name: must be at least 2 characters",
        "email: must be an email address",
        "Age: must be at least 18",
        "tags: choose at least 1",
    ):
        assert problem in second["message"]
    props = second["requestedSchema"]["properties"]
    assert props["name"]["default"] == "A"
    assert props["age"]["default"] == 5
    assert props["first-name"]["default"] == "Ann"
    assert answers(log, protocol) == [{"action": "accept", "content": GOOD}]


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ({"action": "decline"}, {"action": "decline"}),
        ({"action": "cancel"}, {"action": "cancel"}),
        (None, {"action": "cancel"}),
        ({"action": "maybe"}, {"action": "cancel"}),
    ],
)
async def test_custom_decline_and_cancel(client, workspace, tmp_path, reply, expected):
    log = tmp_path / "agent.jsonl"
    ask_with(client, lambda p: reply)
    await start(client, workspace, scripted(form_script(2, FORM), log))
    await command(client, "acpls.prompt", {"text": "ask me"})
    assert answers(log, 2) == [expected]


@pytest.mark.parametrize("protocol", [1, 2])
async def test_custom_url_question_completed_by_the_agent(
    client, workspace: Path, tmp_path: Path, protocol: int
):
    log = tmp_path / "agent.jsonl"
    asked_event = asyncio.Event()

    async def never(params: Any) -> Any:
        asked_event.set()
        await asyncio.Event().wait()

    asked = ask_with(client, never)
    complete = {"send": {"jsonrpc": "2.0", "method": "elicitation/complete",
                         "params": {"elicitationId": "el-1"}}}  # fmt: skip
    script = url_script(protocol, wait=False, then=[{"sleep": 0.5}, complete, {"sleep": 0.5}])
    await start(client, workspace, scripted(script, log))
    await command(client, "acpls.prompt", {"text": "sign in"})
    await until(lambda: answers(log, protocol))
    assert asked[0]["mode"] == "url"
    assert asked[0]["url"] == "https://example.org/sign-in"
    assert asked[0]["elicitationId"] == "el-1"
    assert "requestedSchema" not in asked[0]
    assert answers(log, protocol) == [{"action": "accept"}]
    done = notifications(client, "acpls/elicitationComplete")
    assert [d["elicitationId"] for d in done] == ["el-1"]
    assert done[0]["sessionId"] == asked[0]["sessionId"]
    await until(lambda: client.questions_cancelled)  # the editor's request was withdrawn


@pytest.mark.parametrize("protocol", [1, 2])
async def test_a_url_question_completed_after_the_user_answered_names_its_session(
    client, workspace: Path, tmp_path: Path, protocol: int
):
    """The user accepts (the browser opens); the agent's elicitation/complete comes later, when
    acpls holds no open question for it: the editor is still told which session it was."""
    log = tmp_path / "agent.jsonl"
    asked = ask_with(client, lambda p: {"action": "accept"})
    complete = {"send": {"jsonrpc": "2.0", "method": "elicitation/complete",
                         "params": {"elicitationId": "el-1"}}}  # fmt: skip
    script = url_script(protocol, then=[complete, {"sleep": 0.5}])
    await start(client, workspace, scripted(script, log))
    await command(client, "acpls.prompt", {"text": "sign in"})
    assert answers(log, protocol) == [{"action": "accept"}]
    await until(lambda: notifications(client, "acpls/elicitationComplete"))
    done = notifications(client, "acpls/elicitationComplete")
    assert done == [{"elicitationId": "el-1", "sessionId": asked[0]["sessionId"]}]


async def test_custom_url_accept(client, workspace: Path, tmp_path: Path):
    log = tmp_path / "agent.jsonl"
    ask_with(client, lambda p: {"action": "accept"})
    await start(client, workspace, scripted(url_script(1), log))
    await command(client, "acpls.prompt", {"text": "sign in"})
    assert answers(log, 1) == [{"action": "accept"}]


@pytest.mark.parametrize("protocol", [1, 2])
async def test_cancelled_turn_withdraws_the_question(
    client, workspace: Path, tmp_path: Path, protocol: int
):
    log = tmp_path / "agent.jsonl"
    asked_event = asyncio.Event()

    async def never(params: Any) -> Any:
        asked_event.set()
        await asyncio.Event().wait()

    ask_with(client, never)
    script = form_script(protocol, FORM, then=[{"wait_cancel": True}])
    await start(client, workspace, scripted(script, log))
    prompt = asyncio.ensure_future(command(client, "acpls.prompt", {"text": "ask me"}))
    await asyncio.wait_for(asked_event.wait(), 20)
    await command(client, "acpls.cancel", {})
    result = await asyncio.wait_for(prompt, 20)
    assert result["stopReason"] == "cancelled"
    assert answers(log, protocol) == [{"action": "cancel"}]
    await until(lambda: client.questions_cancelled)


async def test_agent_cancel_request_withdraws_the_question(client, workspace: Path, tmp_path: Path):
    log = tmp_path / "agent.jsonl"
    asked_event = asyncio.Event()

    async def never(params: Any) -> Any:
        asked_event.set()
        await asyncio.Event().wait()

    ask_with(client, never)
    params = {"sessionId": "$sessionId", "mode": "form", "message": "?", "requestedSchema": FORM}
    withdraw = {"send": {"jsonrpc": "2.0", "method": "$/cancel_request",
                         "params": {"requestId": 1}}}  # fmt: skip
    script = {
        "protocol": 1,
        "on_prompt": [
            {"request": "elicitation/create", "params": params, "wait": False},
            {"sleep": 1},
            withdraw,
            {"sleep": 1},
        ],
    }
    await start(client, workspace, scripted(script, log))
    await command(client, "acpls.prompt", {"text": "ask me"})
    await until(lambda: answers(log, 1))
    assert asked_event.is_set()
    assert answers(log, 1) == [{"action": "cancel"}]
    await until(lambda: client.questions_cancelled)


async def test_capability_offered_in_both_versions(client, workspace: Path, tmp_path: Path):
    log = tmp_path / "agent.jsonl"
    await start(client, workspace, scripted({"protocol": 1}, log))
    await command(client, "acpls.newSession", {})
    init = next(m for m in agent_log(log) if m.get("method") == "initialize")["params"]
    assert init["clientCapabilities"]["elicitation"] == {"form": {}, "url": {}}
    assert init["capabilities"]["elicitation"] == {"form": {}, "url": {}}


async def test_bad_question_gets_invalid_params(client, workspace: Path, tmp_path: Path):
    log = tmp_path / "agent.jsonl"
    bad = {"sessionId": "$sessionId", "mode": "form", "message": "?"}  # no requestedSchema
    script = {"protocol": 1, "on_prompt": [{"request": "elicitation/create", "params": bad}]}
    await start(client, workspace, scripted(script, log))
    await command(client, "acpls.prompt", {"text": "ask me"})
    errors = [m["error"] for m in agent_log(log) if "error" in m and "method" not in m]
    assert errors and errors[0]["code"] == -32602
    assert "requestedSchema" in errors[0]["message"]


# -- generic mode ---------------------------------------------------------------------------------


@pytest.mark.parametrize("protocol", [1, 2])
async def test_generic_choices_one_field_at_a_time(
    client, workspace: Path, tmp_path: Path, protocol: int
):
    log = tmp_path / "agent.jsonl"
    picks = iter(["green", "Skip", "No"])
    client.answer_message_request = lambda p: types.MessageActionItem(title=next(picks))
    await start(client, workspace, scripted(form_script(protocol, CHOICES), log), custom=False)
    await command(client, "acpls.prompt", {"text": "ask me"})
    asked = client.message_requests
    assert [[a.title for a in r.actions] for r in asked] == [
        ["red", "green"],
        ["Small", "Large", "Skip"],
        ["Yes", "No"],
    ]
    assert "Colour" in asked[0].message and "(1/3)" in asked[0].message
    assert "Go ahead?" in asked[2].message
    assert answers(log, protocol) == [
        {"action": "accept", "content": {"color": "green", "ok": False}}
    ]


async def test_generic_choice_dismissed_cancels(client, workspace: Path, tmp_path: Path):
    log = tmp_path / "agent.jsonl"
    await start(client, workspace, scripted(form_script(1, CHOICES), log), custom=False)
    await command(client, "acpls.prompt", {"text": "ask me"})
    assert len(client.message_requests) == 1
    assert answers(log, 1) == [{"action": "cancel"}]


def _form_documents(client: Any) -> list[types.ShowDocumentParams]:
    return [d for d in client.shown_documents if d.uri.endswith(".json")]


def _open_doc(client: Any, uri: str, text: str) -> None:
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=uri, language_id="json", version=1, text=text)
        )
    )


@pytest.mark.parametrize("protocol", [1, 2])
async def test_generic_form_file_submitted_on_save(
    client, workspace: Path, tmp_path: Path, protocol: int
):
    log = tmp_path / "agent.jsonl"
    await start(client, workspace, scripted(form_script(protocol, FORM), log), custom=False)
    prompt = asyncio.ensure_future(command(client, "acpls.prompt", {"text": "ask me"}))
    await until(lambda: _form_documents(client))
    shown = _form_documents(client)[0]
    assert shown.take_focus is True
    path = Path(shown.uri.removeprefix("file://"))
    assert workspace not in path.parents
    text = path.read_text(encoding="utf-8")
    assert text.startswith("// Tell me about you\n")
    assert '  "first-name": null' in text
    assert '  "subscribe": false,' in text  # the default
    assert "  // Age: a whole number, required" in text
    assert "  // at least 18; at most 120" in text
    _open_doc(client, shown.uri, text)
    misfit = text.replace('"age": null', '"age": 7')
    client.text_document_did_save(
        types.DidSaveTextDocumentParams(
            text_document=types.TextDocumentIdentifier(uri=shown.uri), text=misfit
        )
    )
    await until(lambda: any("does not fit" in m.message for m in client.messages))
    problem = next(m.message for m in client.messages if "does not fit" in m.message)
    assert "Age: must be at least 18" in problem and "Name: a value is required" in problem
    assert not prompt.done() and path.exists()
    good = "// my answer\n" + json.dumps(GOOD, indent=2)
    path.write_text(good, encoding="utf-8")  # the editor saved it; this one sends no text
    client.text_document_did_save(
        types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=shown.uri))
    )
    await asyncio.wait_for(prompt, 20)
    assert answers(log, protocol) == [{"action": "accept", "content": GOOD}]
    assert not path.exists(), "the answered form file is removed"


async def test_generic_form_file_closed_unsaved_cancels(client, workspace: Path, tmp_path: Path):
    log = tmp_path / "agent.jsonl"
    await start(client, workspace, scripted(form_script(2, FORM), log), custom=False)
    prompt = asyncio.ensure_future(command(client, "acpls.prompt", {"text": "ask me"}))
    await until(lambda: _form_documents(client))
    uri = _form_documents(client)[0].uri
    _open_doc(client, uri, Path(uri.removeprefix("file://")).read_text())
    client.text_document_did_save(
        types.DidSaveTextDocumentParams(
            text_document=types.TextDocumentIdentifier(uri=uri), text="{ not json"
        )
    )
    await until(lambda: any("not valid JSON" in m.message for m in client.messages))
    client.text_document_did_close(
        types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )
    await asyncio.wait_for(prompt, 20)
    assert answers(log, 2) == [{"action": "cancel"}]
    assert not Path(uri.removeprefix("file://")).exists()


@pytest.mark.parametrize(("choice", "action"), [("Done", "accept"), ("Cancel", "cancel")])
async def test_generic_url_opened_externally(client, workspace, tmp_path, choice, action):
    log = tmp_path / "agent.jsonl"
    client.answer_message_request = lambda p: types.MessageActionItem(title=choice)
    await start(client, workspace, scripted(url_script(2), log), custom=False)
    await command(client, "acpls.prompt", {"text": "sign in"})
    external = [d for d in client.shown_documents if d.external]
    assert [d.uri for d in external] == ["https://example.org/sign-in"]
    (request,) = client.message_requests
    assert [a.title for a in request.actions] == ["Done", "Cancel"]
    assert "https://example.org/sign-in" in request.message
    assert answers(log, 2) == [{"action": action}]


async def test_generic_cancel_withdraws_the_message_request(client, workspace, tmp_path):
    log = tmp_path / "agent.jsonl"
    asked = asyncio.Event()

    async def never(params: Any) -> Any:
        asked.set()
        await asyncio.Event().wait()

    client.answer_message_request = never
    script = form_script(1, CHOICES, then=[{"wait_cancel": True}])
    await start(client, workspace, scripted(script, log), custom=False)
    prompt = asyncio.ensure_future(command(client, "acpls.prompt", {"text": "ask me"}))
    await asyncio.wait_for(asked.wait(), 20)
    await command(client, "acpls.cancel", {})
    await asyncio.wait_for(prompt, 20)
    assert answers(log, 1) == [{"action": "cancel"}]


async def test_agent_exit_withdraws_the_question(client, workspace: Path, tmp_path: Path):
    log = tmp_path / "agent.jsonl"
    asked_event = asyncio.Event()

    async def never(params: Any) -> Any:
        asked_event.set()
        await asyncio.Event().wait()

    ask_with(client, never)
    params = {"sessionId": "$sessionId", "mode": "form", "message": "?", "requestedSchema": FORM}
    script = {
        "protocol": 1,
        "on_prompt": [
            {"request": "elicitation/create", "params": params, "wait": False},
            {"sleep": 1},
            {"crash": 1},
        ],
    }
    await start(client, workspace, scripted(script, log))
    with pytest.raises(Exception, match=r"stopped|exited"):
        await command(client, "acpls.prompt", {"text": "ask me"})
    assert asked_event.is_set()
    await until(lambda: client.questions_cancelled)  # the editor's request was withdrawn
