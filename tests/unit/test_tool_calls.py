"""Tool-call merging (acpls.translate.tool_calls) for ACP v1 and v2."""

from __future__ import annotations

from typing import Any

import pytest

from acpls.acp import models as m
from acpls.acp.converter import structure
from acpls.acp.models import OMITTED
from acpls.translate.tool_calls import (
    AppliedToolCall,
    ToolCallState,
    ToolCallStore,
    is_finished,
    is_in_progress,
    is_terminal_status,
)

TEXT = {"type": "content", "content": {"type": "text", "text": "ok"}}
DIFF_V1 = {"type": "diff", "path": "/ws/a.py", "oldText": "x = 1\n", "newText": "x = 2\n"}
DIFF_V2 = {"type": "diff", "changes": [{"operation": "modify", "path": "/ws/a.py"}]}
TERM = {"type": "terminal", "terminalId": "t1"}
ODD = {"type": "_acme_chart", "series": [3, 1]}


def call(**fields: Any) -> m.ToolCall:
    return structure({"sessionUpdate": "tool_call", "toolCallId": "c1", **fields}, m.ToolCall)


def update(tool_call_id: str = "c1", **fields: Any) -> m.ToolCallUpdate:
    payload = {"sessionUpdate": "tool_call_update", "toolCallId": tool_call_id, **fields}
    return structure(payload, m.ToolCallUpdate)


def chunk(item: dict[str, Any], tool_call_id: str = "c1") -> m.ToolCallContentChunk:
    payload = {"sessionUpdate": "tool_call_content_chunk", "toolCallId": tool_call_id}
    return structure({**payload, "content": item}, m.ToolCallContentChunk)


def editor(store: ToolCallStore, tool_call_id: str = "c1") -> dict[str, Any]:
    state = store.get(tool_call_id)
    assert state is not None
    return state.to_editor()


# --------------------------------------------------------------------------- status helpers


@pytest.mark.parametrize("status", ["completed", "failed", "cancelled"])
def test_finished_statuses(status: str) -> None:
    assert is_finished(status) and is_terminal_status(status)
    assert not is_in_progress(status)


@pytest.mark.parametrize("status", ["pending", "in_progress", "paused", "_waiting", "queued"])
def test_everything_else_is_still_in_progress(status: str) -> None:
    assert is_in_progress(status)
    assert not is_finished(status) and not is_terminal_status(status)


# --------------------------------------------------------------------------- v1


def test_v1_tool_call_creates_with_protocol_defaults() -> None:
    store = ToolCallStore(1)
    applied = store.apply(call(title="Read main.py"))
    assert isinstance(applied, AppliedToolCall)
    assert applied.state.to_editor() == {
        "toolCallId": "c1",
        "title": "Read main.py",
        "kind": "other",
        "status": "pending",
        "content": [],
        "locations": [],
    }
    assert applied.new_locations == [] and applied.terminal_ids == []
    assert not applied.diffs_changed


def test_v1_tool_call_replaces_the_whole_call() -> None:
    store = ToolCallStore(1)
    store.apply(
        call(
            title="Edit",
            kind="edit",
            status="in_progress",
            content=[DIFF_V1],
            locations=[{"path": "/ws/a.py"}],
            rawInput={"a": 1},
            name="edit_file",
        )
    )
    applied = store.apply(call(title="Edit again"))
    assert applied.state.to_editor() == {
        "toolCallId": "c1",
        "title": "Edit again",
        "kind": "other",
        "status": "pending",
        "content": [],
        "locations": [],
    }
    assert applied.diffs_changed  # the diff went away with the old call
    assert len(store) == 1


def test_v1_update_patches_every_field() -> None:
    store = ToolCallStore(1)
    store.apply(call(title="Run", kind="execute", status="pending", name="bash"))
    state = store.apply(
        update(
            title="Run tests",
            kind="_acme_kind",
            status="in_progress",
            content=[TEXT, ODD],
            locations=[{"path": "/ws/t.py", "line": 4}],
            rawInput={"command": "pytest"},
            rawOutput={"stdout": ""},
        )
    ).state
    assert state.to_editor() == {
        "toolCallId": "c1",
        "title": "Run tests",
        "kind": "_acme_kind",
        "status": "in_progress",
        "content": [TEXT, ODD],
        "locations": [{"path": "/ws/t.py", "line": 4}],
        "rawInput": {"command": "pytest"},
        "rawOutput": {"stdout": ""},
        "name": "bash",
    }


def test_v1_omitted_fields_are_unchanged() -> None:
    store = ToolCallStore(1)
    store.apply(
        call(title="Run", kind="execute", status="in_progress", content=[TEXT], rawInput={})
    )
    before = editor(store)
    store.apply(update())
    assert editor(store) == before


def test_v1_null_clears_and_resets_to_defaults() -> None:
    store = ToolCallStore(1)
    store.apply(
        call(
            title="Run",
            kind="execute",
            status="in_progress",
            content=[TEXT],
            locations=[{"path": "/a"}],
            rawInput={"x": 1},
            rawOutput={"y": 2},
            name="bash",
        )
    )
    store.apply(
        update(
            title=None,
            kind=None,
            status=None,
            content=None,
            locations=None,
            rawInput=None,
            rawOutput=None,
            name=None,
        )
    )
    # v1: `name: null` leaves the name unchanged (the v1 schema says so); the rest is cleared.
    assert editor(store) == {
        "toolCallId": "c1",
        "kind": "other",
        "status": "pending",
        "content": [],
        "locations": [],
        "name": "bash",
    }


def test_empty_collections_clear_too() -> None:
    store = ToolCallStore(1)
    store.apply(call(title="x", content=[TEXT], locations=[{"path": "/a"}]))
    store.apply(update(content=[], locations=[]))
    assert editor(store)["content"] == [] and editor(store)["locations"] == []


def test_v1_update_before_tool_call_creates_the_call() -> None:
    store = ToolCallStore(1)
    applied = store.apply(update(status="in_progress"))
    assert applied.state.to_editor() == {
        "toolCallId": "c1",
        "kind": "other",
        "status": "in_progress",
        "content": [],
        "locations": [],
    }


def test_v1_meta_is_kept_and_patched_by_key() -> None:
    store = ToolCallStore(1)
    store.apply(call(title="t", _meta={"terminal_info": {"terminal_id": "t1"}, "z": None}))
    assert editor(store)["_meta"] == {"terminal_info": {"terminal_id": "t1"}, "z": None}
    store.apply(update(_meta={"terminal_output": {"terminal_id": "t1", "data": "hi"}, "z": None}))
    assert editor(store)["_meta"] == {
        "terminal_info": {"terminal_id": "t1"},
        "terminal_output": {"terminal_id": "t1", "data": "hi"},
    }
    store.apply(update(_meta=None))
    assert "_meta" not in editor(store)


# --------------------------------------------------------------------------- v2


def test_v2_first_seen_upsert_creates_with_unknown_fields() -> None:
    store = ToolCallStore(2)
    applied = store.apply(update(title="Search", parentToolCallId="c0", _acme={"x": 1}))
    assert applied.state.to_editor() == {
        "toolCallId": "c1",
        "title": "Search",
        "kind": "other",
        "status": "pending",
        "content": [],
        "locations": [],
        "parentToolCallId": "c0",
        "_acme": {"x": 1},
    }
    store.apply(update(parentToolCallId="c9"))
    assert editor(store)["parentToolCallId"] == "c9"


def test_v2_null_name_clears_it_and_capabilities_patch() -> None:
    store = ToolCallStore(2)
    store.apply(update(name="grep", capabilities={"cancel": {}}))
    assert editor(store)["name"] == "grep"
    assert editor(store)["capabilities"] == {"cancel": {}}
    store.apply(update(name=None, capabilities=None))
    assert "name" not in editor(store) and "capabilities" not in editor(store)


def test_v2_paused_and_unknown_statuses_are_kept_and_in_progress() -> None:
    store = ToolCallStore(2)
    for status in ("paused", "_waiting_for_ci", "queued"):
        state = store.apply(update(status=status)).state
        assert state.status == status
        assert editor(store)["status"] == status
        assert not state.finished and is_in_progress(state.status)
    assert store.apply(update(status="cancelled")).state.finished


def test_v2_content_chunks_append_in_order() -> None:
    store = ToolCallStore(2)
    first = store.apply(chunk(TEXT))
    assert first.state.to_editor()["content"] == [TEXT]
    second = store.apply(chunk(TERM))
    assert second.terminal_ids == ["t1"]
    assert not second.diffs_changed
    third = store.apply(chunk(DIFF_V2))
    assert third.diffs_changed and third.terminal_ids == []
    store.apply(chunk(ODD))
    assert editor(store)["content"] == [TEXT, TERM, DIFF_V2, ODD]
    # A replacement after chunks wins; chunks after it append to it.
    store.apply(update(content=[DIFF_V1]))
    store.apply(chunk(TEXT))
    assert editor(store)["content"] == [DIFF_V1, TEXT]


def test_v2_chunk_for_unknown_call_creates_it() -> None:
    store = ToolCallStore(2)
    state = store.apply(chunk(TERM, tool_call_id="new")).state
    assert state.tool_call_id == "new" and state.status == "pending"
    assert state.terminal_ids() == ["t1"]


def test_to_editor_returns_fresh_containers() -> None:
    store = ToolCallStore(2)
    store.apply(chunk(TEXT))
    snapshot = editor(store)
    snapshot["content"].append("garbage")
    store.apply(chunk(TERM))
    assert editor(store)["content"] == [TEXT, TERM]


# --------------------------------------------------------------------------- side effects


def test_locations_are_new_whenever_an_update_carries_them() -> None:
    store = ToolCallStore(1)
    first = store.apply(call(title="Read", locations=[{"path": "/a", "line": 1}]))
    assert first.new_locations == [m.ToolCallLocation(path="/a", line=1)]
    again = store.apply(update(locations=[{"path": "/a", "line": 1}]))
    assert again.new_locations == [m.ToolCallLocation(path="/a", line=1)]
    none = store.apply(update(status="completed"))
    assert none.new_locations == []
    cleared = store.apply(update(locations=None))
    assert cleared.new_locations == []


def test_terminal_ids_only_when_newly_referenced() -> None:
    store = ToolCallStore(1)
    assert store.apply(call(title="sh", content=[TERM])).terminal_ids == ["t1"]
    assert store.apply(update(content=[TERM, TEXT])).terminal_ids == []
    two = {"type": "terminal", "terminalId": "t2"}
    assert store.apply(update(content=[TERM, two, two])).terminal_ids == ["t2"]
    assert store.get("c1") is not None
    assert store.get("c1").terminal_ids() == ["t1", "t2", "t2"]  # type: ignore[union-attr]


def test_diffs_changed_only_when_diff_items_change() -> None:
    store = ToolCallStore(1)
    assert store.apply(call(title="e", content=[DIFF_V1])).diffs_changed
    assert not store.apply(update(content=[DIFF_V1, TEXT])).diffs_changed
    assert not store.apply(update(status="completed")).diffs_changed
    other = {**DIFF_V1, "newText": "x = 3\n"}
    assert store.apply(update(content=[other])).diffs_changed
    assert store.apply(update(content=None)).diffs_changed


# --------------------------------------------------------------------------- store


def test_preview_does_not_touch_the_store() -> None:
    store = ToolCallStore(1)
    store.apply(call(title="Edit", kind="edit", content=[DIFF_V1]))
    preview = store.preview(update(status="pending", title="Edit a.py"))
    assert preview.title == "Edit a.py" and preview.kind == "edit"
    assert editor(store)["title"] == "Edit"
    fresh = store.preview(update(tool_call_id="other", title="New"))
    assert fresh.tool_call_id == "other" and "other" not in store


def test_copy_is_independent() -> None:
    state = ToolCallState(tool_call_id="c", content=[], meta={"a": 1})
    clone = state.copy()
    clone.meta = {"b": 2}
    clone.content.append(m.TerminalToolCallContent(terminal_id="t"))
    assert state.meta == {"a": 1} and state.content == []
    assert clone == clone.copy()


def test_store_is_bounded_and_forgets_finished_calls_first() -> None:
    store = ToolCallStore(2, max_tool_calls=3)
    store.apply(update(tool_call_id="a", status="in_progress"))
    store.apply(update(tool_call_id="b", status="completed"))
    store.apply(update(tool_call_id="c", status="pending"))
    store.apply(update(tool_call_id="d"))
    assert [s.tool_call_id for s in store] == ["a", "c", "d"]
    store.apply(update(tool_call_id="e"))
    assert "a" not in store and len(store) == 3


def test_raw_input_may_be_any_json() -> None:
    store = ToolCallStore(2)
    store.apply(update(rawInput=[1, "two"], rawOutput="text"))
    assert editor(store)["rawInput"] == [1, "two"] and editor(store)["rawOutput"] == "text"
    state = store.get("c1")
    assert state is not None and state.raw_input != OMITTED
