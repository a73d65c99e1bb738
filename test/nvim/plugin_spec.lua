-- Tests of the editors/nvim plugin against the real agentls binary.
local here = vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":h")
local t = dofile(here .. "/helpers.lua")

vim.opt.rtp:prepend(t.plugin)
vim.cmd("runtime plugin/agentls.lua")
vim.cmd("cd " .. vim.fn.fnameescape(t.ws))

local agentls = require("agentls")
local render = require("agentls.render")

local notified = {}
local real_notify = vim.notify
vim.notify = function(msg, level, opts)
  table.insert(notified, { msg = msg, level = level })
end

local function edit(rel)
  vim.cmd("edit " .. vim.fn.fnameescape(t.path(rel)))
  return vim.api.nvim_get_current_buf()
end

local function te(l1, c1, l2, c2, text)
  return { range = { start = { line = l1, character = c1 }, ["end"] = { line = l2, character = c2 } }, newText = text }
end

local tool_names = {}

t.test("setup starts the server for the workspace root", function()
  agentls.setup({ cmd = { t.bin }, cmd_env = { AGENTLS_TEST_TOOLS = "1" }, root_dir = t.ws })
  t.wait(5000, function() return agentls.initialize_result(t.ws) ~= nil end, "initialize")
  local caps = agentls.initialize_result(t.ws).capabilities.experimental.agentls
  t.ok(vim.tbl_contains(caps.tools, "read"), "read in initialize tools")
  t.eq(agentls.start(t.ws), agentls.start(t.ws), "one client per root")
end)

t.test("tools() lists the tools", function()
  local tools, err = agentls.tools()
  t.ok(tools, vim.inspect(err))
  for _, tool in ipairs(tools) do
    table.insert(tool_names, tool.name)
  end
  t.ok(vim.tbl_contains(tool_names, "read"), "read missing")
  t.ok(tools[1].inputSchema, "MCP shape has inputSchema")
end)

t.test("tools({format='openai'}) is ready for a model request", function()
  local tools = assert(agentls.tools({ format = "openai" }))
  t.ok(#tools > 0, "empty")
  for _, tool in ipairs(tools) do
    t.eq("function", tool.type, "type")
    t.ok(type(tool["function"].name) == "string" and tool["function"].description, "name/description")
    t.eq("object", tool["function"].parameters.type, "parameters.type")
  end
  local anth = assert(agentls.tools({ format = "anthropic" }))
  t.ok(anth[1].input_schema, "anthropic input_schema")
end)

t.test("call('read') returns numbered text (async)", function()
  local res
  agentls.call("read", { path = "hello.txt" }, function(err, r)
    t.ok(not err, vim.inspect(err))
    res = r
  end)
  t.wait(5000, function() return res ~= nil end, "read result")
  t.eq(false, res.isError, "isError")
  local text = agentls.text(res)
  t.ok(text:find("1→alpha", 1, true) and text:find("3→gamma", 1, true), text)
end)

t.test("call_sync returns the result", function()
  local res, err = agentls.call_sync("read", { path = "lines.txt", offset = 2, limit = 1 }, 5000)
  t.ok(res, vim.inspect(err))
  t.ok(agentls.text(res):find("2→two", 1, true), agentls.text(res))
  t.ok(not agentls.text(res):find("1→one", 1, true), "offset ignored")
end)

t.test("{} arguments go out as a JSON object", function()
  t.eq("{}", vim.json.encode(agentls._as_object({})), "encoding")
  local res, err = agentls.call_sync("read", {}, 5000)
  t.ok(res, "protocol error instead of a tool result: " .. vim.inspect(err))
  t.eq(true, res.isError, "missing path is a tool error")
  res, err = agentls.call_sync("test_panic", {}, 5000)
  t.ok(res, vim.inspect(err))
  t.eq(true, res.isError, "panic becomes isError")
end)

t.test("cancel stops a running call with RequestCancelled", function()
  local done, cerr
  local id = agentls.call("test_block", { seconds = 30 }, function(e) done, cerr = true, e end)
  vim.wait(200)
  t.ok(agentls.cancel(id), "cancel found the call")
  t.wait(5000, function() return done end, "cancelled reply")
  t.eq(-32800, cerr and cerr.code, "error code")
end)

t.test("tools/progress becomes a notification", function()
  notified = {}
  local res = agentls.call_sync("test_block", { seconds = 0.2 }, 5000)
  t.eq("unblocked", agentls.text(res), "text")
  local found = false
  for _, n in ipairs(notified) do
    if n.msg:find("test_block: blocking", 1, true) then found = true end
  end
  t.ok(found, "no progress notification: " .. vim.inspect(notified))
end)

t.test(":checkhealth agentls reports OK", function()
  vim.cmd("checkhealth agentls")
  local text = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), "\n")
  vim.cmd("bwipeout!")
  t.ok(text:find("OK", 1, true), text)
  t.ok(text:find("agentls binary", 1, true), "binary check missing:\n" .. text)
  t.ok(text:find("version: agentls", 1, true), "version missing:\n" .. text)
  t.ok(text:find("file watcher", 1, true), "watcher missing:\n" .. text)
  t.ok(text:find("sandbox: off (sandbox.enabled is not set)", 1, true), "sandbox state missing:\n" .. text)
  t.ok(not text:find("ERROR", 1, true), "health errors:\n" .. text)
end)

t.test(":AgentlsTools, :AgentlsCall and :AgentlsLog fill scratch buffers", function()
  vim.cmd("AgentlsTools")
  local lines = vim.api.nvim_buf_get_lines(0, 0, -1, false)
  t.ok(vim.tbl_contains(vim.tbl_map(function(l) return l:match("^%S+") end, lines), "read"), vim.inspect(lines))
  vim.cmd("close")
  local before = vim.api.nvim_get_current_buf()
  vim.cmd([[AgentlsCall read {"path": "hello.txt", "limit": 2}]])
  t.wait(5000, function() return vim.api.nvim_get_current_buf() ~= before end, "result buffer")
  local text = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), "\n")
  t.ok(text:find("2→beta", 1, true) and not text:find("3→gamma", 1, true), text)
  t.ok(vim.api.nvim_buf_get_name(0):find("agentls://call/", 1, true), vim.api.nvim_buf_get_name(0))
  vim.cmd("close")
  vim.cmd("AgentlsLog")
  text = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), "\n")
  t.ok(text:find("[start]", 1, true) and text:find("read", 1, true), text)
  vim.cmd("close")
end)

t.test(":AgentlsCall reuses its result window (no new split per call)", function()
  vim.cmd("silent! only!")
  local wins = #vim.api.nvim_tabpage_list_wins(0)
  local function call_and_wait(json, want)
    vim.cmd("AgentlsCall read " .. json)
    t.wait(5000, function()
      return table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), "\n"):find(want, 1, true) ~= nil
    end, "result " .. want)
  end
  call_and_wait([[{"path": "hello.txt", "limit": 1}]], "1→alpha")
  local win, first = vim.api.nvim_get_current_win(), vim.api.nvim_get_current_buf()
  t.eq(wins + 1, #vim.api.nvim_tabpage_list_wins(0), "one split for the first result")
  -- From another window: the result still goes to the result window.
  vim.cmd("wincmd p")
  call_and_wait([[{"path": "lines.txt", "limit": 1}]], "1→one")
  t.eq(wins + 1, #vim.api.nvim_tabpage_list_wins(0), "no second split")
  t.eq(win, vim.api.nvim_get_current_win(), "the same window, focused")
  t.eq(false, vim.api.nvim_buf_is_valid(first), "the previous result buffer is wiped")
  -- :AgentlsLog has its own window; the call window stays.
  vim.cmd("AgentlsLog")
  t.eq(wins + 2, #vim.api.nvim_tabpage_list_wins(0), "the log gets its own window")
  vim.cmd("AgentlsLog")
  t.eq(wins + 2, #vim.api.nvim_tabpage_list_wins(0), "and reuses it")
  vim.cmd("silent! only!")
end)

t.test(":checkhealth agentls reports the Neovim version and whether it is tested", function()
  local health = require("agentls.health")
  local v = vim.version()
  local version, tested = health.nvim_version()
  t.eq(string.format("%d.%d.%d", v.major, v.minor, v.patch), version, "version")
  -- CI runs this suite on 0.7.2 and 0.10.x (test/nvim/run.sh).
  t.eq(v.major == 0 and (v.minor == 7 or v.minor == 10), tested, "tested")
  vim.cmd("checkhealth agentls")
  local text = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), "\n")
  vim.cmd("bwipeout!")
  if tested then
    t.ok(t.health_has(text, "OK", "Neovim " .. version .. ": tested"), text)
  else
    t.ok(t.health_has(text, "WARNING", "Neovim " .. version .. ": supported (0.7 or newer) but not tested"), text)
  end
  health.TESTED = { "0.1" }
  vim.cmd("checkhealth agentls")
  text = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), "\n")
  vim.cmd("bwipeout!")
  health.TESTED = { "0.7", "0.10" }
  t.ok(t.health_has(text, "WARNING", "Neovim " .. version .. ": supported (0.7 or newer) but not tested"),
    "an untested version is a warning: " .. text)
end)

t.test("LuaCATS: every public function's parameters and every option are annotated", function()
  local src = table.concat(vim.fn.readfile(t.repo .. "/editors/nvim/lua/agentls/init.lua"), "\n")
  local lines = vim.split(src, "\n", { plain = true })
  local checked = 0
  for i, line in ipairs(lines) do
    local name, params = line:match("^function M%.([%a][%w_]*)%(([^)]*)%)")
    if name then
      checked = checked + 1
      -- The annotation block right above the function.
      local block, j = {}, i - 1
      while j > 0 and lines[j]:match("^%-%-%-") do
        table.insert(block, lines[j])
        j = j - 1
      end
      local doc = table.concat(block, "\n")
      for p in params:gmatch("[%a_][%w_]*") do
        t.ok(doc:find("---@param " .. p .. "[%s?]"), "M." .. name .. ": no ---@param " .. p)
      end
      local body_returns = false
      for k = i + 1, #lines do
        if lines[k]:match("^end") then break end
        if lines[k]:match("^  return %S") then body_returns = true end
      end
      if body_returns and name ~= "confirm" then
        t.ok(doc:find("---@return", 1, true), "M." .. name .. ": returns a value without ---@return")
      end
    end
  end
  t.ok(checked >= 10, "public functions found: " .. checked)
  local fields = {}
  for f in src:match("%-%-%-@class agentls%.Options.-\n([^\n]*%-%-%-@field.-)\n\n"):gmatch("%-%-%-@field ([%w_]+)%?") do
    fields[f] = true
  end
  t.ok(vim.tbl_count(fields) >= 15, "agentls.Options fields: " .. vim.inspect(fields))
  for key in pairs(require("agentls").config) do
    t.ok(fields[key], "option " .. key .. " has no ---@field in agentls.Options")
  end
  for _, want in ipairs({ "agentls.Result", "agentls.Error", "agentls.CallOpts", "agentls.ToolsOpts" }) do
    t.ok(src:find("---@class " .. want, 1, true), "---@class " .. want)
  end
end)

t.test("the help file has valid tags", function()
  local dir = vim.fn.tempname()
  vim.fn.mkdir(dir, "p")
  vim.fn.writefile(vim.fn.readfile(t.repo .. "/editors/nvim/doc/agentls.txt"), dir .. "/agentls.txt")
  vim.cmd("helptags " .. vim.fn.fnameescape(dir))
  local tags = table.concat(vim.fn.readfile(dir .. "/tags"), "\n")
  for _, tag in ipairs({ "agentls.setup()", "agentls.call()", ":AgentlsDiff", "agentls-render", "agentls-sync",
    "agentls-mcp", "agentls-mcphub", "agentls-codecompanion", "agentls-avante" }) do
    t.ok(tags:find(tag, 1, true), "missing tag " .. tag)
  end
end)

t.test("hunks() maps TextEdits to new-text lines", function()
  t.eq({
    { old_start = 1, old_count = 1, new_start = 1, new_count = 1 },
    { old_start = 3, old_count = 1, new_start = 3, new_count = 0 },
    { old_start = 5, old_count = 0, new_start = 4, new_count = 1 },
  }, render.hunks({ te(3, 0, 4, 0, ""), te(1, 0, 2, 0, "TWO\n"), te(5, 0, 5, 0, "six\n") }), "line-wise")
  t.eq({ { old_start = 2, old_count = 1, new_start = 2, new_count = 2 } },
    render.hunks({ te(2, 3, 2, 5, "x\ny") }), "inside a line")
end)

t.test("old_from_unified() reverses a unified diff", function()
  local diff = table.concat({
    "--- a/lines.txt", "+++ b/lines.txt",
    "@@ -1,5 +1,5 @@", " one", "-two", "+TWO", " three", "-four", " five", "+six", "",
  }, "\n")
  t.eq({ "one", "two", "three", "four", "five" },
    render.old_from_unified({ "one", "TWO", "three", "five", "six" }, diff), "old text")
  t.eq({ "a", "b", "c" }, render.old_from_unified({ "a", "c" }, "@@ -2 +1,0 @@\n-b\n"), "pure deletion")
end)

local lines_buf
t.test("tools/details reloads the buffer and marks exactly the changed lines", function()
  lines_buf = edit("lines.txt")
  t.eq({ "one", "two", "three", "four", "five" }, vim.api.nvim_buf_get_lines(lines_buf, 0, -1, false), "before")
  t.write_file("lines.txt", "one\nTWO\nthree\nfive\nsix\n")
  agentls._handlers["tools/details"](nil, { callId = "synthetic-1", tool = "edit", details = {
    kind = "edit", uri = vim.uri_from_fname(t.path("lines.txt")),
    edits = { te(1, 0, 2, 0, "TWO\n"), te(3, 0, 4, 0, ""), te(5, 0, 5, 0, "six\n") },
  } })
  t.eq({ "one", "TWO", "three", "five", "six" }, vim.api.nvim_buf_get_lines(lines_buf, 0, -1, false), "reloaded")
  t.eq(false, vim.bo[lines_buf].modified, "reload leaves the buffer unmodified")
  t.eq({
    { 1, "hl", "AgentlsChange" },
    { 1, "sign", render.SIGN },
    { 1, "virt_above", "two|AgentlsDelete" },
    { 3, "virt_above", "four|AgentlsDelete" },
    { 4, "hl", "AgentlsAdd" },
  }, t.marks(lines_buf), "extmarks")
end)

t.test(":AgentlsDiff shows the old text against the file", function()
  vim.cmd("AgentlsDiff")
  local old = vim.api.nvim_get_current_buf()
  t.eq({ "one", "two", "three", "four", "five" }, vim.api.nvim_buf_get_lines(old, 0, -1, false), "old side")
  t.eq(true, vim.wo.diff, "diff mode")
  vim.cmd("tabclose")
end)

t.test("editing a marked line clears its marks only", function()
  local all = t.marks(lines_buf)
  vim.api.nvim_buf_set_lines(lines_buf, 0, 1, false, { "ONE" })
  vim.wait(50)
  t.eq(all, t.marks(lines_buf), "editing an unmarked line keeps every mark")
  vim.api.nvim_buf_set_lines(lines_buf, 4, 5, false, { "SIX" })
  vim.wait(50)
  t.eq({
    { 1, "hl", "AgentlsChange" },
    { 1, "sign", render.SIGN },
    { 1, "virt_above", "two|AgentlsDelete" },
    { 3, "virt_above", "four|AgentlsDelete" },
  }, t.marks(lines_buf), "extmarks after the user edit")
  vim.cmd("AgentlsClear")
  t.eq({}, t.marks(lines_buf), "after :AgentlsClear")
  vim.cmd("silent! edit!")
end)

t.test("tools/details reloads a hidden buffer and uses the unified diff for removed text", function()
  t.write_file("src/hidden.txt", "a\nb\nc\n")
  local buf = vim.fn.bufadd(t.path("src/hidden.txt"))
  vim.fn.bufload(buf)
  t.eq(-1, vim.fn.bufwinid(buf), "buffer is hidden")
  t.write_file("src/hidden.txt", "a\nB\nc\n")
  local got = render.show({ kind = "edit", uri = vim.uri_from_fname(t.path("src/hidden.txt")),
    unifiedDiff = "--- a/src/hidden.txt\n+++ b/src/hidden.txt\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n",
    edits = { te(1, 0, 1, 1, "B") } })
  t.eq(buf, got, "rendered buffer")
  t.eq({ "a", "B", "c" }, vim.api.nvim_buf_get_lines(buf, 0, -1, false), "reloaded")
  t.eq({ { 1, "hl", "AgentlsChange" }, { 1, "sign", render.SIGN }, { 1, "virt_above", "b|AgentlsDelete" } },
    t.marks(buf), "extmarks")
end)

t.test("tools/details with a unified diff for a file that is not loaded", function()
  t.write_file("src/new.txt", "x\ny\n")
  local buf = render.show({ kind = "create", uri = vim.uri_from_fname(t.path("src/new.txt")),
    unifiedDiff = "--- /dev/null\n+++ b/src/new.txt\n@@ -0,0 +1,2 @@\n+x\n+y\n", edits = { te(0, 0, 0, 0, "x\ny\n") } })
  t.eq(nil, buf, "no buffer")
  t.eq({}, render.last.old_lines, "old text of a created file")
end)

t.test("workspace/externalChange reloads the buffer", function()
  local buf = edit("hello.txt")
  t.write_file("hello.txt", "alpha\nbeta\ngamma\ndelta\n")
  vim.o.autoread = true
  agentls._handlers["workspace/externalChange"](nil, { uri = vim.uri_from_fname(t.path("hello.txt")), kind = "changed", readStale = true })
  vim.o.autoread = false
  t.eq({ "alpha", "beta", "gamma", "delta" }, vim.api.nvim_buf_get_lines(buf, 0, -1, false), "reloaded")
end)

local real_select = vim.ui.select
local function stub_select(answers, async)
  local asked = {}
  vim.ui.select = function(items, opts, on_choice)
    table.insert(asked, { items = items, prompt = opts.prompt })
    local a = table.remove(answers, 1)
    if async then
      vim.defer_fn(function() on_choice(a) end, 30)
    else
      on_choice(a)
    end
  end
  return asked
end

t.test("tools/confirm: Deny answers rejectOnce", function()
  local asked = stub_select({ "Deny" })
  local res = agentls._handlers["tools/confirm"](nil, { callId = "c1", tool = "bash", arguments = { command = "rm -rf x" }, reason = "runs a command" })
  t.eq({ decision = "rejectOnce" }, res, "reply")
  t.eq({ "Allow once", "Always allow", "Deny", "Deny with message…" }, asked[1].items, "choices")
  t.ok(asked[1].prompt:find("bash", 1, true), asked[1].prompt)
end)

t.test("tools/confirm: a command's question shows the command and offers no Show change", function()
  local asked = stub_select({ "Allow once" })
  local cmd = "npm test -- --watch=false\n  && echo done " .. string.rep("x", 300)
  local res = agentls._handlers["tools/confirm"](nil, { callId = "c1b", tool = "bash", arguments = { command = cmd },
    reason = "the rule mode:default asks the user before this call",
    preview = { kind = "command", command = cmd, readOnly = false, destructive = false, reasons = {} } })
  t.eq({ decision = "allowOnce" }, res, "reply")
  t.eq({ "Allow once", "Always allow", "Deny", "Deny with message…" }, asked[1].items, "no Show change for a command")
  t.ok(asked[1].prompt:find("bash `npm test -- --watch=false ⏎ && echo done x", 1, true), asked[1].prompt)
  t.ok(not asked[1].prompt:find("\n", 1, true), "one line: " .. asked[1].prompt)
  local shown = asked[1].prompt:match("`(.*)`%? the rule mode:default asks")
  t.ok(shown, asked[1].prompt)
  t.eq(201, vim.fn.strchars(shown), "the first 200 characters and …")
end)

t.test("tools/confirm: Show change opens the preview then asks again", function()
  local tabs = #vim.api.nvim_list_tabpages()
  local asked = stub_select({ "Show change", "Always allow" }, true)
  local res = agentls._handlers["tools/confirm"](nil, { callId = "c2", tool = "edit", reason = "edits a file",
    arguments = {}, preview = { kind = "edit", uri = vim.uri_from_fname(t.path("lines.txt")),
      edits = { te(0, 0, 1, 0, "ONE\n") }, unifiedDiff = "@@ -1 +1 @@\n-one\n+ONE\n" } })
  t.eq({ decision = "allowAlways" }, res, "reply")
  t.eq(2, #asked, "asked twice")
  t.eq("Show change", asked[1].items[4], "show choice")
  t.eq(tabs + 1, #vim.api.nvim_list_tabpages(), "preview tab")
  t.eq({ "ONE", "TWO", "three", "five", "six" }, vim.api.nvim_buf_get_lines(0, 0, -1, false), "proposed side")
  vim.cmd("tabclose")
end)

t.test("tools/confirm yields inside a coroutine (0.10+ request handlers)", function()
  stub_select({ "Allow once" }, true)
  local reply
  local co = coroutine.create(function()
    reply = agentls._handlers["tools/confirm"](nil, { callId = "c3", tool = "write", reason = "writes", arguments = {} })
  end)
  assert(coroutine.resume(co))
  t.eq("suspended", coroutine.status(co), "handler yielded while the picker is open")
  t.wait(2000, function() return reply ~= nil end, "reply after the picker answered")
  t.eq({ decision = "allowOnce" }, reply, "reply")
end)

t.test("tools/confirm from the server (permissions ask)", function()
  agentls.stop()
  vim.wait(2000, function() return #require("agentls.compat").get_clients("agentls") == 0 end)
  agentls.setup({ cmd = { t.bin }, root_dir = t.ws, permissions = { ask = { "read" } } })
  local asked = stub_select({ "Deny" })
  local res = agentls.call_sync("read", { path = "hello.txt" }, 5000)
  if #asked == 0 then
    t.skip("server does not send tools/confirm for permissions.ask yet")
  end
  t.eq(true, res.isError, "denied call is an error result")
  t.ok(agentls.text(res):find("denied", 1, true), agentls.text(res))
end)
vim.ui.select = real_select

t.test("setup({limits}) restarts the server with them: descriptions and results follow", function()
  agentls.setup({ cmd = { t.bin }, root_dir = t.ws, limits = { readLines = 4, read = { lineChars = 300 } } })
  t.wait(5000, function() return agentls.initialize_result(t.ws) ~= nil end, "initialize")
  local read
  for _, tool in ipairs(assert(agentls.tools())) do
    if tool.name == "read" then read = tool end
  end
  t.ok(read and read.description:find("A result is at most 4 lines", 1, true), "read description: " .. vim.inspect(read and read.description))
  -- 4 lines in all: the header, two lines of the file and the notice.
  t.write_file("five.txt", "a\nb\nc\nd\ne\n")
  local res = assert(agentls.call_sync("read", { path = "five.txt" }, 5000))
  t.ok(agentls.text(res):find("Use offset=3 to continue", 1, true), agentls.text(res))
end)

t.test("real edit flow: buffer shows the new text, marks on the changed lines", function()
  agentls.stop()
  vim.wait(2000, function() return #require("agentls.compat").get_clients("agentls") == 0 end)
  agentls.setup({ cmd = { t.bin }, root_dir = t.ws, mode = "acceptEdits" })
  local tools = assert(agentls.tools())
  local has_edit = false
  for _, tool in ipairs(tools) do
    if tool.name == "edit" then has_edit = true end
  end
  if not has_edit then
    t.skip("the server has no edit tool yet")
  end
  t.write_file("src/main.go", 'package main\n\nfunc main() {\n\tprintln("hi")\n}\n')
  local buf = edit("src/main.go")
  local details
  agentls.config.on_details = function(d) details = d end
  assert(agentls.call_sync("read", { path = "src/main.go" }, 5000))
  local res, err = agentls.call_sync("edit", { path = "src/main.go",
    edits = { { oldText = '\tprintln("hi")\n', newText = '\tprintln("hello")\n\tprintln("world")\n' } } }, 10000)
  t.ok(res, vim.inspect(err))
  t.eq(false, res.isError, agentls.text(res))
  t.ok(details, "no tools/details")
  t.eq({ "package main", "", "func main() {", '\tprintln("hello")', '\tprintln("world")', "}" },
    vim.api.nvim_buf_get_lines(buf, 0, -1, false), "buffer text")
  local m = t.marks(buf)
  local hl_rows, virt = {}, nil
  for _, x in ipairs(m) do
    if x[2] == "hl" then table.insert(hl_rows, x[1]) end
    if x[2]:match("^virt") then virt = x end
  end
  t.eq({ 3, 4 }, hl_rows, "highlighted rows: " .. vim.inspect(m))
  t.ok(virt and virt[3]:find('println("hi")', 1, true), "removed line shown: " .. vim.inspect(m))
end)

t.test("an external write to a read file reloads its buffer (real watcher)", function()
  t.write_file("watched.txt", "before\n")
  local buf = edit("watched.txt")
  local autoread = vim.o.autoread
  vim.o.autoread = true -- Neovim's default; an earlier test turned it off
  local res, err = agentls.call_sync("read", { path = "watched.txt" }, 5000)
  t.ok(res and not res.isError, vim.inspect(err or res))
  -- Another process writes the file; the server's watcher announces it and
  -- the plugin reloads the buffer (checktime), with no synthetic notification.
  vim.loop.sleep(20) -- a distinct mtime from the read
  t.write_file("watched.txt", "after the external write\n")
  t.wait(3000, function()
    return vim.api.nvim_buf_get_lines(buf, 0, -1, false)[1] == "after the external write"
  end, "the buffer to reload after workspace/externalChange")
  vim.o.autoread = autoread
end)

vim.notify = real_notify
agentls.stop()
vim.wait(2000, function() return #require("agentls.compat").get_clients("agentls") == 0 end)
t.finish()
