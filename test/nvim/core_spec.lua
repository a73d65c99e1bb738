-- Drives agentls through Neovim's own LSP client (no plugin): initialize,
-- tools/list, tools/call, notifications, clean stop. Written against the 0.7
-- API (vim.lsp.start_client) with a shim for 0.11's method-call syntax.
local t = dofile(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":h") .. "/helpers.lua")

local function request_sync(client, method, params, ms)
  local done, err, result = false, nil, nil
  local handler = function(e, r)
    done, err, result = true, e, r
  end
  if vim.fn.has("nvim-0.11") == 1 then
    client:request(method, params, handler, 0)
  else
    client.request(method, params, handler, 0)
  end
  t.wait(ms or 5000, function() return done end, method)
  if err then
    error(method .. " failed: " .. vim.inspect(err), 2)
  end
  return result
end

local notes = {}
local exit_code
local client_id = vim.lsp.start_client({
  name = "agentls",
  cmd = { t.bin },
  cmd_env = { AGENTLS_TEST_TOOLS = "1" },
  root_dir = t.ws,
  init_options = { mode = "acceptEdits" },
  capabilities = vim.tbl_deep_extend("force", vim.lsp.protocol.make_client_capabilities(), {
    experimental = { agentls = { confirm = true, applyEdit = false } },
  }),
  handlers = {
    ["tools/progress"] = function(_, params) table.insert(notes, { "tools/progress", params }) end,
    ["tools/details"] = function(_, params) table.insert(notes, { "tools/details", params }) end,
    ["window/logMessage"] = function() end,
  },
  on_exit = function(code) exit_code = code end,
})

local client
t.test("initialize", function()
  t.ok(client_id, "start_client returned no id")
  t.wait(5000, function()
    client = vim.lsp.get_client_by_id(client_id)
    return client and client.initialized
  end, "initialized")
  local agentls = client.server_capabilities and client.server_capabilities.experimental
    and client.server_capabilities.experimental.agentls
  t.ok(agentls, "initialize result lacks capabilities.experimental.agentls")
  t.ok(vim.tbl_contains(agentls.tools, "read"), "read missing from initialize tools")
  t.ok(type(agentls.watcher) == "string", "watcher mode missing")
end)

if not client or not client.initialized then
  t.finish()
  return
end

local function names(list)
  local out = {}
  for _, tool in ipairs(list.tools) do
    table.insert(out, tool.name)
  end
  return out
end

t.test("tools/list with empty_dict params", function()
  local res = request_sync(client, "tools/list", vim.empty_dict())
  t.ok(vim.tbl_contains(names(res), "read"), "read missing: " .. vim.inspect(names(res)))
  local read
  for _, tool in ipairs(res.tools) do
    if tool.name == "read" then read = tool end
  end
  t.eq("object", read.inputSchema.type, "read inputSchema.type")
end)

t.test("tools/list with {} params (encoded as [])", function()
  local res = request_sync(client, "tools/list", {})
  t.ok(vim.tbl_contains(names(res), "read"), "read missing")
end)

t.test("tools/list openai format", function()
  local res = request_sync(client, "tools/list", { format = "openai" })
  local first = res.tools[1]
  t.eq("function", first.type, "type")
  t.ok(first["function"].name and first["function"].parameters, "function.name/parameters")
end)

t.test("tools/call read returns numbered text", function()
  local res = request_sync(client, "tools/call", { name = "read", arguments = { path = "hello.txt" }, callId = "r1" })
  t.eq("r1", res.callId, "callId echoed")
  t.eq(false, res.isError, "isError")
  local text = res.content[1].text
  t.ok(text:find("1→alpha", 1, true) and text:find("2→beta", 1, true) and text:find("3→gamma", 1, true),
    "numbered text: " .. text)
end)

t.test("tools/call on a missing file is an isError result, not a protocol error", function()
  local res = request_sync(client, "tools/call", { name = "read", arguments = { path = "nope.txt" } })
  t.eq(true, res.isError, "isError")
end)

t.test("tools/progress notification reaches the client", function()
  local res = request_sync(client, "tools/call", { name = "test_block", arguments = { seconds = 0.2 }, callId = "b1" })
  t.eq(false, res.isError, "isError")
  t.eq("unblocked", res.content[1].text, "text")
  t.wait(2000, function()
    for _, n in ipairs(notes) do
      if n[2].callId == "b1" then return true end
    end
  end, "tools/progress for b1")
  local seen
  for _, n in ipairs(notes) do
    if n[2].callId == "b1" then seen = n end
  end
  t.eq("tools/progress", seen[1], "method")
  t.eq("test_block", seen[2].tool, "tool")
end)

t.test("edit sends tools/details before its reply", function()
  local list = request_sync(client, "tools/list", vim.empty_dict())
  if not vim.tbl_contains(names(list), "edit") then
    t.skip("the server has no edit tool yet")
  end
  request_sync(client, "tools/call", { name = "read", arguments = { path = "lines.txt" } })
  local before = #notes
  local res = request_sync(client, "tools/call", { name = "edit", callId = "e1",
    arguments = { path = "lines.txt", edits = { { oldText = "three\n", newText = "THREE\n" } } } })
  t.eq(false, res.isError, res.content[1].text)
  local details
  for i = before + 1, #notes do
    if notes[i][1] == "tools/details" and notes[i][2].callId == "e1" then details = notes[i][2].details end
  end
  t.ok(details, "no tools/details before the reply")
  t.eq("edit", details.kind, "kind")
  t.eq(vim.uri_from_fname(t.path("lines.txt")), details.uri, "uri")
  -- The contract: the edits, applied to the old text, give the new text.
  local buf = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, { "one", "two", "three", "four", "five" })
  vim.lsp.util.apply_text_edits(details.edits, buf, "utf-16")
  t.eq({ "one", "two", "THREE", "four", "five" }, vim.api.nvim_buf_get_lines(buf, 0, -1, false), "edits applied")
  vim.api.nvim_buf_delete(buf, { force = true })
  t.eq("one\ntwo\nTHREE\nfour\nfive\n", t.read_file("lines.txt"), "file")
end)

t.test("stop exits the server cleanly", function()
  if vim.fn.has("nvim-0.11") == 1 then client:stop() else client.stop() end
  t.wait(5000, function() return exit_code ~= nil end, "server exit")
  t.eq(0, exit_code, "exit code after shutdown+exit")
  -- 0.10 forgets the client one event-loop turn after its on_exit (0.7 at once).
  t.wait(1000, function() return vim.lsp.get_client_by_id(client_id) == nil end, "client forgotten after its exit")
end)

t.finish()
