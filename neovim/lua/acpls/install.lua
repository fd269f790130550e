-- `:Acpls install`: installs the acpls server from the repository this plugin lives in, with
-- `uv tool install` where uv is found, else `pipx install`, else a virtualenv and pip. uv and pipx
-- put the `acpls` command in a bin directory of the plugin's own (stdpath('data')/acpls/bin), so
-- the plugin always knows where its server is, whatever the user's PATH. On a machine without
-- Node.js it installs `acpls[node]`: the npm agents then run on the Node that extra brings.
local config = require('acpls.config')

local M = {}

local windows = vim.fn.has('win32') == 1
local exe_suffix = windows and '.exe' or ''

--- This file's real path: plugin managers may reach the plugin through links (the repository root's
--- `lua/` is a link to `neovim/lua/`).
local function this_file()
  local source = debug.getinfo(1, 'S').source:sub(2)
  return vim.uv.fs_realpath(source) or source
end

--- The `neovim/` directory of this plugin.
function M.plugin_dir()
  return vim.fn.fnamemodify(this_file(), ':p:h:h:h')
end

--- The acpls repository root (the directory above `neovim/`), where pyproject.toml is.
function M.source(opts)
  opts = opts or config.get()
  return opts.install.source or vim.fn.fnamemodify(M.plugin_dir(), ':h')
end

--- The virtualenv of the `venv` installer.
function M.dir(opts)
  opts = opts or config.get()
  return opts.install.dir or (vim.fn.stdpath('data') .. '/acpls/venv')
end

--- Where uv and pipx put the `acpls` command.
function M.bin_dir()
  return vim.fn.stdpath('data') .. '/acpls/bin'
end

--- The installed server: uv's or pipx's command if there is one, else the virtualenv's.
function M.executable(opts)
  local tool_exe = M.bin_dir() .. '/acpls' .. exe_suffix
  if vim.fn.executable(tool_exe) == 1 then
    return tool_exe
  end
  return M.dir(opts) .. (windows and '/Scripts/acpls.exe' or '/bin/acpls')
end

--- The installer to use: the `install.tool` option, else the first of uv, pipx found, else venv.
---@return string? tool
---@return string? why it cannot be used
function M.tool(opts)
  opts = opts or config.get()
  local wanted = opts.install.tool
  if wanted == 'venv' then
    return 'venv'
  elseif wanted ~= nil then
    if vim.fn.executable(wanted) == 1 then
      return wanted
    end
    return nil, ('install.tool is %s, and %s is not on PATH'):format(wanted, wanted)
  end
  for _, tool in ipairs({ 'uv', 'pipx' }) do
    if vim.fn.executable(tool) == 1 then
      return tool
    end
  end
  return 'venv'
end

-- What pip, uv and pipx print when the package index cannot be reached.
local OFFLINE_PATTERNS = {
  'failed to fetch',
  'could not find a version',
  'no matching distribution',
  'connection',
  'network',
  'name resolution',
  'temporary failure',
  'dns error',
  'offline',
}

local function looks_offline(text)
  local lower = text:lower()
  for _, pattern in ipairs(OFFLINE_PATTERNS) do
    if lower:find(pattern, 1, true) then
      return true
    end
  end
  return false
end

local function last_lines(text, count)
  local lines = vim.split(vim.trim(text or ''), '\n', { plain = true })
  return table.concat(vim.list_slice(lines, math.max(1, #lines - count + 1)), '\n')
end

--- The message for a failed step: what failed, why if it looks like no network, and its output.
function M.failure(step, res)
  local output = last_lines((res.stderr or '') .. '\n' .. (res.stdout or ''), 6)
  if looks_offline(output) then
    return ('install: %s could not reach the package index (PyPI) for acpls and its dependencies; '
      .. 'connect to the network and run :Acpls install again, or put an installed acpls on PATH '
      .. '(details: %s)'):format(step, output)
  end
  return ('install: %s failed (exit %s): %s'):format(step, tostring(res.code), output)
end

local function runner(wait)
  return function(cmd, env, on_done)
    local run_opts = { text = true, env = env }
    if wait then
      on_done(vim.system(cmd, run_opts):wait())
      return
    end
    vim.system(cmd, run_opts, function(res)
      vim.schedule(function()
        on_done(res)
      end)
    end)
  end
end

--- What to install: the repository, with the `node` extra (a Node.js inside the server's
--- environment, which npm agents then run on) when this machine has no `node` of its own.
function M.requirement(source, has_node)
  if has_node == nil then
    has_node = vim.fn.executable('node') == 1
  end
  return has_node and source or (source .. '[node]')
end

--- The steps of each installer: a list of {name, cmd, env}.
local function steps(tool, opts, source)
  source = M.requirement(source)
  local bin = M.bin_dir()
  if tool == 'uv' then
    return { { 'uv tool install', { 'uv', 'tool', 'install', '--force', source }, { UV_TOOL_BIN_DIR = bin } } }
  elseif tool == 'pipx' then
    return { { 'pipx install', { 'pipx', 'install', '--force', source }, { PIPX_BIN_DIR = bin } } }
  end
  local dir = M.dir(opts)
  local python = opts.install.python or (vim.fn.executable('python3') == 1 and 'python3' or 'python')
  local venv_python = dir .. (windows and '/Scripts/python.exe' or '/bin/python')
  return {
    { 'python -m venv', { python, '-m', 'venv', dir } },
    { 'pip install', { venv_python, '-m', 'pip', 'install', '--quiet', '--upgrade', source } },
  }
end

--- Install the server. With `opts.wait` it blocks until done (for a plugin manager's build step);
--- else it runs in the background.
---@param on_done fun(ok: boolean, message: string)?
---@param run_opts {wait: boolean?}?
function M.install(on_done, run_opts)
  local run = runner(run_opts and run_opts.wait)
  local opts = config.get()
  local source = M.source(opts)
  local function finish(ok, msg)
    vim.notify('acpls: ' .. msg, ok and vim.log.levels.INFO or vim.log.levels.ERROR)
    if on_done then
      on_done(ok, msg)
    end
  end
  if vim.fn.filereadable(source .. '/pyproject.toml') == 0 then
    finish(false, ('install: %s has no pyproject.toml (set install.source)'):format(source))
    return
  end
  local tool, why = M.tool(opts)
  if not tool then
    finish(false, 'install: ' .. why)
    return
  end
  local plan = steps(tool, opts, source)
  if tool == 'venv' and vim.fn.executable(plan[1][2][1]) == 0 then
    finish(false, ('install: neither uv, pipx nor %s found (install uv, or set install.python)'):format(plan[1][2][1]))
    return
  end
  vim.fn.mkdir(vim.fn.stdpath('data') .. '/acpls', 'p')
  local function step(index)
    local current = plan[index]
    if not current then
      finish(true, ('installed %s (%s)'):format(M.executable(opts), tool))
      return
    end
    vim.notify(('acpls: %s %s …'):format(current[1], source))
    run(current[2], current[3], function(res)
      if res.code ~= 0 then
        finish(false, M.failure(current[1], res))
      else
        step(index + 1)
      end
    end)
  end
  step(1)
end

return M
