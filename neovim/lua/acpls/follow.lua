-- Follow the agent: show where it works in a code window, never in the window the user is in (nor
-- taking its focus or mode): another code window of the tab page, else one opened beside the chat.
local client = require('acpls.client')
local config = require('acpls.config')
local util = require('acpls.util')

local M = {}

M.ns = vim.api.nvim_create_namespace('acpls.follow')

--- What the server last said: enabled, and whether the user's edit paused it.
M.state = { enabled = nil, paused = false }

local mark = nil ---@type {buf: integer, id: integer}?

local function clear_mark()
  if mark and vim.api.nvim_buf_is_valid(mark.buf) then
    vim.api.nvim_buf_clear_namespace(mark.buf, M.ns, 0, -1)
  end
  mark = nil
end

local function place_mark(buf, row)
  clear_mark()
  local id = vim.api.nvim_buf_set_extmark(buf, M.ns, row, 0, {
    line_hl_group = 'AcplsAgentCursor',
    sign_text = config.get().ui.agent_sign,
    sign_hl_group = 'AcplsAgentCursorSign',
    priority = 20,
  })
  mark = { buf = buf, id = id }
end

-- A window for code when the tab page has only the chat: split beside it, unfocused. In any other
-- tab page without code (a diff preview, help) no window is made: only the mark moves.
local function new_code_window(buf)
  local chat_wins = vim.tbl_filter(function(w)
    return vim.b[vim.api.nvim_win_get_buf(w)].acpls_chat ~= nil
  end, vim.api.nvim_tabpage_list_wins(0))
  if #chat_wins == 0 then
    return nil
  end
  return vim.api.nvim_open_win(buf, false, { split = 'left', win = chat_wins[1] })
end

-- The window follow shows the agent in: a code window of this tab page other than the current one
-- (the last one the user was in first), else a new one beside the chat. Never the current window:
-- the user's buffer and cursor stay where they are, whatever mode they are in.
local function follow_window(buf)
  local cur = vim.api.nvim_get_current_win()
  local win = util.code_window()
  if win == nil or win == cur then
    win = nil
    for _, w in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
      if w ~= cur and util.is_code_win(w) then
        win = w
        break
      end
    end
  end
  return win or new_code_window(buf)
end

-- The buffer's row for an LSP range start, and its byte column (first non-blank at column 0).
local function target(buf, range)
  local count = vim.api.nvim_buf_line_count(buf)
  local row = math.max(0, math.min(range.start.line or 0, count - 1))
  local line = vim.api.nvim_buf_get_lines(buf, row, row + 1, false)[1] or ''
  local col = util.byte_col(line, range.start.character or 0)
  if col == 0 then
    col = (line:find('%S') or 1) - 1
  end
  return row, col
end

--- `acpls/followAgent`
function M.on_follow_agent(params, _ctx)
  local path = util.uri_to_path(params.uri)
  if not path or M.state.enabled == false then
    return
  end
  util.track_windows()
  local buf = util.file_buf(path)
  client.attach_buffer(buf)
  local win = follow_window(buf)
  local can_move = win ~= nil
  if can_move and vim.api.nvim_win_get_buf(win) ~= buf then
    can_move = pcall(vim.api.nvim_win_set_buf, win, buf)
  end
  if type(params.range) ~= 'table' or type(params.range.start) ~= 'table' then
    return
  end
  local row, col = target(buf, params.range)
  place_mark(buf, row)
  if can_move then
    vim.api.nvim_win_set_cursor(win, { row + 1, col })
    vim.api.nvim_win_call(win, function()
      vim.cmd('normal! zv')
      local top, bottom = vim.fn.line('w0'), vim.fn.line('w$')
      if row + 1 < top or row + 1 > bottom then
        vim.cmd('normal! zz')
      end
    end)
  end
end

--- `acpls/followState`
function M.on_follow_state(params, _ctx)
  local was_paused = M.state.paused
  M.state.enabled = params.enabled
  M.state.paused = params.enabled == false and params.reason == 'userEdit'
  if not params.enabled then
    clear_mark()
  end
  if M.state.paused and not was_paused then
    vim.notify('acpls: follow paused because you edited a file (:Acpls follow on resumes it)')
  end
  require('acpls.chat').set_follow_paused(M.state.paused)
end

--- `:Acpls follow on|off|toggle`
---@param what 'on'|'off'|'toggle'|boolean
function M.set(what)
  local enabled
  if what == 'toggle' then
    enabled = M.state.enabled == false
  elseif what == 'on' or what == true then
    enabled = true
  elseif what == 'off' or what == false then
    enabled = false
  else
    vim.notify('acpls: follow on|off|toggle', vim.log.levels.ERROR)
    return
  end
  M.state.enabled = enabled
  M.state.paused = false
  if not enabled then
    clear_mark()
  end
  local ids = vim.tbl_map(function(c)
    return c.id
  end, client.clients())
  if #ids == 0 then
    ids = { client.ensure() }
  end
  for _, id in ipairs(ids) do
    client.exec(id, 'acpls.setFollow', { enabled = enabled }, function(err, result)
      if err then
        vim.notify('acpls: setFollow failed: ' .. (err.message or ''), vim.log.levels.ERROR)
      elseif type(result) == 'table' then
        M.state.enabled = result.enabled
      end
    end)
  end
  require('acpls.chat').set_follow_paused(false)
end

--- Where the agent mark is: {buf, row} or nil.
function M.mark()
  if not mark or not vim.api.nvim_buf_is_valid(mark.buf) then
    return nil
  end
  local pos = vim.api.nvim_buf_get_extmark_by_id(mark.buf, M.ns, mark.id, {})
  return { buf = mark.buf, row = pos[1] }
end

return M
