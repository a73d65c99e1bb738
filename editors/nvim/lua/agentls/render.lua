-- Inline rendering of agentls tools/details: reload the changed buffer, then
-- highlight inserted/changed lines, show removed lines as virtual lines and
-- mark the first change with a sign. Also the diff views (:AgentlsDiff and
-- the "Show change" confirmation preview).
local M = {}

M.ns = vim.api.nvim_create_namespace("agentls")
M.SIGN = "▎"

-- The last rendered change, for :AgentlsDiff: {path, old_lines, details}.
M.last = nil
local attached = {} -- bufnr -> true while on_lines watches it
-- bufnr -> {extmark id -> row of the line it marks}, kept by on_lines: an
-- extmark of a replaced line collapses onto a neighbour, so its own position
-- cannot tell which line it belonged to.
local rows = {}
M.sign_ids = {} -- bufnr -> extmark id of the first-change sign

function M.setup()
  vim.cmd([[
    highlight default link AgentlsAdd DiffAdd
    highlight default link AgentlsChange DiffChange
    highlight default link AgentlsDelete DiffDelete
    highlight default link AgentlsSign DiffChange
  ]])
end

local function count_newlines(s)
  local _, n = s:gsub("\n", "")
  return n
end

--- Line hunks of LSP TextEdits (ranges in the old text, applied in order):
--- {old_start, old_count, new_start, new_count}, 0-based lines. A whole-line
--- edit (columns 0 and text ending in a newline) covers exactly its lines; an
--- edit inside lines covers every line it touches, old and new.
function M.hunks(edits)
  local sorted = {}
  for i, e in ipairs(edits or {}) do
    sorted[i] = e
  end
  table.sort(sorted, function(a, b)
    local sa, sb = a.range.start, b.range.start
    if sa.line ~= sb.line then
      return sa.line < sb.line
    end
    return sa.character < sb.character
  end)
  local out, offset = {}, 0
  for _, e in ipairs(sorted) do
    local s, en, text = e.range.start, e.range["end"], e.newText or ""
    local nl = count_newlines(text)
    local new_start = s.line + offset
    local h
    if s.character == 0 and en.character == 0 and (text == "" or text:sub(-1) == "\n") then
      h = { old_start = s.line, old_count = en.line - s.line, new_start = new_start, new_count = nl }
    else
      h = { old_start = s.line, old_count = en.line - s.line + 1, new_start = new_start, new_count = nl + 1 }
    end
    if h.old_count > 0 or h.new_count > 0 then
      table.insert(out, h)
    end
    offset = offset + nl - (en.line - s.line)
  end
  return out
end

--- Old text from the new lines and a unified diff (the diff applied backwards).
function M.old_from_unified(new_lines, diff)
  if type(diff) ~= "string" or diff == "" then
    return nil
  end
  local old, ni = {}, 1 -- ni: next unread new line (1-based)
  local in_hunk = false
  -- The diff of a CRLF file keeps each line's "\r"; the buffer's lines
  -- (fileformat=dos) do not, so neither may the old lines rebuilt here.
  local strip_cr = diff:find("\r\n", 1, true) ~= nil
  for _, l in ipairs(new_lines) do
    if l:sub(-1) == "\r" then
      strip_cr = false -- a buffer that shows its CRs: keep them
      break
    end
  end
  for line in (diff .. "\n"):gmatch("([^\n]*)\n") do
    local c = line:match("^@@ %-%d+,?%d* %+(%d+),?%d* @@")
    if c then
      local start = tonumber(c)
      -- "+0,0" (empty new side) means "before line 1".
      local upto = math.max(start - 1, 0)
      if line:match("^@@ %-%d+,?%d* %+%d+,0 @@") then
        upto = start
      end
      while ni <= upto do
        table.insert(old, new_lines[ni])
        ni = ni + 1
      end
      in_hunk = true
    elseif in_hunk then
      local tag, rest = line:sub(1, 1), line:sub(2)
      if strip_cr and rest:sub(-1) == "\r" then
        rest = rest:sub(1, -2)
      end
      if tag == " " then
        table.insert(old, rest)
        ni = ni + 1
      elseif tag == "-" then
        table.insert(old, rest)
      elseif tag == "+" then
        ni = ni + 1
      elseif tag == "" and line == "" then
        -- tolerate a blank context line whose space was stripped
      end
    end
  end
  while ni <= #new_lines do
    table.insert(old, new_lines[ni])
    ni = ni + 1
  end
  return old
end

local function norm(path)
  local p = vim.fn.fnamemodify(path, ":p")
  local real = require("agentls.compat").uv.fs_realpath(p)
  return real or p
end

--- The loaded buffer showing path, if any.
function M.loaded_buffer(path)
  local want = norm(path)
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(b) then
      local name = vim.api.nvim_buf_get_name(b)
      if name ~= "" and norm(name) == want then
        return b
      end
    end
  end
  return nil
end

local function read_lines(path)
  if vim.fn.filereadable(path) == 1 then
    return vim.fn.readfile(path)
  end
  return {}
end

function M.clear(buf)
  rows[buf] = nil
  if vim.api.nvim_buf_is_valid(buf) then
    vim.api.nvim_buf_clear_namespace(buf, M.ns, 0, -1)
  end
end

function M.clear_all()
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    M.clear(b)
  end
end

-- Clears marks on lines the user edits.
local function watch(buf)
  if attached[buf] then
    return
  end
  attached[buf] = true
  vim.api.nvim_buf_attach(buf, false, {
    on_lines = function(_, b, _, first, last_old, last_new)
      -- Old rows first..last_old-1 were replaced (or deleted): their marks go,
      -- wherever the change left them; the rows after them shift.
      local marked = rows[b] or {}
      local ids, shift, left = {}, last_new - last_old, false
      for id, row in pairs(marked) do
        if row >= first and row < last_old then
          marked[id] = nil
          table.insert(ids, id)
        else
          if row >= last_old then
            marked[id] = row + shift
          end
          left = true
        end
      end
      if #ids > 0 then
        vim.schedule(function()
          if vim.api.nvim_buf_is_valid(b) then
            for _, id in ipairs(ids) do
              pcall(vim.api.nvim_buf_del_extmark, b, M.ns, id)
            end
          end
        end)
      end
      if not left then
        attached[b], rows[b] = nil, nil
        return true -- detach: nothing left to watch
      end
    end,
    on_detach = function(_, b)
      attached[b], rows[b] = nil, nil
    end,
  })
end

--- Places the marks for hunks in buf (whose lines are the new text); old_lines
--- (may be nil) supplies the removed text.
function M.place(buf, hunks, old_lines)
  M.clear(buf)
  local marked = {}
  local function mark(row, opts)
    local id = vim.api.nvim_buf_set_extmark(buf, M.ns, row, 0, opts)
    marked[id] = row
    return id
  end
  local n = vim.api.nvim_buf_line_count(buf)
  for i, h in ipairs(hunks) do
    local group = h.old_count == 0 and "AgentlsAdd" or "AgentlsChange"
    for row = h.new_start, math.min(h.new_start + h.new_count, n) - 1 do
      -- One whole-line mark per line (hl_eol): 0.7 has line_hl_group but does
      -- not report it, and a per-line mark can be cleared line by line.
      local opts = { hl_group = group, hl_eol = true, priority = 100, end_row = row + 1, end_col = 0 }
      if row + 1 >= n then
        opts.end_row, opts.end_col = row, #(vim.api.nvim_buf_get_lines(buf, row, row + 1, false)[1] or "")
      end
      mark(row, opts)
    end
    if h.old_count > 0 then
      local virt = {}
      for j = h.old_start + 1, h.old_start + h.old_count do
        local text = old_lines and old_lines[j]
        table.insert(virt, { { text or "", "AgentlsDelete" } })
      end
      if not old_lines then
        virt = { { { string.format("(%d lines removed)", h.old_count), "AgentlsDelete" } } }
      end
      local row, above = h.new_start, true
      if row >= n then
        row, above = n - 1, false
      end
      mark(row, { virt_lines = virt, virt_lines_above = above })
    end
    if i == 1 then
      local row = math.min(h.new_start, n - 1)
      M.sign_ids[buf] = mark(row, { sign_text = M.SIGN, sign_hl_group = "AgentlsSign" })
    end
  end
  rows[buf] = marked
  watch(buf)
end

--- Renders one tools/details: reloads a loaded, unmodified buffer of the file
--- and marks the change in it. Returns the buffer (or nil when none is loaded).
function M.show(details)
  if type(details) ~= "table" or not details.uri then
    return nil
  end
  local path = vim.uri_to_fname(details.uri)
  local buf = M.loaded_buffer(path)
  local before = buf and vim.api.nvim_buf_get_lines(buf, 0, -1, false) or nil
  local change = { path = path, details = details }
  M.last = change
  if buf and details.inEditor then
    -- The change went into the buffer (workspace/applyEdit), saved or not:
    -- mark it there; the disk may not have it.
    change.old_lines = M.old_from_unified(before, details.unifiedDiff) or before
    M.place(buf, M.hunks(details.edits), change.old_lines)
    return buf
  end
  if buf and vim.bo[buf].modified then
    change.old_lines = before and M.old_from_unified(read_lines(path), details.unifiedDiff)
    vim.notify("agentls: " .. vim.fn.fnamemodify(path, ":~:.") ..
      " changed on disk but its buffer has unsaved changes (:AgentlsDiff to compare)", vim.log.levels.WARN)
    return nil
  end
  if buf then
    vim.api.nvim_buf_call(buf, function()
      vim.cmd("silent! edit!")
    end)
  end
  local new_lines = buf and vim.api.nvim_buf_get_lines(buf, 0, -1, false) or read_lines(path)
  change.old_lines = M.old_from_unified(new_lines, details.unifiedDiff)
  if not change.old_lines and details.kind == "create" then
    change.old_lines = {}
  end
  if not change.old_lines then
    change.old_lines = before
  end
  if buf then
    M.place(buf, M.hunks(details.edits), change.old_lines)
  end
  return buf
end

local function scratch(lines, name, ft)
  local buf = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].bufhidden = "wipe"
  vim.bo[buf].modifiable = false
  if ft and ft ~= "" then
    vim.bo[buf].filetype = ft
  end
  if name then
    pcall(vim.api.nvim_buf_set_name, buf, name)
  end
  return buf
end
M.scratch = scratch

--- :AgentlsDiff — the file against its text before the last change.
function M.diff_last()
  local ch = M.last
  if not ch then
    vim.notify("agentls: no change to show yet", vim.log.levels.INFO)
    return
  end
  if not ch.old_lines then
    vim.notify("agentls: the old text of the last change is unknown", vim.log.levels.WARN)
    return
  end
  vim.cmd("tabedit " .. vim.fn.fnameescape(ch.path))
  local ft = vim.bo.filetype
  vim.cmd("diffthis")
  local buf = scratch(ch.old_lines, "agentls://before/" .. vim.fn.fnamemodify(ch.path, ":~:."), ft)
  vim.cmd("leftabove vsplit")
  vim.api.nvim_win_set_buf(0, buf)
  vim.cmd("diffthis")
  return buf
end

--- The proposed change of a tools/confirm preview, as a diff split (old file
--- vs the edits applied) or its unified diff.
function M.show_preview(preview)
  if type(preview) ~= "table" then
    return
  end
  local path = preview.uri and vim.uri_to_fname(preview.uri)
  if path and type(preview.edits) == "table" and #preview.edits > 0 then
    local old = read_lines(path)
    local tmp = vim.api.nvim_create_buf(false, true)
    vim.api.nvim_buf_set_lines(tmp, 0, -1, false, old)
    local ok = pcall(vim.lsp.util.apply_text_edits, preview.edits, tmp, "utf-16")
    local new = vim.api.nvim_buf_get_lines(tmp, 0, -1, false)
    vim.api.nvim_buf_delete(tmp, { force = true })
    if ok then
      local okft, ft = pcall(vim.filetype.match, { filename = path })
      ft = okft and type(ft) == "string" and ft or ""
      vim.cmd("tabnew")
      local a = scratch(old, "agentls://current/" .. vim.fn.fnamemodify(path, ":~:."), ft)
      vim.api.nvim_win_set_buf(0, a)
      vim.cmd("diffthis")
      vim.cmd("rightbelow vsplit")
      local b = scratch(new, "agentls://proposed/" .. vim.fn.fnamemodify(path, ":~:."), ft)
      vim.api.nvim_win_set_buf(0, b)
      vim.cmd("diffthis")
      vim.cmd("redraw")
      return
    end
  end
  if type(preview.unifiedDiff) == "string" then
    vim.cmd("botright new")
    vim.api.nvim_win_set_buf(0, scratch(vim.split(preview.unifiedDiff, "\n", { plain = true }), nil, "diff"))
    vim.cmd("redraw")
  end
end

return M
