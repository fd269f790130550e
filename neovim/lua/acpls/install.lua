-- `:Acpls install`: a virtualenv under stdpath('data') with acpls installed from the repository this
-- plugin lives in (the plugin is the `neovim/` directory of the acpls repository).
local config = require('acpls.config')

local M = {}

--- The `neovim/` directory of this plugin.
function M.plugin_dir()
  local source = debug.getinfo(1, 'S').source:sub(2)
  return vim.fn.fnamemodify(source, ':p:h:h:h')
end

--- The acpls repository root (the directory above `neovim/`), where pyproject.toml is.
function M.source(opts)
  opts = opts or config.get()
  return opts.install.source or vim.fn.fnamemodify(M.plugin_dir(), ':h')
end

function M.dir(opts)
  opts = opts or config.get()
  return opts.install.dir or (vim.fn.stdpath('data') .. '/acpls/venv')
end

function M.executable(opts)
  return M.dir(opts) .. '/bin/acpls'
end

local function runner(wait)
  return function(cmd, on_done)
    if wait then
      on_done(vim.system(cmd, { text = true }):wait())
      return
    end
    vim.system(cmd, { text = true }, function(res)
      vim.schedule(function()
        on_done(res)
      end)
    end)
  end
end

--- Create the virtualenv and pip install the repository into it. With `opts.wait` it blocks until
--- done (for a plugin manager's build step); else it runs in the background.
---@param on_done fun(ok: boolean, message: string)?
---@param opts {wait: boolean?}?
function M.install(on_done, opts)
  local run = runner(opts and opts.wait)
  local opts = config.get()
  local dir, source = M.dir(opts), M.source(opts)
  local python = opts.install.python or (vim.fn.executable('python3') == 1 and 'python3' or 'python')
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
  if vim.fn.executable(python) == 0 then
    finish(false, ('install: %s not found (set install.python)'):format(python))
    return
  end
  vim.notify(('acpls: creating %s …'):format(dir))
  vim.fn.mkdir(vim.fn.fnamemodify(dir, ':h'), 'p')
  run({ python, '-m', 'venv', dir }, function(res)
    if res.code ~= 0 then
      finish(false, 'install: venv failed: ' .. (res.stderr or ''))
      return
    end
    vim.notify(('acpls: installing %s …'):format(source))
    run({ dir .. '/bin/python', '-m', 'pip', 'install', '--quiet', '--upgrade', source }, function(r)
      if r.code ~= 0 then
        finish(false, 'install: pip failed: ' .. (r.stderr or ''))
      else
        finish(true, 'installed ' .. M.executable(opts))
      end
    end)
  end)
end

return M
