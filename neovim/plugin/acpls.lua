-- acpls: the agent inside Neovim. Only the command and <Plug> mappings are defined here; every
-- module loads on first use.
if vim.g.loaded_acpls then
  return
end
vim.g.loaded_acpls = true

if vim.fn.has('nvim-0.11') == 0 then
  vim.notify_once('acpls needs Neovim 0.11 or newer', vim.log.levels.WARN)
  return
end

vim.api.nvim_create_user_command('Acpls', function(args)
  require('acpls.commands').run(args)
end, {
  nargs = '*',
  range = true,
  desc = 'acpls: the ACP agent (:Acpls chat, prompt, follow, …)',
  complete = function(arglead, line, pos)
    return require('acpls.commands').complete(arglead, line, pos)
  end,
})

local function plug(modes, name, fn, desc)
  vim.keymap.set(modes, '<Plug>(' .. name .. ')', fn, { desc = 'acpls: ' .. desc, silent = true })
end

plug('n', 'acpls-chat', function()
  require('acpls.chat').open()
end, 'open the chat')
plug('n', 'acpls-chat-new', function()
  require('acpls.chat').open({ new = true })
end, 'open a new chat (new session)')
plug('x', 'acpls-send-selection', function()
  require('acpls.chat').send_selection()
end, 'ask about the selection')
plug('x', 'acpls-add-selection', function()
  require('acpls.chat').add_selection()
end, 'add the selection to the next prompt')
plug('n', 'acpls-cancel', function()
  require('acpls.chat').cancel()
end, 'cancel the turn')
plug('n', 'acpls-follow-toggle', function()
  require('acpls.follow').set('toggle')
end, 'toggle follow')
plug('n', 'acpls-permissions', function()
  require('acpls.permission').pick()
end, 'answer a waiting permission request')
plug('n', 'acpls-terminals', function()
  require('acpls.terminals').pick()
end, 'list agent terminals')
plug('n', 'acpls-review', function()
  require('acpls.review').review()
end, 'review agent changes')
plug('n', 'acpls-keep-hunk', function()
  require('acpls.review').hunk('keep')
end, 'keep the change under the cursor')
plug('n', 'acpls-reject-hunk', function()
  require('acpls.review').hunk('reject')
end, 'reject the change under the cursor')
