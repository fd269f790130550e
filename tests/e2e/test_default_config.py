"""`defaultConfig`: per-agent values for any of a session's config options (model, effort, boolean
options), set with `session/set_config_option` after session/new, load, resume and fork, through
the real acpls; an option or value the agent does not offer, or a refusal, is shown to the user as
defaultMode's problems are."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pytest_lsp import LanguageClient

from tests.e2e.conftest import agent_log, as_dict, command, notifications, scripted, start
from tests.e2e.hostile_support import wait_until
from tests.schema import validate_client_message

MODEL = {
    "id": "model",
    "name": "Model",
    "type": "select",
    "currentValue": "fast",
    "options": [
        {"groupId": "small", "name": "Small", "options": [{"value": "fast", "name": "Fast"}]},
        {"groupId": "big", "name": "Big", "options": [{"value": "deep", "name": "Deep"}]},
    ],
}
THINKING = {"id": "thinking", "name": "Thinking", "type": "boolean", "currentValue": False}
EFFORT = {
    "id": "effort",
    "name": "Effort",
    "type": "select",
    "currentValue": "high",
    "options": [{"value": "low", "name": "Low"}, {"value": "high", "name": "High"}],
}
OPTIONS = [MODEL, THINKING, EFFORT]


def options_for(protocol: int) -> list[dict[str, Any]]:
    if protocol == 1:
        return OPTIONS
    return [{"configId" if k == "id" else k: v for k, v in o.items()} for o in OPTIONS]


def script(protocol: int) -> dict[str, Any]:
    session = {"configOptions": options_for(protocol)}
    caps: dict[str, Any] = {"fork": {}, "resume": {}}
    init = (
        {"agentCapabilities": {"loadSession": True, "sessionCapabilities": caps}}
        if protocol == 1
        else {"capabilities": {"session": caps}}
    )
    return {
        "protocol": protocol,
        "on_initialize": init,
        "on_new_session": {"sessionId": "s1", **session},
        "on_load": session,
        "on_resume": session,
        "on_fork": {"sessionId": "f1", **session},
        "on_set_config_option": {"configOptions": options_for(protocol)},
    }


def agent(spec: dict[str, Any], log: Path) -> dict[str, Any]:
    return {**scripted(spec, log), "name": "claude"}


def config_sets(log: Path, protocol: int) -> list[tuple[str, str, Any]]:
    out = []
    for message in agent_log(log):
        if message.get("method") == "session/set_config_option":
            validate_client_message(protocol, {"jsonrpc": "2.0", "id": 1, **message})
            params = message["params"]
            out.append((params["sessionId"], params["configId"], params["value"]))
    return out


def warnings(client: LanguageClient) -> list[str]:
    return [m.message for m in client.messages if m.type == types.MessageType.Warning]


def notices(client: LanguageClient) -> list[dict[str, Any]]:
    updates = [as_dict(p)["update"] for p in notifications(client, "acpls/sessionUpdate")]
    return [u for u in updates if u.get("sessionUpdate") == "notice"]


DEFAULTS = {"claude": {"model": "deep", "thinking": True, "effort": "high"}, "gemini": {"x": "y"}}


@pytest.mark.parametrize("protocol", [1, 2])
async def test_defaults_are_set_after_new_load_resume_and_fork(
    client: LanguageClient, workspace: Path, tmp_path: Path, protocol: int
):
    log = tmp_path / "agent.jsonl"
    await start(client, workspace, agent(script(protocol), log), defaultConfig=DEFAULTS)
    await command(client, "acpls.newSession", {})
    # `effort` is already `high`: nothing sent for it; the other agent's defaults are not sent.
    wanted = [("model", "deep"), ("thinking", True)]
    assert config_sets(log, protocol) == [("s1", k, v) for k, v in wanted]
    await command(client, "acpls.forkSession", {"sessionId": "s1"})
    await command(client, "acpls.resumeSession", {"sessionId": "old-r"})
    await command(client, "acpls.loadSession", {"sessionId": "old-l"})
    sessions = ["s1", "f1", "old-r", "old-l"]
    assert config_sets(log, protocol) == [(s, k, v) for s in sessions for k, v in wanted]
    assert warnings(client) == [] and notices(client) == []


async def test_an_option_or_value_the_agent_lacks_and_a_refusal_are_shown(
    client: LanguageClient, workspace: Path, tmp_path: Path
):
    log = tmp_path / "agent.jsonl"
    spec = script(1)
    spec["on_set_config_option"] = [{"respond_error": {"code": -32602, "message": "no thanks"}}]
    defaults = {"claude": {"model": "huge", "effort": True, "speed": "max", "thinking": True}}
    await start(client, workspace, agent(spec, log), defaultConfig=defaults)
    await command(client, "acpls.newSession", {})
    assert config_sets(log, 1) == [("s1", "thinking", True)]  # the only one that fits
    shown = warnings(client)
    assert len(shown) == 4, shown
    assert any("model: 'huge' is not one of its values (fast, deep)" in w for w in shown), shown
    assert any("effort: takes one of its values, not True" in w for w in shown), shown
    assert any("speed: the agent offers no such option (it offers effort, model, thinking)" in w
               for w in shown), shown  # fmt: skip
    assert any("thinking:" in w and "no thanks" in w for w in shown), shown
    assert await wait_until(lambda: len(notices(client)) == 4, 20), notices(client)
    assert [n["title"] for n in notices(client)] == ["claude: defaultConfig not set"] * 4


async def test_a_wrong_setting_is_reported_and_keeps_the_old_defaults(
    client: LanguageClient, workspace: Path, tmp_path: Path
):
    log = tmp_path / "agent.jsonl"
    await start(client, workspace, agent(script(1), log), defaultConfig=DEFAULTS)
    client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"acpls": {"defaultConfig": {"claude": 3}}})
    )
    assert await wait_until(lambda: any("acpls.defaultConfig" in w for w in warnings(client)), 20)
    await command(client, "acpls.newSession", {})
    assert config_sets(log, 1) == [("s1", "model", "deep"), ("s1", "thinking", True)]
