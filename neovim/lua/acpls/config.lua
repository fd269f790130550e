-- Options: defaults, `vim.g.acpls`, `setup(opts)`, validation and the settings sent to the server.
local M = {}

-- Keys the server understands (editors/protocol.md section 1); passed through unchanged.
M.server_keys = {
  'agent',
  'agents',
  'protocolVersion',
  'defaultMode',
  'defaultConfig',
  'follow',
  'mcpServers',
  'permissions',
  'files',
  'terminal',
  'env',
  'limits',
  'log',
  'checkpoints',
  'context',
  'registry',
}

-- The shape of every option. A string is the expected type (or types joined by '|'), a table is a
-- nested table of options. `oneof` lists the accepted values.
local schema = {
  cmd = 'table|string',
  root_markers = 'table',
  handlers = 'table',
  capabilities = 'table',
  on_attach = 'function',
  extra_settings = 'table',
  agent = 'string|table',
  -- More agents for `:Acpls chat {name}` (a chat per agent) and :checkhealth: name -> a preset
  -- name, a registry id or {command, args?, env?}. Sent as the server's `agents` setting too, so
  -- the server resolves the names the same way for every front end.
  agents = 'table',
  protocolVersion = { type = 'string|number', oneof = { 'auto', 1, 2 } },
  defaultMode = 'table',
  defaultConfig = 'table',
  follow = { enabled = 'boolean', subagents = 'boolean' },
  mcpServers = 'table',
  permissions = { autoApprove = 'table', rules = 'boolean' },
  files = { allowedRoots = 'table', alwaysAsk = 'table' },
  terminal = { scrollbackBytes = 'number', rawOutput = 'boolean' },
  env = { remove = 'table' },
  limits = {
    maxLineBytes = 'number',
    maxPendingPermissions = 'number',
    maxAgentInputBytes = 'number',
    maxReadBytes = 'number',
  },
  log = { level = { type = 'string', oneof = { 'debug', 'info', 'warning', 'error' } } },
  checkpoints = {
    enabled = 'boolean',
    maxCount = 'number',
    maxStorageBytes = 'number',
    maxFileBytes = 'number',
    binaryBudgetBytes = 'number',
    fork = 'boolean',
  },
  context = { maxEmbedBytes = 'number', maxImageBytes = 'number' },
  registry = { url = 'string' },
  ui = {
    chat = {
      position = { type = 'string', oneof = { 'right', 'left', 'below', 'above', 'tab' } },
      width = 'number',
      prompt_height = 'number',
      keys = {
        send = 'string|boolean',
        send_normal = 'string|boolean',
        cancel = 'string|boolean',
        mode = 'string|boolean',
        config = 'string|boolean',
        close = 'string|boolean',
        open = 'string|boolean',
        restore = 'string|boolean',
        copy = 'string|boolean',
      },
    },
    agent_sign = 'string',
    hunk_signs = { add = 'string', change = 'string', delete = 'string' },
    notify_turn_end = 'boolean',
    terminal = { scrollback = 'number' },
  },
  install = { dir = 'string', python = 'string', source = 'string', tool = 'string' },
}

M.defaults = {
  root_markers = { '.git', 'pyproject.toml', 'package.json', 'Cargo.toml', 'go.mod' },
  ui = {
    chat = {
      position = 'right',
      width = 0.4,
      prompt_height = 6,
      keys = {
        send = '<C-s>',
        send_normal = '<CR>',
        cancel = '<C-c>',
        mode = '<localleader>m',
        config = '<localleader>o',
        close = 'q',
        open = '<CR>',
        restore = '<localleader>r',
        copy = '<localleader>y',
      },
    },
    agent_sign = '▶',
    hunk_signs = { add = '+', change = '~', delete = '_' },
    notify_turn_end = true,
    -- Neovim's own default 'scrollback': Neovim shifts a terminal's whole scrollback array for
    -- every line that scrolls off (terminal.c term_sb_push), so a line costs in proportion to
    -- this; at 100000 a 32 MB stream took three times as long as Neovim's own terminal.
    terminal = { scrollback = 10000 },
  },
  install = {},
}

local user_opts = nil ---@type table?
local reported = {} ---@type table<string, boolean>

local function type_ok(value, spec)
  for t in spec:gmatch('[^|]+') do
    if type(value) == t then
      return true
    end
  end
  return false
end

local function is_leaf(spec)
  return type(spec) == 'string' or spec.type ~= nil
end

--- Check `opts` against the schema.
---@param opts table
---@return {level: 'error'|'warn', msg: string}[]
function M.validate(opts)
  local problems = {}
  local function walk(value, spec, path)
    if type(value) ~= 'table' then
      local msg = ('%s: expected a table, got %s'):format(path, type(value))
      table.insert(problems, { level = 'error', msg = msg })
      return
    end
    for key, v in pairs(value) do
      local name = path == '' and tostring(key) or (path .. '.' .. tostring(key))
      local sub = spec[key]
      if sub == nil then
        table.insert(problems, { level = 'warn', msg = ('unknown option %s'):format(name) })
      elseif is_leaf(sub) then
        local t = type(sub) == 'string' and sub or sub.type
        if not type_ok(v, t) then
          table.insert(problems, {
            level = 'error',
            msg = ('%s: expected %s, got %s'):format(name, t:gsub('|', ' or '), type(v)),
          })
        elseif type(sub) == 'table' and sub.oneof and not vim.tbl_contains(sub.oneof, v) then
          table.insert(problems, {
            level = 'error',
            msg = ('%s: expected one of %s, got %s'):format(
              name,
              table.concat(vim.tbl_map(vim.inspect, sub.oneof), ', '),
              vim.inspect(v)
            ),
          })
        end
      else
        walk(v, sub, name)
      end
    end
  end
  walk(opts, schema, '')
  return problems
end

--- The options the user gave: `vim.g.acpls`, overridden by `setup(opts)`.
---@return table
function M.user()
  local g = vim.g.acpls
  local base = type(g) == 'table' and g or {}
  return vim.tbl_deep_extend('force', base, user_opts or {})
end

--- Problems in the user's options (for `:checkhealth acpls`).
function M.problems()
  local g = vim.g.acpls
  if g ~= nil and type(g) ~= 'table' then
    return { { level = 'error', msg = 'vim.g.acpls: expected a table, got ' .. type(g) } }
  end
  return M.validate(M.user())
end

-- Report each problem once, so a bad option does not nag on every command.
local function report(problems)
  for _, p in ipairs(problems) do
    if not reported[p.msg] then
      reported[p.msg] = true
      local level = p.level == 'error' and vim.log.levels.ERROR or vim.log.levels.WARN
      vim.notify('acpls: ' .. p.msg, level)
    end
  end
end

--- Store the options given to `require('acpls').setup()`. Nothing starts here.
---@param opts table?
function M.set(opts)
  if opts ~= nil and type(opts) ~= 'table' then
    report({ { level = 'error', msg = 'setup(): expected a table, got ' .. type(opts) } })
    return
  end
  user_opts = opts or {}
  report(M.validate(user_opts))
end

--- Change some options at run time (`:Acpls agents`), on top of what setup() was given.
---@param changes table
function M.update(changes)
  user_opts = vim.tbl_deep_extend('force', user_opts or {}, changes)
  report(M.validate(user_opts))
end

--- The effective options (defaults with the user's on top). Options with a wrong type are dropped
--- (and reported, unless `quiet`), so a typo never breaks the plugin.
---@param quiet boolean?
---@return table
function M.get(quiet)
  local opts = M.user()
  local problems = M.validate(opts)
  if not quiet then
    report(problems)
  end
  for _, p in ipairs(problems) do
    if p.level == 'error' then
      local path = p.msg:match('^([%w_.]+):')
      if path then
        local parts = vim.split(path, '.', { plain = true })
        local t = opts
        for i = 1, #parts - 1 do
          t = type(t) == 'table' and t[parts[i]] or nil
        end
        if type(t) == 'table' then
          t[parts[#parts]] = nil
        end
      end
    end
  end
  return vim.tbl_deep_extend('force', vim.deepcopy(M.defaults), opts)
end

--- The `settings.acpls` object the server receives: only what the user set, so the server's own
--- defaults stay authoritative.
---@param opts table? effective options (default: M.get())
---@return table
function M.server_settings(opts)
  opts = opts or M.get()
  local settings = vim.deepcopy(opts.extra_settings or {})
  for _, key in ipairs(M.server_keys) do
    if opts[key] ~= nil then
      settings[key] = vim.deepcopy(opts[key])
    end
  end
  return settings
end

--- What `acpls.newSession` gets as `agent` for the agent `name` (`:Acpls chat {name}`): the
--- `agents` option's entry (a table gets the name), else the name itself (a preset or registry
--- id); nil: the default agent.
---@param name string?
---@return string|table|nil
function M.agent_arg(name)
  if name == nil then
    return nil
  end
  local agents = M.get().agents
  local configured = type(agents) == 'table' and agents[name] or nil
  if type(configured) == 'table' then
    return vim.tbl_extend('keep', vim.deepcopy(configured), { name = name })
  end
  if type(configured) == 'string' then
    return configured
  end
  return name
end

return M
