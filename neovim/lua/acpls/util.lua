-- Small helpers shared by the modules: positions, URIs and which window holds code.
local M = {}

--- Byte column of UTF-16 column `col` in `line` (clamped to the line).
---@param line string
---@param col integer
function M.byte_col(line, col)
  if col <= 0 then
    return 0
  end
  local ok, idx = pcall(vim.str_byteindex, line, 'utf-16', col, false)
  if not ok then
    return #line
  end
  return math.min(idx, #line)
end

--- UTF-16 column of byte column `col` in `line`.
function M.utf16_col(line, col)
  local ok, idx = pcall(vim.str_utfindex, line, 'utf-16', math.min(col, #line), false)
  return ok and idx or col
end

---@param uri string
---@return string?
function M.uri_to_path(uri)
  if type(uri) ~= 'string' or not vim.startswith(uri, 'file:') then
    return nil
  end
  return vim.uri_to_fname(uri)
end

--- A buffer that shows code (a real file, not one of ours or a special buffer).
function M.is_code_buf(buf)
  return vim.api.nvim_buf_is_valid(buf)
    and vim.bo[buf].buftype == ''
    and not vim.b[buf].acpls_chat
    and vim.bo[buf].filetype ~= 'qf'
end

function M.is_code_win(win)
  if not vim.api.nvim_win_is_valid(win) then
    return false
  end
  if vim.api.nvim_win_get_config(win).relative ~= '' then
    return false
  end
  if vim.wo[win].diff then
    return false
  end
  return M.is_code_buf(vim.api.nvim_win_get_buf(win))
end

local last_code_win = nil ---@type integer?

--- The window where code should be shown in the current tab page: the code window the user was in
--- last, else any code window, else nil.
---@return integer?
function M.code_window()
  local tab = vim.api.nvim_get_current_tabpage()
  if
    last_code_win
    and M.is_code_win(last_code_win)
    and vim.api.nvim_win_get_tabpage(last_code_win) == tab
  then
    return last_code_win
  end
  local cur = vim.api.nvim_get_current_win()
  if M.is_code_win(cur) then
    return cur
  end
  for _, win in ipairs(vim.api.nvim_tabpage_list_wins(tab)) do
    if M.is_code_win(win) then
      return win
    end
  end
  return nil
end

local tracking = false
--- Remember the last code window the user entered.
function M.track_windows()
  if tracking then
    return
  end
  tracking = true
  if M.is_code_win(vim.api.nvim_get_current_win()) then
    last_code_win = vim.api.nvim_get_current_win()
  end
  vim.api.nvim_create_autocmd({ 'WinEnter', 'BufWinEnter' }, {
    group = vim.api.nvim_create_augroup('acpls.windows', { clear = true }),
    callback = function()
      local win = vim.api.nvim_get_current_win()
      if M.is_code_win(win) then
        last_code_win = win
      end
    end,
  })
end

--- The buffer for `path`, loaded (without showing it anywhere).
---@param path string
---@return integer
function M.file_buf(path)
  local buf = vim.fn.bufadd(path)
  if not vim.api.nvim_buf_is_loaded(buf) then
    vim.fn.bufload(buf)
  end
  vim.bo[buf].buflisted = true
  return buf
end

local function mtime(name)
  local stat = vim.uv.fs_stat(name)
  return stat and (stat.mtime.sec * 1000000000 + stat.mtime.nsec) or nil
end

--- Remember when a buffer's file was last read or written (to see later writes by an agent).
function M.remember_mtime(buf)
  if vim.api.nvim_buf_is_valid(buf) and vim.bo[buf].buftype == '' then
    local name = vim.api.nvim_buf_get_name(buf)
    if name ~= '' then
      vim.b[buf].acpls_mtime = mtime(name)
    end
  end
end

--- Reload buffers whose files an agent changed on disk (agents that write files themselves), as
--- 'autoread' would, but at once (`:checktime` waits for the user's next key). Only buffers without
--- unsaved changes reload; for the others Neovim's usual question comes at its next check.
function M.reload_changed_files()
  for _, buf in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(buf) and vim.bo[buf].buftype == '' then
      local name = vim.api.nvim_buf_get_name(buf)
      local seen = vim.b[buf].acpls_mtime
      local now = name ~= '' and mtime(name) or nil
      if seen and now and now ~= seen and not vim.bo[buf].modified then
        vim.api.nvim_buf_call(buf, function()
          vim.cmd('silent! edit')
        end)
      end
      if now then
        vim.b[buf].acpls_mtime = now
      end
    end
  end
  pcall(vim.cmd, 'silent! checktime')
end

--- Make a scratch buffer owned by acpls.
---@param name string
---@param filetype string?
function M.scratch(name, filetype)
  local buf = vim.api.nvim_create_buf(false, true)
  vim.bo[buf].bufhidden = 'hide'
  vim.bo[buf].swapfile = false
  local existing = vim.fn.bufnr(name)
  if existing ~= -1 and existing ~= buf then
    pcall(vim.api.nvim_buf_delete, existing, { force = true })
  end
  pcall(vim.api.nvim_buf_set_name, buf, name)
  if filetype then
    vim.bo[buf].filetype = filetype
  end
  return buf
end

function M.set_win_opts(win, opts)
  for k, v in pairs(opts) do
    vim.api.nvim_set_option_value(k, v, { win = win, scope = 'local' })
  end
end

--- Answer an LSP request from inside its handler's coroutine once `ask(done)` calls `done(result)`,
--- at once or later from a UI callback (the client sends the reply when the handler returns).
--- Outside a coroutine nothing can wait: vim.NIL.
---@param what string named in the error shown when the reply fails
---@param ask fun(done: fun(result: any))
---@return any
function M.await_reply(what, ask)
  local co, main = coroutine.running()
  if co == nil or main then
    return vim.NIL
  end
  local result, answered, waiting = nil, false, false
  ask(function(r)
    result, answered = r, true
    if waiting then
      local ok, err = coroutine.resume(co)
      if not ok then
        vim.notify('acpls: ' .. what .. ' reply failed: ' .. tostring(err), vim.log.levels.ERROR)
      end
    end
  end)
  if not answered then
    waiting = true
    coroutine.yield()
  end
  return result
end

return M
