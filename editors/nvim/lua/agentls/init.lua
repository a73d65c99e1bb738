-- agentls for Neovim: runs the agentls sidecar through vim.lsp, exposes its
-- tools as a Lua API, renders the changes its edit tools make, answers its
-- confirmation requests, and (sync_buffers) shares the workspace's buffers
-- with it and applies its edits to them. See :help agentls.
local compat = require("agentls.compat")
local diagnostics = require("agentls.diagnostics")
local render = require("agentls.render")

local M = {}

-- LuaCATS annotations (lua-language-server) of the public API -------------

---@alias agentls.Mode "default"|"acceptEdits"|"readOnly"|"bypass"

---@class agentls.Permissions Rules in Claude Code's syntax, e.g. "Bash(git status)", "Edit(src/**)"
---@field allow? string[]
---@field ask? string[]
---@field deny? string[]

---@class agentls.Options The setup() options; every field is optional (defaults in :help agentls-setup)
---@field cmd? string|string[] The server command (default { "agentls" })
---@field cmd_env? table<string, string> Extra environment of the server process
---@field root_dir? string|fun(): string Workspace root (default: git root of the cwd, else the cwd)
---@field mode? agentls.Mode Permission mode (default "default")
---@field permissions? agentls.Permissions
---@field limits? table<string, integer> The tools' limits, e.g. { readLines = 500 } (docs/protocol.md)
---@field on_details? fun(details: table, params: table) Called for every tools/details notification
---@field autostart? boolean Start the server in setup() (default true)
---@field render? boolean Render changes inline in loaded buffers (default true)
---@field progress? boolean vim.notify the latest tools/progress line (default true)
---@field progress_interval_ms? integer At most one progress notification per call this often (default 1000)
---@field timeout_ms? integer call_sync's default wait (default 660000)
---@field list_timeout_ms? integer tools()'s default wait (default 10000)
---@field log_max? integer Lines kept for :AgentlsLog (default 2000)
---@field sync_buffers? boolean Share the workspace's buffers with the server (default true)
---@field diagnostics? boolean Answer tools/diagnostics from vim.diagnostic (default true)

---@class agentls.Content One part of a tool result
---@field type "text"|"image"
---@field text? string
---@field data? string base64 (images)
---@field mimeType? string

---@class agentls.Result A tools/call result
---@field callId string
---@field content agentls.Content[]
---@field isError boolean
---@field details? table Structured details (edits, diagnostics, …; docs/protocol.md)

---@class agentls.Error A JSON-RPC error
---@field code integer -32800 cancelled or timed out, -32603 agentls exited or is not running
---@field message string

---@class agentls.CallOpts
---@field callId? string Use this callId instead of a generated one
---@field root? string The workspace root whose client runs the call (default: root())

---@class agentls.ToolsOpts
---@field format? "mcp"|"openai"|"anthropic" The shape of each tool (default "mcp")
---@field includeDeferred? boolean Also list the tools tool_search defers
---@field timeout_ms? integer Wait this long without a callback (default list_timeout_ms)
---@field root? string

---@type agentls.Options
local defaults = {
  cmd = { "agentls" },
  cmd_env = nil,
  -- Workspace root: a string, or a function returning one; default: git root of cwd, else cwd.
  root_dir = nil,
  mode = "default", -- default | acceptEdits | readOnly | bypass
  permissions = nil, -- {allow = {}, ask = {}, deny = {}} in Claude Code's rule syntax
  limits = nil, -- {readLines = 500, bashTimeout = 60, ...}: the tools' limits (docs/protocol.md)
  on_details = nil, -- function(details, params) called for every tools/details
  autostart = true, -- start the server in setup()
  render = true, -- render tools/details inline in loaded buffers
  progress = true, -- vim.notify the latest tools/progress line
  progress_interval_ms = 1000, -- at most one progress notification per call this often
  timeout_ms = 660000, -- call_sync default wait: bash may run 600 s
  list_timeout_ms = 10000, -- tools() default wait
  log_max = 2000, -- lines kept for :AgentlsLog
  -- Attach the client to the workspace's file buffers (didOpen/didChange):
  -- read sees unsaved text, and edits of open files go into their buffers.
  sync_buffers = true,
  -- Answer tools/diagnostics from vim.diagnostic: after an edit or write the
  -- model is told the new errors and warnings of the changed file.
  diagnostics = true,
}

---@type agentls.Options The options in effect (setup() replaces them)
M.config = vim.deepcopy(defaults)

-- Runtime state of this Neovim instance.
local state = {
  clients = {}, -- root -> client id
  ready = {}, -- client id -> true once initialized
  waiting = {}, -- client id -> functions to run once initialized
  init = {}, -- client id -> initialize result
  watcher = {}, -- client id -> watch mode from agentls/watcherReady
  started = {}, -- client id -> the start options it runs with (start_options())
  calls = {}, -- callId -> {tool, client_id, request_id, details}
  confirms = {}, -- callId -> pending tools/confirm {tool, client_id, settle}
  -- callId -> {deadline (ms, now_ms()), expired, timed_out} while call_sync waits for it.
  sync_waits = {},
  progress_at = {}, -- callId -> last vim.notify time (ms)
  missing_warned = {}, -- server command (cmd[1]) -> true once its "not found" warning was shown
  log = {},
  seq = 0,
}
M._state = state

local NAME = "agentls"

-- JSON-RPC InternalError: the code of errors the plugin itself gives a callback.
local INTERNAL_ERROR = -32603

local function find_client(id)
  return id and vim.lsp.get_client_by_id(id) or nil
end

local function log(line)
  for l in tostring(line):gmatch("[^\n]+") do
    table.insert(state.log, os.date("%H:%M:%S ") .. l)
  end
  while #state.log > M.config.log_max do
    table.remove(state.log, 1)
  end
end
M._log = log

local function notify(msg, level)
  vim.notify("agentls: " .. msg, level or vim.log.levels.INFO, { title = "agentls" })
end

--- Lua's empty table encodes as a JSON array; agentls arguments are objects.
local function as_object(v)
  if v == nil or (type(v) == "table" and next(v) == nil and getmetatable(v) == nil) then
    return vim.empty_dict()
  end
  return v
end
M._as_object = as_object

--- The workspace root for a new client.
---@return string
function M.root()
  local r = M.config.root_dir
  if type(r) == "function" then
    r = r()
  end
  if type(r) == "string" and r ~= "" then
    return (vim.fn.fnamemodify(r, ":p"):gsub("(.)/$", "%1"))
  end
  local cwd = compat.uv.cwd()
  local git = vim.fn.finddir(".git", cwd .. ";")
  if git == "" then
    git = vim.fn.findfile(".git", cwd .. ";")
  end
  if git ~= "" then
    local p = vim.fn.fnamemodify(git, ":p"):gsub("(.)/$", "%1")
    return vim.fn.fnamemodify(p, ":h")
  end
  return cwd
end

-- Monotonic milliseconds (uv.now() only advances between loop iterations).
local function now_ms()
  return compat.uv.hrtime() / 1e6
end

local function new_call_id()
  state.seq = state.seq + 1
  return string.format("nvim-%d-%d", compat.uv.getpid(), state.seq)
end

-- Server → client messages -------------------------------------------------

local handlers = {}
M._handlers = handlers

handlers["tools/progress"] = function(_, params)
  if type(params) ~= "table" then
    return
  end
  local text = params.output
  if type(text) ~= "string" or text == "" then
    text = type(params.message) == "string" and params.message or ""
  end
  local last = text:match("([^\n]*)\n*$") or ""
  log(string.format("[%s %s] %s", params.tool or "?", params.callId or "?", last))
  if not M.config.progress or last == "" then
    return
  end
  local now = compat.uv.now()
  local prev = state.progress_at[params.callId or ""]
  if prev and now - prev < M.config.progress_interval_ms then
    return
  end
  state.progress_at[params.callId or ""] = now
  notify(string.format("%s: %s", params.tool or "tool", last))
end

handlers["tools/details"] = function(_, params)
  if type(params) ~= "table" or type(params.details) ~= "table" then
    return
  end
  local d = params.details
  log(string.format("[%s %s] details %s %s", params.tool or "?", params.callId or "?", tostring(d.kind), tostring(d.uri)))
  if M.config.on_details then
    local ok, err = pcall(M.config.on_details, d, params)
    if not ok then
      log("on_details failed: " .. tostring(err))
    end
  end
  if not M.config.render or not d.uri then
    return
  end
  local call = state.calls[params.callId or ""]
  if call then
    -- The details can arrive before the file is written; render once the call returns.
    call.details = call.details or {}
    table.insert(call.details, d)
  else
    render.show(d)
  end
end

handlers["window/logMessage"] = function(_, params)
  if type(params) == "table" then
    log("[log] " .. tostring(params.message))
  end
end

handlers["jobs/changed"] = function(_, params)
  if type(params) == "table" then
    log(string.format("[job %s] %s: %s", tostring(params.job), tostring(params.status), tostring(params.command)))
    require("agentls.jobs").on_changed(params)
  end
end

handlers["tools/listChanged"] = function()
  log("[tools] list changed")
end

-- The watchers arm after initialize (whose capability says "starting"):
-- agentls/watcherReady names the mode, again after each re-arming.
handlers["agentls/watcherReady"] = function(_, params, ctx)
  if type(params) ~= "table" or type(params.watcher) ~= "string" or not (ctx and ctx.client_id) then
    return
  end
  state.watcher[ctx.client_id] = params.watcher
  log("[watcher] " .. params.watcher)
end

handlers["workspace/externalChange"] = function(_, params)
  if type(params) ~= "table" or not params.uri then
    return
  end
  log(string.format("[external] %s %s", tostring(params.kind), params.uri))
  local buf = render.loaded_buffer(vim.uri_to_fname(params.uri))
  if buf then
    vim.cmd("checktime " .. buf)
  end
end

local CHOICES = {
  { label = "Allow once", decision = "allowOnce" },
  { label = "Always allow", decision = "allowAlways" },
  { label = "Deny", decision = "rejectOnce" },
}
local DENY_MESSAGE = "Deny with message…"
local SHOW = "Show change"
-- How much of a command line the question shows.
local PROMPT_COMMAND_CHARS = 200

--- Asks the user about a tools/confirm request; on_decision gets the reply.
--- Replace it to answer questions another way (see :help agentls-confirm).
---@param params table The tools/confirm params {callId, tool, reason, preview}
---@param on_decision fun(answer: {decision: "allowOnce"|"allowAlways"|"rejectOnce", message?: string})
function M.confirm(params, on_decision)
  local items = {}
  for _, c in ipairs(CHOICES) do
    table.insert(items, c.label)
  end
  local preview = type(params.preview) == "table" and params.preview or nil
  -- Only a change can be shown as a diff; a command preview has none.
  local change = preview
    and ((type(preview.edits) == "table" and #preview.edits > 0) or type(preview.unifiedDiff) == "string")
  if change then
    table.insert(items, SHOW)
  end
  -- Last, so the older choices keep their numbers in a numbered picker.
  table.insert(items, DENY_MESSAGE)
  local what = params.tool or "tool"
  if preview and preview.kind == "command" and type(preview.command) == "string" then
    -- The user approves a command line, so the question shows it (one
    -- line: a picker prompt is a single line).
    local cmd = preview.command:gsub("%s*\n%s*", " ⏎ ")
    if vim.fn.strchars(cmd) > PROMPT_COMMAND_CHARS then
      cmd = vim.fn.strcharpart(cmd, 0, PROMPT_COMMAND_CHARS) .. "…"
    end
    what = string.format("%s `%s`", what, cmd)
  end
  local prompt = string.format("agentls: allow %s? %s", what, params.reason or "")
  vim.ui.select(items, { prompt = prompt, kind = "agentls.confirm" }, function(choice)
    if choice == SHOW then
      render.show_preview(preview)
      return M.confirm(params, on_decision)
    end
    if choice == DENY_MESSAGE then
      -- The message goes back to the model with the denial ("denied by the user: …").
      return vim.ui.input({ prompt = "agentls: tell the agent why, or what to do instead: " }, function(text)
        if text == nil then
          return M.confirm(params, on_decision) -- input dismissed: back to the question
        end
        local answer = { decision = "rejectOnce" }
        if vim.trim(text) ~= "" then
          answer.message = text
        end
        on_decision(answer)
      end)
    end
    for _, c in ipairs(CHOICES) do
      if c.label == choice then
        return on_decision({ decision = c.decision })
      end
    end
    on_decision({ decision = "rejectOnce", message = "dismissed" })
  end)
end

-- A question settled this way is answered with RequestCancelled, not a decision.
local CANCELLED = {}

--- Settles the pending question of call_id as cancelled: its handler returns
--- and the picker's later answer is ignored. Returns true if one was pending.
local function cancel_confirm(call_id, why, what)
  local pending = state.confirms[call_id]
  if not pending then
    return false
  end
  log(string.format("[confirm] %s %s: cancelled (%s)", pending.tool, call_id, why))
  notify(string.format("%s call %s; its question needs no answer", pending.tool, what or "was cancelled"))
  pending.settle(CANCELLED)
  return true
end

--- Cancels the calls whose call_sync deadline has passed (at most once each),
--- ending their questions. On 0.7 a question blocks in the confirm handler's
--- vim.wait, nested inside call_sync's, which cannot time out until it returns.
local function expire_sync_waits()
  local now = now_ms()
  for call_id, w in pairs(state.sync_waits) do
    if not w.expired and now >= w.deadline then
      w.expired = true
      -- timed_out only if the call was still running (else it has its result).
      w.timed_out = M._cancel(call_id, "call_sync timed out", "timed out")
    end
  end
end

handlers["tools/confirm"] = function(_, params, ctx)
  if type(params) ~= "table" then
    return nil, vim.lsp.rpc_response_error(vim.lsp.protocol.ErrorCodes.InvalidParams, "tools/confirm needs params")
  end
  local key = params.callId or ""
  log(string.format("[confirm] %s %s: %s", params.tool or "?", key, tostring(params.reason)))
  local answer
  -- 0.10+ runs request handlers inside coroutine.wrap and replies when the
  -- handler returns, so the handler may yield while the picker is open
  -- (LuaJIT: running() is nil on the main thread; with 5.2 compat it says so).
  local co, is_main = coroutine.running()
  local can_yield = co ~= nil and not is_main
  local waiting = false
  local pending = { tool = params.tool or "tool", client_id = ctx and ctx.client_id }
  function pending.settle(res)
    if answer ~= nil then
      return
    end
    answer = res
    if state.confirms[key] == pending then
      state.confirms[key] = nil
    end
    if waiting then
      waiting = false
      coroutine.resume(co)
    end
  end
  state.confirms[key] = pending
  M.confirm(params, function(res)
    if answer == CANCELLED then
      log(string.format("[confirm] %s %s: late answer %s ignored", pending.tool, key, tostring(res.decision)))
      return
    end
    pending.settle(res)
  end)
  if answer == nil and can_yield then
    -- Newer Neovims run request handlers in a coroutine: let the UI stay live.
    waiting = true
    coroutine.yield()
  elseif answer == nil then
    -- 0.7 wants the reply synchronously; wait for an asynchronous picker
    -- (or for the call's cancellation, which settles the question, also
    -- when a call_sync waiting further down the stack times out).
    vim.wait(10 * 60 * 1000, function()
      if answer == nil then
        expire_sync_waits()
      end
      return answer ~= nil
    end, 20)
  end
  pending.settle({ decision = "rejectOnce", message = "no answer" })
  if answer == CANCELLED then
    return nil, vim.lsp.rpc_response_error(vim.lsp.protocol.ErrorCodes.RequestCancelled, "cancelled")
  end
  log("[confirm] " .. answer.decision)
  return answer
end

-- Diagnostics of the files an edit or write changes (the diagnostics option).
-- It may wait up to params.waitMs for the language servers to catch up; on
-- 0.7 that blocks in vim.wait (see agentls.diagnostics).
handlers["tools/diagnostics"] = function(_, params, ctx)
  return diagnostics.answer(params, ctx and ctx.client_id, log)
end

-- The server cancels its pending tools/confirm or tools/diagnostics when the
-- call that asked ends (cancelled, server shutting down, or it stopped
-- waiting). Handlers never see the request id, but the server asks one
-- question at a time, so the cancel names this client's pending question; a
-- diagnostics wait of another call cut short answers early, with what it has.
handlers["$/cancelRequest"] = function(_, params, ctx)
  local id = type(params) == "table" and params.id or nil
  local client_id = ctx and ctx.client_id
  local found = diagnostics.cancel(function(w) return w.client_id == client_id end) > 0
  for call_id, pending in pairs(state.confirms) do
    if pending.client_id == client_id then
      found = cancel_confirm(call_id, "server cancelled request " .. tostring(id)) or found
    end
  end
  if not found then
    log(string.format("[cancel] server cancelled request %s (already answered)", tostring(id)))
  end
end

-- The buffers a WorkspaceEdit changes (text edits only).
local function edited_buffers(edit)
  local out, seen = {}, {}
  local function add(uri)
    if type(uri) == "string" then
      local b = vim.uri_to_bufnr(uri)
      if not seen[b] then
        seen[b] = true
        table.insert(out, b)
      end
    end
  end
  if type(edit.documentChanges) == "table" then
    for _, dc in ipairs(edit.documentChanges) do
      if dc.textDocument then
        add(dc.textDocument.uri)
      end
    end
  elseif type(edit.changes) == "table" then
    for uri in pairs(edit.changes) do
      add(uri)
    end
  end
  return out
end

--- A versioned edit older than its buffer, which Neovim would skip silently.
local function stale_edit(edit)
  for _, dc in ipairs(type(edit.documentChanges) == "table" and edit.documentChanges or {}) do
    local td = dc.textDocument
    if td and type(td.version) == "number" and td.version > 0 then
      local b = vim.fn.bufnr(vim.uri_to_fname(td.uri))
      local have = b > 0 and compat.buf_version(b) or nil
      if have and have > td.version then
        return string.format("%s changed in the editor (version %d, the edit is for %d)",
          vim.fn.fnamemodify(vim.uri_to_fname(td.uri), ":~:."), have, td.version)
      end
    end
  end
  return nil
end

-- Edits of open documents (sync_buffers declares applyEdit). A buffer that
-- was clean is saved after the edit, so the file changes as it would without
-- sync; one with the user's unsaved work only gets the edit merged in.
handlers["workspace/applyEdit"] = function(_, params, ctx)
  if type(params) ~= "table" or type(params.edit) ~= "table" then
    return { applied = false, failureReason = "workspace/applyEdit needs params.edit" }
  end
  local client = find_client(ctx and ctx.client_id)
  log("[applyEdit] " .. tostring(params.label or ""))
  local stale = stale_edit(params.edit)
  if stale then
    log("[applyEdit] refused: " .. stale)
    return { applied = false, failureReason = stale }
  end
  local bufs = edited_buffers(params.edit)
  local was_modified = {}
  for _, b in ipairs(bufs) do
    was_modified[b] = vim.api.nvim_buf_is_loaded(b) and vim.bo[b].modified
  end
  local ok, err = pcall(compat.apply_workspace_edit, params.edit, client and client.offset_encoding)
  if not ok then
    log("[applyEdit] failed: " .. tostring(err))
    return { applied = false, failureReason = tostring(err) }
  end
  for _, b in ipairs(bufs) do
    if not was_modified[b] and vim.api.nvim_buf_is_loaded(b) and vim.bo[b].buftype == "" and vim.bo[b].modified then
      local saved, serr = pcall(vim.api.nvim_buf_call, b, function()
        -- The edit kept the file's missing final newline: 'fixeol' must
        -- not add one on this save.
        local fixeol = vim.bo[b].fixeol
        if not vim.bo[b].eol then
          vim.bo[b].fixeol = false
        end
        local ok, werr = pcall(vim.cmd, "silent noautocmd update")
        vim.bo[b].fixeol = fixeol
        if not ok then
          error(werr, 0)
        end
      end)
      if not saved then
        -- The edit is in the buffer; only the save failed.
        log("[applyEdit] save failed: " .. tostring(serr))
        notify("could not save " .. vim.api.nvim_buf_get_name(b) .. ": " .. tostring(serr), vim.log.levels.WARN)
      end
    end
  end
  return { applied = true }
end

-- Clients -----------------------------------------------------------------

local function client_capabilities()
  local caps = vim.lsp.protocol.make_client_capabilities()
  caps.experimental = caps.experimental or {}
  caps.experimental.agentls = {
    confirm = true,
    applyEdit = M.config.sync_buffers and true or false,
    diagnostics = M.config.diagnostics and true or false,
  }
  return caps
end

local function real(path)
  local p = vim.fn.fnamemodify(path, ":p")
  return compat.uv.fs_realpath(p) or (p:gsub("(.)/$", "%1"))
end

--- Attaches client id (workspace root) to buf when it is a file under root.
local function maybe_attach(buf, id, root)
  if not vim.api.nvim_buf_is_loaded(buf) or vim.bo[buf].buftype ~= "" then
    return
  end
  local name = vim.api.nvim_buf_get_name(buf)
  if name == "" or name:match("^%a[%w+.-]*://") then
    return
  end
  local path, r = real(name), real(root)
  if r == "/" or path:sub(1, #r + 1) == r .. "/" then
    vim.lsp.buf_attach_client(buf, id) -- idempotent
  end
end

local function attach_loaded(id, root)
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    maybe_attach(b, id, root)
  end
end

local GROUP = "agentls_sync"

--- The autocmds that attach buffers opened later (or none when sync is off).
local function sync_autocmds()
  local group = vim.api.nvim_create_augroup(GROUP, { clear = true })
  if not M.config.sync_buffers then
    return
  end
  vim.api.nvim_create_autocmd({ "BufReadPost", "BufNewFile", "BufEnter" }, {
    group = group,
    desc = "agentls: sync the buffer with the agentls client of its workspace",
    callback = function(ev)
      if not M.config.sync_buffers then
        return
      end
      for root, id in pairs(state.clients) do
        local c = find_client(id)
        if c and not compat.is_stopped(c) then
          maybe_attach(ev.buf, id, root)
        end
      end
    end,
  })
end

local function init_options()
  local o = { mode = M.config.mode }
  if M.config.permissions then
    o.permissions = {
      allow = M.config.permissions.allow or {},
      ask = M.config.permissions.ask or {},
      deny = M.config.permissions.deny or {},
    }
  end
  if M.config.limits and next(M.config.limits) ~= nil then
    o.limits = M.config.limits
  end
  return o
end

local function server_cmd()
  local cmd = M.config.cmd
  if type(cmd) == "string" then
    cmd = { cmd }
  end
  return cmd
end

--- The options a client gets when it starts (process and initialize): a
--- running client only follows a change of these by restarting.
local function start_options()
  return {
    cmd = server_cmd(),
    cmd_env = M.config.cmd_env,
    init_options = init_options(),
    sync_buffers = M.config.sync_buffers and true or false,
    diagnostics = M.config.diagnostics and true or false,
  }
end

--- Ends what client_id left open when its process exited: queued starts,
--- sent calls and their pending questions get an error instead of a wait.
local function client_exited(client_id, code, signal)
  local how = string.format("agentls exited (code %s, signal %s)", tostring(code), tostring(signal))
  local waiting = state.waiting[client_id] or {}
  state.waiting[client_id] = nil
  local calls = {}
  for call_id, call in pairs(state.calls) do
    if call.client_id == client_id then
      state.calls[call_id] = nil
      state.progress_at[call_id] = nil
      calls[call_id] = call
    end
  end
  local function settle()
    for _, f in ipairs(waiting) do
      f(nil, how .. " before it was ready")
    end
    for call_id, call in pairs(calls) do
      cancel_confirm(call_id, how, "ended: agentls exited")
      log(string.format("[call %s] %s error: %s", call_id, call.tool, how))
      call.finish({ code = INTERNAL_ERROR,
        message = how .. " during the call; the next call starts it again (see :AgentlsLog)" })
    end
    -- Questions of calls this plugin did not send (raw requests).
    for call_id, pending in pairs(state.confirms) do
      if pending.client_id == client_id then
        cancel_confirm(call_id, how, "ended: agentls exited")
      end
    end
  end
  -- 0.7 runs on_exit in the process-exit callback (a fast event), where
  -- callbacks may not use most of the API.
  if vim.in_fast_event() then
    vim.schedule(settle)
  else
    settle()
  end
end

-- How to get the binary, for the "not found" warning and :checkhealth.
M.INSTALL_HINT = "install it with `go install github.com/agentls/agentls/cmd/agentls@latest`"
  .. " (puts it in $(go env GOPATH)/bin), or give its path: setup({ cmd = { '/path/to/agentls' } })"

--- The message for a server command that is not an executable; warns once
--- per session and command (every call and restart would otherwise repeat it).
local function missing_binary(cmd)
  local msg = string.format("%s not found (not an executable on $PATH)", cmd[1])
  if not state.missing_warned[cmd[1]] then
    state.missing_warned[cmd[1]] = true
    notify(msg .. "; " .. M.INSTALL_HINT, vim.log.levels.WARN)
  end
  log("[start] " .. msg)
  return "agentls is not running: " .. msg .. " (see :checkhealth agentls)"
end

--- Starts (or returns) the client for root; returns its id, or nil and why not.
---@param root? string default: root()
---@return integer|nil client_id
---@return string|nil why_not
function M.start(root)
  root = root or M.root()
  local id = state.clients[root]
  local c = find_client(id)
  if c and not compat.is_stopped(c) then
    return id
  end
  local opts = start_options()
  local cmd = opts.cmd
  -- A PATH in cmd_env is the server's, not Neovim's: leave that lookup to the start.
  local own_path = type(opts.cmd_env) == "table" and opts.cmd_env.PATH ~= nil
  if not own_path and vim.fn.executable(cmd[1]) ~= 1 then
    return nil, missing_binary(cmd)
  end
  id = compat.start_client({
    name = NAME,
    cmd = cmd,
    cmd_env = opts.cmd_env,
    root_dir = root,
    workspace_folders = { { uri = vim.uri_from_fname(root), name = vim.fn.fnamemodify(root, ":t") } },
    init_options = opts.init_options,
    capabilities = client_capabilities(),
    handlers = handlers,
    on_init = function(client, result)
      state.init[client.id] = result
      state.ready[client.id] = true
      local q = state.waiting[client.id] or {}
      state.waiting[client.id] = nil
      for _, f in ipairs(q) do
        f(client)
      end
    end,
    on_exit = function(code, signal, client_id)
      log(string.format("[exit] client %s code %s signal %s", tostring(client_id), tostring(code), tostring(signal)))
      state.ready[client_id] = nil
      state.init[client_id] = nil
      state.watcher[client_id] = nil
      state.started[client_id] = nil
      for r, cid in pairs(state.clients) do
        if cid == client_id then
          state.clients[r] = nil
        end
      end
      client_exited(client_id, code, signal)
    end,
  })
  if not id then
    notify("could not start " .. table.concat(cmd, " "), vim.log.levels.ERROR)
    return nil, "agentls is not running: could not start " .. table.concat(cmd, " ")
  end
  state.clients[root] = id
  state.started[id] = opts
  diagnostics.track(opts.diagnostics)
  log(string.format("[start] %s in %s (client %d)", table.concat(cmd, " "), root, id))
  if M.config.sync_buffers then
    sync_autocmds()
    attach_loaded(id, root)
  end
  return id
end

--- Runs f(client) once the client for root is initialized (f(nil, err) on failure).
local function with_client(root, f)
  local id, why = M.start(root)
  if not id then
    return f(nil, why)
  end
  local c = find_client(id)
  if state.ready[id] and c then
    return f(c)
  end
  state.waiting[id] = state.waiting[id] or {}
  table.insert(state.waiting[id], f)
end

--- The initialize result of the client for root (nil until initialized).
---@param root? string default: root()
---@return table|nil
function M.initialize_result(root)
  local id = state.clients[root or M.root()]
  return id and state.init[id] or nil
end

--- The watch mode agentls/watcherReady reported for the client of root, or
--- nil while its watchers are still being armed.
---@param root? string workspace root (default: the current one)
---@return string|nil mode "inotify", "kqueue", "windows" or "degraded"
function M.watcher_mode(root)
  local id = state.clients[root or M.root()]
  return id and state.watcher[id] or nil
end

--- Stops every agentls client.
function M.stop()
  for root, id in pairs(state.clients) do
    local c = find_client(id)
    if c then
      compat.stop(c)
    end
    state.clients[root] = nil
  end
end

-- Lua API -----------------------------------------------------------------

--- Calls tool asynchronously; callback(err, result) gets the tools/call result
--- {callId, content, isError, details}. Returns the callId (for cancel).
---@param tool string e.g. "read"
---@param args? table The tool's arguments (nil or {} for none)
---@param callback? fun(err: agentls.Error|nil, result: agentls.Result|nil)
---@param opts? agentls.CallOpts
---@return string call_id
function M.call(tool, args, callback, opts)
  opts = opts or {}
  callback = callback or function() end
  local call_id = opts.callId or new_call_id()
  local finished = false
  local function finish(rerr, result)
    if finished then
      return
    end
    finished = true
    callback(rerr, result)
  end
  state.calls[call_id] = { tool = tool, finish = finish }
  with_client(opts.root, function(client, err)
    if not client then
      state.calls[call_id] = nil
      return finish({ code = INTERNAL_ERROR, message = err })
    end
    local call = state.calls[call_id]
    if not call then
      return -- cancelled before it was sent
    end
    call.client_id = client.id
    local params = { name = tool, arguments = as_object(args), callId = call_id }
    local ok, request_id = compat.request(client, "tools/call", params, function(rerr, result)
      local done = state.calls[call_id]
      state.calls[call_id] = nil
      state.progress_at[call_id] = nil
      if done and done.details and M.config.render then
        for _, d in ipairs(done.details) do
          render.show(d)
        end
      end
      if rerr then
        log(string.format("[call %s] %s error: %s", call_id, tool, tostring(rerr.message)))
      elseif result then
        log(string.format("[call %s] %s%s", call_id, tool, result.isError and " (isError)" or ""))
      end
      finish(rerr, result)
    end)
    if not ok then
      state.calls[call_id] = nil
      return finish({ code = INTERNAL_ERROR, message = "agentls request failed" })
    end
    call.request_id = request_id
  end)
  return call_id
end

--- Cancels a running call by its callId: sends $/cancelRequest and calls its
--- callback with the RequestCancelled (-32800) error (Neovim's client drops
--- the server's own -32800 reply).
---@param call_id string
---@return boolean cancelled false when no such call is running
function M.cancel(call_id)
  return M._cancel(call_id, "call cancelled")
end

-- M.cancel with the reason its question's notification and log give.
function M._cancel(call_id, why, what)
  local call = state.calls[call_id]
  if not call then
    return false
  end
  state.calls[call_id] = nil
  local c = find_client(call.client_id)
  if c and call.request_id then
    compat.cancel_request(c, call.request_id)
  end
  -- Ends a question the call is waiting on (0.7 blocks in the handler until then).
  cancel_confirm(call_id, why, what)
  diagnostics.cancel(function(w) return w.call_id == call_id end)
  call.finish({ code = -32800, message = "cancelled" })
  return true
end

--- Calls tool and waits: returns result, or nil and an error.
---@param tool string
---@param args? table
---@param timeout_ms? integer default: config.timeout_ms
---@param opts? agentls.CallOpts
---@return agentls.Result|nil result
---@return agentls.Error|nil err
function M.call_sync(tool, args, timeout_ms, opts)
  local done, rerr, res = false, nil, nil
  local id = M.call(tool, args, function(e, r)
    done, rerr, res = true, e, r
  end, opts)
  timeout_ms = timeout_ms or M.config.timeout_ms
  -- Recorded so a question of this call, blocking a nested vim.wait on 0.7,
  -- ends at the deadline too (expire_sync_waits).
  local w = { deadline = now_ms() + timeout_ms, expired = false, timed_out = false }
  if not done then
    state.sync_waits[id] = w
  end
  local ok, finished = pcall(vim.wait, timeout_ms, function() return done end, 10)
  if state.sync_waits[id] == w then
    state.sync_waits[id] = nil
  end
  if not ok then
    M.cancel(id)
    error(finished, 0)
  end
  if not finished or w.timed_out then
    M._cancel(id, "call_sync timed out", "timed out")
    return nil, { code = -32800, message = "timed out" }
  end
  return res, rerr
end

--- The tool list: opts.format = "mcp" (default) | "openai" | "anthropic". With
--- a callback it is asynchronous (callback(err, tools)); without, it waits and
--- returns tools (or nil, err).
---@param opts? agentls.ToolsOpts
---@param callback? fun(err: agentls.Error|nil, tools: table[]|nil)
---@return table[]|nil tools nil with a callback
---@return agentls.Error|nil err
function M.tools(opts, callback)
  opts = opts or {}
  local params = vim.empty_dict()
  if opts.format then
    params = { format = opts.format, includeDeferred = opts.includeDeferred }
  end
  local done, rerr, res = false, nil, nil
  local function finish(e, r)
    done, rerr, res = true, e, r and r.tools or nil
    if callback then
      callback(rerr, res)
    end
  end
  with_client(opts.root, function(client, err)
    if not client then
      return finish({ code = INTERNAL_ERROR, message = err })
    end
    compat.request(client, "tools/list", params, finish)
  end)
  if callback then
    return
  end
  if not vim.wait(opts.timeout_ms or M.config.list_timeout_ms, function() return done end, 10) then
    return nil, { code = -32800, message = "timed out" }
  end
  return res, rerr
end

--- Sends a request of the agentls protocol (jobs/list, …) and waits:
--- returns the result, or nil and an error.
---@param method string e.g. "jobs/list"
---@param params? table
---@param timeout_ms? integer default: the configured timeout_ms
---@param opts? agentls.CallOpts
---@return table|nil result
---@return agentls.Error|nil err
function M.request_sync(method, params, timeout_ms, opts)
  opts = opts or {}
  local done, rerr, res = false, nil, nil
  with_client(opts.root, function(client, err)
    if not client then
      done, rerr = true, { code = INTERNAL_ERROR, message = err }
      return
    end
    compat.request(client, method, params or vim.empty_dict(), function(e, r)
      done, rerr, res = true, e, r
    end)
  end)
  if not vim.wait(timeout_ms or M.config.timeout_ms, function() return done end, 10) then
    return nil, { code = -32800, message = "timed out" }
  end
  return res, rerr
end

-- What text(nil) returns: call_sync gives nil when the call timed out (or
-- failed before a result), and a model handed "" would read it as no output.
M.NO_RESULT = "agentls: the call timed out (or failed) before it returned a result; nothing came back"

--- Concatenated text of a tools/call result's content; for nil (call_sync
--- timed out) a message that says so.
---@param result agentls.Result|nil
---@return string
function M.text(result)
  if result == nil then
    return M.NO_RESULT
  end
  local out = {}
  for _, c in ipairs((result or {}).content or {}) do
    if c.type == "text" then
      table.insert(out, c.text)
    elseif c.type == "image" then
      table.insert(out, string.format("[image %s, %d base64 bytes]", tostring(c.mimeType), #(c.data or "")))
    end
  end
  return table.concat(out, "\n")
end

--- The log lines :AgentlsLog shows (the live table: copy before changing).
---@return string[]
function M.log_lines()
  return state.log
end

--- Removes the change highlights from every buffer.
function M.clear()
  render.clear_all()
end

--- Stops the clients started with other start options than the current
--- ones; the next use (or autostart) starts them again with these.
local function restart_changed()
  local want = start_options()
  for root, id in pairs(state.clients) do
    local c = find_client(id)
    if c and not vim.deep_equal(state.started[id], want) then
      log(string.format("[restart] client %d in %s: start options changed", id, root))
      state.clients[root] = nil
      compat.stop(c)
    end
  end
end

-- This module's directory, .../lua/agentls.
local function module_dir()
  local src = debug.getinfo(1, "S").source
  if src:sub(1, 1) ~= "@" then
    return nil
  end
  return vim.fn.fnamemodify(src:sub(2), ":p:h")
end

--- Generates the help tags when the plugin's doc/tags lacks them (plugin
--- managers that only add the directory to 'runtimepath' do not run
--- :helptags). Quiet where the directory is read-only.
local function ensure_helptags()
  local dir = module_dir()
  if not dir then
    return
  end
  local doc = vim.fn.fnamemodify(dir, ":h:h") .. "/doc"
  if vim.fn.filereadable(doc .. "/agentls.txt") == 0 then
    return
  end
  local f = io.open(doc .. "/tags", "r")
  if f then
    local text = f:read("*a") or ""
    f:close()
    if text:find("^agentls\t") or text:find("\nagentls\t") then
      return
    end
  end
  if vim.fn.filewritable(doc) ~= 2 then
    return
  end
  local ok, err = pcall(vim.cmd, "silent! helptags " .. vim.fn.fnameescape(doc))
  if not ok then
    log("[helptags] " .. tostring(err))
  end
end

--- Configures the plugin (again: restarts a running server whose start
--- options changed), defines the commands and starts the server (autostart).
---@param opts? agentls.Options
---@return table agentls the module
function M.setup(opts)
  M.config = vim.tbl_deep_extend("force", vim.deepcopy(defaults), opts or {})
  if opts and opts.cmd then
    M.config.cmd = opts.cmd -- lists replace, not merge
  end
  require("agentls.commands").create()
  ensure_helptags()
  render.setup()
  sync_autocmds()
  diagnostics.track(M.config.diagnostics)
  restart_changed()
  if M.config.autostart then
    M.start()
  end
  return M
end

return M
