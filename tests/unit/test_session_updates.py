"""The session-update normaliser (acpls.translate.session_updates) for ACP v1 and v2."""

from __future__ import annotations

import hashlib
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from acpls.acp.converter import structure
from acpls.acp.models import ContentChunk, ToolCall, ToolCallUpdate
from acpls.translate import session_updates
from acpls.translate.session_updates import Normalized, SessionUpdateNormalizer


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def chunk(kind: str, value: str, message_id: str | None = None) -> dict[str, Any]:
    update: dict[str, Any] = {"sessionUpdate": kind, "content": text(value)}
    if message_id is not None:
        update["messageId"] = message_id
    return update


def agent(value: str, message_id: str | None = None) -> dict[str, Any]:
    return chunk("agent_message_chunk", value, message_id)


def user(value: str, message_id: str | None = None) -> dict[str, Any]:
    return chunk("user_message_chunk", value, message_id)


def thought(value: str, message_id: str | None = None) -> dict[str, Any]:
    return chunk("agent_thought_chunk", value, message_id)


def tool_call(**fields: Any) -> dict[str, Any]:
    return {"sessionUpdate": "tool_call", "toolCallId": "c1", **fields}


def tool_update(tool_call_id: str = "c1", **fields: Any) -> dict[str, Any]:
    return {"sessionUpdate": "tool_call_update", "toolCallId": tool_call_id, **fields}


def feed(normalizer: SessionUpdateNormalizer, *updates: dict[str, Any]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for update in updates:
        out.extend(normalizer.normalize(update).editor_updates)
    return out


def ids(updates: list[dict[str, Any]]) -> list[str]:
    return [u["messageId"] for u in updates]


# --------------------------------------------------------------------------- messages


def test_v1_chunks_get_acpls_ids_per_message() -> None:
    n = SessionUpdateNormalizer(1)
    out = feed(n, agent("Hel"), agent("lo"), thought("hmm"), agent("Next"), agent("!"))
    assert ids(out) == ["acpls-1", "acpls-1", "acpls-2", "acpls-3", "acpls-3"]
    assert out[0] == {
        "sessionUpdate": "message_chunk",
        "role": "agent",
        "messageId": "acpls-1",
        "content": text("Hel"),
    }
    assert [u["role"] for u in out] == ["agent", "agent", "thought", "agent", "agent"]


def test_v1_any_other_update_starts_a_new_message() -> None:
    n = SessionUpdateNormalizer(1)
    first = feed(n, agent("a"))
    feed(n, {"sessionUpdate": "usage_update", "used": 1, "size": 10})
    second = feed(n, agent("b"))
    feed(n, {"sessionUpdate": "_unknown"})
    third = feed(n, agent("c"))
    n.begin_turn()
    fourth = feed(n, agent("d"))
    assert ids(first + second + third + fourth) == ["acpls-1", "acpls-2", "acpls-3", "acpls-4"]


def test_user_chunks_have_the_user_role() -> None:
    n = SessionUpdateNormalizer(1)
    (update,) = feed(n, user("question"))
    assert update["role"] == "user" and update["messageId"] == "acpls-1"


def test_chunks_with_message_ids_keep_them() -> None:
    n = SessionUpdateNormalizer(1)
    out = feed(n, agent("a", "m1"), agent("b"), agent("c", "m2"), thought("t"), agent("d"))
    assert ids(out) == ["m1", "m1", "m2", "acpls-1", "acpls-2"]


def test_v2_chunks_and_message_upserts() -> None:
    n = SessionUpdateNormalizer(2)
    out = feed(
        n,
        agent("Hel", "m1"),
        agent("lo", "m1"),
        {"sessionUpdate": "agent_message", "messageId": "m1", "content": [text("Hello!")]},
        {"sessionUpdate": "user_message", "messageId": "u1", "content": None},
        {"sessionUpdate": "agent_thought", "messageId": "t1", "_meta": {"x": 1}},
    )
    assert out[2] == {
        "sessionUpdate": "message",
        "role": "agent",
        "messageId": "m1",
        "content": [text("Hello!")],
    }
    assert out[3] == {"sessionUpdate": "message", "role": "user", "messageId": "u1", "content": []}
    assert len(out) == 4  # the metadata-only upsert shows nothing


def test_content_blocks_are_forwarded_as_sent() -> None:
    n = SessionUpdateNormalizer(2)
    block = {"type": "_hologram", "depth": 3}
    (out,) = feed(n, {"sessionUpdate": "agent_message_chunk", "messageId": "m", "content": block})
    assert out["content"] is block


# --------------------------------------------------------------------------- tool calls


def test_v1_tool_call_and_updates_send_the_merged_state() -> None:
    n = SessionUpdateNormalizer(1)
    first = n.normalize(
        tool_call(title="Read", kind="read", locations=[{"path": "/ws/a.py", "line": 3}])
    )
    assert first.tool_call is not None
    assert [loc.path for loc in first.tool_call.new_locations] == ["/ws/a.py"]
    assert first.editor_updates == [
        {
            "sessionUpdate": "tool_call",
            "toolCall": {
                "toolCallId": "c1",
                "title": "Read",
                "kind": "read",
                "status": "pending",
                "content": [],
                "locations": [{"path": "/ws/a.py", "line": 3}],
            },
        }
    ]
    second = n.normalize(tool_update(status="completed", content=[{"type": "_x", "y": 1}]))
    (update,) = second.editor_updates
    assert update["toolCall"]["status"] == "completed"
    assert update["toolCall"]["title"] == "Read"
    assert update["toolCall"]["content"] == [{"type": "_x", "y": 1}]


def test_v2_tool_call_upsert_and_content_chunk() -> None:
    n = SessionUpdateNormalizer(2)
    n.normalize(tool_update(title="Run", kind="execute", status="in_progress"))
    result = n.normalize(
        {
            "sessionUpdate": "tool_call_content_chunk",
            "toolCallId": "c1",
            "content": {"type": "terminal", "terminalId": "t1"},
        }
    )
    assert result.tool_call is not None and result.tool_call.terminal_ids == ["t1"]
    (update,) = result.editor_updates
    assert update["toolCall"]["content"] == [{"type": "terminal", "terminalId": "t1"}]
    assert n.tool_calls.get("c1") is not None


def test_malformed_known_update_is_forwarded_raw_and_changes_nothing() -> None:
    n = SessionUpdateNormalizer(2)
    bad = tool_update(status=5)
    result = n.normalize(bad)
    assert result.editor_updates == [bad] and result.tool_call is None
    assert "c1" not in n.tool_calls
    broken_chunk = {"sessionUpdate": "agent_message_chunk", "content": "not a block"}
    assert feed(n, broken_chunk) == [broken_chunk]


# --------------------------------------------------------------------------- session state


def test_plans_of_both_versions() -> None:
    entries = [{"content": "Write tests", "priority": "high", "status": "_blocked"}]
    v1 = SessionUpdateNormalizer(1)
    assert feed(v1, {"sessionUpdate": "plan", "entries": entries}) == [
        {"sessionUpdate": "plan", "entries": entries}
    ]
    v2 = SessionUpdateNormalizer(2)
    items = {"type": "items", "planId": "p1", "entries": entries}
    assert feed(v2, {"sessionUpdate": "plan_update", "plan": items}) == [
        {"sessionUpdate": "plan", "entries": entries, "planId": "p1"}
    ]
    odd = {"sessionUpdate": "plan_update", "plan": {"type": "_mermaid", "planId": "p2"}}
    assert feed(v2, odd) == [odd]


def test_modes_use_the_stored_available_modes() -> None:
    n = SessionUpdateNormalizer(1)
    modes = [{"id": "ask", "name": "Ask"}, {"id": "code", "name": "Code"}]
    setup = n.session_setup(
        {
            "sessionId": "s1",
            "modes": {"currentModeId": "ask", "availableModes": modes},
            "configOptions": [{"id": "model"}],
        }
    )
    assert setup == [
        {"sessionUpdate": "modes", "currentModeId": "ask", "availableModes": modes},
        {
            "sessionUpdate": "config_options",
            "configOptions": [{"id": "model", "configId": "model"}],
        },
    ]
    assert feed(n, {"sessionUpdate": "current_mode_update", "currentModeId": "code"}) == [
        {"sessionUpdate": "modes", "currentModeId": "code", "availableModes": modes}
    ]


def test_v2_session_setup_sends_commands() -> None:
    n = SessionUpdateNormalizer(2)
    commands = [{"type": "command", "name": "plan", "description": "Plan"}]
    assert n.session_setup({"sessionId": "s", "availableCommands": commands}) == [
        {"sessionUpdate": "available_commands", "availableCommands": commands}
    ]


@pytest.mark.parametrize("version", [1, 2])
def test_commands_config_usage_notice(version: int) -> None:
    n = SessionUpdateNormalizer(version)
    out = feed(
        n,
        {"sessionUpdate": "available_commands_update", "availableCommands": [{"name": "x"}]},
        {"sessionUpdate": "config_option_update", "configOptions": []},
        {"sessionUpdate": "usage_update", "used": 5, "size": 10},
        {"sessionUpdate": "usage_update", "used": 6, "size": 10, "cost": {"amount": 1}},
        {"sessionUpdate": "notice", "severity": "_loud", "title": "Hi", "description": None},
    )
    assert out == [
        {"sessionUpdate": "available_commands", "availableCommands": [{"name": "x"}]},
        {"sessionUpdate": "config_options", "configOptions": []},
        {"sessionUpdate": "usage", "used": 5, "size": 10},
        {"sessionUpdate": "usage", "used": 6, "size": 10, "cost": {"amount": 1}},
        {"sessionUpdate": "notice", "severity": "_loud", "title": "Hi"},
    ]


def test_session_info_is_merged_state() -> None:
    n = SessionUpdateNormalizer(2)
    out = feed(
        n,
        {"sessionUpdate": "session_info_update", "title": "Fix CI"},
        {"sessionUpdate": "session_info_update", "updatedAt": "2026-11-30T06:00:00Z"},
        {"sessionUpdate": "session_info_update", "title": None},
    )
    assert out == [
        {"sessionUpdate": "session_info", "title": "Fix CI"},
        {"sessionUpdate": "session_info", "title": "Fix CI", "updatedAt": "2026-11-30T06:00:00Z"},
        {"sessionUpdate": "session_info", "updatedAt": "2026-11-30T06:00:00Z"},
    ]


def test_v2_state_updates() -> None:
    n = SessionUpdateNormalizer(2)
    error = {"code": -32603, "message": "boom"}
    out = feed(
        n,
        {"sessionUpdate": "state_update", "state": "running", "background": []},
        {"sessionUpdate": "state_update", "state": "idle", "stopReason": "error", "error": error},
        {"sessionUpdate": "state_update", "state": "_sleeping"},
    )
    assert out == [
        {"sessionUpdate": "state", "state": "running"},
        {"sessionUpdate": "state", "state": "idle", "stopReason": "error", "error": error},
        {"sessionUpdate": "state", "state": "_sleeping"},
    ]


def test_compaction_is_merged_from_upserts_and_summary_chunks() -> None:
    n = SessionUpdateNormalizer(2)
    out = feed(
        n,
        {"sessionUpdate": "compaction_summary_chunk", "compactionId": "k", "content": text("a")},
        {"sessionUpdate": "compaction_summary_chunk", "compactionId": "k", "content": text("b")},
        {"sessionUpdate": "compaction_update", "compactionId": "k", "status": "completed"},
        {
            "sessionUpdate": "compaction_update",
            "compactionId": "k",
            "status": "failed",
            "error": "x",
        },
        {
            "sessionUpdate": "compaction_update",
            "compactionId": "k",
            "status": "failed",
            "summary": None,
        },
    )
    assert out[1] == {
        "sessionUpdate": "compaction",
        "compactionId": "k",
        "status": "in_progress",
        "summary": [text("a"), text("b")],
    }
    assert out[2]["status"] == "completed" and out[2]["summary"] == [text("a"), text("b")]
    assert out[3]["error"] == "x"
    assert out[4] == {
        "sessionUpdate": "compaction",
        "compactionId": "k",
        "status": "failed",
        "error": "x",
    }


def test_terminal_updates_are_side_effects_not_editor_updates() -> None:
    n = SessionUpdateNormalizer(2)
    update = {"sessionUpdate": "terminal_update", "terminalId": "t1", "command": "ls"}
    result = n.normalize(update)
    assert result.editor_updates == [] and result.terminal_update is update
    out = n.normalize(
        {"sessionUpdate": "terminal_output_chunk", "terminalId": "t1", "data": "aGk="}
    )
    assert out.editor_updates == [] and out.terminal_chunk == ("t1", "aGk=")


def test_unknown_update_types_are_forwarded_unchanged() -> None:
    n = SessionUpdateNormalizer(2)
    odd = {"sessionUpdate": "_acme_progress", "percent": 30, "_meta": {"zed.dev": 1}}
    result = n.normalize(odd)
    assert result == Normalized(editor_updates=[odd])
    assert result.editor_updates[0] is odd
    nameless = {"no": "sessionUpdate"}
    assert feed(n, nameless) == [nameless]


# --------------------------------------------------------------------------- turns


def test_v1_turns_have_synthetic_states() -> None:
    n = SessionUpdateNormalizer(1)
    assert n.begin_turn() == [{"sessionUpdate": "state", "state": "running"}]
    assert n.end_turn("end_turn") == [
        {"sessionUpdate": "state", "state": "idle", "stopReason": "end_turn"}
    ]
    assert n.end_turn(None) == [{"sessionUpdate": "state", "state": "idle"}]


def test_v2_turns_leave_state_to_the_agent() -> None:
    n = SessionUpdateNormalizer(2)
    assert n.begin_turn() == [] and n.end_turn("end_turn") == []
    assert n.user_prompt([text("hi")]) == []


def test_v1_user_prompt_is_a_message() -> None:
    n = SessionUpdateNormalizer(1)
    assert n.user_prompt([text("Fix it")]) == [
        {
            "sessionUpdate": "message",
            "role": "user",
            "messageId": "acpls-1",
            "content": [text("Fix it")],
        }
    ]
    assert ids(feed(n, agent("ok"))) == ["acpls-2"]


# --------------------------------------------------------------------------- replay


def v1_history(n: SessionUpdateNormalizer) -> None:
    n.user_prompt([text("Fix the bug")])
    n.begin_turn()
    feed(
        n,
        thought("Look"),
        thought("ing"),
        agent("I will "),
        agent("read it."),
        tool_call(title="Read", kind="read", status="pending"),
        tool_update(status="completed", content=[{"type": "_x"}]),
        agent("Done."),
        {"sessionUpdate": "plan", "entries": []},
    )
    n.end_turn("end_turn")


def v1_replay(n: SessionUpdateNormalizer) -> list[dict[str, Any]]:
    out = n.replay_mode(True)
    out += feed(
        n,
        user("Fix the bug"),
        thought("Looking"),
        agent("I will read it."),  # chunked differently: still the same message
        tool_call(title="Read", kind="read", status="pending"),
        tool_update(status="completed", content=[{"type": "_x"}]),
        agent("Done."),
        {"sessionUpdate": "plan", "entries": []},
    )
    return out


def test_v1_replay_of_known_history_sends_nothing() -> None:
    n = SessionUpdateNormalizer(1)
    v1_history(n)
    assert v1_replay(n) == []
    assert n.replaying
    assert n.replay_mode(False) == []
    assert not n.replaying


def test_v1_replay_sends_what_is_new_or_changed() -> None:
    n = SessionUpdateNormalizer(1)
    v1_history(n)
    out = v1_replay(n)
    result = n.normalize(tool_update("c2", title="Grep", status="completed"))
    assert result.replayed and result.tool_call is not None
    assert result.editor_updates[0]["toolCall"]["toolCallId"] == "c2"
    out += feed(
        n,
        agent("An extra message"),
        tool_update(status="failed"),  # an old call that ends differently
        {"sessionUpdate": "_acme", "n": 1},  # unknown updates survive replay
        {
            "sessionUpdate": "plan",
            "entries": [{"content": "x", "priority": "low", "status": "pending"}],
        },
    )
    assert out == [
        {
            "sessionUpdate": "message",
            "role": "agent",
            "messageId": "acpls-5",
            "content": [text("An extra message")],
        },
        {"sessionUpdate": "_acme", "n": 1},
    ]
    flushed = n.replay_mode(False)
    assert [u["sessionUpdate"] for u in flushed] == ["tool_call", "plan"]
    assert flushed[0]["toolCall"]["status"] == "failed"
    assert flushed[0]["toolCall"]["content"] == [{"type": "_x"}]
    tool_state = n.tool_calls.get("c1")
    assert tool_state is not None and tool_state.status == "failed"
    # Live again: a second identical replay now has nothing new to say.
    again = n.replay_mode(True)
    again += feed(n, agent("An extra message"), tool_update(status="failed"))
    assert again == [] and n.replay_mode(False) == []


def test_replayed_tool_call_identical_after_intermediate_states_is_not_resent() -> None:
    n = SessionUpdateNormalizer(1)
    feed(n, tool_call(title="Edit", status="pending"), tool_update(status="completed"))
    n.replay_mode(True)
    # Replays go back through pending: nothing is shown until the replay's final state.
    feed(n, tool_call(title="Edit", status="pending"))
    replayed = n.normalize(tool_update(status="completed"))
    assert replayed.editor_updates == [] and replayed.tool_call is None
    assert n.replay_mode(False) == []
    tool_state = n.tool_calls.get("c1")
    assert tool_state is not None and tool_state.status == "completed"


def test_v2_replay_by_message_id() -> None:
    n = SessionUpdateNormalizer(2)
    feed(
        n,
        {"sessionUpdate": "user_message", "messageId": "u1", "content": [text("Hi")]},
        agent("Hel", "m1"),
        agent("lo", "m1"),
        {"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"},
    )
    assert n.replay_mode(True) == []
    out = feed(
        n,
        {"sessionUpdate": "user_message", "messageId": "u1", "content": [text("Hi")]},
        agent("Hello", "m1"),
        agent("Brand new", "m2"),
        {"sessionUpdate": "agent_message", "messageId": "m3", "content": [text("Also new")]},
        {"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"},
    )
    assert ids(out) == ["m2", "m3"]
    assert n.replay_mode(False) == []


def test_v2_replay_sends_a_changed_message_whole() -> None:
    n = SessionUpdateNormalizer(2)
    feed(n, agent("Draft", "m1"))
    n.replay_mode(True)
    assert feed(n, agent("Final", "m1"), agent(" answer", "m1")) == []
    assert n.replay_mode(False) == [
        {
            "sessionUpdate": "message",
            "role": "agent",
            "messageId": "m1",
            "content": [text("Final"), text(" answer")],
        }
    ]


def test_replay_of_a_session_never_seen_streams_everything() -> None:
    n = SessionUpdateNormalizer(1)
    n.replay_mode(True)
    out = feed(n, user("Q"), agent("A"), tool_call(title="T"), agent("B"))
    out += n.replay_mode(False)
    assert [u["sessionUpdate"] for u in out] == ["message", "message", "tool_call", "message"]
    assert [u["content"] for u in out if u["sessionUpdate"] == "message"] == [
        [text("Q")],
        [text("A")],
        [text("B")],
    ]


def test_repeated_identical_messages_are_matched_one_for_one() -> None:
    n = SessionUpdateNormalizer(1)
    feed(n, agent("ok"), user("again"), agent("ok"))
    n.replay_mode(True)
    out = feed(n, agent("ok"), user("again"), agent("ok"), user("more"), agent("ok"))
    out += n.replay_mode(False)
    assert [(u["role"], u["content"]) for u in out] == [
        ("user", [text("more")]),
        ("agent", [text("ok")]),
    ]


def test_message_memory_is_bounded() -> None:
    n = SessionUpdateNormalizer(2, max_messages=3)
    for index in range(10):
        feed(n, agent("x", f"m{index}"))
    n.replay_mode(True)
    # The forgotten m0 comes back as new; the remembered m9 is recognised.
    assert ids(feed(n, agent("x", "m0"), agent("x", "m9"))) == ["m0"]
    assert n.replay_mode(False) == []


# -- the plain text chunk fast path (issue #18.3: replays are mostly such chunks) ---------------

_JSON_SCALARS = st.none() | st.booleans() | st.integers() | st.text(max_size=5)
_CHUNK_VALUES = st.recursive(
    _JSON_SCALARS,
    lambda inner: (
        st.lists(inner, max_size=2) | st.dictionaries(st.text(max_size=4), inner, max_size=2)
    ),
    max_leaves=4,
)
_BLOCKS = st.fixed_dictionaries(
    {"type": st.sampled_from(["text", "image", "texts"]) | _JSON_SCALARS},
    optional={"text": _JSON_SCALARS, "annotations": _CHUNK_VALUES, "data": _JSON_SCALARS},
)
_CHUNKS = st.fixed_dictionaries(
    {
        "sessionUpdate": st.sampled_from(
            ["agent_message_chunk", "user_message_chunk", "agent_thought_chunk"]
        ),
        "content": _BLOCKS | _CHUNK_VALUES,
    },
    optional={"messageId": _JSON_SCALARS, "_meta": _CHUNK_VALUES, "extra": _CHUNK_VALUES},
)


@settings(max_examples=400, deadline=None)
@given(_CHUNKS)
def test_the_plain_chunk_check_accepts_only_what_the_model_accepts(update: dict[str, Any]) -> None:
    if session_updates._plain_text_chunk(update):
        structure(update, ContentChunk)  # must not raise


@settings(max_examples=150, deadline=None)
@given(st.lists(_CHUNKS, max_size=12), st.booleans())
def test_the_fast_path_normalises_exactly_as_the_model_path(
    updates: list[dict[str, Any]], replaying: bool
) -> None:
    def run(fast: bool) -> list[Any]:
        normalizer = SessionUpdateNormalizer(1)
        out: list[Any] = normalizer.replay_mode(True) if replaying else []
        original = session_updates._plain_text_chunk
        session_updates._plain_text_chunk = original if fast else (lambda _u: False)  # type: ignore[assignment]
        try:
            for update in updates:
                out.extend(normalizer.normalize(update).editor_updates)
        finally:
            session_updates._plain_text_chunk = original  # type: ignore[assignment]
        return out + normalizer.replay_mode(False)

    assert run(True) == run(False)


def test_plain_text_chunks_skip_the_model() -> None:
    """The replay's common case is checked by hand (structuring it cost more than the rest)."""
    assert session_updates._plain_text_chunk(agent("hi"))
    assert session_updates._plain_text_chunk(agent("hi", "m1"))
    assert not session_updates._plain_text_chunk({**agent("hi"), "messageId": None})
    assert not session_updates._plain_text_chunk({**agent("hi"), "_meta": {}})
    assert not session_updates._plain_text_chunk(
        {"sessionUpdate": "agent_message_chunk", "content": {**text("x"), "annotations": {}}}
    )


_TOOL_CALL_VALUES = st.one_of(
    st.sampled_from(["c1", "c2", "Read a.py", "read", "_acme", "in_progress", "completed", ""]),
    st.none(),
    st.integers(0, 2),
    st.just([{"path": "/ws/a.py", "line": 3}]),
    st.just({"k": 1}),
)
_TOOL_CALLS = st.builds(
    lambda kind, fields: {"sessionUpdate": kind, **fields},
    st.sampled_from(["tool_call", "tool_call_update"]),
    st.dictionaries(
        st.sampled_from(
            ["toolCallId", "title", "name", "kind", "status", "locations", "_meta", "rawInput", "x"]
        ),
        _TOOL_CALL_VALUES,
        max_size=6,
    ),
)
_TOOL_MODELS = {"tool_call": ToolCall, "tool_call_update": ToolCallUpdate}


@settings(max_examples=400, deadline=None)
@given(_TOOL_CALLS)
def test_a_plain_tool_call_is_built_as_the_model_path_builds_it(update: dict[str, Any]) -> None:
    """Field for field, key order (`wire_order`) and unknown keys (`extra`) included."""
    cls = _TOOL_MODELS[update["sessionUpdate"]]
    built = session_updates._plain_tool_call(update, cls)
    if built is None:
        return
    structured = structure(update, cls)
    assert built == structured
    assert built.wire_order == structured.wire_order


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.one_of(_TOOL_CALLS, _CHUNKS), max_size=12), st.booleans(), st.sampled_from([1, 2])
)
def test_the_tool_call_fast_path_normalises_exactly_as_the_model_path(
    updates: list[dict[str, Any]], replaying: bool, version: int
) -> None:
    def run(fast: bool) -> list[Any]:
        normalizer = SessionUpdateNormalizer(version)
        out: list[Any] = normalizer.replay_mode(True) if replaying else []
        original = session_updates._plain_tool_call
        session_updates._plain_tool_call = original if fast else (lambda _u, _m: None)  # type: ignore[assignment]
        try:
            for update in updates:
                result = normalizer.normalize(update)
                state = result.tool_call.state.to_editor() if result.tool_call else None
                out.append((result.editor_updates, state))
        finally:
            session_updates._plain_tool_call = original  # type: ignore[assignment]
        return out + normalizer.replay_mode(False)

    assert run(True) == run(False)


def test_plain_tool_calls_skip_the_model() -> None:
    """A replay's tool calls and status changes (string fields only) are built by hand."""
    plain = session_updates._plain_tool_call
    assert plain(tool_call(title="Read", kind="read", status="pending"), ToolCall) is not None
    assert plain(tool_update(status="completed"), ToolCallUpdate) is not None
    assert plain(tool_update(status=None), ToolCallUpdate) is None
    assert plain(tool_update(locations=[]), ToolCallUpdate) is None
    assert plain({"sessionUpdate": "tool_call", "title": "no id"}, ToolCall) is None


def _reference_digest(blocks: list[Any]) -> bytes:
    """The fingerprint as its docstring defines it: each run of plain text blocks as the digest
    of its concatenated text, every other block as its canonical JSON."""
    done = hashlib.blake2b(digest_size=16)
    run: list[str] | None = None
    for block in blocks:
        text = session_updates._plain_text(block)
        if text is not None:
            run = [*(run or []), text]
            continue
        if run is not None:
            joined = "".join(run).encode("utf-8", "surrogatepass")
            done.update(b"T" + hashlib.blake2b(joined, digest_size=16).digest())
            run = None
        done.update(b"B" + session_updates._canonical_json(block))
    if run is not None:
        joined = "".join(run).encode("utf-8", "surrogatepass")
        done.update(b"T" + hashlib.blake2b(joined, digest_size=16).digest())
    return done.digest()


@settings(max_examples=300, deadline=None)
@given(st.lists(st.builds(text, st.text(max_size=3)) | _BLOCKS, max_size=6))
def test_a_checked_text_block_hashes_as_the_block_does(blocks: list[Any]) -> None:
    """`add_text` (a replayed chunk already known to be plain text) and `add` of the block both
    give the fingerprint its definition gives."""
    by_block, by_text = session_updates._Fingerprint(), session_updates._Fingerprint()
    for block in blocks:
        by_block.add(block)
        text = session_updates._plain_text(block)
        if text is None:
            by_text.add(block)
        else:
            by_text.add_text(text)
    assert by_text.digest() == by_block.digest() == _reference_digest(blocks)
