-- The chat transcript as lines, built from normalised session updates (editors/protocol.md 5.4).
--
-- Pure: no buffer or window access. `View:apply(update)` returns line edits (replace rows
-- [first, last) with `lines`) that the chat module applies to its buffer, so a streamed chunk costs
-- one small edit instead of a redraw of the whole chat. The view is a list of blocks; each block knows
-- how many lines it has, so a block's position is the sum of the blocks before it. Those sums are
-- kept (`start[i]`, valid for the first `valid_upto` blocks) and the total too, so an edit near
-- the end (almost all of them: streamed text, new blocks) costs O(1) however long the chat is.
local M = {}

local View = {}
View.__index = View

M.status_icons = {
  pending = '○',
  in_progress = '◐',
  paused = '◑',
  completed = '✓',
  failed = '✗',
  cancelled = '⊘',
}

local status_hl = {
  pending = 'AcplsToolPending',
  in_progress = 'AcplsToolRunning',
  paused = 'AcplsToolPending',
  completed = 'AcplsToolCompleted',
  failed = 'AcplsToolFailed',
  cancelled = 'AcplsToolFailed',
}

local plan_marks = { pending = '[ ]', in_progress = '[~]', completed = '[x]' }
local plan_hl = {
  pending = 'AcplsPlanPending',
  in_progress = 'AcplsPlanInProgress',
  completed = 'AcplsPlanCompleted',
}

local MAX_TOOL_TEXT_LINES = 12

-- vim.split(text, '\n', { plain = true }) without its iterator: a long load splits every
-- message, and vim.split's closures kept that path out of the JIT (14% of a load's samples).
local function split(text)
  local out, n, start = {}, 0, 1
  while true do
    local nl = text:find('\n', start, true)
    n = n + 1
    if not nl then
      out[n] = text:sub(start)
      return out
    end
    out[n] = text:sub(start, nl - 1)
    start = nl + 1
  end
end

local function str(v)
  return type(v) == 'string' and v or nil
end

--- One content block (ACP ContentBlock) as text.
---@param block table?
---@return string
function M.content_text(block)
  if type(block) ~= 'table' then
    return ''
  end
  local t = block.type
  if t == 'text' then
    return str(block.text) or ''
  elseif t == 'resource_link' then
    local label = str(block.name) or str(block.title) or str(block.uri) or 'link'
    return ('[%s](%s)'):format(label, str(block.uri) or '')
  elseif t == 'resource' then
    local res = type(block.resource) == 'table' and block.resource or {}
    return ('[resource %s]'):format(str(res.uri) or '?')
  elseif t == 'image' or t == 'audio' then
    return ('[%s %s]'):format(t, str(block.mimeType) or '')
  end
  return ('[%s]'):format(tostring(t or 'content'))
end

--- The session's state (ACP v2 `state_update`) as the chat header says it.
local state_labels = { running = 'running', idle = 'idle', requires_action = 'needs you' }
function M.state_label(state)
  return state_labels[state] or tostring(state)
end

-- The blocks are kept as columns: one array per field, a block being its index (1, 2, ...), and
-- a message's text as one string (an array of its chunks while it streams). A table per block,
-- per message's parts and per tool call kept ~1 KB of Lua heap an update (19 MiB after a 20,000-
-- update load), and LuaJIT's collector walks all of it in steps taken inside whatever allocates
-- next: JSON decoding of the next updates, ahead of the user's keys (bench/README.md, E5).
function M.new()
  local self = setmetatable({
    n = 0, -- blocks
    kind = {}, ---@type string[] header, plan, heading, message, tool, note, compaction
    nlines = {}, ---@type integer[]
    start = {}, ---@type integer[] first row, right for blocks 1..valid_upto
    role = {}, ---@type table<integer, string> message: user, agent or thought
    text = {}, ---@type table<integer, string|string[]> message: its text, or its chunks in order
    last = {}, ---@type table<integer, string> message: its last line as rendered (nil: not kept)
    static = {}, ---@type table<integer, string[]> heading, note, compaction: their lines
    head = {}, ---@type table<integer, string> tool: its line (icon, kind, title, status)
    head_hl = {}, ---@type table<integer, string>
    body = {}, ---@type table<integer, table> tool: its locations and content, when it has any
    children = {}, ---@type table<integer, table[]> tool: its sub-agent's calls
    children_row = {}, ---@type table<integer, integer> tool: the row of their summary in it
    by_msg = {}, ---@type table<string, integer> messageId (or role) -> block
    by_tool = {}, ---@type table<string, integer|table> toolCallId -> block, or a sub-agent's call
    by_key = {}, ---@type table<string, integer> header, plan, compaction:<id> -> block
    plan_entries = {},
    session = {
      modes = nil,
      configOptions = nil,
      availableCommands = {},
      title = nil,
      state = nil,
      usage = nil,
      agent = nil,
      sessionId = nil,
      followPaused = false,
    },
    last_role = nil, ---@type string? role of the most recent item block (for headings)
    total = 0, -- lines of all blocks
    valid_upto = 0, -- start[1..valid_upto] are right
  }, View)
  self.by_key.header = self:_add('header')
  self.by_key.plan = self:_add('plan')
  return self
end

-- A new block of no lines at the end; its index.
function View:_add(kind)
  local i = self.n + 1
  self.n = i
  self.kind[i], self.nlines[i] = kind, 0
  if self.valid_upto == i - 1 then
    self.start[i] = self.total
    self.valid_upto = i
  end
  return i
end

-- A block's line count changed: the blocks after it start elsewhere now.
function View:_set_nlines(i, n)
  local delta = n - self.nlines[i]
  if delta ~= 0 then
    self.nlines[i] = n
    self.total = self.total + delta
    if i < self.valid_upto then
      self.valid_upto = i
    end
  end
end

--- Row where block `i` starts.
function View:row_of(i)
  local start, nlines = self.start, self.nlines
  if i > self.valid_upto then
    local j = self.valid_upto
    if j == 0 then
      start[1] = 0
      j = 1
    end
    for k = j + 1, i do
      start[k] = start[k - 1] + nlines[k - 1]
    end
    self.valid_upto = i
  end
  return start[i]
end

--- The block at 0-based `row` (any kind) and its first row, by binary search; nil past the end.
function View:any_block_at(row)
  local n, start, nlines = self.n, self.start, self.nlines
  if row < 0 or row >= self.total or n == 0 then
    return nil
  end
  self:row_of(n)
  local lo, hi = 1, n
  while lo < hi do
    local mid = math.floor((lo + hi + 1) / 2)
    if start[mid] <= row then
      lo = mid
    else
      hi = mid - 1
    end
  end
  -- Blocks of no lines share their start with the next one: take the one that has the row.
  while lo < n and nlines[lo] == 0 do
    lo = lo + 1
  end
  return lo, start[lo]
end

--- The rows (0-based, inclusive) block `i` folds when it starts at `start`: a thought's text, a
--- tool call's sub-agent calls; nil for any other block.
function View:fold_rows(i, start)
  local kind, n = self.kind[i], self.nlines[i]
  if kind == 'message' and self.role[i] == 'thought' and n > 1 then
    return start + 1, start + n - 1
  elseif kind == 'tool' and self.children_row[i] then
    return start + self.children_row[i], start + n - 1
  end
  return nil
end

--- The fold level of 0-based `row` as a foldexpr would give it ('>1', '1' or '0').
function View:fold_level(row)
  local i, start = self:any_block_at(row)
  if not i then
    return '0'
  end
  local first, last = self:fold_rows(i, start)
  if not first then
    return '0'
  elseif row == first then
    return '>1'
  elseif row > first and row <= last then
    return '1'
  end
  return '0'
end

--- The folds ({first, last}, 0-based rows) of the blocks with rows in [lo, hi) and of the block
--- with rows just above and just below them, and the rows [from, to) those blocks cover. The
--- neighbours: Neovim's nvim_buf_set_lines can leave what is left of a rewritten block's fold on
--- the rows after it. Rows only `appended` at the end rewrote no block: no neighbour then.
---@param appended boolean?
---@return integer from, integer to, table[] folds
function View:folds_around(lo, hi, appended)
  local folds, start, nlines = {}, self.start, self.nlines
  if self.total == 0 then
    return 0, 0, folds
  end
  local i = self:any_block_at(math.max(0, math.min(lo, self.total - 1)))
  if not appended then
    i = i - 1
    while i > 1 and nlines[i] == 0 do
      i = i - 1
    end
  end
  i = math.max(i, 1)
  local from, to, below = start[i], start[i], 0
  for j = i, self.n do
    if start[j] >= hi and nlines[j] > 0 then
      below = below + 1
      if below > 1 then
        break
      end
    end
    local first, last = self:fold_rows(j, start[j])
    if first then
      table.insert(folds, { first, last })
    end
    to = start[j] + nlines[j]
  end
  return from, to, folds
end

--- Every fold ({first, last}, 0-based rows), top down.
function View:all_folds()
  local folds, row = {}, 0
  for i = 1, self.n do
    local first, last = self:fold_rows(i, row)
    if first then
      table.insert(folds, { first, last })
    end
    row = row + self.nlines[i]
  end
  return folds
end

-- A message's text, whole.
function View:_text(i)
  local t = self.text[i]
  return type(t) == 'table' and table.concat(t) or t or ''
end

--- The user message at or above 0-based `row`: its ordinal among the user messages (the turn it
--- started) and its text; nil above the first.
---@param row integer
---@return integer? n
---@return string? text
function View:user_message_at(row)
  local start, n, found, text = 0, 0, nil, nil
  for i = 1, self.n do
    if start > row then
      break
    end
    if self.kind[i] == 'message' and self.role[i] == 'user' then
      n = n + 1
      found, text = n, self:_text(i)
    end
    start = start + self.nlines[i]
  end
  return found, text
end

--- The message or tool call at 0-based `row` ({index, kind, role, nlines}) and its first row; nil
--- on anything else.
---@param row integer
function View:block_at(row)
  local i, start = self:any_block_at(row)
  local kind = i and self.kind[i]
  if kind ~= 'message' and kind ~= 'tool' then
    return nil
  end
  return { index = i, kind = kind, role = self.role[i], nlines = self.nlines[i] }, start
end

function View:line_count()
  return self.total
end

-- Blocks whose lines come from their state; the others keep the lines they were given.
local rendered_kinds = { header = true, plan = true, message = true, tool = true }

-- Replace all lines of block `i` with `lines` (and highlights), returning the edit.
function View:_replace(i, lines, hls)
  if not rendered_kinds[self.kind[i]] then
    self.static[i] = lines
  end
  local first = self:row_of(i)
  local edit = { first = first, last = first + self.nlines[i], lines = lines, hls = hls or {} }
  self:_set_nlines(i, #lines)
  return edit
end

-- Appends a new block of `kind` at the end; returns the edit and the block.
function View:_append(kind, lines, hls)
  local i = self:_add(kind)
  return self:_replace(i, lines, hls), i
end

---------------------------------------------------------------------------------------------------
-- Rendering of each block kind.

function View:render_header()
  local s = self.session
  local title = s.title or 'acpls chat'
  local parts = {}
  if s.agent then
    table.insert(parts, s.agent)
  end
  local mode = M.mode_name(s)
  if mode then
    table.insert(parts, 'mode: ' .. mode)
  end
  if s.state then
    table.insert(parts, M.state_label(s.state))
  end
  local meter = M.usage_text(s.usage)
  if meter then
    table.insert(parts, meter)
  end
  if s.followPaused then
    table.insert(parts, 'follow paused')
  end
  local lines = { '# ' .. title }
  if #parts > 0 then
    table.insert(lines, '_' .. table.concat(parts, ' · ') .. '_')
  end
  return lines, { { 0, 'AcplsChatUser' }, { 1, 'AcplsChatMeta' } }
end

function View:render_plan()
  local entries = self.plan_entries
  if #entries == 0 then
    return {}, {}
  end
  local lines, hls = { '', '## Plan' }, { { 1, 'AcplsChatUser' } }
  for _, e in ipairs(entries) do
    local status = str(e.status) or 'pending'
    local mark = plan_marks[status] or ('[' .. status .. ']')
    local prio = e.priority == 'high' and ' (!)' or ''
    local text = (str(e.content) or ''):gsub('\n', ' ')
    table.insert(lines, ('- %s %s%s'):format(mark, text, prio))
    table.insert(hls, { #lines - 1, plan_hl[status] or 'AcplsPlanPending' })
  end
  return lines, hls
end

local function message_prefix(role)
  return role == 'thought' and '> ' or ''
end

function View:render_message(i)
  local role = self.role[i]
  local prefix = message_prefix(role)
  local thought = role == 'thought'
  local lines, hls = { '' }, {}
  if thought then
    lines[2], hls[1] = '> _Thinking_', { 1, 'AcplsChatThought' }
  end
  -- Its lines found in place (as split does, without a table of them: a load renders every
  -- message, and what it allocates the collector sweeps inside the next decode).
  local text, pos = self:_text(i), 1
  repeat
    local nl = text:find('\n', pos, true)
    local l = text:sub(pos, nl and nl - 1 or -1)
    local n = #lines
    lines[n + 1] = thought and prefix .. l or l
    if thought then
      hls[#hls + 1] = { n, 'AcplsChatThought' }
    end
    pos = nl and nl + 1
  until not nl
  return lines, hls
end

local function count_lines(text)
  if type(text) ~= 'string' or text == '' then
    return 0
  end
  local n = select(2, text:gsub('\n', '\n'))
  if text:sub(-1) ~= '\n' then
    n = n + 1
  end
  return n
end

--- Lines describing one tool-call content item.
---@param item table
---@param terminal_info fun(id: string): string?
---@return string[]
local function tool_content_lines(item, terminal_info)
  if type(item) ~= 'table' then
    return {}
  end
  if item.type == 'content' then
    local text = M.content_text(item.content)
    local out = {}
    local lines = split(text)
    for i, l in ipairs(lines) do
      if i > MAX_TOOL_TEXT_LINES then
        table.insert(out, ('    … %d more lines'):format(#lines - MAX_TOOL_TEXT_LINES))
        break
      end
      table.insert(out, '    ' .. l)
    end
    return out
  elseif item.type == 'diff' then
    if str(item.path) then
      return {
        ('  ✎ %s (+%d -%d)'):format(item.path, count_lines(item.newText), count_lines(item.oldText)),
      }
    end
    -- v2: one line per file change (`operation` add, delete, modify, move, copy, or custom).
    local out = {}
    for _, change in ipairs(type(item.changes) == 'table' and item.changes or {}) do
      if type(change) == 'table' then
        local path = str(change.path) or '?'
        if str(change.oldPath) then
          path = change.oldPath .. ' → ' .. path
        end
        local op = change.operation ~= nil and tostring(change.operation) or 'change'
        table.insert(out, ('  ✎ %s (%s)'):format(path, op))
      end
    end
    if #out == 0 then
      out = { '  ✎ diff' }
    end
    return out
  elseif item.type == 'terminal' then
    local id = tostring(item.terminalId or '?')
    local info = terminal_info(id)
    return { ('  ▣ terminal %s%s'):format(id, info and (': ' .. info) or '') }
  end
  return { ('  [%s]'):format(tostring(item.type or 'item')) }
end

local finished = { completed = true, failed = true, cancelled = true }


-- One line for a tool call: icon, kind, title, status; and its highlight group.
local function tool_line(tc, prefix)
  local status = str(tc.status) or 'pending'
  local icon = M.status_icons[status] or '◐'
  local kind = tc.kind ~= nil and tostring(tc.kind) or 'other'
  local title = (str(tc.title) or str(tc.name) or tostring(tc.toolCallId)):gsub('\n', ' ')
  return ('%s%s %s · %s · %s'):format(prefix, icon, kind, title, status), status_hl[status] or 'AcplsToolRunning'
end

local function nonempty(list)
  return type(list) == 'table' and next(list) ~= nil and list or nil
end

-- Keep of tool call `tc` what block `i` shows: its line, and its locations and content when it
-- has any (a terminal's line is rendered anew when the terminal changes); not the decoded table.
function View:_set_tool(i, tc)
  -- A sub-agent's tool call whose parent is not in this chat stands alone, marked.
  self.head[i], self.head_hl[i] = tool_line(tc, tc.parentToolCallId ~= nil and '  ↳ ' or '')
  local locations, content = nonempty(tc.locations), nonempty(tc.content)
  self.body[i] = (locations or content) and { locations = locations, content = content } or nil
end

-- A sub-agent's tool call, shown in its parent's block: its line and whether it is running.
local function set_child(child, tc)
  child.line, child.hl = tool_line(tc, '    ↳ ')
  child.running = not finished[str(tc.status) or 'pending']
end

function View:render_tool(i, terminal_info)
  local lines = { '', self.head[i] }
  local hls = { { 1, self.head_hl[i] } }
  local body = self.body[i] or {}
  for _, loc in ipairs(body.locations or {}) do
    if type(loc) == 'table' and str(loc.path) then
      local line = type(loc.line) == 'number' and (':' .. loc.line) or ''
      table.insert(lines, ('  → %s%s'):format(loc.path, line))
      table.insert(hls, { #lines - 1, 'AcplsChatMeta' })
    end
  end
  for _, item in ipairs(body.content or {}) do
    vim.list_extend(lines, tool_content_lines(item, terminal_info))
  end
  -- Its sub-agent's tool calls, nested under it: a summary line, then one line each (folded,
  -- see View:subagent_ranges).
  local children = self.children[i] or {}
  self.children_row[i] = nil
  if #children > 0 then
    local running = 0
    for _, child in ipairs(children) do
      if child.running then
        running = running + 1
      end
    end
    local summary = ('  ▸ sub-agent: %d tool call%s%s'):format(
      #children,
      #children == 1 and '' or 's',
      running > 0 and (', ' .. running .. ' running') or ''
    )
    table.insert(lines, summary)
    table.insert(hls, { #lines - 1, 'AcplsChatMeta' })
    self.children_row[i] = #lines - 1
    for _, child in ipairs(children) do
      table.insert(lines, child.line)
      table.insert(hls, { #lines - 1, child.hl })
    end
  end
  return lines, hls
end

---------------------------------------------------------------------------------------------------
-- Updates.

-- A heading's lines and highlights never change: one table each, shared by every heading.
local headings = {
  user = { lines = { '', '## You' }, hls = { { 1, 'AcplsChatUser' } } },
  agent = { lines = { '', '## Agent' }, hls = { { 1, 'AcplsChatAgent' } } },
}

-- Before an item of `role` ('user' or 'agent'), add a heading when the speaker changes.
function View:_heading(role, edits)
  local side = role == 'user' and 'user' or 'agent'
  if self.last_role ~= side then
    self.last_role = side
    local h = headings[side]
    table.insert(edits, (self:_append('heading', h.lines, h.hls)))
  end
end

-- The user's own prompt is shown as soon as it is sent; the first user message the agent echoes in
-- that turn takes its place instead of showing the prompt twice.
function View:_adopt_user(id, role)
  local i = self.pending_user
  if role ~= 'user' or not i then
    return nil
  end
  self.pending_user = nil
  self.by_msg[id] = i
  return i
end

-- Render message `i` (its text just set) into the edits, in place; its last line is kept for the
-- chunks that may follow (`streamed`), not for a message that came whole.
function View:_render_message_edit(i, edits, streamed)
  local lines, hls = self:render_message(i)
  self.last[i] = streamed and lines[#lines] or nil
  table.insert(edits, self:_replace(i, lines, hls))
end

-- A new message block at the end, after its heading.
function View:_new_message(id, role, text, edits, streamed)
  self:_heading(role, edits)
  local i = self:_add('message')
  self.role[i], self.text[i] = role, text
  if id then
    self.by_msg[id] = i
  end
  self:_render_message_edit(i, edits, streamed)
  return i
end

function View:_message_chunk(u, edits)
  local role = str(u.role) or 'agent'
  local id = tostring(u.messageId or role)
  local text = M.content_text(u.content)
  local i = self.by_msg[id]
  if not i then
    i = self:_adopt_user(id, role)
    if i then
      self.text[i] = text
      self:_render_message_edit(i, edits, true)
      return
    end
    self:_new_message(id, role, text, edits, true)
    return
  end
  -- The block's last line before the chunk: not kept for a message that came whole (rendered
  -- once, here, when a chunk follows it).
  local last = self.last[i] or (self:render_message(i))[self.nlines[i]]
  -- The text grows as a list of its chunks (no copy of the whole text per chunk).
  local t = self.text[i]
  if type(t) == 'table' then
    t[#t + 1] = text
  else
    self.text[i] = { t or '', text }
  end
  -- Fast path: only the block's last line and the new ones change. The block keeps the role it was
  -- created with (a later chunk naming another role for the same message does not restyle it).
  role = self.role[i]
  local pieces = split(text)
  local prefix = message_prefix(role)
  local first = self:row_of(i) + self.nlines[i] - 1
  local lines, hls = { last .. pieces[1] }, {}
  for k = 2, #pieces do
    table.insert(lines, prefix .. pieces[k])
  end
  if role == 'thought' then
    for k = 1, #lines do
      table.insert(hls, { k - 1, 'AcplsChatThought' })
    end
  end
  self.last[i] = lines[#lines]
  self:_set_nlines(i, self.nlines[i] + #lines - 1)
  table.insert(edits, { first = first, last = first + 1, lines = lines, hls = hls })
end

--- Show the prompt the user just sent.
---@param text string
---@return table[] edits
function View:user_prompt(text)
  local edits = {}
  self.pending_user = self:_new_message(nil, 'user', text, edits, true)
  return edits
end

function View:_message(u, edits)
  local role = str(u.role) or 'agent'
  local id = tostring(u.messageId or role)
  local content = type(u.content) == 'table' and u.content or {}
  local text
  if #content == 1 then
    text = M.content_text(content[1]) -- the decoded string itself: no copy
  else
    local parts = {}
    for k, c in ipairs(content) do
      parts[k] = M.content_text(c)
    end
    text = table.concat(parts)
  end
  local i = self.by_msg[id] or self:_adopt_user(id, role)
  if not i then
    self:_new_message(id, role, text, edits)
    return
  end
  self.text[i] = text
  self:_render_message_edit(i, edits)
end

function View:_tool_call(u, edits, terminal_info)
  local tc = type(u.toolCall) == 'table' and u.toolCall or {}
  local id = tostring(tc.toolCallId)
  local found = self.by_tool[id]
  if type(found) == 'table' then
    -- A sub-agent's call lives in its parent's block: re-render the parent.
    set_child(found, tc)
    local lines, hls = self:render_tool(found.parent, terminal_info)
    table.insert(edits, self:_replace(found.parent, lines, hls))
    return
  end
  local parent = tc.parentToolCallId ~= nil and self.by_tool[tostring(tc.parentToolCallId)] or nil
  if not found and type(parent) == 'number' then
    local child = { parent = parent }
    set_child(child, tc)
    self.by_tool[id] = child
    self.children[parent] = self.children[parent] or {}
    table.insert(self.children[parent], child)
    local lines, hls = self:render_tool(parent, terminal_info)
    table.insert(edits, self:_replace(parent, lines, hls))
    return
  end
  if not found then
    self:_heading('agent', edits)
    found = self:_add('tool')
    self.by_tool[id] = found
  end
  self:_set_tool(found, tc)
  local lines, hls = self:render_tool(found, terminal_info)
  table.insert(edits, self:_replace(found, lines, hls))
end

--- A line of text at the end of the chat (notices, turn ends, errors).
---@param lines string[]
---@param hl string?
function View:note(lines, hl)
  local all, hls = { '' }, {}
  for k, l in ipairs(lines) do
    all[k + 1] = l
    hls[k] = { k, hl or 'AcplsChatMeta' }
  end
  return { (self:_append('note', all, hls)) }
end

--- The turn ended: note why, and stop waiting for the agent to echo the prompt.
---@param stop_reason string
---@param tokens table? the agent's token counts for the turn (`acpls.prompt`'s `usage`)
function View:turn_ended(stop_reason, tokens)
  self.pending_user = nil
  local counted = M.tokens_text(tokens)
  return self:note({ ('_turn ended: %s%s_'):format(stop_reason, counted and (' · ' .. counted) or '') })
end

--- Re-render the header (after session state changed).
function View:header_edit()
  local lines, hls = self:render_header()
  return self:_replace(self.by_key.header, lines, hls)
end

--- Re-render the tool calls that show terminal `terminal_id` (its command or exit changed).
function View:refresh_terminal(terminal_id, terminal_info)
  local edits = {}
  for i = 1, self.n do
    local body = self.kind[i] == 'tool' and self.body[i]
    for _, item in ipairs(body and body.content or {}) do
      if type(item) == 'table' and item.type == 'terminal' and tostring(item.terminalId) == terminal_id then
        local lines, hls = self:render_tool(i, terminal_info)
        table.insert(edits, self:_replace(i, lines, hls))
        break
      end
    end
  end
  return edits
end

-- A compaction of the agent's context: one block per compaction, its status updated in place.
function View:_compaction(u, edits)
  local id = 'compaction:' .. tostring(u.compactionId)
  local lines = { '', ('> _context compaction: %s_'):format(tostring(u.status or '?')) }
  if str(u.summary) then
    for _, l in ipairs(split(u.summary)) do
      table.insert(lines, '> ' .. l)
    end
  end
  local i = self.by_key[id]
  local hls = { { 1, 'AcplsChatMeta' } }
  if i then
    table.insert(edits, self:_replace(i, lines, hls))
  else
    local edit
    edit, self.by_key[id] = self:_append('compaction', lines, hls)
    table.insert(edits, edit)
  end
end

--- Apply one normalised session update.
---@param u table the `update` of an `acpls/sessionUpdate`
---@param terminal_info? fun(id: string): string? a short description of a terminal
---@param edits? table[] an empty list to fill and return (the chat reuses one: a list an update
--- was garbage the collector sweeps inside the next decode)
---@return table[] edits
function View:apply(u, terminal_info, edits)
  terminal_info = terminal_info or function() end
  edits = edits or {}
  local kind = u.sessionUpdate
  local s = self.session
  if kind == 'message_chunk' then
    self:_message_chunk(u, edits)
  elseif kind == 'message' then
    self:_message(u, edits)
  elseif kind == 'tool_call' then
    self:_tool_call(u, edits, terminal_info)
  elseif kind == 'plan' then
    self.plan_entries = type(u.entries) == 'table' and u.entries or {}
    local lines, hls = self:render_plan()
    table.insert(edits, self:_replace(self.by_key.plan, lines, hls))
  elseif kind == 'available_commands' then
    s.availableCommands = type(u.availableCommands) == 'table' and u.availableCommands or {}
  elseif kind == 'modes' then
    s.modes = { currentModeId = u.currentModeId, availableModes = u.availableModes or {} }
    table.insert(edits, self:header_edit())
  elseif kind == 'config_options' then
    s.configOptions = type(u.configOptions) == 'table' and u.configOptions or {}
    table.insert(edits, self:header_edit()) -- under ACP v2 the mode is one of them
  elseif kind == 'session_info' then
    if str(u.title) then
      s.title = u.title
    end
    table.insert(edits, self:header_edit())
  elseif kind == 'usage' then
    s.usage = u
    table.insert(edits, self:header_edit())
  elseif kind == 'state' then
    s.state = str(u.state) or tostring(u.state)
    table.insert(edits, self:header_edit())
    if type(u.error) == 'table' or str(u.error) then
      local msg = type(u.error) == 'table' and (str(u.error.message) or vim.inspect(u.error)) or u.error
      vim.list_extend(edits, self:note({ '**error**: ' .. msg }, 'AcplsToolFailed'))
    end
  elseif kind == 'notice' then
    local line = ('> **%s**: %s'):format(tostring(u.severity or 'info'), tostring(u.title or ''))
    local lines = { line }
    if str(u.description) then
      for _, l in ipairs(split(u.description)) do
        table.insert(lines, '> ' .. l)
      end
    end
    vim.list_extend(edits, self:note(lines, 'AcplsChatNotice'))
  elseif kind == 'compaction' then
    self:_compaction(u, edits)
  elseif kind == 'auto_permission' then
    local tc = type(u.toolCall) == 'table' and u.toolCall or {}
    vim.list_extend(
      edits,
      self:note({
        ('_acpls answered %s (%s) for: %s_'):format(
          tostring(u.optionKind or '?'),
          tostring(u.optionId or '?'),
          tostring(tc.title or tc.toolCallId or '?')
        ),
      })
    )
  else
    -- An update acpls does not know: shown generically, never dropped silently.
    vim.list_extend(edits, self:note({ ('_update: %s_'):format(tostring(kind)) }))
  end
  return edits
end

--- Every line, rendered from scratch from the blocks' state. The buffer built by the edits of
--- `apply` always equals this (the tests check it); nothing calls it on a hot path.
---@param terminal_info? fun(id: string): string?
---@return string[]
function View:render_all(terminal_info)
  terminal_info = terminal_info or function() end
  local out = {}
  for i = 1, self.n do
    local kind, lines = self.kind[i], nil
    if kind == 'header' then
      lines = self.nlines[i] > 0 and self:render_header() or {}
    elseif kind == 'plan' then
      lines = self:render_plan()
    elseif kind == 'message' then
      lines = self:render_message(i)
    elseif kind == 'tool' then
      lines = self:render_tool(i, terminal_info)
    else
      lines = self.static[i] or {}
    end
    vim.list_extend(out, lines)
  end
  return out
end

--- Where each tool call's nested sub-agent calls are: {summary_row, last_row} (0-based,
--- inclusive), in order; folded like thoughts, so they start collapsed.
function View:subagent_ranges()
  local ranges, row = {}, 0
  for i = 1, self.n do
    local at = self.kind[i] == 'tool' and self.children_row[i]
    if at then
      table.insert(ranges, { row + at, row + self.nlines[i] - 1 })
    end
    row = row + self.nlines[i]
  end
  return ranges
end

--- Where each folded thought is: {first_row, last_row} (0-based, inclusive), in order.
function View:thought_ranges()
  local ranges, row = {}, 0
  for i = 1, self.n do
    if self.kind[i] == 'message' and self.role[i] == 'thought' and self.nlines[i] > 1 then
      table.insert(ranges, { row + 1, row + self.nlines[i] - 1 })
    end
    row = row + self.nlines[i]
  end
  return ranges
end

--- Apply edits to a plain list of lines (for tests and for checking the buffer stays in step).
---@param lines string[]
---@param edits table[]
function M.apply_edits(lines, edits)
  for _, e in ipairs(edits) do
    for _ = e.first + 1, e.last do
      table.remove(lines, e.first + 1)
    end
    for i, l in ipairs(e.lines) do
      table.insert(lines, e.first + i, l)
    end
  end
  return lines
end

--- A config option's values, groups flattened (`Group: name`): `{ value, name, description }`.
---@param opt table
---@return table[]
function M.option_values(opt)
  local values = {}
  for _, o in ipairs(type(opt.options) == 'table' and opt.options or {}) do
    if type(o.options) == 'table' then
      for _, inner in ipairs(o.options) do
        local group = o.name and (o.name .. ': ') or ''
        local name = group .. (inner.name or tostring(inner.value))
        table.insert(values, { value = inner.value, name = name, description = str(inner.description) })
      end
    else
      table.insert(values, { value = o.value, name = o.name or tostring(o.value), description = str(o.description) })
    end
  end
  return values
end

--- A session's modes, `{ currentModeId, availableModes }`: v1's `modes`, else its config option of
--- category `mode` (ACP v2 has no modes; `acpls.setMode` sets that option). nil: it has none.
---@param s table the view's session
---@return table?
function M.session_modes(s)
  if s.modes then
    return s.modes
  end
  for _, o in ipairs(type(s.configOptions) == 'table' and s.configOptions or {}) do
    if o.category == 'mode' and str(o.currentValue) then
      local modes = {}
      for _, v in ipairs(M.option_values(o)) do
        table.insert(modes, { id = v.value, name = v.name, description = v.description })
      end
      return { currentModeId = o.currentValue, availableModes = modes }
    end
  end
  return nil
end

--- The session's current mode as the agent names it (its id when the agent does not list it), or
--- nil (the chat header, statusline()).
---@param s table the view's session
---@return string?
function M.mode_name(s)
  local modes = M.session_modes(s)
  local current = modes and str(modes.currentModeId)
  if not current then
    return nil
  end
  for _, m in ipairs(modes.availableModes or {}) do
    if m.id == current then
      return str(m.name) or current
    end
  end
  return current
end

-- How full the context window is when the user is warned (once per session), as in acpls.
M.WARN_AT = 0.8

--- The share of the context window in use (0..1), or nil without usable counts.
function M.usage_fraction(usage)
  if type(usage) ~= 'table' or type(usage.used) ~= 'number' or type(usage.size) ~= 'number' or usage.size <= 0 then
    return nil
  end
  return math.max(0, usage.used / usage.size)
end

--- `context 1200/200000 (1%) · 0.01 USD`, or nil.
function M.usage_text(usage)
  local share = M.usage_fraction(usage)
  if not share then
    return nil
  end
  local text = ('context %d/%d (%d%%)'):format(usage.used, usage.size, math.floor(share * 100 + 0.5))
  local cost = usage.cost
  if type(cost) == 'table' and type(cost.amount) == 'number' then
    text = text .. (' · %.2f %s'):format(cost.amount, tostring(cost.currency or ''))
  end
  return text
end

--- `1,234 tokens (1,000 in, 234 out)`, or nil.
function M.tokens_text(tokens)
  if type(tokens) ~= 'table' or type(tokens.totalTokens) ~= 'number' then
    return nil
  end
  local function n(v)
    local s = tostring(math.floor(v))
    return (s:reverse():gsub('(%d%d%d)', '%1,'):reverse():gsub('^,', ''))
  end
  local parts = {}
  for _, kw in ipairs({ { 'inputTokens', 'in' }, { 'outputTokens', 'out' }, { 'thoughtTokens', 'thought' } }) do
    if type(tokens[kw[1]]) == 'number' then
      table.insert(parts, n(tokens[kw[1]]) .. ' ' .. kw[2])
    end
  end
  return n(tokens.totalTokens) .. ' tokens' .. (#parts > 0 and (' (' .. table.concat(parts, ', ') .. ')') or '')
end

return M
