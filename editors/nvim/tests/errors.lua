-- What a user sees when things are wrong: a `sylk` command that does not exist, bad
-- :SylkSearch options, a command before the server has answered `initialize` (a
-- stand-in server that never answers: `cat`), and a server that dies at once (with a
-- line on stderr, which Neovim keeps in its LSP log). Driven by tests/test_nvim.py.
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

  -- a server that never answers: every loaded buffer gets its client, still starting
  local file = os.getenv("SYLK_NVIM_FILE")
  local silent_root = vim.fn.fnamemodify(file, ":h")
  require("sylk").setup({ cmd = { "sh", "-c", "exec cat >/dev/null" }, root_dir = silent_root })
  vim.cmd("buffer " .. vim.fn.bufnr(file))
  local starting = require("sylk").client(0)
  out.starting = starting and { root = starting.config.root_dir, initialized = starting.initialized == true } or vim.NIL
  local seen = #notes
  vim.cmd("SylkSearch retry")
  vim.cmd("SylkStatus")
  out.starting_notes = vim.list_slice(notes, seen + 1)

  -- a server that exits at once with code 3
  local dead_root = vim.fn.fnamemodify(os.getenv("SYLK_NVIM_FILE2"), ":h")
  require("sylk").setup({ cmd = { "sh", "-c", "echo sylk-test-boom >&2; exit 3" }, root_dir = dead_root })
  local exited = "exited with code 3"
  wait("the notice that the server exited", function()
    for _, n in ipairs(notes) do
      if n.msg:find(exited, 1, true) then
        return true
      end
    end
    return false
  end)
  out.dead_root = dead_root
  -- the server's last words reach the log (read and written apart from its exit)
  local log = require("sylk.compat").log_path()
  wait("the server's stderr in the LSP log " .. tostring(log), function()
    local f = log and io.open(log)
    local text = f and f:read("*a") or ""
    if f then
      f:close()
    end
    return text:find("sylk-test-boom", 1, true) ~= nil
  end)
end, debug.traceback)
finish(out, ok, err)
