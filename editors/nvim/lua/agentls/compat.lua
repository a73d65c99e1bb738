-- Small shims so the plugin runs on Neovim 0.7 through current.
local M = {}

local has = function(v)
  return vim.fn.has("nvim-" .. v) == 1
end

M.uv = vim.uv or vim.loop

-- 0.11 turned client methods into method-call syntax (client:request); the
-- old field-call form still exists for a while but warns.
local method_calls = has("0.11")

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
function M.start_client(config)
  if vim.lsp.start and has("0.11") then
    -- attach=false (0.11+) keeps the client off the current buffer; before
    -- 0.11 vim.lsp.start always attaches, so start_client is used there.
    -- The caller starts a client only when it has no live one for the root:
    -- reusing would hand back one that is shutting down (stop(), or a
    -- restart for changed options) and was started with the old options.
    return vim.lsp.start(config, { attach = false, reuse_client = function()
      return false
    end })
  end
  return vim.lsp.start_client(config)
end

--- Applies an LSP WorkspaceEdit. 0.7 through current take (edit, offset_encoding);
--- 0.7 already warns when the encoding is missing, so it is always passed.
function M.apply_workspace_edit(edit, offset_encoding)
  return vim.lsp.util.apply_workspace_edit(edit, offset_encoding or "utf-16")
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
