-- Review of the agents' changes (`acpls/changes`): hunks as signs and in the quickfix list, and
-- keep / reject per hunk.
local client = require('acpls.client')
local config = require('acpls.config')
local util = require('acpls.util')

local M = {}

M.ns = vim.api.nvim_create_namespace('acpls.review')
local QF_TITLE = 'acpls: agent changes'

local files_by_client = {} ---@type table<integer, table[]>
local qf_id = nil ---@type integer?

--- Every changed file with its client id: `{client_id, file}`.
local function all_files()
  local out = {}
  for id, files in pairs(files_by_client) do
    for _, f in ipairs(files) do
      table.insert(out, { client_id = id, file = f })
    end
  end
  table.sort(out, function(a, b)
    return tostring(a.file.path) < tostring(b.file.path)
  end)
  return out
end

local function file_path(f)
  return type(f.path) == 'string' and f.path or util.uri_to_path(f.uri)
end

local function hunk_kind(h)
  if (h.removed or 0) == 0 then
    return 'add'
  elseif (h.added or 0) == 0 then
    return 'delete'
  end
  return 'change'
end

local function hunk_rows(h, line_count)
  local s = h.range and h.range.start and h.range.start.line or 0
  local e = h.range and h.range['end'] and h.range['end'].line or s
  local last = math.max(s, e - 1)
  s = math.max(0, math.min(s, line_count - 1))
  last = math.max(s, math.min(last, line_count - 1))
  return s, last
end

--- Signs for the hunks of the file shown in `buf`.
function M.place_signs(buf)
  if not vim.api.nvim_buf_is_valid(buf) or not vim.api.nvim_buf_is_loaded(buf) then
    return
  end
  vim.api.nvim_buf_clear_namespace(buf, M.ns, 0, -1)
  local name = vim.api.nvim_buf_get_name(buf)
  if name == '' then
    return
  end
  name = vim.fs.normalize(name)
  local signs = config.get().ui.hunk_signs
  local hl = { add = 'AcplsHunkAdd', change = 'AcplsHunkChange', delete = 'AcplsHunkDelete' }
  local count = vim.api.nvim_buf_line_count(buf)
  for _, entry in ipairs(all_files()) do
    local path = file_path(entry.file)
    if path and vim.fs.normalize(path) == name then
      for _, h in ipairs(entry.file.hunks or {}) do
        local kind = hunk_kind(h)
        local s, last = hunk_rows(h, count)
        if kind == 'delete' then
          last = s
        end
        for row = s, last do
          vim.api.nvim_buf_set_extmark(buf, M.ns, row, 0, {
            sign_text = signs[kind],
            sign_hl_group = hl[kind],
            priority = 6,
          })
        end
      end
    end
  end
end

local function first_line(text)
  return (type(text) == 'string' and text:match('^[^\n]*') or ''):sub(1, 80)
end

--- The quickfix items: one per hunk.
function M.items()
  local items = {}
  for _, entry in ipairs(all_files()) do
    local f = entry.file
    local path = file_path(f)
    for _, h in ipairs(f.hunks or {}) do
      local line = h.range and h.range.start and h.range.start.line or 0
      local kind = hunk_kind(h)
      local sample = kind == 'delete' and ('removed: ' .. first_line(h.oldText)) or first_line(h.newText)
      table.insert(items, {
        filename = path,
        lnum = line + 1,
        col = 1,
        text = ('[%s +%d -%d] %s'):format(f.status or kind, h.added or 0, h.removed or 0, sample),
        user_data = { hunkId = h.hunkId, client_id = entry.client_id },
      })
    end
    if not f.hunks or #f.hunks == 0 then
      table.insert(items, {
        filename = path,
        lnum = 1,
        text = ('[%s +%d -%d]'):format(f.status or '?', f.added or 0, f.removed or 0),
        user_data = { client_id = entry.client_id, uri = f.uri },
      })
    end
    if type(f.note) == 'string' and #items > 0 then
      -- Why this file can be kept but not rejected.
      items[#items].text = items[#items].text .. ' (' .. f.note .. ')'
    end
  end
  return items
end

local function our_qf_exists()
  return qf_id and vim.fn.getqflist({ id = qf_id, title = 0 }).title == QF_TITLE
end

--- Fill the quickfix list (replacing our previous list, not the user's), optionally opening it.
function M.quickfix(open)
  local items = M.items()
  if our_qf_exists() then
    vim.fn.setqflist({}, 'r', { id = qf_id, items = items, title = QF_TITLE })
  elseif open then
    vim.fn.setqflist({}, ' ', { items = items, title = QF_TITLE })
    qf_id = vim.fn.getqflist({ id = 0 }).id
  end
  if open then
    vim.cmd('botright copen')
  end
end

local function refresh()
  for _, buf in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(buf) and vim.bo[buf].buftype == '' then
      M.place_signs(buf)
    end
  end
  M.quickfix(false)
end

local autocmd_done = false
local function ensure_autocmd()
  if autocmd_done then
    return
  end
  autocmd_done = true
  vim.api.nvim_create_autocmd({ 'BufReadPost', 'BufWinEnter' }, {
    group = vim.api.nvim_create_augroup('acpls.review', { clear = true }),
    callback = function(ev)
      if next(files_by_client) then
        M.place_signs(ev.buf)
      end
    end,
  })
end

---@param client_id integer
---@param files table[]
function M.set_files(client_id, files)
  ensure_autocmd()
  files_by_client[client_id] = type(files) == 'table' and files or {}
  refresh()
end

--- `acpls/changes`
function M.on_changes(params, ctx)
  util.reload_changed_files()
  M.set_files(ctx.client_id, params.files)
end

--- The hunk under the cursor: in our quickfix window the entry's hunk, else the hunk of the current
--- file that covers the cursor line.
---@return {hunkId: string, client_id: integer}?
function M.hunk_at_cursor()
  if vim.bo.filetype == 'qf' then
    local list = vim.fn.getqflist({ id = qf_id or 0, items = 0, title = 0 })
    if list.title == QF_TITLE then
      local item = list.items[vim.fn.line('.')]
      local data = item and item.user_data
      if type(data) == 'table' and data.hunkId then
        return data
      end
    end
    return nil
  end
  local buf = vim.api.nvim_get_current_buf()
  local name = vim.fs.normalize(vim.api.nvim_buf_get_name(buf))
  local row = vim.api.nvim_win_get_cursor(0)[1] - 1
  local count = vim.api.nvim_buf_line_count(buf)
  for _, entry in ipairs(all_files()) do
    local path = file_path(entry.file)
    if path and vim.fs.normalize(path) == name then
      for _, h in ipairs(entry.file.hunks or {}) do
        local s, last = hunk_rows(h, count)
        if row >= s and row <= last then
          return { hunkId = h.hunkId, client_id = entry.client_id }
        end
      end
    end
  end
  return nil
end

local function apply_result(client_id)
  return function(err, result)
    if err then
      vim.notify('acpls: ' .. (err.message or 'review command failed'), vim.log.levels.ERROR)
    elseif type(result) == 'table' and type(result.files) == 'table' then
      M.set_files(client_id, result.files)
    end
  end
end

--- Keep or reject the hunk under the cursor.
---@param action 'keep'|'reject'
function M.hunk(action)
  local h = M.hunk_at_cursor()
  if not h then
    vim.notify('acpls: no agent change here', vim.log.levels.WARN)
    return
  end
  local command = action == 'keep' and 'acpls.keepHunk' or 'acpls.rejectHunk'
  client.exec(h.client_id, command, { hunkId = h.hunkId }, apply_result(h.client_id))
end

--- Keep or reject every change (of the current file when `file` is true).
---@param action 'keep'|'reject'
---@param file boolean?
function M.all(action, file)
  local command = action == 'keep' and 'acpls.keepAll' or 'acpls.rejectAll'
  local args = {}
  if file then
    args.uri = vim.uri_from_bufnr(0)
  end
  for _, c in ipairs(client.clients()) do
    client.exec(c.id, command, args, apply_result(c.id))
  end
end

--- `:Acpls review`: ask each server for the changes and show them in the quickfix list.
function M.review()
  local clients = client.clients()
  if #clients == 0 then
    vim.notify('acpls: not running')
    return
  end
  local left = #clients
  for _, c in ipairs(clients) do
    client.exec(c.id, 'acpls.review', {}, function(err, result)
      apply_result(c.id)(err, result)
      left = left - 1
      if left == 0 then
        M.quickfix(true)
      end
    end)
  end
end

local function diff_lines(prefix, text)
  local out = {}
  if type(text) ~= 'string' or text == '' then
    return out
  end
  for _, l in ipairs(vim.split(text:gsub('\n$', ''), '\n', { plain = true })) do
    table.insert(out, prefix .. l)
  end
  return out
end

--- The rejected changes as markdown (what the agent proposed stays visible after a reject).
---@param rejected table[] `acpls.rejected` result items
---@return string[]
function M.rejected_lines(rejected)
  local lines = { '# Rejected agent changes', '' }
  if #rejected == 0 then
    table.insert(lines, '_Nothing rejected yet._')
  end
  for _, r in ipairs(rejected) do
    table.insert(lines, ('## %s'):format(tostring(r.path or r.uri)))
    table.insert(lines, ('_hunk %s, rejected %s_'):format(tostring(r.hunkId), tostring(r.rejectedAt or '')))
    table.insert(lines, '```diff')
    vim.list_extend(lines, diff_lines('-', r.oldText))
    vim.list_extend(lines, diff_lines('+', r.newText))
    table.insert(lines, '```')
    table.insert(lines, '')
  end
  return lines
end

--- `:Acpls rejected`: the changes you rejected, with the agent's text, in a scratch buffer.
function M.show_rejected()
  local clients = client.clients()
  if #clients == 0 then
    vim.notify('acpls: not running')
    return
  end
  client.exec(clients[1].id, 'acpls.rejected', {}, function(err, result)
    if err then
      vim.notify('acpls: ' .. (err.message or 'rejected failed'), vim.log.levels.ERROR)
      return
    end
    local rejected = type(result) == 'table' and type(result.rejected) == 'table' and result.rejected or {}
    local buf = util.scratch('acpls://rejected', 'markdown')
    vim.api.nvim_buf_set_lines(buf, 0, -1, false, M.rejected_lines(rejected))
    vim.bo[buf].modifiable = false
    vim.cmd('botright split')
    vim.api.nvim_win_set_buf(0, buf)
  end)
end

function M.files()
  return all_files()
end

return M
