-- User commands of agentls (see :help agentls). setup() is not required for
-- the commands: they start the server with the defaults on first use.
-- setup() defines them too (agentls.commands), for plugin managers that put
-- this directory on 'runtimepath' too late for plugin/ to be sourced.
if vim.g.loaded_agentls then
  return
end
vim.g.loaded_agentls = true

require("agentls.commands").create()
