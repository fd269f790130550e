-- Signing in with the agent's `env_var` and `terminal` auth methods (acpls asks through
-- `acpls/authEnv` and `acpls/runLogin`; editors/protocol.md section 5.10).
local util = require('acpls.util')

local M = {}

-- Values given for env_var methods, for this Neovim session only (never written anywhere).
local secrets = {} ---@type table<string, string>

--- `acpls/authEnv`: the variables an env_var method needs, asked one after another (remembered for
--- the session); Esc on any cancels the sign-in.
function M.on_auth_env(params, _ctx)
  local vars = type(params.vars) == 'table' and params.vars or {}
  return util.await_reply('sign-in', function(done)
    local values = {}
    local function ask(i)
      local var = vars[i]
      if not var then
        done({ values = values })
        return
      end
      local key = tostring(params.agent) .. '\0' .. var.name
      if secrets[key] then
        values[var.name] = secrets[key]
        ask(i + 1)
        return
      end
      local label = var.label and var.label ~= vim.NIL and var.label or var.name
      local prompt = ('%s: %s%s: '):format(tostring(params.name), label, params.link and params.link ~= vim.NIL and (' (' .. params.link .. ')') or '')
      vim.ui.input({ prompt = prompt }, function(text)
        if text == nil then
          done(vim.NIL)
          return
        end
        if text ~= '' then
          values[var.name] = text
          secrets[key] = text
        end
        ask(i + 1)
      end)
    end
    ask(1)
  end)
end

--- `acpls/runLogin`: the agent's login command in a terminal split; answered with its exit code
--- when it ends.
function M.on_run_login(params, _ctx)
  return util.await_reply('sign-in', function(done)
    vim.cmd('botright new')
    local buf = vim.api.nvim_get_current_buf()
    vim.b[buf].acpls_login = params.methodId
    local ok, job = pcall(vim.fn.jobstart, params.command, {
      term = true,
      cwd = params.cwd,
      env = params.env,
      on_exit = function(_, code)
        vim.schedule(function()
          done({ exitCode = code })
        end)
      end,
    })
    if not ok or job <= 0 then
      vim.notify('acpls: cannot run the sign-in command: ' .. tostring(job), vim.log.levels.WARN)
      done({ exitCode = -1 })
      return
    end
    vim.cmd('startinsert')
  end)
end

--- Forget the values given this session (`:Acpls logout` does it too).
function M.forget()
  secrets = {}
end

return M
