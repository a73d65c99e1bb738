-- :AgentlsJobs — the background jobs of the workspace's agentls: a list in
-- a scratch buffer (<CR> or o: output, x: kill, r: refresh), output in a
-- scratch buffer, kill. Reads go through jobs/output, which leaves the
-- model's unread output unread. See :help agentls-jobs.
local M = {}

-- Latest status per job from jobs/changed (what the statusline may show).
M.known = {}

local function agentls()
  return require("agentls")
end

local function err_text(err)
  return tostring(err and err.message or err)
end

--- jobs/changed handler.
function M.on_changed(ev)
  M.known[ev.job] = { status = ev.status, command = ev.command, running = ev.status == "running" }
end

--- Running jobs known from jobs/changed (for a statusline).
function M.running()
  local n = 0
  for _, j in pairs(M.known) do
    if j.running then
      n = n + 1
    end
  end
  return n
end

--- The jobs (jobs/list): { {job, command, status, running, runtimeMs} }, or nil, err.
function M.list()
  local res, err = agentls().request_sync("jobs/list", vim.empty_dict())
  if not res then
    return nil, err
  end
  return res.jobs or {}, nil
end

--- jobs/output of job: {job, command, status, output, from, to, spillPath?}, or nil, err.
function M.output(job)
  return agentls().request_sync("jobs/output", { job = job })
end

--- Kills job (jobs/kill) and returns its final status, or nil, err.
function M.kill(job)
  local res, err = agentls().request_sync("jobs/kill", { job = job }, 15000)
  if not res then
    return nil, err
  end
  M.on_changed({ job = job, status = res.status, command = (M.known[job] or {}).command })
  return res.status, nil
end

local function scratch(lines, name)
  local render = require("agentls.render")
  vim.cmd("botright new")
  local buf = render.scratch(lines, name)
  vim.api.nvim_win_set_buf(0, buf)
  return buf
end

--- Opens job's output in a scratch buffer; returns the buffer.
function M.show_output(job)
  local o, err = M.output(job)
  if not o then
    vim.notify("agentls: jobs/output " .. tostring(job) .. ": " .. err_text(err), vim.log.levels.ERROR)
    return nil
  end
  local lines = { string.format("# %s: %s — %s", o.job, o.status, o.command), string.format("# lines %d-%d%s", o.from or 0, o.to or 0, o.spillPath and ("; all output: " .. o.spillPath) or "") }
  for _, l in ipairs(vim.split(o.output or "", "\n", { plain = true })) do
    table.insert(lines, l)
  end
  return scratch(lines, "agentls://jobs/" .. o.job)
end

local function list_lines(jobs)
  local lines = { "# agentls background jobs — <CR>/o: output, x: kill, r: refresh" }
  for _, j in ipairs(jobs) do
    table.insert(lines, string.format("%-8s %-24s %6ds  %s", j.job, j.status, math.floor((j.runtimeMs or 0) / 1000), j.command))
  end
  if #jobs == 0 then
    table.insert(lines, "(no jobs)")
  end
  return lines
end

local function job_at_cursor()
  return vim.api.nvim_get_current_line():match("^(job%-%d+)")
end

--- Fills buf with the job list.
local function refresh(buf)
  local jobs, err = M.list()
  if not jobs then
    return vim.notify("agentls: jobs/list failed: " .. err_text(err), vim.log.levels.ERROR)
  end
  vim.bo[buf].modifiable = true
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, list_lines(jobs))
  vim.bo[buf].modifiable = false
end

--- Opens the job list; returns its buffer.
function M.show_list()
  local jobs, err = M.list()
  if not jobs then
    vim.notify("agentls: jobs/list failed: " .. err_text(err), vim.log.levels.ERROR)
    return nil
  end
  local buf = scratch(list_lines(jobs), "agentls://jobs")
  local function map(lhs, f)
    vim.api.nvim_buf_set_keymap(buf, "n", lhs, "", { noremap = true, silent = true, callback = f })
  end
  local function output()
    local job = job_at_cursor()
    if job then
      M.show_output(job)
    end
  end
  map("<CR>", output)
  map("o", output)
  map("x", function()
    local job = job_at_cursor()
    if not job then
      return
    end
    local status, kerr = M.kill(job)
    vim.notify("agentls: " .. job .. ": " .. (status or ("kill failed: " .. err_text(kerr))))
    refresh(buf)
  end)
  map("r", function() refresh(buf) end)
  return buf
end

--- :AgentlsJobs [output {job} | kill {job}]
function M.command(o)
  local sub, job = (o.args or ""):match("^(%S+)%s+(%S+)$")
  if sub == "output" then
    return M.show_output(job)
  elseif sub == "kill" then
    local status, err = M.kill(job)
    vim.notify("agentls: " .. job .. ": " .. (status or ("kill failed: " .. err_text(err))))
    return
  elseif (o.args or "") ~= "" then
    return vim.notify("usage: :AgentlsJobs [output {job} | kill {job}]", vim.log.levels.ERROR)
  end
  M.show_list()
end

return M
