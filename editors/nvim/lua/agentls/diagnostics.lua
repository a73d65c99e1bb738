-- Answers agentls's tools/diagnostics requests from vim.diagnostic: what the
-- editor's language servers report for the files an edit or write changes,
-- before the change (waitMs 0) and once they have caught up with it.
local compat = require("agentls.compat")
local render = require("agentls.render")

local M = {}

-- After an update, the diagnostics of the files must stay unchanged this
-- long before the answer goes (docs/protocol.md, tools/diagnostics).
M.QUIET_MS = 150
-- How often a waiting handler looks again.
local POLL_MS = 10

local GROUP = "agentls_diagnostics"
local NAME = "agentls"

local state = {
  changed = {}, -- buf -> {at = ms, tick = changedtick} of its last DiagnosticChanged
  baseline = {}, -- buf -> {at, tick} of the last waitMs 0 request naming it
  waits = {}, -- set of pending waits {client_id, call_id, cancelled}
}
M._state = state

local function now_ms()
  return compat.uv.hrtime() / 1e6
end

local function tick(buf)
  return vim.api.nvim_buf_get_changedtick(buf)
end

--- Starts (on = true) or stops recording when each buffer's diagnostics
--- change; the waits need it. Idempotent.
function M.track(on)
  local group = vim.api.nvim_create_augroup(GROUP, { clear = true })
  if not on then
    return
  end
  vim.api.nvim_create_autocmd("DiagnosticChanged", {
    group = group,
    desc = "agentls: note when a buffer's diagnostics change (tools/diagnostics)",
    callback = function(ev)
      if ev.buf and ev.buf > 0 and vim.api.nvim_buf_is_valid(ev.buf) then
        state.changed[ev.buf] = { at = now_ms(), tick = tick(ev.buf) }
      end
    end,
  })
  vim.api.nvim_create_autocmd("BufWipeout", {
    group = group,
    desc = "agentls: forget a wiped buffer's diagnostics times",
    callback = function(ev)
      state.changed[ev.buf] = nil
      state.baseline[ev.buf] = nil
    end,
  })
end

--- Marks the pending waits for which match(wait) is true as cancelled: they
--- answer with what they have. Returns how many there were.
function M.cancel(match)
  local n = 0
  for w in pairs(state.waits) do
    if not w.cancelled and match(w) then
      w.cancelled = true
      n = n + 1
    end
  end
  return n
end

-- Whether something could report on buf: a language server other than
-- agentls is attached, or some namespace has diagnostics for it now.
local function can_report(buf)
  for _, c in pairs(compat.buf_clients(buf)) do
    if c.name ~= NAME then
      return true
    end
  end
  return #vim.diagnostic.get(buf) > 0
end

-- The lines of buf's file as buf would show them, or nil when that is not
-- simply its lines (another encoding, a BOM, binary) or it cannot be read.
local function disk_lines(buf)
  local fenc = vim.bo[buf].fileencoding
  if vim.bo[buf].binary or vim.bo[buf].bomb or (fenc ~= "" and fenc ~= "utf-8") then
    return nil
  end
  local ok, lines = pcall(vim.fn.readfile, vim.api.nvim_buf_get_name(buf))
  if not ok then
    return nil
  end
  if vim.bo[buf].fileformat == "dos" then
    for i, l in ipairs(lines) do
      lines[i] = (l:gsub("\r$", ""))
    end
  end
  return lines
end

-- A file changed on disk reaches a clean buffer (and its language server)
-- only when the buffer is reloaded; 'noautoread' would make :checktime ask.
-- :checktime goes by the file's time stamp, and Neovim 0.7 let a change
-- made a moment after the buffer's load pass unseen (the sync-off tests on
-- a fast machine). A clean buffer that still differs from its file then
-- takes the file's lines: its language servers hear of it at once
-- (on_lines), where :edit! would detach them until the buffer is read
-- again, and FileChangedShellPost is fired as after a reload. The render
-- after the call reloads it from disk as usual.
local function reload_if_changed(buf)
  if vim.bo[buf].buftype ~= "" or vim.bo[buf].modified or vim.fn.getbufvar(buf, "&autoread") ~= 1 then
    return
  end
  vim.cmd("silent! checktime " .. buf)
  if vim.bo[buf].modified then
    return
  end
  local disk = disk_lines(buf)
  if disk and not vim.deep_equal(disk, vim.api.nvim_buf_get_lines(buf, 0, -1, false)) then
    vim.api.nvim_buf_set_lines(buf, 0, -1, false, disk)
    vim.bo[buf].modified = false
    -- What :checktime's reload would have announced, for linters that
    -- listen for it rather than for buffer changes.
    pcall(vim.api.nvim_exec_autocmds, "FileChangedShellPost", { buffer = buf })
  end
end

--- Waits until cond() is true or ms have passed. Neovim 0.10+ runs request
--- handlers in a coroutine and replies when the handler returns, so it
--- yields there; 0.7 wants the reply synchronously, so it blocks in
--- vim.wait, which keeps running the event loop (DiagnosticChanged autocmds,
--- other messages) but holds back typed keys for at most ms.
local function wait_until(ms, cond)
  local co, is_main = coroutine.running()
  if co == nil or is_main then
    vim.wait(ms, cond, POLL_MS)
    return
  end
  local deadline = now_ms() + ms
  local timer = compat.uv.new_timer()
  timer:start(POLL_MS, POLL_MS, vim.schedule_wrap(function()
    if timer:is_closing() then
      return
    end
    local ok, done = pcall(cond)
    if not ok or done or now_ms() >= deadline then
      timer:stop()
      timer:close()
      coroutine.resume(co)
    end
  end))
  coroutine.yield()
end

-- Waits, at most wait_ms, for the diagnostics of the watched buffers to be
-- updated (a change for one of them, then QUIET_MS without another).
local function wait_for_update(bufs, wait_ms, w)
  local start = now_ms()
  local watched = {}
  for _, b in ipairs(bufs) do
    if b and can_report(b) then
      reload_if_changed(b)
      watched[b] = true
    end
  end
  if next(watched) == nil then
    return -- nothing could report: answer at once
  end
  -- The time of the last update that counts: one after the request came, or
  -- one for text that changed since the baseline (a language server quicker
  -- than the round trip between the edit and this request).
  local function last_update()
    local last
    for b in pairs(watched) do
      local c, base = state.changed[b], state.baseline[b]
      if c and (c.at >= start or (base and c.at >= base.at and c.tick > base.tick)) then
        last = math.max(last or 0, c.at)
      end
    end
    return last
  end
  wait_until(wait_ms, function()
    if w.cancelled then
      return true
    end
    local last = last_update()
    return last ~= nil and now_ms() - last >= M.QUIET_MS
  end)
end

-- The UTF-16 character of byte col in line lnum of buf (col itself when the
-- line is gone).
local function utf16_col(buf, lnum, col)
  local line = vim.api.nvim_buf_get_lines(buf, lnum, lnum + 1, false)[1]
  if not line then
    return col
  end
  local ok, c = pcall(compat.utf16_index, line, math.max(0, math.min(col, #line)))
  return ok and c or col
end

--- d (a vim.diagnostic item of buf) as an LSP Diagnostic.
function M.to_lsp(buf, d)
  local lnum, col = d.lnum or 0, d.col or 0
  local end_lnum, end_col = d.end_lnum or lnum, d.end_col or col
  local out = {
    range = {
      start = { line = lnum, character = utf16_col(buf, lnum, col) },
      ["end"] = { line = end_lnum, character = utf16_col(buf, end_lnum, end_col) },
    },
    severity = tonumber(d.severity) or vim.diagnostic.severity.ERROR,
    message = tostring(d.message or ""),
  }
  if type(d.source) == "string" and d.source ~= "" then
    out.source = d.source
  end
  if type(d.code) == "string" or type(d.code) == "number" then
    out.code = d.code
  end
  return out
end

local function collect(buf)
  local out = {}
  for _, d in ipairs(vim.diagnostic.get(buf)) do
    local ok, lsp = pcall(M.to_lsp, buf, d)
    if ok then
      table.insert(out, lsp)
    end
  end
  return out
end

--- The answer to a tools/diagnostics request from client_id: one item per
--- uri, in order. Never throws: on an error it answers with what it has.
function M.answer(params, client_id, log)
  params = type(params) == "table" and params or {}
  local uris = type(params.uris) == "table" and params.uris or {}
  local wait_ms = tonumber(params.waitMs) or 0
  local items, bufs = {}, {}
  for i, uri in ipairs(uris) do
    items[i] = { uri = tostring(uri), diagnostics = {} }
  end
  local w = { client_id = client_id, call_id = params.callId, cancelled = false }
  state.waits[w] = true
  local ok, err = pcall(function()
    for i, uri in ipairs(uris) do
      -- Only a loaded buffer has diagnostics; none is loaded or created here.
      bufs[i] = render.loaded_buffer(vim.uri_to_fname(uri)) or false
    end
    if wait_ms > 0 then
      wait_for_update(bufs, wait_ms, w)
    else
      for _, b in ipairs(bufs) do
        if b then
          state.baseline[b] = { at = now_ms(), tick = tick(b) }
        end
      end
    end
    for i, b in ipairs(bufs) do
      if b and vim.api.nvim_buf_is_loaded(b) then
        items[i].diagnostics = collect(b)
      end
    end
  end)
  state.waits[w] = nil
  if log then
    local n = 0
    for _, it in ipairs(items) do
      n = n + #it.diagnostics
    end
    log(string.format("[diagnostics] %s %s wait %d ms: %d for %d file(s)%s%s", tostring(params.tool),
      tostring(params.callId), wait_ms, n, #items, w.cancelled and " (cancelled)" or "",
      ok and "" or (" error: " .. tostring(err))))
  end
  return { items = items }
end

return M
