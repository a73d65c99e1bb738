-- Tiny test harness shared by the *_spec.lua scripts (run by run.sh).
-- Results go to stderr (print is invisible headless) and one line per test to
-- $AGENTLS_RESULTS, which run.sh sums; finish() quits with the verdict.
local M = { passed = 0, failed = 0, skipped = 0 }

local results = os.getenv("AGENTLS_RESULTS")

local function record(kind, name, msg)
  io.stderr:write(string.format("  %s %s%s\n", kind:upper(), name, msg and (": " .. msg) or ""))
  if results and kind ~= "skip" then
    local f = io.open(results, "a")
    if f then
      f:write(kind .. " " .. name .. "\n")
      f:close()
    end
  end
end

M.bin = os.getenv("AGENTLS_BIN") or "agentls"
M.ws = os.getenv("AGENTLS_WS") or vim.loop.cwd()
M.repo = os.getenv("AGENTLS_REPO") or vim.loop.cwd()
-- The plugin directory the specs load (run.sh: a copy of editors/nvim).
M.plugin = os.getenv("AGENTLS_PLUGIN") or (M.repo .. "/editors/nvim")

--- Runs fn as one named test; an error inside fails it.
function M.test(name, fn)
  local ok, err = xpcall(fn, debug.traceback)
  if ok then
    M.passed = M.passed + 1
    record("pass", name)
  elseif type(err) == "string" and err:match("^SKIP: ") then
    M.skipped = M.skipped + 1
    record("skip", name, (err:sub(7):match("^[^\n]*")))
  else
    M.failed = M.failed + 1
    record("fail", name, tostring(err))
  end
end

--- Marks the running test as skipped (not counted as passed or failed).
function M.skip(reason)
  error("SKIP: " .. reason, 0)
end

function M.eq(want, got, what)
  if not vim.deep_equal(want, got) then
    error(string.format("%s: want %s, got %s", what or "value", vim.inspect(want), vim.inspect(got)), 2)
  end
end

function M.ok(cond, what)
  if not cond then
    error(what or "assertion failed", 2)
  end
end

--- Waits until cond() is truthy or fails the test after ms.
function M.wait(ms, cond, what)
  if not vim.wait(ms, cond, 10) then
    error("timed out waiting for " .. (what or "condition"), 2)
  end
end

function M.path(rel)
  return M.ws .. "/" .. rel
end

function M.write_file(rel, text)
  local f = assert(io.open(M.path(rel), "w"))
  f:write(text)
  f:close()
end

function M.read_file(rel)
  local f = assert(io.open(M.path(rel), "r"))
  local s = f:read("*a")
  f:close()
  return s
end

--- Reports the totals and quits nvim: exit status 0 only when nothing failed.
function M.finish()
  io.stderr:write(string.format("  %d passed, %d failed, %d skipped\n", M.passed, M.failed, M.skipped))
  if M.failed > 0 then
    vim.cmd("cquit 1")
  else
    vim.cmd("qall!")
  end
end

-- Marks in buf as {row, kind, value}: kind is "hl" (line highlight), "sign"
-- or "virt_above"/"virt_below" (virtual lines), sorted by row then kind.
function M.marks(buf)
  local render = require("agentls.render")
  local out = {}
  for _, m in ipairs(vim.api.nvim_buf_get_extmarks(buf, render.ns, 0, -1, { details = true })) do
    local row, d = m[2], m[4]
    if d.hl_group then
      table.insert(out, { row, "hl", d.hl_group })
    end
    -- 0.7 does not report sign_text; the plugin records its sign mark's id.
    if d.sign_text or render.sign_ids[buf] == m[1] then
      table.insert(out, { row, "sign", vim.trim(d.sign_text or render.SIGN) })
    end
    if d.virt_lines then
      local texts = {}
      for _, vl in ipairs(d.virt_lines) do
        table.insert(texts, vl[1][1] .. "|" .. vl[1][2])
      end
      table.insert(out, { row, d.virt_lines_above and "virt_above" or "virt_below", table.concat(texts, ",") })
    end
  end
  table.sort(out, function(a, b)
    if a[1] ~= b[1] then return a[1] < b[1] end
    return a[2] < b[2]
  end)
  return out
end

-- The marks of buf grouped: {hl = {{row, group}}, sign = {rows}, virt =
-- {{row in the new text, text}}} (a virtual line above row r and one below
-- row r-1 sit at the same place, so both count as row r).
function M.grouped_marks(buf)
  local out = { hl = {}, sign = {}, virt = {} }
  for _, m in ipairs(M.marks(buf)) do
    local row, kind, val = m[1], m[2], m[3]
    if kind == "hl" then
      table.insert(out.hl, { row, val })
    elseif kind == "sign" then
      table.insert(out.sign, row)
    else
      local pos = kind == "virt_above" and row or row + 1
      for _, one in ipairs(vim.split(val, ",", { plain = true })) do
        table.insert(out.virt, { pos, one })
      end
    end
  end
  return out
end

-- Stops every agentls client and waits until they are gone.
function M.stop_all()
  require("agentls").stop()
  M.wait(3000, function() return #require("agentls.compat").get_clients("agentls") == 0 end, "clients to stop")
end

-- The plugin's running client for the workspace root (default t.ws), not
-- one still stopping: since 0.10 get_clients lists those until they exit.
function M.live_client(root)
  local id = require("agentls")._state.clients[root or M.ws]
  local c = id and vim.lsp.get_client_by_id(id)
  M.ok(c and not require("agentls.compat").is_stopped(c), "a live agentls client for " .. tostring(root or M.ws))
  return c
end

-- Whether :checkhealth output text has a line starting msg at level ("OK",
-- "WARNING" or "ERROR"): 0.7 writes "- ERROR: msg", 0.10 "- ERROR msg",
-- 0.12 "- ❌ ERROR msg" (a symbol before the level).
function M.health_has(text, level, msg)
  for line in (text .. "\n"):gmatch("([^\n]*)\n") do
    local rest = line:match("^%s*%-%s+[\128-\255]*%s*" .. level .. ":?%s+(.*)$")
    if rest and rest:sub(1, #msg) == msg then
      return true
    end
  end
  return false
end

-- The process id of client c's server: c.rpc.pid (0.7), else (0.10 does
-- not expose it) the one child process of this Neovim running the agentls
-- binary; nil when that is not one process.
function M.server_pid(c)
  if c and c.rpc and c.rpc.pid then
    return c.rpc.pid
  end
  local base = vim.fn.fnamemodify(M.bin, ":t")
  local found = {}
  for _, pid in ipairs(vim.api.nvim_get_proc_children(vim.fn.getpid())) do
    local info = vim.api.nvim_get_proc(pid)
    if info and info.name == base:sub(1, 15) then
      table.insert(found, pid)
    end
  end
  return #found == 1 and found[1] or nil
end

-- The lines of buf.
function M.lines(buf)
  return vim.api.nvim_buf_get_lines(buf, 0, -1, false)
end

return M
