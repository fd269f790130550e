"""ACP models and converter: exact round trips, patch semantics, open enums, raw unknowns."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from acpls.acp import models as m
from acpls.acp.converter import (
    converter,
    permission_tool_call,
    structure,
    unstructure,
    wire_name,
)
from acpls.acp.models import OMITTED, AcpModelError, Omitted, RawItem


def wire(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def round_trip(payload: dict[str, Any], cls: Any) -> Any:
    model = structure(payload, cls)
    back = unstructure(model)
    assert wire(back) == wire(payload), "round trip must be byte-exact"
    return model


# --------------------------------------------------------------------------- sentinel


def test_omitted_is_a_falsy_singleton() -> None:
    assert OMITTED is Omitted.OMITTED
    assert not OMITTED
    assert repr(OMITTED) == "OMITTED"
    assert OMITTED is not None


def test_wire_names() -> None:
    assert wire_name("tool_call_id") == "toolCallId"
    assert wire_name("meta") == "_meta"
    assert wire_name("session_update") == "sessionUpdate"
    assert wire_name("type") == "type"


# --------------------------------------------------------------------------- patch fields

PATCH_FIELDS: dict[str, Any] = {
    "title": "Run tests",
    "name": "bash",
    "kind": "execute",
    "status": "in_progress",
    "content": [{"type": "content", "content": {"type": "text", "text": "ok"}}],
    "locations": [{"path": "/ws/a.py", "line": 3}],
    "rawInput": {"command": "pytest"},
    "rawOutput": {"exit": 0},
    "capabilities": {"cancel": {}},
    "_meta": {"x": 1},
}

ATTRIBUTE = {
    "title": "title",
    "name": "name",
    "kind": "kind",
    "status": "status",
    "content": "content",
    "locations": "locations",
    "rawInput": "raw_input",
    "rawOutput": "raw_output",
    "capabilities": "capabilities",
    "_meta": "meta",
}


@pytest.mark.parametrize("field", list(PATCH_FIELDS))
def test_tool_call_update_patch_field_omitted(field: str) -> None:
    model = round_trip({"sessionUpdate": "tool_call_update", "toolCallId": "c"}, m.ToolCallUpdate)
    assert getattr(model, ATTRIBUTE[field]) is OMITTED


@pytest.mark.parametrize("field", list(PATCH_FIELDS))
def test_tool_call_update_patch_field_null(field: str) -> None:
    payload = {"sessionUpdate": "tool_call_update", "toolCallId": "c", field: None}
    model = round_trip(payload, m.ToolCallUpdate)
    assert getattr(model, ATTRIBUTE[field]) is None


@pytest.mark.parametrize("field", list(PATCH_FIELDS))
def test_tool_call_update_patch_field_value(field: str) -> None:
    payload = {"sessionUpdate": "tool_call_update", "toolCallId": "c", field: PATCH_FIELDS[field]}
    model = round_trip(payload, m.ToolCallUpdate)
    value = getattr(model, ATTRIBUTE[field])
    assert value is not OMITTED and value is not None


def test_every_patch_field_at_once_round_trips_in_schema_order() -> None:
    payload = {"sessionUpdate": "tool_call_update", "toolCallId": "c", **PATCH_FIELDS}
    model = round_trip(payload, m.ToolCallUpdate)
    assert isinstance(model.content, list)
    assert isinstance(model.content[0], m.ContentToolCallContent)
    assert model.locations == [m.ToolCallLocation(path="/ws/a.py", line=3)]


@pytest.mark.parametrize(
    ("cls", "base", "fields"),
    [
        (
            m.SessionInfoUpdate,
            {"sessionUpdate": "session_info_update"},
            {"title": "Fix the build", "updatedAt": "2026-11-30T06:00:00Z", "_meta": {}},
        ),
        (
            m.MessageUpsert,
            {"sessionUpdate": "agent_message", "messageId": "m1"},
            {"content": [{"type": "text", "text": "hi"}], "_meta": {"a": None}},
        ),
    ],
)
def test_other_upserts_keep_omitted_null_and_value_apart(
    cls: Any, base: dict[str, Any], fields: dict[str, Any]
) -> None:
    assert unstructure(structure(base, cls)) == base
    for key, value in fields.items():
        round_trip({**base, key: None}, cls)
        round_trip({**base, key: value}, cls)
    round_trip({**base, **fields}, cls)


def test_constructed_models_omit_what_was_not_set() -> None:
    update = m.ToolCallUpdate(tool_call_id="c", status="completed", title=None)
    assert unstructure(update) == {"toolCallId": "c", "title": None, "status": "completed"}


# --------------------------------------------------------------------------- open enums


@pytest.mark.parametrize("value", ["_acme_review", "quantum", "paused", "cancelled"])
def test_unknown_and_custom_enum_values_are_kept(value: str) -> None:
    payload = {"sessionUpdate": "tool_call_update", "toolCallId": "c", "kind": value}
    payload["status"] = value
    model = round_trip(payload, m.ToolCallUpdate)
    assert model.kind == model.status == value
    option = round_trip({"optionId": "o", "name": "Maybe", "kind": value}, m.PermissionOption)
    assert option.kind == value


def test_enum_helpers() -> None:
    assert m.ToolKind.is_known("read") and not m.ToolKind.is_known("_mine")
    assert m.ToolCallStatus.is_known("paused")


# --------------------------------------------------------------------------- unknowns kept raw


def test_unknown_content_items_and_blocks_are_kept_raw() -> None:
    payload = {
        "sessionUpdate": "tool_call_update",
        "toolCallId": "c",
        "content": [
            {"type": "_acme_chart", "series": [1, 2, 3]},
            {"type": "content", "content": {"type": "hologram", "depth": 3}},
            {"type": "diff", "path": "/a", "oldText": None, "newText": "x"},
            {"type": "diff", "changes": [{"operation": "_teleport", "path": "/b"}]},
            {"type": "terminal", "terminalId": "t9"},
        ],
    }
    model = round_trip(payload, m.ToolCallUpdate)
    assert isinstance(model.content, list)
    first, second, third, fourth, fifth = model.content
    assert first == RawItem({"type": "_acme_chart", "series": [1, 2, 3]})
    assert isinstance(second, m.ContentToolCallContent)
    assert isinstance(second.content, RawItem) and second.content.type == "hologram"
    assert isinstance(third, m.DiffV1) and third.old_text is None
    assert isinstance(fourth, m.DiffV2) and fourth.patch is OMITTED
    assert isinstance(fifth, m.TerminalToolCallContent) and fifth.terminal_id == "t9"


def test_unknown_permission_outcome_is_kept_raw() -> None:
    outcome = {"outcome": {"outcome": "_deferred", "until": 3}}
    assert isinstance(round_trip(outcome, m.RequestPermissionResponse).outcome, RawItem)


def test_unknown_keys_of_known_objects_are_written_back() -> None:
    payload = {
        "sessionUpdate": "tool_call_update",
        "toolCallId": "c",
        "status": "completed",
        "parentToolCallId": "c0",
        "locations": [{"path": "/a", "column": 7}],
    }
    model = round_trip(payload, m.ToolCallUpdate)
    assert model.extra == {"parentToolCallId": "c0"}
    assert isinstance(model.locations, list)
    assert model.locations[0].extra == {"column": 7}


ODD_META = {"zed.dev": {"terminal": True}, "_x": [1, {"y": None}], "class": "k", "": 0}


def test_meta_with_odd_keys_round_trips_byte_for_byte() -> None:
    payloads: list[tuple[dict[str, Any], Any]] = [
        (
            {"sessionUpdate": "tool_call_update", "toolCallId": "c", "_meta": ODD_META},
            m.ToolCallUpdate,
        ),
        ({"type": "text", "text": "x", "_meta": ODD_META}, m.ContentBlock),
        ({"sessionId": "s", "options": [], "_meta": ODD_META}, m.RequestPermissionRequest),
        ({"name": "agent", "version": "1", "_meta": ODD_META}, m.Implementation),
    ]
    for payload, cls in payloads:
        model = structure(payload, cls)
        assert model.meta is payload["_meta"]  # kept raw, not copied or re-keyed
        assert wire(unstructure(model)) == wire(payload)


def test_content_blocks_of_every_type_round_trip() -> None:
    blocks = [
        {"type": "text", "text": "hi", "annotations": {"priority": 0.5}},
        {"type": "image", "data": "aGk=", "mimeType": "image/png", "uri": None},
        {"type": "audio", "data": "aGk=", "mimeType": "audio/wav"},
        {"type": "resource_link", "name": "a", "uri": "file:///a", "size": 3},
        {"type": "resource", "resource": {"uri": "file:///a", "text": "x", "mimeType": None}},
        {"type": "resource", "resource": {"uri": "file:///b", "blob": "aGk="}},
        {"type": "resource", "resource": {"uri": "file:///c", "_future": 1}},
    ]
    prompt = [round_trip(block, m.ContentBlock) for block in blocks]
    kinds = [type(block).__name__ for block in prompt]
    assert kinds == [
        "TextContent",
        "ImageContent",
        "AudioContent",
        "ResourceLink",
        "EmbeddedResource",
        "EmbeddedResource",
        "EmbeddedResource",
    ]
    last = prompt[-1]
    assert isinstance(last, m.EmbeddedResource) and isinstance(last.resource, RawItem)


# --------------------------------------------------------------------------- received messages


def test_permission_requests_of_both_versions() -> None:
    options = [
        {"optionId": "a", "name": "Allow", "kind": "allow_once"},
        {"optionId": "z", "name": "Sandbox", "kind": "_sandbox"},
    ]
    v1 = {"sessionId": "s", "toolCall": {"toolCallId": "c", "title": "Edit"}, "options": options}
    v2 = {
        "sessionId": "s",
        "title": "Run pytest?",
        "description": None,
        "subject": {"type": "command", "command": "pytest", "cwd": "/ws"},
        "options": options,
    }
    first = round_trip(v1, m.RequestPermissionRequest)
    assert isinstance(first.tool_call, m.ToolCallUpdate) and first.tool_call.title == "Edit"
    assert permission_tool_call(first) is first.tool_call
    second = round_trip(v2, m.RequestPermissionRequest)
    assert second.tool_call is OMITTED and second.subject == v2["subject"]
    assert [option.kind for option in second.options] == ["allow_once", "_sandbox"]
    assert permission_tool_call(second) is None  # a command subject
    subject = {"type": "tool_call", "toolCall": {"toolCallId": "c", "status": "pending"}}
    third = round_trip({**v2, "subject": subject}, m.RequestPermissionRequest)
    about = permission_tool_call(third)
    assert isinstance(about, m.ToolCallUpdate) and about.tool_call_id == "c"
    broken = round_trip({**v2, "subject": {"type": "tool_call"}}, m.RequestPermissionRequest)
    with pytest.raises(AcpModelError, match="ToolCallUpdate"):
        permission_tool_call(broken)


def test_client_method_requests() -> None:
    round_trip({"sessionId": "s", "path": "/a", "line": 10, "limit": None}, m.ReadTextFileRequest)
    round_trip({"sessionId": "s", "path": "/a", "content": "x"}, m.WriteTextFileRequest)
    create = round_trip(
        {
            "sessionId": "s",
            "command": "ls",
            "args": ["-l"],
            "env": [{"name": "A", "value": "1"}],
            "cwd": "/ws",
            "outputByteLimit": 1024,
        },
        m.CreateTerminalRequest,
    )
    assert create.env == [m.EnvVariable(name="A", value="1")]
    for cls in (
        m.TerminalOutputRequest,
        m.WaitForTerminalExitRequest,
        m.KillTerminalRequest,
        m.ReleaseTerminalRequest,
    ):
        round_trip({"sessionId": "s", "terminalId": "t"}, cls)


def test_every_modelled_session_update_type_round_trips() -> None:
    """The updates acpls structures (translate/session_updates.py); the others it checks by hand
    on the hot path and passes on as the agent sent them."""
    samples: list[tuple[dict[str, Any], Any]] = [
        ({"sessionUpdate": "user_message_chunk", "content": {"type": "text", "text": "q"}}, None),
        (
            {
                "sessionUpdate": "agent_message_chunk",
                "messageId": "m",
                "content": {"type": "text", "text": "a"},
            },
            None,
        ),
        ({"sessionUpdate": "agent_thought_chunk", "content": {"type": "text", "text": "t"}}, None),
        ({"sessionUpdate": "user_message", "messageId": "u", "content": None}, m.MessageUpsert),
        ({"sessionUpdate": "agent_thought", "messageId": "t"}, m.MessageUpsert),
        (
            {"sessionUpdate": "tool_call", "toolCallId": "c", "title": "Read", "kind": "read"},
            m.ToolCall,
        ),
        (
            {
                "sessionUpdate": "tool_call_content_chunk",
                "toolCallId": "c",
                "content": {"type": "terminal", "terminalId": "t"},
            },
            m.ToolCallContentChunk,
        ),
        ({"sessionUpdate": "session_info_update", "title": None}, m.SessionInfoUpdate),
        (
            {
                "sessionUpdate": "compaction_update",
                "compactionId": "k",
                "status": "completed",
                "summary": [],
            },
            m.CompactionUpdate,
        ),
        (
            {
                "sessionUpdate": "compaction_summary_chunk",
                "compactionId": "k",
                "content": {"type": "text", "text": "s"},
            },
            m.CompactionSummaryChunk,
        ),
    ]
    for sample, cls in samples:
        cls = cls or m.ContentChunk
        model = structure(sample, cls)
        assert type(model) is cls
        assert wire(unstructure(model)) == wire(sample)


# --------------------------------------------------------------------------- errors


@pytest.mark.parametrize(
    ("payload", "cls", "where"),
    [
        ({"toolCallId": 5}, m.ToolCallUpdate, "toolCallId"),
        (
            {"toolCallId": "c", "locations": [{"path": "/a", "line": "3"}]},
            m.ToolCallUpdate,
            "locations[0].line",
        ),
        ({"toolCallId": "c", "content": {"type": "diff"}}, m.ToolCallUpdate, "content"),
        (
            {"toolCallId": "c", "content": [{"type": "content"}]},
            m.ToolCallUpdate,
            "content[0].content",
        ),
        ({"sessionId": "s", "path": "/a"}, m.WriteTextFileRequest, "content"),
        ("text", m.Implementation, "Implementation"),
    ],
)
def test_structure_errors_name_the_field(payload: Any, cls: Any, where: str) -> None:
    with pytest.raises(AcpModelError) as caught:
        structure(payload, cls)
    assert where in str(caught.value)


def test_converter_structure_raises_acp_model_error_too() -> None:
    with pytest.raises(AcpModelError, match="ToolCallUpdate"):
        converter.structure({}, m.ToolCallUpdate)


def test_omitted_cannot_be_written_inside_a_list() -> None:
    with pytest.raises(AcpModelError):
        unstructure([OMITTED])


# --------------------------------------------------------------------------- property

json_scalars = st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.text(max_size=8)
json_values = st.recursive(
    json_scalars,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=8,
)
optional = st.one_of(st.just(OMITTED), st.none(), st.text(max_size=6))


@given(
    title=optional,
    name=optional,
    kind=optional,
    status=optional,
    raw_input=st.one_of(st.just(OMITTED), json_values),
    meta=st.one_of(
        st.just(OMITTED), st.none(), st.dictionaries(st.text(max_size=6), json_values, max_size=3)
    ),
)
def test_tool_call_update_round_trip_property(
    title: Any, name: Any, kind: Any, status: Any, raw_input: Any, meta: Any
) -> None:
    payload: dict[str, Any] = {"sessionUpdate": "tool_call_update", "toolCallId": "c"}
    for key, value in (
        ("name", name),
        ("title", title),
        ("kind", kind),
        ("status", status),
        ("rawInput", raw_input),
        ("_meta", meta),
    ):
        if value is not OMITTED:
            payload[key] = value
    assert wire(unstructure(structure(payload, m.ToolCallUpdate))) == wire(payload)
