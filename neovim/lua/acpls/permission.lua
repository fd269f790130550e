-- Permission prompts: `vim.ui.select` with every option the agent sent (so any picker plugin works),
-- a diff preview in Neovim's diff mode, and a queue of pending prompts answerable in any order.
local edit = require('acpls.edit')
local util = require('acpls.util')

local M = {}

local kind_labels = {
  allow_once = 'allow once',
  allow_always = 'allow always',
  reject_once = 'reject once',
  reject_always = 'reject always',
}

local pending = {} ---@type table[] requests waiting for an answer, oldest first
local active = nil ---@type table? the request whose prompt is open
local counter = 0

--- The label of one option: its name and its kind (unknown kinds shown as sent).
function M.option_label(opt)
  local kind = opt.kind ~= nil and tostring(opt.kind) or 'no kind'
  return ('%s [%s]'):format(tostring(opt.name or opt.optionId), kind_labels[kind] or kind)
end

local function title_of(req)
  local p = req.params
  local tc = type(p.toolCall) == 'table' and p.toolCall or {}
  local title = p.title or tc.title or 'The agent asks for permission'
  local kind = tc.kind and (' (' .. tostring(tc.kind) .. ')') or ''
  return tostring(title):gsub('\n', ' ') .. kind
end

--- What an "always" answer records (`rememberAs`, editors/protocol.md 5.3), as the text shown next
--- to the always options; nil when the request does not say.
function M.records(params)
  local scopes = params.rememberAs
  if type(scopes) ~= 'table' then
    return nil
  end
  if #scopes == 0 then
    return 'records nothing (asked again next time)'
  end
  local texts = {}
  for _, scope in ipairs(scopes) do
    local text = type(scope) == 'table' and (scope.description or scope.commandPrefix or scope.pathGlob) or nil
    table.insert(texts, (tostring(text or '?'):gsub('[%c]', ' ')))
  end
  return 'records: ' .. table.concat(texts, '; ')
end

local function relpath(path)
  local rel = vim.fn.fnamemodify(path, ':.')
  return rel ~= '' and rel or path
end

--- The entries of a request's prompt: every option, then one "Show diff" per previewed file, then
--- "Decide later".
function M.items(req)
  local items = {}
  local records = M.records(req.params)
  for _, opt in ipairs(type(req.params.options) == 'table' and req.params.options or {}) do
    local label = M.option_label(opt)
    if records and (opt.kind == 'allow_always' or opt.kind == 'reject_always') then
      label = label .. ' — ' .. records
    end
    table.insert(items, { kind = 'option', option = opt, label = label })
  end
  for _, file in ipairs(edit.files(req.params.preview)) do
    local ok, current, proposed = pcall(edit.texts, file)
    local stat = ''
    if ok then
      local added, removed = edit.count(current, proposed)
      stat = (' (+%d -%d)'):format(added, removed)
    end
    local op = file.op == 'edit' and '' or (file.op .. ' ')
    local label = ('Show diff: %s%s%s'):format(op, relpath(file.path), stat)
    table.insert(items, { kind = 'diff', file = file, label = label })
  end
  table.insert(items, { kind = 'later', label = 'Decide later (:Acpls permissions)' })
  return items
end

local function finish(req, result)
  if req.done then
    return
  end
  req.done = true
  for i, r in ipairs(pending) do
    if r == req then
      table.remove(pending, i)
      break
    end
  end
  if active == req then
    active = nil
  end
  req.cb(result)
  vim.schedule(M.show_next)
end

--- Open the prompt of `req`.
function M.show(req)
  active = req
  req.deferred = false
  local items = M.items(req)
  local n = #pending
  local prompt = ('acpls%s: %s'):format(n > 1 and (' [' .. n .. ' waiting]') or '', title_of(req))
  if type(req.params.description) == 'string' and req.params.description ~= '' then
    prompt = prompt .. ' — ' .. req.params.description:gsub('\n', ' ')
  end
  for _, pb in ipairs(type(req.params.previewProblems) == 'table' and req.params.previewProblems or {}) do
    local problem = type(pb) == 'table' and (pb.message or vim.inspect(pb)) or pb
    prompt = prompt .. ' [preview: ' .. tostring(problem) .. ']'
  end
  vim.ui.select(items, {
    prompt = prompt,
    kind = 'acpls.permission',
    format_item = function(item)
      return item.label
    end,
  }, function(choice)
    if req.done then
      return
    end
    if choice == nil then
      finish(req, vim.NIL)
    elseif choice.kind == 'option' then
      finish(req, { optionId = choice.option.optionId })
    elseif choice.kind == 'diff' then
      active = nil
      req.diff_open = true
      M.show_diff(choice.file, function()
        req.diff_open = false
        if not req.done and not (active and not active.done) then
          M.show(req)
        end
      end)
    else
      req.deferred = true
      active = nil
      vim.notify(('acpls: %d permission request(s) waiting (:Acpls permissions)'):format(#pending))
      vim.schedule(M.show_next)
    end
  end)
end

--- Open the next waiting prompt, unless one is open already.
function M.show_next()
  if active and not active.done then
    return
  end
  for _, req in ipairs(pending) do
    if not req.deferred and not req.diff_open then
      M.show(req)
      return
    end
  end
end

--- Queue a permission request; `cb` gets the result (`{optionId}` or vim.NIL for dismissed).
---@param params table `acpls/requestPermission` params
---@param ctx table
---@param cb fun(result: any)
function M.ask(params, ctx, cb)
  counter = counter + 1
  local req = { id = counter, params = params, ctx = ctx, cb = cb, done = false }
  table.insert(pending, req)
  M.show_next()
  return req
end

--- `acpls/requestPermission`: runs in the LSP client's coroutine, which waits for the answer.
function M.on_request(params, ctx)
  return util.await_reply('permission', function(done)
    M.ask(params, ctx, done)
  end)
end

--- `:Acpls permissions`: pick a waiting request (any of them) and answer it.
function M.pick()
  local open = vim.tbl_filter(function(r)
    return not r.done
  end, pending)
  if #open == 0 then
    vim.notify('acpls: no permission request is waiting')
  elseif #open == 1 then
    M.show(open[1])
  else
    vim.ui.select(open, {
      prompt = 'acpls: permission requests',
      format_item = title_of,
    }, function(req)
      if req then
        M.show(req)
      end
    end)
  end
end

--- Drop the prompts of a session whose turn ended (the server has answered them already).
function M.drop_session(session_id)
  for _, req in ipairs(vim.list_slice(pending)) do
    if req.params.sessionId == session_id then
      finish(req, vim.NIL)
    end
  end
end

local function rule_label(r)
  if type(r.description) == 'string' then
    return ('%s %s (%s)'):format(tostring(r.decision), r.description:gsub('[%c]', ' '), tostring(r.agent or '?'))
  end
  local what = r.pathGlob or r.commandPrefix or r.toolTitle or 'any'
  return ('%s %s: %s (%s)'):format(tostring(r.decision), tostring(r.kind), what, tostring(r.agent or '?'))
end

--- `:Acpls rules`: the remembered "always" answers; the chosen one is removed.
function M.rules()
  local client = require('acpls.client')
  local clients = client.clients()
  if #clients == 0 then
    vim.notify('acpls: not running')
    return
  end
  local id = clients[1].id
  client.exec(id, 'acpls.listRules', {}, function(err, result)
    if err then
      vim.notify('acpls: ' .. (err.message or 'listRules failed'), vim.log.levels.ERROR)
      return
    end
    local rules = type(result) == 'table' and result.rules or {}
    if #rules == 0 then
      vim.notify('acpls: no remembered permission rule')
      return
    end
    vim.ui.select(rules, { prompt = 'Remove a permission rule', format_item = rule_label }, function(r)
      if r then
        client.exec(id, 'acpls.removeRule', { ruleId = r.ruleId }, function(rerr)
          if rerr then
            vim.notify('acpls: ' .. (rerr.message or 'removeRule failed'), vim.log.levels.ERROR)
          else
            vim.notify('acpls: removed ' .. rule_label(r))
          end
        end)
      end
    end)
  end)
end

--- Drop the prompts of a client that stopped (nobody is left to answer).
function M.drop_client(client_id)
  for _, req in ipairs(vim.list_slice(pending)) do
    if req.ctx and req.ctx.client_id == client_id then
      finish(req, vim.NIL)
    end
  end
end

function M.pending()
  return vim.tbl_map(function(r)
    return { id = r.id, sessionId = r.params.sessionId, title = title_of(r) }
  end, pending)
end

--- Neovim's diff mode in a new tab page: the file's current text (its buffer when it exists) against
--- the proposed text in a scratch buffer. Closing the proposed window (or `q` in it) closes the tab
--- and calls `on_close`.
---@param file table one of edit.files()
---@param on_close fun()?
function M.show_diff(file, on_close)
  local current, proposed = edit.texts(file)
  local ft = vim.filetype.match({ filename = file.path }) or ''
  local left_buf
  local existing = file.op ~= 'create' and vim.fn.filereadable(file.path) == 1
  if existing then
    left_buf = util.file_buf(file.path)
  else
    left_buf = util.scratch('acpls://current/' .. file.path, ft)
    vim.api.nvim_buf_set_lines(left_buf, 0, -1, false, current)
    vim.bo[left_buf].modifiable = false
  end
  local right_buf = util.scratch('acpls://proposed/' .. file.path, ft)
  vim.api.nvim_buf_set_lines(right_buf, 0, -1, false, proposed)
  vim.bo[right_buf].modifiable = false
  vim.b[right_buf].acpls_proposed = file.path

  vim.cmd('tab split')
  local left = vim.api.nvim_get_current_win()
  vim.api.nvim_win_set_buf(left, left_buf)
  local right = vim.api.nvim_open_win(right_buf, true, { split = 'right', win = left })
  for _, w in ipairs({ left, right }) do
    vim.api.nvim_win_call(w, function()
      vim.cmd('diffthis')
    end)
  end
  vim.wo[right].winbar = '%#AcplsChatMeta#proposed by the agent · q closes and returns to the prompt'
  local closed = false
  local function close()
    if closed then
      return
    end
    closed = true
    if vim.api.nvim_win_is_valid(left) then
      vim.api.nvim_win_call(left, function()
        vim.cmd('diffoff')
      end)
    end
    local tab = vim.api.nvim_win_is_valid(left) and vim.api.nvim_win_get_tabpage(left)
    if tab and vim.api.nvim_tabpage_is_valid(tab) and #vim.api.nvim_list_tabpages() > 1 then
      pcall(vim.cmd, 'tabclose ' .. vim.api.nvim_tabpage_get_number(tab))
    end
    pcall(vim.api.nvim_buf_delete, right_buf, { force = true })
    if on_close then
      vim.schedule(on_close)
    end
  end
  vim.keymap.set('n', 'q', close, { buffer = right_buf, nowait = true, desc = 'acpls: close the diff' })
  vim.api.nvim_create_autocmd('WinClosed', {
    pattern = tostring(right),
    once = true,
    callback = function()
      vim.schedule(close)
    end,
  })
  return { tab = vim.api.nvim_get_current_tabpage(), left = left, right = right, buf = right_buf }
end

return M
