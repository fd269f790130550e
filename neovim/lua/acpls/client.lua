-- Starting acpls with `vim.lsp.start` (one client per workspace root), its `acpls/*` handlers, and
-- running its commands.
local config = require('acpls.config')

local M = {}

M.name = 'acpls'

-- Every acpls/* message of editors/protocol.md section 5, and the module that handles it.
M.handlers = {
  ['acpls/followAgent'] = { 'acpls.follow', 'on_follow_agent' },
  ['acpls/followState'] = { 'acpls.follow', 'on_follow_state' },
  ['acpls/requestPermission'] = { 'acpls.permission', 'on_request', request = true },
  ['acpls/sessionUpdate'] = { 'acpls.chat', 'on_session_update' },
  ['acpls/sessionUpdates'] = { 'acpls.client', 'on_session_updates' },
  ['acpls/terminalUpdate'] = { 'acpls.terminals', 'on_update' },
  ['acpls/terminalOutput'] = { 'acpls.terminals', 'on_output' },
  ['acpls/changes'] = { 'acpls.review', 'on_changes' },
  ['acpls/agentStatus'] = { 'acpls.client', 'on_agent_status' },
  ['acpls/elicitation'] = { 'acpls.question', 'on_request', request = true },
  ['acpls/elicitationComplete'] = { 'acpls.question', 'on_complete' },
  ['acpls/authEnv'] = { 'acpls.auth', 'on_auth_env', request = true },
  ['acpls/runLogin'] = { 'acpls.auth', 'on_run_login', request = true },
  ['acpls/resolveConflict'] = { 'acpls.conflict', 'on_request', request = true },
  -- LSP's own: acpls withdraws a question it asked (a cancelled turn, the agent withdrew it).
  ['$/cancelRequest'] = { 'acpls.question', 'on_cancel_request' },
}

---@type table<integer, table> agent status per client id
M.agent_status = {}
M.agent_statuses = {} ---@type table<integer, table<string, table>> client id -> agent -> status

local waiting = {} ---@type table<integer, function[]> callbacks waiting for a client's initialize

local checked_versions = {} ---@type table<string, string> server path .. mtime -> its version
local warned = {} ---@type table<string, boolean> servers on PATH whose version was warned about

--- The version an `acpls` executable reports (`acpls X.Y.Z`), asked once per file and mtime.
function M.server_version(path)
  local stat = vim.uv.fs_stat(path)
  local key = path .. ':' .. (stat and stat.mtime.sec or 0)
  if checked_versions[key] == nil then
    local res = vim.system({ path, '--version' }, { text = true }):wait(10000)
    checked_versions[key] = res.code == 0 and vim.trim(res.stdout or '') or ''
  end
  return checked_versions[key]
end

--- An `acpls` on PATH of another version than the plugin's is used, with a warning that says
--- how to get the plugin's own (once per server file).
local function warn_if_other_version(path)
  local found = M.server_version(path)
  local wanted = 'acpls ' .. require('acpls.version')
  if found ~= wanted and not warned[path] then
    warned[path] = true
    vim.notify(
      ('acpls: %s says "%s", the plugin is %s: run :Acpls install for the plugin\'s own server'):format(path, found, wanted),
      vim.log.levels.WARN
    )
  end
end

--- The command that starts the server: the `cmd` option, else the server `:Acpls install` made
--- (the plugin's own), else `acpls` on PATH (a warning when its version is not the plugin's).
---@param opts table? effective options
---@return string[]? cmd
---@return string how it was found, or why it was not
function M.server_cmd(opts)
  opts = opts or config.get()
  if type(opts.cmd) == 'string' then
    return { opts.cmd }, 'the cmd option'
  elseif type(opts.cmd) == 'table' and #opts.cmd > 0 then
    return vim.deepcopy(opts.cmd), 'the cmd option'
  end
  -- The plugin's own server first: an `acpls` on PATH may be older than the plugin.
  local installed = require('acpls.install').executable(opts)
  if vim.fn.executable(installed) == 1 then
    return { installed }, ':Acpls install'
  end
  if vim.fn.executable('acpls') == 1 then
    local path = vim.fn.exepath('acpls')
    warn_if_other_version(path)
    return { path }, 'PATH'
  end
  return nil, 'acpls is not on PATH and not installed: run :Acpls install, or set the cmd option'
end

--- The workspace root of a buffer (by `root_markers`), else the current directory.
---@param buf integer?
---@return string
function M.root_for(buf)
  buf = buf or vim.api.nvim_get_current_buf()
  local opts = config.get()
  if vim.bo[buf].buftype == '' and vim.api.nvim_buf_get_name(buf) ~= '' then
    local root = vim.fs.root(buf, opts.root_markers)
    if root then
      return vim.fs.normalize(root)
    end
  end
  return vim.fs.normalize(vim.fn.getcwd())
end

-- Handlers that are ours alone, no user's chained after them (weak: a client's table holds them).
local ours_alone = setmetatable({}, { __mode = 'k' })

-- Our handler for a method, chained with the user's: for notifications ours runs first, then theirs;
-- for requests the user's replaces ours.
local function make_handler(method, spec, user)
  local function ours(err, params, ctx)
    if err then
      vim.notify(('acpls: %s: %s'):format(method, vim.inspect(err)), vim.log.levels.ERROR)
      return vim.NIL
    end
    local mod = require(spec[1])
    local ok, result = xpcall(mod[spec[2]], debug.traceback, params, ctx)
    if not ok then
      vim.notify(('acpls: error handling %s: %s'):format(method, result), vim.log.levels.ERROR)
      return spec.request and vim.NIL or nil
    end
    return result
  end
  if type(user) ~= 'function' then
    ours_alone[ours] = true
    return ours
  end
  if spec.request then
    return user
  end
  return function(err, params, ctx)
    ours(err, params, ctx)
    return user(err, params, ctx)
  end
end

--- `acpls/sessionUpdates` (protocol.md 5.4.1): each update goes, in order, to the client's
--- `acpls/sessionUpdate` handler (ours chained with the user's), exactly as if it had come alone.
function M.on_session_updates(params, ctx)
  local c = ctx and vim.lsp.get_client_by_id(ctx.client_id)
  local one = c and c.handlers and c.handlers['acpls/sessionUpdate'] or vim.lsp.handlers['acpls/sessionUpdate']
  if type(one) ~= 'function' then
    one = make_handler('acpls/sessionUpdate', M.handlers['acpls/sessionUpdate'])
  end
  local sid = params.sessionId
  -- Ours alone: one params table serves every update, as the chat keeps the update, not the
  -- table (a table an update was ~2 MB of a 20,000-update load's ~10 MB allocated, which
  -- LuaJIT's collector sweeps inside the next decode, bench/README.md E5). A user's handler
  -- chained after ours gets a table of its own per update.
  local each = ours_alone[one] and { sessionId = sid } or nil
  for _, update in ipairs(params.updates or {}) do
    if each then
      each.update = update
      one(nil, each, ctx)
    else
      one(nil, { sessionId = sid, update = update }, ctx)
    end
  end
end

--- The handlers table given to `vim.lsp.start`: the user's, with every acpls/* method handled.
---@param user table?
function M.merged_handlers(user)
  local out = vim.deepcopy(user or {})
  for method, spec in pairs(M.handlers) do
    out[method] = make_handler(method, spec, (user or {})[method])
  end
  return out
end

function M.capabilities(opts)
  local caps = vim.lsp.protocol.make_client_capabilities()
  caps = vim.tbl_deep_extend('force', caps, opts.capabilities or {})
  caps.experimental = caps.experimental or {}
  caps.experimental.acpls = { version = 1, resolveConflict = true, sessionUpdates = true }
  return caps
end

--- Every running acpls client.
---@return vim.lsp.Client[]
function M.clients()
  return vim.lsp.get_clients({ name = M.name })
end

---@param id integer
---@return vim.lsp.Client?
function M.get(id)
  local c = vim.lsp.get_client_by_id(id)
  if c and c.name == M.name and not c:is_stopped() then
    return c
  end
  return nil
end

--- The client for `root`, if one runs.
function M.for_root(root)
  for _, c in ipairs(M.clients()) do
    if c.root_dir and vim.fs.normalize(c.root_dir) == root then
      return c
    end
  end
  return nil
end

local function under(path, root)
  return path == root or vim.startswith(path, root == '/' and '/' or (root .. '/'))
end

--- Attach a file buffer to the client whose workspace contains it (so the server sees unsaved text).
---@param buf integer
function M.attach_buffer(buf)
  if not vim.api.nvim_buf_is_valid(buf) or vim.bo[buf].buftype ~= '' then
    return
  end
  local name = vim.api.nvim_buf_get_name(buf)
  if name == '' then
    return
  end
  name = vim.fs.normalize(name)
  for _, c in ipairs(M.clients()) do
    if c.root_dir and under(name, vim.fs.normalize(c.root_dir)) and not c.attached_buffers[buf] then
      vim.lsp.buf_attach_client(buf, c.id)
    end
  end
end

local function attach_existing(client)
  for _, buf in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(buf) then
      M.attach_buffer(buf)
      require('acpls.util').remember_mtime(buf)
    end
  end
  local cbs = waiting[client.id] or {}
  waiting[client.id] = nil
  for _, cb in ipairs(cbs) do
    cb(client)
  end
end

local autocmds_done = false
local function setup_autocmds()
  if autocmds_done then
    return
  end
  autocmds_done = true
  local group = vim.api.nvim_create_augroup('acpls.client', { clear = true })
  vim.api.nvim_create_autocmd({ 'BufReadPost', 'BufNewFile', 'BufEnter' }, {
    group = group,
    callback = function(ev)
      if #M.clients() > 0 then
        M.attach_buffer(ev.buf)
      end
    end,
  })
  vim.api.nvim_create_autocmd({ 'BufReadPost', 'BufWritePost', 'FileChangedShellPost' }, {
    group = group,
    callback = function(ev)
      require('acpls.util').remember_mtime(ev.buf)
    end,
  })
end

--- Start (or reuse) the client for `root` and call `cb(client)` once it is initialized.
---@param root string?
---@param cb fun(client: vim.lsp.Client)?
---@return integer? client_id
function M.ensure(root, cb)
  root = root or M.root_for()
  local existing = M.for_root(root)
  if existing then
    if cb then
      M.when_ready(existing.id, cb)
    end
    return existing.id
  end
  local opts = config.get()
  local cmd, why = M.server_cmd(opts)
  if not cmd then
    vim.notify('acpls: ' .. why, vim.log.levels.ERROR)
    return nil
  end
  require('acpls.highlight').setup()
  setup_autocmds()
  local settings = config.server_settings(opts)
  local id = vim.lsp.start({
    name = M.name,
    cmd = cmd,
    root_dir = root,
    capabilities = M.capabilities(opts),
    init_options = settings,
    settings = { acpls = settings },
    handlers = M.merged_handlers(opts.handlers),
    on_attach = opts.on_attach,
    on_init = function(client)
      vim.schedule(function()
        attach_existing(client)
      end)
    end,
    on_exit = function(code, signal, client_id)
      vim.schedule(function()
        M.agent_status[client_id] = nil
        M.agent_statuses[client_id] = nil
        waiting[client_id] = nil
        require('acpls.chat').on_client_exit(client_id, code, signal)
      end)
    end,
  }, {
    attach = false,
    reuse_client = function(client, conf)
      return client.name == M.name and client.root_dir == conf.root_dir
    end,
  })
  if id and cb then
    M.when_ready(id, cb)
  end
  return id
end

--- Call `cb(client)` once the client has answered `initialize`.
function M.when_ready(id, cb)
  local c = vim.lsp.get_client_by_id(id)
  if c and c.initialized then
    cb(c)
    return
  end
  waiting[id] = waiting[id] or {}
  table.insert(waiting[id], cb)
end

--- Run a server command (`workspace/executeCommand` with one object argument).
---@param client_id integer
---@param command string
---@param args table
---@param cb fun(err: table?, result: any)?
function M.exec(client_id, command, args, cb)
  M.when_ready(client_id, function(client)
    local params = { command = command, arguments = { args } }
    client:request('workspace/executeCommand', params, function(err, result)
      if cb then
        cb(err, result)
      elseif err then
        local why = err.message or vim.inspect(err)
        vim.notify(('acpls: %s failed: %s'):format(command, why), vim.log.levels.ERROR)
      end
    end)
  end)
end

--- Send the current options to every running client (after `setup()` changed them).
function M.push_settings()
  local settings = config.server_settings()
  for _, c in ipairs(M.clients()) do
    c.settings = { acpls = settings }
    c:notify('workspace/didChangeConfiguration', { settings = c.settings })
  end
end

--- The last `acpls/agentStatus` of `agent` (nil: the default agent) in client `client_id`.
---@return table?
function M.status_of(client_id, agent)
  if not client_id then
    return nil
  end
  local by_agent = M.agent_statuses[client_id]
  if agent ~= nil and by_agent and by_agent[agent] then
    return by_agent[agent]
  end
  if agent == nil then
    return M.agent_status[client_id]
  end
  return nil
end

--- `acpls/agentStatus`: remember it for the statusline and chat headers; say when the agent fails.
--- Several agents can run in one server: each has its status (`agent`), the default one's is
--- `agent_status[client_id]` (the statusline's).
function M.on_agent_status(params, ctx)
  M.agent_statuses[ctx.client_id] = M.agent_statuses[ctx.client_id] or {}
  if type(params.agent) == 'string' then
    M.agent_statuses[ctx.client_id][params.agent] = params
  end
  if params.default ~= false then
    M.agent_status[ctx.client_id] = params
  end
  if params.state == 'failed' or params.state == 'exited' then
    vim.notify(('acpls: agent %s %s%s'):format(
      tostring(params.agent or ''),
      params.state,
      params.message and (': ' .. params.message) or ''
    ), params.state == 'failed' and vim.log.levels.ERROR or vim.log.levels.WARN)
  end
  require('acpls.chat').on_agent_status(params, ctx)
end

return M
