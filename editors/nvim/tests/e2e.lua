-- End-to-end check of the Neovim plugin, driven by tests/test_nvim.py:
--   SYLK_NVIM_PLUGIN=editors/nvim SYLK_NVIM_OUT=out.json \
--     nvim --headless --clean -u editors/nvim/tests/e2e.lua app/http.py   (from a copy of fixtures/workspace)
-- Starts the server through the plugin, waits for the index, runs :SylkSearch,
-- workspace/symbol, opens a virtual document's hit, :SylkStatus and :SylkReindex,
-- and writes what a user would see to the JSON file; the pytest asserts on it.
local plugin = assert(os.getenv("SYLK_NVIM_PLUGIN"))
local harness = dofile(plugin .. "/tests/report.lua")
local finish, wait = harness.finish, harness.wait
vim.opt.runtimepath:prepend(plugin)
vim.opt.swapfile = false
vim.opt.shadafile = "NONE"

local notes = {}
vim.notify = function(msg, level)
  table.insert(notes, { msg = tostring(msg), level = level or vim.log.levels.INFO })
end

-- what the server shows (window/showMessage), e.g. complaints about settings
local server_messages = {}
vim.lsp.handlers["window/showMessage"] = function(_, result)
  table.insert(server_messages, { type = result.type, message = result.message })
  return vim.NIL
end

-- the root is pinned to the workspace (the current directory): a root marker above
-- the test's copy (a stray /tmp/package.json) must not change what is tested
require("sylk").setup({ root_dir = (vim.uv or vim.loop).cwd(), settings = { embedding = { enabled = false } } })

local compat = require("sylk.compat")

local function qf_entries()
  local qf = vim.fn.getqflist({ title = 1, items = 1 })
  local entries = {}
  for _, it in ipairs(qf.items) do
    table.insert(entries, { file = vim.api.nvim_buf_get_name(it.bufnr), lnum = it.lnum, col = it.col, text = it.text })
  end
  return qf.title, entries
end

local function run()
  local out = {
    notes = notes,
    server_messages = server_messages,
  }
  local ok, err = xpcall(function()
    local sylk = require("sylk")
    local buf = vim.api.nvim_get_current_buf()
    out.file = vim.api.nvim_buf_get_name(buf)
    out.uses_lsp_start = vim.lsp.start ~= nil
    local client
    wait("the Sylk client to initialize", function()
      client = sylk.client(buf)
      return client ~= nil and client.initialized
    end)
    out.root = client.config.root_dir
    local status
    wait("the index (sylk/status ready)", function()
      local r = compat.request_sync(client, "sylk/status", vim.empty_dict(), harness.ms, buf)
      status = r and r.result
      return status ~= nil and status.ready == true
    end)
    out.status = status

    -- :SylkSearch fills the quickfix list
    local searched = false
    vim.api.nvim_create_autocmd("User", { pattern = "SylkSearchDone", callback = function() searched = true end })
    vim.cmd("SylkSearch -mode=lexical retry policy")
    wait(":SylkSearch", function() return searched end)
    out.search_title, out.search = qf_entries()
    out.quickfix_open = vim.bo.buftype == "quickfix"
    vim.cmd("wincmd p")

    -- :SylkRefs fills the quickfix list with every occurrence of a name (from the index),
    -- the asking file's first; with ! only those in code
    local refd = false
    vim.api.nvim_create_autocmd("User", { pattern = "SylkRefsDone", callback = function() refd = true end })
    vim.cmd("SylkRefs max_attempts")
    wait(":SylkRefs", function() return refd end)
    out.refs_title, out.refs = qf_entries()
    vim.cmd("wincmd p")
    refd = false
    vim.cmd("SylkRefs! user_id")
    wait(":SylkRefs!", function() return refd end)
    out.code_refs_title, out.code_refs = qf_entries()
    vim.cmd("wincmd p")

    -- workspace/symbol: the raw locations, and the standard vim.lsp.buf.workspace_symbol()
    local r = compat.request_sync(client, "workspace/symbol", { query = "hrp" }, harness.ms, buf)
    out.symbols = r and r.result
    vim.lsp.buf.workspace_symbol("hrp")
    wait("vim.lsp.buf.workspace_symbol()", function()
      return vim.fn.getqflist({ title = 1 }).title ~= out.code_refs_title
    end)
    out.symbol_title, out.symbol_list = qf_entries()
    vim.cmd("wincmd p")

    -- a virtual document's hit (sylk://document/<id>) opens a read-only scratch buffer
    -- that holds the document's text, at the hit's line
    local indexed = compat.request_sync(client, "sylk/indexDocument", { id = "notes/retry", type = "note",
      title = "Retry budget", text = "We retry five times at most.\n\nThe retry budget is shared by every client." },
      harness.ms, buf)
    out.indexed_document = indexed and indexed.result and indexed.result.id
    searched = false
    vim.cmd("SylkSearch -mode=lexical type:note retry budget")
    wait(":SylkSearch for the note", function() return searched end)
    vim.cmd("wincmd p")
    local virtual_entry
    for i, it in ipairs(vim.fn.getqflist()) do
      if vim.api.nvim_buf_get_name(it.bufnr):match("^sylk://") then
        virtual_entry = i
        break
      end
    end
    out.virtual_entry = virtual_entry
    if virtual_entry ~= nil then
      vim.cmd("cc " .. virtual_entry)
      local vbuf = vim.api.nvim_get_current_buf()
      out.virtual = {
        name = vim.api.nvim_buf_get_name(vbuf),
        lines = vim.api.nvim_buf_get_lines(vbuf, 0, -1, false),
        buftype = vim.bo[vbuf].buftype,
        modifiable = vim.bo[vbuf].modifiable,
        readonly = vim.bo[vbuf].readonly,
        filetype = vim.bo[vbuf].filetype,
        line = vim.api.nvim_win_get_cursor(0)[1],
        lnum = vim.fn.getqflist()[virtual_entry].lnum,
      }
      vim.cmd("buffer " .. buf)
    end

    -- a commit's hit (no range; sylk://commit/<sha>) opens its message and files
    wait("the commit messages to be indexed", function()
      local r = compat.request_sync(client, "sylk/search", { query = "type:git_commit initial", mode = "lexical" },
        harness.ms, buf)
      return r and r.result and #r.result.hits > 0
    end)
    searched = false
    vim.cmd("SylkSearch -mode=lexical type:git_commit initial import")
    wait(":SylkSearch for the commit", function() return searched end)
    vim.cmd("wincmd p")
    local commit_entries = vim.fn.getqflist()
    out.commit_entry = commit_entries[1] and {
      name = vim.api.nvim_buf_get_name(commit_entries[1].bufnr), lnum = commit_entries[1].lnum,
      text = commit_entries[1].text }
    if commit_entries[1] ~= nil then
      vim.cmd("cc 1")
      local cbuf = vim.api.nvim_get_current_buf()
      out.commit_lines = vim.api.nvim_buf_get_lines(cbuf, 0, -1, false)
      out.commit_modifiable = vim.bo[cbuf].modifiable
      vim.cmd("buffer " .. buf)
    end

    -- gone again, so the index is the 16 files for what follows
    compat.request_sync(client, "sylk/removeDocument", { id = "notes/retry" }, harness.ms, buf)

    -- a second file of the same root reuses the client
    vim.cmd("edit services/geo/point.go")
    local buf2 = vim.api.nvim_get_current_buf()
    wait("the second buffer to attach", function() return #compat.clients("sylk", buf2) > 0 end)
    out.second_client = compat.clients("sylk", buf2)[1].id
    out.first_client = client.id
    out.sylk_clients = #compat.clients("sylk")

    -- :SylkStatus prints the index state
    local stated = false
    vim.api.nvim_create_autocmd("User", { pattern = "SylkStatusDone", callback = function() stated = true end })
    vim.cmd("SylkStatus")
    wait(":SylkStatus", function() return stated end)

    -- :SylkReindex runs a re-index with progress
    local reindexed = false
    vim.api.nvim_create_autocmd("User", { pattern = "SylkProgressEnd", callback = function()
      local ev = sylk.last_event
      if ev and ev.data and ev.data.title == "Sylk: Re-indexing workspace" then
        reindexed = true
        out.reindex_end = ev.data.message
      end
    end })
    vim.cmd("SylkReindex")
    wait(":SylkReindex progress end", function() return reindexed end)

    -- with Telescope installed, :SylkSearch opens a picker fed by sylk/search. A stand-in
    -- with Telescope's API (pickers.new{...}:find(), finders.new_dynamic, sorters.empty,
    -- config.values.qflist_previewer) records what the picker would list.
    local picked = {}
    package.preload["telescope"] = function() return {} end
    package.preload["telescope.sorters"] = function() return { empty = function() return "empty-sorter" end } end
    package.preload["telescope.config"] = function()
      return { values = { qflist_previewer = function() return "qflist-previewer" end } }
    end
    package.preload["telescope.finders"] = function() return { new_dynamic = function(t) return t end } end
    package.preload["telescope.pickers"] = function()
      return { new = function(_, spec)
        return { find = function()
          picked.title, picked.sorter, picked.previewer = spec.prompt_title, spec.sorter, spec.previewer
          picked.entries = {}
          for _, hit in ipairs(spec.finder.fn(spec.default_text)) do
            local e = spec.finder.entry_maker(hit)
            table.insert(picked.entries, { display = e.display, filename = e.filename, lnum = e.lnum, col = e.col })
          end
        end }
      end }
    end
    -- the state after all that (the semantic side has been set up by now)
    local final = compat.request_sync(client, "sylk/status", vim.empty_dict(), harness.ms, buf)
    out.final_status = final and final.result

    vim.fn.setqflist({}, " ", { title = "before telescope" })
    vim.cmd("SylkSearch -mode=lexical retry policy")
    out.telescope = picked
    out.qf_title_after_telescope = vim.fn.getqflist({ title = 1 }).title
  end, debug.traceback)
  finish(out, ok, err)
end

vim.api.nvim_create_autocmd("VimEnter", { once = true, callback = function() vim.schedule(run) end })
