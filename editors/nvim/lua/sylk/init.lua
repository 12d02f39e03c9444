-- Sylk for Neovim: starts `sylk serve --stdio` for each buffer's project root and
-- adds :SylkSearch, :SylkGrep, :SylkRefs, :SylkStatus and :SylkReindex. Workspace
-- symbols and hover are the standard LSP ones (vim.lsp.buf.workspace_symbol(),
-- vim.lsp.buf.hover()).
--
--   require("sylk").setup({ settings = { embedding = { enabled = false } } })
--
-- `trusted` (:help sylk-trusted) says whether a project is trusted; untrusted, the
-- server ignores its .sylk.toml and [tool.sylk] and does not run git.
--
-- Works with Neovim 0.7 (vim.lsp.start_client + buf_attach_client, one client per
-- root) and later (vim.lsp.start).
local compat = require("sylk.compat")
local format = require("sylk.format")

local M = {}

M.defaults = {
  -- The server command; "sylk" must be on PATH, or give a full path.
  cmd = { "sylk", "serve", "--stdio" },
  -- The first marker found above the buffer's file decides the root (so a .sylk.toml
  -- or the git root wins over a nested pyproject.toml); no marker: the current directory.
  root_markers = { ".sylk.toml", ".git", "pyproject.toml", "package.json", "Cargo.toml", "go.mod" },
  -- A fixed root, or function(bufnr) -> root; overrides root_markers.
  root_dir = nil,
  -- Server settings, camelCase as in the README (e.g. { embedding = { enabled = false } }).
  -- Sent as initializationOptions and answered for workspace/configuration "sylk".
  settings = {},
  -- Whether the workspace is trusted, sent as initializationOptions.trusted. false: the
  -- server ignores the root's .sylk.toml and [tool.sylk] and does not run git. true,
  -- false, or function(root) -> boolean|nil; nil: Neovim's own answer (0.9+: vim.secure,
  -- asked about the root's .sylk.toml when it has one, as 'exrc' is), else true.
  trusted = nil,
  -- nil: every file buffer; or a list of filetypes.
  filetypes = nil,
  autostart = true,
  on_attach = nil,
  capabilities = nil,
  search = {
    mode = nil, -- nil: the server's search.mode
    limit = 50,
    picker = "auto", -- "auto" (Telescope when installed), "telescope" or "quickfix"
    open = true, -- open the quickfix window after a search
  },
  grep = {
    limit = 1000, -- matching lines asked of the server (1-1000); more are counted, not listed
    open = true, -- open the quickfix window after :SylkGrep
  },
}

M.config = vim.deepcopy(M.defaults)

-- root -> client id: on Neovim 0.7 nothing reuses clients for us; on every version it
-- finds a client that is still starting (Neovim's client lists leave it out)
local clients_by_root = {}
-- root -> Neovim's trust answer, asked once per root (vim.secure may ask the user)
local trust_by_root = {}
-- client id -> token -> { title, message, percentage }
local progress = {}
local warned_missing = false

local function notify(msg, level)
  vim.notify(msg, level or vim.log.levels.INFO, { title = "Sylk" })
end

-- User autocommands for plugins and tests: SylkSearchDone, SylkStatusDone,
-- SylkProgress, SylkProgressEnd (the data is also in require("sylk").last_event).
local function fire(pattern, data)
  M.last_event = { pattern = pattern, data = data }
  compat.user_event(pattern, data)
end

--- The project root of a buffer (see `root_markers`).
function M.root_dir(bufnr)
  bufnr = bufnr or vim.api.nvim_get_current_buf()
  local cfg = M.config
  if type(cfg.root_dir) == "function" then
    local root = cfg.root_dir(bufnr)
    if root then
      return (vim.fn.fnamemodify(root, ":p"):gsub("/$", ""))
    end
  elseif type(cfg.root_dir) == "string" then
    return (vim.fn.fnamemodify(cfg.root_dir, ":p"):gsub("/$", ""))
  end
  local name = vim.api.nvim_buf_get_name(bufnr)
  local start = name ~= "" and compat.dirname(vim.fn.fnamemodify(name, ":p")) or compat.cwd()
  for _, marker in ipairs(cfg.root_markers or {}) do
    local dir = start
    while true do
      if compat.exists(dir .. "/" .. marker) then
        return dir
      end
      local parent = compat.dirname(dir)
      if parent == dir then
        break
      end
      dir = parent
    end
  end
  return compat.cwd()
end

local function is_file_buffer(bufnr)
  if not vim.api.nvim_buf_is_valid(bufnr) or vim.bo[bufnr].buftype ~= "" then
    return false
  end
  local name = vim.api.nvim_buf_get_name(bufnr)
  if name == "" or name:match("^%a[%w+.-]*://") then
    return false
  end
  local fts = M.config.filetypes
  if fts ~= nil and not vim.tbl_contains(fts, vim.bo[bufnr].filetype) then
    return false
  end
  return true
end

local function progress_handler(err, result, ctx, config)
  if result and result.token ~= nil and type(result.value) == "table" then
    local per = progress[ctx.client_id] or {}
    progress[ctx.client_id] = per
    local value, token = result.value, tostring(result.token)
    if value.kind == "begin" then
      per[token] = { title = value.title, message = value.message, percentage = value.percentage }
    elseif value.kind == "report" and per[token] then
      per[token].message = value.message or per[token].message
      per[token].percentage = value.percentage or per[token].percentage
    elseif value.kind == "end" then
      local begun = per[token]
      per[token] = nil
      fire("SylkProgressEnd", { title = begun and begun.title, message = value.message })
    end
    fire("SylkProgress")
  end
  local default = vim.lsp.handlers["$/progress"]
  if default then
    return default(err, result, ctx, config)
  end
end

local function settings_table()
  local s = M.config.settings or {}
  if next(s) == nil then
    return nil
  end
  return s
end

--- Whether the workspace at `root` is trusted (the `trusted` option; nil: Neovim's own
--- answer for the root's .sylk.toml where vim.secure exists, else true).
function M.trusted(root)
  local option = M.config.trusted
  if type(option) == "function" then
    option = option(root)
  end
  if option ~= nil then
    return option == true
  end
  if trust_by_root[root] == nil then
    local file = root .. "/.sylk.toml"
    trust_by_root[root] = not compat.exists(file) or compat.trusts(file) ~= false
  end
  return trust_by_root[root]
end

local function client_config(root)
  local settings = settings_table()
  -- the settings and, beside them, whether the workspace is trusted (never in the
  -- workspace/configuration answer: only the user says it, when the client starts)
  local init_options = vim.deepcopy(settings or {})
  init_options.trusted = M.trusted(root)
  return {
    name = "sylk",
    cmd = M.config.cmd,
    root_dir = root,
    init_options = init_options,
    -- what workspace/configuration answers for the section "sylk"
    settings = { sylk = settings or vim.empty_dict() },
    handlers = { ["$/progress"] = progress_handler },
    capabilities = M.config.capabilities,
    on_attach = M.config.on_attach,
    on_exit = function(code, signal, client_id)
      progress[client_id] = nil
      if clients_by_root[root] == client_id then
        clients_by_root[root] = nil
      end
      if code ~= 0 and signal ~= 15 then
        vim.schedule(function()
          local log = compat.log_path()
          notify(string.format("the server for %s exited with code %d%s", root, code,
            log and (" (its messages are in " .. log .. ")") or ""), vim.log.levels.ERROR)
        end)
      end
    end,
  }
end

local function command_missing()
  local exe = M.config.cmd[1]
  if vim.fn.executable(exe) == 1 then
    return false
  end
  if not warned_missing then
    warned_missing = true
    notify(string.format(
      "the server command %q was not found. Install Sylk (pip install -e <your Sylk clone>) so that `sylk` " ..
      "is on PATH, or pass its full path: require(\"sylk\").setup({ cmd = { \"/path/to/sylk\", \"serve\", \"--stdio\" } })",
      exe), vim.log.levels.ERROR)
  end
  return true
end

--- Start (or reuse) the client of the buffer's root and attach the buffer to it.
--- Returns the client id, or nil.
function M.attach(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  if not is_file_buffer(bufnr) or command_missing() then
    return nil
  end
  local root = M.root_dir(bufnr)
  if vim.lsp.start then
    local id
    vim.api.nvim_buf_call(bufnr, function()
      id = vim.lsp.start(client_config(root), { bufnr = bufnr })
    end)
    if id ~= nil then
      clients_by_root[root] = id
    end
    return id
  end
  -- Neovim 0.7: one client per root, started once
  local id = clients_by_root[root]
  local client = id and vim.lsp.get_client_by_id(id)
  if client == nil or compat.is_stopped(client) then
    id = vim.lsp.start_client(client_config(root))
    if id == nil then
      notify("could not start " .. table.concat(M.config.cmd, " "), vim.log.levels.ERROR)
      return nil
    end
    clients_by_root[root] = id
  end
  vim.lsp.buf_attach_client(bufnr, id)
  return id
end

--- The Sylk client of a buffer (attached to it, else the one of its root), or nil.
--- It may still be starting (client.initialized not yet true).
function M.client(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  local attached = compat.clients("sylk", bufnr)
  if #attached > 0 then
    return attached[1]
  end
  local root = M.root_dir(bufnr)
  local id = clients_by_root[root]
  local started = id and vim.lsp.get_client_by_id(id)
  if started and not compat.is_stopped(started) then
    return started
  end
  for _, client in ipairs(compat.clients("sylk")) do
    if client.config.root_dir == root then
      return client
    end
  end
  return nil
end

local function ready_client(bufnr)
  local client = M.client(bufnr)
  if client == nil then
    notify("no Sylk server for this buffer (open a file of the project, or see :checkhealth vim.lsp)",
      vim.log.levels.WARN)
    return nil
  end
  if not client.initialized then
    notify("the server is still starting; try again in a moment", vim.log.levels.WARN)
    return nil
  end
  return client
end

--- The progress the server reports now ({ title, message, percentage }), or nil.
function M.progress(client_id)
  local latest
  for id, per in pairs(progress) do
    if client_id == nil or id == client_id then
      for _, p in pairs(per) do
        latest = p
      end
    end
  end
  return latest
end

--- For the statusline: "Sylk: indexing workspace 40%" while the server works, else "".
function M.statusline()
  local client = M.client(0)
  local p = M.progress(client and client.id)
  if p == nil then
    return ""
  end
  local what = (p.title or "Sylk"):gsub("^Sylk: ", "")
  what = what:sub(1, 1):lower() .. what:sub(2)
  local pct = p.percentage and string.format(" %d%%", p.percentage) or ""
  return "Sylk: " .. what .. pct
end

--- Run `sylk/search` and show the hits (quickfix list, or Telescope).
--- opts: { mode =, limit =, filters =, picker = "auto"|"telescope"|"quickfix", bufnr = }
function M.search(query, opts)
  opts = opts or {}
  local bufnr = opts.bufnr or vim.api.nvim_get_current_buf()
  query = vim.trim(query or "")
  if query == "" then
    notify("usage: :SylkSearch [-mode=hybrid|lexical|semantic] [-limit=N] {query}", vim.log.levels.WARN)
    return
  end
  local client = ready_client(bufnr)
  if client == nil then
    return
  end
  local params = {
    query = query,
    mode = opts.mode or M.config.search.mode,
    limit = opts.limit or M.config.search.limit,
    filters = opts.filters,
  }
  local picker = opts.picker or M.config.search.picker
  if picker ~= "quickfix" then
    local telescope = require("sylk.telescope")
    if telescope.available() then
      local ok, err = pcall(telescope.pick, client, bufnr, params)
      if ok then
        return
      end
      notify("Telescope picker failed (" .. tostring(err) .. "); using the quickfix list", vim.log.levels.WARN)
    elseif picker == "telescope" then
      notify("Telescope is not installed; using the quickfix list", vim.log.levels.WARN)
    end
  end
  compat.request(client, "sylk/search", params, function(err, result)
    if err then
      notify("search failed: " .. (err.message or vim.inspect(err)), vim.log.levels.ERROR)
      fire("SylkSearchDone", { query = query, error = err.message })
      return
    end
    local items = format.qf_items(result)
    vim.fn.setqflist({}, " ", { title = format.title(query), items = items, context = { sylk = { query = query } } })
    if #items == 0 then
      local why = (result.message and result.message ~= vim.NIL) and (": " .. result.message) or ""
      notify("no results for " .. query .. why)
    else
      if result.message and result.message ~= vim.NIL then
        notify(result.message)
      end
      if M.config.search.open then
        vim.cmd("botright copen")
      end
      vim.api.nvim_echo({ { "Sylk: " .. format.summary(result), "None" } }, false, {})
    end
    fire("SylkSearchDone", { query = query, count = #items })
  end, bufnr)
end

--- Run `sylk/search` in the mode regex (or exact) and fill the quickfix list with one
--- entry per match, at its byte column, and the line's text.
--- opts: { mode = "regex"|"exact", case = "smart"|true|false, whole_word =, limit =, filters =, bufnr = }
function M.grep(pattern, opts)
  opts = opts or {}
  local bufnr = opts.bufnr or vim.api.nvim_get_current_buf()
  if pattern == nil or pattern == "" then
    local _, usage = format.grep_args("")
    notify(usage, vim.log.levels.WARN)
    return
  end
  local client = ready_client(bufnr)
  if client == nil then
    return
  end
  local case = opts.case
  if case == nil then
    case = "smart"
  end
  local params = {
    query = pattern,
    mode = opts.mode or "regex",
    caseSensitive = case,
    wholeWord = opts.whole_word == true,
    limit = math.max(1, math.min(opts.limit or M.config.grep.limit or 1000, 1000)),
    filters = opts.filters,
  }
  local title = "SylkGrep " .. pattern
  compat.request(client, "sylk/search", params, function(err, result)
    if err then
      -- e.g. an invalid regular expression: InvalidParams with the server's message
      notify("SylkGrep " .. pattern .. ": " .. (err.message or vim.inspect(err)), vim.log.levels.ERROR)
      fire("SylkGrepDone", { pattern = pattern, error = err.message or vim.inspect(err) })
      return
    end
    local items = format.grep_items(result)
    vim.fn.setqflist({}, " ", { title = title, items = items, context = { sylk = { grep = pattern } } })
    local notes, warn = format.grep_notes(result)
    if #items == 0 then
      table.insert(notes, 1, "no match for " .. pattern)
    end
    if #notes > 0 then
      notify(table.concat(notes, "\n"), warn and vim.log.levels.WARN or vim.log.levels.INFO)
    end
    if #items > 0 then
      if M.config.grep.open then
        vim.cmd("botright copen")
      end
      vim.api.nvim_echo({ { "Sylk: " .. format.grep_summary(result), "None" } }, false, {})
    end
    fire("SylkGrepDone", { pattern = pattern, count = #items, lines = #(result.hits or {}),
      partial = result.partial, scanned = result.scanned })
  end, bufnr)
end

--- Run `sylk/references` for `name` (default: the word under the cursor) and fill the
--- quickfix list with every occurrence, the current file's first.
--- opts: { code_only =, limit =, bufnr = }
function M.refs(name, opts)
  opts = opts or {}
  local bufnr = opts.bufnr or vim.api.nvim_get_current_buf()
  name = vim.trim(name or "")
  if name == "" then
    name = vim.fn.expand("<cword>")
  end
  if name == "" then
    notify("usage: :SylkRefs[!] [name] (the word under the cursor by default; ! = code only)", vim.log.levels.WARN)
    return
  end
  local client = ready_client(bufnr)
  if client == nil then
    return
  end
  local params = { name = name, codeOnly = opts.code_only == true, limit = opts.limit }
  local file = vim.api.nvim_buf_get_name(bufnr)
  if file ~= "" then
    params.textDocument = { uri = vim.uri_from_fname(file) }
  end
  compat.request(client, "sylk/references", params, function(err, result)
    if err then
      notify("references failed: " .. (err.message or vim.inspect(err)), vim.log.levels.ERROR)
      fire("SylkRefsDone", { name = name, error = err.message })
      return
    end
    local items = format.ref_items(result)
    vim.fn.setqflist({}, " ", { title = "Sylk refs: " .. name, items = items, context = { sylk = { refs = name } } })
    if #items == 0 then
      notify("no references to " .. name)
    else
      if result.truncated then
        notify(string.format("the first %d of %d references to %s (references.limit)", #items, result.total, name))
      end
      if M.config.search.open then
        vim.cmd("botright copen")
      end
    end
    fire("SylkRefsDone", { name = name, count = #items })
  end, bufnr)
end

--- Fill the buffer of a sylk:// URI (a virtual document or a commit: hits with no file)
--- with its text from the server (`sylk/documentText`): a read-only scratch buffer.
--- Asks each running Sylk client (one per root) until one has it.
function M.read_virtual(bufnr, uri)
  local answer, why
  for _, client in ipairs(compat.clients("sylk")) do
    if client.initialized then
      local r, err = compat.request_sync(client, "sylk/documentText", { uri = uri }, 10000, bufnr)
      if r and r.result and r.result ~= vim.NIL then
        answer = r.result
        break
      end
      why = (r and r.err and r.err.message) or err or why
    end
  end
  local bo = vim.bo[bufnr]
  bo.buftype = "nofile"
  bo.bufhidden = "hide"
  bo.swapfile = false
  bo.modifiable = true
  vim.api.nvim_buf_set_lines(bufnr, 0, -1, false, answer and format.text_lines(answer.text) or {})
  bo.modifiable = false
  bo.readonly = true
  bo.modified = false
  if answer == nil then
    notify("cannot open " .. uri .. ": " .. (why or "no Sylk server is running"), vim.log.levels.ERROR)
    return false
  end
  if type(answer.languageId) == "string" then
    bo.filetype = answer.languageId
  end
  return true
end

--- Ask the server for the index state; `callback(status)` or print it.
function M.status(callback, bufnr)
  local client = ready_client(bufnr)
  if client == nil then
    return
  end
  compat.request(client, "sylk/status", vim.empty_dict(), function(err, status)
    if err then
      notify("status failed: " .. (err.message or vim.inspect(err)), vim.log.levels.ERROR)
      return
    end
    if callback then
      callback(status)
    else
      local lines = format.status_lines(status)
      local p = M.progress(client.id)
      if p then
        table.insert(lines, 1, string.format("%s: %s", p.title or "Sylk", p.message or "..."))
      end
      notify(table.concat(lines, "\n"))
    end
    fire("SylkStatusDone", status)
  end, bufnr)
end

--- Bring the index up to date (`sylk.reindex`); progress shows in M.statusline().
function M.reindex(bufnr)
  local client = ready_client(bufnr)
  if client == nil then
    return
  end
  compat.request(client, "workspace/executeCommand", { command = "sylk.reindex", arguments = {} }, function(err)
    if err then
      notify("reindex failed: " .. (err.message or vim.inspect(err)), vim.log.levels.ERROR)
      return
    end
    notify("re-indexing " .. (client.config.root_dir or "the workspace"))
  end, bufnr)
end

local function define_commands()
  vim.api.nvim_create_user_command("SylkSearch", function(args)
    local query, opts = format.parse_args(args.args)
    if query == nil then
      notify(opts, vim.log.levels.ERROR)
      return
    end
    if args.bang then
      opts.picker = "quickfix"
    end
    if query == "" then
      vim.ui.input({ prompt = "Sylk search: " }, function(input)
        if input and vim.trim(input) ~= "" then
          M.search(input, opts)
        end
      end)
      return
    end
    M.search(query, opts)
  end, { nargs = "*", bang = true, desc = "Sylk: search the workspace (! = quickfix list even with Telescope)" })
  vim.api.nvim_create_user_command("SylkGrep", function(args)
    local pattern, opts = format.grep_args(args.args)
    if pattern == nil then
      notify(opts, vim.log.levels.ERROR)
      return
    end
    M.grep(pattern, opts)
  end, { nargs = "+", desc = "Sylk: every line matching a regex (-F: exact text; -i/-s: case; -w: whole word)" })
  vim.api.nvim_create_user_command("SylkRefs", function(args)
    M.refs(args.args, { code_only = args.bang })
  end, { nargs = "?", bang = true, desc = "Sylk: every occurrence of a name in the quickfix list (! = code only)" })
  vim.api.nvim_create_user_command("SylkStatus", function()
    M.status()
  end, { desc = "Sylk: show the index status" })
  vim.api.nvim_create_user_command("SylkReindex", function()
    M.reindex()
  end, { desc = "Sylk: bring the index up to date" })
end

local islist = vim.islist or vim.tbl_islist

function M.setup(opts)
  opts = opts or {}
  M.config = vim.tbl_deep_extend("force", vim.deepcopy(M.defaults), opts)
  -- lists (cmd, root_markers, filetypes) and the server settings are taken as given:
  -- a deep merge would mix a shorter list with the default's tail
  for key, value in pairs(opts) do
    if key == "settings" or (type(value) == "table" and islist(value)) then
      M.config[key] = value
    end
  end
  compat.validate("trusted", M.config.trusted, { "boolean", "function" }, true)
  warned_missing = false
  trust_by_root = {}
  define_commands()
  local group = vim.api.nvim_create_augroup("sylk", { clear = true })
  -- hits without a file (virtual documents, commits) open as sylk:// buffers
  vim.api.nvim_create_autocmd("BufReadCmd", {
    group = group,
    pattern = "sylk://*",
    callback = function(ev)
      M.read_virtual(ev.buf, ev.match)
    end,
  })
  if M.config.autostart then
    vim.api.nvim_create_autocmd({ "BufReadPost", "BufNewFile" }, {
      group = group,
      callback = function(ev)
        M.attach(ev.buf)
      end,
    })
    for _, bufnr in ipairs(vim.api.nvim_list_bufs()) do
      if vim.api.nvim_buf_is_loaded(bufnr) then
        M.attach(bufnr)
      end
    end
  end
end

return M
