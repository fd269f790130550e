"""ToolCallStore (translate/tool_calls.py) against a reference model made of plain dicts.

Random interleavings of v1 `tool_call`, `tool_call_update` (every field omitted, null or a
value) and v2 `tool_call_content_chunk` over a few ids: the store's merged `to_editor()` JSON must
equal the model's after every step, and `diffs_changed` / `terminal_ids` must say what changed.
The model is the merge rule written the obvious way (editors/protocol.md 5.4, the ACP spec), plus
acpls' one deviation: a non-empty content replacement without a diff keeps the earlier diffs.
"""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

from acpls.acp import models as m
from acpls.acp.converter import structure
from acpls.translate.tool_calls import ToolCallStore

IDS = ("c1", "c2", "c3")
OMIT = object()

TEXTS = st.sampled_from(["ok", "", "é", "line\nline"])
CONTENT_ITEMS = st.one_of(
    TEXTS.map(lambda t: {"type": "content", "content": {"type": "text", "text": t}}),
    st.sampled_from(["/ws/a.py", "/ws/b.py"]).flatmap(
        lambda path: st.sampled_from(["x = 1\n", "x = 2\n"]).map(
            lambda new: {"type": "diff", "path": path, "oldText": "x = 0\n", "newText": new}
        )
    ),
    st.sampled_from(["t1", "t2", "t3"]).map(lambda t: {"type": "terminal", "terminalId": t}),
    st.just({"type": "_acme_chart", "series": [3, 1]}),
)
LOCATIONS = st.lists(
    st.builds(
        lambda p, line: {"path": p, "line": line}, st.sampled_from(["/a", "/b"]), st.integers(1, 9)
    ),
    max_size=2,
)
META_VALUES = st.one_of(st.none(), st.integers(0, 3), st.sampled_from(["x", "y"]))
META = st.dictionaries(st.sampled_from(["k1", "k2", "zed.dev"]), META_VALUES, max_size=3)


def field(values: st.SearchStrategy[Any], nullable: bool = True) -> st.SearchStrategy[Any]:
    """A patch field: omitted, null (when allowed) or a value."""
    options = [st.just(OMIT), values]
    if nullable:
        options.append(st.none())
    return st.one_of(*options)


PATCH = st.fixed_dictionaries(
    {
        "title": field(st.sampled_from(["Read", "Edit", ""])),
        "kind": field(st.sampled_from(["read", "edit", "execute", "_acme_kind"])),
        "status": field(st.sampled_from(["pending", "in_progress", "completed", "failed", "_x"])),
        "content": field(st.lists(CONTENT_ITEMS, max_size=3)),
        "locations": field(LOCATIONS),
        "rawInput": field(st.sampled_from([{"cmd": "ls"}, [1, 2], "raw"])),
        "rawOutput": field(st.sampled_from([{"out": 1}, "done"])),
        "_meta": field(META),
    }
)


def present(patch: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in patch.items() if v is not OMIT}


def diffs(content: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [item for item in content if item["type"] == "diff"]


def terminals(content: list[dict[str, Any]]) -> list[str]:
    return [item["terminalId"] for item in content if item["type"] == "terminal"]


class ModelCall:
    """The expected merged state of one call."""

    def __init__(self, tool_call_id: str) -> None:
        self.id = tool_call_id
        self.fields: dict[str, Any] = {}
        self.content: list[dict[str, Any]] = []
        self.locations: list[dict[str, Any]] = []
        self.meta: dict[str, Any] | None = None

    def patch(self, patch: dict[str, Any], *, whole: bool) -> None:
        for key in ("title", "kind", "status", "rawInput", "rawOutput"):
            if key in patch:
                if patch[key] is None:
                    self.fields.pop(key, None)
                else:
                    self.fields[key] = patch[key]
        if "content" in patch:
            new = list(patch["content"] or [])
            if not whole and new and diffs(self.content) and not diffs(new):
                new = diffs(self.content) + new
            self.content = new
        if "locations" in patch:
            self.locations = list(patch["locations"] or [])
        if "_meta" in patch:
            if whole:
                self.meta = dict(patch["_meta"]) if patch["_meta"] is not None else None
            elif patch["_meta"] is None:
                self.meta = None
            else:
                merged = dict(self.meta or {})
                for key, value in patch["_meta"].items():
                    if value is None:
                        merged.pop(key, None)
                    else:
                        merged[key] = value
                self.meta = merged or None

    def to_editor(self) -> dict[str, Any]:
        out: dict[str, Any] = {"toolCallId": self.id}
        if "title" in self.fields:
            out["title"] = self.fields["title"]
        out["kind"] = self.fields.get("kind", "other")
        out["status"] = self.fields.get("status", "pending")
        out["content"] = self.content
        out["locations"] = self.locations
        for key in ("rawInput", "rawOutput"):
            if key in self.fields:
                out[key] = self.fields[key]
        if self.meta:
            out["_meta"] = self.meta
        return out


class ToolCallMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.store = ToolCallStore(1)
        self.model: dict[str, ModelCall] = {}

    @initialize(version=st.sampled_from([1, 2]))
    def choose_version(self, version: int) -> None:
        self.store = ToolCallStore(version)

    def _check_applied(self, applied: Any, before: ModelCall | None, after: ModelCall) -> None:
        old_diffs = diffs(before.content) if before else []
        assert applied.diffs_changed == (old_diffs != diffs(after.content)), (
            old_diffs,
            after.content,
        )
        old_terminals = terminals(before.content) if before else []
        expected_new = []
        for terminal in terminals(after.content):
            if terminal not in old_terminals and terminal not in expected_new:
                expected_new.append(terminal)
        assert applied.terminal_ids == expected_new

    @rule(tool_call_id=st.sampled_from(IDS), patch=PATCH)
    def whole_tool_call(self, tool_call_id: str, patch: dict[str, Any]) -> None:
        if self.store.version != 1:
            return  # v2 has no whole-call message
        fields = present(patch)
        applied = self.store.apply(
            structure(
                {"sessionUpdate": "tool_call", "toolCallId": tool_call_id, **fields}, m.ToolCall
            )
        )
        before = copy.deepcopy(self.model.get(tool_call_id))
        call = ModelCall(tool_call_id)
        call.patch(fields, whole=True)
        self.model[tool_call_id] = call
        if before is not None:
            self._check_applied(applied, before, call)

    @rule(tool_call_id=st.sampled_from(IDS), patch=PATCH)
    def tool_call_update(self, tool_call_id: str, patch: dict[str, Any]) -> None:
        fields = present(patch)
        payload = {"sessionUpdate": "tool_call_update", "toolCallId": tool_call_id, **fields}
        applied = self.store.apply(structure(payload, m.ToolCallUpdate))
        before = copy.deepcopy(self.model.get(tool_call_id))
        call = self.model.setdefault(tool_call_id, ModelCall(tool_call_id))
        call.patch(fields, whole=False)
        if "content" in fields:
            self._check_applied(applied, before, call)
        else:
            assert not applied.diffs_changed and applied.terminal_ids == []

    @rule(tool_call_id=st.sampled_from(IDS), item=CONTENT_ITEMS)
    def content_chunk(self, tool_call_id: str, item: dict[str, Any]) -> None:
        if self.store.version != 2:
            return
        payload = {"sessionUpdate": "tool_call_content_chunk", "toolCallId": tool_call_id}
        applied = self.store.apply(structure({**payload, "content": item}, m.ToolCallContentChunk))
        call = self.model.setdefault(tool_call_id, ModelCall(tool_call_id))
        was = terminals(call.content)
        call.content = [*call.content, item]
        assert applied.diffs_changed == (item["type"] == "diff")
        new_terminal = item["type"] == "terminal" and item["terminalId"] not in was
        assert applied.terminal_ids == ([item["terminalId"]] if new_terminal else [])

    @invariant()
    def store_matches_the_model(self) -> None:
        assert len(self.store) == len(self.model)
        for tool_call_id, call in self.model.items():
            state = self.store.get(tool_call_id)
            assert state is not None
            assert state.to_editor() == call.to_editor()


ToolCallMachine.TestCase.settings = settings(
    max_examples=150, stateful_step_count=30, deadline=None
)
TestToolCallMerge = ToolCallMachine.TestCase
