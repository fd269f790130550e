-- @-mentions in the chat prompt: completion candidates from the server (`acpls.mentionCandidates`:
-- workspace files, fuzzy, .gitignore respected; sessions) and the tokens of a sent prompt turned
-- into `acpls.prompt` mentions (editors/protocol.md section 3.2):
--   @file:PATH[#Lstart-end]   @session:ID   @diagnostics (every buffer's)   @diagnostics:PATH
--   @symbol:NAME (a workspace symbol of the editor's other language servers)
--   @terminal:ID (an agent terminal's recent output)
local M = {}

M.PATTERN = [[@\(file\|session\|diagnostics\|symbol\|terminal\)\(:\S\+\)\?]]
local TIMEOUT_MS = 2000
local SYMBOL_TIMEOUT_MS = 1000

-- Symbols offered by completion, by name: a sent `@symbol:NAME` is looked up here first.
M.symbols = {}

--- The workspace symbols matching `query` of every language server but acpls.
---@param query string
function M.workspace_symbols(query)
  local out = {}
  for _, c in ipairs(vim.lsp.get_clients()) do
    if c.name ~= 'acpls' and c:supports_method('workspace/symbol') then
      local answer = c:request_sync('workspace/symbol', { query = query }, SYMBOL_TIMEOUT_MS)
      for _, s in ipairs(answer and type(answer.result) == 'table' and answer.result or {}) do
        local loc = type(s.location) == 'table' and s.location or nil
        if loc and loc.uri and loc.range then
          table.insert(out, { name = s.name, kind = s.kind, container = s.containerName, uri = loc.uri, range = loc.range })
        end
      end
    end
  end
  return out
end

--- Completion items for `base` (the text from `@`), asked of the chat's server synchronously:
--- omnifunc has to answer at once.
---@param client_id integer
---@param base string
---@param session_id string? the chat's session (its agent terminals are offered)
function M.items(client_id, base, session_id)
  local query = base:gsub('^@', '')
  -- `@session…` offers only sessions, `@file:…` only files, `@symbol:…` only symbols.
  local only = nil
  for _, kind in ipairs({ 'session', 'file', 'symbol', 'terminal' }) do
    local rest = query:match('^' .. kind .. ':(.*)$') or (query == kind and '' or nil)
    if rest then
      only, query = kind, rest
      break
    end
  end
  local function wanted(kind)
    return only == nil or only == kind
  end
  local items = {}
  for _, word in ipairs(only == nil and { '@diagnostics' } or {}) do
    if vim.startswith(word, base) then
      table.insert(items, { word = word, menu = 'diagnostics of every buffer' })
    end
  end
  for _, t in ipairs(wanted('terminal') and require('acpls.terminals').list() or {}) do
    local word = '@terminal:' .. t.terminalId
    if (session_id == nil or t.sessionId == session_id) and (vim.startswith(word, base) or (t.command or ''):find(query, 1, true)) then
      table.insert(items, { word = word, menu = 'terminal', info = t.command })
    end
  end
  local symbol_query = query
  if wanted('symbol') and #symbol_query >= 2 and not symbol_query:find('[/:]') then
    for _, s in ipairs(M.workspace_symbols(symbol_query)) do
      M.symbols[s.name] = s
      local where = vim.fn.fnamemodify(vim.uri_to_fname(s.uri), ':.') .. ':' .. (s.range.start.line + 1)
      table.insert(items, { word = '@symbol:' .. s.name, menu = 'symbol', info = where })
    end
  end
  local c = vim.lsp.get_client_by_id(client_id)
  if not c or not (wanted('file') or wanted('session')) then
    return items
  end
  local params = { command = 'acpls.mentionCandidates', arguments = { { query = query, limit = 30 } } }
  local answer = c:request_sync('workspace/executeCommand', params, TIMEOUT_MS)
  local result = answer and answer.result
  for _, item in ipairs(type(result) == 'table' and result.items or {}) do
    if item.type == 'file' and wanted('file') then
      table.insert(items, { word = '@file:' .. item.label, menu = 'file' })
    elseif item.type == 'session' and wanted('session') then
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
    elseif kind == 'terminal' and arg ~= '' then
      table.insert(mentions, { type = 'terminal', terminalId = arg })
    elseif kind == 'symbol' and arg ~= '' then
      local s = M.symbols[arg]
      if not s then
        for _, found in ipairs(M.workspace_symbols(arg)) do
          if found.name == arg then
            s = found
            break
          end
        end
      end
      if s then
        table.insert(mentions, { type = 'symbol', name = s.name, uri = s.uri, range = s.range })
      else
        vim.notify(('acpls: no symbol %s in the language servers\' workspace symbols: not sent'):format(arg), vim.log.levels.WARN)
      end
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
