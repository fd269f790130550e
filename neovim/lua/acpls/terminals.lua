-- Agent terminals: one terminal buffer (`nvim_open_term`) per terminal, so colours, cursor movement
-- and progress bars render as in a real terminal.
local M = {}

local terms = {} ---@type table<string, table>
local order = {} ---@type string[]

local EXIT_NOTE_DELAY_MS = 150

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
  return ('acpls://terminal/%s: %s [%s]'):format(t.terminalId, t.command or '?', status_text(t))
end

-- Name the buffer after the terminal; two sessions may use the same terminal id, so the session
-- goes into the name when the short one is taken.
local function set_name(t)
  if not pcall(vim.api.nvim_buf_set_name, t.buf, buf_name(t)) then
    local long = buf_name(t):gsub('^acpls://terminal/', 'acpls://terminal/' .. tostring(t.sessionId) .. '/')
    pcall(vim.api.nvim_buf_set_name, t.buf, long)
  end
end

local function open(t)
  local buf = vim.api.nvim_create_buf(false, true)
  t.buf = buf
  t.chan = vim.api.nvim_open_term(buf, {})
  vim.b[buf].acpls_terminal = t.terminalId
  vim.b[buf].acpls_session = t.sessionId
  set_name(t)
end

local function get(sid, tid)
  local k = key(sid, tid)
  local t = terms[k]
  if not t then
    t = { sessionId = sid, terminalId = tid }
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

-- Throw everything shown away: a fresh terminal buffer takes the old one's place in every window.
local function reset(t)
  local old = t.buf
  open(t)
  for _, win in ipairs(vim.fn.win_findbuf(old)) do
    vim.api.nvim_win_set_buf(win, t.buf)
  end
  pcall(vim.api.nvim_buf_delete, old, { force = true })
  set_name(t)
  t.exit_noted = false
end

-- "[process exited …]" at the end of the output, like :terminal does, a moment after the exit so
-- the last output (sent at most every ~16 ms) lands first.
local function note_exit(t)
  if t.exit_noted or type(t.exitStatus) ~= 'table' then
    return
  end
  t.exit_noted = true
  local buf = t.buf
  vim.defer_fn(function()
    if t.buf == buf and vim.api.nvim_buf_is_valid(buf) then
      vim.api.nvim_chan_send(t.chan, ('\r\n\27[2m[process %s]\27[0m\r\n'):format(status_text(t)))
    end
  end, EXIT_NOTE_DELAY_MS)
end

--- `acpls/terminalOutput`
function M.on_output(params, _ctx)
  local t = get(params.sessionId, params.terminalId)
  if params.reset then
    reset(t)
  end
  local text = params.text
  if type(text) == 'string' and text ~= '' then
    -- A bare LF moves down without returning to column 0 in a terminal; output from pipes has them.
    vim.api.nvim_chan_send(t.chan, (text:gsub('\r?\n', '\r\n')))
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
