-- lazy.nvim reads this spec from the plugin's root (its package spec), merged with the user's:
-- `{ 'acpls', dir = '~/src/acpls' }` is then all a user writes. The server is installed, and
-- installed again after every update, before lazy.nvim reports the build done.
return {
  name = 'acpls',
  opts = {},
  build = function()
    local done = nil
    require('acpls.install').install(function(ok, message)
      done = { ok, message }
    end, { wait = true })
    if done and not done[1] then
      error(done[2], 0) -- lazy.nvim shows a failed build with this message
    end
  end,
}
