-- `acpls/resolveConflict` (editors/protocol.md section 5.13): acpls will not replace the user's text
-- on its own. The user's text against another (the agent's write to disk over unsaved changes, or
-- the original a rejection would give back): keep mine, show the diff (both texts side by side in
-- diff mode, in a new tab; then the question again), or take theirs. Dismissed: null, which keeps
-- the user's text.
local util = require('acpls.util')

local M = {}

--- The choices, in order: keep mine first (the safe one), the diff, then take theirs.
---@param params table
---@return {label: string, choice: string}[]
function M.items(params)
  local theirs = params.kind == 'reject' and 'the original' or "the agent's"
  return {
    { label = 'Keep mine', choice = 'keepMine' },
    { label = 'Show the diff', choice = 'showDiff' },
    { label = 'Take ' .. theirs, choice = 'takeTheirs' },
  }
end

local function lines_of(text)
  if type(text) ~= 'string' then
    return {}
  end
  local lines = vim.split(text, '\n', { plain = true })
  if lines[#lines] == '' then
    table.remove(lines)
  end
  return lines
end

--- Both texts in diff mode in a new tab: yours on the left, theirs on the right (scratch buffers).
---@param params table
---@return integer left, integer right buffers
function M.show_diff(params)
  local name = vim.fn.fnamemodify(tostring(params.path), ':t')
  local ft = vim.filetype.match({ filename = tostring(params.path) })
  local other = params.kind == 'reject' and 'original' or 'agent'
  vim.cmd('tabnew')
  local left = util.scratch('acpls://conflict/yours/' .. name, ft)
  vim.api.nvim_buf_set_lines(left, 0, -1, false, lines_of(params.mine))
  vim.api.nvim_win_set_buf(0, left)
  vim.cmd('diffthis')
  vim.cmd('rightbelow vsplit')
  local right = util.scratch('acpls://conflict/' .. other .. '/' .. name, ft)
  vim.api.nvim_buf_set_lines(right, 0, -1, false, lines_of(params.theirs))
  vim.api.nvim_win_set_buf(0, right)
  vim.cmd('diffthis')
  for _, buf in ipairs({ left, right }) do
    vim.bo[buf].modifiable = false
  end
  return left, right
end

--- The request handler: asks with vim.ui.select until the user keeps, takes or dismisses.
function M.on_request(params, _ctx)
  return util.await_reply('conflict', function(done)
    local items = M.items(params)
    local function ask()
      vim.ui.select(items, {
        prompt = tostring(params.message),
        kind = 'acpls_conflict',
        format_item = function(item)
          return item.label
        end,
      }, function(item)
        if item == nil then
          done(vim.NIL)
        elseif item.choice == 'showDiff' then
          M.show_diff(params)
          vim.schedule(ask)
        else
          done({ choice = item.choice })
        end
      end)
    end
    ask()
  end)
end

return M
