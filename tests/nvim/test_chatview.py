"""The chat transcript's incremental edits always add up to the transcript rendered from scratch,
whatever order updates come in (streamed chunks, replaced messages, tool calls updated in place,
plans, notices, local prompts)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytestmark = pytest.mark.nvim

CHECK = """
local updates = ...
local cv = require('acpls.chatview')
local view = cv.new()
local lines = {}
cv.apply_edits(lines, {view:header_edit()})
for _, u in ipairs(updates) do
  if u.local_prompt then
    cv.apply_edits(lines, view:user_prompt(u.local_prompt))
  elseif u.turn_end then
    cv.apply_edits(lines, view:turn_ended(u.turn_end))
  else
    cv.apply_edits(lines, view:apply(u))
  end
end
-- Fold levels, as the whole-table rebuild used to compute them from the ranges, and as the view
-- answers them per row (chat.foldexpr).
local levels = {}
local ranges = view:thought_ranges()
vim.list_extend(ranges, view:subagent_ranges())
for _, r in ipairs(ranges) do
  levels[r[1]] = '>1'
  for l = r[1] + 1, r[2] do levels[l] = '1' end
end
local folds, expected_folds = {}, {}
for row = 0, #lines - 1 do
  folds[row + 1] = view:fold_level(row)
  expected_folds[row + 1] = levels[row] or '0'
end
-- Every block's first row, from the kept starts and summed afresh.
local starts_ok, row = true, 0
for _, b in ipairs(view.blocks) do
  if view:row_of(b) ~= row then starts_ok = false end
  row = row + b.nlines
end
return {lines = lines, expected = view:render_all(), count = view:line_count(),
        folds = folds, expected_folds = expected_folds, starts_ok = starts_ok}
"""

texts = st.text(alphabet="ab é\n", max_size=8)
roles = st.sampled_from(["agent", "thought", "user"])
message_ids = st.sampled_from(["m1", "m2", "m3"])


def text_block(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


chunk = st.builds(
    lambda role, mid, text: {
        "sessionUpdate": "message_chunk",
        "role": role,
        "messageId": mid,
        "content": text_block(text),
    },
    roles,
    message_ids,
    texts,
)
message = st.builds(
    lambda role, mid, parts: {
        "sessionUpdate": "message",
        "role": role,
        "messageId": mid,
        "content": [text_block(p) for p in parts],
    },
    roles,
    message_ids,
    st.lists(texts, max_size=3),
)
tool_call = st.builds(
    lambda cid, status, title, body: {
        "sessionUpdate": "tool_call",
        "toolCall": {
            "toolCallId": cid,
            "title": title,
            "kind": "edit",
            "status": status,
            "content": [{"type": "content", "content": text_block(b)} for b in body],
            "locations": [{"path": "/ws/a.py", "line": 3}],
            **({"parentToolCallId": "c1"} if cid in ("c2", "c3") else {}),
        },
    },
    st.sampled_from(["c1", "c2", "c3"]),
    st.sampled_from(["pending", "in_progress", "completed", "failed", "_custom"]),
    texts,
    st.lists(texts, max_size=2),
)
plan = st.builds(
    lambda entries: {
        "sessionUpdate": "plan",
        "entries": [{"content": e, "status": "pending", "priority": "low"} for e in entries],
    },
    st.lists(texts, max_size=3),
)
others = st.sampled_from(
    [
        {
            "sessionUpdate": "notice",
            "severity": "warning",
            "title": "careful",
            "description": "x\ny",
        },
        {"sessionUpdate": "state", "state": "running"},
        {"sessionUpdate": "usage", "used": 10, "size": 100},
        {
            "sessionUpdate": "usage",
            "used": 5,
            "size": 100,
            "cost": {"amount": 1, "currency": "EUR"},
        },
        {"sessionUpdate": "modes", "currentModeId": "a", "availableModes": [{"id": "a"}]},
        {"sessionUpdate": "session_info", "title": "T"},
        {"sessionUpdate": "compaction", "compactionId": "k", "status": "running"},
        {"sessionUpdate": "compaction", "compactionId": "k", "status": "done", "summary": "s"},
        {"sessionUpdate": "_vendor_thing", "x": 1},
        {"local_prompt": "my prompt\nline 2"},
        {"turn_end": "end_turn"},
    ]
)
updates = st.lists(st.one_of(chunk, chunk, message, tool_call, plan, others), max_size=25)


@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(updates)
def test_incremental_edits_equal_a_full_render(plain_nvim, seq):
    result = plain_nvim.exec_lua(CHECK, seq)
    assert result["lines"] == result["expected"]
    assert result["count"] == len(result["lines"])
    assert result["folds"] == result["expected_folds"]
    assert result["starts_ok"] is True
