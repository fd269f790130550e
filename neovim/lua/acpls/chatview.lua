-- The chat transcript as lines, built from normalised session updates (editors/protocol.md 5.4).
--
-- Pure: no buffer or window access. `View:apply(update)` returns line edits (replace rows
-- [first, last) with `lines`) that the chat module applies to its buffer, so a streamed chunk costs
-- one small edit instead of a redraw of the whole chat. The view is a list of blocks; each block knows
-- how many lines it has, so a block's position is the sum of the blocks before it. Those sums are
-- kept (`block.start`, valid for the first `valid_upto` blocks) and the total too, so an edit near
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

function M.new()
  local self = setmetatable({
    blocks = {}, ---@type table[]
    by_key = {}, ---@type table<string, table>
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
    valid_upto = 0, -- blocks[1..valid_upto].start are right
  }, View)
  self:_add({ key = 'header', kind = 'header', nlines = 0 })
  self:_add({ key = 'plan', kind = 'plan', nlines = 0, entries = {} })
  return self
end

function View:_add(block)
  local n = #self.blocks
  table.insert(self.blocks, block)
  block.index = n + 1
  block.nlines = block.nlines or 0
  if self.valid_upto == n then
    block.start = self.total
    self.valid_upto = n + 1
  end
  self.total = self.total + block.nlines
  if block.key then
    self.by_key[block.key] = block
  end
  return block
end

-- A block's line count changed: the blocks after it start elsewhere now.
function View:_set_nlines(block, n)
  local delta = n - block.nlines
  if delta ~= 0 then
    block.nlines = n
    self.total = self.total + delta
    if block.index < self.valid_upto then
      self.valid_upto = block.index
    end
  end
end

--- Row where `block` starts.
function View:row_of(block)
  local blocks = self.blocks
  if block.index > self.valid_upto then
    local i = self.valid_upto
    if i == 0 then
      blocks[1].start = 0
      i = 1
    end
    for j = i + 1, block.index do
      local prev = blocks[j - 1]
      blocks[j].start = prev.start + prev.nlines
    end
    self.valid_upto = block.index
  end
  return block.start
end

--- The block at 0-based `row` (any kind) and its first row, by binary search; nil past the end.
function View:any_block_at(row)
  local blocks = self.blocks
  if row < 0 or row >= self.total or #blocks == 0 then
    return nil
  end
  self:row_of(blocks[#blocks])
  local lo, hi = 1, #blocks
  while lo < hi do
    local mid = math.floor((lo + hi + 1) / 2)
    if blocks[mid].start <= row then
      lo = mid
    else
      hi = mid - 1
    end
  end
  -- Blocks of no lines share their start with the next one: take the one that has the row.
  while lo < #blocks and blocks[lo].nlines == 0 do
    lo = lo + 1
  end
  return blocks[lo], blocks[lo].start
end

--- The rows (0-based, inclusive) `block` folds when it starts at `start`: a thought's text, a tool
--- call's sub-agent calls; nil for any other block.
function View:fold_rows(block, start)
  if block.kind == 'message' and block.role == 'thought' and block.nlines > 1 then
    return start + 1, start + block.nlines - 1
  elseif block.kind == 'tool' and block.children_row then
    return start + block.children_row, start + block.nlines - 1
  end
  return nil
end

--- The fold level of 0-based `row` as a foldexpr would give it ('>1', '1' or '0').
function View:fold_level(row)
  local b, start = self:any_block_at(row)
  if not b then
    return '0'
  end
  local first, last = self:fold_rows(b, start)
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
  local blocks, folds = self.blocks, {}
  if self.total == 0 then
    return 0, 0, folds
  end
  local i = self:any_block_at(math.max(0, math.min(lo, self.total - 1))).index
  if not appended then
    i = i - 1
    while i > 1 and blocks[i].nlines == 0 do
      i = i - 1
    end
  end
  i = math.max(i, 1)
  local from, to, below = blocks[i].start, blocks[i].start, 0
  for j = i, #blocks do
    local b = blocks[j]
    if b.start >= hi and b.nlines > 0 then
      below = below + 1
      if below > 1 then
        break
      end
    end
    local first, last = self:fold_rows(b, b.start)
    if first then
      table.insert(folds, { first, last })
    end
    to = b.start + b.nlines
  end
  return from, to, folds
end

--- Every fold ({first, last}, 0-based rows), top down.
function View:all_folds()
  local folds, row = {}, 0
  for _, b in ipairs(self.blocks) do
    local first, last = self:fold_rows(b, row)
    if first then
      table.insert(folds, { first, last })
    end
    row = row + b.nlines
  end
  return folds
end

--- The user message at or above 0-based `row`: its ordinal among the user messages (the turn it
--- started) and its text; nil above the first.
---@param row integer
---@return integer? n
---@return string? text
function View:user_message_at(row)
  local start, n, found, text = 0, 0, nil, nil
  for _, b in ipairs(self.blocks) do
    if start > row then
      break
    end
    if b.kind == 'message' and b.role == 'user' then
      n = n + 1
      found, text = n, table.concat(b.parts or {}, '')
    end
    start = start + b.nlines
  end
  return found, text
end

--- The message or tool call at 0-based `row` and its first row; nil on anything else.
---@param row integer
function View:block_at(row)
  local start = 0
  for _, b in ipairs(self.blocks) do
    if row < start + b.nlines then
      if b.kind == 'message' or b.kind == 'tool' then
        return b, start
      end
      return nil
    end
    start = start + b.nlines
  end
  return nil
end

function View:line_count()
  return self.total
end

-- Blocks whose lines come from their state; the others keep the lines they were given.
local rendered_kinds = { header = true, plan = true, message = true, tool = true }

-- Replace all lines of `block` with `lines` (and highlights), returning the edit.
function View:_replace(block, lines, hls)
  if not rendered_kinds[block.kind] then
    block.static = lines
  end
  local first = self:row_of(block)
  local edit = { first = first, last = first + block.nlines, lines = lines, hls = hls or {} }
  self:_set_nlines(block, #lines)
  return edit
end

-- Appends a new block at the end, returning the edit.
function View:_append(block, lines, hls)
  if not rendered_kinds[block.kind] then
    block.static = lines
  end
  local first = self:line_count()
  block.nlines = #lines
  self:_add(block)
  return { first = first, last = first, lines = lines, hls = hls or {} }
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

function View:render_plan(block)
  if #block.entries == 0 then
    return {}, {}
  end
  local lines, hls = { '', '## Plan' }, { { 1, 'AcplsChatUser' } }
  for _, e in ipairs(block.entries) do
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

function View:render_message(block)
  local prefix = message_prefix(block.role)
  local thought = block.role == 'thought'
  local lines, hls = { '' }, {}
  if thought then
    lines[2], hls[1] = '> _Thinking_', { 1, 'AcplsChatThought' }
  end
  for _, l in ipairs(split(table.concat(block.parts))) do
    local n = #lines
    lines[n + 1] = prefix .. l
    if thought then
      hls[#hls + 1] = { n, 'AcplsChatThought' }
    end
  end
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

-- One line for a tool call: icon, kind, title, status.
local function tool_line(tc, prefix)
  local status = str(tc.status) or 'pending'
  local icon = M.status_icons[status] or '◐'
  local kind = tc.kind ~= nil and tostring(tc.kind) or 'other'
  local title = (str(tc.title) or str(tc.name) or tostring(tc.toolCallId)):gsub('\n', ' ')
  return ('%s%s %s · %s · %s'):format(prefix, icon, kind, title, status), status_hl[status] or 'AcplsToolRunning'
end

function View:render_tool(block, terminal_info)
  local tc = block.toolCall
  -- A sub-agent's tool call whose parent is not in this chat stands alone, marked.
  local head, head_hl = tool_line(tc, tc.parentToolCallId ~= nil and '  ↳ ' or '')
  local lines = { '', head }
  local hls = { { 1, head_hl } }
  for _, loc in ipairs(type(tc.locations) == 'table' and tc.locations or {}) do
    if type(loc) == 'table' and str(loc.path) then
      local line = type(loc.line) == 'number' and (':' .. loc.line) or ''
      table.insert(lines, ('  → %s%s'):format(loc.path, line))
      table.insert(hls, { #lines - 1, 'AcplsChatMeta' })
    end
  end
  for _, item in ipairs(type(tc.content) == 'table' and tc.content or {}) do
    vim.list_extend(lines, tool_content_lines(item, terminal_info))
  end
  -- Its sub-agent's tool calls, nested under it: a summary line, then one line each (folded,
  -- see View:subagent_ranges).
  local children = block.children or {}
  block.children_row = nil
  if #children > 0 then
    local running = 0
    for _, child in ipairs(children) do
      if not finished[str(child.toolCall.status) or 'pending'] then
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
    block.children_row = #lines - 1
    for _, child in ipairs(children) do
      local line, hl = tool_line(child.toolCall, '    ↳ ')
      table.insert(lines, line)
      table.insert(hls, { #lines - 1, hl })
    end
  end
  return lines, hls
end

---------------------------------------------------------------------------------------------------
-- Updates.

local function role_heading(role)
  if role == 'user' then
    return '## You'
  end
  return '## Agent'
end

-- Before an item of `role` ('user' or 'agent'), add a heading when the speaker changes.
function View:_heading(role, edits)
  local side = role == 'user' and 'user' or 'agent'
  if self.last_role ~= side then
    self.last_role = side
    local hl = side == 'user' and 'AcplsChatUser' or 'AcplsChatAgent'
    table.insert(edits, self:_append({ kind = 'heading' }, { '', role_heading(side) }, { { 1, hl } }))
  end
end

-- The user's own prompt is shown as soon as it is sent; the first user message the agent echoes in
-- that turn takes its place instead of showing the prompt twice.
function View:_adopt_user(id, role)
  local block = self.pending_user
  if role ~= 'user' or not block then
    return nil
  end
  self.pending_user = nil
  self.by_key[id] = block
  block.key = id
  block.parts = {}
  return block
end

function View:_message_chunk(u, edits)
  local role = str(u.role) or 'agent'
  local id = 'msg:' .. tostring(u.messageId or role)
  local text = M.content_text(u.content)
  local block = self.by_key[id]
  if not block then
    block = self:_adopt_user(id, role)
    if block then
      block.parts = { text }
      local lines, hls = self:render_message(block)
      block.rendered_last = lines[#lines]
      table.insert(edits, self:_replace(block, lines, hls))
      return
    end
    self:_heading(role, edits)
    block = { key = id, kind = 'message', role = role, parts = { text } }
    local lines, hls = self:render_message(block)
    block.rendered_last = lines[#lines]
    table.insert(edits, self:_append(block, lines, hls))
    return
  end
  table.insert(block.parts, text)
  -- Fast path: only the block's last line and the new ones change. The block keeps the role it was
  -- created with (a later chunk naming another role for the same message does not restyle it).
  role = block.role
  local pieces = split(text)
  local prefix = message_prefix(role)
  local first = self:row_of(block) + block.nlines - 1
  local lines, hls = { block.rendered_last .. pieces[1] }, {}
  for i = 2, #pieces do
    table.insert(lines, prefix .. pieces[i])
  end
  if role == 'thought' then
    for i = 1, #lines do
      table.insert(hls, { i - 1, 'AcplsChatThought' })
    end
  end
  block.rendered_last = lines[#lines]
  self:_set_nlines(block, block.nlines + #lines - 1)
  table.insert(edits, { first = first, last = first + 1, lines = lines, hls = hls })
end

--- Show the prompt the user just sent.
---@param text string
---@return table[] edits
function View:user_prompt(text)
  local edits = {}
  self:_heading('user', edits)
  local block = { key = nil, kind = 'message', role = 'user', parts = { text } }
  local lines, hls = self:render_message(block)
  block.rendered_last = lines[#lines]
  table.insert(edits, self:_append(block, lines, hls))
  self.pending_user = block
  return edits
end

function View:_message(u, edits)
  local role = str(u.role) or 'agent'
  local id = 'msg:' .. tostring(u.messageId or role)
  local parts = {}
  for _, c in ipairs(type(u.content) == 'table' and u.content or {}) do
    table.insert(parts, M.content_text(c))
  end
  local block = self.by_key[id] or self:_adopt_user(id, role)
  if not block then
    self:_heading(role, edits)
    block = { key = id, kind = 'message', role = role, parts = parts }
    local lines, hls = self:render_message(block)
    block.rendered_last = lines[#lines]
    table.insert(edits, self:_append(block, lines, hls))
    return
  end
  block.parts = parts
  local lines, hls = self:render_message(block)
  block.rendered_last = lines[#lines]
  table.insert(edits, self:_replace(block, lines, hls))
end

function View:_tool_call(u, edits, terminal_info)
  local tc = type(u.toolCall) == 'table' and u.toolCall or {}
  local id = 'tool:' .. tostring(tc.toolCallId)
  local block = self.by_key[id]
  if block and block.kind == 'subagent_call' then
    -- A sub-agent's call lives in its parent's block: re-render the parent.
    block.toolCall = tc
    local parent = block.parent
    local lines, hls = self:render_tool(parent, terminal_info)
    table.insert(edits, self:_replace(parent, lines, hls))
    return
  end
  local parent = tc.parentToolCallId ~= nil and self.by_key['tool:' .. tostring(tc.parentToolCallId)] or nil
  if not block and parent and parent.kind == 'tool' then
    local child = { kind = 'subagent_call', toolCall = tc, parent = parent }
    self.by_key[id] = child
    parent.children = parent.children or {}
    table.insert(parent.children, child)
    local lines, hls = self:render_tool(parent, terminal_info)
    table.insert(edits, self:_replace(parent, lines, hls))
    return
  end
  if not block then
    self:_heading('agent', edits)
    block = { key = id, kind = 'tool', toolCall = tc }
    local lines, hls = self:render_tool(block, terminal_info)
    table.insert(edits, self:_append(block, lines, hls))
    return
  end
  block.toolCall = tc
  local lines, hls = self:render_tool(block, terminal_info)
  table.insert(edits, self:_replace(block, lines, hls))
end

--- A line of text at the end of the chat (notices, turn ends, errors).
---@param lines string[]
---@param hl string?
function View:note(lines, hl)
  local hls = {}
  for i = 1, #lines do
    table.insert(hls, { i - 1, hl or 'AcplsChatMeta' })
  end
  local all = { '' }
  vim.list_extend(all, lines)
  for _, h in ipairs(hls) do
    h[1] = h[1] + 1
  end
  return { self:_append({ kind = 'note' }, all, hls) }
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
  for _, block in ipairs(self.blocks) do
    if block.kind == 'tool' then
      for _, item in ipairs(type(block.toolCall.content) == 'table' and block.toolCall.content or {}) do
        if type(item) == 'table' and item.type == 'terminal' and tostring(item.terminalId) == terminal_id then
          local lines, hls = self:render_tool(block, terminal_info)
          table.insert(edits, self:_replace(block, lines, hls))
          break
        end
      end
    end
  end
  return edits
end

--- Apply one normalised session update.
---@param u table the `update` of an `acpls/sessionUpdate`
---@param terminal_info? fun(id: string): string? a short description of a terminal
---@return table[] edits
function View:apply(u, terminal_info)
  terminal_info = terminal_info or function() end
  local edits = {}
  local kind = u.sessionUpdate
  local s = self.session
  if kind == 'message_chunk' then
    self:_message_chunk(u, edits)
  elseif kind == 'message' then
    self:_message(u, edits)
  elseif kind == 'tool_call' then
    self:_tool_call(u, edits, terminal_info)
  elseif kind == 'plan' then
    local block = self.by_key.plan
    block.entries = type(u.entries) == 'table' and u.entries or {}
    local lines, hls = self:render_plan(block)
    table.insert(edits, self:_replace(block, lines, hls))
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
    local id = 'compaction:' .. tostring(u.compactionId)
    local lines = { '', ('> _context compaction: %s_'):format(tostring(u.status or '?')) }
    if str(u.summary) then
      for _, l in ipairs(split(u.summary)) do
        table.insert(lines, '> ' .. l)
      end
    end
    local block = self.by_key[id]
    local hls = { { 1, 'AcplsChatMeta' } }
    if block then
      table.insert(edits, self:_replace(block, lines, hls))
    else
      table.insert(edits, self:_append({ key = id, kind = 'compaction' }, lines, hls))
    end
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
  for _, b in ipairs(self.blocks) do
    local lines
    if b.kind == 'header' then
      lines = b.nlines > 0 and self:render_header() or {}
    elseif b.kind == 'plan' then
      lines = self:render_plan(b)
    elseif b.kind == 'message' then
      lines = self:render_message(b)
    elseif b.kind == 'tool' then
      lines = self:render_tool(b, terminal_info)
    else
      lines = b.static or {}
    end
    vim.list_extend(out, lines)
  end
  return out
end

--- Where each tool call's nested sub-agent calls are: {summary_row, last_row} (0-based,
--- inclusive), in order; folded like thoughts, so they start collapsed.
function View:subagent_ranges()
  local ranges, row = {}, 0
  for _, b in ipairs(self.blocks) do
    if b.kind == 'tool' and b.children_row then
      table.insert(ranges, { row + b.children_row, row + b.nlines - 1 })
    end
    row = row + b.nlines
  end
  return ranges
end

--- Where each folded thought is: {first_row, last_row} (0-based, inclusive), in order.
function View:thought_ranges()
  local ranges, row = {}, 0
  for _, b in ipairs(self.blocks) do
    if b.kind == 'message' and b.role == 'thought' and b.nlines > 1 then
      table.insert(ranges, { row + 1, row + b.nlines - 1 })
    end
    row = row + b.nlines
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
