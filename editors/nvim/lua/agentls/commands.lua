-- The :Agentls* user commands (see :help agentls-commands). Defined by
-- plugin/agentls.lua at startup and again by setup(), because a plugin
-- manager that adds this directory to 'runtimepath' after startup (lazy.nvim
-- with the rtp appended in config) never sources plugin/.
local M = {}

-- Set once the commands exist, so a second create() leaves a user's own
-- redefinition of one of them alone.
local created = false

local function agentls()
  return require("agentls")
end

-- The window of the current tab page showing view kind (see show), or nil.
local function view_window(kind)
  for _, w in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
    local ok, shown = pcall(vim.api.nvim_buf_get_var, vim.api.nvim_win_get_buf(w), "agentls_view")
    if ok and shown == kind then
      return w
    end
  end
end

--- Shows lines in a scratch buffer named name, in the window that already
--- shows view kind ("tools", "call", "log") in this tab page, else in a new
--- split at the bottom; the buffer it replaces is wiped. Returns the buffer.
local function show(lines, name, kind)
  local render = require("agentls.render")
  local win = view_window(kind)
  if win then
    vim.api.nvim_set_current_win(win)
  else
    vim.cmd("botright new")
  end
  local buf = render.scratch(lines, name)
  vim.api.nvim_buf_set_var(buf, "agentls_view", kind)
  vim.api.nvim_win_set_buf(0, buf)
  return buf
end

local function tools_cmd()
  local tools, err = agentls().tools()
  if not tools then
    return vim.notify("agentls: tools/list failed: " .. tostring(err and err.message), vim.log.levels.ERROR)
  end
  local lines = {}
  for _, t in ipairs(tools) do
    local first = (t.description or ""):match("^[^\n]*") or ""
    table.insert(lines, string.format("%-12s %s", t.name, first))
  end
  show(lines, "agentls://tools", "tools")
end

local function call_cmd(o)
  local tool, json = o.args:match("^(%S+)%s*(.*)$")
  if not tool then
    return vim.notify("usage: :AgentlsCall {tool} {json}", vim.log.levels.ERROR)
  end
  local args = vim.empty_dict()
  if json ~= "" then
    local ok, decoded = pcall(vim.json.decode, json)
    if not ok or type(decoded) ~= "table" then
      return vim.notify("agentls: arguments must be a JSON object: " .. tostring(decoded), vim.log.levels.ERROR)
    end
    args = decoded
  end
  agentls().call(tool, args, function(err, result)
    vim.schedule(function()
      if err then
        return vim.notify("agentls: " .. tool .. " failed: " .. tostring(err.message), vim.log.levels.ERROR)
      end
      local text = agentls().text(result)
      if result.isError then
        text = "ERROR: " .. text
      end
      show(vim.split(text, "\n", { plain = true }), "agentls://call/" .. result.callId, "call")
    end)
  end)
end

local function complete_tool(lead, line)
  if line:match("^%S+%s+%S*$") then
    local init = agentls().initialize_result()
    local caps = init and init.capabilities.experimental.agentls or {}
    return vim.tbl_filter(function(n) return n:find(lead, 1, true) == 1 end, caps.tools or {})
  end
  return {}
end

local function log_cmd()
  show(vim.deepcopy(agentls().log_lines()), "agentls://log", "log")
  vim.cmd("normal! G")
end

-- Every command: {name, function, options}. A new command is one entry here
-- (and its line in :help agentls-commands and the README).
local COMMANDS = {
  { "AgentlsTools", tools_cmd, { desc = "agentls: list the tools" } },
  { "AgentlsCall", call_cmd, { nargs = "+", complete = complete_tool,
    desc = "agentls: run a tool, result in a scratch buffer (one window, reused)" } },
  { "AgentlsDiff", function() require("agentls.render").diff_last() end,
    { desc = "agentls: diff the last change against its old text" } },
  { "AgentlsLog", log_cmd, { desc = "agentls: show the log" } },
  { "AgentlsClear", function() agentls().clear() end, { desc = "agentls: clear the change highlights" } },
  { "AgentlsJobs", function(o) require("agentls.jobs").command(o) end, { nargs = "*",
    desc = "agentls: background jobs (list; output {job}; kill {job})" } },
}

--- Defines the commands; later calls do nothing.
function M.create()
  if created then
    return
  end
  created = true
  for _, c in ipairs(COMMANDS) do
    vim.api.nvim_create_user_command(c[1], c[2], c[3])
  end
end

return M
