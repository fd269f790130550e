"""`session/request_permission` and `session/set_config_option` go through the ACP models: what
does not fit is a -32602 naming the field, and keys acpls does not know reach the editor as the
agent sent them (real acpls, scripted agent, custom-mode client)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pygls.exceptions import JsonRpcException

from tests.e2e.conftest import agent_log, command, scripted, start

TOOL_CALL = {
    "toolCallId": "edit-1",
    "title": "Edit calc.py",
    "kind": "edit",
    "status": "pending",
    "futureField": {"kept": True},
}
GOOD_OPTION = {
    "optionId": "allow",
    "name": "Allow",
    "kind": "allow_once",
    "_meta": {"vendor": 1},
    "shortcut": "a",
}


def ask(params: dict[str, Any]) -> dict[str, Any]:
    return {"request": "session/request_permission", "params": params}


def errors(log: Path) -> list[dict[str, Any]]:
    return [m["error"] for m in agent_log(log) if "error" in m and "method" not in m]


def option_dict(value: Any) -> dict[str, Any]:
    """An option as the editor received it (pygls hands the test client namespaces)."""
    return value if isinstance(value, dict) else vars(value)


@pytest.mark.parametrize("protocol", [1, 2])
async def test_permission_requests_are_decoded_losslessly_and_bad_ones_name_the_field(
    client, workspace: Path, tmp_path: Path, protocol: int
):
    log = tmp_path / "agent.jsonl"
    about = (
        {"toolCall": TOOL_CALL}
        if protocol == 1
        else {"title": "Edit calc.py", "subject": {"type": "tool_call", "toolCall": TOOL_CALL}}
    )
    malformed_call = {**TOOL_CALL, "toolCallId": 7}
    bad_about = (
        {"toolCall": malformed_call}
        if protocol == 1
        else {"title": "x", "subject": {"type": "tool_call", "toolCall": malformed_call}}
    )
    steps = [
        ask({"sessionId": "$sessionId", **about, "options": [GOOD_OPTION]}),
        ask({"sessionId": "$sessionId", **about, "options": [{"optionId": "b", "name": "B"}]}),
        ask({"sessionId": "$sessionId", **about, "options": "allow"}),
        ask({"sessionId": "$sessionId", **bad_about, "options": [GOOD_OPTION]}),
        ask({"sessionId": "$sessionId", **about, "options": []}),
    ]
    client.answer_permission = lambda p: {"optionId": "allow"}
    await start(client, workspace, scripted({"protocol": protocol, "on_prompt": steps}, log))
    await command(client, "acpls.prompt", {"text": "go"})

    [asked] = client.permission_requests  # only the request that fits reaches the editor
    shown = asked["options"] if isinstance(asked, dict) else asked.options
    assert [option_dict(o) for o in shown] == [GOOD_OPTION]
    call = asked["toolCall"] if isinstance(asked, dict) else asked.toolCall
    call = call if isinstance(call, dict) else vars(call)
    futures = call["futureField"]
    assert (futures if isinstance(futures, dict) else vars(futures)) == {"kept": True}

    answers = [m["result"] for m in agent_log(log) if "outcome" in (m.get("result") or {})]
    assert answers == [{"outcome": {"outcome": "selected", "optionId": "allow"}}]
    refused = errors(log)
    assert [e["code"] for e in refused] == [-32602] * 4
    assert "options[0].kind" in refused[0]["message"]
    assert "RequestPermissionRequest.options" in refused[1]["message"]
    assert "toolCallId" in refused[2]["message"]
    assert "options: at least one option" in refused[3]["message"]


@pytest.mark.parametrize("fits", [True, False])
async def test_set_config_option_decodes_the_answer_and_checks_the_value(
    client, workspace: Path, tmp_path: Path, fits: bool
):
    log = tmp_path / "agent.jsonl"
    option = {
        "id": "model", "name": "Model", "type": "select", "currentValue": "fast",
        "options": [{"value": "fast", "name": "Fast"}, {"value": "smart", "name": "Smart"}],
        "futureKey": [1, 2],
    }  # fmt: skip
    chosen = {**option, "currentValue": "smart"}
    answer = {"configOptions": [chosen], "_meta": {"v": 1}} if fits else {"configOptions": "x"}
    script = {
        "protocol": 1,
        "on_new_session": {"configOptions": [option]},
        "on_set_config_option": [{"respond": answer}],
    }
    await start(client, workspace, scripted(script, log))
    await command(client, "acpls.newSession", {})
    result = await command(client, "acpls.setConfigOption", {"configId": "model", "value": "smart"})
    # The agent's objects, unknown keys and all; an answer that does not fit is read as no list
    # (ACP reads configOptions default-on-error: the option was set) and nothing broken is sent.
    assert result["configOptions"] == ([chosen] if fits else [])
    with pytest.raises(JsonRpcException) as refused:
        await command(client, "acpls.setConfigOption", {"configId": "model", "value": 5})
    assert "value must be a string" in str(refused.value)
    sent = [m["params"] for m in agent_log(log) if m.get("method") == "session/set_config_option"]
    assert sent == [{"sessionId": sent[0]["sessionId"], "configId": "model", "value": "smart"}]
