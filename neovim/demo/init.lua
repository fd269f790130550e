-- The `make demo` Neovim: the plugin, the demo agent, a first prompt. With ACPLS_DEMO_HEADLESS=1
-- (tests) every permission prompt is answered with its first "allow" option and Neovim exits at the
-- end of the turn, writing what it saw to $ACPLS_DEMO_RESULT.
local here = vim.fs.dirname(debug.getinfo(1, 'S').source:sub(2))
local plugin = vim.fs.dirname(here)
vim.opt.rtp:prepend(plugin)
vim.cmd.runtime('plugin/acpls.lua')

vim.o.number = true
vim.o.signcolumn = 'yes'
vim.o.termguicolors = true
vim.o.laststatus = 3
vim.o.cmdheight = 2
vim.o.statusline = "%f %m%=%{v:lua.require'acpls'.statusline()} "
vim.g.maplocalleader = ','

local headless = os.getenv('ACPLS_DEMO_HEADLESS') == '1'
local prompt = os.getenv('ACPLS_DEMO_PROMPT') or 'fix the failing test'

require('acpls').setup({
  agent = 'demo',
  cmd = os.getenv('ACPLS_CMD') and { os.getenv('ACPLS_CMD') } or nil,
})

-- Show each agent terminal as it starts, below the code, without taking the cursor.
vim.api.nvim_create_autocmd('User', {
  pattern = 'AcplsTerminal',
  callback = function(ev)
    vim.schedule(function()
      require('acpls.terminals').show(ev.data.sessionId, ev.data.terminalId, false)
    end)
  end,
})

if headless then
  local seen = { permissions = {}, follows = 0 }
  vim.ui.select = function(items, opts, on_choice)
    local choice, index = items[1], 1
    for i, item in ipairs(items) do
      if type(item) == 'table' and item.kind == 'option' and tostring(item.option.kind):match('^allow') then
        choice, index = item, i
        break
      end
    end
    table.insert(seen.permissions, (opts.format_item or tostring)(choice))
    vim.schedule(function()
      on_choice(choice, index)
    end)
  end
  vim.api.nvim_create_autocmd('User', {
    pattern = 'AcplsTurnEnd',
    callback = function(ev)
      local chat = require('acpls.chat').list()[1]
      local result = {
        stopReason = ev.data.stopReason,
        permissions = seen.permissions,
        chat = chat and vim.api.nvim_buf_get_lines(chat.buf, 0, -1, false) or {},
        terminals = require('acpls.terminals').list(),
        follow = require('acpls.follow').mark() ~= nil,
        calc = vim.fn.readfile('calc.py'),
        calc_buffer = vim.api.nvim_buf_get_lines(vim.fn.bufnr('calc.py'), 0, -1, false),
        errors = _G.acpls_demo_errors or {},
      }
      -- Terminal buffers redraw on a short timer: let the last output land before reading them.
      vim.defer_fn(function()
        for _, t in ipairs(result.terminals) do
          t.lines = vim.api.nvim_buf_get_lines(t.buf, 0, -1, false)
        end
        local out = os.getenv('ACPLS_DEMO_RESULT')
        if out then
          vim.fn.writefile({ vim.json.encode(result) }, out)
        end
        vim.cmd(ev.data.stopReason == 'end_turn' and 'qa!' or 'cquit! 1')
      end, 300)
    end,
  })
  _G.acpls_demo_errors = {}
  local notify = vim.notify
  vim.notify = function(msg, level, o)
    if (level or 0) >= vim.log.levels.ERROR then
      table.insert(_G.acpls_demo_errors, msg)
    end
    return notify(msg, level, o)
  end
  vim.defer_fn(function()
    io.stderr:write('acpls demo: the turn did not end in time\n')
    vim.cmd('cquit! 2')
  end, tonumber(os.getenv('ACPLS_DEMO_TIMEOUT_MS') or '120000'))
end

vim.api.nvim_create_autocmd('VimEnter', {
  once = true,
  callback = function()
    vim.defer_fn(function()
      require('acpls').prompt(prompt)
      if not headless then
        vim.notify('acpls demo: approve the edit when asked · :Acpls chat · :Acpls terminals · :qa quits')
      end
    end, 200)
  end,
})
