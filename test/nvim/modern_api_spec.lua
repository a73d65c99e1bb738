-- The plugin uses the current Neovim API where it exists (through
-- agentls.compat) and so prints no deprecation warning: after setup, a read,
-- an edit of a synced buffer and stop, :messages has none and vim.deprecate
-- was never called, not even for the deprecations newer Neovims show only
-- later (0.10 shows a warning only for what goes in 0.11). On 0.7 the old
-- API is the only one; the checks hold there too.
local here = vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":h")
local t = dofile(here .. "/helpers.lua")

vim.o.hidden = true
vim.opt.rtp:prepend(t.plugin)
vim.cmd("runtime plugin/agentls.lua")
vim.cmd("cd " .. vim.fn.fnameescape(t.ws))

-- Every vim.deprecate call (0.9+), shown or not.
local deprecated = {}
local real_deprecate = vim.deprecate
if real_deprecate then
  vim.deprecate = function(name, alternative, version, ...)
    table.insert(deprecated, string.format("%s (use %s; removed in %s)", tostring(name), tostring(alternative),
      tostring(version)))
    return real_deprecate(name, alternative, version, ...)
  end
end

-- The old functions with a newer replacement, counted when called (they are
-- soft-deprecated on 0.10: no warning yet, so vim.deprecate alone would not
-- show a call).
local legacy_calls = {}
local function spy(tbl, key, label)
  local real = tbl[key]
  if type(real) ~= "function" then
    return
  end
  tbl[key] = function(...)
    table.insert(legacy_calls, label)
    return real(...)
  end
end
local modern = vim.fn.has("nvim-0.10") == 1
if modern then
  spy(vim.lsp, "get_active_clients", "vim.lsp.get_active_clients")
  spy(vim.lsp, "buf_get_clients", "vim.lsp.buf_get_clients")
  spy(vim.lsp, "client_is_stopped", "vim.lsp.client_is_stopped")
  if vim.fn.has("nvim-0.11") == 1 then
    spy(vim.lsp, "start_client", "vim.lsp.start_client")
  end
  spy(vim.fn, "system", "vim.fn.system")
  spy(vim.fn, "jobstart", "vim.fn.jobstart")
end

local agentls = require("agentls")
local compat = require("agentls.compat")

-- The deprecation warnings in :messages (headless keeps the history).
local function messages_deprecations()
  local out = {}
  for _, line in ipairs(vim.split(vim.fn.execute("messages"), "\n", { plain = true })) do
    if line:lower():find("deprecat", 1, true) then
      table.insert(out, line)
    end
  end
  return out
end

t.test("compat takes the current API on this Neovim", function()
  if modern then
    t.ok(compat.uv == vim.uv, "compat.uv is vim.uv")
    t.ok(vim.system ~= nil, "vim.system exists")
  else
    t.ok(compat.uv == vim.loop, "compat.uv is vim.loop (0.7-0.9)")
  end
  t.eq(vim.fn.has("nvim-0.11") == 1, compat.method_calls, "client:method() calls exactly on 0.11+")
end)

t.test("setup, a read, an edit of a synced buffer and stop: no deprecation warning", function()
  t.write_file("modern.txt", "old line\nsecond\n")
  vim.cmd("edit " .. vim.fn.fnameescape(t.path("modern.txt")))
  local buf = vim.api.nvim_get_current_buf()
  agentls.setup({ cmd = { t.bin }, root_dir = t.ws, mode = "acceptEdits" })
  t.wait(5000, function() return agentls.initialize_result(t.ws) ~= nil end, "initialize")
  local c = t.live_client()
  t.wait(3000, function() return vim.lsp.buf_is_attached(buf, c.id) end, "buffer attached")
  local res, err = agentls.call_sync("read", { path = "modern.txt" }, 8000)
  t.ok(res and not res.isError, "read: " .. vim.inspect(err or res))
  res, err = agentls.call_sync("edit", { path = "modern.txt", edits = { { oldText = "old line", newText = "new line" } } },
    8000)
  t.ok(res and not res.isError, "edit: " .. vim.inspect(err or res))
  t.eq({ "new line", "second" }, t.lines(buf), "the edit went into the buffer")
  vim.cmd("checkhealth agentls")
  vim.cmd("bwipeout!")
  agentls.stop()
  t.wait(5000, function() return #compat.get_clients("agentls") == 0 end, "clients to stop")
  -- Messages are printed from scheduled callbacks too.
  vim.wait(100)
  t.eq({}, messages_deprecations(), "deprecation warnings in :messages")
  t.eq({}, deprecated, "vim.deprecate calls")
  t.eq({}, legacy_calls, "calls of functions with a newer replacement")
end)

t.test("the check sees a deprecation when there is one", function()
  if not real_deprecate then
    t.skip("no vim.deprecate before 0.9")
  end
  -- A plugin's own deprecation is always shown (no version rule).
  local before = #deprecated
  vim.deprecate("agentls_test_old()", "agentls_test_new()", "9.9", "agentls-test", false)
  t.eq(before + 1, #deprecated, "recorded")
  vim.wait(50)
  t.ok(#messages_deprecations() > 0, ":messages shows it: " .. vim.fn.execute("messages"))
end)

t.finish()
