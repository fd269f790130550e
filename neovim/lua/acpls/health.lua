-- :checkhealth acpls
local M = {}

function M.check()
  local health = vim.health
  health.start('acpls: Neovim')
  if vim.fn.has('nvim-0.11') == 1 then
    health.ok('Neovim ' .. tostring(vim.version()))
  else
    health.error('Neovim 0.11 or newer is needed, this is ' .. tostring(vim.version()))
  end

  health.start('acpls: options')
  local config = require('acpls.config')
  local problems = config.problems()
  if #problems == 0 then
    health.ok('options are valid')
  end
  for _, p in ipairs(problems) do
    if p.level == 'error' then
      health.error(p.msg, 'fix it in setup() or vim.g.acpls (:help acpls-options)')
    else
      health.warn(p.msg, 'see :help acpls-options')
    end
  end

  health.start('acpls: server')
  local opts = config.get(true)
  local client = require('acpls.client')
  local cmd, why = client.server_cmd(opts)
  if not cmd then
    health.error(why, { 'run :Acpls install', 'or put acpls on PATH (pip install the acpls repository)' })
  else
    local res = vim.system(vim.list_extend(vim.deepcopy(cmd), { '--version' }), { text = true }):wait(10000)
    if res.code == 0 then
      health.ok(('%s (from %s): %s'):format(table.concat(cmd, ' '), why, vim.trim(res.stdout or '')))
    else
      health.error(
        ('%s --version failed (exit %s): %s'):format(
          table.concat(cmd, ' '),
          tostring(res.code),
          vim.trim(res.stderr or '')
        ),
        'reinstall with :Acpls install'
      )
    end
  end
  if type(opts.agent) == 'table' and type(opts.agent.command) == 'string' then
    if vim.fn.executable(opts.agent.command) == 1 then
      health.ok('agent command ' .. opts.agent.command .. ' found')
    else
      health.warn(
        ('agent command %s is not executable here'):format(opts.agent.command),
        'acpls reports the agent failing when it first starts it'
      )
    end
  elseif type(opts.agent) == 'string' then
    health.ok('agent preset ' .. opts.agent)
  else
    health.info("agent: the server's default (the demo agent)")
  end
  local python = opts.install.python or 'python3'
  if vim.fn.executable(python) == 1 then
    health.ok(python .. ' found (for :Acpls install)')
  else
    health.warn(python .. ' not found: :Acpls install cannot make a virtualenv')
  end

  health.start('acpls: running')
  local clients = client.clients()
  if #clients == 0 then
    health.info('not running (it starts with :Acpls chat or :Acpls prompt)')
  end
  for _, c in ipairs(clients) do
    local status = client.agent_status[c.id]
    local state = status and (tostring(status.agent) .. ' ' .. tostring(status.state))
      or 'agent not started yet'
    if status and status.state == 'failed' then
      health.warn(('client %d in %s: %s: %s'):format(c.id, c.root_dir, state, tostring(status.message)))
    else
      health.ok(('client %d in %s: %s'):format(c.id, c.root_dir, state))
    end
  end
end

return M
