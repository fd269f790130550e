-- Chat: a markdown transcript buffer and a prompt buffer below it, one agent session per chat.
local chatview = require('acpls.chatview')
local client = require('acpls.client')
local config = require('acpls.config')
local util = require('acpls.util')

local M = {}

local ns = vim.api.nvim_create_namespace('acpls.chat')
local MAX_ORPHAN_UPDATES = 5000

local chats = {} ---@type table[] every chat, in creation order
local by_session = {} ---@type table<string, table>
local by_buf = {} ---@type table<integer, table>
local last = nil ---@type table? the chat used most recently
local pending_new = 0 -- acpls.newSession requests in flight
local orphans = {} ---@type table<string, {updates: table[], client_id: integer}>
local counter = 0

local Chat = {}
Chat.__index = Chat

-- For tests and benchmarks (M.stats).
local stats = {
  ticks = 0,
  apply_ns = 0,
  updates = 0,
  fold_ns = 0,
  max_tick_ns = 0,
  max_tick_cpu_ns = 0,
}

-- CPU time of the editor process: a tick's wall time on a loaded machine includes the time it
-- waited for a core.
local function cpu_ns()
  local r = vim.uv.getrusage()
  return (r.utime.sec + r.stime.sec) * 1e9 + (r.utime.usec + r.stime.usec) * 1e3
end

local function valid(buf)
  return buf and vim.api.nvim_buf_is_valid(buf)
end

---------------------------------------------------------------------------------------------------
-- Rendering

-- Edits reach the buffer in batches: view edits are gathered into pending regions (disjoint,
-- sorted, each "rows [old_first, old_last) of the buffer become `lines`") and written with one
-- nvim_buf_set_lines per region, top down. One set_lines per update cost ~50 us each (Neovim
-- re-evaluates the folds of every change): a 20,000-update session spent seconds there.

-- Rows [from, to) of the buffer with the highlight group of each (false: none).
local function buffer_rows(buf, from, to)
  local lines = vim.api.nvim_buf_get_lines(buf, from, to, false)
  local groups = {}
  for i = 1, #lines do
    groups[i] = false
  end
  if to > from then
    local marks = vim.api.nvim_buf_get_extmarks(buf, ns, { from, 0 }, { to - 1, -1 }, { details = true })
    for _, m in ipairs(marks) do
      if m[4] and m[4].hl_group then
        groups[m[2] - from + 1] = m[4].hl_group
      end
    end
  end
  return lines, groups
end

-- Replace `count` items of `arr` at 0-based `at` with the items of `new`.
local function splice(arr, at, count, new)
  local n, add = #arr, #new
  if add ~= count then
    local shift = add - count
    if shift > 0 then
      for i = n, at + count + 1, -1 do
        arr[i + shift] = arr[i]
      end
    else
      for i = at + count + 1, n do
        arr[i + shift] = arr[i]
      end
      for i = n + shift + 1, n do
        arr[i] = nil
      end
    end
  end
  for i = 1, add do
    arr[at + i] = new[i]
  end
end

-- The highlight group of each line of an edit (false: none), in one table for every edit merged
-- into a region (most of them: a table an edit was garbage the collector sweeps inside the next
-- decode); an edit that makes a region of its own gets a copy.
local edit_groups = {}

--- Add one view edit (rows in the view as it is after the edits before it) to the pending regions.
function Chat:_pend(e)
  local regions = self.pending
  local groups = edit_groups
  for i = #groups, #e.lines + 1, -1 do
    groups[i] = nil
  end
  for i = 1, #e.lines do
    groups[i] = false
  end
  for _, h in ipairs(e.hls) do
    local text = e.lines[h[1] + 1]
    if text and text ~= '' then
      groups[h[1] + 1] = h[2]
    end
  end
  -- The regions the edit touches (or borders), a..b; `above`: rows the regions before a added.
  local a, b, above = nil, nil, 0
  for i, r in ipairs(regions) do
    local r_end = r.first + #r.lines
    if r_end < e.first then
      above = above + #r.lines - (r.old_last - r.old_first)
    elseif r.first <= e.last then
      a = a or i
      b = i
    else
      break
    end
  end
  local merged
  local delta = #e.lines - (e.last - e.first)
  if not a then
    -- Untouched rows: a region of its own.
    local old_first = e.first - above
    merged = { first = e.first, old_first = old_first, old_last = old_first + e.last - e.first }
    merged.lines, merged.groups = vim.list_slice(e.lines), vim.list_slice(groups)
    local at = #regions + 1
    for i, r in ipairs(regions) do
      if r.first > e.first then
        at = i
        break
      end
    end
    table.insert(regions, at, merged)
    for i = at + 1, #regions do
      regions[i].first = regions[i].first + delta
    end
    return
  else
    -- One region from the first touched to the last, with the unchanged rows between them.
    merged = regions[a]
    if e.first < merged.first then
      local n = merged.first - e.first
      local lines, gs = buffer_rows(self.out_buf, merged.old_first - n, merged.old_first)
      splice(merged.lines, 0, 0, lines)
      splice(merged.groups, 0, 0, gs)
      merged.first, merged.old_first = e.first, merged.old_first - n
    end
    for i = a + 1, b do
      local r = regions[i]
      local lines, gs = buffer_rows(self.out_buf, merged.old_last, r.old_first)
      vim.list_extend(merged.lines, lines)
      vim.list_extend(merged.groups, gs)
      vim.list_extend(merged.lines, r.lines)
      vim.list_extend(merged.groups, r.groups)
      merged.old_last = r.old_last
    end
    for _ = a + 1, b do
      table.remove(regions, a + 1)
    end
    local beyond = e.last - (merged.first + #merged.lines)
    if beyond > 0 then
      local lines, gs = buffer_rows(self.out_buf, merged.old_last, merged.old_last + beyond)
      vim.list_extend(merged.lines, lines)
      vim.list_extend(merged.groups, gs)
      merged.old_last = merged.old_last + beyond
    end
  end
  splice(merged.lines, e.first - merged.first, e.last - e.first, e.lines)
  splice(merged.groups, e.first - merged.first, e.last - e.first, groups)
  for i = a + 1, #regions do
    regions[i].first = regions[i].first + delta
  end
end

-- While updates wait, a window at the end of the chat is brought to the new end at most every
-- FOLLOW_EVERY_NS (and after the tick that empties the inbox): the markdown syntax of a window
-- moved to the end parses the lines it skipped (up to ~250, ~40 us each), ~12 ms a tick of 300
-- lines, and that redraw after every tick was 1.6 s of a 20,000-update load's 2.1 CPU seconds.
local FOLLOW_EVERY_NS = 100 * 1000 * 1000

-- Windows of the transcript that follow its end: at the last line, or left where the last write
-- put them while following was deferred (not moved by the user since).
function Chat:_tail_windows(old_count)
  local deferred = self.deferred_follow or {}
  local wins = {}
  for _, win in ipairs(vim.fn.win_findbuf(self.out_buf)) do
    local row = vim.api.nvim_win_get_cursor(win)[1]
    if row >= old_count or deferred[win] == row then
      table.insert(wins, win)
    end
  end
  return wins
end

-- Folds: thoughts and sub-agent calls are manual folds, made from the view's blocks after each
-- write for the rows it wrote (and made whole when a window shows the transcript anew). A
-- foldexpr was asked again for every written line (0.2 of 0.68 CPU-s of a 20,000-update load),
-- and Neovim leaves a foldexpr's folds alone in Insert mode: a turn streamed while the user typed
-- in the prompt was never folded.

-- Windows of the transcript whose folds acpls keeps: those of foldmethod manual (the chat's own
-- windows; another the user shows it in, unless it folds otherwise).
local function fold_windows(buf)
  local wins = {}
  for _, win in ipairs(vim.fn.win_findbuf(buf)) do
    if vim.wo[win].foldmethod == 'manual' then
      table.insert(wins, win)
    end
  end
  return wins
end

-- Fold upkeep types Normal-mode keys in the window: not while the user is in Visual, Select,
-- Operator-pending, Command-line or Terminal mode, which that would end or change.
local function can_fold_now()
  local mode = vim.api.nvim_get_mode().mode
  return mode == 'n' or mode:sub(1, 1) == 'i' or mode:sub(1, 1) == 'R'
end

-- Whether any fold of the current window has a row in [from, to) (0-based). Most writes only
-- append rows that no fold has yet, and then the `normal! zd` below is not needed: it reads keys,
-- and reading keys polls the event loop, so the LSP client's reads waiting then (JSON decoding of
-- whole `acpls/sessionUpdates`, 9-10 ms in one tick of a 20,000-update load) ran inside the tick,
-- ahead of the user's keys. `foldlevel()` does not poll (~0.5 µs a row). Rows just `appended`
-- can only be in a fold that reaches them from above or below: their first and last rows tell.
local function has_folds(from, to, appended)
  if appended then
    return to > from and (vim.fn.foldlevel(from + 1) > 0 or vim.fn.foldlevel(to) > 0)
  end
  for row = from + 1, to do
    if vim.fn.foldlevel(row) > 0 then
      return true
    end
  end
  return false
end

-- In `win`: delete the folds of rows [from, to) (0-based) and make `folds`. A fold still open
-- (one the user opened, cut short by the write) stays open, and all are open while the window
-- opens every fold (zR: foldlevel > 0), as a foldexpr's would be. Rows just `appended` had no
-- fold the user could have opened.
local function make_folds(win, from, to, folds, appended)
  local t0 = vim.uv.hrtime()
  vim.api.nvim_win_call(win, function()
    local all_open = vim.wo[win].foldlevel > 0
    local open = {}
    for k, f in ipairs(folds) do
      open[k] = all_open
        or not appended and vim.fn.foldlevel(f[1] + 1) > 0 and vim.fn.foldclosed(f[1] + 1) == -1
    end
    if has_folds(from, to, appended) then
      local saved = vim.fn.winsaveview()
      -- Visual zd deletes every fold partly in the rows (none there: E490, hence silent!).
      vim.cmd(('silent! noautocmd keepjumps normal! %dGV%dGzd'):format(from + 1, to))
      vim.fn.winrestview(saved)
    end
    -- nvim_cmd, not a command line: a command line polls the event loop now and then.
    local range, opts = { 0, 0 }, {}
    local fold, unfold = { cmd = 'fold', range = range }, { cmd = 'foldopen', range = range }
    for k, f in ipairs(folds) do
      range[1], range[2] = f[1] + 1, f[2] + 1
      vim.api.nvim_cmd(fold, opts)
      if open[k] then
        vim.api.nvim_cmd(unfold, opts)
      end
    end
  end)
  stats.fold_ns = stats.fold_ns + vim.uv.hrtime() - t0
end

--- Make every fold of the transcript in `win` (all its fold windows when nil), or once the mode
--- allows it.
---@param win integer?
function Chat:refold_all(win)
  if not can_fold_now() then
    self:_refold_later()
    return
  end
  local folds = self.view:all_folds()
  local count = vim.api.nvim_buf_line_count(self.out_buf)
  for _, w in ipairs(win and { win } or fold_windows(self.out_buf)) do
    make_folds(w, 0, count, folds)
  end
end

-- The mode does not allow fold upkeep now: every fold is made again once it changes.
function Chat:_refold_later()
  if self.refold_waiting then
    return
  end
  self.refold_waiting = true
  vim.api.nvim_create_autocmd('ModeChanged', {
    once = true,
    callback = vim.schedule_wrap(function()
      self.refold_waiting = false
      if valid(self.out_buf) then
        self:refold_all()
      end
    end),
  })
end

-- Rows [lo, hi) of the transcript were written (only `appended` at its end, or not): make the
-- folds of their blocks again.
function Chat:_refold(lo, hi, appended)
  local wins = fold_windows(self.out_buf)
  if #wins == 0 then
    return
  end
  if self.refold_waiting or not can_fold_now() then
    self:_refold_later()
    return
  end
  local from, to, folds = self.view:folds_around(lo, hi, appended)
  for _, win in ipairs(wins) do
    make_folds(win, from, to, folds, appended)
  end
end

--- Write the pending regions to the transcript buffer, keeping windows that were at the end at
--- the end (`backlog`: more updates wait, so they may be moved there later, see FOLLOW_EVERY_NS).
---@param backlog boolean?
function Chat:_write(backlog)
  local buf = self.out_buf
  local regions = self.pending
  if #regions == 0 then
    return
  end
  self.pending = {}
  if not valid(buf) then
    return
  end
  local old_count = vim.api.nvim_buf_line_count(buf)
  local tail_wins = self:_tail_windows(old_count)
  local mark = { end_col = 0, hl_group = '', strict = false } -- one options table for every line
  vim.bo[buf].modifiable = true
  local shift, lo, hi = 0, math.huge, 0
  -- Only rows added at the end (old rows of the regions counted in the buffer before the write).
  local appended = not self.fresh
  for _, r in ipairs(regions) do
    appended = appended and r.old_first == old_count and r.old_last == old_count
    lo, hi = math.min(lo, r.first), math.max(hi, r.first + #r.lines)
    local first, last = r.old_first + shift, r.old_last + shift
    if self.fresh then
      -- The new buffer's single empty line is not part of the view.
      first, last = 0, -1
      self.fresh = false
    elseif last > first then
      vim.api.nvim_buf_clear_namespace(buf, ns, first, last)
    end
    vim.api.nvim_buf_set_lines(buf, first, last, false, r.lines)
    local row = r.old_first + shift
    for i, group in ipairs(r.groups) do
      if group then
        mark.end_col, mark.hl_group = #r.lines[i], group
        vim.api.nvim_buf_set_extmark(buf, ns, row + i - 1, 0, mark)
      end
    end
    shift = shift + #r.lines - (r.old_last - r.old_first)
  end
  vim.bo[buf].modifiable = false
  self:_refold(lo, hi, appended)
  self:_follow(tail_wins, backlog)
end

-- Bring `wins` to the end of the transcript, or (a backlog, followed recently) note where they
-- are so the next write still knows they follow.
function Chat:_follow(wins, backlog)
  local now = vim.uv.hrtime()
  self.deferred_follow = nil
  if backlog and now - (self.followed_at or 0) < FOLLOW_EVERY_NS then
    self.deferred_follow = {}
    for _, win in ipairs(wins) do
      self.deferred_follow[win] = vim.api.nvim_win_get_cursor(win)[1]
    end
    return
  end
  self.followed_at = now
  local count = vim.api.nvim_buf_line_count(self.out_buf)
  for _, win in ipairs(wins) do
    pcall(vim.api.nvim_win_set_cursor, win, { count, 0 })
  end
end

--- Apply view edits to the transcript buffer now (the view already has them).
function Chat:render(edits)
  if #edits == 0 then
    return
  end
  for _, e in ipairs(edits) do
    self:_pend(e)
  end
  self:_write()
end

function Chat:note(lines, hl)
  self:change(function(v)
    return v:note(lines, hl)
  end)
end

-- The user wiped the chat's buffers: make them again, with the whole transcript.
function Chat:ensure_buffers()
  if valid(self.out_buf) and valid(self.in_buf) then
    return
  end
  for _, buf in ipairs({ self.out_buf, self.in_buf }) do
    by_buf[buf] = nil
    if valid(buf) then
      pcall(vim.api.nvim_buf_delete, buf, { force = true })
    end
  end
  self:_make_buffers()
  self.fresh = true
  self.pending = {}
  local sid = self.session_id
  local lines = self.view:render_all(function(tid)
    return require('acpls.terminals').describe(sid, tid)
  end)
  self:render({ { first = 0, last = 0, lines = lines, hls = {} } })
  if self.session_id then
    vim.b[self.out_buf].acpls_session = self.session_id
    vim.b[self.in_buf].acpls_session = self.session_id
  end
end

-- Session updates wait in each chat's inbox and are applied in ticks of at most APPLY_BUDGET_NS,
-- each ending with one batch of buffer writes, so a replay of thousands of updates never holds
-- the editor: keys and scrolling get in between ticks. The next tick is armed by a 0 ms timer,
-- so Neovim redraws between ticks (a chain of 300 vim.schedule steps, each adding a line, was
-- redrawn once, at its end; with the timer 300 times); the 1 ms of before idled after each tick.
local APPLY_BUDGET_NS = 4 * 1000 * 1000
-- The writes (set_lines, an extmark a line, the folds) come after the budget's check: a tick
-- writes at most MAX_TICK_LINES. 1,000 made E4's longest tick 8-21 ms (E5 keys p99 29-34 ms)
-- where 300 made it 5-9 ms (keys p99 7-20 ms), in one run, at the same total load time.
local MAX_TICK_LINES = 300
local busy = {} ---@type table<table, boolean> chats with updates waiting
local apply_timer = nil ---@type uv.uv_timer_t?
local apply_queued = false

local apply_tick

local function arm_apply(delay_ms)
  if apply_queued then
    return
  end
  apply_timer = apply_timer or vim.uv.new_timer()
  apply_queued = true
  apply_timer:start(delay_ms, 0, function()
    vim.schedule(apply_tick)
  end)
end

-- Apply waiting updates to the view (all of them, or until `deadline`), then write the edits.
function Chat:_apply_waiting(deadline)
  local inbox = self.inbox
  if inbox.head > inbox.tail then
    return
  end
  local t0 = vim.uv.hrtime()
  local from = inbox.head
  local lines = 0
  self:ensure_buffers()
  local sid = self.session_id
  local function describe(tid)
    return require('acpls.terminals').describe(sid, tid)
  end
  local mode = chatview.mode_name(self.view.session)
  local reused = {} -- one edits list for every update of the tick
  while inbox.head <= inbox.tail do
    local update = inbox[inbox.head]
    inbox[inbox.head] = nil
    inbox.head = inbox.head + 1
    local edits
    if type(update) == 'function' then
      edits = update(self.view)
    else
      if type(update) == 'table' and update.sessionUpdate == 'usage' then
        M._check_usage(self, update)
      end
      edits = self.view:apply(update, describe, reused)
    end
    for k, e in ipairs(edits) do
      self:_pend(e)
      lines = lines + #e.lines
      reused[k] = nil
    end
    if deadline and (vim.uv.hrtime() > deadline or lines > MAX_TICK_LINES) then
      break
    end
  end
  local drained = inbox.head > inbox.tail
  if drained then
    self.inbox = { head = 1, tail = 0 }
    busy[self] = nil
  end
  self:_write(not drained)
  if drained then
    self:_run_drawn_waiters()
  end
  -- statusline() shows the mode: a change by the agent shows at once, not at the next redraw.
  if chatview.mode_name(self.view.session) ~= mode then
    vim.cmd.redrawstatus({ bang = true })
  end
  stats.updates = stats.updates + inbox.head - from
  stats.apply_ns = stats.apply_ns + vim.uv.hrtime() - t0
end

apply_tick = function()
  apply_queued = false
  stats.ticks = stats.ticks + 1
  local t0, c0 = vim.uv.hrtime(), cpu_ns()
  local deadline = t0 + APPLY_BUDGET_NS
  for chat in pairs(busy) do
    chat:_apply_waiting(deadline)
  end
  stats.max_tick_ns = math.max(stats.max_tick_ns, vim.uv.hrtime() - t0)
  stats.max_tick_cpu_ns = math.max(stats.max_tick_cpu_ns, cpu_ns() - c0)
  if next(busy) then
    arm_apply(0)
  end
end

--- Counters for tests and benchmarks: `ticks` that applied updates, `updates` applied,
--- `apply_ns` spent applying and writing them, `fold_ns` of that spent on folds, and the longest
--- tick's wall time (`max_tick_ns`) and CPU time (`max_tick_cpu_ns`).
function M.stats()
  return vim.deepcopy(stats)
end

--- Change the view by anything else than a session update (a note, the user's prompt, the header):
--- `fn(view)` returns the edits. At once when no update waits, else after those waiting, so
--- everything lands in the order it happened without applying a long replay in one go.
---@param fn fun(view: table): table[]
function Chat:change(fn)
  if self.inbox.head > self.inbox.tail then
    self:render(fn(self.view))
  else
    self:apply(fn)
  end
end

--- Run `fn` once the buffer shows everything received so far: at once when nothing waits, else
--- after the tick that writes the last waiting update (a `User AcplsTurnEnd` handler reading the
--- chat must see the turn's end in it).
---@param fn fun()
function Chat:when_drawn(fn)
  if self.inbox.head > self.inbox.tail then
    fn()
  else
    self.drawn_waiters = self.drawn_waiters or {}
    table.insert(self.drawn_waiters, fn)
  end
end

function Chat:_run_drawn_waiters()
  local waiters = self.drawn_waiters
  self.drawn_waiters = nil
  for _, fn in ipairs(waiters or {}) do
    fn()
  end
end

function Chat:apply(update)
  local inbox = self.inbox
  inbox.tail = inbox.tail + 1
  inbox[inbox.tail] = update
  if not busy[self] then
    busy[self] = true
    arm_apply(0)
  end
end

---------------------------------------------------------------------------------------------------
-- Buffers and windows

-- A buffer-local mapping from the `ui.chat.keys` option (false turns one off).
local function map(buf, modes, lhs, rhs, desc)
  if type(lhs) ~= 'string' or lhs == '' then
    return
  end
  vim.keymap.set(modes, lhs, rhs, { buffer = buf, desc = desc, nowait = true, silent = true })
end

-- The transcript's syntax looks back at most SYNC_MINLINES (and SYNC_MAXLINES) lines when it
-- syncs, as after every jump to the end while a chat loads: markdown's own 50 lines (75 parsed)
-- made each such redraw 12-13 ms (its html-laden items cost ~150 us a line), keys waiting behind
-- it; 20 (30 parsed) takes ~3 ms. A fenced block longer than that shows as plain markdown where a
-- jump lands inside it, until scrolling up parses it from its start (50 lines had the same limit
-- at 75).
local SYNC_MINLINES, SYNC_MAXLINES = 20, 30

local function bound_syntax_sync(buf)
  if valid(buf) and vim.b[buf].current_syntax then
    vim.api.nvim_buf_call(buf, function()
      vim.cmd(('syntax sync minlines=%d maxlines=%d'):format(SYNC_MINLINES, SYNC_MAXLINES))
    end)
  end
end

function Chat:_make_buffers()
  local keys = config.get().ui.chat.keys
  self.out_buf = util.scratch(('acpls://chat/%d'):format(self.id), 'markdown')
  bound_syntax_sync(self.out_buf)
  -- Runs after the syntax file (loaded by the global Syntax autocmd) when it is loaded again.
  vim.api.nvim_create_autocmd('Syntax', {
    buffer = self.out_buf,
    callback = function(ev)
      bound_syntax_sync(ev.buf)
    end,
  })
  self.in_buf = util.scratch(('acpls://prompt/%d'):format(self.id), 'markdown')
  vim.bo[self.out_buf].modifiable = false
  for _, buf in ipairs({ self.out_buf, self.in_buf }) do
    by_buf[buf] = self
    vim.b[buf].acpls_chat = self.id
    map(buf, 'n', keys.mode, function()
      self:pick_mode()
    end, 'acpls: pick the agent mode')
    map(buf, 'n', keys.config, function()
      self:pick_config()
    end, 'acpls: pick an agent config option')
    map(buf, 'n', keys.cancel, function()
      self:cancel()
    end, 'acpls: cancel the turn')
    map(buf, 'n', keys.close, function()
      self:hide()
    end, 'acpls: close the chat windows')
  end
  map(self.out_buf, 'n', keys.open, function()
    self:open_under_cursor()
  end, 'acpls: open the file or terminal on this line')
  map(self.out_buf, 'n', keys.restore, function()
    self:restore_here()
  end, 'acpls: restore the workspace to before this message')
  map(self.out_buf, 'n', keys.copy, function()
    self:copy_here()
  end, 'acpls: copy this message or tool call into the prompt as context')
  -- Folds are kept per window: one that shows the transcript anew gets them all.
  vim.api.nvim_create_autocmd('BufWinEnter', {
    buffer = self.out_buf,
    callback = function()
      local win = vim.api.nvim_get_current_win()
      vim.schedule(function()
        if vim.api.nvim_win_is_valid(win) and vim.api.nvim_win_get_buf(win) == self.out_buf then
          if vim.wo[win].foldmethod == 'manual' then
            self:refold_all(win)
          end
        end
      end)
    end,
  })
  vim.bo[self.in_buf].omnifunc = "v:lua.require'acpls.chat'.omnifunc"
  require('acpls.cmp').attach(self.in_buf)
  require('acpls.mentions').highlight(self.in_buf)
  map(self.in_buf, 'n', keys.send_normal, function()
    self:send_input()
  end, 'acpls: send the prompt')
  map(self.in_buf, { 'n', 'i' }, keys.send, function()
    self:send_input()
  end, 'acpls: send the prompt')
  vim.api.nvim_create_autocmd('TextChangedI', {
    buffer = self.in_buf,
    callback = function()
      M.complete_slash()
    end,
  })
end

function Chat:windows()
  local out = vim.fn.win_findbuf(self.out_buf)
  local input = vim.fn.win_findbuf(self.in_buf)
  local tab = vim.api.nvim_get_current_tabpage()
  local function in_tab(list)
    for _, w in ipairs(list) do
      if vim.api.nvim_win_get_tabpage(w) == tab then
        return w
      end
    end
  end
  return in_tab(out), in_tab(input)
end

--- Windows of this tab page that show another chat (its transcript, its prompt): a chat shown
--- here takes them over instead of splitting again. Every new split took its width from the
--- chat beside it until those windows were 0 columns wide, and Neovim aborts drawing a winbar
--- there (grid.c grid_line_flush assertion).
---@return integer? out_win, integer? in_win
function Chat:other_chat_windows()
  local out_win, in_win
  for _, w in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
    local name = vim.api.nvim_buf_get_name(vim.api.nvim_win_get_buf(w))
    if not out_win and name:match('^acpls://chat/') then
      out_win = w
    elseif not in_win and name:match('^acpls://prompt/') then
      in_win = w
    end
  end
  return out_win, in_win
end

--- Show the chat beside the code (if it is not shown in this tab page); `enter` puts the cursor in
--- the prompt.
---@param enter boolean?
function Chat:show(enter)
  last = self
  self:ensure_buffers()
  local out_win, in_win = self:windows()
  local opts = config.get().ui.chat
  if not out_win and not in_win then
    local other_out, other_in = self:other_chat_windows()
    if other_out then
      vim.api.nvim_win_set_buf(other_out, self.out_buf)
      out_win = other_out
    end
    if other_in and other_out then
      vim.api.nvim_win_set_buf(other_in, self.in_buf)
      in_win = other_in
      self:update_prompt_bar()
    end
  end
  if not out_win then
    local pos = opts.position
    if pos == 'tab' then
      local cur = vim.api.nvim_get_current_win()
      vim.cmd('tab split')
      out_win = vim.api.nvim_get_current_win()
      vim.api.nvim_win_set_buf(out_win, self.out_buf)
      if not enter then
        vim.api.nvim_set_current_win(cur)
      end
    else
      local vertical = pos == 'right' or pos == 'left'
      local total = vertical and vim.o.columns or vim.o.lines
      local size = opts.width < 1 and math.floor(total * opts.width) or opts.width
      local cfg = { split = pos, win = -1 }
      cfg[vertical and 'width' or 'height'] = math.max(size, 10)
      out_win = vim.api.nvim_open_win(self.out_buf, false, cfg)
    end
    util.set_win_opts(out_win, {
      wrap = true,
      linebreak = true,
      number = false,
      relativenumber = false,
      signcolumn = 'no',
      foldmethod = 'manual',
      foldlevel = 0,
      foldenable = true,
      winfixwidth = true,
    })
    self:refold_all(out_win)
    pcall(vim.api.nvim_win_set_cursor, out_win, { vim.api.nvim_buf_line_count(self.out_buf), 0 })
  end
  if not in_win then
    in_win = vim.api.nvim_open_win(self.in_buf, false, {
      split = 'below',
      win = out_win,
      height = opts.prompt_height,
    })
    util.set_win_opts(in_win, {
      wrap = true,
      number = false,
      relativenumber = false,
      signcolumn = 'no',
      winfixheight = true,
    })
    self:update_prompt_bar()
  end
  if enter then
    vim.api.nvim_set_current_win(in_win)
  end
end

--- `<CR>` in the transcript: a location line opens its file in the code window, a terminal line
--- shows that terminal.
function Chat:open_under_cursor()
  local line = vim.api.nvim_get_current_line()
  local tid = line:match('^%s*▣ terminal (%S+)')
  if tid then
    tid = tid:gsub(':$', '')
    require('acpls.terminals').show(self.session_id, tid, true)
    return
  end
  local path, lnum = line:match('^%s*→ (.-):(%d+)$')
  path = path or line:match('^%s*→ (.+)$') or line:match('^%s*✎ (/.-)%s*%(')
  if not path then
    return
  end
  local win = util.code_window()
  if not win then
    vim.cmd('aboveleft vsplit')
    win = vim.api.nvim_get_current_win()
  end
  vim.api.nvim_set_current_win(win)
  vim.cmd.edit(vim.fn.fnameescape(path))
  if lnum then
    pcall(vim.api.nvim_win_set_cursor, win, { tonumber(lnum), 0 })
  end
end

--- The "restore to here" mapping: the workspace back to before the user message under the cursor.
function Chat:restore_here()
  local row = vim.api.nvim_win_get_cursor(0)[1] - 1
  local n, text = self.view:user_message_at(row)
  if not n or not self.session_id or not self.client_id then
    vim.notify('acpls: put the cursor on one of your messages')
    return
  end
  require('acpls.checkpoints').restore_turn(self.client_id, self.session_id, n, text)
end

--- "Copy as context": the agent's message or tool call (or your message) under the cursor, quoted
--- into the prompt input after what is there, for the next prompt (or another chat's: `chat`).
---@param target table? the chat whose prompt gets it (default: this one)
function Chat:copy_here(target)
  local row = vim.api.nvim_win_get_cursor(0)[1] - 1
  local block, start = self.view:block_at(row)
  if not block then
    vim.notify('acpls: put the cursor on a message or a tool call')
    return
  end
  local lines = vim.api.nvim_buf_get_lines(self.out_buf, start, start + block.nlines, false)
  while lines[1] == '' do
    table.remove(lines, 1)
  end
  while lines[#lines] == '' do
    table.remove(lines)
  end
  local what = block.kind == 'tool' and 'tool call' or (block.role == 'user' and 'my message' or 'agent message')
  local quoted = { ('Context (%s, copied from the chat):'):format(what), '```' }
  vim.list_extend(quoted, lines)
  table.insert(quoted, '```')
  target = target or self
  local input = vim.api.nvim_buf_get_lines(target.in_buf, 0, -1, false)
  if #input == 1 and input[1] == '' then
    input = {}
  end
  vim.list_extend(input, quoted)
  table.insert(input, '')
  vim.api.nvim_buf_set_lines(target.in_buf, 0, -1, false, input)
  local win = vim.fn.bufwinid(target.in_buf)
  if win ~= -1 then
    vim.api.nvim_win_set_cursor(win, { #input, 0 })
  end
  vim.notify(('acpls: %s copied into the prompt'):format(what))
end

--- Put `text` into the prompt input (replacing what is there).
function Chat:set_input(text)
  vim.api.nvim_buf_set_lines(self.in_buf, 0, -1, false, vim.split(text or '', '\n', { plain = true }))
end

function Chat:hide()
  local out_win, in_win = self:windows()
  for _, w in ipairs({ in_win, out_win }) do
    if w and #vim.api.nvim_tabpage_list_wins(0) > 1 then
      pcall(vim.api.nvim_win_close, w, false)
    end
  end
end

---------------------------------------------------------------------------------------------------
-- Sessions and prompts

function Chat:bind(session_id)
  self.session_id = session_id
  self.view.session.sessionId = session_id
  by_session[session_id] = self
  vim.b[self.out_buf].acpls_session = session_id
  vim.b[self.in_buf].acpls_session = session_id
  local orphan = orphans[session_id]
  orphans[session_id] = nil
  for _, u in ipairs(orphan and orphan.updates or {}) do
    self:apply(u)
  end
  if orphan and orphan.dropped > 0 then
    self:note({
      ('_acpls: %d later updates of this session arrived before its chat existed and were not kept; `:Acpls load` shows the whole session_'):format(
        orphan.dropped
      ),
    }, 'AcplsChatNotice')
  end
end

--- Make sure this chat has a running client and a session, then call `cb()`.
function Chat:ensure_session(cb)
  if self.session_id and self.client_id and client.get(self.client_id) then
    cb()
    return
  end
  table.insert(self.on_session, cb)
  if self.creating then
    return
  end
  self.client_id = client.ensure(self.root)
  if not self.client_id then
    self.on_session = {}
    self:note({ '**error**: acpls could not start (see :checkhealth acpls)' }, 'AcplsToolFailed')
    return
  end
  self.creating = true
  pending_new = pending_new + 1
  local args = { cwd = self.root, agent = M.agent_arg(self.agent) }
  client.exec(self.client_id, 'acpls.newSession', args, function(err, result)
    self.creating = false
    pending_new = pending_new - 1
    local cbs = self.on_session
    self.on_session = {}
    if err or type(result) ~= 'table' or type(result.sessionId) ~= 'string' then
      local why = err and (err.message or vim.inspect(err)) or 'bad reply'
      self:note({ '**error**: no session: ' .. why }, 'AcplsToolFailed')
      -- Prompts waiting for this session are dropped (they are visible above); the next send retries.
      self.queue = {}
      self.running = false
    else
      if type(result.agent) == 'string' then
        self.agent = result.agent
        self:show_agent()
      end
      self:bind(result.sessionId)
      for _, f in ipairs(cbs) do
        f()
      end
    end
    if pending_new == 0 then
      M._adopt_orphans()
    end
  end)
end

--- Send a prompt. Prompts sent while a turn runs are queued (listed in the prompt bar, editable
--- and removable with `:Acpls queue`) and sent, each shown then, when the turn ends.
---@param text string
---@param context table[]? `[{uri, range?}]`
function Chat:send(text, context)
  text = vim.trim(text or '')
  if text == '' then
    return
  end
  last = self
  local item = { text = text, context = context, images = self.images }
  self.images = nil
  if not self.running then
    self:change(function(v)
      return v:user_prompt(text)
    end)
    item.shown = true
  end
  table.insert(self.queue, item)
  self:update_prompt_bar()
  self:_next()
end

--- The prompts waiting for the running turn (not yet sent).
function Chat:queued()
  local out = {}
  for _, item in ipairs(self.queue) do
    if not item.shown then
      table.insert(out, item)
    end
  end
  return out
end

local function remove_item(list, item)
  for i, x in ipairs(list) do
    if x == item then
      table.remove(list, i)
      return true
    end
  end
  return false
end

--- Give a queued prompt to the agent now, in the running turn (`acpls.steer`, where the agent takes
--- it); when no turn runs any more it stays queued and goes out as an ordinary prompt.
function Chat:steer(item)
  if not (self.session_id and self.client_id) then
    return
  end
  local args = { sessionId = self.session_id, text = item.text }
  if item.context and #item.context > 0 then
    args.context = item.context
  end
  client.exec(self.client_id, 'acpls.steer', args, function(err, res)
    if err then
      vim.notify('acpls: cannot steer: ' .. (err.message or vim.inspect(err)), vim.log.levels.ERROR)
      return
    end
    if type(res) == 'table' and res.outcome == 'promptRequired' then
      return
    end
    if remove_item(self.queue, item) then
      self:change(function(v)
        return v:note({ '**You** (while the agent worked): ' .. item.text:gsub('\n', ' ') }, 'AcplsChatUser')
      end)
      self:update_prompt_bar()
    end
  end)
end

--- `:Acpls queue`: pick a queued prompt, then edit it, remove it or (where the agent takes it)
--- steer the running turn with it.
function Chat:pick_queued()
  local items = self:queued()
  if #items == 0 then
    vim.notify('acpls: no prompt is waiting')
    return
  end
  vim.ui.select(items, {
    prompt = 'Queued prompts',
    kind = 'acpls.queue',
    format_item = function(item)
      return (item.text:gsub('\n', ' '))
    end,
  }, function(item)
    if not item then
      return
    end
    local actions = { 'Edit', 'Remove' }
    local status = client.status_of(self.client_id, self.agent)
    if status and status.canSteer then
      table.insert(actions, 1, 'Steer: give it to the agent now')
    end
    vim.ui.select(actions, { prompt = item.text, kind = 'acpls.queue_action' }, function(action)
      if action == 'Edit' then
        vim.ui.input({ prompt = 'Queued prompt: ', default = item.text }, function(text)
          if text and vim.trim(text) ~= '' and not item.shown then
            item.text = vim.trim(text)
            self:update_prompt_bar()
          end
        end)
      elseif action == 'Remove' then
        remove_item(self.queue, item)
        self:update_prompt_bar()
      elseif action then
        self:steer(item)
      end
    end)
  end)
end

function Chat:_next()
  if self.running or #self.queue == 0 then
    return
  end
  self.running = true
  self:ensure_session(function()
    local item = table.remove(self.queue, 1)
    if not item then
      self.running = false
      return
    end
    if not item.shown then
      item.shown = true
      self:change(function(v)
        return v:user_prompt(item.text)
      end)
    end
    self:update_prompt_bar()
    local args = { sessionId = self.session_id, text = item.text }
    if item.context and #item.context > 0 then
      args.context = item.context
    end
    local mentions = require('acpls.mentions').parse(item.text, self.root or vim.fn.getcwd())
    for _, path in ipairs(item.images or {}) do
      table.insert(mentions, { type = 'image', path = path })
    end
    if #mentions > 0 then
      args.mentions = mentions
    end
    client.exec(self.client_id, 'acpls.prompt', args, function(err, result)
      self.running = false
      self:_turn_done(err, result)
      self:_next()
    end)
  end)
  if not self.session_id and not self.creating then
    -- The session could not be made: drop the wait so a later send tries again.
    self.running = false
  end
end

function Chat:_turn_done(err, result)
  util.reload_changed_files()
  -- Prompts of this session still open were answered by acpls when the turn ended.
  if self.session_id then
    require('acpls.permission').drop_session(self.session_id)
  end
  local stop
  if err then
    stop = 'error'
    self:note({ '**error**: ' .. (err.message or vim.inspect(err)) }, 'AcplsToolFailed')
  else
    stop = type(result) == 'table' and tostring(result.stopReason or '?') or '?'
    self:change(function(v)
      return v:turn_ended(stop, type(result) == 'table' and result.usage or nil)
    end)
  end
  if config.get().ui.notify_turn_end and not self:windows() then
    vim.notify(('acpls: turn ended (%s)'):format(stop))
  end
  local data = { sessionId = self.session_id, stopReason = stop, chat = self.id }
  self:when_drawn(function()
    vim.api.nvim_exec_autocmds('User', { pattern = 'AcplsTurnEnd', modeline = false, data = data })
  end)
end

--- The prompt window's bar: the keys, and the context the next prompt carries.
function Chat:update_prompt_bar()
  local keys = config.get().ui.chat.keys
  local parts = {}
  if type(keys.send) == 'string' then
    table.insert(parts, keys.send .. ' send')
  end
  if type(keys.cancel) == 'string' then
    table.insert(parts, keys.cancel .. ' cancel')
  end
  table.insert(parts, '/ commands')
  local waiting = #self:queued()
  if waiting > 0 then
    table.insert(parts, ('%d queued (:Acpls queue)'):format(waiting))
  end
  local bar = 'prompt: ' .. table.concat(parts, ' · ')
  if self.context and #self.context > 0 then
    local names = {}
    for _, item in ipairs(self.context) do
      local name = vim.fn.fnamemodify(vim.uri_to_fname(item.uri), ':t')
      if item.range then
        local stop = item.range['end']
        local last_line = stop.character > 0 and stop.line + 1 or stop.line
        name = ('%s:%d-%d'):format(name, item.range.start.line + 1, last_line)
      end
      table.insert(names, name)
    end
    bar = bar .. ' · context: ' .. table.concat(names, ', ')
  end
  if self.images and #self.images > 0 then
    local names = vim.tbl_map(function(p)
      return vim.fn.fnamemodify(p, ':t')
    end, self.images)
    bar = bar .. ' · images: ' .. table.concat(names, ', ')
  end
  for _, win in ipairs(vim.fn.win_findbuf(self.in_buf)) do
    vim.wo[win].winbar = '%#AcplsChatMeta#' .. bar:gsub('%%', '%%%%')
  end
end

--- Add a context item (`{uri, range?}`) to the next prompt of this chat.
function Chat:add_context(item)
  self.context = self.context or {}
  table.insert(self.context, item)
  self:update_prompt_bar()
end

--- Send what is in the prompt buffer and clear it.
function Chat:send_input()
  local lines = vim.api.nvim_buf_get_lines(self.in_buf, 0, -1, false)
  local text = table.concat(lines, '\n')
  if vim.trim(text) == '' then
    return
  end
  vim.api.nvim_buf_set_lines(self.in_buf, 0, -1, false, {})
  self:send(text, self.context)
  self.context = nil
  self:update_prompt_bar()
end

function Chat:cancel()
  -- Queued prompts are not sent after a cancel; their text goes back into the prompt buffer.
  local back = {}
  for _, item in ipairs(self:queued()) do
    vim.list_extend(back, vim.split(item.text, '\n', { plain = true }))
  end
  self.queue = {}
  if #back > 0 and self.in_buf and vim.api.nvim_buf_is_valid(self.in_buf) then
    local have = vim.api.nvim_buf_get_lines(self.in_buf, 0, -1, false)
    if #have == 1 and have[1] == '' then
      have = {}
    end
    vim.list_extend(have, back)
    vim.api.nvim_buf_set_lines(self.in_buf, 0, -1, false, have)
  end
  self:update_prompt_bar()
  if self.session_id and self.client_id then
    client.exec(self.client_id, 'acpls.cancel', { sessionId = self.session_id })
  end
end

function Chat:pick_mode()
  local modes = require('acpls.chatview').session_modes(self.view.session)
  if not modes or #modes.availableModes == 0 then
    vim.notify('acpls: the agent offers no modes')
    return
  end
  vim.ui.select(modes.availableModes, {
    prompt = 'Agent mode',
    format_item = function(m)
      local cur = m.id == modes.currentModeId and ' (current)' or ''
      return (m.name or m.id) .. cur .. (m.description and (' — ' .. m.description) or '')
    end,
  }, function(choice)
    if choice then
      client.exec(self.client_id, 'acpls.setMode', { sessionId = self.session_id, modeId = choice.id })
    end
  end)
end

---@param category string? only the option of this category (`model`: the model picker)
function Chat:pick_config(category)
  local options = self.view.session.configOptions
  if category then
    options = vim.tbl_filter(function(o)
      return o.category == category
    end, options or {})
  end
  if not options or #options == 0 then
    vim.notify(category and ('acpls: the agent offers no %s to pick'):format(category) or 'acpls: the agent offers no config options')
    return
  end
  local pick = function(items, opts, cb)
    if #items == 1 and category then
      cb(items[1]) -- one option of the category: straight to its values
    else
      vim.ui.select(items, opts, cb)
    end
  end
  pick(options, {
    prompt = 'Agent option',
    format_item = function(o)
      local value = o.currentValue
      if o.type == 'boolean' then
        value = value == true and 'on' or 'off'
      end
      return ('%s: %s'):format(o.name or o.id or o.configId, tostring(value))
    end,
  }, function(opt)
    if not opt then
      return
    end
    if opt.type == 'boolean' then
      self:set_option(opt, opt.currentValue ~= true) -- a boolean flips at once
      return
    end
    local values = require('acpls.chatview').option_values(opt)
    vim.ui.select(values, {
      prompt = opt.name or opt.id or opt.configId,
      format_item = function(v)
        return v.name .. (v.value == opt.currentValue and ' (current)' or '')
      end,
    }, function(v)
      if v == nil then
        return
      end
      self:set_option(opt, v.value)
    end)
  end)
end

--- Sets a config option of the agent; the options the agent answers with replace the chat's
--- (else the one option takes the value).
function Chat:set_option(opt, value)
  local id = opt.id or opt.configId
  client.exec(self.client_id, 'acpls.setConfigOption', { sessionId = self.session_id, configId = id, value = value }, function(err, result)
    if err then
      vim.notify('acpls: ' .. (err.message or 'setConfigOption failed'), vim.log.levels.ERROR)
      return
    end
    local options = type(result) == 'table' and result.configOptions
    if type(options) == 'table' and #options > 0 then
      self.view.session.configOptions = options
    else
      opt.currentValue = value
    end
    if opt.type == 'boolean' then
      vim.notify(('acpls: %s %s'):format(opt.name or id, value and 'on' or 'off'))
    end
    self:change(function(v)
      return { v:header_edit() }
    end)
  end)
end

--- The agent's boolean config options.
function Chat:boolean_options()
  return vim.tbl_filter(function(o)
    return o.type == 'boolean'
  end, self.view.session.configOptions or {})
end

--- `:Acpls toggle [id]`: flips one of the agent's boolean config options (a picker without `id`).
function Chat:toggle_option(id)
  local options = self:boolean_options()
  if #options == 0 then
    vim.notify('acpls: the agent offers no on/off options')
    return
  end
  if id then
    for _, o in ipairs(options) do
      if (o.id or o.configId) == id then
        self:set_option(o, o.currentValue ~= true)
        return
      end
    end
    vim.notify(('acpls: no on/off option %s (%s)'):format(id, table.concat(vim.tbl_map(function(o)
      return o.id or o.configId
    end, options), ', ')), vim.log.levels.ERROR)
    return
  end
  vim.ui.select(options, {
    prompt = 'Toggle',
    format_item = function(o)
      return ('%s: %s'):format(o.name or o.id or o.configId, o.currentValue == true and 'on' or 'off')
    end,
  }, function(o)
    if o then
      self:set_option(o, o.currentValue ~= true)
    end
  end)
end

---------------------------------------------------------------------------------------------------
-- Module API

--- The chat header names its agent: the agent's own name when it runs, else the name acpls knows.
function Chat:show_agent()
  local status = client.status_of(self.client_id, self.agent)
  if status then
    self.view.session.agent = (type(status.agentInfo) == 'table' and status.agentInfo.name) or status.agent
  elseif self.agent then
    self.view.session.agent = self.agent
  end
  if valid(self.out_buf) then
    vim.b[self.out_buf].acpls_agent = self.agent
  end
end

function M.agent_arg(name)
  return config.agent_arg(name)
end

--- A chat; `agent`: the name of its agent (nil: the default agent, learnt from newSession).
local function new_chat(root, client_id, agent)
  counter = counter + 1
  local self = setmetatable({
    id = counter,
    root = root,
    client_id = client_id,
    agent = agent,
    view = chatview.new(),
    inbox = { head = 1, tail = 0 }, -- session updates not applied yet
    pending = {}, -- view edits not written to the buffer yet
    queue = {},
    on_session = {},
    fresh = true,
  }, Chat)
  self:_make_buffers()
  self:show_agent()
  self:change(function(v)
    return { v:header_edit() }
  end)
  table.insert(chats, self)
  return self
end

--- The chat used last among those of `agent`.
local function last_of(agent)
  if last and last.agent == agent then
    return last
  end
  for i = #chats, 1, -1 do
    if chats[i].agent == agent then
      return chats[i]
    end
  end
  return nil
end

--- Updates for sessions that no chat asked for (a code action's prompt, for example) get a chat of
--- their own once no `acpls.newSession` is in flight.
function M._adopt_orphans()
  for sid, orphan in pairs(orphans) do
    local c = client.get(orphan.client_id)
    local chat = new_chat(c and c.root_dir or vim.fn.getcwd(), orphan.client_id)
    chat:bind(sid)
    chat:show(false)
  end
end

--- The chat of the current buffer, else the one used last.
---@return table?
function M.current()
  local chat = by_buf[vim.api.nvim_get_current_buf()]
  if chat then
    return chat
  end
  if last then
    return last
  end
  return nil
end

--- `:Acpls chat [new] [agent]`: show the last chat (of that agent: a chat per agent) or a new one,
--- and put the cursor in its prompt.
---@param opts {new: boolean?, enter: boolean?, agent: string?}?
---@return table? chat
function M.open(opts)
  opts = opts or {}
  local chat = nil
  if not opts.new then
    chat = opts.agent and last_of(opts.agent) or (not opts.agent and M.current()) or nil
  end
  if not chat then
    local root = client.root_for()
    local id = client.ensure(root)
    if not id then
      return nil
    end
    chat = new_chat(root, id, opts.agent)
    chat:show(opts.enter ~= false)
    chat:ensure_session(function() end)
  else
    chat:show(opts.enter ~= false)
  end
  if opts.enter ~= false then
    vim.cmd('startinsert')
  end
  return chat
end

--- `:Acpls prompt {text}`: send to the current chat (opened without taking the cursor).
---@param text string
---@param context table[]?
--- `:Acpls attach {path}`: an image for the next prompt of the current chat (sent as ACP image
--- content; acpls refuses it, saying why, when the agent takes no images or it is too large).
---@param path string
function M.attach(path)
  path = vim.fs.normalize(vim.fn.fnamemodify(vim.fn.expand(path), ':p'))
  if vim.fn.filereadable(path) == 0 then
    vim.notify('acpls: cannot read ' .. path, vim.log.levels.ERROR)
    return nil
  end
  local chat = M.current() or M.open({ enter = false })
  if chat then
    chat.images = chat.images or {}
    table.insert(chat.images, path)
    chat:update_prompt_bar()
  end
  return chat
end

--- The clipboard tools tried by `:Acpls paste`, in order: `{argv, when}`.
local function clipboard_commands()
  local out = {}
  if vim.env.WAYLAND_DISPLAY and vim.fn.executable('wl-paste') == 1 then
    table.insert(out, { 'wl-paste', '--no-newline', '--type', 'image/png' })
  end
  if vim.fn.executable('xclip') == 1 then
    table.insert(out, { 'xclip', '-selection', 'clipboard', '-target', 'image/png', '-out' })
  end
  if vim.fn.executable('pngpaste') == 1 then
    table.insert(out, { 'pngpaste', '-' })
  end
  return out
end

--- `:Acpls paste`: the clipboard's image (wl-paste, xclip or pngpaste) saved as a PNG file and
--- attached to the next prompt as `:Acpls attach` does.
function M.paste_image()
  local commands = clipboard_commands()
  if #commands == 0 then
    vim.notify('acpls: no clipboard tool for images: install wl-clipboard (Wayland), xclip (X11) or pngpaste (macOS), or use :Acpls attach {path}', vim.log.levels.ERROR)
    return nil
  end
  local problems = {}
  for _, argv in ipairs(commands) do
    local ok, done = pcall(function()
      return vim.system(argv, { text = false }):wait(3000)
    end)
    local data = ok and done and done.code == 0 and done.stdout or ''
    if data:sub(1, 8) == '\137PNG\r\n\26\n' then
      local path = vim.fn.tempname() .. '-clipboard.png'
      local file = assert(io.open(path, 'wb'))
      file:write(data)
      file:close()
      return M.attach(path)
    end
    table.insert(problems, argv[1])
  end
  vim.notify(('acpls: the clipboard holds no image (asked %s)'):format(table.concat(problems, ', ')), vim.log.levels.WARN)
  return nil
end

--- The copy-as-context mapping from outside the chat buffer (`:Acpls copy`).
function M.copy_here()
  local chat = by_buf[vim.api.nvim_get_current_buf()]
  if not chat then
    vim.notify('acpls: run this in a chat, on a message or a tool call')
    return
  end
  chat:copy_here()
end

function M.prompt(text, context)
  local chat = M.current() or M.open({ enter = false })
  if chat then
    chat:show(false)
    chat:send(text, context)
  end
  return chat
end

--- The selection of the current buffer as a prompt context item, or nil when it is not a file.
---@param buf integer
---@param l1 integer 1-based first line
---@param l2 integer 1-based last line
---@param c1 integer? 0-based byte column (charwise selections)
---@param c2 integer? 0-based byte column, inclusive
function M.context_item(buf, l1, l2, c1, c2)
  if not util.is_code_buf(buf) or vim.api.nvim_buf_get_name(buf) == '' then
    return nil
  end
  client.attach_buffer(buf)
  local range
  if c1 then
    local first = vim.api.nvim_buf_get_lines(buf, l1 - 1, l1, false)[1] or ''
    local lastl = vim.api.nvim_buf_get_lines(buf, l2 - 1, l2, false)[1] or ''
    local endc = math.min(c2 + 1, #lastl)
    -- Include the whole last character when it is multi-byte.
    while endc < #lastl and bit.band(lastl:byte(endc + 1), 0xC0) == 0x80 do
      endc = endc + 1
    end
    range = {
      start = { line = l1 - 1, character = util.utf16_col(first, c1) },
      ['end'] = { line = l2 - 1, character = util.utf16_col(lastl, endc) },
    }
  else
    range = { start = { line = l1 - 1, character = 0 }, ['end'] = { line = l2, character = 0 } }
  end
  return { uri = vim.uri_from_bufnr(buf), range = range }
end

-- The visual selection of the current buffer as a context item (and leave visual mode).
local function selection_item()
  local mode = vim.fn.mode()
  local buf = vim.api.nvim_get_current_buf()
  local v, cur = vim.fn.getpos('v'), vim.fn.getpos('.')
  local s, e = v, cur
  if s[2] > e[2] or (s[2] == e[2] and s[3] > e[3]) then
    s, e = e, s
  end
  local item
  if mode == 'v' then
    item = M.context_item(buf, s[2], e[2], s[3] - 1, e[3] - 1)
  else
    item = M.context_item(buf, s[2], e[2])
  end
  vim.api.nvim_feedkeys(vim.keycode('<Esc>'), 'nx', false)
  if not item then
    vim.notify('acpls: the selection is not in a file', vim.log.levels.WARN)
  end
  return item
end

--- The visual-mode mapping: ask for a question, send it with the selection as context.
function M.send_selection()
  local item = selection_item()
  if not item then
    return
  end
  vim.ui.input({ prompt = 'Ask the agent about the selection: ' }, function(text)
    if text and vim.trim(text) ~= '' then
      M.prompt(text, { item })
    end
  end)
end

--- Every stored session of the agent here (every page of its `session/list`), then `cb(sessions,
--- offers)`; `offers` says what the agent lets the user do (load, resume, fork, close, delete).
function M.list_stored(root, id, cb)
  client.exec(id, 'acpls.listSessions', { cwd = root, all = true }, function(err, result)
    if err then
      vim.notify('acpls: cannot list sessions: ' .. (err.message or vim.inspect(err)), vim.log.levels.ERROR)
      return
    end
    local sessions = type(result) == 'table' and type(result.sessions) == 'table' and result.sessions or {}
    cb(sessions, type(result) == 'table' and type(result.offers) == 'table' and result.offers or {})
  end)
end

--- How a stored session reads in a picker: its title (or id), when it changed, whether it is open.
function M.stored_label(s)
  local open = (s.open or by_session[s.sessionId]) and ' (open)' or ''
  return ('%s%s%s'):format(s.title or s.sessionId, s.updatedAt and (' · ' .. s.updatedAt) or '', open)
end

--- Continue a stored session in a new chat: `command` is acpls.loadSession (the agent replays its
--- history into the chat) or acpls.resumeSession (no history; only what comes next).
function M.open_stored(root, id, s, command)
  local existing = by_session[s.sessionId]
  if existing then
    existing:show(true)
    return existing
  end
  local chat = new_chat(root, id)
  -- Bound before the request, so the replayed history lands in this chat.
  chat:bind(s.sessionId)
  chat.view.session.title = s.title
  chat:change(function(v)
    return { v:header_edit() }
  end)
  chat:show(true)
  command = command or 'acpls.loadSession'
  client.exec(id, command, { sessionId = s.sessionId }, function(lerr, res)
    if lerr then
      local why = lerr.message or vim.inspect(lerr)
      chat:note({ '**error**: could not open the session: ' .. why }, 'AcplsToolFailed')
      by_session[s.sessionId] = nil
      chat.session_id = nil
      return
    end
    if type(res) == 'table' and type(res.sessionId) == 'string' and res.sessionId ~= s.sessionId then
      by_session[s.sessionId] = nil
      chat:bind(res.sessionId)
    end
    local how = command == 'acpls.resumeSession' and 'session resumed' or 'session loaded'
    chat:note({ ('_%s: you can go on from here_'):format(how) })
  end)
  return chat
end

--- Pick one of the agent's stored sessions here (every page of its `session/list`): `cb(root,
--- id, session, offers)` with the one picked; nothing when there is none or none is picked.
---@param select_opts table vim.ui.select's options (the label is M.stored_label)
local function pick_stored(select_opts, cb)
  local root = client.root_for()
  local id = client.ensure(root)
  if not id then
    return
  end
  M.list_stored(root, id, function(sessions, offers)
    if #sessions == 0 then
      vim.notify('acpls: the agent has no stored session here')
      return
    end
    select_opts.format_item = M.stored_label
    vim.ui.select(sessions, select_opts, function(s)
      if s then
        cb(root, id, s, offers)
      end
    end)
  end)
end

--- `:Acpls load`: pick one of the agent's earlier sessions and continue it in a new chat; the
--- agent replays its history into the chat.
function M.load_session()
  pick_stored({ prompt = 'Load an agent session', kind = 'acpls.sessions' }, function(root, id, s, offers)
    M.open_stored(root, id, s, offers.load == false and offers.resume and 'acpls.resumeSession' or 'acpls.loadSession')
  end)
end

--- `:Acpls fork`: the agent's copy of this chat's conversation (`session/fork`) in a new chat.
---@param session_id string? a stored session instead of the current chat's
function M.fork(session_id, root, id)
  local from = not session_id and M.current() or nil
  if not session_id and not (from and from.session_id) then
    vim.notify('acpls: no chat with a session to fork', vim.log.levels.WARN)
    return
  end
  root = root or (from and from.root) or client.root_for()
  id = id or (from and from.client_id) or client.ensure(root)
  if not id then
    return
  end
  local origin = session_id or from.session_id
  client.exec(id, 'acpls.forkSession', { sessionId = origin }, function(err, res)
    if err or type(res) ~= 'table' or type(res.sessionId) ~= 'string' then
      local why = err and (err.message or vim.inspect(err)) or 'bad reply'
      vim.notify('acpls: cannot fork the session: ' .. why, vim.log.levels.ERROR)
      return
    end
    -- The fork belongs to the agent of its origin.
    local chat = new_chat(root, id, type(res.agent) == 'string' and res.agent or (from and from.agent))
    chat:bind(res.sessionId)
    chat.view.session.title = from and from.view.session.title or nil
    chat:change(function(v)
      return { v:header_edit() }
    end)
    chat:note({ ('_forked from %s: the agent remembers the conversation so far_'):format(origin) }, 'AcplsChatMeta')
    chat:show(true)
  end)
end

--- The session of `chat` is gone (closed or deleted): the chat stays readable, and its next
--- prompt starts a new session.
local function unbind(chat, why)
  if chat.session_id then
    by_session[chat.session_id] = nil
  end
  chat.session_id = nil
  chat.running = false
  chat.queue = {}
  chat:note({ ('_%s; the next prompt starts a new session_'):format(why) }, 'AcplsChatMeta')
end

--- `:Acpls close`: end this chat's session in acpls and, where the agent offers it, in the agent.
function M.close(chat)
  chat = chat or M.current()
  if not (chat and chat.session_id and chat.client_id) then
    vim.notify('acpls: no chat with a session to close', vim.log.levels.WARN)
    return
  end
  client.exec(chat.client_id, 'acpls.closeSession', { sessionId = chat.session_id }, function(err)
    if err then
      vim.notify('acpls: cannot close the session: ' .. (err.message or vim.inspect(err)), vim.log.levels.ERROR)
      return
    end
    unbind(chat, 'session closed')
  end)
end

--- Delete a stored session in the agent (`session/delete`); a chat showing it is unbound.
function M.delete(id, session_id)
  client.exec(id, 'acpls.deleteSession', { sessionId = session_id }, function(err)
    if err then
      vim.notify('acpls: cannot delete the session: ' .. (err.message or vim.inspect(err)), vim.log.levels.ERROR)
      return
    end
    local chat = by_session[session_id]
    if chat then
      unbind(chat, 'session deleted')
    end
    vim.notify('acpls: session deleted')
  end)
end

--- `:Acpls history`: the agent's stored sessions (every page), then what to do with the one picked:
--- show its chat, load it with its history, resume it without, fork, close or delete it (only
--- what the agent offers).
function M.history()
  pick_stored({ prompt = 'Agent sessions', kind = 'acpls.sessions' }, function(root, id, s, offers)
    local open = by_session[s.sessionId]
    local actions = {}
    local function add(label, run)
      table.insert(actions, { label = label, run = run })
    end
    if open then
      add('Show its chat', function()
        open:show(true)
      end)
    else
      if offers.load then
        add('Load with its history', function()
          M.open_stored(root, id, s, 'acpls.loadSession')
        end)
      end
      if offers.resume then
        add('Resume without its history', function()
          M.open_stored(root, id, s, 'acpls.resumeSession')
        end)
      end
    end
    if offers.fork then
      add('Fork into a new chat', function()
        M.fork(s.sessionId, root, id)
      end)
    end
    if open and offers.close then
      add('Close', function()
        M.close(open)
      end)
    end
    if offers.delete then
      add('Delete', function()
        M.delete(id, s.sessionId)
      end)
    end
    vim.ui.select(actions, {
      prompt = s.title or s.sessionId,
      kind = 'acpls.session_action',
      format_item = function(a)
        return a.label
      end,
    }, function(a)
      if a then
        a.run()
      end
    end)
  end)
end

--- `:Acpls logout`: sign out of the agent (where it offers to).
function M.logout()
  local id = client.ensure()
  if not id then
    return
  end
  client.exec(id, 'acpls.logout', {}, function(err)
    if err then
      vim.notify('acpls: cannot sign out: ' .. (err.message or vim.inspect(err)), vim.log.levels.ERROR)
    else
      require('acpls.auth').forget()
      vim.notify('acpls: signed out of the agent')
    end
  end)
end

--- The other visual-mode mapping: add the selection to the chat's next prompt and go to the chat
--- to write it.
function M.add_selection()
  local item = selection_item()
  if not item then
    return
  end
  local chat = M.current() or M.open({ enter = false })
  if chat then
    chat:add_context(item)
    chat:show(true)
  end
end

function M.cancel()
  local chat = M.current()
  if chat then
    chat:cancel()
  else
    for _, c in ipairs(client.clients()) do
      client.exec(c.id, 'acpls.cancel', {})
    end
  end
end

function M.pick_queued()
  local chat = M.current()
  if chat then
    chat:pick_queued()
  else
    vim.notify('acpls: no chat (:Acpls chat)')
  end
end

function M.pick_mode()
  local chat = M.current()
  if chat then
    chat:pick_mode()
  else
    vim.notify('acpls: no chat (:Acpls chat)')
  end
end

function M.pick_model()
  local chat = M.current()
  if chat then
    chat:pick_config('model')
  else
    vim.notify('acpls: no chat (:Acpls chat)')
  end
end

function M.toggle_option(id)
  local chat = M.current()
  if chat then
    chat:toggle_option(id)
  else
    vim.notify('acpls: no chat (:Acpls chat)')
  end
end

--- Ids of the current chat's boolean options (for completing :Acpls toggle).
function M.boolean_option_ids()
  local chat = M.current()
  return chat and vim.tbl_map(function(o)
    return o.id or o.configId
  end, chat:boolean_options()) or {}
end

function M.pick_config()
  local chat = M.current()
  if chat then
    chat:pick_config()
  else
    vim.notify('acpls: no chat (:Acpls chat)')
  end
end

--- `:Acpls sessions`: pick one of the chats and show it.
function M.pick_chat()
  local list = chats
  if #list == 0 then
    vim.notify('acpls: no chat yet (:Acpls chat)')
    return
  end
  vim.ui.select(list, {
    prompt = 'Chat',
    format_item = function(c)
      local sid = c.session_id and (' [' .. c.session_id .. ']') or ''
      local agent = c.agent and (' (' .. c.agent .. ')') or ''
      return ('%d: %s%s%s'):format(c.id, c.view.session.title or 'chat', agent, sid)
    end,
  }, function(c)
    if c then
      c:show(true)
    end
  end)
end

---------------------------------------------------------------------------------------------------
-- Server messages

--- `acpls/sessionUpdate`
--- Warn once when a session's context window gets nearly full (again after it drops, as after a
--- compaction).
function M._check_usage(chat, update)
  local chatview = require('acpls.chatview')
  local share = chatview.usage_fraction(update)
  if not share then
    return
  end
  if share < chatview.WARN_AT then
    chat.usage_warned = false
  elseif not chat.usage_warned then
    chat.usage_warned = true
    vim.notify("acpls: the agent's context is nearly full (" .. chatview.usage_text(update) .. ')', vim.log.levels.WARN)
  end
end

--- The current chat's mode as the agent names it (`Plan`), or nil when the chat is not of `agent`
--- (the statusline names the default agent: another agent's mode next to its name would say the
--- default agent is in it).
---@param agent string?
function M.mode_status(agent)
  local chat = M.current()
  if not chat or (chat.agent and chat.agent ~= agent) then
    return nil
  end
  return require('acpls.chatview').mode_name(chat.view.session)
end

--- The current chat's context meter (`ctx 42%`), or nil.
function M.usage_status()
  local chat = M.current()
  local share = chat and require('acpls.chatview').usage_fraction(chat.view.session.usage)
  return share and ('ctx %d%%'):format(math.floor(share * 100 + 0.5)) or nil
end

function M.on_session_update(params, ctx)
  local sid = params.sessionId
  local chat = by_session[sid]
  if chat then
    chat:apply(params.update)
    return
  end
  local orphan = orphans[sid]
  if not orphan then
    orphan = { updates = {}, dropped = 0, client_id = ctx.client_id }
    orphans[sid] = orphan
  end
  -- Kept only while an acpls.newSession is in flight; past the bound they are counted, and the
  -- chat that adopts them says how many it lacks.
  if #orphan.updates < MAX_ORPHAN_UPDATES then
    table.insert(orphan.updates, params.update)
  else
    orphan.dropped = orphan.dropped + 1
  end
  if pending_new == 0 then
    M._adopt_orphans()
  end
end

--- A chat shows the status of its own agent (several agents can run side by side).
function M.on_agent_status(params, ctx)
  for _, chat in ipairs(chats) do
    local mine = chat.agent == params.agent or (chat.agent == nil and params.default ~= false)
    if chat.client_id == ctx.client_id and mine then
      chat.view.session.agent = (type(params.agentInfo) == 'table' and params.agentInfo.name) or params.agent
      chat:change(function(v)
        return { v:header_edit() }
      end)
    end
  end
end

--- Follow paused or resumed: shown in every chat header.
function M.set_follow_paused(paused)
  for _, chat in ipairs(chats) do
    chat.view.session.followPaused = paused
    chat:change(function(v)
      return { v:header_edit() }
    end)
  end
end

--- A terminal's command or exit changed: re-render the tool calls that show it.
function M.refresh_terminal(session_id, terminal_id, describe)
  local chat = by_session[session_id]
  if chat then
    chat:change(function(v)
      return v:refresh_terminal(terminal_id, describe)
    end)
  end
end

function M.on_client_exit(client_id, code, signal)
  require('acpls.permission').drop_client(client_id)
  require('acpls.question').drop_client(client_id)
  for _, chat in ipairs(chats) do
    if chat.client_id == client_id then
      if chat.session_id then
        by_session[chat.session_id] = nil
      end
      chat.session_id = nil
      chat.client_id = nil
      chat.running = false
      chat.queue = {}
      chat.on_session = {}
      if chat.creating then
        -- Its acpls.newSession will never be answered.
        chat.creating = false
        pending_new = pending_new - 1
      end
      chat:note({ ('_acpls stopped (exit %s%s); the next prompt starts a new session_'):format(
        tostring(code),
        (signal and signal ~= 0) and (', signal ' .. signal) or ''
      ) })
    end
  end
end

---------------------------------------------------------------------------------------------------
-- Completion

local function slash_items(chat, base)
  local items = {}
  for _, c in ipairs(chat.view.session.availableCommands or {}) do
    local word = '/' .. tostring(c.name)
    if vim.startswith(word, base) then
      local hint = type(c.input) == 'table' and c.input.hint and (' ' .. c.input.hint) or ''
      table.insert(items, { word = word, menu = c.description, info = (c.description or '') .. hint })
    end
  end
  return items
end

--- omnifunc of the prompt buffer: the agent's slash commands, and @-mentions (files, sessions,
--- diagnostics) anywhere in the prompt.
function M.omnifunc(findstart, base)
  local chat = by_buf[vim.api.nvim_get_current_buf()]
  local line = vim.api.nvim_get_current_line():sub(1, vim.fn.col('.') - 1)
  local at = line:find('@%S*$')
  if at and (at == 1 or line:sub(at - 1, at - 1):match('%s')) then
    if findstart == 1 then
      return chat and at - 1 or -3
    end
  end
  if findstart == 0 and vim.startswith(base, '@') then
    return chat and require('acpls.mentions').items(chat.client_id, base, chat.session_id) or {}
  end
  if findstart == 1 then
    local start = line:find('/%S*$')
    if not chat or not start or vim.trim(line:sub(1, start - 1)) ~= '' then
      return -3
    end
    return start - 1
  end
  return chat and slash_items(chat, base) or {}
end

--- Completion for other engines (nvim-cmp, blink.cmp: acpls.cmp, acpls.blink): in the prompt
--- buffer `buf`, with `line` the text before the cursor, the 0-based byte column where the word
--- being completed starts and the items (omnifunc's: `{word, menu?, info?}`); nil elsewhere.
---@param buf integer
---@param line string
---@return integer? start
---@return table[]? items
function M.complete_line(buf, line)
  local chat = by_buf[buf]
  if not chat or buf ~= chat.in_buf then
    return nil
  end
  local at = line:find('@%S*$')
  if at and (at == 1 or line:sub(at - 1, at - 1):match('%s')) then
    return at - 1, require('acpls.mentions').items(chat.client_id, line:sub(at), chat.session_id)
  end
  local slash = line:find('/%S*$')
  if slash and vim.trim(line:sub(1, slash - 1)) == '' then
    return slash - 1, slash_items(chat, line:sub(slash))
  end
  return nil
end

--- Whether `buf` is a chat's prompt buffer.
function M.is_prompt_buf(buf)
  local chat = by_buf[buf]
  return chat ~= nil and chat.in_buf == buf
end

--- Typing `/` at the start of the prompt lists the agent's commands.
function M.complete_slash()
  local chat = by_buf[vim.api.nvim_get_current_buf()]
  if not chat or vim.fn.pumvisible() == 1 then
    return
  end
  local line = vim.api.nvim_get_current_line():sub(1, vim.fn.col('.') - 1)
  if line:match('^%s*/$') then
    local items = slash_items(chat, '/')
    if #items > 0 then
      vim.fn.complete(#line, items)
    end
  end
end

--- For tests and statuslines: every chat's id, session and buffers.
function M.list()
  local out = {}
  for _, c in ipairs(chats) do
    table.insert(out, {
      id = c.id,
      sessionId = c.session_id,
      buf = c.out_buf,
      prompt_buf = c.in_buf,
      running = c.running or false,
      agent = c.agent,
    })
  end
  return out
end

--- A chat for a session continued from a checkpoint, its prompt input holding `prompt` (editable).
---@param client_id integer
---@param session_id string
---@param prompt string
---@param via string? how acpls made the session: fork, context or new
---@param agent string? the session's agent (the chat is that agent's)
function M.continue_session(client_id, session_id, prompt, via, agent)
  local chat = by_session[session_id]
  if not chat then
    local c = client.get(client_id)
    -- The continuation is a session of the checkpoint's agent: the chat is that agent's.
    chat = new_chat(c and c.root_dir or vim.fn.getcwd(), client_id, type(agent) == 'string' and agent or nil)
    chat:bind(session_id)
    local how = via == 'fork' and "the agent's copy of the conversation at that point"
      or via == 'context' and 'the earlier conversation, sent with your next prompt'
      or 'a new conversation'
    chat:note({ '_Continued from a checkpoint: ' .. how .. '._' }, 'AcplsChatMeta')
  end
  chat:set_input(prompt)
  chat:show(true)
  return chat
end

M.by_session = function(sid)
  return by_session[sid]
end

return M
