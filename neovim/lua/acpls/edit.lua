-- WorkspaceEdits as data: which files a preview touches, and their text after the edit (applied to a
-- copy, never to the user's buffer). Positions are LSP's (0-based lines, UTF-16 columns).
local util = require('acpls.util')

local M = {}

--- Apply LSP TextEdits to `lines` (a file's lines, ending with a newline), returning new lines.
--- Edits are applied as LSP says: all ranges refer to the original text; edits that start at the same
--- place are inserted in the order given.
---@param lines string[]
---@param edits table[] `[{range, newText}]`
---@return string[]
function M.apply_text_edits(lines, edits)
  local starts, offset = {}, 0
  for i, l in ipairs(lines) do
    starts[i] = offset
    offset = offset + #l + 1
  end
  local text = #lines > 0 and (table.concat(lines, '\n') .. '\n') or ''
  local function to_offset(pos)
    local line = pos.line or 0
    if line >= #lines then
      return #text
    end
    local l = lines[line + 1]
    return starts[line + 1] + util.byte_col(l, pos.character or 0)
  end
  local spans = {}
  for i, e in ipairs(edits) do
    local s, en = to_offset(e.range.start), to_offset(e.range['end'])
    table.insert(spans, { s = s, e = math.max(s, en), text = e.newText or '', i = i })
  end
  -- One pass over the original text in order of position (array order for equal starts), so every
  -- range refers to the original text as LSP says.
  table.sort(spans, function(a, b)
    if a.s ~= b.s then
      return a.s < b.s
    end
    return a.i < b.i
  end)
  local out, cursor = {}, 0
  for _, sp in ipairs(spans) do
    if sp.s > cursor then
      table.insert(out, text:sub(cursor + 1, sp.s))
    end
    table.insert(out, sp.text)
    cursor = math.max(cursor, sp.e)
  end
  table.insert(out, text:sub(cursor + 1))
  text = table.concat(out)
  if text == '' then
    return {}
  end
  if text:sub(-1) == '\n' then
    text = text:sub(1, -2)
  end
  return vim.split(text, '\n', { plain = true })
end

--- The files a WorkspaceEdit touches, in order: `{uri, path, op, edits, newUri?}` where `op` is
--- `edit`, `create`, `delete` or `rename`. Text edits for a file that is also created are merged into
--- the create.
---@param wedit table
---@return table[]
function M.files(wedit)
  local out, by_uri = {}, {}
  local function entry(uri, op)
    local f = by_uri[uri]
    if not f then
      f = { uri = uri, path = util.uri_to_path(uri) or uri, op = op, edits = {} }
      by_uri[uri] = f
      table.insert(out, f)
    elseif op ~= 'edit' then
      f.op = op
    end
    return f
  end
  if type(wedit) ~= 'table' then
    return out
  end
  for _, dc in ipairs(type(wedit.documentChanges) == 'table' and wedit.documentChanges or {}) do
    if type(dc) == 'table' then
      if dc.kind == 'create' then
        entry(dc.uri, 'create')
      elseif dc.kind == 'delete' then
        entry(dc.uri, 'delete')
      elseif dc.kind == 'rename' then
        local f = entry(dc.oldUri, 'rename')
        f.newUri = dc.newUri
      elseif type(dc.textDocument) == 'table' then
        local f = entry(dc.textDocument.uri, 'edit')
        vim.list_extend(f.edits, type(dc.edits) == 'table' and dc.edits or {})
      end
    end
  end
  for uri, edits in pairs(type(wedit.changes) == 'table' and wedit.changes or {}) do
    local f = entry(uri, 'edit')
    vim.list_extend(f.edits, edits)
  end
  return out
end

--- The current text of a file: its buffer when loaded (unsaved changes included), else disk.
---@param path string
---@return string[]
function M.current_lines(path)
  local buf = vim.fn.bufnr(path)
  if buf ~= -1 and vim.api.nvim_buf_is_loaded(buf) then
    return vim.api.nvim_buf_get_lines(buf, 0, -1, false)
  end
  if vim.fn.filereadable(path) == 1 then
    return vim.fn.readfile(path)
  end
  return {}
end

--- `{current, proposed}` lines for one file of `M.files()`.
function M.texts(file)
  local current = file.op == 'create' and {} or M.current_lines(file.path)
  if file.op == 'delete' then
    return current, {}
  end
  return current, M.apply_text_edits(current, file.edits)
end

--- Lines added and removed between two texts.
function M.count(a, b)
  local ta = #a > 0 and (table.concat(a, '\n') .. '\n') or ''
  local tb = #b > 0 and (table.concat(b, '\n') .. '\n') or ''
  local added, removed = 0, 0
  local diff = (vim.text and vim.text.diff) or vim.diff
  for _, h in ipairs(diff(ta, tb, { result_type = "indices" }) --[[@as integer[][] ]]) do
    removed = removed + h[2]
    added = added + h[4]
  end
  return added, removed
end

return M
