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
  table.insert(T.inputs, {
    prompt = opts and opts.prompt,
    default = opts and opts.default,
    on_confirm = on_confirm,
    answered = false,
  })
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

--- The inputs not answered yet: `{index, prompt, default}`.
function T.open_inputs()
  local out = {}
  for i, s in ipairs(T.inputs) do
    if not s.answered then
      table.insert(out, { index = i, prompt = s.prompt, default = s.default })
    end
  end
  return out
end

function T.answer_input(i, text)
  local s = T.inputs[i]
  s.answered = true
  s.on_confirm(text)
end

--- Answer the agent's question being asked (acpls.question) from `content` (field -> value), one
--- prompt at a time as a user would, then pick `final` ('Send' by default) at the confirm step.
function T.fill_question(content, final)
  local question = require('acpls.question')
  for _ = 1, 500 do
    local cur = question.current()
    if not cur then
      return true
    end
    if cur.kind == 'input' then
      local inp = T.open_inputs()[1]
      local v = content[cur.field]
      T.answer_input(inp.index, v == nil and '' or tostring(v))
    else
      local open = T.open_selects()
      local sel = open[#open]
      local s = T.selects[sel.index]
      if cur.kind == 'confirm' or cur.kind == 'url' then
        T.answer_label(sel.index, final or (cur.kind == 'url' and 'Done' or 'Send'))
        return true
      end
      local want, idx = content[cur.field], nil
      for i, item in ipairs(s.items) do
        if cur.kind == 'choice' and ((want == nil and item.skip) or (want ~= nil and item.value == want)) then
          idx = i
        elseif cur.kind == 'multi' and item.opt then
          local on = vim.startswith(item.label, '[x]')
          if on ~= vim.tbl_contains(want or {}, item.opt.value) then
            idx = i
          end
        elseif cur.kind == 'multi' and item.done and not idx then
          idx = i
        end
        if idx then
          break
        end
      end
      T.answer(sel.index, assert(idx, 'no item for ' .. tostring(cur.field)))
    end
  end
  error('the question never finished')
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
