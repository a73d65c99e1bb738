-- :AgentlsJobs against the real agentls: the list shows a running job,
-- its output opens in a scratch buffer (without taking the model's unread
-- lines), and kill stops it.
local here = vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":h")
local t = dofile(here .. "/helpers.lua")

vim.opt.rtp:prepend(t.plugin)
vim.cmd("runtime plugin/agentls.lua")
vim.cmd("cd " .. vim.fn.fnameescape(t.ws))

local agentls = require("agentls")
local jobs = require("agentls.jobs")
vim.notify = function() end

local function buf_text(buf)
  return table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), "\n")
end

local job

t.test("a background job started by the model is in :AgentlsJobs", function()
  agentls.setup({ cmd = { t.bin }, root_dir = t.ws, mode = "bypass" })
  local res, err = agentls.call_sync("bash", { command = "echo job says hello; sleep 1.3; echo later; sleep 60", run_in_background = true }, 20000)
  t.ok(res and not res.isError, vim.inspect(err or res))
  job = res.details.job
  t.eq("job-1", job, "job id")
  t.wait(5000, function() return jobs.running() == 1 end, "jobs/changed counted the running job")
  vim.cmd("AgentlsJobs")
  local buf = vim.api.nvim_get_current_buf()
  t.ok(vim.api.nvim_buf_get_name(buf):find("agentls://jobs$") ~= nil, "list buffer " .. vim.api.nvim_buf_get_name(buf))
  local text = buf_text(buf)
  t.ok(text:find("job%-1%s+running") ~= nil, text)
  t.ok(text:find("echo job says hello", 1, true) ~= nil, text)
end)

t.test("output opens from the list and leaves the model's unread lines", function()
  t.wait(5000, function()
    local o = jobs.output(job)
    return o and o.output:find("later", 1, true)
  end, "the late line")
  vim.api.nvim_win_set_cursor(0, { 2, 0 })
  vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes("o", true, false, true), "x", false)
  local out = vim.api.nvim_get_current_buf()
  local text = buf_text(out)
  t.ok(text:find("job says hello", 1, true) and text:find("later", 1, true), text)
  t.ok(vim.api.nvim_buf_get_name(out):find("agentls://jobs/job%-1") ~= nil, vim.api.nvim_buf_get_name(out))
  local res = agentls.call_sync("bash_output", { job = job }, 10000)
  t.ok(res and agentls.text(res):find("^later\n") ~= nil, agentls.text(res))
end)

t.test(":AgentlsJobs kill stops the job", function()
  vim.cmd("AgentlsJobs kill " .. job)
  t.eq(0, jobs.running(), "running jobs after the kill")
  local list = assert(jobs.list())
  t.eq("killed by SIGTERM", list[1].status, "status")
  local res = agentls.call_sync("bash_output", { job = job }, 10000)
  t.ok(agentls.text(res):find("killed by SIGTERM", 1, true) ~= nil, agentls.text(res))
end)

t.stop_all()
t.finish()
