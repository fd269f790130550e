-- Agent terminals: one terminal buffer (`nvim_open_term`) per terminal, so colours, cursor movement
-- and progress bars render as in a real terminal.
local M = {}

local terms = {} ---@type table<string, table>
local order = {} ---@type string[]

-- Output is fed to a terminal in slices across timer ticks, at most TICK_BUDGET_NS of feeding
-- each, so the editor takes keys and RPC between them (Neovim's emulator parses a few MB/s: one
-- 1.7 MB `nvim_chan_send` held the loop for a quarter of a second). A pane nobody sees takes
-- bigger slices (the same budget, fewer calls). The budget must stay below the terminal's ~10 ms
-- refresh, which is where a pane just opened or resized takes its new size: a 24 ms budget fed
-- a pane opened mid-stream laid out for its old size, and the resize then cut 10 rows
-- (tests/nvim/test_terminals.py, the pane shown midway).
local SLICE_BYTES = 16 * 1024
local HIDDEN_SLICE_BYTES = 64 * 1024
local TICK_BUDGET_NS = 8 * 1000 * 1000
-- Neovim applies a terminal's new size on its next refresh (~10 ms after the window changed);
-- output sent before that is laid out for the old size and the rows the resize cuts are lost.
-- So after the windows showing a pane change, its output waits this long.
local SETTLE_MS = 25
-- Output waiting to be fed beyond this (a flood faster than the emulator) is skipped, oldest
-- first, and the pane says how much.
local PENDING_MAX_BYTES = 16 * 1024 * 1024
-- A bare LF (output from a pipe) moves down without returning to column 0 in a terminal. Neovim
-- feeds it as CR LF itself (`force_crlf`, its default, named so that it stays on), in C while
-- it copies the bytes anyway. The plugin converted every piece in Lua as well: a gsub of ~0.5 ms
-- per 64 KiB, ~8% of the editor's CPU time in E1 (perf at 2 kHz), for nothing.
local TERM_OPTS = { force_crlf = true }

local feeding = {} ---@type table<table, boolean> terminals with output waiting
local timer = nil ---@type uv.uv_timer_t?
local timer_due = nil ---@type number? hrtime the timer fires at
-- A tick waits in Neovim's event queue: no second one is queued behind it. Every piece of output
-- used to queue its own tick while one waited (each a full budget of feeding), so a burst of
-- messages stacked a hundred ticks ahead of the user's RPC requests: round trips of a second.
local tick_queued = false
local stats = { ticks = 0, queued = 0 }

local function key(sid, tid)
  return tostring(sid) .. '\0' .. tostring(tid)
end

local function status_text(t)
  local ex = t.exitStatus
  if type(ex) ~= 'table' then
    return t.released and 'released' or 'running'
  end
  if ex.signal ~= nil then
    return 'signal ' .. tostring(ex.signal)
  end
  if ex.exitCode ~= nil then
    return 'exit ' .. tostring(ex.exitCode)
  end
  return 'exited'
end

local function buf_name(t)
  local status = status_text(t) .. (t.trimmed and ', top trimmed' or '')
  return ('acpls://terminal/%s: %s [%s]'):format(t.terminalId, t.command or '?', status)
end

-- Name the buffer after the terminal; two sessions may use the same terminal id, so the session
-- goes into the name when the short one is taken.
local function set_name(t)
  if not pcall(vim.api.nvim_buf_set_name, t.buf, buf_name(t)) then
    local long = buf_name(t):gsub('^acpls://terminal/', 'acpls://terminal/' .. tostring(t.sessionId) .. '/')
    pcall(vim.api.nvim_buf_set_name, t.buf, long)
  end
end

local function scrollback_setting()
  local ok, cfg = pcall(function()
    return require('acpls.config').get(true).ui.terminal.scrollback
  end)
  local lines = ok and tonumber(cfg) or 100000
  return math.max(1, math.min(100000, math.floor(lines)))
end

-- A plain buffer; it becomes a terminal (`nvim_open_term`) only when its first output is fed,
-- inside the window that shows it by then, so the terminal starts at that window's size and no
-- resize lands between the output and its display.
local function open(t)
  local buf = vim.api.nvim_create_buf(false, true)
  t.buf = buf
  t.chan = nil
  t.layout = nil
  t.lines_fed = 0
  t.trimmed = false
  vim.b[buf].acpls_terminal = t.terminalId
  vim.b[buf].acpls_session = t.sessionId
  set_name(t)
end

local function layout(buf)
  local parts = {}
  for _, win in ipairs(vim.fn.win_findbuf(buf)) do
    parts[#parts + 1] = ('%d:%dx%d'):format(win, vim.api.nvim_win_get_height(win), vim.api.nvim_win_get_width(win))
  end
  return table.concat(parts, ' ')
end

local function ensure_chan(t)
  if t.chan then
    return
  end
  t.scrollback = scrollback_setting()
  vim.bo[t.buf].scrollback = t.scrollback -- before the terminal starts: it sizes its buffer then
  local win = vim.fn.win_findbuf(t.buf)[1]
  if win then
    t.chan = vim.api.nvim_win_call(win, function()
      return vim.api.nvim_open_term(t.buf, TERM_OPTS)
    end)
  else
    t.chan = vim.api.nvim_open_term(t.buf, TERM_OPTS)
  end
  t.layout = layout(t.buf)
end

local function get(sid, tid)
  local k = key(sid, tid)
  local t = terms[k]
  if not t then
    t = { sessionId = sid, terminalId = tid, queue = {}, qhead = 1, qtail = 0, qbytes = 0, skipped = 0 }
    terms[k] = t
    table.insert(order, k)
    open(t)
    vim.api.nvim_exec_autocmds('User', {
      pattern = 'AcplsTerminal',
      modeline = false,
      data = { sessionId = sid, terminalId = tid, buf = t.buf },
    })
  elseif not vim.api.nvim_buf_is_valid(t.buf) then
    -- The user wiped the buffer: later output goes to a new one.
    open(t)
  end
  return t
end

local tick

local function arm(delay_ms)
  if tick_queued then
    return -- the queued tick feeds everything waiting and arms again if it must
  end
  local due = vim.uv.hrtime() + delay_ms * 1e6
  if timer_due and timer_due <= due then
    return
  end
  timer = timer or vim.uv.new_timer()
  timer_due = due
  timer:start(delay_ms, 0, function()
    timer_due = nil
    if tick_queued then
      return
    end
    tick_queued = true
    stats.queued = stats.queued + 1
    vim.schedule(tick)
  end)
end

local function dim(text)
  return ('\r\n\27[2m[%s]\27[0m\r\n'):format(text)
end

-- How many times `what` is in `text` (plain, not overlapping).
local function count_plain(text, what)
  local n, at = 0, 1
  while true do
    at = text:find(what, at, true)
    if not at then
      return n
    end
    n, at = n + 1, at + #what
  end
end

local function enqueue(t, text)
  local q = t.queue
  -- A queue with explicit ends: `#` of a table whose front was taken is not its last index.
  t.qtail = t.qtail + 1
  q[t.qtail] = text
  t.qbytes = t.qbytes + #text
  if t.qbytes > PENDING_MAX_BYTES then
    -- Skip the oldest waiting output down to half the bound; say so where it was.
    local skipped = 0
    while t.qbytes > PENDING_MAX_BYTES / 2 and t.qhead < t.qtail do
      skipped = skipped + #q[t.qhead]
      t.qbytes = t.qbytes - #q[t.qhead]
      q[t.qhead] = nil
      t.qhead = t.qhead + 1
    end
    if skipped > 0 then
      t.skipped = t.skipped + skipped
      t.qhead = t.qhead - 1
      local note = dim(('acpls: %d bytes of output skipped: more than the pane could show'):format(skipped))
      q[t.qhead] = note
      t.qbytes = t.qbytes + #note
    end
  end
  feeding[t] = true
  arm(0)
end

local function drop_queue(t)
  t.queue, t.qhead, t.qtail, t.qbytes = {}, 1, 0, 0
  feeding[t] = nil
end

-- Where to cut `piece` to keep at most `limit` bytes without splitting a UTF-8 character: each
-- `nvim_chan_send` is decoded on its own, so half a character at a slice's end became `�` in the
-- pane (and its other half another). Steps back over continuation bytes (10xxxxxx) to the start
-- of the character the cut fell in; a piece that is not UTF-8 still moves on (at most 3 back).
local function utf8_cut(piece, limit)
  local cut = limit
  for _ = 1, 3 do
    local next_byte = piece:byte(cut + 1)
    if next_byte == nil or next_byte < 0x80 or next_byte >= 0xC0 then
      return cut
    end
    cut = cut - 1
  end
  local next_byte = piece:byte(cut + 1)
  if next_byte ~= nil and next_byte >= 0xC0 then
    return cut
  end
  return limit
end

-- The next slice of `t`'s waiting output (whole pieces joined, a long piece cut), at most `size`.
local function take_slice(t, size)
  local q = t.queue
  local parts, n = {}, 0
  while t.qhead <= t.qtail and n < size do
    local piece = q[t.qhead]
    if n + #piece <= size then
      parts[#parts + 1] = piece
      n = n + #piece
      q[t.qhead] = nil
      t.qhead = t.qhead + 1
    else
      local cut = utf8_cut(piece, size - n)
      if cut == 0 then
        break -- the next character does not fit this slice: it starts the next one
      end
      parts[#parts + 1] = piece:sub(1, cut)
      q[t.qhead] = piece:sub(cut + 1)
      n = size
    end
  end
  t.qbytes = t.qbytes - n
  if t.qhead > t.qtail then
    t.queue, t.qhead, t.qtail = {}, 1, 0
  end
  return table.concat(parts)
end

local function feed(t, slice)
  vim.api.nvim_chan_send(t.chan, slice)
  t.lines_fed = t.lines_fed + count_plain(slice, '\n')
  if not t.trimmed and t.lines_fed > t.scrollback + vim.o.lines then
    -- Neovim drops the lines above 'scrollback' silently: the name says it from now on, and the
    -- exit line says how many.
    t.trimmed = true
    set_name(t)
  end
end

tick = function()
  tick_queued = false
  stats.ticks = stats.ticks + 1
  local start = vim.uv.hrtime()
  local wait_ms = nil
  for t in pairs(feeding) do
    if not vim.api.nvim_buf_is_valid(t.buf) then
      drop_queue(t)
    elseif t.qhead > t.qtail then
      feeding[t] = nil
    else
      local now = vim.uv.hrtime()
      if not t.chan then
        ensure_chan(t)
      else
        local shown = layout(t.buf)
        if shown ~= t.layout then
          t.layout = shown
          t.settle_until = now + SETTLE_MS * 1e6
        end
      end
      if t.settle_until and now < t.settle_until then
        local ms = math.ceil((t.settle_until - now) / 1e6)
        wait_ms = math.min(wait_ms or ms, ms)
      else
        t.settle_until = nil
        local size = t.layout == '' and HIDDEN_SLICE_BYTES or SLICE_BYTES
        while t.qhead <= t.qtail and vim.uv.hrtime() - start < TICK_BUDGET_NS do
          feed(t, take_slice(t, size))
        end
        if t.qhead > t.qtail then
          feeding[t] = nil
        else
          wait_ms = 1 -- over budget: let keys in, then go on
        end
      end
    end
  end
  if wait_ms then
    arm(wait_ms)
  end
end

--- Feeding counters (for tests and benchmarks): `ticks` run, `queued` (ticks put in Neovim's
--- event queue; never more than one at a time).
function M.stats()
  return vim.deepcopy(stats)
end

--- Bytes waiting to be fed to terminal panes (for tests and benchmarks).
function M.pending_bytes()
  local n = 0
  for t in pairs(feeding) do
    n = n + t.qbytes
  end
  return n
end

-- Throw everything shown away: a fresh buffer takes the old one's place in every window, and
-- output waiting for the old one goes with it.
local function reset(t)
  local old = t.buf
  drop_queue(t)
  open(t)
  for _, win in ipairs(vim.fn.win_findbuf(old)) do
    vim.api.nvim_win_set_buf(win, t.buf)
  end
  pcall(vim.api.nvim_buf_delete, old, { force = true })
  set_name(t)
  t.exit_noted = false
end

-- "[process exited …]" after the output, like :terminal does: it joins the waiting output, and
-- acpls sends a terminal's output before the update that carries its exit.
local function note_exit(t)
  if t.exit_noted or type(t.exitStatus) ~= 'table' then
    return
  end
  t.exit_noted = true
  local note = 'process ' .. status_text(t)
  if t.trimmed or t.lines_fed > scrollback_setting() then
    note = note .. ('; lines above the last %d were dropped (ui.terminal.scrollback)'):format(scrollback_setting())
  end
  enqueue(t, dim(note))
end

--- `acpls/terminalOutput`
function M.on_output(params, _ctx)
  local t = get(params.sessionId, params.terminalId)
  if params.reset then
    reset(t)
    local dropped = tonumber(params.dropped)
    if dropped and dropped > 0 then
      -- acpls kept only the end of the output (terminal.scrollbackBytes): say so at the top.
      enqueue(t, dim(('acpls: %d earlier bytes not kept'):format(dropped)))
    end
  end
  local text = params.text
  if type(text) == 'string' and text ~= '' then
    enqueue(t, text)
  end
  if params.reset then
    note_exit(t)
  end
end

--- `acpls/terminalUpdate`: the whole state (an absent key is unknown or cleared).
function M.on_update(params, _ctx)
  local t = get(params.sessionId, params.terminalId)
  local before = buf_name(t)
  t.command = params.command
  t.cwd = params.cwd
  t.exitStatus = params.exitStatus
  t.toolCallId = params.toolCallId
  t.owner = params.owner
  t.released = params.released
  local name = buf_name(t)
  if name ~= before then
    set_name(t)
    require('acpls.chat').refresh_terminal(t.sessionId, t.terminalId, function(tid)
      return M.describe(t.sessionId, tid)
    end)
  end
  note_exit(t)
end

--- A short description for the chat: `pytest -q (exit 1)`.
function M.describe(sid, tid)
  local t = terms[key(sid, tid)]
  if not t then
    return nil
  end
  return ('%s (%s)'):format(t.command or '?', status_text(t))
end

--- Every terminal: `{sessionId, terminalId, buf, command?, status}`.
function M.list()
  local out = {}
  for _, k in ipairs(order) do
    local t = terms[k]
    table.insert(out, {
      sessionId = t.sessionId,
      terminalId = t.terminalId,
      buf = t.buf,
      command = t.command,
      status = status_text(t),
      exitStatus = t.exitStatus,
    })
  end
  return out
end

--- Show a terminal's buffer in a window at the bottom (without leaving the current window unless
--- `enter`).
function M.show(sid, tid, enter)
  local t = terms[key(sid, tid)]
  if not t then
    return
  end
  local wins = vim.fn.win_findbuf(t.buf)
  local win = wins[1]
  if not win then
    win = vim.api.nvim_open_win(t.buf, enter or false, { split = 'below', win = -1, height = 12 })
  elseif enter then
    vim.api.nvim_set_current_win(win)
  end
  return win
end

--- `:Acpls terminals`
function M.pick()
  local list = M.list()
  if #list == 0 then
    vim.notify('acpls: no agent terminal yet')
    return
  end
  vim.ui.select(list, {
    prompt = 'Agent terminals',
    format_item = function(t)
      return ('%s: %s [%s]'):format(t.terminalId, t.command or '?', t.status)
    end,
  }, function(t)
    if t then
      M.show(t.sessionId, t.terminalId, true)
    end
  end)
end

return M
