-- Contract tests of the Neovim plugin (issue 8), written from the
-- issue, docs/protocol.md, editors/nvim/README.md and doc/agentls.txt only.
-- Run by run.sh like every *_spec.lua; every test here uses its own files.
local H = dofile((os.getenv("AGENTLS_REPO") or vim.loop.cwd()) .. "/test/nvim/helpers.lua")
local uv = vim.loop

vim.o.hidden = true
vim.opt.rtp:append(H.plugin)

-- ---------------------------------------------------------------- helpers

local function contract_real(p)
  return uv.fs_realpath(p) or p
end

-- Opens rel (relative to the workspace) in the current window; returns its buffer.
local function contract_open(rel, text)
  if text then
    H.write_file(rel, text)
  end
  vim.cmd("edit! " .. vim.fn.fnameescape(H.path(rel)))
  return vim.api.nvim_get_current_buf()
end

local function contract_split(text)
  local t = vim.split(text, "\n", { plain = true })
  if t[#t] == "" then
    table.remove(t)
  end
  return t
end

-- Waits for a buffer (any) whose text contains needle; returns it.
local function contract_wait_buf(needle, what)
  local found
  H.wait(10000, function()
    for _, b in ipairs(vim.api.nvim_list_bufs()) do
      if vim.api.nvim_buf_is_loaded(b) and table.concat(H.lines(b), "\n"):find(needle, 1, true) then
        found = b
        return true
      end
    end
  end, what or needle)
  return found
end

local function contract_clients()
  return require("agentls.compat").get_clients("agentls")
end

-- The one initialized client whose root is dir (nil if none).
local function contract_client_for(dir)
  for _, c in ipairs(contract_clients()) do
    local root = c.config and c.config.root_dir or c.root_dir
    if root and contract_real(root) == contract_real(dir) and not require("agentls.compat").is_stopped(c) then
      return c
    end
  end
end

-- Waits until exactly one running, initialized client serves dir (a client
-- that setup() is replacing may linger until its shutdown is answered).
local function contract_wait_client(dir)
  local found
  H.wait(10000, function()
    local n = 0
    for _, c in ipairs(contract_clients()) do
      local root = c.config and c.config.root_dir or c.root_dir
      if root and contract_real(root) == contract_real(dir) and not require("agentls.compat").is_stopped(c) then
        n = n + 1
        found = c
      end
    end
    return n == 1 and found.initialized
  end, "one agentls client for " .. dir)
  return found
end


local function contract_reset_ui()
  pcall(vim.cmd, "silent! tabonly!")
  pcall(vim.cmd, "silent! only!")
  pcall(vim.cmd, "silent! diffoff!")
end

-- Label of a vim.ui.select item.
local function contract_label(item, opts)
  if opts and opts.format_item then
    return opts.format_item(item)
  end
  if type(item) == "table" then
    return item.label or item.text or item.name or item[1]
  end
  return tostring(item)
end

-- Replaces vim.ui.select: answers(call_no, labels, prompt) returns the label
-- to pick (nil = dismiss, false = leave the picker open), or a function
-- that gets on_choice. Returns the log of questions.
local function contract_stub_select(answers)
  local log = { n = 0, questions = {} }
  vim.ui.select = function(items, opts, on_choice)
    log.n = log.n + 1
    local labels = {}
    for _, it in ipairs(items) do
      table.insert(labels, contract_label(it, opts))
    end
    table.insert(log.questions, { labels = labels, prompt = opts and opts.prompt })
    local want = answers(log.n, labels, opts and opts.prompt, items)
    if type(want) == "function" then
      return want(on_choice, items, labels)
    end
    if want == false then
      log.pending = on_choice
      log.pending_items = items
      log.pending_labels = labels
      return
    end
    if want == nil then
      return on_choice(nil, nil)
    end
    for i, l in ipairs(labels) do
      if l == want or vim.startswith(l, want) then
        return on_choice(items[i], i)
      end
    end
    error("no choice " .. want .. " in " .. vim.inspect(labels))
  end
  return log
end

local function contract_pick(items, labels, want)
  for i, l in ipairs(labels) do
    if l == want or vim.startswith(l, want) then
      return items[i], i
    end
  end
end

local orig_select, orig_input, orig_notify = vim.ui.select, vim.ui.input, vim.notify
local function contract_restore()
  vim.ui.select, vim.ui.input, vim.notify = orig_select, orig_input, orig_notify
end

local function contract_has(list, name)
  for _, v in ipairs(list) do
    if v == name then
      return true
    end
  end
  return false
end

local function contract_alive(pid)
  local ok = uv.kill(pid, 0)
  return ok == 0 or ok == true
end

local function contract_read_pid(rel)
  local f = io.open(H.path(rel), "r")
  if not f then
    return nil
  end
  local s = f:read("*a")
  f:close()
  return tonumber(vim.trim(s))
end

-- Waits for an async call's callback; returns err, result.
local function contract_call(tool, args, ms)
  local done, e, r = false, nil, nil
  local id = require("agentls").call(tool, args, function(err, res)
    done, e, r = true, err, res
  end)
  H.wait(ms or 10000, function() return done end, tool .. " callback")
  return e, r, id
end

local function contract_tool_names(list)
  local names = {}
  for _, t in ipairs(list) do
    table.insert(names, t.name or (t["function"] and t["function"].name))
  end
  return names
end

local CORE = { "read", "ls", "grep", "find", "edit", "write", "bash", "tool_search" }

local A -- require("agentls"), after the first test

local function contract_noop() end
-- Every option the tests change, spelled out, so a later setup() gives the
-- same options whether setup() merges with earlier calls or not.
local base = {
  cmd = { H.bin },
  mode = "bypass",
  sync_buffers = false,
  diagnostics = true,
  render = true,
  progress = true,
  progress_interval_ms = 1000,
  timeout_ms = 660000,
  autostart = true,
  on_details = contract_noop,
}
local function contract_setup(extra)
  local o = vim.deepcopy(base)
  for k, v in pairs(extra or {}) do
    o[k] = v
  end
  A.setup(o)
  return o
end

-- setup() with options that restart the workspace's server: waits for the
-- new client (the old one may linger until its shutdown is answered).
local function contract_restart(extra)
  local old = contract_client_for(H.ws)
  local o = contract_setup(extra)
  local found
  H.wait(10000, function()
    found = contract_client_for(H.ws)
    return found and found.initialized and (not old or found.id ~= old.id)
      and (not old or not vim.lsp.get_client_by_id(old.id) or require("agentls.compat").is_stopped(old))
  end, "restarted client")
  return found, o
end

-- ---------------------------------------------------------------- before setup()

H.test("commands work before setup() with the default cmd from PATH", function()
  -- The plugin's plugin/ file defines the commands (as Neovim sources it at startup).
  local bindir = vim.fn.tempname()
  vim.fn.mkdir(bindir, "p")
  uv.fs_symlink(contract_real(H.bin), bindir .. "/agentls")
  vim.env.PATH = bindir .. ":" .. vim.env.PATH
  vim.cmd("runtime plugin/agentls.lua")
  H.eq(2, vim.fn.exists(":AgentlsCall"), ":AgentlsCall defined by plugin/agentls.lua")
  vim.cmd([[AgentlsCall read {"path": "hello.txt"}]])
  local buf = contract_wait_buf("     1→alpha", "read result in a buffer")
  H.ok(vim.bo[buf].buftype ~= "", "result buffer is a scratch buffer, buftype=" .. vim.bo[buf].buftype)
  contract_reset_ui()
  A = require("agentls")
  H.stop_all()
end)
A = A or require("agentls")

-- ---------------------------------------------------------------- setup, API

H.test("setup starts one initialized client for the git root", function()
  contract_setup()
  local c = contract_wait_client(H.ws)
  H.ok(c, "client for " .. H.ws)
  H.eq(1, #contract_clients(), "one client")
end)

H.test("setup defines every command and :help agentls works", function()
  for _, c in ipairs({ "AgentlsTools", "AgentlsCall", "AgentlsDiff", "AgentlsLog", "AgentlsClear" }) do
    H.eq(2, vim.fn.exists(":" .. c), ":" .. c)
  end
  for _, tag in ipairs({ "agentls", "agentls.setup()", "agentls.call()", "agentls-confirm", "agentls-sync", "agentls-diagnostics", ":AgentlsDiff" }) do
    local ok, err = pcall(vim.cmd, "help " .. tag)
    H.ok(ok, ":help " .. tag .. ": " .. tostring(err))
    H.ok(vim.api.nvim_buf_get_name(0):match("agentls%.txt$"), ":help " .. tag .. " opened " .. vim.api.nvim_buf_get_name(0))
    vim.cmd("helpclose")
  end
end)

H.test("tools() returns the MCP tool list", function()
  local list = A.tools()
  H.ok(type(list) == "table" and #list > 0, "tools: " .. vim.inspect(list))
  local names = contract_tool_names(list)
  for _, n in ipairs(CORE) do
    H.ok(contract_has(names, n), "tool " .. n .. " in " .. vim.inspect(names))
  end
  for _, t in ipairs(list) do
    H.ok(type(t.description) == "string" and #t.description > 20, t.name .. " description")
    H.eq("object", t.inputSchema and t.inputSchema.type, t.name .. " inputSchema.type")
    H.ok(type(t.annotations) == "table" and type(t.annotations.readOnlyHint) == "boolean", t.name .. " annotations")
  end
  local by = {}
  for _, t in ipairs(list) do by[t.name] = t end
  H.eq(true, by.read.annotations.readOnlyHint, "read readOnlyHint")
  H.eq(false, by.edit.annotations.readOnlyHint, "edit readOnlyHint")
  H.eq(true, by.bash.annotations.openWorldHint ~= nil, "bash openWorldHint present")
end)

H.test("tools{format='openai'} is ready for a model request", function()
  local list = A.tools({ format = "openai" })
  H.ok(type(list) == "table" and #list >= #CORE, "openai list")
  for _, t in ipairs(list) do
    H.eq("function", t.type, "type")
    local f = t["function"]
    H.ok(type(f) == "table" and type(f.name) == "string" and type(f.description) == "string", "function fields " .. vim.inspect(t):sub(1, 200))
    H.eq("object", f.parameters and f.parameters.type, f.name .. " parameters.type")
    H.eq(nil, t.inputSchema, "no MCP inputSchema")
    -- Re-encoded for a request, object-valued schema fields must stay objects.
    local js = vim.json.encode(t)
    H.ok(not js:find('"properties":%[%]'), f.name .. " encodes properties as []: " .. js)
    H.ok(not js:find('"parameters":%[%]'), f.name .. " encodes parameters as []")
  end
  H.ok(contract_has(contract_tool_names(list), "edit"), "edit in openai list")
end)

H.test("tools{format='anthropic'} gives name/description/input_schema", function()
  local list = A.tools({ format = "anthropic" })
  H.ok(type(list) == "table" and #list >= #CORE, "anthropic list")
  for _, t in ipairs(list) do
    H.ok(type(t.name) == "string" and type(t.description) == "string", "fields")
    H.eq("object", t.input_schema and t.input_schema.type, t.name .. " input_schema.type")
    H.eq(nil, t.type, "no openai type")
    H.eq(nil, t.inputSchema, "no MCP inputSchema")
  end
end)

H.test("tools(opts, callback) delivers the list asynchronously", function()
  local got
  A.tools({ format = "openai" }, function(a, b)
    got = { a, b }
  end)
  H.wait(10000, function() return got end, "tools callback")
  local list = (type(got[2]) == "table" and got[2]) or got[1]
  if type(list) == "table" and list.tools then list = list.tools end
  H.ok(type(list) == "table" and #list >= #CORE, "callback list: " .. vim.inspect(got):sub(1, 300))
  H.eq("function", list[1].type, "openai shape in callback")
end)

H.test("call('read') returns numbered text, callId echoed", function()
  local err, res, id = contract_call("read", { path = "hello.txt" })
  H.eq(nil, err, "err")
  H.ok(id ~= nil, "call returns the callId")
  H.eq(id, res.callId, "callback result callId equals returned id")
  H.eq(false, res.isError, "isError")
  H.eq("hello.txt, lines 1-3 of 3\n     1→alpha\n     2→beta\n     3→gamma", res.content[1].text, "text")
  H.eq("text", res.content[1].type, "content type")
  H.ok(type(res.details) == "table" and type(res.details.durationMs) == "number", "details.durationMs")
end)

H.test("call_sync and text()", function()
  local res, err = A.call_sync("read", { path = "hello.txt", offset = 2, limit = 1 })
  H.eq(nil, err, "err")
  local text = A.text(res)
  H.ok(text:find("     2→beta", 1, true), "text: " .. text)
  H.ok(not text:find("alpha", 1, true), "offset honoured: " .. text)
end)

H.test("{} arguments from Lua work (call, call_sync, tools, :AgentlsCall)", function()
  local res, err = A.call_sync("ls", {})
  H.eq(nil, err, "call_sync err")
  H.eq(false, res.isError, "ls {} isError: " .. A.text(res))
  H.ok(A.text(res):find("hello.txt", 1, true), "ls lists hello.txt: " .. A.text(res))
  local e2, r2 = contract_call("ls", {})
  H.eq(nil, e2, "call err")
  H.eq(false, r2.isError, "call isError")
  local e3, r3 = contract_call("ls", vim.empty_dict())
  H.eq(nil, e3, "empty_dict err")
  H.eq(false, r3.isError, "empty_dict isError")
  local l = A.tools({})
  H.ok(type(l) == "table" and #l >= #CORE, "tools({})")
  for _, cmd in ipairs({ "AgentlsCall ls", "AgentlsCall ls {}" }) do
    vim.cmd(cmd)
    local buf = contract_wait_buf("hello.txt", cmd .. " result")
    H.ok(vim.bo[buf].buftype ~= "", cmd .. " result in a scratch buffer")
    vim.api.nvim_buf_delete(buf, { force = true })
    contract_reset_ui()
  end
end)

H.test("tool failures are isError results, not errors", function()
  local res, err = A.call_sync("read", { path = "no-such-file.txt" })
  H.eq(nil, err, "err")
  H.eq(true, res.isError, "missing file isError")
  local res2, err2 = A.call_sync("no_such_tool", {})
  H.eq(nil, err2, "unknown tool err")
  H.eq(true, res2.isError, "unknown tool isError")
end)

H.test(":AgentlsTools lists the tools in a scratch buffer", function()
  vim.cmd("AgentlsTools")
  local buf = contract_wait_buf("tool_search", "tool list in a buffer")
  local t = table.concat(H.lines(buf), "\n")
  for _, n in ipairs(CORE) do
    H.ok(t:find(n, 1, true), n .. " listed")
  end
  H.ok(vim.bo[buf].buftype ~= "", "scratch buftype")
  contract_reset_ui()
end)

H.test(":AgentlsCall with bad JSON reports an error and keeps going", function()
  local msgs = {}
  vim.notify = function(m, lvl) table.insert(msgs, { m, lvl }) end
  local ok = pcall(vim.cmd, "AgentlsCall read {not json")
  contract_restore()
  H.ok((not ok) or #msgs > 0, "bad JSON must be reported (error or notify)")
  local res = A.call_sync("read", { path = "hello.txt" })
  H.eq(false, res.isError, "still works")
  contract_reset_ui()
end)

-- ---------------------------------------------------------------- rendering (sync_buffers = false)

H.test("edit reloads the buffer and marks exactly the changed lines (sync_buffers=false)", function()
  contract_setup()
  local buf = contract_open("r1.txt", "one\ntwo\nthree\nfour\nfive\n")
  local c = contract_wait_client(H.ws)
  H.eq(false, vim.lsp.buf_is_attached(buf, c.id), "not attached with sync_buffers=false")
  H.eq(false, A.call_sync("read", { path = "r1.txt" }).isError, "read")
  local res = A.call_sync("edit", { path = "r1.txt", edits = {
    { oldText = "two\n", newText = "TWO\n" },
    { oldText = "four\n", newText = "" },
    { oldText = "five\n", newText = "five\nsix\n" },
  } })
  H.eq(false, res.isError, "edit: " .. A.text(res))
  H.eq("one\nTWO\nthree\nfive\nsix\n", H.read_file("r1.txt"), "disk")
  H.wait(5000, function() return H.lines(buf)[2] == "TWO" end, "buffer reload")
  H.eq({ "one", "TWO", "three", "five", "six" }, H.lines(buf), "buffer text")
  H.eq(false, vim.bo[buf].modified, "reloaded buffer is clean")
  H.wait(3000, function() return #H.marks(buf) > 0 end, "marks")
  local m = H.grouped_marks(buf)
  H.eq({ { 1, "AgentlsChange" }, { 4, "AgentlsAdd" } }, m.hl, "line highlights only on changed/added rows")
  H.eq({ 1 }, m.sign, "one sign on the first change")
  H.eq({ { 1, "two|AgentlsDelete" }, { 3, "four|AgentlsDelete" } }, m.virt, "removed text as virtual lines")
end)

H.test("highlight groups link to the Diff groups; sign text", function()
  local want = { AgentlsAdd = "DiffAdd", AgentlsChange = "DiffChange", AgentlsDelete = "DiffDelete" }
  for g, link in pairs(want) do
    local s = vim.fn.execute("hi " .. g)
    H.ok(s:find("links to " .. link, 1, true), g .. ": " .. s)
  end
  H.ok(not vim.fn.execute("hi AgentlsSign"):find("cleared", 1, true), "AgentlsSign defined")
  local buf = vim.fn.bufnr(H.path("r1.txt"))
  for _, m in ipairs(vim.api.nvim_buf_get_extmarks(buf, require("agentls.render").ns, 0, -1, { details = true })) do
    if m[4].sign_hl_group then
      H.eq("AgentlsSign", m[4].sign_hl_group, "sign hl")
    end
  end
end)

H.test("editing a marked line removes that line's marks only", function()
  local buf = vim.fn.bufnr(H.path("r1.txt"))
  H.ok(#H.marks(buf) > 0, "marks from the previous test")
  -- The user types on row 1 (as `A!<Esc>` does).
  vim.cmd("buffer " .. buf)
  vim.api.nvim_win_set_cursor(0, { 2, 0 })
  vim.cmd("normal! A!")
  H.eq("TWO!", H.lines(buf)[2], "typed")
  H.wait(2000, function()
    for _, h in ipairs(H.grouped_marks(buf).hl) do
      if h[1] == 1 then return false end
    end
    return true
  end, "row 1 highlight to go: " .. vim.inspect(H.marks(buf)))
  H.eq({ { 4, "AgentlsAdd" } }, H.grouped_marks(buf).hl, "untouched row keeps its mark")
  vim.cmd("buffer " .. buf)
  vim.cmd("silent! edit!")
end)

H.test("replacing a marked line (nvim_buf_set_lines) removes its marks, never moves them", function()
  local buf = contract_open("r1b.txt", "one\ntwo\nthree\nfour\nfive\n")
  A.call_sync("read", { path = "r1b.txt" })
  A.call_sync("edit", { path = "r1b.txt", edits = { { oldText = "two\n", newText = "TWO\n" }, { oldText = "five\n", newText = "five\nsix\n" } } })
  H.wait(5000, function() return #H.marks(buf) > 0 end, "marks")
  -- What a formatter or another plugin does to a line.
  vim.api.nvim_buf_set_lines(buf, 1, 2, false, { "TWO!" })
  vim.wait(300)
  H.eq({ { 5, "AgentlsAdd" } }, H.grouped_marks(buf).hl, "hl after replacing row 1 (row 2 'three' was never changed)")
  H.eq({}, H.grouped_marks(buf).sign, "sign of the replaced line")
  vim.cmd("silent! edit!")
end)

H.test("undo after the reload brings the old text back", function()
  local buf = contract_open("r2.txt", "a\nb\nc\n")
  A.call_sync("read", { path = "r2.txt" })
  A.call_sync("edit", { path = "r2.txt", edits = { { oldText = "b", newText = "B" } } })
  H.wait(5000, function() return H.lines(buf)[2] == "B" end, "reload")
  vim.cmd("undo")
  H.eq({ "a", "b", "c" }, H.lines(buf), "after undo")
  vim.cmd("silent! edit!")
end)

H.test("write marks exactly the changed line of a loaded buffer", function()
  local buf = contract_open("r3.txt", "l1\nl2\nl3\nl4\n")
  A.call_sync("read", { path = "r3.txt" })
  local res = A.call_sync("write", { path = "r3.txt", content = "l1\nL2\nl3\nl4\n" })
  H.eq(false, res.isError, "write: " .. A.text(res))
  H.wait(5000, function() return H.lines(buf)[2] == "L2" end, "reload")
  H.wait(3000, function() return #H.marks(buf) > 0 end, "marks")
  local m = H.grouped_marks(buf)
  H.eq({ { 1, "AgentlsChange" } }, m.hl, "hl")
  H.eq({ 1 }, m.sign, "sign")
  H.eq({ { 1, "l2|AgentlsDelete" } }, m.virt, "virt")
end)

H.test(":AgentlsClear removes the marks from every buffer", function()
  local b1 = contract_open("c1.txt", "x\ny\n")
  local b2 = contract_open("c2.txt", "p\nq\n")
  A.call_sync("read", { path = "c1.txt" })
  A.call_sync("read", { path = "c2.txt" })
  A.call_sync("edit", { path = "c1.txt", edits = { { oldText = "y", newText = "Y" } } })
  A.call_sync("edit", { path = "c2.txt", edits = { { oldText = "q", newText = "Q" } } })
  H.wait(5000, function() return #H.marks(b1) > 0 and #H.marks(b2) > 0 end, "marks in both")
  vim.cmd("AgentlsClear")
  H.eq({}, H.marks(b1), "b1 cleared")
  H.eq({}, H.marks(b2), "b2 cleared")
end)

H.test(":AgentlsDiff opens the last change as a diff against the old text", function()
  contract_reset_ui()
  local buf = contract_open("d1.txt", "first\nsecond\nthird\n")
  A.call_sync("read", { path = "d1.txt" })
  A.call_sync("edit", { path = "d1.txt", edits = { { oldText = "second", newText = "SECOND" } } })
  H.wait(5000, function() return H.lines(buf)[2] == "SECOND" end, "reload")
  local tabs = vim.fn.tabpagenr("$")
  vim.cmd("AgentlsDiff")
  H.eq(tabs + 1, vim.fn.tabpagenr("$"), "a new tab")
  local wins = vim.api.nvim_tabpage_list_wins(0)
  H.ok(#wins >= 2, "two windows")
  local old_seen, file_seen = false, false
  for _, w in ipairs(wins) do
    H.eq(true, vim.wo[w].diff, "window in diff mode")
    local b = vim.api.nvim_win_get_buf(w)
    if vim.deep_equal(H.lines(b), { "first", "second", "third" }) then old_seen = true end
    if contract_real(vim.api.nvim_buf_get_name(b)) == contract_real(H.path("d1.txt")) then file_seen = true end
  end
  H.ok(old_seen, "a window shows the old text")
  H.ok(file_seen, "a window shows the file")
  contract_reset_ui()
end)

H.test("a buffer with unsaved changes is left alone (sync_buffers=false)", function()
  local buf = contract_open("u1.txt", "m\nn\no\n")
  vim.api.nvim_buf_set_lines(buf, 0, 1, false, { "mine" })
  A.call_sync("read", { path = "u1.txt" })
  local res = A.call_sync("edit", { path = "u1.txt", edits = { { oldText = "o", newText = "O" } } })
  H.eq(false, res.isError, "edit on disk: " .. A.text(res))
  H.eq("m\nn\nO\n", H.read_file("u1.txt"), "disk edited")
  vim.wait(300)
  H.eq({ "mine", "n", "o" }, H.lines(buf), "buffer untouched")
  H.eq(true, vim.bo[buf].modified, "still modified")
  H.eq({}, H.marks(buf), "no marks on a buffer that was not reloaded")
  vim.cmd("silent! edit!")
end)

H.test("on_details gets every tools/details before the call ends", function()
  local seen = {}
  contract_setup({ on_details = function(d, p) table.insert(seen, { d = d, p = p }) end })
  contract_open("od.txt", "q1\nq2\n")
  A.call_sync("read", { path = "od.txt" })
  local order = {}
  local done
  local id = A.call("edit", { path = "od.txt", edits = { { oldText = "q2", newText = "Q2" } } }, function(e, r)
    table.insert(order, "callback:" .. #seen)
    done = r
  end)
  H.wait(10000, function() return done end, "edit")
  local mine
  for _, s in ipairs(seen) do
    if s.p and s.p.callId == id then mine = s end
  end
  H.ok(mine, "on_details called for the edit: " .. vim.inspect(seen):sub(1, 400))
  H.eq("edit", mine.d.kind, "details.kind")
  H.eq("edit", mine.p.tool, "params.tool")
  H.ok(type(mine.d.unifiedDiff) == "string" and mine.d.unifiedDiff:find("+Q2", 1, true), "unifiedDiff")
  H.ok(type(mine.d.uri) == "string" and mine.d.uri:match("od%.txt$"), "uri")
  H.eq(2, mine.d.firstChangedLine, "firstChangedLine")
  H.ok(order[1] ~= "callback:0", "details before the reply: " .. order[1])
  contract_setup()
end)

H.test("render=false draws no marks", function()
  contract_setup({ render = false })
  local buf = contract_open("nr.txt", "v1\nv2\n")
  A.call_sync("read", { path = "nr.txt" })
  A.call_sync("edit", { path = "nr.txt", edits = { { oldText = "v2", newText = "V2" } } })
  vim.wait(500)
  H.eq({}, H.marks(buf), "no marks")
  contract_setup()
end)

H.test("external write to a read file reloads its buffer (sync_buffers=false)", function()
  local buf = contract_open("ext1.txt", "old\n")
  A.call_sync("read", { path = "ext1.txt" })
  vim.wait(200)
  H.write_file("ext1.txt", "new from outside\n")
  H.wait(8000, function() return H.lines(buf)[1] == "new from outside" end, "reload after external change: " .. vim.inspect(H.lines(buf)))
end)

-- ---------------------------------------------------------------- cancel, timeouts, exits

H.test("cancel(id) ends a running bash call with -32800 and kills it", function()
  local done, e
  local id = A.call("bash", { command = "echo $$ > cancel.pid; exec sleep 30" }, function(err) done, e = true, err end)
  H.wait(5000, function() return contract_read_pid("cancel.pid") end, "pid file")
  local pid = contract_read_pid("cancel.pid")
  local t0 = uv.hrtime()
  A.cancel(id)
  H.wait(3000, function() return done end, "callback after cancel")
  H.ok((uv.hrtime() - t0) / 1e6 < 3000, "prompt")
  H.eq(-32800, e and e.code, "error code: " .. vim.inspect(e))
  H.wait(5000, function() return not contract_alive(pid) end, "process " .. pid .. " to die")
end)

H.test("call_sync(timeout) returns nil+error in time and cancels the call", function()
  local t0 = uv.hrtime()
  local res, err = A.call_sync("bash", { command = "echo $$ > to.pid; exec sleep 30" }, 700)
  local ms = (uv.hrtime() - t0) / 1e6
  H.eq(nil, res, "result")
  H.ok(err ~= nil, "error")
  H.ok(ms < 3000, "returned after " .. ms .. " ms")
  local pid = contract_read_pid("to.pid")
  H.ok(pid, "command started")
  H.wait(5000, function() return not contract_alive(pid) end, "timed-out call's process to die")
end)

H.test("timeout_ms is call_sync's default wait", function()
  contract_setup({ timeout_ms = 500 })
  local t0 = uv.hrtime()
  local res, err = A.call_sync("bash", { command = "sleep 20" })
  local ms = (uv.hrtime() - t0) / 1e6
  contract_setup()
  H.eq(nil, res, "result")
  H.ok(err ~= nil, "error")
  H.ok(ms < 3000, "returned after " .. ms .. " ms")
end)

H.test("server exiting mid-call gives -32603 'agentls exited' at once; next call restarts", function()
  local done, e
  A.call("bash", { command = "kill -9 $PPID; sleep 5" }, function(err) done, e = true, err end)
  H.wait(4000, function() return done end, "callback after server death")
  H.eq(-32603, e and e.code, "code: " .. vim.inspect(e))
  H.ok(type(e.message) == "string" and e.message:find("^agentls exited"), "message: " .. tostring(e and e.message))
  local res, err = A.call_sync("read", { path = "hello.txt" }, 10000)
  H.eq(nil, err, "next call err")
  H.eq(false, res and res.isError, "next call works")
end)

-- ---------------------------------------------------------------- progress, log

H.test("tools/progress -> vim.notify, throttled, latest output line", function()
  local notes = {}
  vim.notify = function(m, lvl, o) table.insert(notes, { msg = tostring(m), t = uv.hrtime() }) end
  local res = A.call_sync("bash", { command = "for i in $(seq 1 16); do echo line$i; sleep 0.1; done" })
  vim.wait(100)
  contract_restore()
  H.eq(false, res.isError, "bash")
  local prog = {}
  for _, n in ipairs(notes) do
    if n.msg:find("line%d") then table.insert(prog, n) end
  end
  H.ok(#prog >= 1, "at least one progress notification: " .. vim.inspect(notes))
  H.ok(#prog <= 3, "throttled to ~1/s over 1.6 s, got " .. #prog .. ": " .. vim.inspect(prog))
  for _, n in ipairs(prog) do
    local _, count = n.msg:gsub("line%d+", "")
    H.eq(1, count, "only the latest line in " .. n.msg)
  end
  for i = 2, #prog do
    H.ok((prog[i].t - prog[i - 1].t) / 1e6 >= 900, "≥ progress_interval_ms apart")
  end
end)

H.test("progress_interval_ms and progress=false", function()
  contract_setup({ progress_interval_ms = 150 })
  local notes = {}
  vim.notify = function(m) table.insert(notes, tostring(m)) end
  A.call_sync("bash", { command = "for i in $(seq 1 16); do echo line$i; sleep 0.1; done" })
  local fast = 0
  for _, n in ipairs(notes) do if n:find("line%d") then fast = fast + 1 end end
  notes = {}
  contract_setup({ progress = false })
  A.call_sync("bash", { command = "for i in $(seq 1 8); do echo line$i; sleep 0.1; done" })
  local off = 0
  for _, n in ipairs(notes) do if n:find("line%d") then off = off + 1 end end
  contract_restore()
  contract_setup()
  H.ok(fast >= 4, "interval 150 ms over 1.6 s gives several notifications, got " .. fast)
  H.eq(0, off, "progress=false notifies nothing")
end)

H.test(":AgentlsLog shows calls and progress", function()
  vim.cmd("AgentlsLog")
  local buf = vim.api.nvim_get_current_buf()
  local t = table.concat(H.lines(buf), "\n")
  H.ok(t:find("read", 1, true) and t:find("bash", 1, true), "log mentions calls: " .. t:sub(1, 500))
  H.ok(t:find("line%d"), "log has progress output")
  contract_reset_ui()
end)

-- ---------------------------------------------------------------- sync_buffers = true (default)

H.test("sync_buffers default attaches workspace file buffers only", function()
  local c = contract_restart({ sync_buffers = true })
  local before = contract_open("s0.txt", "s\n")
  H.wait(3000, function() return vim.lsp.buf_is_attached(before, c.id) end, "buffer loaded before start attached")
  local later = contract_open("s1.txt", "t\n")
  H.wait(3000, function() return vim.lsp.buf_is_attached(later, c.id) end, "buffer opened later attached")
  local scratch = vim.api.nvim_create_buf(true, true)
  vim.wait(200)
  H.eq(false, vim.lsp.buf_is_attached(scratch, c.id), "scratch buffer not attached")
  local outside = vim.fn.tempname() .. ".txt"
  vim.fn.writefile({ "out" }, outside)
  vim.cmd("edit " .. outside)
  local ob = vim.api.nvim_get_current_buf()
  vim.wait(200)
  H.eq(false, vim.lsp.buf_is_attached(ob, c.id), "file outside the workspace not attached")
end)

H.test("read sees unsaved buffer text (sync_buffers)", function()
  local buf = contract_open("s2.txt", "disk line\n")
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, { "unsaved line" })
  local text
  H.wait(3000, function()
    text = A.text(A.call_sync("read", { path = "s2.txt" }))
    return text:find("unsaved line", 1, true)
  end, "read shows the buffer")
  H.ok(text:find("unsaved text from the editor", 1, true), "note: " .. text)
  vim.cmd("silent! edit!")
end)

H.test("edit of a clean synced buffer changes and saves it, marks exact", function()
  local buf = contract_open("s3.txt", "one\ntwo\nthree\nfour\nfive\n")
  local c = contract_wait_client(H.ws)
  H.wait(3000, function() return vim.lsp.buf_is_attached(buf, c.id) end, "attached")
  A.call_sync("read", { path = "s3.txt" })
  local res = A.call_sync("edit", { path = "s3.txt", edits = {
    { oldText = "two\n", newText = "TWO\n" },
    { oldText = "four\n", newText = "" },
    { oldText = "five\n", newText = "five\nsix\n" },
  } })
  H.eq(false, res.isError, A.text(res))
  H.ok(A.text(res):find("in the editor (saved)", 1, true), "result: " .. A.text(res))
  H.eq({ "one", "TWO", "three", "five", "six" }, H.lines(buf), "buffer")
  H.eq(false, vim.bo[buf].modified, "saved")
  H.eq("one\nTWO\nthree\nfive\nsix\n", H.read_file("s3.txt"), "disk")
  H.wait(3000, function() return #H.marks(buf) > 0 end, "marks")
  local m = H.grouped_marks(buf)
  H.eq({ { 1, "AgentlsChange" }, { 4, "AgentlsAdd" } }, m.hl, "hl")
  H.eq({ 1 }, m.sign, "sign")
  H.eq({ { 1, "two|AgentlsDelete" }, { 3, "four|AgentlsDelete" } }, m.virt, "virt")
end)

H.test("edit of a dirty synced buffer is merged in and stays unsaved", function()
  local buf = contract_open("s4.txt", "a1\na2\na3\n")
  A.call_sync("read", { path = "s4.txt" })
  vim.api.nvim_buf_set_lines(buf, 0, 1, false, { "USER" })
  H.wait(3000, function()
    return A.text(A.call_sync("read", { path = "s4.txt" })):find("USER", 1, true)
  end, "server sees the user text")
  local res = A.call_sync("edit", { path = "s4.txt", edits = { { oldText = "a3", newText = "AGENT" } } })
  H.eq(false, res.isError, A.text(res))
  H.ok(A.text(res):find("unsaved", 1, true), "result says unsaved: " .. A.text(res))
  H.eq({ "USER", "a2", "AGENT" }, H.lines(buf), "merged")
  H.eq(true, vim.bo[buf].modified, "still modified")
  H.eq("a1\na2\na3\n", H.read_file("s4.txt"), "disk untouched")
  H.wait(3000, function() return #H.marks(buf) > 0 end, "marks")
  H.eq({ { 2, "AgentlsChange" } }, H.grouped_marks(buf).hl, "marked in the buffer, unsaved")
  vim.cmd("silent! edit!")
end)

H.test("edit after the user typed since the read is refused (sync_buffers)", function()
  local buf = contract_open("s5.txt", "k1\nk2\n")
  A.call_sync("read", { path = "s5.txt" })
  vim.api.nvim_buf_set_lines(buf, 0, 1, false, { "typed" })
  vim.wait(300)
  local res = A.call_sync("edit", { path = "s5.txt", edits = { { oldText = "k2", newText = "K2" } } })
  H.eq(true, res.isError, "refused: " .. A.text(res))
  H.ok(A.text(res):find("read", 1, true), "told to read again: " .. A.text(res))
  H.eq({ "typed", "k2" }, H.lines(buf), "buffer unchanged")
  vim.cmd("silent! edit!")
end)

H.test("external write to a read file reloads its buffer (sync_buffers)", function()
  local buf = contract_open("ext2.txt", "old\n")
  A.call_sync("read", { path = "ext2.txt" })
  vim.wait(200)
  H.write_file("ext2.txt", "changed outside\n")
  H.wait(8000, function() return H.lines(buf)[1] == "changed outside" end, "reload: " .. vim.inspect(H.lines(buf)))
end)

-- ---------------------------------------------------------------- diagnostics

H.test("diagnostics: new problems after an edit reach the model", function()
  local ns = vim.api.nvim_create_namespace("contract-fake-ls")
  local buf = contract_open("dg.txt", "d1\nd2\nd3\n")
  local old = { lnum = 0, col = 0, severity = vim.diagnostic.severity.WARN, message = "old problem", source = "fake" }
  vim.diagnostic.set(ns, buf, { old })
  A.call_sync("read", { path = "dg.txt" })
  local fired = false
  vim.api.nvim_buf_attach(buf, false, { on_lines = function()
    if fired then return end
    fired = true
    vim.defer_fn(function()
      vim.diagnostic.set(ns, buf, { old, { lnum = 1, col = 0, severity = vim.diagnostic.severity.ERROR, message = "new problem", source = "fake" } })
    end, 50)
  end })
  local res = A.call_sync("edit", { path = "dg.txt", edits = { { oldText = "d2", newText = "D2" } } })
  local text = A.text(res)
  H.eq(false, res.isError, text)
  H.ok(text:find("The editor reports new problems in dg.txt:", 1, true), "header: " .. text)
  H.ok(text:find("  L2:1 error: new problem (fake)", 1, true), "new problem line: " .. text)
  H.ok(not text:find("old problem", 1, true), "baseline problem not repeated: " .. text)
  local d = res.details and res.details.diagnostics
  H.ok(d and type(d.uri) == "string" and d.uri:match("dg%.txt$"), "details.diagnostics.uri: " .. vim.inspect(res.details))
  H.eq(1, #d.new, "details.diagnostics.new")
  H.eq(2, d.total, "details.diagnostics.total")
  vim.diagnostic.reset(ns, buf)
end)

H.test("diagnostics=false: no problems section", function()
  contract_restart({ sync_buffers = true, diagnostics = false })
  local ns = vim.api.nvim_create_namespace("contract-fake-ls2")
  local buf = contract_open("dg2.txt", "e1\ne2\n")
  vim.diagnostic.set(ns, buf, { { lnum = 0, col = 0, severity = vim.diagnostic.severity.ERROR, message = "pre", source = "fake" } })
  A.call_sync("read", { path = "dg2.txt" })
  vim.api.nvim_buf_attach(buf, false, { on_lines = function()
    vim.schedule(function()
      vim.diagnostic.set(ns, buf, { { lnum = 1, col = 0, severity = vim.diagnostic.severity.ERROR, message = "post", source = "fake" } })
    end)
  end })
  local t0 = uv.hrtime()
  local res = A.call_sync("edit", { path = "dg2.txt", edits = { { oldText = "e2", newText = "E2" } } })
  local ms = (uv.hrtime() - t0) / 1e6
  H.eq(false, res.isError, A.text(res))
  H.ok(not A.text(res):find("new problems", 1, true), "no diagnostics: " .. A.text(res))
  H.ok(ms < 1000, "no wait for diagnostics, took " .. ms)
  vim.diagnostic.reset(ns, buf)
end)

-- ---------------------------------------------------------------- confirmations (mode default)

local function contract_confirm_setup()
  contract_restart({ mode = "default", sync_buffers = false })
end

local CHOICES = { "Allow once", "Always allow", "Deny", "Show change", "Deny with message" }

H.test("confirm Deny via vim.ui.select leaves the file unchanged", function()
  contract_confirm_setup()
  H.write_file("cf1.txt", "keep\n")
  A.call_sync("read", { path = "cf1.txt" })
  local log = contract_stub_select(function() return "Deny" end)
  local res = A.call_sync("edit", { path = "cf1.txt", edits = { { oldText = "keep", newText = "changed" } } })
  contract_restore()
  H.eq(1, log.n, "asked once")
  for _, c in ipairs(CHOICES) do
    local found = false
    for _, l in ipairs(log.questions[1].labels) do
      if vim.startswith(l, c) then found = true end
    end
    H.ok(found, "choice " .. c .. " offered: " .. vim.inspect(log.questions[1].labels))
  end
  H.eq(true, res.isError, "denied call is an error result")
  H.ok(A.text(res):find("denied by the user", 1, true), A.text(res))
  H.eq("keep\n", H.read_file("cf1.txt"), "file unchanged")
end)

H.test("confirm Allow once runs the call and asks again next time", function()
  H.write_file("cf2.txt", "v0\n")
  A.call_sync("read", { path = "cf2.txt" })
  local log = contract_stub_select(function() return "Allow once" end)
  local r1 = A.call_sync("edit", { path = "cf2.txt", edits = { { oldText = "v0", newText = "v1" } } })
  local r2 = A.call_sync("edit", { path = "cf2.txt", edits = { { oldText = "v1", newText = "v2" } } })
  contract_restore()
  H.eq(false, r1.isError, A.text(r1))
  H.eq(false, r2.isError, A.text(r2))
  H.eq("v2\n", H.read_file("cf2.txt"), "file")
  H.eq(2, log.n, "asked for each call")
end)

H.test("confirm Always allow covers the same file, not another", function()
  H.write_file("cf3.txt", "w0\n")
  H.write_file("cf3b.txt", "z0\n")
  A.call_sync("read", { path = "cf3.txt" })
  A.call_sync("read", { path = "cf3b.txt" })
  local log = contract_stub_select(function(n) return n == 1 and "Always allow" or "Deny" end)
  local r1 = A.call_sync("edit", { path = "cf3.txt", edits = { { oldText = "w0", newText = "w1" } } })
  local r2 = A.call_sync("edit", { path = "cf3.txt", edits = { { oldText = "w1", newText = "w2" } } })
  H.eq(1, log.n, "second edit of the same file not asked")
  local r3 = A.call_sync("edit", { path = "cf3b.txt", edits = { { oldText = "z0", newText = "z1" } } })
  contract_restore()
  H.eq(false, r1.isError, A.text(r1))
  H.eq(false, r2.isError, A.text(r2))
  H.eq("w2\n", H.read_file("cf3.txt"), "file")
  H.eq(2, log.n, "another file asks")
  H.eq(true, r3.isError, "other file denied")
  H.eq("z0\n", H.read_file("cf3b.txt"), "other file unchanged")
end)

H.test("confirm Show change opens the proposed diff, then asks again", function()
  contract_reset_ui()
  H.write_file("cf4.txt", "before\n")
  A.call_sync("read", { path = "cf4.txt" })
  local diff_seen, texts = false, {}
  local log = contract_stub_select(function(n)
    if n == 1 then return "Show change" end
    for _, w in ipairs(vim.api.nvim_list_wins()) do
      if vim.wo[w].diff then
        diff_seen = true
        table.insert(texts, table.concat(H.lines(vim.api.nvim_win_get_buf(w)), "\n"))
      end
    end
    return "Allow once"
  end)
  local res = A.call_sync("edit", { path = "cf4.txt", edits = { { oldText = "before", newText = "after" } } })
  contract_restore()
  H.eq(2, log.n, "asked again after Show change")
  H.ok(diff_seen, "a diff window was open at the second question")
  local joined = table.concat(texts, "\n--\n")
  H.ok(joined:find("before", 1, true) and joined:find("after", 1, true), "diff shows old and new: " .. joined)
  H.eq(false, res.isError, A.text(res))
  H.eq("after\n", H.read_file("cf4.txt"), "applied")
  contract_reset_ui()
end)

H.test("confirm Deny with message… sends the message; dismissing the input asks again", function()
  H.write_file("cf5.txt", "msg\n")
  A.call_sync("read", { path = "cf5.txt" })
  local inputs = 0
  vim.ui.input = function(opts, on_confirm)
    inputs = inputs + 1
    if inputs == 1 then return on_confirm(nil) end
    return on_confirm("use sed instead")
  end
  local log = contract_stub_select(function() return "Deny with message" end)
  local res = A.call_sync("edit", { path = "cf5.txt", edits = { { oldText = "msg", newText = "MSG" } } })
  contract_restore()
  H.eq(2, log.n, "dismissed input asks the question again")
  H.eq(2, inputs, "input asked twice")
  H.eq(true, res.isError, "denied")
  H.ok(A.text(res):find("denied by the user: use sed instead", 1, true), A.text(res))
  H.eq("msg\n", H.read_file("cf5.txt"), "unchanged")
end)

H.test("confirm answered asynchronously (picker answering later) works", function()
  H.write_file("cf6.txt", "as\n")
  A.call_sync("read", { path = "cf6.txt" })
  local log = contract_stub_select(function()
    return function(on_choice, items, labels)
      vim.defer_fn(function() on_choice(contract_pick(items, labels, "Allow once")) end, 150)
    end
  end)
  local res = A.call_sync("edit", { path = "cf6.txt", edits = { { oldText = "as", newText = "AS" } } }, 10000)
  contract_restore()
  H.eq(1, log.n, "asked")
  H.eq(false, res and res.isError, "allowed: " .. vim.inspect(res))
  H.eq("AS\n", H.read_file("cf6.txt"), "applied")
end)

H.test("confirm dismissed (no choice) does not run the call", function()
  H.write_file("cf7.txt", "dz\n")
  A.call_sync("read", { path = "cf7.txt" })
  contract_stub_select(function() return nil end)
  local res = A.call_sync("edit", { path = "cf7.txt", edits = { { oldText = "dz", newText = "DZ" } } }, 5000)
  contract_restore()
  H.ok(res ~= nil, "call ends")
  H.eq(true, res.isError, "not run")
  H.eq("dz\n", H.read_file("cf7.txt"), "unchanged")
end)

H.test("bash confirm: Deny runs nothing; Always allow covers the same command line", function()
  local log = contract_stub_select(function(n) return n == 1 and "Deny" or "Always allow" end)
  local r1 = A.call_sync("bash", { command = "touch made1.txt" })
  H.eq(true, r1.isError, "denied")
  H.eq(nil, uv.fs_stat(H.path("made1.txt")), "no file")
  local r2 = A.call_sync("bash", { command = "touch made2.txt" })
  local r3 = A.call_sync("bash", { command = "touch made2.txt" })
  H.eq(2, log.n, "same command line not asked again")
  local r4 = A.call_sync("bash", { command = "touch made3.txt" })
  contract_restore()
  H.eq(false, r2.isError, A.text(r2))
  H.eq(false, r3.isError, A.text(r3))
  H.eq(3, log.n, "another command asks")
  H.eq(false, r4.isError, A.text(r4))
end)

H.test("cancel while the picker is open: -32800, late choice ignored", function()
  H.write_file("cf8.txt", "cx\n")
  A.call_sync("read", { path = "cf8.txt" })
  local id
  local log = contract_stub_select(function()
    vim.defer_fn(function() A.cancel(id) end, 100)
    return false
  end)
  local done, e
  id = A.call("edit", { path = "cf8.txt", edits = { { oldText = "cx", newText = "CX" } } }, function(err) done, e = true, err end)
  H.wait(8000, function() return done end, "callback after cancel")
  H.eq(1, log.n, "asked")
  H.eq(-32800, e and e.code, "cancelled: " .. vim.inspect(e))
  H.ok(log.pending, "picker still open")
  pcall(log.pending, contract_pick(log.pending_items, log.pending_labels, "Allow once"))
  vim.wait(500)
  contract_restore()
  H.eq("cx\n", H.read_file("cf8.txt"), "late Allow once ignored")
end)

H.test("call_sync timeout while the picker is open ends the question", function()
  H.write_file("cf9.txt", "ty\n")
  A.call_sync("read", { path = "cf9.txt" })
  local log = contract_stub_select(function() return false end)
  -- On a hang, answer Deny after 6 s so the rest of the script can run.
  local rescued = false
  vim.defer_fn(function()
    if log.pending and not rescued then
      rescued = true
      pcall(log.pending, contract_pick(log.pending_items, log.pending_labels, "Deny"))
    end
  end, 6000)
  local t0 = uv.hrtime()
  local res, err = A.call_sync("edit", { path = "cf9.txt", edits = { { oldText = "ty", newText = "TY" } } }, 800)
  local ms = (uv.hrtime() - t0) / 1e6
  H.ok(not rescued, string.format("call_sync(…, 800) did not return until the picker was answered (%.0f ms)", ms))
  H.eq(nil, res, "no result")
  H.ok(err ~= nil, "error")
  H.ok(ms < 4000, "returned after " .. ms)
  if log.pending then
    pcall(log.pending, contract_pick(log.pending_items, log.pending_labels, "Allow once"))
  end
  vim.wait(500)
  contract_restore()
  H.eq("ty\n", H.read_file("cf9.txt"), "not applied")
  -- The session is still usable: another question is asked and answered.
  H.write_file("cf10.txt", "ok\n")
  A.call_sync("read", { path = "cf10.txt" })
  local log2 = contract_stub_select(function() return "Allow once" end)
  local r2 = A.call_sync("edit", { path = "cf10.txt", edits = { { oldText = "ok", newText = "OK" } } }, 8000)
  contract_restore()
  H.eq(1, log2.n, "next question asked")
  H.eq(false, r2 and r2.isError, "next call allowed: " .. vim.inspect(r2))
end)

-- ---------------------------------------------------------------- setup() options and restarts

H.test("setup() with the same options restarts nothing", function()
  local c1, o = contract_restart({ mode = "bypass" })
  A.setup(o)
  -- A restart would stop c1 (its shutdown is asked at once).
  vim.wait(500, function() return require("agentls.compat").is_stopped(c1) end, 10)
  local c2 = contract_wait_client(H.ws)
  H.eq(c1.id, c2.id, "same client")
end)

H.test("setup() with another mode restarts; a running call ends with an error", function()
  local c1 = contract_wait_client(H.ws)
  local done, e
  A.call("bash", { command = "sleep 20" }, function(err) done, e = true, err end)
  vim.wait(300)
  local c2 = contract_restart({ mode = "readOnly" })
  H.wait(5000, function() return done end, "running call ends")
  H.ok(e ~= nil, "ends with an error")
  H.ok(c2.id ~= c1.id, "new client")
  local res = A.call_sync("write", { path = "ro.txt", content = "x" })
  H.eq(true, res.isError, "readOnly denies write")
  H.eq(nil, uv.fs_stat(H.path("ro.txt")), "nothing written")
end)

H.test("a call made right after setup() uses the new options", function()
  contract_setup({ mode = "bypass" })
  A.call_sync("read", { path = "hello.txt" }, 10000)
  contract_setup({ mode = "readOnly" })
  local res = A.call_sync("write", { path = "ro2.txt", content = "x" }, 10000)
  H.eq(true, res and res.isError, "write right after setup(readOnly) is denied: " .. vim.inspect(res and A.text(res)))
  H.eq(nil, uv.fs_stat(H.path("ro2.txt")), "nothing written")
  contract_setup({ mode = "bypass" })
  local res2 = A.call_sync("write", { path = "ro3.txt", content = "x" }, 10000)
  H.eq(false, res2 and res2.isError, "write right after setup(bypass) runs: " .. vim.inspect(res2 and A.text(res2)))
end)

H.test("permissions rules and empty permission tables", function()
  contract_setup({ permissions = { deny = { "Read(hello.txt)" } } })
  local r = A.call_sync("read", { path = "hello.txt" })
  H.eq(true, r.isError, "deny rule applied: " .. A.text(r))
  for _, p in ipairs({ {}, { allow = {}, ask = {}, deny = {} } }) do
    contract_setup({ permissions = p })
    local res, err = A.call_sync("read", { path = "hello.txt" }, 10000)
    H.eq(nil, err, "permissions " .. vim.inspect(p) .. " err")
    H.eq(false, res.isError, "permissions " .. vim.inspect(p))
  end
end)

H.test("cmd_env reaches the server", function()
  contract_setup({ cmd_env = { CMD_ENV_MARK = "xyz123" } })
  local res = A.call_sync("bash", { command = "echo $CMD_ENV_MARK" })
  H.ok(A.text(res):find("xyz123", 1, true), A.text(res))
end)

H.test("autostart=false starts on first use", function()
  H.stop_all()
  contract_setup({ autostart = false })
  vim.wait(300)
  H.eq(0, #contract_clients(), "no client yet")
  local res = A.call_sync("read", { path = "hello.txt" }, 10000)
  H.eq(false, res and res.isError, "first call works")
  H.eq(1, #contract_clients(), "started")
  contract_setup()
end)

-- ---------------------------------------------------------------- multiple roots

H.test("one client per workspace root (git root or cwd)", function()
  local ws2 = vim.fn.tempname() .. "-ws2"
  vim.fn.mkdir(ws2 .. "/sub", "p")
  vim.fn.writefile({ "only in two" }, ws2 .. "/only2.txt")
  vim.fn.system({ "git", "-C", ws2, "init", "-q" })
  local ws3 = vim.fn.tempname() .. "-ws3" -- no git: cwd is the root
  vim.fn.mkdir(ws3, "p")
  vim.fn.writefile({ "only in three" }, ws3 .. "/only3.txt")
  local ok, err = pcall(function()
    vim.cmd("cd " .. vim.fn.fnameescape(ws2 .. "/sub"))
    local r2 = A.call_sync("read", { path = "only2.txt" }, 10000)
    H.eq(false, r2 and r2.isError, "read in ws2: " .. vim.inspect(r2))
    H.ok(A.text(r2):find("only in two", 1, true), A.text(r2))
    H.ok(contract_client_for(ws2), "client rooted at the git root of ws2")
    vim.cmd("cd " .. vim.fn.fnameescape(ws3))
    local r3 = A.call_sync("read", { path = "only3.txt" }, 10000)
    H.eq(false, r3 and r3.isError, "read in ws3")
    H.ok(contract_client_for(ws3), "client rooted at cwd ws3")
    vim.cmd("cd " .. vim.fn.fnameescape(H.ws))
    local r1 = A.call_sync("read", { path = "hello.txt" }, 10000)
    H.eq(false, r1.isError, "back in ws")
    H.eq(3, #contract_clients(), "three clients, one per root")
  end)
  vim.cmd("cd " .. vim.fn.fnameescape(H.ws))
  if not ok then error(err, 0) end
end)

H.test("root_dir option (string and function)", function()
  local d = vim.fn.tempname() .. "-rd"
  vim.fn.mkdir(d, "p")
  vim.fn.writefile({ "root dir file" }, d .. "/rd.txt")
  contract_setup({ root_dir = d })
  local r = A.call_sync("read", { path = "rd.txt" }, 10000)
  H.eq(false, r and r.isError, "string root_dir: " .. vim.inspect(r))
  contract_setup({ root_dir = function() return d end })
  local r2 = A.call_sync("read", { path = "rd.txt" }, 10000)
  H.eq(false, r2 and r2.isError, "function root_dir")
  contract_setup({ root_dir = function() return H.ws end })
  local r3 = A.call_sync("read", { path = "hello.txt" }, 10000)
  H.eq(false, r3 and r3.isError, "back to the default root")
end)

-- ---------------------------------------------------------------- health

H.test(":checkhealth agentls reports OK (binary, version, ripgrep, watcher)", function()
  contract_setup()
  contract_wait_client(H.ws)
  vim.cmd("checkhealth agentls")
  local t = table.concat(H.lines(0), "\n")
  contract_reset_ui()
  H.ok(t:find("OK", 1, true), "OK lines: " .. t)
  H.ok(not t:find("ERROR", 1, true), "no ERROR: " .. t)
  H.ok(t:find("0%.%d") or t:find("version", 1, true), "version: " .. t)
  H.ok(t:lower():find("ripgrep", 1, true) or t:find("rg", 1, true), "ripgrep: " .. t)
  H.ok(t:find("inotify", 1, true), "watcher mode: " .. t)
end)

H.test(":checkhealth agentls reports ERROR for a missing binary", function()
  H.stop_all()
  contract_setup({ cmd = { "/nonexistent/agentls" }, autostart = false })
  vim.cmd("checkhealth agentls")
  local t = table.concat(H.lines(0), "\n")
  contract_reset_ui()
  contract_setup({ cmd = { H.bin }, autostart = true })
  H.ok(t:find("ERROR", 1, true), "ERROR for missing binary: " .. t)
end)

H.test("stop() stops every client", function()
  A.call_sync("read", { path = "hello.txt" }, 10000)
  H.stop_all()
  H.eq(0, #contract_clients(), "no clients")
end)

H.finish()
