-- nvim-cmp source for the chat prompt buffer: the agent's `/` commands and `@`-mentions (files,
-- sessions, symbols, terminals, diagnostics), the same items as the prompt's omnifunc.
-- acpls registers it as `acpls` when nvim-cmp is loaded and turns it on in prompt buffers; to use
-- it elsewhere in your cmp setup: `sources = { { name = 'acpls' } }`.
local M = {}

local kinds = { file = 17, session = 18, symbol = 6, terminal = 14, diagnostics = 18 }

local source = {}
source.__index = source

function M.new()
  return setmetatable({}, source)
end

function source:get_debug_name()
  return 'acpls'
end

function source:is_available()
  return require('acpls.chat').is_prompt_buf(vim.api.nvim_get_current_buf())
end

function source:get_trigger_characters()
  return { '@', '/' }
end

function source:get_keyword_pattern()
  return [[\%(@\|/\)\S*]]
end

--- `items` of acpls.chat.complete_line as LSP completion items (what cmp takes).
---@param start integer 0-based byte column of the word
---@param row integer 0-based line
---@param col integer 0-based byte column of the cursor
function M.lsp_items(items, row, start, col)
  local out = {}
  for _, item in ipairs(items or {}) do
    local kind = item.menu and kinds[item.menu] or 1
    table.insert(out, {
      label = item.word,
      filterText = item.word,
      kind = kind,
      detail = item.menu,
      documentation = item.info,
      textEdit = {
        newText = item.word,
        range = { start = { line = row, character = start }, ['end'] = { line = row, character = col } },
      },
    })
  end
  return out
end

function source:complete(params, callback)
  local buf = vim.api.nvim_get_current_buf()
  local line = params.context.cursor_before_line
  local start, items = require('acpls.chat').complete_line(buf, line)
  if not start then
    callback({ items = {}, isIncomplete = false })
    return
  end
  local row = params.context.cursor.row - 1
  callback({ items = M.lsp_items(items, row, start, #line), isIncomplete = true })
end

local registered = false

--- Registers the source with nvim-cmp (when it is loaded) and turns it on in the prompt buffer.
---@param buf integer
function M.attach(buf)
  local ok, cmp = pcall(require, 'cmp')
  if not ok or type(cmp) ~= 'table' or type(cmp.register_source) ~= 'function' then
    return false
  end
  if not registered then
    cmp.register_source('acpls', M.new())
    registered = true
  end
  if cmp.setup and type(cmp.setup.buffer) == 'function' then
    vim.api.nvim_buf_call(buf, function()
      cmp.setup.buffer({ sources = { { name = 'acpls' } } })
    end)
  end
  return true
end

return M
