-- tools/diagnostics through the real binary: the plugin declares the
-- capability, answers from vim.diagnostic (UTF-16 columns), waits after a
-- change only when something could report on the buffer (a change, then
-- 150 ms quiet, capped at waitMs), and the edit's result tells the model
-- the new problems but not the ones that were there before. A fake
-- "language server" (a vim.diagnostic namespace fed from on_lines) stands
-- in for a real one.
local here = vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":h")
local t = dofile(here .. "/helpers.lua")

vim.opt.rtp:prepend(t.plugin)
vim.cmd("runtime plugin/agentls.lua")
vim.cmd("cd " .. vim.fn.fnameescape(t.ws))

local agentls = require("agentls")
local diagnostics = require("agentls.diagnostics")

local real_notify = vim.notify
vim.notify = function() end

local ERROR, WARN = vim.diagnostic.severity.ERROR, vim.diagnostic.severity.WARN
-- How long the fake language server takes to report on a change: longer
-- than Neovim's didChange debounce (150 ms on 0.7), after which agentls asks,
-- so the handler has to wait for it.
local LS_DELAY_MS = 300
-- A language server quicker than that: its report is in before agentls asks.
local QUICK_LS_MS = 20
-- When the handler tests update the diagnostics.
local UPDATE_MS = 100
-- "At once": well under any wait the handler could do.
local PROMPT_MS = 100
-- How late past its deadline a wait may end (the event loop, the poll).
local SLACK_MS = 150

local function now_ms()
  return vim.loop.hrtime() / 1e6
end

-- The buffer of rel, made current; loaded first if it is not (":edit" of
-- the current file would reload it).
local function open(rel)
  local b = vim.fn.bufnr(t.path(rel))
  if b > 0 and vim.api.nvim_buf_is_loaded(b) then
    vim.api.nvim_set_current_buf(b)
    return b
  end
  vim.cmd("edit " .. vim.fn.fnameescape(t.path(rel)))
  return vim.api.nvim_get_current_buf()
end

local function uri(rel)
  return vim.uri_from_fname(t.path(rel))
end

-- The fake language server of buf: a warning that is always there and an
-- error at every "BROKEN", reported delay_ms after the last change.
local ls_ns = vim.api.nvim_create_namespace("agentls_test_fake_ls")
local function fake_ls(buf, delay_ms)
  local function report()
    if not vim.api.nvim_buf_is_loaded(buf) then
      return
    end
    local ds = { { lnum = 0, col = 0, end_lnum = 0, end_col = 2, severity = WARN, message = "old warning",
      source = "fakels" } }
    for i, line in ipairs(t.lines(buf)) do
      local c = line:find("BROKEN", 1, true)
      if c then
        table.insert(ds, { lnum = i - 1, col = c - 1, end_lnum = i - 1, end_col = c + 5, severity = ERROR,
          message = "broken token", source = "fakels", code = "E1" })
      end
    end
    vim.diagnostic.set(ls_ns, buf, ds)
  end
  local gen = 0
  local function changed()
    gen = gen + 1
    local mine = gen
    vim.defer_fn(function()
      if mine == gen then
        report()
      end
    end, delay_ms)
  end
  vim.api.nvim_buf_attach(buf, false, { on_lines = changed, on_reload = changed })
  report()
end

-- Records the tools/diagnostics requests the server sends (by waitMs) and
-- when the last answer to one that waits (waitMs > 0) went; runs
-- while_waiting 50 ms into such a wait (0.7 waits inside the handler, so the
-- test's own wait does not look until it answers; 0.10 yields, so it does).
local asked, answered_at, while_waiting = {}, nil, nil
local real_handler = agentls._handlers["tools/diagnostics"]
agentls._handlers["tools/diagnostics"] = function(err, params, ctx)
  table.insert(asked, params.waitMs)
  if params.waitMs > 0 and while_waiting then
    vim.defer_fn(while_waiting, 50)
  end
  local res = real_handler(err, params, ctx)
  if params.waitMs > 0 then
    answered_at = now_ms()
  end
  return res
end

local function call(tool, args)
  local start = now_ms()
  local res, err = agentls.call_sync(tool, args, 10000)
  t.ok(res and not res.isError, vim.inspect(err or res))
  return agentls.text(res), now_ms() - start, res
end

local function sent_caps(id)
  return vim.lsp.get_client_by_id(id).config.capabilities.experimental.agentls
end

local function start(opts)
  agentls.setup(vim.tbl_extend("force", { cmd = { t.bin }, root_dir = t.ws, mode = "acceptEdits" }, opts or {}))
  local id = agentls.start(t.ws)
  t.wait(5000, function() return agentls.initialize_result(t.ws) ~= nil end, "initialize")
  return id
end

-- Line 2 has a two-byte "é" before the edit point: its UTF-16 column is one
-- less than its byte column.
t.write_file("a.lua", '-- ok\nlocal s = "é"\nreturn s\n')
t.write_file("quiet.lua", "-- ok\nreturn 1\n")
t.write_file("closed.lua", "-- ok\nreturn 2\n")

local id = start()
local a = open("a.lua")
fake_ls(a, LS_DELAY_MS)

t.test("the diagnostics capability is declared by default", function()
  t.eq(true, sent_caps(id).diagnostics, "capabilities.experimental.agentls.diagnostics")
end)

t.test("edit reports the new error, not the warning that was there", function()
  t.eq(1, #vim.diagnostic.get(a), "the warning is there before")
  call("read", { path = "a.lua" })
  asked = {}
  local text, took, res = call("edit", { path = "a.lua",
    edits = { { oldText = 'local s = "é"', newText = 'local s = "é" .. BROKEN' } } })
  t.eq({ 0, 1500 }, asked, "waitMs of the requests (baseline, after the change)")
  t.ok(text:find('The editor reports new problems in a.lua:\n  L2:18 error: broken token (fakels)', 1, true), text)
  t.ok(not text:find("old warning", 1, true), text)
  local d = res.details.diagnostics
  t.eq(2, d.total, "details.diagnostics.total")
  t.eq(1, #d.new, "details.diagnostics.new")
  t.eq({ line = 1, character = 17 }, d.new[1].range.start, "UTF-16 start")
  t.eq({ "E1", ERROR }, { d.new[1].code, d.new[1].severity }, "code, severity")
  -- It waited for the report (LS_DELAY_MS) and the quiet after it, no longer.
  t.ok(took >= LS_DELAY_MS + diagnostics.QUIET_MS and took < 1500, "edit took " .. took .. " ms")
end)

t.test("a report that comes before agentls asks counts as the update", function()
  t.write_file("c.lua", "-- ok\nreturn 4\n")
  local c = open("c.lua")
  fake_ls(c, QUICK_LS_MS)
  call("read", { path = "c.lua" })
  local text, took = call("edit", { path = "c.lua", edits = { { oldText = "return 4", newText = "return BROKEN" } } })
  t.ok(text:find("The editor reports new problems in c.lua:\n  L2:8 error: broken token (fakels)", 1, true), text)
  t.ok(took < 1000, "edit took " .. took .. " ms (waited for a second report)")
end)

t.test("an edit of a file that is not loaded does not wait and reports nothing", function()
  call("read", { path = "closed.lua" })
  local text, took = call("edit", { path = "closed.lua",
    edits = { { oldText = "return 2", newText = "return BROKEN" } } })
  t.ok(not text:find("The editor reports", 1, true), text)
  t.ok(took < 500, "edit took " .. took .. " ms")
  t.eq(-1, vim.fn.bufnr(t.path("closed.lua")), "no buffer was created")
end)

local handler = real_handler

local function ask(rel, wait_ms)
  local start_ms = now_ms()
  local res = handler(nil, { callId = "test", tool = "edit", uris = { uri(rel) }, waitMs = wait_ms },
    { client_id = id })
  return res, now_ms() - start_ms
end

t.test("handler: a buffer that is not loaded answers at once with nothing", function()
  local res, took = ask("closed.lua", 1500)
  t.eq({ items = { { uri = uri("closed.lua"), diagnostics = {} } } }, res, "answer")
  t.ok(took < PROMPT_MS, "took " .. took .. " ms")
end)

t.test("handler: a loaded buffer nothing reports on answers at once", function()
  local q = open("quiet.lua")
  t.eq(0, #vim.diagnostic.get(q), "no diagnostics")
  local res, took = ask("quiet.lua", 1500)
  t.eq({}, res.items[1].diagnostics, "diagnostics")
  t.ok(took < PROMPT_MS, "took " .. took .. " ms")
end)

local static_ns = vim.api.nvim_create_namespace("agentls_test_static")

t.test("handler: a source that never updates ends the wait at waitMs", function()
  local q = open("quiet.lua")
  vim.diagnostic.set(static_ns, q, { { lnum = 1, col = 0, severity = WARN, message = "static" } })
  local res, took = ask("quiet.lua", 300)
  t.eq(1, #res.items[1].diagnostics, "diagnostics")
  t.eq("static", res.items[1].diagnostics[1].message, "message")
  t.ok(took >= 300 and took < 300 + SLACK_MS, "took " .. took .. " ms")
end)

t.test("handler: waits for an update, then for the quiet after it", function()
  local q = open("quiet.lua")
  vim.defer_fn(function()
    vim.diagnostic.set(static_ns, q, { { lnum = 1, col = 0, severity = ERROR, message = "updated" } })
  end, UPDATE_MS)
  local res, took = ask("quiet.lua", 1500)
  t.eq({ "updated" }, vim.tbl_map(function(d) return d.message end, res.items[1].diagnostics), "messages")
  t.ok(took >= UPDATE_MS + diagnostics.QUIET_MS and took < UPDATE_MS + diagnostics.QUIET_MS + SLACK_MS,
    "took " .. took .. " ms")
end)

t.test("handler: the server's $/cancelRequest ends the wait", function()
  vim.defer_fn(function()
    agentls._handlers["$/cancelRequest"](nil, { id = 99 }, { client_id = id })
  end, 50)
  local res, took = ask("quiet.lua", 1500)
  t.eq(1, #res.items[1].diagnostics, "answers with what it has")
  t.ok(took < 50 + SLACK_MS, "took " .. took .. " ms")
end)

t.test("an edit whose diagnostics never update returns within waitMs", function()
  vim.diagnostic.set(static_ns, open("quiet.lua"), { { lnum = 1, col = 0, severity = WARN, message = "static" } })
  call("read", { path = "quiet.lua" })
  local text, took = call("edit", { path = "quiet.lua", edits = { { oldText = "-- ok", newText = "-- still ok" } } })
  t.ok(not text:find("The editor reports", 1, true), text)
  t.ok(took >= 1500 and took < 2500, "edit took " .. took .. " ms")
end)

t.test("cancelling the call ends the wait after its edit", function()
  call("read", { path = "quiet.lua" })
  asked, answered_at = {}, nil
  local call_id, cancelled_at
  while_waiting = function()
    cancelled_at = now_ms()
    t.ok(agentls.cancel(call_id), "cancel")
  end
  call_id = agentls.call("edit", { path = "quiet.lua", edits = { { oldText = "return 1", newText = "return 5" } } })
  t.wait(5000, function() return answered_at ~= nil and #asked == 2 end, "the answer after the change")
  while_waiting = nil
  t.ok(cancelled_at, "cancelled while waiting")
  local after = answered_at - cancelled_at
  t.ok(after >= 0 and after < SLACK_MS, "answered " .. after .. " ms after the cancel")
end)

t.test("sync off: the changed file is reloaded into its clean buffer and reported", function()
  t.stop_all()
  start({ sync_buffers = false })
  t.write_file("b.lua", "-- ok\nreturn 3\n")
  local b = open("b.lua")
  fake_ls(b, LS_DELAY_MS)
  call("read", { path = "b.lua" })
  local text = call("edit", { path = "b.lua", edits = { { oldText = "return 3", newText = "return BROKEN" } } })
  t.eq({ "-- ok", "return BROKEN" }, t.lines(b), "buffer reloaded")
  t.ok(text:find("The editor reports new problems in b.lua:\n  L2:8 error: broken token (fakels)", 1, true), text)
end)

t.test("diagnostics = false: not declared, not asked, nothing reported", function()
  t.stop_all()
  local off = start({ diagnostics = false })
  t.eq(false, sent_caps(off).diagnostics, "capabilities.experimental.agentls.diagnostics")
  asked = {}
  call("read", { path = "a.lua" })
  local text = call("edit", { path = "a.lua", edits = { { oldText = "return s", newText = "return BROKEN" } } })
  t.eq({}, asked, "tools/diagnostics requests")
  t.ok(not text:find("The editor reports", 1, true), text)
end)

vim.notify = real_notify
t.stop_all()
t.finish()
