"""What acpls sends, built with acpls.acp.converter, against the official ACP v1 and v2 schemas."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from acpls.acp.converter import (
    initialize_params,
    permission_cancelled,
    permission_selected,
    set_config_option_params,
    unstructure,
)

# The repo root is not on sys.path under plain `pytest` (tests/ is not a package).
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from tests.schema import (
    UnknownMethodError,
    load_schema,
    method_definition,
    validate_client_message,
    validate_definition,
)


def test_every_vendored_schema_is_in_the_repository() -> None:
    """The four schemas are part of the repository; none may go missing (no test skips for it)."""
    for version in (1, 2):
        for unstable in (False, True):
            schema = load_schema(version, unstable)
            assert schema["$defs"], (version, unstable)


def request(method: str, params: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}


def response(result: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": 1, "result": result}


INIT_KW: dict[str, Any] = {
    "fs": True,
    "terminal": True,
    "terminal_output_meta": True,
    "client_name": "acpls",
    "client_version": "0.1.0",
}


# --------------------------------------------------------------------------- initialize


def test_initialize_v1_is_valid_v1_and_has_only_v1_fields() -> None:
    params = initialize_params(1, **INIT_KW)
    validate_client_message(1, request("initialize", params))
    assert params["protocolVersion"] == 1
    assert params["clientCapabilities"]["fs"] == {"readTextFile": True, "writeTextFile": True}
    assert params["clientCapabilities"]["terminal"] is True
    assert params["clientCapabilities"]["_meta"] == {"terminal_output": True}
    assert params["clientInfo"] == {"name": "acpls", "version": "0.1.0"}
    assert params["clientCapabilities"]["elicitation"] == {"form": {}, "url": {}}
    assert "capabilities" not in params and "info" not in params


def test_initialize_v2_is_valid_v2_and_has_only_v2_fields() -> None:
    params = initialize_params(2, **INIT_KW)
    validate_client_message(2, request("initialize", params))
    assert params == {
        "protocolVersion": 2,
        "capabilities": {"elicitation": {"form": {}, "url": {}}},
        "info": {"name": "acpls", "version": "0.1.0"},
    }


def test_initialize_auto_asks_for_2_and_is_valid_against_both_versions() -> None:
    params = initialize_params("auto", **INIT_KW, client_title="acpls LSP")
    assert params["protocolVersion"] == 2
    assert params["info"] == {"name": "acpls", "version": "0.1.0", "title": "acpls LSP"}
    assert params["clientInfo"] == params["info"]
    assert params["clientCapabilities"]["terminal"] is True
    validate_client_message(2, request("initialize", params))
    validate_client_message(1, request("initialize", params))


def test_v2_initialize_request_leaves_extra_properties_open() -> None:
    # Why "auto" can carry the v1 fields: the v2 definition does not forbid other keys.
    definition = load_schema(2)["$defs"]["InitializeRequest"]
    assert definition.get("additionalProperties", True) is not False
    assert "unevaluatedProperties" not in definition


@pytest.mark.parametrize("mode", ["auto", 1, 2])
def test_initialize_without_optional_capabilities(mode: Any) -> None:
    params = initialize_params(
        mode,
        fs=False,
        terminal=False,
        terminal_output_meta=False,
        client_name="acpls",
        client_version="0",
    )
    for version in (1, 2) if mode == "auto" else (mode,):
        validate_client_message(version, request("initialize", params))
    if mode != 2:
        assert "_meta" not in params["clientCapabilities"]


def test_initialize_rejects_unknown_mode() -> None:
    with pytest.raises(ValueError, match="protocol version mode"):
        initialize_params(3, **INIT_KW)  # type: ignore[arg-type]


def test_validator_catches_a_broken_initialize() -> None:
    params = initialize_params(2, **INIT_KW)
    del params["info"]
    with pytest.raises(jsonschema.ValidationError):
        validate_client_message(2, request("initialize", params))
    with pytest.raises(jsonschema.ValidationError):
        validate_client_message(1, request("initialize", {"protocolVersion": "one"}))


# --------------------------------------------------------------------------- other requests

CWD = "/home/user/project"


def both(method: str, model: Any, versions: tuple[int, ...] = (1, 2)) -> None:
    payload = unstructure(model)
    for version in versions:
        validate_client_message(version, request(method, payload))


class _Conn:
    """What `Hub.lifecycle_params` asks of the agent connection."""

    def __init__(self, additional_directories: bool) -> None:
        self.additional_directories = additional_directories

    def session_capability(self, name: str) -> bool:
        return name == "additionalDirectories" and self.additional_directories


def test_session_lifecycle_params_acpls_builds_are_valid(tmp_path: Path) -> None:
    """session/new, load and resume carry `Hub.lifecycle_params` (with the editor's other
    folders as additionalDirectories where the agent takes them), plus the session id."""
    from acpls.core.hub import Hub
    from tests.fuzz.frame_fuzzer import FakeEditor

    class TwoFolders(FakeEditor):
        @property
        def workspace_roots(self) -> list[str]:
            return [CWD, "/tmp/x"]

    hub = Hub(TwoFolders(CWD), environ={}, state_dir=tmp_path / "state")
    plain = hub.lifecycle_params(_Conn(False), CWD)  # type: ignore[arg-type]
    wider = hub.lifecycle_params(_Conn(True), CWD)  # type: ignore[arg-type]
    assert plain == {"cwd": CWD, "mcpServers": []}
    assert wider["additionalDirectories"] == ["/tmp/x"]
    for params in (plain, wider):
        for version in (1, 2):
            validate_client_message(version, request("session/new", params))
        validate_client_message(1, request("session/load", {**params, "sessionId": "s1"}))
    validate_client_message(2, request("session/resume", {**plain, "sessionId": "s1"}))


def test_set_config_option_is_tagged_per_version() -> None:
    v1_id = set_config_option_params(1, "s1", "model", "fast")
    v2_id = set_config_option_params(2, "s1", "model", "fast")
    v1_bool = set_config_option_params(1, "s1", "think", True)
    v2_bool = set_config_option_params(2, "s1", "think", False)
    assert "type" not in v1_id and v2_id["type"] == "id"
    assert v1_bool["type"] == v2_bool["type"] == "boolean"
    validate_client_message(1, request("session/set_config_option", v1_id))
    validate_client_message(1, request("session/set_config_option", v1_bool))
    validate_client_message(2, request("session/set_config_option", v2_id))
    validate_client_message(2, request("session/set_config_option", v2_bool))


def test_methods_a_version_lacks_are_refused() -> None:
    with pytest.raises(UnknownMethodError):
        validate_client_message(2, request("session/set_mode", {"sessionId": "s", "modeId": "a"}))
    with pytest.raises(UnknownMethodError):
        validate_client_message(2, request("session/load", {"sessionId": "s", "cwd": CWD}))
    assert method_definition(1, "session/cancel", "Notification") == "CancelNotification"
    assert method_definition(2, "session/cancel", "Notification") == "CancelSessionNotification"


# --------------------------------------------------------------------------- responses


def answer(version: int, method: str, model_or_dict: Any) -> None:
    result = model_or_dict if isinstance(model_or_dict, dict) else unstructure(model_or_dict)
    validate_client_message(version, response(result), method=method)


def test_permission_responses_are_valid_in_both_versions() -> None:
    for version in (1, 2):
        answer(version, "session/request_permission", permission_selected("allow"))
        answer(version, "session/request_permission", permission_cancelled())
    assert permission_selected("a1") == {"outcome": {"outcome": "selected", "optionId": "a1"}}
    assert permission_cancelled() == {"outcome": {"outcome": "cancelled"}}


def test_v1_client_method_responses_are_valid() -> None:
    """The answers agent_requests.py and services/terminals.py build."""
    from acpls.services.terminals import ExitStatus, OutputResult

    answer(1, "fs/read_text_file", {"content": "x\n"})
    for empty in ("fs/write_text_file", "terminal/kill", "terminal/release"):
        answer(1, empty, {})
    answer(1, "terminal/create", {"terminalId": "t1"})
    answer(1, "terminal/output", OutputResult("ok", False, None).to_acp())
    answer(1, "terminal/output", OutputResult("", True, ExitStatus(1, None)).to_acp())
    answer(1, "terminal/wait_for_exit", ExitStatus(0, None).to_acp())
    answer(1, "terminal/wait_for_exit", ExitStatus(None, "SIGKILL").to_acp())


def test_question_answers_are_valid_in_both_versions() -> None:
    """The answers translate/elicitation.py builds for `elicitation/create` (v1: unstable)."""
    from acpls.translate.elicitation import answer as question_answer

    content = {"name": "Ada", "age": 36, "ok": True, "ratio": 0.5, "tags": ["a", "b"]}
    answers = [question_answer("accept", content), question_answer("accept")]
    answers += [question_answer(action) for action in ("decline", "cancel")]
    for version, unstable in ((1, True), (2, False)):
        for result in answers:
            validate_client_message(
                version, response(result), method="elicitation/create", unstable=unstable
            )
    assert answers[0] == {"action": "accept", "content": content}
    assert question_answer("decline", content) == {"action": "decline"}  # content only on accept


def test_validator_catches_a_wrong_result() -> None:
    with pytest.raises(jsonschema.ValidationError):
        answer(1, "terminal/output", {"output": "x"})  # `truncated` is required
    with pytest.raises(jsonschema.ValidationError):
        validate_definition(1, "ReadTextFileResponse", {"content": 5})
