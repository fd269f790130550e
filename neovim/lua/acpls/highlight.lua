-- Highlight groups, all linked with `default = true` so colour schemes and users can override them.
local M = {}

M.links = {
  AcplsAgentCursor = 'CursorLine',
  AcplsAgentCursorSign = 'DiagnosticSignInfo',
  AcplsChatUser = 'Title',
  AcplsChatAgent = 'Special',
  AcplsChatThought = 'Comment',
  AcplsChatNotice = 'DiagnosticWarn',
  AcplsChatMeta = 'NonText',
  AcplsToolPending = 'DiagnosticWarn',
  AcplsToolRunning = 'DiagnosticInfo',
  AcplsToolCompleted = 'DiagnosticOk',
  AcplsToolFailed = 'DiagnosticError',
  AcplsPlanPending = 'Comment',
  AcplsPlanInProgress = 'DiagnosticInfo',
  AcplsPlanCompleted = 'DiagnosticOk',
  AcplsHunkAdd = 'Added',
  AcplsHunkChange = 'Changed',
  AcplsHunkDelete = 'Removed',
}

function M.apply()
  for name, target in pairs(M.links) do
    vim.api.nvim_set_hl(0, name, { link = target, default = true })
  end
end

local done = false

--- Define the groups once, and again after every `:colorscheme` (which clears them).
function M.setup()
  if done then
    return
  end
  done = true
  M.apply()
  vim.api.nvim_create_autocmd('ColorScheme', {
    group = vim.api.nvim_create_augroup('acpls.highlight', { clear = true }),
    callback = M.apply,
  })
end

return M
