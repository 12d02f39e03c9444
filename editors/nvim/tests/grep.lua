-- End-to-end check of :SylkGrep, driven by tests/test_nvim.py:
--   SYLK_NVIM_PLUGIN=editors/nvim SYLK_NVIM_OUT=out.json SYLK_NVIM_GREPS=$'-F (self, \n[A-Z]+_\\w+ = ' \
--     nvim --headless --clean -u editors/nvim/tests/grep.lua app/http.py   (from a copy of fixtures/workspace)
-- Starts the server through the plugin, waits for the index, runs :SylkGrep with each
-- line of $SYLK_NVIM_GREPS as its arguments, and writes the quickfix list and what the
-- user was told after each to the JSON file; the pytest asserts on it.
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

-- the root is pinned to the workspace (see e2e.lua)
require("sylk").setup({ root_dir = (vim.uv or vim.loop).cwd(), settings = { embedding = { enabled = false } } })

local compat = require("sylk.compat")

local function run()
  local out = { greps = {} }
  local ok, err = xpcall(function()
    local sylk = require("sylk")
    local buf = vim.api.nvim_get_current_buf()
    local client
    wait("the Sylk client to initialize", function()
      client = sylk.client(buf)
      return client ~= nil and client.initialized
    end)
    local status
    wait("the index (sylk/status ready, not indexing)", function()
      local r = compat.request_sync(client, "sylk/status", vim.empty_dict(), harness.ms, buf)
      status = r and r.result
      return status ~= nil and status.ready == true and status.indexing == false
    end)
    out.status = status

    local grepped = false
    vim.api.nvim_create_autocmd("User", { pattern = "SylkGrepDone", callback = function() grepped = true end })
    for _, args in ipairs(vim.split(assert(os.getenv("SYLK_NVIM_GREPS")), "\n", { plain = true })) do
      grepped = false
      local seen = #notes
      vim.fn.setqflist({}, " ", { title = "before grep" })
      vim.cmd("SylkGrep " .. args)
      -- a bad flag is refused at once, without a request
      if #notes == seen then
        wait(":SylkGrep " .. args, function() return grepped end)
      end
      local qf = vim.fn.getqflist({ title = 1, items = 1 })
      local entries = {}
      for _, it in ipairs(qf.items) do
        table.insert(entries, { file = vim.api.nvim_buf_get_name(it.bufnr), lnum = it.lnum, col = it.col,
          end_col = it.end_col, text = it.text })
      end
      local said = {}
      for i = seen + 1, #notes do
        table.insert(said, notes[i])
      end
      table.insert(out.greps, { args = args, title = qf.title, entries = entries, notes = said,
        quickfix_open = vim.bo.buftype == "quickfix", done = grepped and sylk.last_event.data or vim.NIL })
      if vim.bo.buftype == "quickfix" then
        vim.cmd("wincmd p")
      end
    end
  end, debug.traceback)
  finish(out, ok, err)
end

vim.api.nvim_create_autocmd("VimEnter", { once = true, callback = function() vim.schedule(run) end })
