-- blink.cmp source for the chat prompt buffer: the agent's `/` commands and `@`-mentions (files,
-- sessions, symbols, terminals, diagnostics), the same items as the prompt's omnifunc. In your
-- blink.cmp setup:
--   sources = {
--     default = { 'lsp', 'path', 'snippets', 'buffer', 'acpls' },  -- on only in acpls prompts
--     providers = { acpls = { name = 'acpls', module = 'acpls.blink' } },
--   }
local source = {}
source.__index = source

function source.new(opts)
  return setmetatable({ opts = opts or {} }, source)
end

function source:enabled()
  return require('acpls.chat').is_prompt_buf(vim.api.nvim_get_current_buf())
end

function source:get_trigger_characters()
  return { '@', '/' }
end

--- ctx: blink's context (`line`, `cursor` = {row (1-based), col (0-based byte)}, `bufnr`).
function source:get_completions(ctx, callback)
  local buf = ctx.bufnr or vim.api.nvim_get_current_buf()
  local row, col = ctx.cursor[1], ctx.cursor[2]
  local line = ctx.line:sub(1, col)
  local start, items = require('acpls.chat').complete_line(buf, line)
  local out = start and require('acpls.cmp').lsp_items(items, row - 1, start, col) or {}
  callback({ items = out, is_incomplete_forward = true, is_incomplete_backward = true })
  return function() end
end

return source
