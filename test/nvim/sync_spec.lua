-- Buffer sync through the real binary: with sync_buffers the plugin attaches
-- its client to the workspace's file buffers (Neovim sends didOpen/didChange),
-- read sees unsaved text, and edits of open files come back as
-- workspace/applyEdit, which the plugin applies (and saves when the buffer
-- was clean). With sync_buffers = false nothing is attached.
local here = vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":h")
local t = dofile(here .. "/helpers.lua")

vim.opt.rtp:prepend(t.plugin)
vim.cmd("runtime plugin/agentls.lua")
vim.cmd("cd " .. vim.fn.fnameescape(t.ws))

local agentls = require("agentls")
local compat = require("agentls.compat")

local real_notify = vim.notify
vim.notify = function() end

local function open(rel)
  vim.cmd("edit " .. vim.fn.fnameescape(t.path(rel)))
  return vim.api.nvim_get_current_buf()
end

local function sent_caps(id)
  return vim.lsp.get_client_by_id(id).config.capabilities.experimental.agentls
end

-- hello.txt is loaded before the client starts; lines.txt is opened after.
local hello = open("hello.txt")
local id

t.test("sync on: applyEdit declared, loaded and later buffers attached", function()
  agentls.setup({ cmd = { t.bin }, root_dir = t.ws, mode = "acceptEdits" })
  id = agentls.start(t.ws)
  t.wait(5000, function() return agentls.initialize_result(t.ws) ~= nil end, "initialize")
  t.eq(true, sent_caps(id).applyEdit, "capabilities.experimental.agentls.applyEdit")
  t.ok(vim.lsp.buf_is_attached(hello, id), "buffer loaded before the start is not attached")
  local later = open("lines.txt")
  t.ok(vim.lsp.buf_is_attached(later, id), "buffer opened later is not attached")
  local scratch = vim.api.nvim_create_buf(true, true)
  vim.api.nvim_set_current_buf(scratch)
  t.ok(not vim.lsp.buf_is_attached(scratch, id), "scratch buffer attached")
  vim.cmd("bwipeout! " .. scratch)
end)

t.test("read returns the buffer's unsaved text", function()
  vim.api.nvim_buf_set_lines(hello, 1, 2, false, { "BETA (unsaved)" })
  local res, err = agentls.call_sync("read", { path = "hello.txt" }, 5000)
  t.ok(res and not res.isError, vim.inspect(err or res))
  local text = agentls.text(res)
  t.ok(text:find("2→BETA (unsaved)", 1, true), text)
  t.eq("alpha\nbeta\ngamma\n", t.read_file("hello.txt"), "disk untouched")
end)

t.test("edit of a clean buffer goes through the editor and is saved", function()
  local buf = open("lines.txt")
  t.eq(false, vim.bo[buf].modified, "clean before")
  assert(agentls.call_sync("read", { path = "lines.txt" }, 5000))
  local res, err = agentls.call_sync("edit", { path = "lines.txt",
    edits = { { oldText = "three\n", newText = "THREE\n" } } }, 10000)
  t.ok(res, vim.inspect(err))
  t.eq(false, res.isError, agentls.text(res))
  t.eq(true, res.details and res.details.inEditor, "details.inEditor: " .. agentls.text(res))
  t.eq({ "one", "two", "THREE", "four", "five" }, t.lines(buf), "buffer")
  t.eq("one\ntwo\nTHREE\nfour\nfive\n", t.read_file("lines.txt"), "disk")
  t.eq(false, vim.bo[buf].modified, "buffer saved")
  -- The next edit checks against the document the editor reported back.
  res = agentls.call_sync("edit", { path = "lines.txt", edits = { { oldText = "five\n", newText = "FIVE\n" } } }, 10000)
  t.eq(false, res.isError, agentls.text(res))
  t.eq("one\ntwo\nTHREE\nfour\nFIVE\n", t.read_file("lines.txt"), "disk after the second edit")
end)

t.test("an edit appending lines at the end of a synced file adds no empty line (0.10 did)", function()
  t.write_file("tail.txt", "one\ntwo\n")
  local buf = open("tail.txt")
  assert(agentls.call_sync("read", { path = "tail.txt" }, 5000))
  local res, err = agentls.call_sync("edit", { path = "tail.txt",
    edits = { { oldText = "two\n", newText = "two\nthree\nfour\n" } } }, 10000)
  t.ok(res and not res.isError, vim.inspect(err or res))
  t.ok(agentls.text(res):find("in the editor (saved)", 1, true), agentls.text(res))
  t.eq({ "one", "two", "three", "four" }, t.lines(buf), "buffer")
  t.eq("one\ntwo\nthree\nfour\n", t.read_file("tail.txt"), "disk")
end)

t.test("compat.apply_workspace_edit: an insert past the last line lands after it, in either edit form", function()
  local function fresh(rel, text)
    t.write_file(rel, text)
    local b = open(rel)
    vim.cmd("silent edit!")
    return b
  end
  local at_end = { start = { line = 2, character = 0 }, ["end"] = { line = 2, character = 0 } }
  local b = fresh("tail2.txt", "a\nb\n")
  local uri = vim.uri_from_fname(t.path("tail2.txt"))
  compat.apply_workspace_edit({ changes = { [uri] = { { range = vim.deepcopy(at_end), newText = "c\n" } } } }, "utf-16")
  t.eq({ "a", "b", "c" }, t.lines(b), "changes form")
  vim.cmd("silent edit!")
  compat.apply_workspace_edit({ documentChanges = { { textDocument = { uri = uri, version = 0 },
    edits = { { range = vim.deepcopy(at_end), newText = "c\nd\n" } } } } }, "utf-8")
  t.eq({ "a", "b", "c", "d" }, t.lines(b), "documentChanges form, utf-8 offsets")
  -- A last line with multi-byte text: the end is counted in UTF-16 units.
  b = fresh("tail3.txt", "a\nhé€\n")
  uri = vim.uri_from_fname(t.path("tail3.txt"))
  compat.apply_workspace_edit({ changes = { [uri] = { { range = vim.deepcopy(at_end), newText = "x\n" } } } }, "utf-16")
  t.eq({ "a", "hé€", "x" }, t.lines(b), "after a multi-byte last line")
  vim.cmd("silent edit!")
end)

t.test("edit of a dirty buffer merges into it and leaves the disk alone", function()
  local buf = open("src/main.go")
  vim.api.nvim_buf_set_lines(buf, 3, 4, false, { '\tprintln("user")' })
  t.eq(true, vim.bo[buf].modified, "dirty before")
  assert(agentls.call_sync("read", { path = "src/main.go" }, 5000))
  local res, err = agentls.call_sync("edit", { path = "src/main.go",
    edits = { { oldText = "package main\n", newText = "package app\n" } } }, 10000)
  t.ok(res, vim.inspect(err))
  t.eq(false, res.isError, agentls.text(res))
  t.eq({ "package app", "", "func main() {", '\tprintln("user")', "}" }, t.lines(buf), "buffer")
  t.eq(true, vim.bo[buf].modified, "still unsaved")
  local render = require("agentls.render")
  local marked = vim.api.nvim_buf_get_extmarks(buf, render.ns, { 0, 0 }, { 0, -1 }, {})
  t.ok(#marked > 0, "the change is marked in the buffer")
  t.eq('package main\n\nfunc main() {\n\tprintln("hi")\n}\n', t.read_file("src/main.go"), "disk")
end)

local handler = agentls._handlers["workspace/applyEdit"]

t.test("applyEdit answers applied=false for an edit it cannot apply", function()
  local uri = vim.uri_from_fname(t.path("lines.txt"))
  local res = handler(nil, { edit = { documentChanges = { { kind = "bogus", uri = uri } } } }, { client_id = id })
  t.eq(false, res.applied, "applied")
  t.ok(type(res.failureReason) == "string" and res.failureReason ~= "", vim.inspect(res))
end)

t.test("applyEdit refuses an edit older than the buffer", function()
  local buf = open("lines.txt")
  vim.api.nvim_buf_set_lines(buf, 1, 2, false, { "typed" }) -- the user types: a new version
  local before = t.lines(buf)
  local version = compat.buf_version(buf)
  t.ok(version and version > 1, "buffer version " .. tostring(version))
  local uri = vim.uri_from_fname(t.path("lines.txt"))
  local edit = { range = { start = { line = 0, character = 0 }, ["end"] = { line = 0, character = 3 } }, newText = "ONE" }
  local res = handler(nil, { edit = { documentChanges = { { textDocument = { uri = uri, version = version - 1 },
    edits = { edit } } } } }, { client_id = id })
  t.eq(false, res.applied, "applied: " .. vim.inspect(res))
  t.ok(tostring(res.failureReason):find("changed in the editor", 1, true), vim.inspect(res))
  t.eq(before, t.lines(buf), "buffer untouched")
end)

t.test("sync off: nothing attached, read sees the disk, applyEdit not declared", function()
  t.stop_all()
  agentls.setup({ cmd = { t.bin }, root_dir = t.ws, mode = "acceptEdits", sync_buffers = false })
  local off = agentls.start(t.ws)
  t.wait(5000, function() return agentls.initialize_result(t.ws) ~= nil end, "initialize")
  t.ok(off ~= id, "a new client")
  t.eq(false, sent_caps(off).applyEdit, "capabilities.experimental.agentls.applyEdit")
  vim.api.nvim_set_current_buf(hello)
  t.eq(true, vim.bo[hello].modified, "hello.txt still has unsaved text")
  t.ok(not vim.lsp.buf_is_attached(hello, off), "loaded buffer attached")
  t.ok(not vim.lsp.buf_is_attached(open("src/other.txt"), off), "new buffer attached")
  local res = agentls.call_sync("read", { path = "hello.txt" }, 5000)
  local text = agentls.text(res)
  t.ok(text:find("2→beta", 1, true) and not text:find("unsaved", 1, true), text)
end)

vim.notify = real_notify
t.stop_all()
t.finish()
