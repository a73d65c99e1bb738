-- Contract tests of the Neovim plugin against issue 8 and its own docs
-- (doc/agentls.txt, README.md): setup options, Lua API, commands, inline
-- rendering, confirmations, buffer sync, external changes, crash/restart and
-- "no Lua error in any flow". Each case names the doc promise it checks.
local t = dofile(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":h") .. "/helpers.lua")

vim.o.hidden = true
vim.opt.rtp:append(t.plugin)

-- Every vim.notify goes here (headless shows nothing); progress and errors
-- are asserted from it.
local a8_notes = {}
vim.notify = function(msg, level)
  table.insert(a8_notes, { msg = tostring(msg), level = level })
end

-- The picker: answers are taken from a8_answers in order. "__hold" keeps the
-- callback in a8_held (never answered), "__dismiss" answers nil.
local a8_asks, a8_answers, a8_held = {}, {}, nil
local function a8_label(item, opts)
  if opts and opts.format_item then return opts.format_item(item) end
  return tostring(item)
end
vim.ui.select = function(items, opts, on_choice)
  local labels = {}
  for _, it in ipairs(items) do table.insert(labels, a8_label(it, opts)) end
  table.insert(a8_asks, { labels = labels, prompt = opts and opts.prompt })
  local want = table.remove(a8_answers, 1)
  if want == nil or want == "__hold" then
    a8_held = function(label)
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
local a8_inputs, a8_input_answers = {}, {}
vim.ui.input = function(opts, on_confirm)
  table.insert(a8_inputs, opts)
  on_confirm(table.remove(a8_input_answers, 1))
end
local function a8_reset_picker(answers)
  a8_asks, a8_answers, a8_held = {}, answers or {}, nil
end

local agentls = require("agentls")
local compat = require("agentls.compat")

local a8_base = {
  cmd = { t.bin },
  cmd_env = { AGENTLS_TEST_TOOLS = "1" },
  root_dir = t.ws,
  mode = "acceptEdits",
  sync_buffers = false,
  diagnostics = false,
}
-- setup(); with restart, also waits until every server it stopped is gone
-- and a new one is up (the stop and the autostart are asynchronous).
local function a8_setup(extra, restart)
  local before = {}
  for _, c in ipairs(compat.get_clients("agentls")) do before[c.id] = true end
  agentls.setup(vim.tbl_extend("force", a8_base, extra or {}))
  if not restart then return end
  t.wait(5000, function()
    local now = compat.get_clients("agentls")
    for _, c in ipairs(now) do
      if before[c.id] then return false end
    end
    return #now == 1 and now[1].initialized
  end, "the restarted server")
end

local function a8_clients()
  return compat.get_clients("agentls")
end
local function a8_client()
  t.wait(5000, function()
    local c = a8_clients()[1]
    return c and c.initialized
  end, "an initialized agentls client")
  return a8_clients()[1]
end

local function a8_call(tool, args, ms)
  local res, err = agentls.call_sync(tool, args, ms or 8000)
  t.ok(res, tool .. " failed: " .. vim.inspect(err))
  return res
end
local function a8_text(res)
  return agentls.text(res)
end
local function a8_ok(tool, args)
  local res = a8_call(tool, args)
  t.eq(false, res.isError, tool .. " isError (" .. a8_text(res) .. ")")
  return res
end
local function a8_open(rel)
  vim.cmd("edit " .. vim.fn.fnameescape(t.path(rel)))
  return vim.api.nvim_get_current_buf()
end
local function a8_fresh(rel, text)
  t.write_file(rel, text)
  local b = vim.fn.bufnr(t.path(rel))
  if b ~= -1 then vim.api.nvim_buf_delete(b, { force = true }) end
end
local FIVE = "one\ntwo\nthree\nfour\nfive\n"

local function a8_has_mark(marks, row, kind, value)
  for _, m in ipairs(marks) do
    if m[1] == row and m[2] == kind and (value == nil or m[3] == value) then return true end
  end
  return false
end
local function a8_buf_text(buf)
  return table.concat(t.lines(buf), "\n")
end
local function a8_find_buf(pred)
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(b) and pred(b) then return b end
  end
end

-- 1. Setup ------------------------------------------------------------------

t.test("a8 setup starts one client for the workspace root", function()
  a8_setup()
  local c = a8_client()
  t.eq(1, #a8_clients(), "clients")
  t.eq(t.ws, c.config.root_dir, "root_dir")
end)

if #a8_clients() == 0 then
  t.finish()
  return
end

t.test("a8 setup defines the documented commands", function()
  for _, name in ipairs({ "AgentlsTools", "AgentlsCall", "AgentlsDiff", "AgentlsLog", "AgentlsClear" }) do
    t.eq(2, vim.fn.exists(":" .. name), ":" .. name .. " exists")
  end
end)

t.test("a8 setup writes help tags so :help agentls works", function()
  for _, tag in ipairs({ "agentls", "agentls.setup()", "agentls-sync", ":AgentlsCall", "agentls-confirm" }) do
    vim.cmd("help " .. vim.fn.escape(tag, " "))
    t.eq("help", vim.bo.buftype, "help buffer for " .. tag)
    vim.cmd("helpclose")
  end
end)

t.test("a8 highlight groups link to the Diff groups", function()
  for group, link in pairs({ AgentlsAdd = "DiffAdd", AgentlsChange = "DiffChange", AgentlsDelete = "DiffDelete" }) do
    local out = vim.fn.execute("highlight " .. group)
    t.ok(out:find("links to " .. link, 1, true), group .. ": " .. out)
  end
  t.eq(1, vim.fn.hlexists("AgentlsSign"), "AgentlsSign defined")
end)

t.test("a8 setup with the same options restarts nothing", function()
  local id = a8_client().id
  a8_setup()
  vim.wait(300)
  t.eq(1, #a8_clients(), "clients")
  t.eq(id, a8_clients()[1].id, "same client")
end)

-- 2. Lua API ----------------------------------------------------------------

t.test("a8 tools() mcp default, openai and anthropic shapes", function()
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

t.test("a8 tools(opts, callback) is asynchronous", function()
  local got
  agentls.tools({ format = "openai" }, function(a, b)
    got = type(a) == "table" and a or b
    if type(a) == "table" and a.tools == nil and a[1] == nil and b then got = b end
  end)
  t.wait(5000, function() return got ~= nil end, "tools callback")
  t.ok(#got > 0 and got[1].type == "function", "callback list: " .. vim.inspect(got):sub(1, 200))
end)

t.test("a8 call read returns a callId and numbered text", function()
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

t.test("a8 empty {} args are sent as an object everywhere", function()
  local res = a8_call("ls", {})
  t.eq(false, res.isError, "ls {}: " .. a8_text(res))
  t.ok(a8_text(res):find("hello.txt", 1, true), "ls lists hello.txt: " .. a8_text(res))
  t.ok(#agentls.tools({}) > 0, "tools({})")
end)

t.test("a8 tool failure is an isError result, not an error", function()
  local res, err = agentls.call_sync("read", { path = "a8-missing.txt" }, 5000)
  t.eq(nil, err, "err")
  t.eq(true, res.isError, "isError")
end)

t.test("a8 cancel() gives the callback code -32800", function()
  local done, err
  local id = agentls.call("test_block", { seconds = 30 }, function(e) done, err = true, e end)
  vim.wait(200)
  agentls.cancel(id)
  t.wait(3000, function() return done end, "cancelled callback")
  t.eq(-32800, err and err.code, "error code: " .. vim.inspect(err))
end)

t.test("a8 call_sync timeout returns nil and an error and cancels", function()
  local start = vim.loop.hrtime()
  local res, err = agentls.call_sync("test_block", { seconds = 30 }, 500)
  local ms = (vim.loop.hrtime() - start) / 1e6
  t.eq(nil, res, "result")
  t.ok(err ~= nil, "error")
  t.ok(ms < 3000, "returned after " .. ms .. " ms")
  a8_ok("read", { path = "hello.txt" })
end)

t.test("a8 timeout_ms is call_sync's default wait", function()
  a8_setup({ timeout_ms = 700 })
  local start = vim.loop.hrtime()
  local res, err = agentls.call_sync("test_block", { seconds = 30 })
  local ms = (vim.loop.hrtime() - start) / 1e6
  t.eq(nil, res, "result")
  t.ok(err ~= nil, "error")
  t.ok(ms < 4000, "returned after " .. ms .. " ms")
  a8_setup({ timeout_ms = 660000 })
end)

t.test("a8 on_details gets details and params for an edit", function()
  local seen = {}
  a8_setup({ on_details = function(d, p) table.insert(seen, { d = d, p = p }) end })
  a8_fresh("a8_det.txt", FIVE)
  a8_ok("read", { path = "a8_det.txt" })
  local res = a8_ok("edit", { path = "a8_det.txt", edits = { { oldText = "three", newText = "THREE" } } })
  t.wait(2000, function() return #seen > 0 end, "on_details")
  t.eq("edit", seen[#seen].d.kind, "kind")
  t.eq(res.callId, seen[#seen].p.callId, "params.callId")
  t.eq(vim.uri_from_fname(t.path("a8_det.txt")), seen[#seen].d.uri, "uri")
  a8_setup({ on_details = function() end })
end)

-- 3. Commands ---------------------------------------------------------------

t.test("a8 :AgentlsTools lists the tools in a scratch buffer", function()
  vim.cmd("AgentlsTools")
  local buf
  t.wait(5000, function()
    buf = a8_find_buf(function(b)
      return vim.bo[b].buftype ~= "" and vim.bo[b].buftype ~= "help" and a8_buf_text(b):find("edit", 1, true)
        and a8_buf_text(b):find("grep", 1, true)
    end)
    return buf
  end, "tools buffer")
  t.ok(vim.bo[buf].buftype == "nofile", "scratch buftype: " .. vim.bo[buf].buftype)
end)

t.test("a8 :AgentlsCall read opens the result in a scratch buffer", function()
  vim.cmd('AgentlsCall read {"path": "hello.txt"}')
  local buf
  t.wait(5000, function()
    buf = a8_find_buf(function(b) return a8_buf_text(b):find("2→beta", 1, true) end)
    return buf
  end, "result buffer")
  t.eq("nofile", vim.bo[buf].buftype, "scratch")
end)

t.test("a8 :AgentlsCall without json runs with {}", function()
  vim.cmd("AgentlsCall ls")
  t.wait(5000, function()
    return a8_find_buf(function(b)
      local s = a8_buf_text(b)
      return vim.bo[b].buftype == "nofile" and s:find("lines.txt", 1, true) and s:find("src/", 1, true)
    end)
  end, "ls result buffer")
end)

t.test("a8 :AgentlsLog shows the calls", function()
  a8_ok("read", { path = "lines.txt" })
  vim.cmd("AgentlsLog")
  t.wait(3000, function()
    return a8_find_buf(function(b)
      return vim.bo[b].buftype ~= "" and a8_buf_text(b):find("%] read")
    end)
  end, "log buffer with the read call")
end)

t.test("a8 :checkhealth agentls reports OK without errors", function()
  vim.cmd("checkhealth agentls")
  local text = a8_buf_text(vim.api.nvim_get_current_buf())
  t.ok(text:find("OK", 1, true), "no OK: " .. text)
  t.ok(not text:find("ERROR", 1, true), "ERROR in health: " .. text)
  t.ok(text:find("rg", 1, true) or text:find("ripgrep", 1, true), "ripgrep reported: " .. text)
  t.ok(text:find("inotify", 1, true) or text:find("polling", 1, true) or text:find("fsevents", 1, true),
    "watcher mode reported: " .. text)
  if #vim.api.nvim_list_tabpages() > 1 then vim.cmd("tabclose") end
end)

-- 4. Inline changes (sync_buffers = false) ----------------------------------

t.test("a8 render: changed line is AgentlsChange, sign on it, buffer reloaded", function()
  a8_fresh("a8_chg.txt", FIVE)
  local buf = a8_open("a8_chg.txt")
  a8_ok("read", { path = "a8_chg.txt" })
  a8_ok("edit", { path = "a8_chg.txt", edits = { { oldText = "three", newText = "THREE" } } })
  t.wait(3000, function() return t.lines(buf)[3] == "THREE" end, "buffer reloaded")
  local m = t.marks(buf)
  t.ok(a8_has_mark(m, 2, "hl", "AgentlsChange"), "AgentlsChange on row 2: " .. vim.inspect(m))
  t.ok(a8_has_mark(m, 2, "sign"), "sign on row 2: " .. vim.inspect(m))
  for _, x in ipairs(m) do
    t.ok(x[1] == 2, "mark off the changed line: " .. vim.inspect(m))
  end
end)

t.test("a8 render: removed line is a virtual line in AgentlsDelete", function()
  a8_fresh("a8_del.txt", FIVE)
  local buf = a8_open("a8_del.txt")
  a8_ok("read", { path = "a8_del.txt" })
  a8_ok("edit", { path = "a8_del.txt", edits = { { oldText = "two\n", newText = "" } } })
  t.wait(3000, function() return #t.lines(buf) == 4 end, "buffer reloaded")
  t.eq({ "one", "three", "four", "five" }, t.lines(buf), "lines")
  local m = t.marks(buf)
  t.ok(a8_has_mark(m, 1, "virt_above", "two|AgentlsDelete") or a8_has_mark(m, 0, "virt_below", "two|AgentlsDelete"),
    "virtual line 'two' between one and three: " .. vim.inspect(m))
  t.ok(a8_has_mark(m, 1, "sign") or a8_has_mark(m, 0, "sign"), "sign at the deletion: " .. vim.inspect(m))
end)

t.test("a8 render: inserted line is AgentlsAdd", function()
  a8_fresh("a8_add.txt", FIVE)
  local buf = a8_open("a8_add.txt")
  a8_ok("read", { path = "a8_add.txt" })
  a8_ok("edit", { path = "a8_add.txt", edits = { { oldText = "four\n", newText = "four\nnew\n" } } })
  t.wait(3000, function() return t.lines(buf)[5] == "new" end, "buffer reloaded")
  local m = t.marks(buf)
  t.ok(a8_has_mark(m, 4, "hl", "AgentlsAdd"), "AgentlsAdd on row 4: " .. vim.inspect(m))
  t.ok(a8_has_mark(m, 4, "sign"), "sign on row 4: " .. vim.inspect(m))
  t.ok(not a8_has_mark(m, 3, "hl"), "row 3 (unchanged 'four') marked: " .. vim.inspect(m))
end)

t.test("a8 render: write of a loaded file reloads and marks it", function()
  a8_fresh("a8_wr.txt", FIVE)
  local buf = a8_open("a8_wr.txt")
  a8_ok("read", { path = "a8_wr.txt" })
  a8_ok("write", { path = "a8_wr.txt", content = "one\ntwo\nTRES\nfour\nfive\n" })
  t.wait(3000, function() return t.lines(buf)[3] == "TRES" end, "buffer reloaded")
  local m = t.marks(buf)
  t.ok(a8_has_mark(m, 2, "hl"), "row 2 marked: " .. vim.inspect(m))
  t.ok(not a8_has_mark(m, 0, "hl") and not a8_has_mark(m, 4, "hl"), "unchanged rows marked: " .. vim.inspect(m))
end)

t.test("a8 render: editing a marked line removes its marks", function()
  a8_fresh("a8_touch.txt", FIVE)
  local buf = a8_open("a8_touch.txt")
  a8_ok("read", { path = "a8_touch.txt" })
  a8_ok("edit", { path = "a8_touch.txt", edits = { { oldText = "two", newText = "TWO" }, { oldText = "four", newText = "FOUR" } } })
  t.wait(3000, function() return t.lines(buf)[4] == "FOUR" end, "buffer reloaded")
  t.ok(a8_has_mark(t.marks(buf), 1, "hl") and a8_has_mark(t.marks(buf), 3, "hl"), "both marked: " .. vim.inspect(t.marks(buf)))
  vim.api.nvim_buf_set_lines(buf, 3, 4, false, { "user typed" })
  t.wait(1000, function() return not a8_has_mark(t.marks(buf), 3, "hl") end, "row 3 hl to go: " .. vim.inspect(t.marks(buf)))
  t.ok(a8_has_mark(t.marks(buf), 1, "hl"), "row 1 keeps its mark: " .. vim.inspect(t.marks(buf)))
  vim.cmd("silent! write")
end)

t.test("a8 render: undo after the reload brings the old text back", function()
  a8_fresh("a8_undo.txt", FIVE)
  local buf = a8_open("a8_undo.txt")
  a8_ok("read", { path = "a8_undo.txt" })
  a8_ok("edit", { path = "a8_undo.txt", edits = { { oldText = "five", newText = "FIVE" } } })
  t.wait(3000, function() return t.lines(buf)[5] == "FIVE" end, "buffer reloaded")
  vim.api.nvim_set_current_buf(buf)
  vim.cmd("silent undo")
  t.eq({ "one", "two", "three", "four", "five" }, t.lines(buf), "after undo")
end)

t.test("a8 :AgentlsClear removes the marks from every buffer", function()
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

t.test("a8 :AgentlsDiff opens a diff tab of the last change", function()
  a8_fresh("a8_diff.txt", FIVE)
  a8_open("a8_diff.txt")
  a8_ok("read", { path = "a8_diff.txt" })
  a8_ok("edit", { path = "a8_diff.txt", edits = { { oldText = "two", newText = "deux" } } })
  local tabs = #vim.api.nvim_list_tabpages()
  vim.cmd("AgentlsDiff")
  t.eq(tabs + 1, #vim.api.nvim_list_tabpages(), "a new tab")
  local wins = vim.api.nvim_tabpage_list_wins(0)
  t.eq(2, #wins, "two windows")
  local old, file
  for _, w in ipairs(wins) do
    t.ok(vim.wo[w].diff, "window not in diff mode")
    local b = vim.api.nvim_win_get_buf(w)
    if vim.api.nvim_buf_get_name(b) == t.path("a8_diff.txt") then file = b else old = b end
  end
  t.ok(file, "the file is one side")
  t.ok(old, "the old text is the other side")
  t.eq({ "one", "two", "three", "four", "five" }, t.lines(old), "old side")
  t.eq("deux", t.lines(file)[2], "file side")
  vim.cmd("tabclose")
end)

t.test("a8 render=false: no marks", function()
  a8_setup({ render = false })
  a8_fresh("a8_norender.txt", FIVE)
  local buf = a8_open("a8_norender.txt")
  a8_ok("read", { path = "a8_norender.txt" })
  a8_ok("edit", { path = "a8_norender.txt", edits = { { oldText = "two", newText = "2" } } })
  vim.wait(500)
  t.eq({}, t.marks(buf), "marks")
  a8_setup({ render = true })
end)

t.test("a8 sync off: a buffer with unsaved changes is left alone", function()
  a8_fresh("a8_dirty.txt", FIVE)
  local buf = a8_open("a8_dirty.txt")
  a8_ok("read", { path = "a8_dirty.txt" })
  vim.api.nvim_buf_set_lines(buf, 0, 1, false, { "USER" })
  a8_ok("edit", { path = "a8_dirty.txt", edits = { { oldText = "four", newText = "AGENT" } } })
  t.eq("one\ntwo\nthree\nAGENT\nfive\n", t.read_file("a8_dirty.txt"), "disk")
  vim.wait(500)
  t.eq({ "USER", "two", "three", "four", "five" }, t.lines(buf), "buffer keeps the user's text")
  t.eq(true, vim.bo[buf].modified, "still modified")
  vim.api.nvim_buf_delete(buf, { force = true })
end)

t.test("a8 externalChange: an outside write to a read file reloads its buffer", function()
  a8_fresh("a8_ext.txt", "old\n")
  local buf = a8_open("a8_ext.txt")
  a8_ok("read", { path = "a8_ext.txt" })
  vim.wait(200)
  t.write_file("a8_ext.txt", "changed outside\n")
  t.wait(4000, function() return t.lines(buf)[1] == "changed outside" end, "reload after the external write")
end)

-- 5. Progress ---------------------------------------------------------------

t.test("a8 progress: latest line is notified, throttled per call", function()
  a8_setup({ progress = true, progress_interval_ms = 60000 })
  a8_notes = {}
  a8_ok("bash", { command = "for i in 1 2 3 4 5 6; do echo line$i; sleep 0.15; done" })
  local prog = {}
  for _, n in ipairs(a8_notes) do
    if n.msg:find("line%d") then table.insert(prog, n.msg) end
  end
  t.ok(#prog >= 1, "no progress notification: " .. vim.inspect(a8_notes))
  t.eq(1, #prog, "at most one per progress_interval_ms: " .. vim.inspect(prog))
end)

t.test("a8 progress=false: no progress notifications", function()
  a8_setup({ progress = false })
  a8_notes = {}
  a8_ok("bash", { command = "for i in 1 2 3 4; do echo pline$i; sleep 0.15; done" })
  for _, n in ipairs(a8_notes) do
    t.ok(not n.msg:find("pline"), "notified: " .. n.msg)
  end
  a8_setup({ progress = true, progress_interval_ms = 1000 })
end)

-- 6. Options that restart the server -----------------------------------------

t.test("a8 setup with another mode restarts the server", function()
  local id = a8_client().id
  a8_setup({ mode = "readOnly" }, true)
  local c = a8_client()
  t.ok(c.id ~= id, "same client after a mode change")
  t.eq(nil, vim.lsp.get_client_by_id(id), "old client still listed")
  t.eq(1, #a8_clients(), "clients")
  a8_fresh("a8_ro.txt", FIVE)
  a8_ok("read", { path = "a8_ro.txt" })
  local res = a8_call("edit", { path = "a8_ro.txt", edits = { { oldText = "one", newText = "1" } } })
  t.eq(true, res.isError, "readOnly edit isError")
  t.eq(FIVE, t.read_file("a8_ro.txt"), "file")
end)

t.test("a8 a restart by setup() ends a running call with an error", function()
  local box = {}
  agentls.call("test_block", { seconds = 30 }, function(e, r) box.done, box.err, box.res = true, e, r end)
  vim.wait(200)
  a8_setup({ mode = "bypass" }, true)
  t.wait(3000, function() return box.done end, "callback of the call the restart ended")
  t.ok(box.err ~= nil, "no error: " .. vim.inspect(box.res))
end)

t.test("a8 limits option reaches the server", function()
  a8_setup({ mode = "acceptEdits", limits = { readLines = 4 } }, true)
  local text = a8_text(a8_ok("read", { path = "lines.txt" }))
  t.ok(text:find("2→two", 1, true), text)
  t.ok(not text:find("3→three", 1, true), "readLines=4 (header and notice included) not enforced: " .. text)
end)

t.test("a8 permissions deny rule reaches the server", function()
  a8_setup({ mode = "acceptEdits", permissions = { allow = {}, ask = {}, deny = { "Read(hello.txt)" } } }, true)
  local res = a8_call("read", { path = "hello.txt" })
  t.eq(true, res.isError, "denied read isError")
  t.ok(not a8_text(res):find("alpha", 1, true), "content leaked")
end)

t.test("a8 autostart=false starts on first use", function()
  t.stop_all()
  agentls.setup(vim.tbl_extend("force", a8_base, { autostart = false, mode = "bypass" }))
  vim.wait(300)
  t.eq(0, #a8_clients(), "clients before first use")
  a8_ok("read", { path = "hello.txt" })
  t.eq(1, #a8_clients(), "clients after first use")
end)

-- 7. Confirmations (mode = default) -----------------------------------------

local function a8_edit_async(rel, old, new)
  local box = {}
  box.id = agentls.call("edit", { path = rel, edits = { { oldText = old, newText = new } } }, function(e, r)
    box.done, box.err, box.res = true, e, r
  end)
  return box
end

t.test("a8 confirm: the picker offers the documented choices; Deny leaves the file", function()
  a8_setup({ mode = "default" }, true)
  a8_fresh("a8_c1.txt", FIVE)
  a8_ok("read", { path = "a8_c1.txt" })
  a8_reset_picker({ "Deny" })
  local res = a8_call("edit", { path = "a8_c1.txt", edits = { { oldText = "one", newText = "1" } } })
  t.eq(1, #a8_asks, "asked once")
  local labels = a8_asks[1].labels
  for _, want in ipairs({ "Allow once", "Always allow", "Deny", "Show change" }) do
    t.ok(vim.tbl_contains(labels, want), want .. " missing: " .. vim.inspect(labels))
  end
  local dwm = false
  for _, l in ipairs(labels) do if l:find("^Deny with message") then dwm = true end end
  t.ok(dwm, "Deny with message… missing: " .. vim.inspect(labels))
  t.eq(true, res.isError, "isError")
  t.ok(a8_text(res):find("denied by the user", 1, true), a8_text(res))
  t.eq(FIVE, t.read_file("a8_c1.txt"), "file unchanged")
end)

t.test("a8 confirm: Allow once runs the call and asks again next time", function()
  a8_fresh("a8_c2.txt", FIVE)
  a8_ok("read", { path = "a8_c2.txt" })
  a8_reset_picker({ "Allow once", "Allow once" })
  a8_ok("edit", { path = "a8_c2.txt", edits = { { oldText = "one", newText = "1" } } })
  a8_ok("edit", { path = "a8_c2.txt", edits = { { oldText = "two", newText = "2" } } })
  t.eq(2, #a8_asks, "asked twice")
  t.eq("1\n2\nthree\nfour\nfive\n", t.read_file("a8_c2.txt"), "file")
end)

t.test("a8 confirm: Always allow covers the same file, not another", function()
  a8_fresh("a8_c3.txt", FIVE)
  a8_fresh("a8_c3b.txt", FIVE)
  a8_ok("read", { path = "a8_c3.txt" })
  a8_ok("read", { path = "a8_c3b.txt" })
  a8_reset_picker({ "Always allow", "Deny" })
  a8_ok("edit", { path = "a8_c3.txt", edits = { { oldText = "one", newText = "1" } } })
  a8_ok("edit", { path = "a8_c3.txt", edits = { { oldText = "two", newText = "2" } } })
  t.eq(1, #a8_asks, "asked once for the same file")
  local res = a8_call("edit", { path = "a8_c3b.txt", edits = { { oldText = "one", newText = "1" } } })
  t.eq(2, #a8_asks, "another file asks")
  t.eq(true, res.isError, "denied")
end)

t.test("a8 confirm: Deny with message sends the message", function()
  a8_fresh("a8_c4.txt", FIVE)
  a8_ok("read", { path = "a8_c4.txt" })
  a8_reset_picker({ "Deny with message" })
  a8_input_answers = { "use the other file" }
  local res = a8_call("edit", { path = "a8_c4.txt", edits = { { oldText = "one", newText = "1" } } })
  t.eq(true, res.isError, "isError")
  t.ok(a8_text(res):find("denied by the user: use the other file", 1, true), a8_text(res))
  t.eq(FIVE, t.read_file("a8_c4.txt"), "file")
end)

t.test("a8 confirm: dismissing the message input gets back to the question", function()
  a8_fresh("a8_c5.txt", FIVE)
  a8_ok("read", { path = "a8_c5.txt" })
  a8_reset_picker({ "Deny with message", "Allow once" })
  a8_input_answers = {}
  a8_ok("edit", { path = "a8_c5.txt", edits = { { oldText = "one", newText = "1" } } })
  t.eq(2, #a8_asks, "asked again after the dismissed input")
  t.eq("1\ntwo\nthree\nfour\nfive\n", t.read_file("a8_c5.txt"), "file")
end)

t.test("a8 confirm: Show change opens the proposed diff and asks again", function()
  a8_fresh("a8_c6.txt", FIVE)
  a8_ok("read", { path = "a8_c6.txt" })
  local tabs = #vim.api.nvim_list_tabpages()
  local diffwins = 0
  a8_reset_picker({ "Show change", "Deny" })
  local orig = vim.ui.select
  vim.ui.select = function(items, opts, cb)
    if #a8_asks == 1 then
      for _, w in ipairs(vim.api.nvim_list_wins()) do
        if vim.wo[w].diff then diffwins = diffwins + 1 end
      end
    end
    return orig(items, opts, cb)
  end
  local ok, res = pcall(a8_call, "edit", { path = "a8_c6.txt", edits = { { oldText = "three", newText = "3" } } })
  vim.ui.select = orig
  t.ok(ok, tostring(res))
  t.eq(2, #a8_asks, "asked again")
  t.ok(diffwins >= 2, "no diff windows open when asked again")
  t.eq(FIVE, t.read_file("a8_c6.txt"), "file after Deny")
  while #vim.api.nvim_list_tabpages() > tabs do vim.cmd("tabclose") end
end)

t.test("a8 confirm: a dismissed picker does not run the call", function()
  a8_fresh("a8_c7.txt", FIVE)
  a8_ok("read", { path = "a8_c7.txt" })
  a8_reset_picker({ "__dismiss" })
  local res, err = agentls.call_sync("edit", { path = "a8_c7.txt", edits = { { oldText = "one", newText = "1" } } }, 5000)
  t.ok(res or err, "no answer")
  t.ok(err or res.isError, "dismissed picker ran the call: " .. vim.inspect(res))
  t.eq(FIVE, t.read_file("a8_c7.txt"), "file")
end)

t.test("a8 confirm: call_sync timeout ends the question; a late choice is ignored", function()
  a8_fresh("a8_c8.txt", FIVE)
  a8_ok("read", { path = "a8_c8.txt" })
  a8_reset_picker({ "__hold" })
  local start = vim.loop.hrtime()
  local res, err = agentls.call_sync("edit", { path = "a8_c8.txt", edits = { { oldText = "one", newText = "1" } } }, 1000)
  local ms = (vim.loop.hrtime() - start) / 1e6
  t.eq(nil, res, "result")
  t.ok(err, "error")
  t.ok(ms < 4000, "returned after " .. ms .. " ms")
  t.ok(a8_held, "picker was shown")
  a8_held("Allow once")
  vim.wait(500)
  t.eq(FIVE, t.read_file("a8_c8.txt"), "file after a late Allow")
  a8_reset_picker({ "Allow once" })
  a8_ok("edit", { path = "a8_c8.txt", edits = { { oldText = "two", newText = "2" } } })
  t.eq("one\n2\nthree\nfour\nfive\n", t.read_file("a8_c8.txt"), "next call runs")
end)

t.test("a8 confirm: cancel() ends the question with -32800", function()
  a8_fresh("a8_c9.txt", FIVE)
  a8_ok("read", { path = "a8_c9.txt" })
  a8_reset_picker({ "__hold" })
  local box
  vim.defer_fn(function() agentls.cancel(box.id) end, 400)
  box = a8_edit_async("a8_c9.txt", "one", "1")
  t.wait(4000, function() return box.done end, "callback after cancel")
  t.eq(-32800, box.err and box.err.code, "err: " .. vim.inspect(box.err))
  if a8_held then a8_held("Allow once") end
  vim.wait(300)
  t.eq(FIVE, t.read_file("a8_c9.txt"), "file")
end)

t.test("a8 confirm: Show change is offered for edits only, not bash", function()
  a8_reset_picker({ "Deny" })
  a8_call("bash", { command = "touch a8_bash_x && echo x" })
  t.eq(1, #a8_asks, "asked")
  t.ok(not vim.tbl_contains(a8_asks[1].labels, "Show change"), "Show change for bash: " .. vim.inspect(a8_asks[1].labels))
end)

t.test("a8 confirm: bash Always allow covers the same command line only", function()
  a8_reset_picker({ "Always allow", "Deny" })
  local res = a8_ok("bash", { command = "touch a8_bash_marker && echo made" })
  t.eq(1, #a8_asks, "asked")
  t.ok(a8_text(res):find("made", 1, true), a8_text(res))
  a8_ok("bash", { command = "touch a8_bash_marker && echo made" })
  t.eq(1, #a8_asks, "same command asked again")
  local r2 = a8_call("bash", { command = "touch a8_bash_other && echo other" })
  t.eq(2, #a8_asks, "another command asks")
  t.eq(true, r2.isError, "denied")
end)

t.test("a8 permissions allow rule skips the question", function()
  a8_setup({ mode = "default", permissions = { allow = { "Edit(a8_allowed.txt)" }, ask = {}, deny = {} } }, true)
  a8_fresh("a8_allowed.txt", FIVE)
  a8_ok("read", { path = "a8_allowed.txt" })
  a8_reset_picker({ "Deny" })
  a8_ok("edit", { path = "a8_allowed.txt", edits = { { oldText = "one", newText = "1" } } })
  t.eq(0, #a8_asks, "asked despite the allow rule")
end)

-- 8. Crash and restart ------------------------------------------------------

t.test("a8 crash: a running call gets -32603 'agentls exited' at once; next call restarts", function()
  a8_setup({ mode = "acceptEdits", permissions = { allow = {}, ask = {}, deny = {} } }, true)
  local c = a8_client()
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
  a8_ok("read", { path = "hello.txt" })
  t.ok(a8_client().id ~= c.id, "a new client")
end)

-- 9. Buffer sync (sync_buffers = true) --------------------------------------

t.test("a8 sync: read returns the buffer's unsaved text", function()
  a8_setup({ mode = "acceptEdits", sync_buffers = true }, true)
  a8_client()
  a8_fresh("a8_s1.txt", FIVE)
  local buf = a8_open("a8_s1.txt")
  vim.api.nvim_buf_set_lines(buf, 1, 2, false, { "UNSAVED" })
  local text
  t.wait(3000, function()
    text = a8_text(a8_ok("read", { path = "a8_s1.txt" }))
    return text:find("2→UNSAVED", 1, true)
  end, "read sees the unsaved line")
  vim.api.nvim_buf_delete(buf, { force = true })
end)

t.test("a8 sync: edit of a clean buffer changes it, saves it, and marks it", function()
  a8_fresh("a8_s2.txt", FIVE)
  local buf = a8_open("a8_s2.txt")
  vim.wait(200)
  a8_ok("read", { path = "a8_s2.txt" })
  a8_ok("edit", { path = "a8_s2.txt", edits = { { oldText = "three", newText = "THREE" } } })
  t.eq("THREE", t.lines(buf)[3], "buffer")
  t.eq(false, vim.bo[buf].modified, "saved")
  t.eq("one\ntwo\nTHREE\nfour\nfive\n", t.read_file("a8_s2.txt"), "disk")
  t.ok(a8_has_mark(t.marks(buf), 2, "hl", "AgentlsChange"), "mark: " .. vim.inspect(t.marks(buf)))
end)

t.test("a8 sync: edit of a dirty buffer merges and keeps the user's changes unsaved", function()
  a8_fresh("a8_s3.txt", FIVE)
  local buf = a8_open("a8_s3.txt")
  vim.wait(200)
  a8_ok("read", { path = "a8_s3.txt" })
  vim.api.nvim_buf_set_lines(buf, 0, 1, false, { "USER" })
  local text
  t.wait(3000, function()
    text = a8_text(a8_ok("read", { path = "a8_s3.txt" }))
    return text:find("1→USER", 1, true)
  end, "server sees the user's change")
  a8_ok("edit", { path = "a8_s3.txt", edits = { { oldText = "four", newText = "AGENT" } } })
  t.eq({ "USER", "two", "three", "AGENT", "five" }, t.lines(buf), "buffer keeps both")
  t.eq(true, vim.bo[buf].modified, "still unsaved")
  t.eq(FIVE, t.read_file("a8_s3.txt"), "disk unchanged until saved")
  t.ok(a8_has_mark(t.marks(buf), 3, "hl"), "marked: " .. vim.inspect(t.marks(buf)))
  vim.api.nvim_buf_delete(buf, { force = true })
end)

t.test("a8 sync: write of a clean open buffer changes it and saves", function()
  a8_fresh("a8_s4.txt", FIVE)
  local buf = a8_open("a8_s4.txt")
  vim.wait(200)
  a8_ok("read", { path = "a8_s4.txt" })
  a8_ok("write", { path = "a8_s4.txt", content = "x\ny\n" })
  t.eq({ "x", "y" }, t.lines(buf), "buffer")
  t.eq(false, vim.bo[buf].modified, "saved")
  t.eq("x\ny\n", t.read_file("a8_s4.txt"), "disk")
end)

-- 10. Diagnostics -----------------------------------------------------------

local function a8_diag_edit(rel)
  a8_fresh(rel, FIVE)
  local buf = a8_open(rel)
  local ns = vim.api.nvim_create_namespace("a8diag")
  local old = { lnum = 0, col = 0, message = "a8 old problem", severity = vim.diagnostic.severity.ERROR, source = "a8" }
  vim.diagnostic.set(ns, buf, { old })
  a8_ok("read", { path = rel })
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
  local res = a8_ok("edit", { path = rel, edits = { { oldText = "three", newText = "x = =" } } })
  return a8_text(res), fired
end

t.test("a8 diagnostics: new problems after an edit reach the model", function()
  a8_setup({ mode = "acceptEdits", sync_buffers = false, diagnostics = true }, true)
  local text, fired = a8_diag_edit("a8_dg1.txt")
  t.ok(fired, "the buffer was not reloaded")
  t.ok(text:find("The editor reports new problems in a8_dg1.txt:", 1, true), text)
  t.ok(text:find("L3:1 error: a8 fresh problem (a8)", 1, true), text)
  t.ok(not text:find("a8 old problem", 1, true), "baseline problem listed: " .. text)
end)

t.test("a8 diagnostics=false: no problems reported", function()
  a8_setup({ mode = "acceptEdits", sync_buffers = false, diagnostics = false }, true)
  local text = a8_diag_edit("a8_dg2.txt")
  t.ok(not text:find("reports new problems", 1, true), text)
end)

-- 11. No Lua errors ---------------------------------------------------------

t.test("a8 no Lua error was raised in any flow", function()
  local msgs = vim.fn.execute("messages")
  t.ok(not msgs:find("E5108", 1, true) and not msgs:find("stack traceback", 1, true)
    and not msgs:find("Error executing", 1, true), "messages: " .. msgs)
  t.eq("", vim.v.errmsg, "v:errmsg")
  for _, n in ipairs(a8_notes) do
    t.ok(not n.msg:find("stack traceback", 1, true) and not n.msg:find("E5108", 1, true), "notify: " .. n.msg)
  end
end)

t.stop_all()
t.finish()
