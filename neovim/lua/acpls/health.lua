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
      local server_version = vim.trim(res.stdout or '')
      health.ok(('%s (from %s): %s'):format(table.concat(cmd, ' '), why, server_version))
      local plugin_version = require('acpls.version')
      if server_version ~= 'acpls ' .. plugin_version then
        health.warn(
          ('the plugin is acpls %s and the server says "%s"'):format(plugin_version, server_version),
          'update both: :Acpls install installs the server of this plugin'
        )
      end
      M.self_check(cmd)
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
  health.start('acpls: agents')
  if cmd then
    M.check_agent(cmd, opts.agent, opts)
    -- Every agent of the `agents` option too (the chats of `:Acpls chat {name}`).
    local names = vim.tbl_keys(type(opts.agents) == 'table' and opts.agents or {})
    table.sort(names)
    for _, name in ipairs(names) do
      M.check_agent(cmd, config.agent_arg(name), opts)
    end
  else
    health.warn('the agent cannot be checked without the acpls server')
  end
  M.check_installer(opts)

  health.start('acpls: running')
  local clients = client.clients()
  if #clients == 0 then
    health.info('not running (it starts with :Acpls chat or :Acpls prompt)')
  end
  for _, c in ipairs(clients) do
    local statuses = vim.tbl_values(client.agent_statuses[c.id] or {})
    table.sort(statuses, function(a, b)
      return tostring(a.agent) < tostring(b.agent)
    end)
    if #statuses == 0 then
      health.ok(('client %d in %s: agent not started yet'):format(c.id, c.root_dir))
    end
    -- Each agent the server runs, with its own state.
    for _, status in ipairs(statuses) do
      local state = tostring(status.agent) .. ' ' .. tostring(status.state)
      if status.state == 'failed' then
        health.warn(('client %d in %s: %s: %s'):format(c.id, c.root_dir, state, tostring(status.message)))
      else
        health.ok(('client %d in %s: %s'):format(c.id, c.root_dir, state))
      end
    end
  end
end

--- Which installer `:Acpls install` would use, or what to install so that it can.
function M.check_installer(opts)
  local health = vim.health
  local tool, why = require('acpls.install').tool(opts)
  if not tool then
    health.warn(':Acpls install: ' .. why, 'install it, or unset install.tool')
  elseif tool ~= 'venv' then
    health.ok((':Acpls install uses %s'):format(tool))
  else
    local python = opts.install.python or 'python3'
    if vim.fn.executable(python) == 1 then
      health.ok((':Acpls install uses a virtualenv of %s (uv or pipx would be used if found)'):format(python))
    else
      health.warn(
        ':Acpls install finds neither uv, pipx nor ' .. python,
        { 'install uv (https://docs.astral.sh/uv/) or pipx', 'or set install.python to a Python 3.11+' }
      )
    end
  end
end

--- `acpls --self-check --json`: the whole server imported on its Python; a failure says the real
--- cause and fix (Python too old, a missing or broken module, a compiled module of another
--- platform), success which fast paths are in use.
function M.self_check(cmd)
  local health = vim.health
  local argv = vim.list_extend(vim.deepcopy(cmd), { '--self-check', '--json' })
  local res = vim.system(argv, { text = true }):wait(60000)
  local ok, report = pcall(vim.json.decode, res.stdout or '')
  if not ok or type(report) ~= 'table' or type(report.problems) ~= 'table' then
    health.warn(
      ('`%s` gave no report (exit %s): %s'):format(table.concat(argv, ' '), tostring(res.code), vim.trim(res.stderr or '')),
      'an acpls older than this plugin: update it with :Acpls install'
    )
    return
  end
  for _, problem in ipairs(report.problems) do
    health.error(tostring(problem.cause), tostring(problem.fix))
  end
  if report.ok then
    local used = {}
    for _, name in ipairs({ 'json', 'base64', 'loop' }) do
      if type(report.speedups) == 'table' and report.speedups[name] then
        table.insert(used, name .. ': ' .. tostring(report.speedups[name]))
      end
    end
    health.ok(('self-check: the server imports on Python %s (%s)'):format(tostring(report.python), table.concat(used, ', ')))
  end
end

--- Starts the configured agent once through `acpls agents check` (it sends ACP `initialize` and
--- stops it again) and reports whether it is installed and answers.
function M.check_agent(cmd, agent, opts)
  local health = vim.health
  local which = agent == nil and 'demo' or agent
  local arg = type(which) == 'table' and vim.json.encode(which) or tostring(which)
  local registry = type(opts) == 'table' and type(opts.registry) == 'table' and opts.registry.url or nil
  -- --offline: a registry id resolves against the copy the server cached (else the snapshot), so
  -- the health check never waits for the network
  local argv = vim.list_extend(vim.deepcopy(cmd), { 'agents', '--offline' })
  if registry then
    vim.list_extend(argv, { '--registry-url', registry })
  end
  vim.list_extend(argv, { 'check', '--json', arg })
  local res = vim.system(argv, { text = true }):wait(60000)
  local ok, checks = pcall(vim.json.decode, res.stdout or '')
  if not ok or type(checks) ~= 'table' or type(checks[1]) ~= 'table' then
    health.error(
      ('`%s` failed (exit %s): %s'):format(table.concat(argv, ' '), tostring(res.code), vim.trim(res.stderr or '')),
      'check the agent setting (:help acpls-options)'
    )
    return
  end
  local check = checks[1]
  local command = table.concat(check.command or {}, ' ')
  if not check.installed then
    health.error(('agent %s is not installed: %s'):format(check.name, check.detail), 'install it, or choose another agent')
  elseif not check.ok then
    health.error(('agent %s does not answer initialize: %s'):format(check.name, check.detail), 'ran: ' .. command)
  else
    local who = vim.trim(('%s %s'):format(check.agentName or '', check.agentVersion or ''))
    local auth = #(check.authMethods or {}) > 0 and (', sign-in: ' .. table.concat(check.authMethods, ', ')) or ''
    local node = type(check.node) == 'string' and (', on ' .. check.node) or ''
    health.ok(('agent %s answers: %s, ACP v%s%s (ran %s)%s'):format(check.name, who, tostring(check.protocolVersion), auth, command, node))
  end
end

return M
