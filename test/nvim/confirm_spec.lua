-- The permission ask flow through the real binary in mode "default": the
-- server sends tools/confirm for edits, the plugin's handler answers through
-- vim.ui.select (stubbed here), and cancelling a call while its question is
-- open ends the question on both sides.
local here = vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":h")
local t = dofile(here .. "/helpers.lua")

vim.opt.rtp:prepend(t.plugin)
vim.cmd("runtime plugin/agentls.lua")
vim.cmd("cd " .. vim.fn.fnameescape(t.ws))

local agentls = require("agentls")
local compat = require("agentls.compat")

local real_notify, real_select, real_input = vim.notify, vim.ui.select, vim.ui.input
vim.notify = function() end

-- Each select pops the next answer: a choice label (given at once), a
-- {later = label} (given 30 ms later, so 0.7's handler has to wait for it)
-- or a function(on_choice) that decides itself.
local asked, answers = {}, {}
vim.ui.select = function(items, opts, on_choice)
  table.insert(asked, { items = items, prompt = opts.prompt, kind = opts.kind })
  local a = table.remove(answers, 1)
  if type(a) == "function" then
    a(on_choice)
  elseif type(a) == "table" then
    vim.defer_fn(function() on_choice(a.later) end, 30)
  else
    on_choice(a)
  end
end
local prompts, typed = {}, {}
vim.ui.input = function(opts, on_confirm)
  table.insert(prompts, opts.prompt)
  on_confirm(table.remove(typed, 1))
end

local function log_has(s)
  for _, l in ipairs(agentls.log_lines()) do
    if l:find(s, 1, true) then
      return true
    end
  end
  return false
end

--- Unblocks a question the cancel failed to end (0.7 would otherwise wait
--- in the handler for minutes): answers "Deny" after ms, and says so.
local function backstop(on_choice, ms)
  local fired = false
  vim.defer_fn(function()
    if next(agentls._state.confirms) ~= nil then
      fired = true
      on_choice("Deny")
    end
  end, ms)
  return function() return fired end
end

--- Reads rel (edit needs a fresh read stamp), then replaces old with new.
local function edit_sync(rel, old, new)
  local r, err = agentls.call_sync("read", { path = rel }, 5000)
  t.ok(r and not r.isError, "read " .. rel .. ": " .. vim.inspect(err or agentls.text(r)))
  return agentls.call_sync("edit", { path = rel, edits = { { oldText = old, newText = new } } }, 10000)
end

local function read_args(rel)
  assert(agentls.call_sync("read", { path = rel }, 5000))
  return { path = rel, edits = { { oldText = "alpha\n", newText = "ALPHA\n" } } }
end

t.test("setup in mode default declares the confirm capability", function()
  agentls.setup({ cmd = { t.bin }, root_dir = t.ws })
  t.eq("default", agentls.config.mode, "mode")
  t.wait(5000, function() return agentls.initialize_result(t.ws) ~= nil end, "initialize")
end)

t.test("allowOnce: the edit runs and the next edit asks again", function()
  asked, answers = {}, { { later = "Allow once" } }
  local res, err = edit_sync("lines.txt", "two\n", "TWO\n")
  t.ok(res, vim.inspect(err))
  t.eq(1, #asked, "questions after the first edit (reads do not ask)")
  t.eq("agentls.confirm", asked[1].kind, "picker kind")
  t.ok(asked[1].prompt:find("edit", 1, true), asked[1].prompt)
  t.eq({ "Allow once", "Always allow", "Deny", "Show change", "Deny with message…" }, asked[1].items,
    "choices for an edit (it has a preview)")
  t.eq(false, res.isError, agentls.text(res))
  t.eq("one\nTWO\nthree\nfour\nfive\n", t.read_file("lines.txt"), "file after the allowed edit")

  answers = { "Allow once" }
  res, err = edit_sync("lines.txt", "three\n", "THREE\n")
  t.ok(res, vim.inspect(err))
  t.eq(2, #asked, "the same kind of call asked again")
  t.eq(false, res.isError, agentls.text(res))
  t.eq("one\nTWO\nTHREE\nfour\nfive\n", t.read_file("lines.txt"), "file after the second edit")
end)

t.test("reject with a message: isError carries it and the file is unchanged", function()
  asked, answers, prompts, typed = {}, { "Deny with message…" }, {}, { "use gofmt instead" }
  local before = t.read_file("src/main.go")
  local res, err = edit_sync("src/main.go", '\tprintln("hi")\n', '\tprintln("bye")\n')
  t.ok(res, vim.inspect(err))
  t.eq(1, #asked, "asked once")
  t.eq(1, #prompts, "asked for the message")
  t.eq(true, res.isError, "denied call is an error result")
  local text = agentls.text(res)
  t.ok(text:find("denied by the user", 1, true), text)
  t.ok(text:find("use gofmt instead", 1, true), text)
  t.eq(before, t.read_file("src/main.go"), "file on disk")

  -- Dismissing the message prompt goes back to the question.
  asked, answers, prompts, typed = {}, { "Deny with message…", "Deny" }, {}, {}
  res = assert(edit_sync("src/main.go", '\tprintln("hi")\n', '\tprintln("bye")\n'))
  t.eq(2, #asked, "asked again after the dismissed prompt")
  t.eq(true, res.isError, "plain Deny")
  t.ok(not agentls.text(res):find("denied by the user:", 1, true), "no message: " .. agentls.text(res))
  t.eq(before, t.read_file("src/main.go"), "file on disk after Deny")
end)

-- On 0.7 the confirm handler blocks in vim.wait until it is answered, so the
-- cancel has to happen inside that wait: the stub schedules it and keeps the
-- picker's callback to answer late. The handler runs nested inside t.wait
-- below, so getting past t.wait at all proves the cancel ended its wait.
t.test("cancel() while the question is open: -32800, the question ends, the late answer is ignored", function()
  local before = t.read_file("hello.txt")
  local held, id, done, cerr, cres, stuck
  asked, answers = {}, { function(on_choice)
    held = on_choice
    stuck = backstop(on_choice, 3000)
    vim.defer_fn(function() agentls.cancel(id) end, 50)
  end }
  local args = read_args("hello.txt")
  id = agentls.call("edit", args, function(e, r) done, cerr, cres = true, e, r end)
  t.wait(5000, function() return done end, "cancelled reply")
  t.eq(-32800, cerr and cerr.code, "error code: " .. vim.inspect(cerr or cres))
  t.eq(1, #asked, "asked once")
  t.wait(5000, function() return next(agentls._state.confirms) == nil end, "question ended")
  t.ok(not stuck(), "cancel() did not end the question")
  t.ok(log_has("cancelled (call cancelled)"), "ended by cancel()")
  held("Allow once")
  t.ok(log_has("late answer allowOnce ignored"), "late answer not ignored")
  vim.wait(200)
  t.eq(before, t.read_file("hello.txt"), "file on disk")
  local r = agentls.call_sync("read", { path = "hello.txt" }, 5000)
  t.ok(r and not r.isError, "server still answers: " .. vim.inspect(r))
end)

t.test("the server's $/cancelRequest alone ends an open question", function()
  local before = t.read_file("hello.txt")
  local held, id, done, cerr, stuck
  asked, answers = {}, { function(on_choice)
    held = on_choice
    stuck = backstop(on_choice, 3000)
    vim.defer_fn(function()
      -- Cancel the tools/call on the wire only: the plugin does not settle
      -- the question itself, so only the server's cancel can end the wait.
      local call = agentls._state.calls[id]
      compat.cancel_request(vim.lsp.get_client_by_id(call.client_id), call.request_id)
    end, 50)
  end }
  local args = read_args("hello.txt")
  id = agentls.call("edit", args, function(e) done, cerr = true, e end)
  t.wait(5000, function() return #asked == 1 and next(agentls._state.confirms) == nil end, "question ended")
  t.ok(not stuck(), "the server's $/cancelRequest did not end the question")
  t.ok(log_has("cancelled (server cancelled request"), "ended by the server's cancel")
  held("Allow once")
  vim.wait(200)
  t.eq(before, t.read_file("hello.txt"), "file on disk")
  -- Neovim drops the server's -32800 reply; cancel() still settles the callback.
  if not done then
    agentls.cancel(id)
  end
  t.wait(1000, function() return done end, "callback")
  t.eq(-32800, cerr and cerr.code, "error code")

  -- The server is not stuck on the cancelled question.
  answers = { "Allow once" }
  local res = assert(edit_sync("hello.txt", "alpha\n", "ALPHA\n"))
  t.eq(2, #asked, "next edit asked")
  t.eq(false, res.isError, agentls.text(res))
  t.eq("ALPHA\nbeta\ngamma\n", t.read_file("hello.txt"), "file after the allowed edit")
end)

t.test("allowAlways: a second edit of the same file does not ask", function()
  asked, answers = {}, { "Always allow" }
  local res = assert(edit_sync("hello.txt", "beta\n", "BETA\n"))
  t.eq(1, #asked, "asked once")
  t.eq(false, res.isError, agentls.text(res))
  res = assert(edit_sync("hello.txt", "gamma\n", "GAMMA\n"))
  t.eq(1, #asked, "second edit of the same file did not ask")
  t.eq(false, res.isError, agentls.text(res))
  t.eq("ALPHA\nBETA\nGAMMA\n", t.read_file("hello.txt"), "file")
  -- The rule is for that file only.
  answers = { "Deny" }
  res = assert(edit_sync("lines.txt", "one\n", "ONE\n"))
  t.eq(2, #asked, "another file still asks")
  t.eq(true, res.isError, "denied")
end)

-- As with cancel() above, 0.7 blocks in the handler while the question is
-- open, so the kill is scheduled from the picker stub and comes inside that
-- wait; getting past call_sync promptly proves the exit ended the wait.
t.test("the server dies while a question is open: the call errors at once, the question ends", function()
  local c = vim.lsp.get_client_by_id(agentls.start(t.ws))
  local pid = t.server_pid(c)
  if not pid then
    t.skip("no server pid on this Neovim")
  end
  t.write_file("dies.txt", "alpha\nbeta\n")
  local held, stuck
  asked, answers = {}, { function(on_choice)
    held = on_choice
    stuck = backstop(on_choice, 3000)
    vim.defer_fn(function() vim.loop.kill(pid, "sigkill") end, 50)
  end }
  local args = read_args("dies.txt")
  local t0 = vim.loop.hrtime()
  local res, err = agentls.call_sync("edit", args, 5000)
  local ms = (vim.loop.hrtime() - t0) / 1e6
  t.eq(nil, res, "result")
  t.eq(-32603, err and err.code, "error: " .. vim.inspect(err))
  t.ok(err.message:find("agentls exited (code", 1, true), err.message)
  t.ok(ms < 2500, "call_sync returned after " .. math.floor(ms) .. " ms")
  t.eq(1, #asked, "asked once")
  t.wait(2000, function() return next(agentls._state.confirms) == nil end, "question ended")
  t.ok(not stuck(), "the exit did not end the question")
  t.ok(log_has("cancelled (agentls exited"), "ended by the exit")
  held("Allow once")
  t.ok(log_has("late answer allowOnce ignored"), "late answer not ignored")
  t.eq("alpha\nbeta\n", t.read_file("dies.txt"), "file on disk")
  local r = agentls.call_sync("read", { path = "dies.txt" }, 5000)
  t.ok(r and not r.isError, "the next call starts a server: " .. vim.inspect(r))
end)

vim.notify, vim.ui.select, vim.ui.input = real_notify, real_select, real_input
agentls.stop()
vim.wait(2000, function() return #compat.get_clients("agentls") == 0 end)
t.finish()
