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
-- answers them per row; the folds the chat makes (all_folds, and folds_around the last rows).
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
for i = 1, view.n do
  if view:row_of(i) ~= row then starts_ok = false end
  row = row + view.nlines[i]
end
table.sort(ranges, function(a, b) return a[1] < b[1] end)
local from, to, around = view:folds_around(math.max(0, #lines - 3), #lines)
local around_ok = from <= math.max(0, #lines - 3) and to == #lines
for _, f in ipairs(ranges) do
  local inside = f[1] >= from and f[2] < to
  local listed = false
  for _, g in ipairs(around) do
    if g[1] == f[1] and g[2] == f[2] then listed = true end
  end
  if inside ~= listed then around_ok = false end
end
return {lines = lines, expected = view:render_all(), count = view:line_count(),
        folds = folds, expected_folds = expected_folds, starts_ok = starts_ok,
        all_folds = view:all_folds(), ranges = ranges, around_ok = around_ok}
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
    assert result["all_folds"] == result["ranges"]
    assert result["around_ok"] is True


BUFFER_CHECK = """
local updates = ...
local chatmod = require('acpls.chat')
local cv = require('acpls.chatview')
_G.BUF_CHECKS = (_G.BUF_CHECKS or 0) + 1
local sid = 'sess-buf-' .. BUF_CHECKS -- one Neovim runs every example: a fresh chat each
local chat = chatmod.continue_session(1, sid, '', 'new')
-- The same sequence on a bare view, its edits applied to a mirror of lines and highlight groups.
local view = cv.new()
local mirror, groups = {}, {}
local function mirror_edits(edits)
  for _, e in ipairs(edits) do
    local gs = {}
    for i = 1, #e.lines do gs[i] = false end
    for _, h in ipairs(e.hls) do
      local text = e.lines[h[1] + 1]
      if text and text ~= '' then gs[h[1] + 1] = h[2] end
    end
    for _ = e.first + 1, e.last do
      table.remove(mirror, e.first + 1); table.remove(groups, e.first + 1)
    end
    for i, l in ipairs(e.lines) do
      table.insert(mirror, e.first + i, l); table.insert(groups, e.first + i, gs[i])
    end
  end
end
mirror_edits({view:header_edit()})
mirror_edits(view:note({'_Continued from a checkpoint: a new conversation._'}, 'AcplsChatMeta'))
for _, u in ipairs(updates) do
  if u.local_prompt then
    mirror_edits(view:user_prompt(u.local_prompt))
    chat:change(function(v) return v:user_prompt(u.local_prompt) end)
  elseif u.turn_end then
    mirror_edits(view:turn_ended(u.turn_end))
    chat:change(function(v) return v:turn_ended(u.turn_end) end)
  else
    mirror_edits(view:apply(u))
    chatmod.on_session_update({sessionId = sid, update = u}, {client_id = 1})
  end
end
local applied = vim.wait(10000, function() return chat.inbox.head > chat.inbox.tail end, 1)
local buf = chat.out_buf
local lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
local got_groups = {}
for i = 1, #lines do got_groups[i] = false end
local ns = vim.api.nvim_create_namespace('acpls.chat')
for _, m in ipairs(vim.api.nvim_buf_get_extmarks(buf, ns, 0, -1, {details = true})) do
  got_groups[m[2] + 1] = m[4].hl_group
end
return {applied = applied, lines = lines, mirror = mirror, groups = got_groups,
        mirror_groups = groups, view_lines = chat.view:render_all()}
"""


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(updates)
def test_the_chat_buffer_written_in_batches_equals_the_view(plain_nvim, seq):
    """Updates wait in the chat's inbox and reach the buffer in batched writes (regions merged,
    written top down); prompts and turn ends rendered directly land after the updates received
    before them. The buffer and its highlights equal those of the edits applied one by one."""
    result = plain_nvim.exec_lua(BUFFER_CHECK, seq)
    assert result["applied"] is True
    assert result["lines"] == result["mirror"]
    assert result["lines"] == result["view_lines"]
    assert result["groups"] == result["mirror_groups"]


CHUNKED = """
local n = ...
local cv = require('acpls.chatview')
local streamed, whole = cv.new(), cv.new()
local pieces = {}
for i = 1, n do
  local text = ('part %d%s'):format(i, i % 7 == 0 and '\\nnext ' or ' ')
  pieces[i] = text
  streamed:apply({sessionUpdate = 'message_chunk', role = 'thought', messageId = 'm',
                  content = {type = 'text', text = text}})
end
local text = table.concat(pieces)
whole:apply({sessionUpdate = 'message', role = 'thought', messageId = 'm',
             content = {{type = 'text', text = text}}})
-- A message that came whole, then chunks: its last line is rendered once, when the first comes.
local lines = {}
local later = cv.new()
cv.apply_edits(lines, later:apply({sessionUpdate = 'message', role = 'user', messageId = 'u',
                                   content = {{type = 'text', text = 'a\\nb'}, {type = 'text', text = 'c'}}}))
cv.apply_edits(lines, later:apply({sessionUpdate = 'message_chunk', role = 'user', messageId = 'u',
                                   content = {type = 'text', text = 'd\\ne'}}))
cv.apply_edits(lines, later:apply({sessionUpdate = 'message_chunk', role = 'user', messageId = 'u',
                                   content = {type = 'text', text = 'f'}}))
local _, said = later:user_message_at(later:line_count() - 1)
local block, start = later:block_at(later:line_count() - 1)
return {streamed = streamed:render_all(), whole = whole:render_all(),
        folds = streamed:all_folds(), whole_folds = whole:all_folds(),
        lines = lines, rendered = later:render_all(), said = said,
        block = block, start = start}
"""


def test_a_message_from_many_chunks_equals_the_same_text_sent_whole(plain_nvim):
    """A streamed message keeps its chunks in a list (no copy of the whole text per chunk): its
    lines, folds and text are those of the same text in one `message`."""
    r = plain_nvim.exec_lua(CHUNKED, 500)
    assert r["streamed"] == r["whole"]
    assert r["folds"] == r["whole_folds"] and len(r["folds"]) == 1
    assert r["lines"] == r["rendered"] == ["", "## You", "", "a", "bcd", "ef"]
    assert r["said"] == "a\nbcd\nef"
    assert r["block"] == {"index": 4, "kind": "message", "role": "user", "nlines": 4}
    assert r["start"] == 2


TABLES_KEPT = """
local path = ...
local cv = require('acpls.chatview')
local view = cv.new()
for i = 0, 1999 do
  local k = i % 4
  if k == 2 then
    view:apply({sessionUpdate = 'tool_call', toolCall = {toolCallId = 'c' .. i, title = 'Read ' .. i,
                kind = 'read', status = 'completed', content = {}, locations = {}}})
  else
    local role = ({[0] = 'user', [1] = 'thought', [3] = 'agent'})[k]
    view:apply({sessionUpdate = 'message', role = role, messageId = 'm' .. i,
                content = {{type = 'text', text = role .. ' ' .. i .. '\\nline'}}})
  end
end
-- Tables reachable from the view.
local seen, count = {}, 0
local function walk(v)
  if type(v) ~= 'table' or seen[v] then return end
  seen[v] = true
  count = count + 1
  for k, x in pairs(v) do walk(k); walk(x) end
end
walk(view)
return {count = count, blocks = view.n}
"""


def test_the_view_keeps_no_table_per_message_tool_call_or_heading(plain_nvim):
    """The collector walks what the view keeps (bench/README.md, E5): 2,000 replayed messages and
    tool calls (with their headings) leave the view's columns, maps and a few shared tables, not
    a table per block, per message's parts or per decoded tool call."""
    r = plain_nvim.exec_lua(TABLES_KEPT)
    assert r["blocks"] == 2 + 2000 + 1000
    assert r["count"] < 60
