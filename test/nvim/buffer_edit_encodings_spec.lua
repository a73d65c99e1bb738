-- An agent edit of a file loaded in a buffer, in both buffer modes
-- (sync_buffers on: the edit goes into the buffer and is saved; off: the
-- file is written and the buffer reloaded), for files the other specs never
-- use: multi-byte text before the edit point, CRLF line endings, a UTF-8
-- BOM, no final newline, a removal at the end of the file. Also :AgentlsDiff
-- after an edit that went into the buffer (the default mode).
local t = dofile(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":h") .. "/helpers.lua")

vim.o.hidden = true
vim.opt.rtp:append(t.plugin)

-- Headless shows nothing: notifications are kept for the failure messages.
local be_notes = {}
vim.notify = function(msg, level)
  table.insert(be_notes, { msg = tostring(msg), level = level })
end

local agentls = require("agentls")
local compat = require("agentls.compat")

local be_base = {
  cmd = { t.bin },
  root_dir = t.ws,
  mode = "acceptEdits",
  diagnostics = false,
}

-- setup() with sync_buffers = sync; waits until the only running client was
-- started with it (a change of sync_buffers restarts the server).
local function be_setup(sync)
  agentls.setup(vim.tbl_extend("force", be_base, { sync_buffers = sync }))
  t.wait(8000, function()
    local cs = compat.get_clients("agentls")
    local live = {}
    for _, c in ipairs(cs) do
      if not compat.is_stopped(c) then table.insert(live, c) end
    end
    return #live == 1 and live[1].initialized
      and agentls._state.started[live[1].id].sync_buffers == sync
  end, "one agentls client with sync_buffers=" .. tostring(sync))
end

-- The file's bytes.
local function be_bytes(rel)
  local f = assert(io.open(t.path(rel), "rb"))
  local s = f:read("*a")
  f:close()
  return s
end

local function be_write_bytes(rel, s)
  local f = assert(io.open(t.path(rel), "wb"))
  f:write(s)
  f:close()
end

-- Writes rel and opens it fresh in the current window; returns its buffer.
local function be_open(rel, bytes)
  be_write_bytes(rel, bytes)
  local old = vim.fn.bufnr(t.path(rel))
  if old ~= -1 then
    vim.api.nvim_buf_delete(old, { force = true })
  end
  vim.cmd("edit " .. vim.fn.fnameescape(t.path(rel)))
  return vim.api.nvim_get_current_buf()
end

local function be_ok(tool, args)
  local res, err = agentls.call_sync(tool, args, 8000)
  t.ok(res, tool .. " failed: " .. vim.inspect(err))
  t.eq(false, res.isError, tool .. " isError: " .. agentls.text(res))
  return res
end


-- Reads rel, edits it, and waits until the buffer shows want_line at row.
local function be_edit(buf, rel, edits, row, want_line)
  be_ok("read", { path = rel })
  be_ok("edit", { path = rel, edits = edits })
  t.wait(5000, function() return t.lines(buf)[row + 1] == want_line end,
    "buffer row " .. row .. " to be " .. vim.inspect(want_line) .. ", buffer: " .. vim.inspect(t.lines(buf)))
  t.wait(3000, function() return #t.marks(buf) > 0 end, "marks")
end

-- Every test below runs in both modes.
local MODES = { { name = "sync on", sync = true }, { name = "sync off", sync = false } }

for _, mode in ipairs(MODES) do
  local tag = mode.sync and "on" or "off"

  t.test(mode.name .. ": edit after multi-byte text lands in the right columns, marks exact", function()
    be_setup(mode.sync)
    local rel = "mb-" .. tag .. ".txt"
    local buf = be_open(rel, "plain\nnaïve café → x = 1\nend\n")
    be_edit(buf, rel, { { oldText = "x = 1", newText = "x = 2" } }, 1, "naïve café → x = 2")
    t.eq({ "plain", "naïve café → x = 2", "end" }, t.lines(buf), "buffer")
    t.eq("plain\nnaïve café → x = 2\nend\n", be_bytes(rel), "disk")
    t.eq(false, vim.bo[buf].modified, "buffer saved/reloaded, not modified")
    local m = t.grouped_marks(buf)
    t.eq({ { 1, "AgentlsChange" } }, m.hl, "hl")
    t.eq({ 1 }, m.sign, "sign")
    t.eq({ { 1, "naïve café → x = 1|AgentlsDelete" } }, m.virt, "removed text")
  end)

  t.test(mode.name .. ": edit of a CRLF file keeps CRLF, buffer and marks exact", function()
    be_setup(mode.sync)
    local rel = "crlf-" .. tag .. ".txt"
    local buf = be_open(rel, "one\r\ntwo\r\nthree\r\n")
    t.eq("dos", vim.bo[buf].fileformat, "opened as dos")
    be_edit(buf, rel, { { oldText = "two", newText = "TWO" } }, 1, "TWO")
    t.eq({ "one", "TWO", "three" }, t.lines(buf), "buffer")
    t.eq("one\r\nTWO\r\nthree\r\n", be_bytes(rel), "disk keeps CRLF")
    t.eq("dos", vim.bo[buf].fileformat, "still dos")
    local m = t.grouped_marks(buf)
    t.eq({ { 1, "AgentlsChange" } }, m.hl, "hl")
    t.eq({ 1 }, m.sign, "sign")
    -- The buffer shows "two" (fileformat=dos); the removed text must too, not "two^M".
    t.eq({ { 1, "two|AgentlsDelete" } }, m.virt, "removed text")
  end)

  t.test(mode.name .. ": :AgentlsDiff of a CRLF file's edit differs only on the changed line", function()
    be_setup(mode.sync)
    pcall(vim.cmd, "silent! tabonly!")
    pcall(vim.cmd, "silent! only!")
    local rel = "crlfdiff-" .. tag .. ".txt"
    local buf = be_open(rel, "one\r\ntwo\r\nthree\r\n")
    be_edit(buf, rel, { { oldText = "two", newText = "TWO" } }, 1, "TWO")
    vim.cmd("AgentlsDiff")
    local old
    for _, w in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
      local b = vim.api.nvim_win_get_buf(w)
      if b ~= buf then old = t.lines(b) end
    end
    pcall(vim.cmd, "silent! tabonly!")
    pcall(vim.cmd, "silent! diffoff!")
    -- The old side is the file's old text as the buffer shows it: a "\r" on
    -- its lines would mark the unchanged lines one and three as changed too.
    t.eq({ "one", "two", "three" }, old, "old side of :AgentlsDiff")
  end)

  t.test(mode.name .. ": edit of a file with a UTF-8 BOM keeps the BOM", function()
    be_setup(mode.sync)
    local rel = "bom-" .. tag .. ".txt"
    local buf = be_open(rel, "\239\187\191a1\na2\n")
    be_edit(buf, rel, { { oldText = "a2", newText = "A2" } }, 1, "A2")
    t.eq({ "a1", "A2" }, t.lines(buf), "buffer")
    t.eq("\239\187\191a1\nA2\n", be_bytes(rel), "disk keeps the BOM")
    t.eq({ { 1, "AgentlsChange" } }, t.grouped_marks(buf).hl, "hl")
  end)

  t.test(mode.name .. ": edit of a file without a final newline keeps it that way", function()
    be_setup(mode.sync)
    local rel = "noeol-" .. tag .. ".txt"
    local buf = be_open(rel, "first\nlast")
    be_edit(buf, rel, { { oldText = "first", newText = "FIRST" } }, 0, "FIRST")
    t.eq({ "FIRST", "last" }, t.lines(buf), "buffer")
    t.eq("FIRST\nlast", be_bytes(rel), "disk: the final newline is preserved (absent), docs/tools.md edit")
    local m = t.grouped_marks(buf)
    t.eq({ { 0, "AgentlsChange" } }, m.hl, "hl")
  end)

  t.test(mode.name .. ": removing the last line shows it as a virtual line", function()
    be_setup(mode.sync)
    local rel = "tail-" .. tag .. ".txt"
    local buf = be_open(rel, "keep1\nkeep2\ngone\n")
    be_ok("read", { path = rel })
    be_ok("edit", { path = rel, edits = { { oldText = "keep2\ngone\n", newText = "keep2\n" } } })
    t.wait(5000, function() return #t.lines(buf) == 2 end, "buffer to lose its last line: " .. vim.inspect(t.lines(buf)))
    t.wait(3000, function() return #t.marks(buf) > 0 end, "marks")
    t.eq({ "keep1", "keep2" }, t.lines(buf), "buffer")
    t.eq("keep1\nkeep2\n", be_bytes(rel), "disk")
    local m = t.grouped_marks(buf)
    t.eq({}, m.hl, "no line highlight: nothing inserted or changed")
    t.eq({ { 2, "gone|AgentlsDelete" } }, m.virt, "removed line below the last row")
    t.eq(1, #m.sign, "a sign on the first change")
  end)
end

t.test("sync on (default): :AgentlsDiff after an edit in the buffer shows the old text vs the file", function()
  be_setup(true)
  pcall(vim.cmd, "silent! tabonly!")
  pcall(vim.cmd, "silent! only!")
  local rel = "diff-on.txt"
  local buf = be_open(rel, "first\nsecond\nthird\n")
  -- The live client: since 0.10 get_clients also lists the one that
  -- be_setup's restart is still stopping.
  local c = t.live_client()
  t.wait(3000, function() return vim.lsp.buf_is_attached(buf, c.id) end, "buffer attached")
  be_edit(buf, rel, { { oldText = "second", newText = "SECOND" } }, 1, "SECOND")
  local tabs = vim.fn.tabpagenr("$")
  vim.cmd("AgentlsDiff")
  t.eq(tabs + 1, vim.fn.tabpagenr("$"), "a new tab")
  local old_seen, file_seen = false, false
  for _, w in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
    t.eq(true, vim.wo[w].diff, "window in diff mode")
    local b = vim.api.nvim_win_get_buf(w)
    if vim.deep_equal(t.lines(b), { "first", "second", "third" }) then old_seen = true end
    if b == buf then
      file_seen = true
      t.eq({ "first", "SECOND", "third" }, t.lines(b), "file side")
    end
  end
  t.ok(old_seen, "a window shows the old text")
  t.ok(file_seen, "a window shows the file")
  pcall(vim.cmd, "silent! tabonly!")
  pcall(vim.cmd, "silent! diffoff!")
end)

agentls.stop()
vim.wait(3000, function() return #compat.get_clients("agentls") == 0 end)
t.finish()
