-- @-mentions in the chat prompt: completion candidates from the server (`acpls.mentionCandidates`:
-- workspace files, fuzzy, .gitignore respected; sessions) and the tokens of a sent prompt turned
-- into `acpls.prompt` mentions (editors/protocol.md section 3.2):
--   @file:PATH[#Lstart-end]   @session:ID   @diagnostics (every buffer's)   @diagnostics:PATH
local M = {}

M.PATTERN = [[@\(file\|session\|diagnostics\)\(:\S\+\)\?]]
local TIMEOUT_MS = 2000

--- Completion items for `base` (the text from `@`), asked of the chat's server synchronously:
--- omnifunc has to answer at once.
---@param client_id integer
---@param base string
function M.items(client_id, base)
  local query = base:gsub('^@', ''):gsub('^file:', '')
  local items = {}
  for _, word in ipairs({ '@diagnostics' }) do
    if vim.startswith(word, base) then
      table.insert(items, { word = word, menu = 'diagnostics of every buffer' })
    end
  end
  local c = vim.lsp.get_client_by_id(client_id)
  if not c then
    return items
  end
  local params = { command = 'acpls.mentionCandidates', arguments = { { query = query, limit = 30 } } }
  local answer = c:request_sync('workspace/executeCommand', params, TIMEOUT_MS)
  local result = answer and answer.result
  for _, item in ipairs(type(result) == 'table' and result.items or {}) do
    if item.type == 'file' then
      table.insert(items, { word = '@file:' .. item.label, menu = 'file' })
    elseif item.type == 'session' then
      table.insert(items, { word = '@session:' .. item.sessionId, menu = 'session', info = item.label })
    end
  end
  return items
end

local function uri_of(root, path)
  if not vim.startswith(path, '/') then
    path = vim.fs.joinpath(root, path)
  end
  return vim.uri_from_fname(vim.fs.normalize(path))
end

local function diagnostics_of(bufnr)
  local out = {}
  for _, d in ipairs(vim.diagnostic.get(bufnr)) do
    local name = vim.api.nvim_buf_get_name(d.bufnr)
    if name ~= '' and vim.bo[d.bufnr].buftype == '' then
      table.insert(out, { uri = vim.uri_from_fname(name), diagnostic = vim.lsp.diagnostic.from({ d })[1] })
    end
  end
  return out
end

--- The mentions in a prompt's text, in order.
---@param text string
---@param root string the chat's workspace folder (relative paths are under it)
---@return table[]
function M.parse(text, root)
  local mentions = {}
  for kind, arg in text:gmatch('@(%a+):?(%S*)') do
    if kind == 'file' and arg ~= '' then
      local path, first, last = arg:match('^(.-)#L(%d+)%-(%d+)$')
      local mention = { type = 'file', uri = uri_of(root, path or arg) }
      if path then
        mention.range = {
          start = { line = tonumber(first) - 1, character = 0 },
          ['end'] = { line = tonumber(last), character = 0 },
        }
      end
      table.insert(mentions, mention)
    elseif kind == 'session' and arg ~= '' then
      table.insert(mentions, { type = 'session', sessionId = arg })
    elseif kind == 'diagnostics' then
      local bufnr = nil
      if arg ~= '' then
        bufnr = vim.fn.bufnr(vim.fs.normalize(vim.startswith(arg, '/') and arg or vim.fs.joinpath(root, arg)))
        if bufnr < 0 then
          bufnr = nil
        end
      end
      table.insert(mentions, { type = 'diagnostics', diagnostics = diagnostics_of(bufnr) })
    end
  end
  return mentions
end

--- Show mentions as highlighted words in the prompt buffer.
function M.highlight(buf)
  vim.api.nvim_buf_call(buf, function()
    vim.cmd('syntax match acplsMention /' .. M.PATTERN .. '/ containedin=ALL')
  end)
  vim.api.nvim_set_hl(0, 'acplsMention', { default = true, link = 'Special' })
end

return M
