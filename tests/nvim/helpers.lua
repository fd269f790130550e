-- Test helpers loaded into the Neovim under test: record what would reach the user (pickers,
-- inputs, notifications) so the Python side can read and answer it.
_G.T = { selects = {}, inputs = {}, notes = {}, turn_ends = {} }

vim.ui.select = function(items, opts, on_choice)
  opts = opts or {}
  local fmt = opts.format_item or tostring
  local labels = {}
  for i, item in ipairs(items) do
    labels[i] = fmt(item)
  end
  table.insert(T.selects, {
    items = items,
    labels = labels,
    prompt = opts.prompt,
    kind = opts.kind,
    on_choice = on_choice,
    answered = false,
  })
end

vim.ui.input = function(opts, on_confirm)
  table.insert(T.inputs, { prompt = opts and opts.prompt, on_confirm = on_confirm, answered = false })
end

local notify = vim.notify
vim.notify = function(msg, level, o)
  table.insert(T.notes, { msg = msg, level = level or vim.log.levels.INFO })
  return notify(msg, level, o)
end

vim.api.nvim_create_autocmd('User', {
  pattern = 'AcplsTurnEnd',
  callback = function(ev)
    table.insert(T.turn_ends, { sessionId = ev.data.sessionId, stopReason = ev.data.stopReason })
  end,
})

--- The pickers not answered yet: `{index, prompt, kind, labels}`.
function T.open_selects()
  local out = {}
  for i, s in ipairs(T.selects) do
    if not s.answered then
      table.insert(out, { index = i, prompt = s.prompt, kind = s.kind, labels = s.labels })
    end
  end
  return out
end

--- Answer picker `i` with item `choice` (1-based), or dismiss it when `choice` is nil.
function T.answer(i, choice)
  local s = T.selects[i]
  s.answered = true
  s.on_choice(choice and s.items[choice] or nil, choice)
end

--- Answer picker `i` with the item whose label starts with `prefix`.
function T.answer_label(i, prefix)
  for idx, label in ipairs(T.selects[i].labels) do
    if vim.startswith(label, prefix) then
      T.answer(i, idx)
      return label
    end
  end
  error('no item ' .. prefix .. ' in ' .. vim.inspect(T.selects[i].labels))
end

function T.answer_input(i, text)
  local s = T.inputs[i]
  s.answered = true
  s.on_confirm(text)
end

--- Error notifications (what a user would see as red).
function T.errors()
  local out = {}
  for _, n in ipairs(T.notes) do
    if n.level >= vim.log.levels.ERROR then
      table.insert(out, n.msg)
    end
  end
  return out
end

--- Lines of a buffer.
function T.lines(buf)
  return vim.api.nvim_buf_get_lines(buf, 0, -1, false)
end
