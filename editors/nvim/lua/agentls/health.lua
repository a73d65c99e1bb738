-- :checkhealth agentls
local compat = require("agentls.compat")

local M = {}

-- The Neovim versions (major.minor) the project's CI runs the plugin's
-- test suite on (test/nvim/run.sh).
M.TESTED = { "0.7", "0.10" }

--- "0.10.4", and whether this major.minor is one CI tests.
function M.nvim_version()
  local v = vim.version()
  local minor = string.format("%d.%d", v.major, v.minor)
  return string.format("%s.%d", minor, v.patch), vim.tbl_contains(M.TESTED, minor)
end

function M.check()
  local h = compat.health()
  local agentls = require("agentls")
  local cfg = agentls.config
  local cmd = type(cfg.cmd) == "string" and { cfg.cmd } or cfg.cmd

  h.start("agentls")
  local version, tested = M.nvim_version()
  local tested_on = "the plugin's tests run on Neovim " .. table.concat(M.TESTED, ".x and ") .. ".x"
  if vim.fn.has("nvim-0.7") ~= 1 then
    h.error("Neovim " .. version .. ": Neovim 0.7 or newer is required")
  elseif tested then
    h.ok("Neovim " .. version .. ": tested (" .. tested_on .. ")")
  else
    h.warn("Neovim " .. version .. ": supported (0.7 or newer) but not tested (" .. tested_on .. ")",
      { "report what does not work, with :AgentlsLog" })
  end

  local exe = vim.fn.exepath(cmd[1])
  if exe == "" then
    h.error("agentls binary not found: " .. cmd[1], { agentls.INSTALL_HINT })
  else
    h.ok("agentls binary: " .. exe)
    local version, err = compat.run({ exe, "--version" })
    if version then
      h.ok("version: " .. version)
    else
      h.error("agentls --version failed: " .. tostring(err))
    end
  end

  if vim.fn.executable("rg") == 1 then
    h.ok("ripgrep (rg) found: " .. vim.fn.exepath("rg"))
  else
    h.warn("ripgrep (rg) not found; grep uses the built-in searcher", { "install ripgrep for faster searches" })
  end

  local root = agentls.root()
  local res = agentls.initialize_result(root)
  if not res then
    h.info("no agentls client running for " .. root .. " (started by setup() or the first call)")
    return
  end
  local caps = (((res or {}).capabilities or {}).experimental or {}).agentls or {}
  local watcher = agentls.watcher_mode(root) or "starting (the watchers are still being armed)"
  if watcher == "degraded" then
    h.warn("file watcher: degraded (external changes are found late)", { "raise fs.inotify.max_user_watches" })
  else
    h.ok("file watcher: " .. watcher)
  end
  local sb = caps.sandbox or {}
  if sb.active then
    h.ok("sandbox: on (" .. tostring(sb.mechanism) .. ")")
  elseif sb.enabled then
    h.warn("sandbox: enabled but OFF: " .. tostring(sb.reason), sb.failIfUnavailable and { "failIfUnavailable is set: bash runs no command" } or { "commands run unsandboxed under the permission rules" })
  else
    h.info("sandbox: off (" .. tostring(sb.reason or "not enabled") .. ")")
  end
  h.ok(string.format("server %s %s, protocol %s, %d tools: %s", tostring((res.serverInfo or {}).name),
    tostring((res.serverInfo or {}).version), tostring(caps.protocolVersion), #(caps.tools or {}),
    table.concat(caps.tools or {}, ", ")))
end

return M
