-- Feed every golden message of editors/fixtures/ through the plugin's acpls/* handlers (the same
-- handler table vim.lsp.start gets), the way Neovim's LSP client decodes and dispatches them.
-- Returns a report the Python test checks.
local dir = ...
local client = require('acpls.client')
local handlers = client.merged_handlers({})
local report = { handled = {}, unhandled = {}, results = {}, expected = {} }
local files = vim.fn.globpath(dir, '*.json', false, true)
table.sort(files)
for _, path in ipairs(files) do
  local name = vim.fn.fnamemodify(path, ':t')
  local msg = vim.json.decode(table.concat(vim.fn.readfile(path), '\n'), { luanil = { object = true } })
  if msg.method then
    local handler = handlers[msg.method]
    if not handler then
      table.insert(report.unhandled, name)
    else
      local ctx = { method = msg.method, client_id = 4242 }
      if msg.method == 'acpls/requestPermission' then
        -- Requests run in a coroutine (as in vim.lsp.rpc) until the user answers.
        local result
        local co = coroutine.create(function()
          result = handler(nil, msg.params, ctx)
        end)
        local ok, err = coroutine.resume(co)
        assert(ok, err)
        local sel = T.open_selects()[1]
        T.answer_label(sel.index, 'Allow [')
        assert(coroutine.status(co) == 'dead', 'the request did not finish after the answer')
        report.results[name] = result
      elseif msg.method == 'acpls/elicitation' then
        local result
        local co = coroutine.create(function()
          result = handler(nil, msg.params, ctx)
        end)
        local ok, err = coroutine.resume(co)
        assert(ok, err)
        local answer_path = dir .. '/acpls_elicitation.result.json'
        local answer = vim.json.decode(table.concat(vim.fn.readfile(answer_path), '\n'))
        T.fill_question(answer.result.content)
        assert(coroutine.status(co) == 'dead', 'the question did not finish after the answers')
        report.results[name] = result
      elseif msg.method == 'acpls/resolveConflict' then
        -- Asked with vim.ui.select: the diff first (a new tab, both texts in diff mode), then keep.
        local result
        local co = coroutine.create(function()
          result = handler(nil, msg.params, ctx)
        end)
        local ok, err = coroutine.resume(co)
        assert(ok, err)
        T.answer_label(T.open_selects()[1].index, 'Show the diff')
        vim.wait(1000, function()
          return #T.open_selects() > 0
        end)
        local diffed = {}
        for _, win in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
          if vim.wo[win].diff then
            table.insert(diffed, vim.api.nvim_buf_get_lines(vim.api.nvim_win_get_buf(win), 0, -1, false))
          end
        end
        report.conflict_diff = diffed
        vim.cmd('tabclose')
        T.answer_label(T.open_selects()[1].index, 'Keep mine')
        assert(coroutine.status(co) == 'dead', 'the conflict question did not finish')
        report.results[name] = result
      elseif msg.method == 'acpls/authEnv' or msg.method == 'acpls/runLogin' then
        local result
        local co = coroutine.create(function()
          result = handler(nil, msg.params, ctx)
        end)
        local ok, err = coroutine.resume(co)
        assert(ok, err)
        if msg.method == 'acpls/authEnv' then
          local inp = T.open_inputs()[1]
          T.answer_input(inp.index, 'sk-…')
        end
        -- The login command of the fixture is not installed here: it ends at once.
        assert(coroutine.status(co) == 'dead', 'the sign-in request did not finish')
        report.results[name] = result
      else
        handler(nil, msg.params, ctx)
      end
      table.insert(report.handled, name)
    end
  elseif msg.result ~= nil then
    report.expected[name] = msg.result
  end
end
return report
