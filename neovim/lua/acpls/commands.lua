-- `:Acpls {subcommand}`: dispatch and completion.
local M = {}

local function chat()
  return require('acpls.chat')
end

local function client()
  return require('acpls.client')
end

-- The range of `:'<,'>Acpls prompt …` as a context item.
local function range_context(args)
  if args.range == 0 then
    return nil
  end
  local item = chat().context_item(vim.api.nvim_get_current_buf(), args.line1, args.line2)
  return item and { item } or nil
end

---@type table<string, {run: fun(rest: string[], args: table), complete?: string[]|fun(): string[], desc: string}>
M.subcommands = {
  chat = {
    desc = 'open the chat (`new`: a new chat with its own session; {agent}: the chat of that agent)',
    complete = function()
      local names = { 'new' }
      for name in pairs(require('acpls.config').get().agents or {}) do
        table.insert(names, name)
      end
      table.sort(names)
      return names
    end,
    run = function(rest)
      local new = rest[1] == 'new'
      local agent = new and rest[2] or (not new and rest[1]) or nil
      chat().open({ new = new, agent = agent })
    end,
  },
  prompt = {
    desc = 'send {text} to the agent (with a range: those lines as context)',
    run = function(rest, args)
      local text = table.concat(rest, ' ')
      if vim.trim(text) == '' then
        vim.notify('acpls: :Acpls prompt {text}', vim.log.levels.ERROR)
        return
      end
      chat().prompt(text, range_context(args))
    end,
  },
  attach = {
    desc = 'attach an image file to the next prompt',
    run = function(rest)
      if not rest[1] then
        vim.notify('acpls: :Acpls attach {path}', vim.log.levels.ERROR)
        return
      end
      chat().attach(table.concat(rest, ' '))
    end,
  },
  paste = {
    desc = "attach the clipboard's image to the next prompt (wl-paste, xclip or pngpaste)",
    run = function()
      chat().paste_image()
    end,
  },
  copy = {
    desc = 'copy the message or tool call under the cursor into the prompt as context',
    run = function()
      chat().copy_here()
    end,
  },
  fix = {
    desc = "ask the agent to fix this line's diagnostic (`all`: every diagnostic in the buffer)",
    complete = { 'all' },
    run = function(rest)
      require('acpls.fix').run(rest[1] == 'all')
    end,
  },
  cancel = {
    desc = 'cancel the running turn',
    run = function()
      chat().cancel()
    end,
  },
  queue = {
    desc = 'the prompts waiting for the running turn: edit, remove or steer one',
    run = function()
      chat().pick_queued()
    end,
  },
  follow = {
    desc = 'follow the agent: on, off or toggle',
    complete = { 'on', 'off', 'toggle' },
    run = function(rest)
      require('acpls.follow').set(rest[1] or 'toggle')
    end,
  },
  mode = {
    desc = "pick the agent's mode",
    run = function()
      chat().pick_mode()
    end,
  },
  model = {
    desc = "pick the agent's model (its config option of category `model`)",
    run = function()
      chat().pick_model()
    end,
  },
  toggle = {
    desc = "turn one of the agent's on/off config options on or off (a picker without {id})",
    complete = function()
      return require('acpls.chat').boolean_option_ids()
    end,
    run = function(rest)
      chat().toggle_option(rest[1])
    end,
  },
  config = {
    desc = "pick one of the agent's config options",
    run = function()
      chat().pick_config()
    end,
  },
  sessions = {
    desc = 'pick a chat',
    run = function()
      chat().pick_chat()
    end,
  },
  load = {
    desc = "continue one of the agent's earlier sessions in a new chat",
    run = function()
      chat().load_session()
    end,
  },
  history = {
    desc = "the agent's stored sessions: load, resume, fork, close or delete one",
    run = function()
      chat().history()
    end,
  },
  fork = {
    desc = "fork this chat's session into a new chat",
    run = function()
      chat().fork()
    end,
  },
  close = {
    desc = "close this chat's session",
    run = function()
      chat().close()
    end,
  },
  logout = {
    desc = 'sign out of the agent',
    run = function()
      chat().logout()
    end,
  },
  permissions = {
    desc = 'answer a waiting permission request',
    run = function()
      require('acpls.permission').pick()
    end,
  },
  rules = {
    desc = 'remove a remembered "always" permission answer',
    run = function()
      require('acpls.permission').rules()
    end,
  },
  login = {
    desc = 'sign in to the agent',
    run = function()
      local id = client().ensure()
      if id then
        client().exec(id, 'acpls.authenticate', {})
      end
    end,
  },
  terminals = {
    desc = "list the agent's terminals",
    run = function()
      require('acpls.terminals').pick()
    end,
  },
  review = {
    desc = "the agent's changes in the quickfix list",
    run = function()
      require('acpls.review').review()
    end,
  },
  keep = {
    desc = 'keep the change under the cursor',
    run = function()
      require('acpls.review').hunk('keep')
    end,
  },
  reject = {
    desc = 'reject the change under the cursor',
    run = function()
      require('acpls.review').hunk('reject')
    end,
  },
  rejected = {
    desc = 'the changes you rejected, with the text the agent proposed',
    run = function()
      require('acpls.review').show_rejected()
    end,
  },
  keepall = {
    desc = 'keep every change (`file`: of the current file)',
    complete = { 'file' },
    run = function(rest)
      require('acpls.review').all('keep', rest[1] == 'file')
    end,
  },
  rejectall = {
    desc = 'reject every change (`file`: of the current file)',
    complete = { 'file' },
    run = function(rest)
      require('acpls.review').all('reject', rest[1] == 'file')
    end,
  },
  agents = {
    desc = 'choose the agent among the presets and the ACP registry (`refresh`: fetch the registry first)',
    complete = { 'refresh' },
    run = function(rest)
      require('acpls.agents').pick({ refresh = rest[1] == 'refresh' })
    end,
  },
  checkpoints = {
    desc = 'restore the workspace to before a turn (a picker with a diff preview)',
    run = function()
      require('acpls.checkpoints').pick()
    end,
  },
  transcript = {
    desc = "open the session's markdown transcript",
    run = function()
      local c = chat().current()
      local id = (c and c.client_id) or client().ensure()
      if id then
        client().exec(id, 'acpls.openTranscript', { sessionId = c and c.session_id or nil })
      end
    end,
  },
  start = {
    desc = 'start acpls for this workspace',
    run = function()
      client().ensure()
    end,
  },
  stop = {
    desc = 'stop acpls (and its agent)',
    run = function()
      for _, c in ipairs(client().clients()) do
        c:stop()
      end
    end,
  },
  restart = {
    desc = 'restart the agent ({agent}: that agent; only its chats lose their session)',
    run = function(rest)
      local agent = rest[1]
      local args = agent and { agent = require('acpls.config').agent_arg(agent) } or {}
      for _, c in ipairs(client().clients()) do
        client().exec(c.id, 'acpls.restartAgent', args)
      end
    end,
  },
  install = {
    desc = 'install acpls into a virtualenv under stdpath("data")',
    run = function()
      require('acpls.install').install()
    end,
  },
  health = {
    desc = ':checkhealth acpls',
    run = function()
      vim.cmd('checkhealth acpls')
    end,
  },
}

function M.run(args)
  local name = args.fargs[1] or 'chat'
  local sub = M.subcommands[name]
  if not sub then
    vim.notify(('acpls: unknown subcommand %q (see :help acpls-commands)'):format(name), vim.log.levels.ERROR)
    return
  end
  sub.run(vim.list_slice(args.fargs, 2), args)
end

function M.complete(arglead, line, _pos)
  local after = line:match('Acpls!?%s+(.*)$') or ''
  local words = vim.split(after, '%s+', { trimempty = false })
  local candidates
  if #words <= 1 then
    candidates = vim.tbl_keys(M.subcommands)
    table.sort(candidates)
  else
    local sub = M.subcommands[words[1]]
    candidates = sub and sub.complete or {}
    if type(candidates) == 'function' then
      candidates = candidates()
    end
  end
  return vim.tbl_filter(function(n)
    return vim.startswith(n, arglead)
  end, candidates)
end

return M
