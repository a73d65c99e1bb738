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

local function show(lines, name, ft)
  local render = require("agentls.render")
  vim.cmd("botright new")
  local buf = render.scratch(lines, name, ft)
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
  show(lines, "agentls://tools")
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
      show(vim.split(text, "\n", { plain = true }), "agentls://call/" .. result.callId)
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

--- Defines the commands; later calls do nothing.
function M.create()
  if created then
    return
  end
  created = true
  local cmd = vim.api.nvim_create_user_command
  cmd("AgentlsTools", tools_cmd, { desc = "agentls: list the tools" })
  cmd("AgentlsCall", call_cmd, { nargs = "+", complete = complete_tool,
    desc = "agentls: run a tool, result in a scratch buffer" })
  cmd("AgentlsDiff", function() require("agentls.render").diff_last() end,
    { desc = "agentls: diff the last change against its old text" })
  cmd("AgentlsLog", function()
    show(vim.deepcopy(agentls().log_lines()), "agentls://log")
    vim.cmd("normal! G")
  end, { desc = "agentls: show the log" })
  cmd("AgentlsClear", function() agentls().clear() end, { desc = "agentls: clear the change highlights" })
  cmd("AgentlsJobs", function(o) require("agentls.jobs").command(o) end, { nargs = "*",
    desc = "agentls: background jobs (list; output {job}; kill {job})" })
end

return M
