-- Checkpoints (editors/protocol.md section 8): `:Acpls checkpoints` picks the state before a turn,
-- shows what restoring it would change, restores it, and offers to continue the conversation from
-- there. The chat's "restore to here" mapping (`ui.chat.keys.restore`) starts at a user message.
local client = require('acpls.client')

local M = {}

local function chat_mod()
  return require('acpls.chat')
end

--- One line of the picker: `turn 2 · 11:02:03 · Fix the test · 3 files`.
---@param c table a checkpoint of `acpls.checkpoints`
---@return string
function M.format_item(c)
  local when = type(c.time) == 'string' and (c.time:match('T(%d%d:%d%d:%d%d)') or c.time) or '?'
  local turn = c.turn ~= vim.NIL and c.turn and ('turn ' .. c.turn) or 'before a restore'
  local files = type(c.files) == 'table' and #c.files or 0
  local names = {}
  for i, f in ipairs(type(c.files) == 'table' and c.files or {}) do
    if i > 3 then
      table.insert(names, '…')
      break
    end
    table.insert(names, vim.fn.fnamemodify(f, ':t'))
  end
  local changed = files == 0 and 'no files changed'
    or ('%d file%s: %s'):format(files, files == 1 and '' or 's', table.concat(names, ', '))
  return ('%s · %s · %s · %s'):format(turn, when, c.prompt or '', changed)
end

--- The client to ask: the current chat's, else the workspace's (started if needed).
local function client_id()
  local chat = chat_mod().current()
  if chat and chat.client_id and client.get(chat.client_id) then
    return chat.client_id
  end
  return client.ensure()
end

--- `:Acpls checkpoints`: every checkpoint of the workspace, newest first.
---@param opts {session_id: string?}?
function M.pick(opts)
  opts = opts or {}
  local id = client_id()
  if not id then
    return
  end
  client.exec(id, 'acpls.checkpoints', { sessionId = opts.session_id }, function(err, list)
    if err then
      vim.notify('acpls: checkpoints: ' .. (err.message or vim.inspect(err)), vim.log.levels.ERROR)
      return
    end
    if type(list) ~= 'table' or #list == 0 then
      vim.notify('acpls: no checkpoints yet (one is taken before every turn)')
      return
    end
    vim.ui.select(list, {
      prompt = 'Restore the workspace to before',
      kind = 'acpls.checkpoint',
      format_item = M.format_item,
    }, function(choice)
      if choice then
        M.preview(id, choice)
      end
    end)
  end)
end

--- Show what restoring `checkpoint` changes (a diff buffer), then ask before restoring.
---@param id integer client id
---@param checkpoint table
function M.preview(id, checkpoint)
  client.exec(id, 'acpls.checkpointDiff', { id = checkpoint.id }, function(err, result)
    if err then
      vim.notify('acpls: ' .. (err.message or vim.inspect(err)), vim.log.levels.ERROR)
      return
    end
    local files = type(result) == 'table' and result.files or {}
    if #files == 0 then
      vim.notify('acpls: the workspace is already as it was before ' .. M.format_item(checkpoint))
      M.offer_continue(id, checkpoint)
      return
    end
    local buf = M.show_diff(checkpoint, files)
    vim.ui.select({ 'Restore', 'Cancel' }, {
      prompt = ('Restore %d file%s to before %s?'):format(#files, #files == 1 and '' or 's', checkpoint.prompt or ''),
      kind = 'acpls.checkpoint.confirm',
    }, function(choice)
      if vim.api.nvim_buf_is_valid(buf) then
        vim.api.nvim_buf_delete(buf, { force = true })
      end
      if choice == 'Restore' then
        M.restore(id, checkpoint)
      end
    end)
  end)
end

--- A scratch `diff` buffer in a new tab page with every file's diff.
---@return integer buf
function M.show_diff(checkpoint, files)
  local lines = { '# Restore to before: ' .. (checkpoint.prompt or ''), '' }
  for _, f in ipairs(files) do
    table.insert(lines, ('# %s (%s)'):format(f.path, f.status))
    vim.list_extend(lines, vim.split(f.diff or '', '\n', { plain = true, trimempty = true }))
    table.insert(lines, '')
  end
  local buf = vim.api.nvim_create_buf(false, true)
  vim.bo[buf].bufhidden = 'wipe'
  pcall(vim.api.nvim_buf_set_name, buf, 'acpls://checkpoint/' .. checkpoint.id)
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modifiable = false
  vim.bo[buf].filetype = 'diff'
  vim.cmd('tab split')
  vim.api.nvim_win_set_buf(0, buf)
  return buf
end

local function is_unsaved(skip)
  return type(skip.reason) == 'string' and skip.reason:find('unsaved changes', 1, true) ~= nil
end

--- Write the buffers the restore changed, so the files on disk (what the agent reads) are restored
--- too; undo still works. Buffers whose unsaved text the user chose to replace are left unsaved.
local function write_restored(paths, keep_unsaved)
  for _, path in ipairs(paths) do
    local buf = vim.fn.bufnr(path)
    if buf > 0 and vim.api.nvim_buf_is_loaded(buf) and vim.bo[buf].modified and not keep_unsaved[path] then
      vim.api.nvim_buf_call(buf, function()
        vim.cmd('silent noautocmd write')
      end)
    end
  end
end

--- Restore `checkpoint`; files with unsaved changes are restored only when the user says so.
---@param id integer client id
---@param checkpoint table
---@param include string[]? paths whose unsaved changes the user agreed to replace
function M.restore(id, checkpoint, include)
  local args = { id = checkpoint.id, includeUnsaved = include }
  client.exec(id, 'acpls.restoreCheckpoint', args, function(err, result)
    if err then
      vim.notify('acpls: restore: ' .. (err.message or vim.inspect(err)), vim.log.levels.ERROR)
      return
    end
    local keep = {}
    for _, p in ipairs(include or {}) do
      keep[p] = true
    end
    write_restored(result.restored or {}, keep)
    local unsaved, other = {}, {}
    for _, s in ipairs(result.skipped or {}) do
      table.insert(is_unsaved(s) and unsaved or other, s)
    end
    if #unsaved > 0 and not include then
      local names = vim.tbl_map(function(s)
        return vim.fn.fnamemodify(s.path, ':~:.')
      end, unsaved)
      vim.ui.select({ 'Restore them too', 'Keep my unsaved changes' }, {
        prompt = 'Unsaved changes in ' .. table.concat(names, ', ') .. ':',
        kind = 'acpls.checkpoint.unsaved',
      }, function(choice)
        if choice == 'Restore them too' then
          M.restore(id, checkpoint, vim.tbl_map(function(s)
            return s.path
          end, unsaved))
        else
          M.report(id, checkpoint, result)
        end
      end)
      return
    end
    M.report(id, checkpoint, result)
  end)
end

function M.report(id, checkpoint, result)
  local msg = ('acpls: restored %d file%s'):format(#(result.restored or {}), #(result.restored or {}) == 1 and '' or 's')
  local skipped = result.skipped or {}
  if #skipped > 0 then
    local lines = {}
    for _, s in ipairs(skipped) do
      table.insert(lines, ('  %s: %s'):format(vim.fn.fnamemodify(s.path, ':~:.'), s.reason))
    end
    msg = msg .. (', %d skipped:\n'):format(#skipped) .. table.concat(lines, '\n')
  end
  msg = msg .. ('\n(undo: :Acpls checkpoints, "before a restore")')
  vim.notify(msg, #skipped > 0 and vim.log.levels.WARN or vim.log.levels.INFO)
  vim.api.nvim_exec_autocmds('User', {
    pattern = 'AcplsCheckpointRestored',
    modeline = false,
    data = { id = checkpoint.id, restored = result.restored, skipped = skipped },
  })
  M.offer_continue(id, checkpoint)
end

--- After a restore to before a turn: continue the conversation from there, in a chat whose prompt
--- holds that turn's prompt, editable.
function M.offer_continue(id, checkpoint)
  if not checkpoint.turn or checkpoint.turn == vim.NIL or not checkpoint.sessionId then
    return
  end
  vim.ui.select({ 'Continue the conversation from here', 'Keep the current conversation' }, {
    prompt = ('Continue from before turn %d?'):format(checkpoint.turn),
    kind = 'acpls.checkpoint.continue',
  }, function(choice)
    if choice ~= 'Continue the conversation from here' then
      return
    end
    client.exec(id, 'acpls.continueFromCheckpoint', { id = checkpoint.id }, function(err, result)
      if err then
        vim.notify('acpls: continue: ' .. (err.message or vim.inspect(err)), vim.log.levels.ERROR)
        return
      end
      chat_mod().continue_session(id, result.sessionId, result.prompt or '', result.via, result.agent)
    end)
  end)
end

--- The chat's "restore to here": the checkpoint of the `n`-th prompt of `session_id`.
---@param id integer client id
---@param session_id string
---@param n integer
---@param text string? that prompt's text (matched when the turn count differs, after a load)
function M.restore_turn(id, session_id, n, text)
  client.exec(id, 'acpls.checkpoints', { sessionId = session_id }, function(err, list)
    if err or type(list) ~= 'table' then
      vim.notify('acpls: checkpoints: ' .. vim.inspect(err), vim.log.levels.ERROR)
      return
    end
    local first = text and vim.split(vim.trim(text), '\n', { plain = true })[1] or nil
    local found
    for _, c in ipairs(list) do
      if c.turn == n and (not first or c.prompt == first) then
        found = c
        break
      end
    end
    if not found and first then
      for _, c in ipairs(list) do
        if c.turn ~= vim.NIL and c.prompt == first then
          found = c
          break
        end
      end
    end
    if not found then
      vim.notify('acpls: no checkpoint for this message (checkpoints are taken before each turn)', vim.log.levels.WARN)
      return
    end
    M.preview(id, found)
  end)
end

return M
