-- What a user sees when things are wrong (no server running): a `sylk` command that
-- does not exist, and bad :SylkSearch options. Driven by tests/test_nvim.py.
local plugin = assert(os.getenv("SYLK_NVIM_PLUGIN"))
local finish = dofile(plugin .. "/tests/report.lua")
vim.opt.runtimepath:prepend(plugin)
vim.opt.swapfile = false
vim.opt.shadafile = "NONE"

local notes = {}
vim.notify = function(msg, level)
  table.insert(notes, { msg = tostring(msg), level = level or vim.log.levels.INFO })
end

local out = { notes = notes }
local ok, err = xpcall(function()
  require("sylk").setup({ cmd = { "/nonexistent/bin/sylk", "serve", "--stdio" }, root_markers = { "marker-x" } })
  out.root_markers = require("sylk").config.root_markers
  vim.cmd("edit " .. vim.fn.fnameescape(os.getenv("SYLK_NVIM_FILE")))
  vim.cmd("edit " .. vim.fn.fnameescape(os.getenv("SYLK_NVIM_FILE2")))
  out.clients = #require("sylk.compat").clients("sylk")
  vim.cmd("SylkSearch -mode=psychic retry")
  vim.cmd("SylkSearch -colour=blue retry")
  vim.cmd("SylkSearch retry")
end, debug.traceback)
finish(out, ok, err)
