-- The editors/nvim plugin's documented options, commands and behaviour
-- (README.md, doc/agentls.txt) that the other specs do not cover: setup
-- without a server, a missing binary, the lazy.nvim setup, the Lua API,
-- restarts and server death. Runs against the real binary.
local here = vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":h")
local t = dofile(here .. "/helpers.lua")

vim.opt.rtp:prepend(t.plugin)
vim.cmd("runtime plugin/agentls.lua")
vim.cmd("cd " .. vim.fn.fnameescape(t.ws))

-- Defined before setup(): the plugin links its groups with `highlight default`.
vim.cmd("highlight AgentlsDelete ctermfg=1 guifg=#ff0000")

local agentls = require("agentls")
local render = require("agentls.render")
local compat = require("agentls.compat")

local notes = {}
local real_notify, real_select, real_input = vim.notify, vim.ui.select, vim.ui.input
vim.notify = function(msg, level)
  table.insert(notes, { msg = tostring(msg), level = level })
end

local function noted(pat, level)
  for _, n in ipairs(notes) do
    if n.msg:find(pat, 1, true) and (level == nil or n.level == level) then
      return n
    end
  end
end

local function open(path)
  vim.cmd("edit " .. vim.fn.fnameescape(path))
  return vim.api.nvim_get_current_buf()
end

local function started(root)
  t.wait(5000, function() return agentls.initialize_result(root) ~= nil end, "initialize of " .. tostring(root))
end

local function hl_rows(buf)
  local rows = {}
  for _, m in ipairs(t.marks(buf)) do
    if m[2] == "hl" then table.insert(rows, m[1]) end
  end
  return rows
end

local function hl_def(group)
  return vim.trim(vim.fn.execute("highlight " .. group))
end

--- read then edit (edits of existing files need a fresh read).
local function read_edit(rel, old, new, timeout)
  local r, err = agentls.call_sync("read", { path = rel }, 5000)
  t.ok(r and not r.isError, "read " .. rel .. ": " .. vim.inspect(err or agentls.text(r)))
  return agentls.call_sync("edit", { path = rel, edits = { { oldText = old, newText = new } } }, timeout or 10000)
end

local BIN = { t.bin }
local TEST_ENV = { AGENTLS_TEST_TOOLS = "1" }

-- 1. Setup without a server ---------------------------------------------------

t.test("setup() defaults are the documented ones; autostart=false starts nothing", function()
  agentls.setup({ autostart = false })
  local c = agentls.config
  t.eq({ "agentls" }, c.cmd, "cmd")
  t.eq(true, c.autostart == false, "autostart override kept")
  t.eq(true, c.render, "render")
  t.eq(true, c.progress, "progress")
  t.eq(1000, c.progress_interval_ms, "progress_interval_ms")
  t.eq(660000, c.timeout_ms, "timeout_ms")
  t.eq(10000, c.list_timeout_ms, "list_timeout_ms")
  t.eq(true, c.sync_buffers, "sync_buffers")
  t.eq("default", c.mode, "mode (README's example value)")
  t.eq(0, #compat.get_clients("agentls"), "no client with autostart=false")
  t.eq(nil, agentls.initialize_result(t.ws), "no initialize result")
end)

t.test("highlight groups link to Diff* and keep a user's own definition", function()
  t.ok(hl_def("AgentlsAdd"):find("links to DiffAdd", 1, true), hl_def("AgentlsAdd"))
  t.ok(hl_def("AgentlsChange"):find("links to DiffChange", 1, true), hl_def("AgentlsChange"))
  t.ok(hl_def("AgentlsSign"):find("xxx", 1, true), "AgentlsSign undefined")
  local del = hl_def("AgentlsDelete")
  t.ok(del:find("ctermfg=1", 1, true) and not del:find("links to", 1, true), "user definition overridden: " .. del)
end)

t.test("highlight links survive a :colorscheme change", function()
  vim.cmd("silent! colorscheme default")
  t.ok(hl_def("AgentlsAdd"):find("links to DiffAdd", 1, true), "after :colorscheme: " .. hl_def("AgentlsAdd"))
end)

t.test("every documented command exists", function()
  for _, cmd in ipairs({ "AgentlsTools", "AgentlsCall", "AgentlsDiff", "AgentlsLog", "AgentlsClear" }) do
    t.eq(2, vim.fn.exists(":" .. cmd), ":" .. cmd)
  end
end)

t.test(":AgentlsDiff before any change says so (no error)", function()
  notes = {}
  local tabs = #vim.api.nvim_list_tabpages()
  vim.cmd("AgentlsDiff")
  t.ok(noted("no change to show yet"), vim.inspect(notes))
  t.eq(tabs, #vim.api.nvim_list_tabpages(), "no tab opened")
end)

t.test("root(): git root of the cwd, root_dir string or function, else the cwd", function()
  vim.cmd("cd " .. vim.fn.fnameescape(t.path("src")))
  t.eq(t.ws, agentls.root(), "git root from a subdirectory")
  vim.cmd("cd " .. vim.fn.fnameescape(t.ws))
  agentls.setup({ autostart = false, root_dir = t.path("src") .. "/" })
  t.eq(t.path("src"), agentls.root(), "root_dir string (trailing slash dropped)")
  agentls.setup({ autostart = false, root_dir = function() return t.path("src") end })
  t.eq(t.path("src"), agentls.root(), "root_dir function")
  local plain = vim.fn.tempname()
  vim.fn.mkdir(plain, "p")
  vim.cmd("cd " .. vim.fn.fnameescape(plain))
  agentls.setup({ autostart = false })
  t.eq(vim.loop.fs_realpath(plain), vim.loop.fs_realpath(agentls.root()), "cwd without a git root")
  vim.cmd("cd " .. vim.fn.fnameescape(t.ws))
end)

-- The warnings about a missing binary among notes.
local function missing_warnings(missing)
  local n = 0
  for _, note in ipairs(notes) do
    if note.msg:find(missing .. " not found", 1, true) then
      n = n + 1
      t.eq(vim.log.levels.WARN, note.level, "level of: " .. note.msg)
      t.ok(note.msg:find("go install github.com/agentls/agentls/cmd/agentls@latest", 1, true),
        "names how to install it: " .. note.msg)
    end
  end
  return n
end

t.test("binary missing: clear messages, no Lua errors, health ERROR", function()
  notes = {}
  local missing = t.ws .. "/no/such/agentls"
  local ok, err = pcall(agentls.setup, { cmd = { missing }, root_dir = t.ws })
  t.ok(ok, "setup raised: " .. tostring(err))
  t.eq(1, missing_warnings(missing), "one warning naming the command and the install: " .. vim.inspect(notes))
  t.eq(nil, noted("agentls", vim.log.levels.ERROR), "no ERROR for a missing binary: " .. vim.inspect(notes))
  local res, cerr = agentls.call_sync("read", { path = "hello.txt" }, 2000)
  t.eq(nil, res, "call_sync result")
  t.ok(cerr and type(cerr.message) == "string" and cerr.message:find(missing .. " not found", 1, true),
    "call_sync error names the missing binary: " .. vim.inspect(cerr))
  local tools, terr = agentls.tools()
  t.eq(nil, tools, "tools()")
  t.ok(terr and terr.message, vim.inspect(terr))
  notes = {}
  ok, err = pcall(vim.cmd, "AgentlsTools")
  t.ok(ok, ":AgentlsTools raised: " .. tostring(err))
  t.ok(noted("tools/list failed", vim.log.levels.ERROR), vim.inspect(notes))
  notes = {}
  ok, err = pcall(vim.cmd, [[AgentlsCall read {"path": "hello.txt"}]])
  t.ok(ok, ":AgentlsCall raised: " .. tostring(err))
  t.wait(2000, function() return noted("read failed", vim.log.levels.ERROR) end, ":AgentlsCall error message")
  vim.cmd("checkhealth agentls")
  local text = table.concat(t.lines(0), "\n")
  vim.cmd("bwipeout!")
  t.ok(t.health_has(text, "ERROR", "agentls binary not found: " .. missing), text)
  t.ok(text:find("ripgrep", 1, true), "ripgrep check missing:\n" .. text)
  t.ok(text:find("no agentls client running", 1, true), text)
end)

t.test("binary missing: one warning per session, not one per start, call or setup()", function()
  local missing = t.ws .. "/no/such/agentls"
  notes = {}
  agentls.setup({ cmd = { missing }, root_dir = t.ws })
  agentls.call_sync("read", { path = "hello.txt" }, 2000)
  agentls.tools()
  agentls.start(t.ws)
  t.eq(0, missing_warnings(missing), "warned again in the same session: " .. vim.inspect(notes))
  local other = t.ws .. "/no/such/other-agentls"
  agentls.setup({ cmd = { other }, root_dir = t.ws })
  t.eq(1, missing_warnings(other), "another missing command gets its own warning: " .. vim.inspect(notes))
  local id, why = agentls.start(t.ws)
  t.eq(nil, id, "start() of a missing binary")
  t.ok(why and why:find(other .. " not found", 1, true), "start() says why: " .. tostring(why))
end)

-- The README's lazy.nvim snippet appends the plugin to 'rtp' in config():
-- plugin/ is never sourced and nothing ran :helptags on its doc/.
--- A fresh copy of the plugin without doc/tags; returns its directory.
local function plugin_copy()
  local dir = vim.fn.tempname()
  vim.fn.system({ "cp", "-R", t.plugin, dir })
  os.remove(dir .. "/doc/tags")
  t.eq(0, vim.fn.filereadable(dir .. "/doc/tags"), "copy without doc/tags")
  return dir
end

--- Runs lua in a headless Neovim (-u NONE: no plugin/ sourced) with dir on 'rtp'.
local function nvim_with(dir, lua)
  return vim.fn.system({ vim.v.progpath, "--headless", "-u", "NONE", "-i", "NONE", "-n",
    "--cmd", "set rtp+=" .. dir, "-c", "lua " .. lua, "-c", "qall!" })
end

t.test("setup() alone defines every command and makes :help agentls work (lazy.nvim snippet)", function()
  local dir = plugin_copy()
  local out = nvim_with(dir, [[
    local ok, err = pcall(require('agentls').setup, { autostart = false })
    local cmds = {}
    for _, c in ipairs({ 'AgentlsTools', 'AgentlsCall', 'AgentlsDiff', 'AgentlsLog', 'AgentlsClear' }) do
      table.insert(cmds, c .. '=' .. vim.fn.exists(':' .. c))
    end
    local help = pcall(vim.cmd, 'help agentls-api')
    io.stderr:write('SETUP=' .. tostring(ok) .. ' ' .. tostring(err) .. ' ' .. table.concat(cmds, ' ')
      .. ' HELP=' .. tostring(help) .. ' BT=' .. vim.bo.buftype .. ' FILE=' .. vim.fn.expand('%:t')
      .. ' AT=' .. (vim.fn.getline('.'):match('%*agentls%-api%*') or '') .. '\n')]])
  t.ok(out:find("SETUP=true", 1, true), "setup(): " .. out)
  for _, c in ipairs({ "AgentlsTools", "AgentlsCall", "AgentlsDiff", "AgentlsLog", "AgentlsClear" }) do
    t.ok(out:find(c .. "=2", 1, true), ":" .. c .. " after setup() without plugin/: " .. out)
  end
  -- The help window shows agentls.txt at the tag ('filetype' is not
  -- checked: from 0.10 on, -u NONE leaves it empty in help buffers).
  t.ok(out:find("HELP=true BT=help FILE=agentls.txt AT=*agentls-api*", 1, true), ":help agentls-api after setup(): " .. out)
  t.eq(1, vim.fn.filereadable(dir .. "/doc/tags"), "doc/tags generated")
end)

t.test("setup() and plugin/agentls.lua define the commands once, in either order, and keep a user's redefinition", function()
  local out = nvim_with(plugin_copy(), [[
    local a = require('agentls')
    local ok1, e1 = pcall(a.setup, { autostart = false })
    local ok2, e2 = pcall(vim.cmd, 'runtime plugin/agentls.lua')
    vim.api.nvim_create_user_command('AgentlsLog', 'echo "mine"', {})
    local ok3, e3 = pcall(a.setup, { autostart = false })
    local mine = vim.api.nvim_get_commands({})['AgentlsLog'].definition
    io.stderr:write(string.format('R=%s,%s,%s %s %s %s DEF=%s\n', ok1, ok2, ok3, e1, e2, e3, mine))]])
  t.ok(out:find("R=true,true,true", 1, true), out)
  t.ok(out:find('DEF=echo "mine"', 1, true), "setup() redefined :AgentlsLog: " .. out)
end)

t.test("setup() never fails on a doc/ whose tags cannot be written", function()
  local dir = plugin_copy()
  vim.fn.mkdir(dir .. "/doc/tags", "p") -- a directory: unreadable as a file, not writable as one
  local out = nvim_with(dir, [[
    local ok, err = pcall(require('agentls').setup, { autostart = false })
    io.stderr:write('SETUP=' .. tostring(ok) .. ' ' .. tostring(err) .. ' EXISTS=' .. vim.fn.exists(':AgentlsTools') .. '\n')]])
  t.ok(out:find("SETUP=true", 1, true) and out:find("EXISTS=2", 1, true), out)
end)

t.test("README: lazy.nvim and packer snippets, agent loop with tools{format='openai'}", function()
  local readme = table.concat(vim.fn.readfile(t.repo .. "/editors/nvim/README.md"), "\n")
  t.ok(readme:find("lazy.nvim", 1, true) and readme:find("packer", 1, true), "install snippets")
  local loop = readme:match("## A minimal agent loop.-```lua\n(.-)```")
  t.ok(loop, "no agent loop block")
  t.ok(loop:find('tools({ format = "openai" })', 1, true), "tools{format='openai'}")
  t.ok(loop:find("agentls.call", 1, true), ".call")
  local n = select(2, loop:gsub("\n", ""))
  t.ok(n <= 15, "loop is " .. n .. " lines")
end)

t.test("doc: every |tag| reference resolves, every command/function is tagged", function()
  local dir = vim.fn.tempname()
  vim.fn.mkdir(dir, "p")
  local doc = vim.fn.readfile(t.repo .. "/editors/nvim/doc/agentls.txt")
  vim.fn.writefile(doc, dir .. "/agentls.txt")
  vim.cmd("helptags " .. vim.fn.fnameescape(dir))
  local known_tags = {}
  for _, f in ipairs({ dir .. "/tags", vim.env.VIMRUNTIME .. "/doc/tags" }) do
    for _, l in ipairs(vim.fn.readfile(f)) do
      known_tags[l:match("^[^\t]+")] = true
    end
  end
  local missing = {}
  for _, l in ipairs(doc) do
    for ref in l:gmatch("|([^|%s]+)|") do
      if not known_tags[ref] then table.insert(missing, ref) end
    end
  end
  for _, tag in ipairs({ "agentls.call_sync()", "agentls.tools()", "agentls.cancel()", "agentls.text()",
    "agentls.stop()", ":AgentlsTools", ":AgentlsCall", ":AgentlsLog", ":AgentlsClear", "agentls-confirm",
    "agentls-health", "agentls-api", "agentls-commands" }) do
    if not known_tags[tag] then table.insert(missing, "*" .. tag .. "*") end
  end
  t.eq({}, missing, "unresolved help references")
end)

-- 2. Server, sync_buffers = false (the reload path of |agentls-render|) -------

local details_seen = {}
t.test("autostart=false: the first call starts the server lazily; list_timeout_ms bounds tools()", function()
  t.stop_all()
  agentls.setup({ cmd = BIN, cmd_env = TEST_ENV, root_dir = t.ws, mode = "acceptEdits", sync_buffers = false,
    autostart = false, list_timeout_ms = 1,
    on_details = function(d, params) table.insert(details_seen, { d = d, params = params }) end })
  t.eq(0, #compat.get_clients("agentls"), "no client before the first use")
  local tools, err = agentls.tools()
  t.eq(nil, tools, "tools() within 1 ms")
  t.eq(-32800, err and err.code, "timed out: " .. vim.inspect(err))
  local res, cerr = agentls.call_sync("read", { path = "hello.txt" }, 5000)
  t.ok(res and not res.isError, vim.inspect(cerr or res))
  t.eq(1, #compat.get_clients("agentls"), "started by the call")
  -- Back to the default list timeout for the tests below (the client keeps running).
  agentls.setup({ cmd = BIN, cmd_env = TEST_ENV, root_dir = t.ws, mode = "acceptEdits", sync_buffers = false,
    autostart = false, on_details = agentls.config.on_details })
  t.eq(10000, agentls.config.list_timeout_ms, "list_timeout_ms reset")
end)

t.test("call() returns the callId echoed in the result; tools(opts, callback) is async", function()
  local got
  local id = agentls.call("read", { path = "hello.txt" }, function(_, r) got = r end)
  t.ok(type(id) == "string" and id ~= "", "callId " .. vim.inspect(id))
  t.wait(5000, function() return got ~= nil end, "result")
  t.eq(id, got.callId, "callId")
  local list, lerr, ret
  ret = agentls.tools({ format = "anthropic", timeout_ms = 5000 }, function(e, l) lerr, list = e, l end)
  t.eq(nil, ret, "returns nothing with a callback")
  t.wait(5000, function() return list ~= nil or lerr ~= nil end, "callback")
  t.ok(list and list[1].input_schema, vim.inspect(lerr))
  local mcp = assert(agentls.tools({ format = "mcp", timeout_ms = 5000 }))
  t.ok(mcp[1].inputSchema and mcp[1].annotations, "mcp shape")
end)

t.test("text(): joins text contents, describes images, says a missing result timed out; cancel(unknown) is false", function()
  t.eq("a\nb", agentls.text({ content = { { type = "text", text = "a" }, { type = "text", text = "b" } } }), "join")
  t.ok(agentls.text({ content = { { type = "image", data = "QUJD", mimeType = "image/png" } } }):find("image/png", 1, true), "image")
  t.ok(agentls.text(nil):find("timed out", 1, true), "nil (call_sync timed out): " .. agentls.text(nil))
  t.eq(false, agentls.cancel("no-such-call"), "cancel unknown")
end)

t.test("the README loop's text(call_sync(...)) of a timed-out call tells the model it timed out", function()
  local res, err = agentls.call_sync("test_block", { seconds = 5 }, 100)
  t.eq(nil, res, "no result")
  t.eq("timed out", err and err.message, "error")
  local text = agentls.text(res)
  t.ok(text ~= "" and text:find("timed out", 1, true), "text: " .. vim.inspect(text))
end)

t.test("{} encodes as [] in Lua: API, raw wire and README loop all work", function()
  local res = assert(agentls.call_sync("ls", {}, 5000))
  t.eq(false, res.isError, agentls.text(res))
  t.ok(agentls.text(res):find("hello.txt", 1, true), agentls.text(res))
  res = assert(agentls.call_sync("ls", nil, 5000))
  t.eq(false, res.isError, "nil args")
  res = assert(agentls.call_sync("ls", vim.empty_dict(), 5000))
  t.eq(false, res.isError, "empty_dict args")
  -- The server's side: arguments [] straight on the wire.
  local client = vim.lsp.get_client_by_id(agentls.start(t.ws))
  t.eq("[]", vim.json.encode({}), "Lua {} encoding")
  local done, rerr, rres
  compat.request(client, "tools/call", { name = "ls", arguments = {} }, function(e, r) done, rerr, rres = true, e, r end)
  t.wait(5000, function() return done end, "raw call")
  t.ok(rres and not rres.isError, "arguments [] refused: " .. vim.inspect(rerr or rres))
  done = false
  compat.request(client, "tools/callBatch", { calls = { { name = "ls", arguments = {} } } }, function(e, r) done, rerr, rres = true, e, r end)
  t.wait(5000, function() return done end, "raw batch")
  t.ok(rres and rres.results and rres.results[1] and not rres.results[1].isError, vim.inspect(rerr or rres))
end)

t.test("README agent loop runs as written (stubbed model)", function()
  local readme = table.concat(vim.fn.readfile(t.repo .. "/editors/nvim/README.md"), "\n")
  local loop = assert(readme:match("## A minimal agent loop.-```lua\n(.-)```"))
  local turns, final = 0, nil
  _G.chat = function(messages, tools)
    turns = turns + 1
    t.eq("function", tools[1].type, "openai tools")
    if turns == 1 then
      return { role = "assistant", tool_calls = {
        { id = "a", ["function"] = { name = "ls", arguments = "{}" } },
        { id = "b", ["function"] = { name = "read", arguments = '{"path":"hello.txt"}' } },
      } }
    end
    final = messages
    return { role = "assistant", content = "done" }
  end
  local chunk = assert(load(loop, "README loop"))
  chunk()
  _G.chat = nil
  t.eq(2, turns, "model turns")
  t.eq("tool", final[3].role, "tool message")
  t.ok(final[3].content:find("hello.txt", 1, true), "ls via '{}': " .. final[3].content)
  t.ok(final[4].content:find("1→", 1, true), "read: " .. final[4].content)
end)

local sync_off_buf
t.test("#8: edit of a loaded file (sync off) reloads it; marks exactly on the changed lines; on_details(d, params)", function()
  t.write_file("r1.txt", "one\ntwo\nthree\nfour\nfive\n")
  local buf = open(t.path("r1.txt"))
  sync_off_buf = buf
  details_seen = {}
  local res, err = read_edit("r1.txt", "two\nthree\n", "TWO\n2b\nthree\n")
  t.ok(res, vim.inspect(err))
  t.eq(false, res.isError, agentls.text(res))
  t.eq({ "one", "TWO", "2b", "three", "four", "five" }, t.lines(buf), "buffer reloaded")
  t.eq(false, vim.bo[buf].modified, "not modified")
  t.eq({
    { 1, "hl", "AgentlsChange" },
    { 1, "sign", render.SIGN },
    { 1, "virt_above", "two|AgentlsDelete" },
    { 2, "hl", "AgentlsChange" },
  }, t.marks(buf), "extmarks")
  t.eq(1, #details_seen, "on_details calls")
  t.eq(res.callId, details_seen[1].params.callId, "params.callId")
  t.eq("edit", details_seen[1].params.tool, "params.tool")
  t.eq("edit", details_seen[1].d.kind, "details.kind")
end)

t.test("after a reload, undo brings the old text back (|agentls-render|)", function()
  local buf = sync_off_buf
  vim.api.nvim_set_current_buf(buf)
  vim.cmd("silent undo")
  t.eq({ "one", "two", "three", "four", "five" }, t.lines(buf), "after :undo")
  vim.cmd("silent edit!")
end)

t.test(":AgentlsDiff: old text in a read-only scratch buffer vs the file, both in diff mode", function()
  vim.cmd("AgentlsDiff")
  local wins = vim.api.nvim_tabpage_list_wins(0)
  t.eq(2, #wins, "windows in the diff tab")
  local left, right = vim.api.nvim_win_get_buf(wins[1]), vim.api.nvim_win_get_buf(wins[2])
  t.eq({ "one", "two", "three", "four", "five" }, t.lines(left), "old side")
  t.eq(t.path("r1.txt"), vim.api.nvim_buf_get_name(right), "file side")
  t.eq("nofile", vim.bo[left].buftype, "scratch buftype")
  t.eq(false, vim.bo[left].modifiable, "scratch not modifiable")
  t.ok(vim.wo[wins[1]].diff and vim.wo[wins[2]].diff, "diff mode on both")
  vim.cmd("tabclose")
end)

t.test("write of a loaded file: reloaded, only the changed line marked", function()
  t.write_file("w1.txt", "a\nb\nc\nd\n")
  local buf = open(t.path("w1.txt"))
  assert(agentls.call_sync("read", { path = "w1.txt" }, 5000))
  local res = assert(agentls.call_sync("write", { path = "w1.txt", content = "a\nB\nc\nd\n" }, 10000))
  t.eq(false, res.isError, agentls.text(res))
  t.eq({ "a", "B", "c", "d" }, t.lines(buf), "reloaded")
  t.eq({ 1 }, hl_rows(buf), "highlighted rows: " .. vim.inspect(t.marks(buf)))
end)

t.test(":AgentlsClear clears the marks of every buffer", function()
  assert(read_edit("r1.txt", "four\n", "FOUR\n")) -- r1's marks went with the undo above
  local bufs = {}
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    if #vim.api.nvim_buf_get_extmarks(b, render.ns, 0, -1, {}) > 0 then table.insert(bufs, b) end
  end
  t.ok(#bufs >= 2, "buffers with marks: " .. #bufs)
  vim.cmd("AgentlsClear")
  for _, b in ipairs(bufs) do
    t.eq({}, t.marks(b), "marks of buffer " .. b)
  end
end)

t.test("sync off: a buffer with unsaved changes is left alone, warned about, and :AgentlsDiff compares", function()
  t.write_file("d1.txt", "1\n2\n3\n")
  local buf = open(t.path("d1.txt"))
  vim.api.nvim_buf_set_lines(buf, 0, 1, false, { "user" })
  notes = {}
  local res = assert(read_edit("d1.txt", "3\n", "THREE\n"))
  t.eq(false, res.isError, agentls.text(res))
  t.eq("1\n2\nTHREE\n", t.read_file("d1.txt"), "disk")
  t.eq({ "user", "2", "3" }, t.lines(buf), "buffer untouched")
  t.eq(true, vim.bo[buf].modified, "still modified")
  t.eq({}, t.marks(buf), "no marks")
  t.ok(noted(":AgentlsDiff", vim.log.levels.WARN), vim.inspect(notes))
  vim.cmd("AgentlsDiff")
  t.eq({ "1", "2", "3" }, t.lines(0), "old side")
  vim.cmd("tabclose")
  vim.api.nvim_buf_call(buf, function() vim.cmd("silent edit!") end)
end)

t.test("render=false: no marks, on_details still called", function()
  t.stop_all()
  local got = 0
  agentls.setup({ cmd = BIN, root_dir = t.ws, mode = "acceptEdits", sync_buffers = false, render = false,
    on_details = function() got = got + 1 end })
  t.write_file("nr.txt", "x\ny\n")
  local buf = open(t.path("nr.txt"))
  local res = assert(read_edit("nr.txt", "y\n", "Y\n"))
  t.eq(false, res.isError, agentls.text(res))
  t.eq(1, got, "on_details")
  t.eq({}, t.marks(buf), "marks")
end)

t.test("tools/progress: latest output line, throttled per call, progress=false silences", function()
  local h = agentls._handlers["tools/progress"]
  agentls.setup({ autostart = false, cmd = BIN, root_dir = t.ws, progress_interval_ms = 100000 })
  notes = {}
  h(nil, { callId = "p1", tool = "bash", output = "first\nsecond line\n" })
  h(nil, { callId = "p1", tool = "bash", output = "third\n" })
  h(nil, { callId = "p2", tool = "bash", message = "other call" })
  t.eq(2, #notes, "notifications: " .. vim.inspect(notes))
  t.ok(notes[1].msg:find("bash: second line", 1, true), notes[1].msg)
  t.ok(notes[2].msg:find("other call", 1, true), notes[2].msg)
  agentls.setup({ autostart = false, cmd = BIN, root_dir = t.ws, progress_interval_ms = 0 })
  notes = {}
  h(nil, { callId = "p3", tool = "bash", output = "a" })
  h(nil, { callId = "p3", tool = "bash", output = "b" })
  t.eq(2, #notes, "interval 0: every line")
  agentls.setup({ autostart = false, cmd = BIN, root_dir = t.ws, progress = false })
  notes = {}
  h(nil, { callId = "p4", tool = "bash", output = "quiet" })
  t.eq(0, #notes, "progress=false")
  t.ok(table.concat(agentls.log_lines(), "\n"):find("quiet", 1, true), "still logged")
end)

t.test("timeout_ms is call_sync's default wait; on timeout the call is cancelled", function()
  t.stop_all()
  agentls.setup({ cmd = BIN, cmd_env = TEST_ENV, root_dir = t.ws, sync_buffers = false, timeout_ms = 300 })
  started(t.ws)
  local t0 = vim.loop.hrtime()
  local res, err = agentls.call_sync("test_block", { seconds = 20 })
  local ms = (vim.loop.hrtime() - t0) / 1e6
  t.eq(nil, res, "result")
  t.eq(-32800, err and err.code, vim.inspect(err))
  t.ok(ms < 2000, "waited " .. ms .. " ms")
  t.eq(nil, next(agentls._state.calls), "no call left pending")
  res = agentls.call_sync("read", { path = "hello.txt" }, 3000)
  t.ok(res and not res.isError, "server answers after the cancelled call")
end)

t.test("mode readOnly refuses edits; permissions.deny refuses the tool", function()
  t.stop_all()
  agentls.setup({ cmd = BIN, root_dir = t.ws, sync_buffers = false, mode = "readOnly" })
  local before = t.read_file("lines.txt")
  local res = assert(read_edit("lines.txt", "one\n", "ONE\n"))
  t.eq(true, res.isError, "readOnly edit: " .. agentls.text(res))
  t.eq(before, t.read_file("lines.txt"), "file")
  t.stop_all()
  agentls.setup({ cmd = BIN, root_dir = t.ws, sync_buffers = false, mode = "acceptEdits",
    permissions = { deny = { "Read(hello.txt)" }, allow = {} } })
  res = assert(agentls.call_sync("read", { path = "hello.txt" }, 5000))
  t.eq(true, res.isError, "denied read: " .. agentls.text(res))
  res = assert(agentls.call_sync("read", { path = "lines.txt" }, 5000))
  t.eq(false, res.isError, "another file still readable: " .. agentls.text(res))
end)

t.test("setup() again with a new mode restarts the running server with it", function()
  t.stop_all()
  agentls.setup({ cmd = BIN, root_dir = t.ws, sync_buffers = false, mode = "acceptEdits" })
  started(t.ws)
  local old = agentls.start(t.ws)
  agentls.setup({ cmd = BIN, root_dir = t.ws, sync_buffers = false, mode = "readOnly" })
  local before = t.read_file("lines.txt")
  local res = assert(read_edit("lines.txt", "one\n", "ONE\n"))
  if not res.isError then
    t.write_file("lines.txt", before)
  end
  t.eq(true, res.isError, "edit after setup({mode='readOnly'})")
  t.ok(agentls.start(t.ws) ~= old, "the edit went to the old client")
  t.wait(3000, function() return vim.lsp.client_is_stopped(old) end, "the old client to stop")
end)

t.test("setup() with the same start options (others changed) restarts nothing", function()
  local id = agentls.start(t.ws)
  started(t.ws)
  agentls.setup({ cmd = BIN, root_dir = t.ws, sync_buffers = false, mode = "readOnly" })
  -- A string cmd is the same command as its one-element list.
  agentls.setup({ cmd = t.bin, root_dir = t.ws, sync_buffers = false, mode = "readOnly", permissions = nil,
    progress = false, render = false, timeout_ms = 5000, list_timeout_ms = 5000 })
  vim.wait(200)
  t.eq(id, agentls.start(t.ws), "client after setup()")
  t.ok(not vim.lsp.client_is_stopped(id), "client stopped")
  t.eq(1, #compat.get_clients("agentls"), "clients")
end)

t.test("setup() with new permissions and autostart=false stops the server; the next call starts it with them", function()
  local id = agentls.start(t.ws)
  agentls.setup({ cmd = BIN, root_dir = t.ws, sync_buffers = false, mode = "readOnly", autostart = false,
    permissions = { deny = { "Read(hello.txt)" } } })
  t.wait(3000, function() return vim.lsp.client_is_stopped(id) end, "the old client to stop")
  t.eq(0, #compat.get_clients("agentls"), "started again despite autostart=false")
  local res = assert(agentls.call_sync("read", { path = "hello.txt" }, 5000))
  t.eq(true, res.isError, "read not denied by the new permissions: " .. agentls.text(res))
end)

-- :AgentlsCall / :AgentlsLog ---------------------------------------------------

t.test(":AgentlsCall: bad arguments give messages, not Lua errors; isError results marked", function()
  t.stop_all()
  agentls.setup({ cmd = BIN, root_dir = t.ws, sync_buffers = false, mode = "acceptEdits" })
  started(t.ws)
  local ok, err = pcall(vim.cmd, "AgentlsCall")
  t.ok(not ok and tostring(err):find("E471", 1, true), "no args: " .. tostring(err))
  notes = {}
  ok, err = pcall(vim.cmd, "AgentlsCall read {not json")
  t.ok(ok, tostring(err))
  t.ok(noted("must be a JSON object", vim.log.levels.ERROR), vim.inspect(notes))
  notes = {}
  ok, err = pcall(vim.cmd, [[AgentlsCall read "hello.txt"]])
  t.ok(ok and noted("must be a JSON object", vim.log.levels.ERROR), "JSON string: " .. vim.inspect(notes))
  local before = vim.api.nvim_get_current_buf()
  vim.cmd([[AgentlsCall read {"path": "nope.txt"}]])
  t.wait(5000, function() return vim.api.nvim_get_current_buf() ~= before end, "result buffer")
  t.ok(t.lines(0)[1]:find("^ERROR: "), "isError prefix: " .. vim.inspect(t.lines(0)))
  vim.cmd("close")
  vim.cmd("AgentlsCall ls {}")
  t.wait(5000, function() return vim.api.nvim_get_current_buf() ~= before end, "ls result buffer")
  t.ok(table.concat(t.lines(0), "\n"):find("hello.txt", 1, true), "ls {}: " .. vim.inspect(t.lines(0)))
  vim.cmd("close")
  notes = {}
  vim.cmd("AgentlsCall no_such_tool {}")
  t.wait(5000, function() return vim.api.nvim_get_current_buf() ~= before or #notes > 0 end, "unknown tool answer")
  local shown = vim.api.nvim_get_current_buf() ~= before and t.lines(0)[1] or (notes[1] and notes[1].msg)
  t.ok(shown and (shown:find("^ERROR: ") or shown:find("failed", 1, true)), "unknown tool: " .. tostring(shown))
  if vim.api.nvim_get_current_buf() ~= before then vim.cmd("close") end
  t.ok(vim.tbl_contains(vim.fn.getcompletion("AgentlsCall re", "cmdline"), "read"), "completion of tool names")
end)

t.test(":AgentlsCall with a JSON array says it wants an object (plugin or server)", function()
  notes = {}
  local before = vim.api.nvim_get_current_buf()
  local ok, err = pcall(vim.cmd, [[AgentlsCall read ["hello.txt"] ]])
  t.ok(ok, tostring(err))
  vim.wait(1000, function() return vim.api.nvim_get_current_buf() ~= before or #notes > 0 end, 10)
  local got = vim.api.nvim_get_current_buf() ~= before and ("buffer: " .. table.concat(t.lines(0), " | "))
    or vim.inspect(notes)
  if vim.api.nvim_get_current_buf() ~= before then vim.cmd("close") end
  t.ok(noted("must be a JSON object") or got:find("must be a JSON object", 1, true), got)
end)

t.test(":AgentlsLog shows calls with their tool names", function()
  vim.cmd("AgentlsLog")
  local text = table.concat(t.lines(0), "\n")
  vim.cmd("close")
  t.ok(text:find("%[call [^%]]+%] ls"), "call entry: " .. text:sub(-500))
  t.ok(text:find("%[start%]"), "start entry")
end)

-- workspace/externalChange ----------------------------------------------------

t.test("workspace/externalChange: deleted, unloaded and dirty buffers handled without errors", function()
  local h = agentls._handlers["workspace/externalChange"]
  t.write_file("gone.txt", "x\n")
  local buf = open(t.path("gone.txt"))
  os.remove(t.path("gone.txt"))
  local ok, err = pcall(h, nil, { uri = vim.uri_from_fname(t.path("gone.txt")), kind = "deleted", readStale = true })
  t.ok(ok, "deleted: " .. tostring(err))
  t.eq({ "x" }, t.lines(buf), "text of the deleted file kept")
  ok, err = pcall(h, nil, { uri = vim.uri_from_fname(t.path("never-loaded.txt")), kind = "created", readStale = false })
  t.ok(ok, "unloaded: " .. tostring(err))
  t.write_file("ext.txt", "disk\n")
  buf = open(t.path("ext.txt"))
  vim.api.nvim_buf_set_lines(buf, 0, 1, false, { "typed" })
  t.write_file("ext.txt", "changed on disk\n")
  ok, err = pcall(h, nil, { uri = vim.uri_from_fname(t.path("ext.txt")), kind = "changed", readStale = true })
  t.ok(ok, "dirty: " .. tostring(err))
  t.eq({ "typed" }, t.lines(buf), "unsaved text kept")
  vim.cmd("silent edit!")
end)

-- Restart / server death --------------------------------------------------------

local died = false
t.test("a call pending when the server dies gets an error at once (call_sync does not wait out timeout_ms)", function()
  t.stop_all()
  agentls.setup({ cmd = BIN, cmd_env = TEST_ENV, root_dir = t.ws, sync_buffers = false })
  started(t.ws)
  local c = vim.lsp.get_client_by_id(agentls.start(t.ws))
  local pid = t.server_pid(c)
  if not pid then t.skip("no server pid on this Neovim") end
  vim.defer_fn(function() vim.loop.kill(pid, "sigkill") end, 150)
  local t0 = vim.loop.hrtime()
  local res, err = agentls.call_sync("test_block", { seconds = 30 }, 20000)
  local ms = (vim.loop.hrtime() - t0) / 1e6
  died = true
  t.eq(nil, res, "result")
  t.ok(ms < 3000, "call_sync returned " .. math.floor(ms) .. " ms after the call, not at once")
  t.eq(-32603, err and err.code, "error: " .. vim.inspect(err))
  t.ok(err.message:find("agentls exited (code", 1, true) and err.message:find("during the call", 1, true),
    "message: " .. err.message)
  t.eq(nil, next(agentls._state.calls), "calls left open")
end)

t.test("after the server dies, the next call starts a new one", function()
  if not died then
    t.stop_all() -- the check above could not kill it (no pid)
  end
  t.wait(3000, function() return #compat.get_clients("agentls") == 0 end, "the dead client to go")
  local res, err = agentls.call_sync("read", { path = "hello.txt" }, 5000)
  t.ok(res and not res.isError, vim.inspect(err or res))
end)

-- Confirmations (mode default) ------------------------------------------------

local asked, answers = {}, {}
local function stub_select()
  vim.ui.select = function(items, opts, on_choice)
    table.insert(asked, { items = items, prompt = opts.prompt })
    local a = table.remove(answers, 1)
    if type(a) == "table" then
      vim.defer_fn(function() on_choice(a.later) end, 20)
    else
      on_choice(a)
    end
  end
end

t.test("tools/confirm: a dismissed picker (Esc) denies; file and buffer unchanged, no marks", function()
  t.stop_all()
  stub_select()
  agentls.setup({ cmd = BIN, root_dir = t.ws, sync_buffers = false })
  t.write_file("c1.txt", "keep\nme\n")
  local buf = open(t.path("c1.txt"))
  asked, answers = {}, { { later = nil } }
  local res = assert(read_edit("c1.txt", "me\n", "ME\n"))
  t.eq(1, #asked, "asked")
  t.eq(true, res.isError, agentls.text(res))
  t.ok(agentls.text(res):find("denied", 1, true), agentls.text(res))
  t.eq("keep\nme\n", t.read_file("c1.txt"), "file")
  t.eq({ "keep", "me" }, t.lines(buf), "buffer")
  t.eq({}, t.marks(buf), "marks")
end)

t.test("tools/confirm: Deny of an edit of a loaded file leaves file, buffer and marks alone", function()
  local buf = open(t.path("c1.txt"))
  asked, answers = {}, { "Deny" }
  local res = assert(read_edit("c1.txt", "keep\n", "KEEP\n"))
  t.eq(1, #asked, "asked")
  t.eq(true, res.isError, agentls.text(res))
  t.eq("keep\nme\n", t.read_file("c1.txt"), "file")
  t.eq({ "keep", "me" }, t.lines(buf), "buffer")
  t.eq({}, t.marks(buf), "marks")
end)

t.test("tools/confirm: Show change opens the server's proposed change, then Deny", function()
  local tabs = #vim.api.nvim_list_tabpages()
  asked, answers = {}, { "Show change", "Deny" }
  local res = assert(read_edit("c1.txt", "me\n", "PROPOSED\n"))
  t.eq(2, #asked, "asked again after the preview")
  t.eq(tabs + 1, #vim.api.nvim_list_tabpages(), "preview tab")
  local found = false
  for _, w in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
    if vim.deep_equal({ "keep", "PROPOSED" }, t.lines(vim.api.nvim_win_get_buf(w))) then found = true end
  end
  t.ok(found, "proposed side not shown")
  vim.cmd("tabclose")
  t.eq(true, res.isError, "denied")
  t.eq("keep\nme\n", t.read_file("c1.txt"), "file")
end)

t.test("tools/confirm: Always allow for bash covers the same command line only", function()
  asked, answers = {}, { "Always allow" }
  local res = assert(agentls.call_sync("bash", { command = "touch bash-a.txt" }, 10000))
  t.eq(1, #asked, "a writing command asks in mode default")
  t.eq(false, res.isError, agentls.text(res))
  res = assert(agentls.call_sync("bash", { command = "touch bash-a.txt" }, 10000))
  t.eq(1, #asked, "the same command asked again")
  t.eq(false, res.isError, agentls.text(res))
  answers = { "Deny" }
  res = assert(agentls.call_sync("bash", { command = "touch bash-b.txt" }, 10000))
  t.eq(2, #asked, "another command did not ask")
  t.eq(true, res.isError, "denied")
end)
vim.ui.select = real_select

-- Multiple roots and buffer sync ----------------------------------------------

local root2 = t.ws .. "-root2" -- a sibling whose path starts with the workspace's
vim.fn.mkdir(root2, "p")
vim.fn.system({ "git", "init", "-q", root2 })
if vim.fn.isdirectory(root2 .. "/.git") == 0 then vim.fn.mkdir(root2 .. "/.git", "p") end
vim.fn.writefile({ "only in root2" }, root2 .. "/two.txt")

local id1, id2
t.test("multiple roots: one client per root, calls go to the cwd's root", function()
  t.stop_all()
  agentls.setup({ cmd = BIN, mode = "acceptEdits" }) -- sync_buffers default (true)
  id1 = agentls.start()
  started(t.ws)
  vim.cmd("cd " .. vim.fn.fnameescape(root2))
  local res = assert(agentls.call_sync("read", { path = "two.txt" }, 5000))
  t.eq(false, res.isError, agentls.text(res))
  t.ok(agentls.text(res):find("only in root2", 1, true), agentls.text(res))
  id2 = agentls.start()
  t.ok(id1 ~= id2, "a second client")
  t.eq(2, #compat.get_clients("agentls"), "clients")
  t.ok(agentls.initialize_result(root2), "initialize_result(root2)")
  vim.cmd("cd " .. vim.fn.fnameescape(t.ws))
  res = assert(agentls.call_sync("read", { path = "two.txt" }, 5000))
  t.eq(true, res.isError, "two.txt is not in the first root")
end)

t.test("sync: a buffer attaches to its own root's client only (prefix-sibling, outside)", function()
  local b2 = open(root2 .. "/two.txt")
  t.ok(vim.lsp.buf_is_attached(b2, id2), "root2 buffer not attached to root2's client")
  t.ok(not vim.lsp.buf_is_attached(b2, id1), "root2 buffer attached to the client of " .. t.ws)
  local outside = vim.fn.tempname() .. ".txt"
  vim.fn.writefile({ "outside" }, outside)
  local bo = open(outside)
  t.ok(not vim.lsp.buf_is_attached(bo, id1) and not vim.lsp.buf_is_attached(bo, id2), "outside buffer attached")
  local hidden = vim.fn.bufadd(t.path("lines.txt"))
  vim.fn.bufload(hidden)
  t.ok(vim.lsp.buf_is_attached(hidden, id1), "buffer loaded later with bufload not attached")
end)

t.test("stop() stops every client; the next call starts one again", function()
  t.stop_all()
  t.ok(vim.lsp.client_is_stopped(id1) and vim.lsp.client_is_stopped(id2), "both stopped")
  local res = assert(agentls.call_sync("read", { path = "hello.txt" }, 5000))
  t.eq(false, res.isError, agentls.text(res))
end)

t.test("sync: :bwipeout and :bdelete send didClose, so read falls back to the disk", function()
  t.write_file("s1.txt", "disk one\n")
  local buf = open(t.path("s1.txt"))
  local id = agentls.start(t.ws)
  t.ok(vim.lsp.buf_is_attached(buf, id), "attached")
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, { "unsaved one" })
  local text = agentls.text(assert(agentls.call_sync("read", { path = "s1.txt" }, 5000)))
  t.ok(text:find("unsaved one", 1, true), "overlay: " .. text)
  vim.cmd("bwipeout! " .. buf)
  text = agentls.text(assert(agentls.call_sync("read", { path = "s1.txt" }, 5000)))
  t.ok(text:find("disk one", 1, true), "after :bwipeout!: " .. text)
  -- Reopened: attached again; :bdelete (unload) closes it too.
  buf = open(t.path("s1.txt"))
  t.ok(vim.lsp.buf_is_attached(buf, id), "reattached after reopening")
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, { "unsaved two" })
  text = agentls.text(assert(agentls.call_sync("read", { path = "s1.txt" }, 5000)))
  t.ok(text:find("unsaved two", 1, true), "overlay after reopening: " .. text)
  vim.cmd("bdelete! " .. buf)
  text = agentls.text(assert(agentls.call_sync("read", { path = "s1.txt" }, 5000)))
  t.ok(text:find("disk one", 1, true), "after :bdelete!: " .. text)
  -- :edit! reverting unsaved text is a didChange back to the disk text.
  buf = open(t.path("s1.txt"))
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, { "unsaved three" })
  vim.cmd("silent edit!")
  text = agentls.text(assert(agentls.call_sync("read", { path = "s1.txt" }, 5000)))
  t.ok(text:find("disk one", 1, true) and not text:find("unsaved", 1, true), "after :edit!: " .. text)
end)

t.test("sync: a clean buffer's edit lands in it, is saved and marked exactly", function()
  t.write_file("s2.txt", "a\nb\nc\nd\n")
  local buf = open(t.path("s2.txt"))
  local res = assert(read_edit("s2.txt", "b\n", "B\nB2\n"))
  t.eq(false, res.isError, agentls.text(res))
  t.eq({ "a", "B", "B2", "c", "d" }, t.lines(buf), "buffer")
  t.eq(false, vim.bo[buf].modified, "saved")
  t.eq("a\nB\nB2\nc\nd\n", t.read_file("s2.txt"), "disk")
  t.eq({
    { 1, "hl", "AgentlsChange" },
    { 1, "sign", render.SIGN },
    { 1, "virt_above", "b|AgentlsDelete" },
    { 2, "hl", "AgentlsChange" },
  }, t.marks(buf), "extmarks")
end)

t.test("sync: write of an open clean file goes into its buffer and is saved", function()
  local buf = open(t.path("s2.txt"))
  local res = assert(agentls.call_sync("write", { path = "s2.txt", content = "replaced\n" }, 10000))
  t.eq(false, res.isError, agentls.text(res))
  t.eq({ "replaced" }, t.lines(buf), "buffer")
  t.eq(false, vim.bo[buf].modified, "saved")
  t.eq("replaced\n", t.read_file("s2.txt"), "disk")
end)

t.test("sync: a new, never-saved file buffer in the root is read from the buffer", function()
  local buf = open(t.path("src/fresh.txt"))
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, { "not on disk yet" })
  local res = assert(agentls.call_sync("read", { path = "src/fresh.txt" }, 5000))
  t.ok(not res.isError and agentls.text(res):find("not on disk yet", 1, true), agentls.text(res))
  vim.cmd("bwipeout! " .. buf)
end)

vim.notify, vim.ui.select, vim.ui.input = real_notify, real_select, real_input
t.stop_all()
t.finish()
