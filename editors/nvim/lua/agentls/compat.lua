-- Small shims so the plugin runs on Neovim 0.7 through current: each takes
-- the current API where this Neovim has it (so 0.10 and 0.11 print no
-- deprecation warning) and the old one on 0.7-0.9. The one place that knows
-- which Neovim has what; the other modules call these.
--
-- vim.lsp.config / vim.lsp.enable (0.11) do not fit: they start a client
-- per buffer of the configured filetypes, and agentls is one client per
-- workspace root, started by setup() or the first call, attached only to
-- the workspace's files when sync_buffers is on.
local M = {}

local has = function(v)
  return vim.fn.has("nvim-" .. v) == 1
end

---@type uv luv: vim.uv (0.10+) or vim.loop
M.uv = vim.uv or vim.loop

-- 0.11 turned client methods into method-call syntax (client:request); the
-- old field-call form still exists for a while but warns.
local method_calls = has("0.11")
M.method_calls = method_calls

function M.request(client, method, params, handler, bufnr)
  if method_calls then
    return client:request(method, params, handler, bufnr)
  end
  return client.request(method, params, handler, bufnr)
end

function M.notify(client, method, params)
  if method_calls then
    return client:notify(method, params)
  end
  return client.notify(method, params)
end

function M.cancel_request(client, id)
  if method_calls then
    return client:cancel_request(id)
  end
  return client.cancel_request(id)
end

function M.stop(client, force)
  if method_calls then
    return client:stop(force)
  end
  return client.stop(force)
end

function M.is_stopped(client)
  if method_calls then
    return client:is_stopped()
  end
  return client.is_stopped()
end

--- Clients by name: get_clients (0.10+) or get_active_clients (0.7-0.9).
function M.get_clients(name)
  if vim.lsp.get_clients then
    return vim.lsp.get_clients({ name = name })
  end
  local out = {}
  for _, c in ipairs(vim.lsp.get_active_clients()) do
    if c.name == name then
      table.insert(out, c)
    end
  end
  return out
end

--- The clients attached to bufnr: get_clients (0.10+) or buf_get_clients (0.7-0.9).
function M.buf_clients(bufnr)
  if vim.lsp.get_clients then
    return vim.lsp.get_clients({ bufnr = bufnr })
  end
  local out = {}
  for _, c in pairs(vim.lsp.buf_get_clients(bufnr)) do
    table.insert(out, c)
  end
  return out
end

--- The UTF-16 index of byte index col in line. 0.11 takes the encoding
--- (and warns about the old form, which returns the UTF-32 index first).
function M.utf16_index(line, col)
  if has("0.11") then
    return vim.str_utfindex(line, "utf-16", col, false)
  end
  local _, utf16 = vim.str_utfindex(line, col)
  return utf16
end

--- Starts a client without attaching it to a buffer (agentls is not a
--- language server for any filetype). Returns the client id.
--- 0.11+: vim.lsp.start with attach = false. 0.10's vim.lsp.start always
--- attaches the client to a buffer (the current one by default) and is
--- start_client plus that attach; start_client is not deprecated before
--- 0.11, so 0.7-0.10 call it directly.
function M.start_client(config)
  if vim.lsp.start and has("0.11") then
    -- attach=false keeps the client off the current buffer.
    -- The caller starts a client only when it has no live one for the root:
    -- reusing would hand back one that is shutting down (stop(), or a
    -- restart for changed options) and was started with the old options.
    return vim.lsp.start(config, { attach = false, reuse_client = function()
      return false
    end })
  end
  return vim.lsp.start_client(config)
end

-- The length of line in offset_encoding's units.
local function line_length(line, offset_encoding)
  if offset_encoding == "utf-8" then
    return #line
  elseif offset_encoding == "utf-32" then
    return vim.fn.strchars(line)
  end
  return M.utf16_index(line, #line)
end

-- Moves text edits that start past the last line of bufnr (an insertion at
-- the end of a file with a final newline: line = line count, character 0)
-- to the end of the last line, with the newline in front instead of
-- behind. 0.7 did this itself; 0.10 inserts such an edit's lines as they
-- are, so "six\n" appended to a file gained a stray empty line too.
local function clamp_past_end(edits, bufnr, offset_encoding)
  if type(edits) ~= "table" or #edits == 0 then
    return
  end
  if not vim.api.nvim_buf_is_loaded(bufnr) then
    vim.fn.bufload(bufnr)
  end
  local max = vim.api.nvim_buf_line_count(bufnr)
  local last = vim.api.nvim_buf_get_lines(bufnr, max - 1, max, false)[1] or ""
  local at_end = { line = max - 1, character = line_length(last, offset_encoding) }
  for _, e in ipairs(edits) do
    local r = e.range
    if type(r) == "table" and r.start.line >= max and r["end"].line >= max and type(e.newText) == "string" then
      e.range = { start = at_end, ["end"] = at_end }
      e.newText = "\n" .. e.newText:gsub("\r?\n$", "")
    end
  end
end

--- Applies an LSP WorkspaceEdit. 0.7 through current take (edit, offset_encoding);
--- 0.7 already warns when the encoding is missing, so it is always passed.
function M.apply_workspace_edit(edit, offset_encoding)
  offset_encoding = offset_encoding or "utf-16"
  if type(edit.documentChanges) == "table" then
    for _, dc in ipairs(edit.documentChanges) do
      if dc.textDocument and type(dc.textDocument.uri) == "string" then
        clamp_past_end(dc.edits, vim.uri_to_bufnr(dc.textDocument.uri), offset_encoding)
      end
    end
  elseif type(edit.changes) == "table" then
    for uri, edits in pairs(edit.changes) do
      clamp_past_end(edits, vim.uri_to_bufnr(uri), offset_encoding)
    end
  end
  return vim.lsp.util.apply_workspace_edit(edit, offset_encoding)
end

--- The version Neovim's LSP client last gave bufnr's document, or nil. It
--- skips (with only a print) a versioned edit older than this, so the
--- applyEdit handler checks first and can answer applied = false.
function M.buf_version(bufnr)
  local versions = vim.lsp.util.buf_versions
  return type(versions) == "table" and versions[bufnr] or nil
end

--- The initialize result's server capabilities (0.7 kept it in resolved_capabilities too).
function M.server_capabilities(client)
  return client.server_capabilities or {}
end

--- Health reporting: vim.health (0.10+; 0.8/0.9 also have it) or require("health") (0.7).
function M.health()
  local h = vim.health
  if h and h.start then
    return { start = h.start, ok = h.ok, warn = h.warn, error = h.error, info = h.info }
  end
  if h and h.report_start then
    return { start = h.report_start, ok = h.report_ok, warn = h.report_warn, error = h.report_error, info = h.report_info }
  end
  local old = require("health")
  return { start = old.report_start, ok = old.report_ok, warn = old.report_warn, error = old.report_error,
    info = old.report_info }
end

--- Runs a command and returns its trimmed stdout, or nil and a message.
function M.run(cmd)
  if vim.system then
    local ok, res = pcall(function() return vim.system(cmd, { text = true }):wait(5000) end)
    if not ok then
      return nil, tostring(res)
    end
    if res.code ~= 0 then
      return nil, vim.trim((res.stderr or "") .. (res.stdout or ""))
    end
    return vim.trim(res.stdout or "")
  end
  local out = vim.fn.system(cmd)
  if vim.v.shell_error ~= 0 then
    return nil, vim.trim(out)
  end
  return vim.trim(out)
end

return M
