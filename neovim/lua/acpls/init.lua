-- acpls: an ACP coding agent inside Neovim, through the acpls language server.
-- `setup()` only stores options; acpls starts on the first command that needs it.
local M = {}

--- Configure acpls (the same options can be given as `vim.g.acpls`). Starts nothing. When acpls is
--- already running, the new settings are sent to it at once.
---@param opts table?
function M.setup(opts)
  require('acpls.config').set(opts)
  require('acpls.highlight').setup()
  local client = require('acpls.client')
  if #client.clients() > 0 then
    client.push_settings()
  end
end

--- Start acpls for a workspace root (default: the current buffer's) and return the client id.
---@param root string?
---@return integer?
function M.start(root)
  return require('acpls.client').ensure(root)
end

--- Send a prompt, like `:Acpls prompt {text}`. `context` is `[{uri, range?}]`.
---@param text string
---@param context table[]?
function M.prompt(text, context)
  return require('acpls.chat').prompt(text, context)
end

--- A short status for statuslines: '' when acpls is not running.
---@return string
function M.statusline()
  local client = require('acpls.client')
  local clients = client.clients()
  if #clients == 0 then
    return ''
  end
  local status = client.agent_status[clients[1].id]
  local parts = { 'acpls' }
  if status then
    table.insert(parts, tostring(status.agent or '') .. ' ' .. tostring(status.state or ''))
  end
  local mode = require('acpls.chat').mode_status(status and status.agent)
  if mode then
    table.insert(parts, mode)
  end
  local follow = require('acpls.follow').state
  if follow.paused then
    table.insert(parts, 'follow paused')
  elseif follow.enabled == false then
    table.insert(parts, 'follow off')
  end
  local meter = require('acpls.chat').usage_status()
  if meter then
    table.insert(parts, meter)
  end
  local waiting = #require('acpls.permission').pending()
  if waiting > 0 then
    table.insert(parts, waiting .. ' waiting')
  end
  return table.concat(parts, ' · ')
end

return M
