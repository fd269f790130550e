-- Questions from the agent (`acpls/elicitation`, editors/protocol.md 5.9): one field after another
-- through vim.ui.input / vim.ui.select (so any picker plugin works), defaults shown, Esc cancels.
-- acpls checks the answer against the form and asks again (with the problem and the values given as
-- defaults) when it does not fit, so this module only collects values.
local util = require('acpls.util')

local M = {}

local pending = {} ---@type table[] questions waiting, oldest first
local active = nil ---@type table? the question being asked
local counter = 0

local function one_line(text)
  return (tostring(text or ''):gsub('%s*\n%s*', ' '))
end

--- The form's field names in the agent's order (`fieldOrder`; Lua tables have no key order).
function M.field_names(params)
  local props = type(params.requestedSchema) == 'table' and params.requestedSchema.properties or {}
  local names, seen = {}, {}
  for _, name in ipairs(type(params.fieldOrder) == 'table' and params.fieldOrder or {}) do
    if type(props[name]) == 'table' and not seen[name] then
      table.insert(names, name)
      seen[name] = true
    end
  end
  local rest = {}
  for name in pairs(props) do
    if not seen[name] then
      table.insert(rest, name)
    end
  end
  table.sort(rest)
  vim.list_extend(names, rest)
  return names
end

--- (value, title) pairs of a single choice (`enum` / titled `oneOf`) or of a multi-select's items.
function M.options(spec)
  if type(spec) ~= 'table' then
    return nil
  end
  if type(spec.enum) == 'table' and #spec.enum > 0 then
    return vim.tbl_map(function(v)
      return { value = v, title = tostring(v) }
    end, spec.enum)
  end
  local titled = spec.oneOf or spec.anyOf
  if type(titled) == 'table' and #titled > 0 then
    return vim.tbl_map(function(o)
      return { value = o.const, title = tostring(o.title or o.const) }
    end, titled)
  end
  return nil
end

local function is_required(params, name)
  local req = type(params.requestedSchema) == 'table' and params.requestedSchema.required or {}
  return type(req) == 'table' and vim.tbl_contains(req, name)
end

local function hint(prop)
  local parts = {}
  for _, k in ipairs({ 'minLength', 'maxLength', 'minimum', 'maximum', 'minItems', 'maxItems', 'format', 'pattern' }) do
    if prop[k] ~= nil and prop[k] ~= vim.NIL then
      table.insert(parts, k .. ' ' .. tostring(prop[k]))
    end
  end
  return #parts > 0 and (' [' .. table.concat(parts, ', ') .. ']') or ''
end

local function prompt_for(q, name, prop, index, total)
  local label = prop.title or name
  local text = ('acpls: %s — %s'):format(one_line(q.params.message), label)
  if prop.description then
    text = text .. ': ' .. one_line(prop.description)
  end
  text = text .. hint(prop)
  if total > 1 then
    text = text .. (' (%d/%d)'):format(index, total)
  end
  if not is_required(q.params, name) then
    text = text .. ' (optional)'
  end
  return text
end

local function finish(q, result)
  if q.done then
    return
  end
  q.done = true
  for i, r in ipairs(pending) do
    if r == q then
      table.remove(pending, i)
      break
    end
  end
  if active == q then
    active = nil
  end
  q.cb(result)
  vim.schedule(M.show_next)
end

--- What is being asked now (for tests and statuslines): `{id, field?, kind}`.
function M.current()
  if not active then
    return nil
  end
  return { id = active.id, field = active.field, kind = active.step_kind, sessionId = active.params.sessionId }
end

local function select(q, kind, items, prompt, on_choice)
  q.step_kind = kind
  vim.ui.select(items, {
    prompt = prompt,
    kind = 'acpls.question',
    format_item = function(item)
      return item.label
    end,
  }, function(choice)
    if q.done then
      return -- withdrawn while the picker was open
    end
    if choice == nil then
      finish(q, { action = 'cancel' })
    else
      on_choice(choice)
    end
  end)
end

local function ask_multi(q, name, prop, prompt, chosen, next_field)
  local items = {}
  for _, opt in ipairs(M.options(prop.items) or {}) do
    local on = vim.tbl_contains(chosen, opt.value)
    table.insert(items, { opt = opt, label = (on and '[x] ' or '[ ] ') .. opt.title })
  end
  table.insert(items, { done = true, label = ('Done (%d chosen)'):format(#chosen) })
  select(q, 'multi', items, prompt, function(choice)
    if choice.done then
      q.content[name] = chosen
      return next_field()
    end
    local out = vim.tbl_filter(function(v)
      return v ~= choice.opt.value
    end, chosen)
    if #out == #chosen then
      table.insert(out, choice.opt.value)
    end
    ask_multi(q, name, prop, prompt, out, next_field)
  end)
end

local function ask_field(q, names, index)
  if q.done then
    return
  end
  local name = names[index]
  if not name then
    return M.confirm(q)
  end
  q.field = name
  local prop = q.params.requestedSchema.properties[name]
  local prompt = prompt_for(q, name, prop, index, #names)
  local optional = not is_required(q.params, name)
  local default = prop.default
  if default == vim.NIL then
    default = nil
  end
  local function next_field()
    ask_field(q, names, index + 1)
  end
  local function choose(items)
    if optional then
      table.insert(items, { skip = true, label = 'Skip' })
    end
    select(q, 'choice', items, prompt, function(choice)
      if not choice.skip then
        q.content[name] = choice.value
      end
      next_field()
    end)
  end
  if prop.type == 'boolean' then
    local yes = { value = true, label = 'Yes' .. (default == true and ' (default)' or '') }
    local no = { value = false, label = 'No' .. (default == false and ' (default)' or '') }
    return choose(default == false and { no, yes } or { yes, no })
  end
  local options = prop.type == 'string' and M.options(prop) or nil
  if options then
    local items = {}
    for _, opt in ipairs(options) do
      local item = { value = opt.value, label = opt.title .. (opt.value == default and ' (default)' or '') }
      table.insert(items, opt.value == default and 1 or #items + 1, item)
    end
    return choose(items)
  end
  if prop.type == 'array' then
    local chosen = type(default) == 'table' and vim.deepcopy(default) or {}
    return ask_multi(q, name, prop, prompt, chosen, next_field)
  end
  q.step_kind = 'input'
  vim.ui.input({ prompt = prompt .. ': ', default = default ~= nil and tostring(default) or nil }, function(text)
    if q.done then
      return
    end
    if text == nil then
      return finish(q, { action = 'cancel' })
    end
    if text ~= '' then
      local number = (prop.type == 'number' or prop.type == 'integer') and tonumber(text) or nil
      -- A number that is not one goes as typed: acpls names the problem and asks again.
      q.content[name] = number or text
    elseif not optional then
      q.content[name] = ''
    end
    next_field()
  end)
end

--- The last step of a form: send the answers, decline, or (Esc) cancel.
function M.confirm(q)
  q.field = nil
  local items = {
    { action = 'accept', label = 'Send the answers' },
    { action = 'decline', label = 'Decline (tell the agent no)' },
  }
  select(q, 'confirm', items, 'acpls: ' .. one_line(q.params.message), function(choice)
    if choice.action == 'accept' then
      finish(q, { action = 'accept', content = q.content })
    else
      finish(q, { action = choice.action })
    end
  end)
end

local function web_url(url)
  return type(url) == 'string' and (url:match('^https?://[^/%s]+') ~= nil)
end

local function ask_url(q)
  local url = q.params.url
  local items = {
    { action = 'open', label = 'Open ' .. tostring(url) },
    { action = 'accept', label = 'Done' },
    { action = 'decline', label = 'Decline' },
  }
  if not web_url(url) then
    table.remove(items, 1) -- only http(s) pages are opened
  end
  local prompt = ('acpls: %s — %s'):format(one_line(q.params.message), tostring(url))
  select(q, 'url', items, prompt, function(choice)
    if choice.action == 'open' then
      vim.ui.open(url)
      return ask_url(q)
    end
    finish(q, { action = choice.action })
  end)
end

--- Ask `q` now.
function M.show(q)
  active = q
  q.content = vim.empty_dict()
  if q.params.mode == 'url' then
    return ask_url(q)
  end
  if q.params.mode ~= 'form' or type(q.params.requestedSchema) ~= 'table' then
    return finish(q, { action = 'cancel' })
  end
  ask_field(q, M.field_names(q.params), 1)
end

function M.show_next()
  if active and not active.done then
    return
  end
  local q = pending[1]
  if q then
    M.show(q)
  end
end

--- Queue a question; `cb` gets the result (`{action, content?}`).
function M.ask(params, ctx, request_id, cb)
  counter = counter + 1
  local q = { id = counter, params = params, ctx = ctx, request_id = request_id, cb = cb, done = false }
  table.insert(pending, q)
  M.show_next()
  return q
end

--- `acpls/elicitation`: runs in the LSP client's coroutine, which waits for the answer.
function M.on_request(params, ctx)
  return util.await_reply('question', function(done)
    M.ask(params, ctx, params.requestId, done)
  end)
end

local function withdraw(match, why)
  for _, q in ipairs(vim.list_slice(pending)) do
    if match(q) then
      local shown = q == active
      finish(q, vim.NIL)
      if shown and why then
        vim.notify('acpls: ' .. why)
      end
    end
  end
end

--- `$/cancelRequest` from acpls: the question was withdrawn (turn cancelled, agent withdrew it).
function M.on_cancel_request(params, ctx)
  local id = type(params) == 'table' and params.id or nil
  if id == nil then
    return
  end
  withdraw(function(q)
    return q.request_id == id and (not ctx or not q.ctx or q.ctx.client_id == ctx.client_id)
  end, 'the agent no longer needs the answer to its question')
end

--- `acpls/elicitationComplete`: the URL flow finished elsewhere (acpls already answered it).
function M.on_complete(params)
  withdraw(function(q)
    return q.params.mode == 'url' and q.params.elicitationId == params.elicitationId
  end, 'done: ' .. tostring(params.elicitationId))
end

--- Drop the questions of a client that stopped (nobody is left to answer).
function M.drop_client(client_id)
  withdraw(function(q)
    return q.ctx and q.ctx.client_id == client_id
  end)
end

function M.pending()
  return vim.tbl_map(function(q)
    return { id = q.id, sessionId = q.params.sessionId, mode = q.params.mode, message = q.params.message }
  end, pending)
end

return M
