-- `:Acpls fix [all]`: "Ask the agent to fix" on any diagnostic, whichever tool reported it.
-- Neovim sends each language server only its own diagnostics with textDocument/codeAction, and
-- acpls reports none: here the line's diagnostics (with `all`, the buffer's) of every source
-- (language servers, nvim-lint, …) go to acpls, which answers with its fix actions.
local M = {}

M.FIX_ALL = 'Ask the agent to fix all diagnostics in this file'
local FIX_ONE = 'Ask the agent to fix: '

---@param action lsp.CodeAction|lsp.Command
---@return boolean
local function is_acpls_fix(action)
  local command = action.command
  return type(command) == 'table' and command.command == 'acpls.prompt' and action.title:sub(1, #FIX_ONE) == FIX_ONE
end

--- Ask the agent to fix a diagnostic on the cursor's line (picked when there are several), or
--- with `all`, every diagnostic of the buffer.
---@param all boolean?
function M.run(all)
  local buf = vim.api.nvim_get_current_buf()
  local diagnostics = vim.diagnostic.get(buf, all and {} or { lnum = vim.api.nvim_win_get_cursor(0)[1] - 1 })
  if #diagnostics == 0 then
    local where = all and 'in this buffer' or 'on this line'
    vim.notify('acpls: no diagnostic ' .. where, vim.log.levels.WARN)
    return
  end
  require('acpls.client').ensure(nil, function()
    vim.lsp.buf.code_action({
      context = { diagnostics = vim.lsp.diagnostic.from(diagnostics), only = { 'quickfix' } },
      filter = function(action)
        if all then
          return action.title == M.FIX_ALL
        end
        return is_acpls_fix(action)
      end,
      apply = true,
    })
  end)
end

return M
