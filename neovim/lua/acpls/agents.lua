-- `:Acpls agents`: pick an agent among acpls' presets and the ACP registry (editors/protocol.md
-- section 12) through vim.ui.select (any picker plugin works), install it and make it the agent of
-- this Neovim (sent to every running acpls at once).
local client = require('acpls.client')

local M = {}

local function str(v)
  return (v ~= nil and v ~= vim.NIL) and tostring(v) or nil
end

--- One line of the picker: `Gemini CLI 0.61.0 (gemini) · Google's … · npx · installed · sign-in: …`.
---@param a table an AgentEntry of `acpls.agents`
---@return string
function M.format_item(a)
  local state
  if a.installed then
    state = 'installed'
  elseif a.runnable then
    state = 'ready (fetched on first start)'
  elseif str(a.problem) then
    state = 'unavailable: ' .. a.problem
  else
    state = 'not installed'
  end
  local parts = {
    ('%s%s (%s)'):format(a.name, str(a.version) and (' ' .. a.version) or '', a.id),
    str(a.description) or '',
    table.concat(type(a.distributions) == 'table' and a.distributions or {}, '/'),
    state,
  }
  if type(a.authMethods) == 'table' and #a.authMethods > 0 then
    local names = {}
    for _, m in ipairs(a.authMethods) do
      table.insert(names, str(m.name) or str(m.id) or '?')
    end
    table.insert(parts, 'sign-in: ' .. table.concat(names, ', '))
  end
  return table.concat(parts, ' · ')
end

local function client_id()
  local chat = require('acpls.chat').current()
  if chat and chat.client_id and client.get(chat.client_id) then
    return chat.client_id
  end
  return client.ensure()
end

--- `:Acpls agents [refresh]`: the list as acpls has it now (`refresh`: fetch the registry first).
---@param opts {refresh: boolean?}?
function M.pick(opts)
  opts = opts or {}
  local id = client_id()
  if not id then
    return
  end
  client.exec(id, 'acpls.agents', { refresh = opts.refresh or nil }, function(err, result)
    if err then
      vim.notify('acpls: agents: ' .. (err.message or vim.inspect(err)), vim.log.levels.ERROR)
      return
    end
    local registry = result.registry or {}
    vim.ui.select(result.agents or {}, {
      prompt = ('Choose the agent (now %s; registry: %s)'):format(tostring(result.default), tostring(registry.source)),
      kind = 'acpls.agent',
      format_item = M.format_item,
    }, function(choice)
      if choice then
        M.choose(id, choice)
      end
    end)
  end)
end

--- Install `agent` (a registry binary is downloaded) and make it the agent.
---@param id integer client id
---@param agent table an AgentEntry
function M.choose(id, agent)
  vim.notify(('acpls: preparing %s …'):format(agent.id))
  client.exec(id, 'acpls.installAgent', { agent = agent.id }, function(err, result)
    if err then
      vim.notify(('acpls: %s cannot be used: %s'):format(agent.id, err.message or vim.inspect(err)), vim.log.levels.ERROR)
      return
    end
    M.set_default(agent.id)
    vim.notify(('acpls: the agent is now %s (%s)'):format(agent.id, table.concat(result.command or {}, ' ')))
  end)
end

--- Make `name` the agent of this Neovim (until it restarts: put `agent = name` in setup() to keep it).
---@param name string
function M.set_default(name)
  require('acpls.config').update({ agent = name })
  client.push_settings()
end

return M
