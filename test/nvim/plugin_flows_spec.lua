-- Contract tests of the Neovim plugin against issue 8 and its own docs
-- (doc/agentls.txt, README.md): setup options, Lua API, commands, inline
-- rendering, confirmations, buffer sync, external changes, crash/restart and
-- "no Lua error in any flow". Each case names the doc promise it checks.
local t = dofile(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":h") .. "/helpers.lua")

vim.o.hidden = true
vim.opt.rtp:append(t.plugin)

-- Every vim.notify goes here (headless shows nothing); progress and errors
-- are asserted from it.
local flows_notes = {}
vim.notify = function(msg, level)
  table.insert(flows_notes, { msg = tostring(msg), level = level })
end

-- The picker: answers are taken from flows_answers in order. "__hold" keeps the
-- callback in flows_held (never answered), "__dismiss" answers nil.
local flows_asks, flows_answers, flows_held = {}, {}, nil
local function flows_label(item, opts)
  if opts and opts.format_item then return opts.format_item(item) end
  return tostring(item)
end
vim.ui.select = function(items, opts, on_choice)
  local labels = {}
  for _, it in ipairs(items) do table.insert(labels, flows_label(it, opts)) end
  table.insert(flows_asks, { labels = labels, prompt = opts and opts.prompt })
  local want = table.remove(flows_answers, 1)
  if want == nil or want == "__hold" then
    flows_held = function(label)
      for i, l in ipairs(labels) do
        if l == label then return on_choice(items[i], i) end
      end
    end
    return
  end
  if want == "__dismiss" then
    on_choice(nil, nil)
    return
  end
  for i, l in ipairs(labels) do
    if l == want then return on_choice(items[i], i) end
  end
  for i, l in ipairs(labels) do
    if l:sub(1, #want) == want then return on_choice(items[i], i) end
  end
  error("picker has no item " .. want .. ": " .. vim.inspect(labels))
end
local flows_inputs, flows_input_answers = {}, {}
vim.ui.input = function(opts, on_confirm)
  table.insert(flows_inputs, opts)
  on_confirm(table.remove(flows_input_answers, 1))
end
local function flows_reset_picker(answers)
  flows_asks, flows_answers, flows_held = {}, answers or {}, nil
end

local agentls = require("agentls")
local compat = require("agentls.compat")

local flows_base = {
  cmd = { t.bin },
  cmd_env = { AGENTLS_TEST_TOOLS = "1" },
  root_dir = t.ws,
  mode = "acceptEdits",
  sync_buffers = false,
  diagnostics = false,
}
-- setup(); with restart, also waits until every server it stopped is gone
-- and a new one is up (the stop and the autostart are asynchronous).
local function flows_setup(extra, restart)
  local before = {}
  for _, c in ipairs(compat.get_clients("agentls")) do before[c.id] = true end
  agentls.setup(vim.tbl_extend("force", flows_base, extra or {}))
  if not restart then return end
  t.wait(5000, function()
    local now = compat.get_clients("agentls")
    for _, c in ipairs(now) do
      if before[c.id] then return false end
    end
    return #now == 1 and now[1].initialized
  end, "the restarted server")
end

local function flows_clients()
  return compat.get_clients("agentls")
end
local function flows_client()
  t.wait(5000, function()
    local c = flows_clients()[1]
    return c and c.initialized
  end, "an initialized agentls client")
  return flows_clients()[1]
end

local function flows_call(tool, args, ms)
  local res, err = agentls.call_sync(tool, args, ms or 8000)
  t.ok(res, tool .. " failed: " .. vim.inspect(err))
  return res
end
local function flows_text(res)
  return agentls.text(res)
end
local function flows_ok(tool, args)
  local res = flows_call(tool, args)
  t.eq(false, res.isError, tool .. " isError (" .. flows_text(res) .. ")")
  return res
end
local function flows_open(rel)
  vim.cmd("edit " .. vim.fn.fnameescape(t.path(rel)))
  return vim.api.nvim_get_current_buf()
end
local function flows_fresh(rel, text)
  t.write_file(rel, text)
  local b = vim.fn.bufnr(t.path(rel))
  if b ~= -1 then vim.api.nvim_buf_delete(b, { force = true }) end
end
local FIVE = "one\ntwo\nthree\nfour\nfive\n"

local function flows_has_mark(marks, row, kind, value)
  for _, m in ipairs(marks) do
    if m[1] == row and m[2] == kind and (value == nil or m[3] == value) then return true end
  end
  return false
end
local function flows_buf_text(buf)
  return table.concat(t.lines(buf), "\n")
end
local function flows_find_buf(pred)
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(b) and pred(b) then return b end
  end
end

-- 1. Setup ------------------------------------------------------------------

t.test("setup starts one client for the workspace root", function()
  flows_setup()
  local c = flows_client()
  t.eq(1, #flows_clients(), "clients")
  t.eq(t.ws, c.config.root_dir, "root_dir")
end)

if #flows_clients() == 0 then
  t.finish()
  return
end

t.test("setup defines the documented commands", function()
  for _, name in ipairs({ "AgentlsTools", "AgentlsCall", "AgentlsDiff", "AgentlsLog", "AgentlsClear" }) do
    t.eq(2, vim.fn.exists(":" .. name), ":" .. name .. " exists")
  end
end)

t.test("setup writes help tags so :help agentls works", function()
  for _, tag in ipairs({ "agentls", "agentls.setup()", "agentls-sync", ":AgentlsCall", "agentls-confirm" }) do
    vim.cmd("help " .. vim.fn.escape(tag, " "))
    t.eq("help", vim.bo.buftype, "help buffer for " .. tag)
    vim.cmd("helpclose")
  end
end)

t.test("highlight groups link to the Diff groups", function()
  for group, link in pairs({ AgentlsAdd = "DiffAdd", AgentlsChange = "DiffChange", AgentlsDelete = "DiffDelete" }) do
    local out = vim.fn.execute("highlight " .. group)
    t.ok(out:find("links to " .. link, 1, true), group .. ": " .. out)
  end
  t.eq(1, vim.fn.hlexists("AgentlsSign"), "AgentlsSign defined")
end)

t.test("setup with the same options restarts nothing", function()
  local id = flows_client().id
  flows_setup()
  vim.wait(300)
  t.eq(1, #flows_clients(), "clients")
  t.eq(id, flows_clients()[1].id, "same client")
end)

-- 2. Lua API ----------------------------------------------------------------

t.test("tools() mcp default, openai and anthropic shapes", function()
  local mcp = agentls.tools()
  local names = {}
  for _, tl in ipairs(mcp) do names[tl.name] = tl end
  for _, n in ipairs({ "read", "ls", "grep", "find", "edit", "write", "bash" }) do
    t.ok(names[n], "tool " .. n .. " missing")
  end
  t.eq("object", names.read.inputSchema.type, "mcp inputSchema")
  local oa = agentls.tools({ format = "openai" })
  t.eq("function", oa[1].type, "openai type")
  t.ok(oa[1]["function"].name and oa[1]["function"].description and oa[1]["function"].parameters, "openai function")
  local an = agentls.tools({ format = "anthropic" })
  t.ok(an[1].name and an[1].description and an[1].input_schema, "anthropic shape")
  -- The README's agent loop passes this straight into a JSON request body.
  t.ok(pcall(vim.json.encode, oa), "openai list encodes as JSON")
end)

t.test("tools(opts, callback) is asynchronous", function()
  local got
  agentls.tools({ format = "openai" }, function(a, b)
    got = type(a) == "table" and a or b
    if type(a) == "table" and a.tools == nil and a[1] == nil and b then got = b end
  end)
  t.wait(5000, function() return got ~= nil end, "tools callback")
  t.ok(#got > 0 and got[1].type == "function", "callback list: " .. vim.inspect(got):sub(1, 200))
end)

t.test("call read returns a callId and numbered text", function()
  local done, err, res
  local id = agentls.call("read", { path = "hello.txt" }, function(e, r) done, err, res = true, e, r end)
  t.ok(id ~= nil, "call returned no callId")
  t.wait(5000, function() return done end, "read callback")
  t.eq(nil, err, "err")
  t.eq(id, res.callId, "callId echoed")
  t.eq(false, res.isError, "isError")
  local text = agentls.text(res)
  t.ok(text:find("1→alpha", 1, true) and text:find("3→gamma", 1, true), "numbered text: " .. text)
end)

t.test("empty {} args are sent as an object everywhere", function()
  local res = flows_call("ls", {})
  t.eq(false, res.isError, "ls {}: " .. flows_text(res))
  t.ok(flows_text(res):find("hello.txt", 1, true), "ls lists hello.txt: " .. flows_text(res))
  t.ok(#agentls.tools({}) > 0, "tools({})")
end)

t.test("tool failure is an isError result, not an error", function()
  local res, err = agentls.call_sync("read", { path = "flows-missing.txt" }, 5000)
  t.eq(nil, err, "err")
  t.eq(true, res.isError, "isError")
end)

t.test("cancel() gives the callback code -32800", function()
  local done, err
  local id = agentls.call("test_block", { seconds = 30 }, function(e) done, err = true, e end)
  vim.wait(200)
  agentls.cancel(id)
  t.wait(3000, function() return done end, "cancelled callback")
  t.eq(-32800, err and err.code, "error code: " .. vim.inspect(err))
end)

t.test("call_sync timeout returns nil and an error and cancels", function()
  local start = vim.loop.hrtime()
  local res, err = agentls.call_sync("test_block", { seconds = 30 }, 500)
  local ms = (vim.loop.hrtime() - start) / 1e6
  t.eq(nil, res, "result")
  t.ok(err ~= nil, "error")
  t.ok(ms < 3000, "returned after " .. ms .. " ms")
  flows_ok("read", { path = "hello.txt" })
end)

t.test("timeout_ms is call_sync's default wait", function()
  flows_setup({ timeout_ms = 700 })
  local start = vim.loop.hrtime()
  local res, err = agentls.call_sync("test_block", { seconds = 30 })
  local ms = (vim.loop.hrtime() - start) / 1e6
  t.eq(nil, res, "result")
  t.ok(err ~= nil, "error")
  t.ok(ms < 4000, "returned after " .. ms .. " ms")
  flows_setup({ timeout_ms = 660000 })
end)

t.test("on_details gets details and params for an edit", function()
  local seen = {}
  flows_setup({ on_details = function(d, p) table.insert(seen, { d = d, p = p }) end })
  flows_fresh("flows_det.txt", FIVE)
  flows_ok("read", { path = "flows_det.txt" })
  local res = flows_ok("edit", { path = "flows_det.txt", edits = { { oldText = "three", newText = "THREE" } } })
  t.wait(2000, function() return #seen > 0 end, "on_details")
  t.eq("edit", seen[#seen].d.kind, "kind")
  t.eq(res.callId, seen[#seen].p.callId, "params.callId")
  t.eq(vim.uri_from_fname(t.path("flows_det.txt")), seen[#seen].d.uri, "uri")
  flows_setup({ on_details = function() end })
end)

-- 3. Commands ---------------------------------------------------------------

t.test(":AgentlsTools lists the tools in a scratch buffer", function()
  vim.cmd("AgentlsTools")
  local buf
  t.wait(5000, function()
    buf = flows_find_buf(function(b)
      return vim.bo[b].buftype ~= "" and vim.bo[b].buftype ~= "help" and flows_buf_text(b):find("edit", 1, true)
        and flows_buf_text(b):find("grep", 1, true)
    end)
    return buf
  end, "tools buffer")
  t.ok(vim.bo[buf].buftype == "nofile", "scratch buftype: " .. vim.bo[buf].buftype)
end)

t.test(":AgentlsCall read opens the result in a scratch buffer", function()
  vim.cmd('AgentlsCall read {"path": "hello.txt"}')
  local buf
  t.wait(5000, function()
    buf = flows_find_buf(function(b) return flows_buf_text(b):find("2→beta", 1, true) end)
    return buf
  end, "result buffer")
  t.eq("nofile", vim.bo[buf].buftype, "scratch")
end)

t.test(":AgentlsCall without json runs with {}", function()
  vim.cmd("AgentlsCall ls")
  t.wait(5000, function()
    return flows_find_buf(function(b)
      local s = flows_buf_text(b)
      return vim.bo[b].buftype == "nofile" and s:find("lines.txt", 1, true) and s:find("src/", 1, true)
    end)
  end, "ls result buffer")
end)

t.test(":AgentlsLog shows the calls", function()
  flows_ok("read", { path = "lines.txt" })
  vim.cmd("AgentlsLog")
  t.wait(3000, function()
    return flows_find_buf(function(b)
      return vim.bo[b].buftype ~= "" and flows_buf_text(b):find("%] read")
    end)
  end, "log buffer with the read call")
end)

t.test(":checkhealth agentls reports OK without errors", function()
  vim.cmd("checkhealth agentls")
  local text = flows_buf_text(vim.api.nvim_get_current_buf())
  t.ok(text:find("OK", 1, true), "no OK: " .. text)
  t.ok(not text:find("ERROR", 1, true), "ERROR in health: " .. text)
  t.ok(text:find("rg", 1, true) or text:find("ripgrep", 1, true), "ripgrep reported: " .. text)
  t.ok(text:find("inotify", 1, true) or text:find("polling", 1, true) or text:find("fsevents", 1, true),
    "watcher mode reported: " .. text)
  if #vim.api.nvim_list_tabpages() > 1 then vim.cmd("tabclose") end
end)

-- 4. Inline changes (sync_buffers = false) ----------------------------------

t.test("render: changed line is AgentlsChange, sign on it, buffer reloaded", function()
  flows_fresh("flows_chg.txt", FIVE)
  local buf = flows_open("flows_chg.txt")
  flows_ok("read", { path = "flows_chg.txt" })
  flows_ok("edit", { path = "flows_chg.txt", edits = { { oldText = "three", newText = "THREE" } } })
  t.wait(3000, function() return t.lines(buf)[3] == "THREE" end, "buffer reloaded")
  local m = t.marks(buf)
  t.ok(flows_has_mark(m, 2, "hl", "AgentlsChange"), "AgentlsChange on row 2: " .. vim.inspect(m))
  t.ok(flows_has_mark(m, 2, "sign"), "sign on row 2: " .. vim.inspect(m))
  for _, x in ipairs(m) do
    t.ok(x[1] == 2, "mark off the changed line: " .. vim.inspect(m))
  end
end)

t.test("render: removed line is a virtual line in AgentlsDelete", function()
  flows_fresh("flows_del.txt", FIVE)
  local buf = flows_open("flows_del.txt")
  flows_ok("read", { path = "flows_del.txt" })
  flows_ok("edit", { path = "flows_del.txt", edits = { { oldText = "two\n", newText = "" } } })
  t.wait(3000, function() return #t.lines(buf) == 4 end, "buffer reloaded")
  t.eq({ "one", "three", "four", "five" }, t.lines(buf), "lines")
  local m = t.marks(buf)
  t.ok(flows_has_mark(m, 1, "virt_above", "two|AgentlsDelete") or flows_has_mark(m, 0, "virt_below", "two|AgentlsDelete"),
    "virtual line 'two' between one and three: " .. vim.inspect(m))
  t.ok(flows_has_mark(m, 1, "sign") or flows_has_mark(m, 0, "sign"), "sign at the deletion: " .. vim.inspect(m))
end)

t.test("render: inserted line is AgentlsAdd", function()
  flows_fresh("flows_add.txt", FIVE)
  local buf = flows_open("flows_add.txt")
  flows_ok("read", { path = "flows_add.txt" })
  flows_ok("edit", { path = "flows_add.txt", edits = { { oldText = "four\n", newText = "four\nnew\n" } } })
  t.wait(3000, function() return t.lines(buf)[5] == "new" end, "buffer reloaded")
  local m = t.marks(buf)
  t.ok(flows_has_mark(m, 4, "hl", "AgentlsAdd"), "AgentlsAdd on row 4: " .. vim.inspect(m))
  t.ok(flows_has_mark(m, 4, "sign"), "sign on row 4: " .. vim.inspect(m))
  t.ok(not flows_has_mark(m, 3, "hl"), "row 3 (unchanged 'four') marked: " .. vim.inspect(m))
end)

t.test("render: write of a loaded file reloads and marks it", function()
  flows_fresh("flows_wr.txt", FIVE)
  local buf = flows_open("flows_wr.txt")
  flows_ok("read", { path = "flows_wr.txt" })
  flows_ok("write", { path = "flows_wr.txt", content = "one\ntwo\nTRES\nfour\nfive\n" })
  t.wait(3000, function() return t.lines(buf)[3] == "TRES" end, "buffer reloaded")
  local m = t.marks(buf)
  t.ok(flows_has_mark(m, 2, "hl"), "row 2 marked: " .. vim.inspect(m))
  t.ok(not flows_has_mark(m, 0, "hl") and not flows_has_mark(m, 4, "hl"), "unchanged rows marked: " .. vim.inspect(m))
end)

t.test("render: editing a marked line removes its marks", function()
  flows_fresh("flows_touch.txt", FIVE)
  local buf = flows_open("flows_touch.txt")
  flows_ok("read", { path = "flows_touch.txt" })
  flows_ok("edit", { path = "flows_touch.txt", edits = { { oldText = "two", newText = "TWO" }, { oldText = "four", newText = "FOUR" } } })
  t.wait(3000, function() return t.lines(buf)[4] == "FOUR" end, "buffer reloaded")
  t.ok(flows_has_mark(t.marks(buf), 1, "hl") and flows_has_mark(t.marks(buf), 3, "hl"), "both marked: " .. vim.inspect(t.marks(buf)))
  vim.api.nvim_buf_set_lines(buf, 3, 4, false, { "user typed" })
  t.wait(1000, function() return not flows_has_mark(t.marks(buf), 3, "hl") end, "row 3 hl to go: " .. vim.inspect(t.marks(buf)))
  t.ok(flows_has_mark(t.marks(buf), 1, "hl"), "row 1 keeps its mark: " .. vim.inspect(t.marks(buf)))
  vim.cmd("silent! write")
end)

t.test("render: undo after the reload brings the old text back", function()
  flows_fresh("flows_undo.txt", FIVE)
  local buf = flows_open("flows_undo.txt")
  flows_ok("read", { path = "flows_undo.txt" })
  flows_ok("edit", { path = "flows_undo.txt", edits = { { oldText = "five", newText = "FIVE" } } })
  t.wait(3000, function() return t.lines(buf)[5] == "FIVE" end, "buffer reloaded")
  vim.api.nvim_set_current_buf(buf)
  vim.cmd("silent undo")
  t.eq({ "one", "two", "three", "four", "five" }, t.lines(buf), "after undo")
end)

t.test(":AgentlsClear removes the marks from every buffer", function()
  local marked = {}
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(b) and #t.marks(b) > 0 then table.insert(marked, b) end
  end
  t.ok(#marked >= 2, "expected at least two marked buffers, got " .. #marked)
  vim.cmd("AgentlsClear")
  for _, b in ipairs(marked) do
    t.eq({}, t.marks(b), "marks in " .. vim.api.nvim_buf_get_name(b))
  end
end)

t.test(":AgentlsDiff opens a diff tab of the last change", function()
  flows_fresh("flows_diff.txt", FIVE)
  flows_open("flows_diff.txt")
  flows_ok("read", { path = "flows_diff.txt" })
  flows_ok("edit", { path = "flows_diff.txt", edits = { { oldText = "two", newText = "deux" } } })
  local tabs = #vim.api.nvim_list_tabpages()
  vim.cmd("AgentlsDiff")
  t.eq(tabs + 1, #vim.api.nvim_list_tabpages(), "a new tab")
  local wins = vim.api.nvim_tabpage_list_wins(0)
  t.eq(2, #wins, "two windows")
  local old, file
  for _, w in ipairs(wins) do
    t.ok(vim.wo[w].diff, "window not in diff mode")
    local b = vim.api.nvim_win_get_buf(w)
    if vim.api.nvim_buf_get_name(b) == t.path("flows_diff.txt") then file = b else old = b end
  end
  t.ok(file, "the file is one side")
  t.ok(old, "the old text is the other side")
  t.eq({ "one", "two", "three", "four", "five" }, t.lines(old), "old side")
  t.eq("deux", t.lines(file)[2], "file side")
  vim.cmd("tabclose")
end)

t.test("render=false: no marks", function()
  flows_setup({ render = false })
  flows_fresh("flows_norender.txt", FIVE)
  local buf = flows_open("flows_norender.txt")
  flows_ok("read", { path = "flows_norender.txt" })
  flows_ok("edit", { path = "flows_norender.txt", edits = { { oldText = "two", newText = "2" } } })
  vim.wait(500)
  t.eq({}, t.marks(buf), "marks")
  flows_setup({ render = true })
end)

t.test("sync off: a buffer with unsaved changes is left alone", function()
  flows_fresh("flows_dirty.txt", FIVE)
  local buf = flows_open("flows_dirty.txt")
  flows_ok("read", { path = "flows_dirty.txt" })
  vim.api.nvim_buf_set_lines(buf, 0, 1, false, { "USER" })
  flows_ok("edit", { path = "flows_dirty.txt", edits = { { oldText = "four", newText = "AGENT" } } })
  t.eq("one\ntwo\nthree\nAGENT\nfive\n", t.read_file("flows_dirty.txt"), "disk")
  vim.wait(500)
  t.eq({ "USER", "two", "three", "four", "five" }, t.lines(buf), "buffer keeps the user's text")
  t.eq(true, vim.bo[buf].modified, "still modified")
  vim.api.nvim_buf_delete(buf, { force = true })
end)

t.test("externalChange: an outside write to a read file reloads its buffer", function()
  flows_fresh("flows_ext.txt", "old\n")
  local buf = flows_open("flows_ext.txt")
  flows_ok("read", { path = "flows_ext.txt" })
  vim.wait(200)
  t.write_file("flows_ext.txt", "changed outside\n")
  t.wait(4000, function() return t.lines(buf)[1] == "changed outside" end, "reload after the external write")
end)

-- 5. Progress ---------------------------------------------------------------

t.test("progress: latest line is notified, throttled per call", function()
  flows_setup({ progress = true, progress_interval_ms = 60000 })
  flows_notes = {}
  flows_ok("bash", { command = "for i in 1 2 3 4 5 6; do echo line$i; sleep 0.15; done" })
  local prog = {}
  for _, n in ipairs(flows_notes) do
    if n.msg:find("line%d") then table.insert(prog, n.msg) end
  end
  t.ok(#prog >= 1, "no progress notification: " .. vim.inspect(flows_notes))
  t.eq(1, #prog, "at most one per progress_interval_ms: " .. vim.inspect(prog))
end)

t.test("progress=false: no progress notifications", function()
  flows_setup({ progress = false })
  flows_notes = {}
  flows_ok("bash", { command = "for i in 1 2 3 4; do echo pline$i; sleep 0.15; done" })
  for _, n in ipairs(flows_notes) do
    t.ok(not n.msg:find("pline"), "notified: " .. n.msg)
  end
  flows_setup({ progress = true, progress_interval_ms = 1000 })
end)

-- 6. Options that restart the server -----------------------------------------

t.test("setup with another mode restarts the server", function()
  local id = flows_client().id
  flows_setup({ mode = "readOnly" }, true)
  local c = flows_client()
  t.ok(c.id ~= id, "same client after a mode change")
  t.eq(nil, vim.lsp.get_client_by_id(id), "old client still listed")
  t.eq(1, #flows_clients(), "clients")
  flows_fresh("flows_ro.txt", FIVE)
  flows_ok("read", { path = "flows_ro.txt" })
  local res = flows_call("edit", { path = "flows_ro.txt", edits = { { oldText = "one", newText = "1" } } })
  t.eq(true, res.isError, "readOnly edit isError")
  t.eq(FIVE, t.read_file("flows_ro.txt"), "file")
end)

t.test("a restart by setup() ends a running call with an error", function()
  local box = {}
  agentls.call("test_block", { seconds = 30 }, function(e, r) box.done, box.err, box.res = true, e, r end)
  vim.wait(200)
  flows_setup({ mode = "bypass" }, true)
  t.wait(3000, function() return box.done end, "callback of the call the restart ended")
  t.ok(box.err ~= nil, "no error: " .. vim.inspect(box.res))
end)

t.test("limits option reaches the server", function()
  flows_setup({ mode = "acceptEdits", limits = { readLines = 4 } }, true)
  local text = flows_text(flows_ok("read", { path = "lines.txt" }))
  t.ok(text:find("2→two", 1, true), text)
  t.ok(not text:find("3→three", 1, true), "readLines=4 (header and notice included) not enforced: " .. text)
end)

t.test("permissions deny rule reaches the server", function()
  flows_setup({ mode = "acceptEdits", permissions = { allow = {}, ask = {}, deny = { "Read(hello.txt)" } } }, true)
  local res = flows_call("read", { path = "hello.txt" })
  t.eq(true, res.isError, "denied read isError")
  t.ok(not flows_text(res):find("alpha", 1, true), "content leaked")
end)

t.test("autostart=false starts on first use", function()
  t.stop_all()
  agentls.setup(vim.tbl_extend("force", flows_base, { autostart = false, mode = "bypass" }))
  vim.wait(300)
  t.eq(0, #flows_clients(), "clients before first use")
  flows_ok("read", { path = "hello.txt" })
  t.eq(1, #flows_clients(), "clients after first use")
end)

-- 7. Confirmations (mode = default) -----------------------------------------

local function flows_edit_async(rel, old, new)
  local box = {}
  box.id = agentls.call("edit", { path = rel, edits = { { oldText = old, newText = new } } }, function(e, r)
    box.done, box.err, box.res = true, e, r
  end)
  return box
end

t.test("confirm: the picker offers the documented choices; Deny leaves the file", function()
  flows_setup({ mode = "default" }, true)
  flows_fresh("flows_c1.txt", FIVE)
  flows_ok("read", { path = "flows_c1.txt" })
  flows_reset_picker({ "Deny" })
  local res = flows_call("edit", { path = "flows_c1.txt", edits = { { oldText = "one", newText = "1" } } })
  t.eq(1, #flows_asks, "asked once")
  local labels = flows_asks[1].labels
  for _, want in ipairs({ "Allow once", "Always allow", "Deny", "Show change" }) do
    t.ok(vim.tbl_contains(labels, want), want .. " missing: " .. vim.inspect(labels))
  end
  local dwm = false
  for _, l in ipairs(labels) do if l:find("^Deny with message") then dwm = true end end
  t.ok(dwm, "Deny with message… missing: " .. vim.inspect(labels))
  t.eq(true, res.isError, "isError")
  t.ok(flows_text(res):find("denied by the user", 1, true), flows_text(res))
  t.eq(FIVE, t.read_file("flows_c1.txt"), "file unchanged")
end)

t.test("confirm: Allow once runs the call and asks again next time", function()
  flows_fresh("flows_c2.txt", FIVE)
  flows_ok("read", { path = "flows_c2.txt" })
  flows_reset_picker({ "Allow once", "Allow once" })
  flows_ok("edit", { path = "flows_c2.txt", edits = { { oldText = "one", newText = "1" } } })
  flows_ok("edit", { path = "flows_c2.txt", edits = { { oldText = "two", newText = "2" } } })
  t.eq(2, #flows_asks, "asked twice")
  t.eq("1\n2\nthree\nfour\nfive\n", t.read_file("flows_c2.txt"), "file")
end)

t.test("confirm: Always allow covers the same file, not another", function()
  flows_fresh("flows_c3.txt", FIVE)
  flows_fresh("flows_c3b.txt", FIVE)
  flows_ok("read", { path = "flows_c3.txt" })
  flows_ok("read", { path = "flows_c3b.txt" })
  flows_reset_picker({ "Always allow", "Deny" })
  flows_ok("edit", { path = "flows_c3.txt", edits = { { oldText = "one", newText = "1" } } })
  flows_ok("edit", { path = "flows_c3.txt", edits = { { oldText = "two", newText = "2" } } })
  t.eq(1, #flows_asks, "asked once for the same file")
  local res = flows_call("edit", { path = "flows_c3b.txt", edits = { { oldText = "one", newText = "1" } } })
  t.eq(2, #flows_asks, "another file asks")
  t.eq(true, res.isError, "denied")
end)

t.test("confirm: Deny with message sends the message", function()
  flows_fresh("flows_c4.txt", FIVE)
  flows_ok("read", { path = "flows_c4.txt" })
  flows_reset_picker({ "Deny with message" })
  flows_input_answers = { "use the other file" }
  local res = flows_call("edit", { path = "flows_c4.txt", edits = { { oldText = "one", newText = "1" } } })
  t.eq(true, res.isError, "isError")
  t.ok(flows_text(res):find("denied by the user: use the other file", 1, true), flows_text(res))
  t.eq(FIVE, t.read_file("flows_c4.txt"), "file")
end)

t.test("confirm: dismissing the message input gets back to the question", function()
  flows_fresh("flows_c5.txt", FIVE)
  flows_ok("read", { path = "flows_c5.txt" })
  flows_reset_picker({ "Deny with message", "Allow once" })
  flows_input_answers = {}
  flows_ok("edit", { path = "flows_c5.txt", edits = { { oldText = "one", newText = "1" } } })
  t.eq(2, #flows_asks, "asked again after the dismissed input")
  t.eq("1\ntwo\nthree\nfour\nfive\n", t.read_file("flows_c5.txt"), "file")
end)

t.test("confirm: Show change opens the proposed diff and asks again", function()
  flows_fresh("flows_c6.txt", FIVE)
  flows_ok("read", { path = "flows_c6.txt" })
  local tabs = #vim.api.nvim_list_tabpages()
  local diffwins = 0
  flows_reset_picker({ "Show change", "Deny" })
  local orig = vim.ui.select
  vim.ui.select = function(items, opts, cb)
    if #flows_asks == 1 then
      for _, w in ipairs(vim.api.nvim_list_wins()) do
        if vim.wo[w].diff then diffwins = diffwins + 1 end
      end
    end
    return orig(items, opts, cb)
  end
  local ok, res = pcall(flows_call, "edit", { path = "flows_c6.txt", edits = { { oldText = "three", newText = "3" } } })
  vim.ui.select = orig
  t.ok(ok, tostring(res))
  t.eq(2, #flows_asks, "asked again")
  t.ok(diffwins >= 2, "no diff windows open when asked again")
  t.eq(FIVE, t.read_file("flows_c6.txt"), "file after Deny")
  while #vim.api.nvim_list_tabpages() > tabs do vim.cmd("tabclose") end
end)

t.test("confirm: a dismissed picker does not run the call", function()
  flows_fresh("flows_c7.txt", FIVE)
  flows_ok("read", { path = "flows_c7.txt" })
  flows_reset_picker({ "__dismiss" })
  local res, err = agentls.call_sync("edit", { path = "flows_c7.txt", edits = { { oldText = "one", newText = "1" } } }, 5000)
  t.ok(res or err, "no answer")
  t.ok(err or res.isError, "dismissed picker ran the call: " .. vim.inspect(res))
  t.eq(FIVE, t.read_file("flows_c7.txt"), "file")
end)

t.test("confirm: call_sync timeout ends the question; a late choice is ignored", function()
  flows_fresh("flows_c8.txt", FIVE)
  flows_ok("read", { path = "flows_c8.txt" })
  flows_reset_picker({ "__hold" })
  local start = vim.loop.hrtime()
  local res, err = agentls.call_sync("edit", { path = "flows_c8.txt", edits = { { oldText = "one", newText = "1" } } }, 1000)
  local ms = (vim.loop.hrtime() - start) / 1e6
  t.eq(nil, res, "result")
  t.ok(err, "error")
  t.ok(ms < 4000, "returned after " .. ms .. " ms")
  t.ok(flows_held, "picker was shown")
  flows_held("Allow once")
  vim.wait(500)
  t.eq(FIVE, t.read_file("flows_c8.txt"), "file after a late Allow")
  flows_reset_picker({ "Allow once" })
  flows_ok("edit", { path = "flows_c8.txt", edits = { { oldText = "two", newText = "2" } } })
  t.eq("one\n2\nthree\nfour\nfive\n", t.read_file("flows_c8.txt"), "next call runs")
end)

t.test("confirm: cancel() ends the question with -32800", function()
  flows_fresh("flows_c9.txt", FIVE)
  flows_ok("read", { path = "flows_c9.txt" })
  flows_reset_picker({ "__hold" })
  local box
  vim.defer_fn(function() agentls.cancel(box.id) end, 400)
  box = flows_edit_async("flows_c9.txt", "one", "1")
  t.wait(4000, function() return box.done end, "callback after cancel")
  t.eq(-32800, box.err and box.err.code, "err: " .. vim.inspect(box.err))
  if flows_held then flows_held("Allow once") end
  vim.wait(300)
  t.eq(FIVE, t.read_file("flows_c9.txt"), "file")
end)

t.test("confirm: Show change is offered for edits only, not bash", function()
  flows_reset_picker({ "Deny" })
  flows_call("bash", { command = "touch flows_bash_x && echo x" })
  t.eq(1, #flows_asks, "asked")
  t.ok(not vim.tbl_contains(flows_asks[1].labels, "Show change"), "Show change for bash: " .. vim.inspect(flows_asks[1].labels))
end)

t.test("confirm: bash Always allow covers the same command line only", function()
  flows_reset_picker({ "Always allow", "Deny" })
  local res = flows_ok("bash", { command = "touch flows_bash_marker && echo made" })
  t.eq(1, #flows_asks, "asked")
  t.ok(flows_text(res):find("made", 1, true), flows_text(res))
  flows_ok("bash", { command = "touch flows_bash_marker && echo made" })
  t.eq(1, #flows_asks, "same command asked again")
  local r2 = flows_call("bash", { command = "touch flows_bash_other && echo other" })
  t.eq(2, #flows_asks, "another command asks")
  t.eq(true, r2.isError, "denied")
end)

t.test("permissions allow rule skips the question", function()
  flows_setup({ mode = "default", permissions = { allow = { "Edit(flows_allowed.txt)" }, ask = {}, deny = {} } }, true)
  flows_fresh("flows_allowed.txt", FIVE)
  flows_ok("read", { path = "flows_allowed.txt" })
  flows_reset_picker({ "Deny" })
  flows_ok("edit", { path = "flows_allowed.txt", edits = { { oldText = "one", newText = "1" } } })
  t.eq(0, #flows_asks, "asked despite the allow rule")
end)

-- 8. Crash and restart ------------------------------------------------------

t.test("crash: a running call gets -32603 'agentls exited' at once; next call restarts", function()
  flows_setup({ mode = "acceptEdits", permissions = { allow = {}, ask = {}, deny = {} } }, true)
  local c = flows_client()
  local pid = vim.trim(vim.fn.system({ "pgrep", "-n", "-P", tostring(vim.fn.getpid()), "-f", t.bin }))
  pid = pid:match("^(%d+)")
  t.ok(pid, "server pid not found")
  local box = {}
  agentls.call("test_block", { seconds = 30 }, function(e, r) box.done, box.err, box.res = true, e, r end)
  vim.wait(200)
  local start = vim.loop.hrtime()
  vim.loop.kill(tonumber(pid), 9)
  t.wait(3000, function() return box.done end, "callback after the crash")
  local ms = (vim.loop.hrtime() - start) / 1e6
  t.ok(ms < 2000, "callback after " .. ms .. " ms")
  t.eq(-32603, box.err and box.err.code, "err: " .. vim.inspect(box.err))
  t.ok(box.err.message:find("^agentls exited %(code"), "message: " .. tostring(box.err.message))
  t.ok(box.err.message:find("signal 9", 1, true), "signal in message: " .. tostring(box.err.message))
  flows_ok("read", { path = "hello.txt" })
  t.ok(flows_client().id ~= c.id, "a new client")
end)

-- 9. Buffer sync (sync_buffers = true) --------------------------------------

t.test("sync: read returns the buffer's unsaved text", function()
  flows_setup({ mode = "acceptEdits", sync_buffers = true }, true)
  flows_client()
  flows_fresh("flows_s1.txt", FIVE)
  local buf = flows_open("flows_s1.txt")
  vim.api.nvim_buf_set_lines(buf, 1, 2, false, { "UNSAVED" })
  local text
  t.wait(3000, function()
    text = flows_text(flows_ok("read", { path = "flows_s1.txt" }))
    return text:find("2→UNSAVED", 1, true)
  end, "read sees the unsaved line")
  vim.api.nvim_buf_delete(buf, { force = true })
end)

t.test("sync: edit of a clean buffer changes it, saves it, and marks it", function()
  flows_fresh("flows_s2.txt", FIVE)
  local buf = flows_open("flows_s2.txt")
  vim.wait(200)
  flows_ok("read", { path = "flows_s2.txt" })
  flows_ok("edit", { path = "flows_s2.txt", edits = { { oldText = "three", newText = "THREE" } } })
  t.eq("THREE", t.lines(buf)[3], "buffer")
  t.eq(false, vim.bo[buf].modified, "saved")
  t.eq("one\ntwo\nTHREE\nfour\nfive\n", t.read_file("flows_s2.txt"), "disk")
  t.ok(flows_has_mark(t.marks(buf), 2, "hl", "AgentlsChange"), "mark: " .. vim.inspect(t.marks(buf)))
end)

t.test("sync: edit of a dirty buffer merges and keeps the user's changes unsaved", function()
  flows_fresh("flows_s3.txt", FIVE)
  local buf = flows_open("flows_s3.txt")
  vim.wait(200)
  flows_ok("read", { path = "flows_s3.txt" })
  vim.api.nvim_buf_set_lines(buf, 0, 1, false, { "USER" })
  local text
  t.wait(3000, function()
    text = flows_text(flows_ok("read", { path = "flows_s3.txt" }))
    return text:find("1→USER", 1, true)
  end, "server sees the user's change")
  flows_ok("edit", { path = "flows_s3.txt", edits = { { oldText = "four", newText = "AGENT" } } })
  t.eq({ "USER", "two", "three", "AGENT", "five" }, t.lines(buf), "buffer keeps both")
  t.eq(true, vim.bo[buf].modified, "still unsaved")
  t.eq(FIVE, t.read_file("flows_s3.txt"), "disk unchanged until saved")
  t.ok(flows_has_mark(t.marks(buf), 3, "hl"), "marked: " .. vim.inspect(t.marks(buf)))
  vim.api.nvim_buf_delete(buf, { force = true })
end)

t.test("sync: write of a clean open buffer changes it and saves", function()
  flows_fresh("flows_s4.txt", FIVE)
  local buf = flows_open("flows_s4.txt")
  vim.wait(200)
  flows_ok("read", { path = "flows_s4.txt" })
  flows_ok("write", { path = "flows_s4.txt", content = "x\ny\n" })
  t.eq({ "x", "y" }, t.lines(buf), "buffer")
  t.eq(false, vim.bo[buf].modified, "saved")
  t.eq("x\ny\n", t.read_file("flows_s4.txt"), "disk")
end)

-- 10. Diagnostics -----------------------------------------------------------

local function flows_diag_edit(rel)
  flows_fresh(rel, FIVE)
  local buf = flows_open(rel)
  local ns = vim.api.nvim_create_namespace("a8diag")
  local old = { lnum = 0, col = 0, message = "a8 old problem", severity = vim.diagnostic.severity.ERROR, source = "a8" }
  vim.diagnostic.set(ns, buf, { old })
  flows_ok("read", { path = rel })
  -- The linter reacts to the reload of the changed file.
  local fired = false
  vim.api.nvim_create_autocmd({ "BufReadPost", "FileChangedShellPost", "TextChanged" }, {
    buffer = buf,
    callback = function()
      if fired then return end
      fired = true
      vim.defer_fn(function()
        vim.diagnostic.set(ns, buf, { old, { lnum = 2, col = 0, message = "a8 fresh problem",
          severity = vim.diagnostic.severity.ERROR, source = "a8" } })
      end, 20)
    end,
  })
  local res = flows_ok("edit", { path = rel, edits = { { oldText = "three", newText = "x = =" } } })
  return flows_text(res), fired
end

t.test("diagnostics: new problems after an edit reach the model", function()
  flows_setup({ mode = "acceptEdits", sync_buffers = false, diagnostics = true }, true)
  local text, fired = flows_diag_edit("flows_dg1.txt")
  t.ok(fired, "the buffer was not reloaded")
  t.ok(text:find("The editor reports new problems in flows_dg1.txt:", 1, true), text)
  t.ok(text:find("L3:1 error: a8 fresh problem (a8)", 1, true), text)
  t.ok(not text:find("a8 old problem", 1, true), "baseline problem listed: " .. text)
end)

t.test("diagnostics=false: no problems reported", function()
  flows_setup({ mode = "acceptEdits", sync_buffers = false, diagnostics = false }, true)
  local text = flows_diag_edit("flows_dg2.txt")
  t.ok(not text:find("reports new problems", 1, true), text)
end)

-- 11. No Lua errors ---------------------------------------------------------

t.test("no Lua error was raised in any flow", function()
  local msgs = vim.fn.execute("messages")
  t.ok(not msgs:find("E5108", 1, true) and not msgs:find("stack traceback", 1, true)
    and not msgs:find("Error executing", 1, true), "messages: " .. msgs)
  t.eq("", vim.v.errmsg, "v:errmsg")
  for _, n in ipairs(flows_notes) do
    t.ok(not n.msg:find("stack traceback", 1, true) and not n.msg:find("E5108", 1, true), "notify: " .. n.msg)
  end
end)

t.stop_all()
t.finish()
