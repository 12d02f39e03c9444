-- The `trusted` option, driven by tests/test_nvim.py. Neovim's trust database
-- (vim.secure, 0.9+) is a stand-in that allows $SYLK_NVIM_ALLOWED/.sylk.toml and denies
-- every other file, so the 0.9 behaviour is tested on any Neovim:
--   1. what require("sylk").trusted(root) answers for each kind of option, and when it
--      asks vim.secure (no server runs);
--   2. two roots, each with a .sylk.toml that excludes native/**: the denied one's
--      server gets trusted = false (the file ignored, the status says so), the allowed
--      one's trusted = true (the file applies).
local plugin = assert(os.getenv("SYLK_NVIM_PLUGIN"))
local harness = dofile(plugin .. "/tests/report.lua")
local finish, wait = harness.finish, harness.wait
vim.opt.runtimepath:prepend(plugin)
vim.opt.swapfile = false
vim.opt.shadafile = "NONE"

local denied = assert(os.getenv("SYLK_NVIM_DENIED"))
local allowed = assert(os.getenv("SYLK_NVIM_ALLOWED"))
local plain = assert(os.getenv("SYLK_NVIM_PLAIN"))

local notes = {}
vim.notify = function(msg, level)
  table.insert(notes, { msg = tostring(msg), level = level or vim.log.levels.INFO })
end
local server_messages = {}
vim.lsp.handlers["window/showMessage"] = function(_, result)
  table.insert(server_messages, { type = result.type, message = result.message })
  return vim.NIL
end

local asked = {}
local stand_in = {
  read = function(path)
    table.insert(asked, path)
    if path == allowed .. "/.sylk.toml" then
      return "exclude = [\"native/**\"]\n"
    end
    return nil -- denied (or ignored): vim.secure.read gives nothing
  end,
}

local sylk = require("sylk")
local compat = require("sylk.compat")
local out = { notes = notes, server_messages = server_messages }

-- 1. the answers, without a server
local ok, err = xpcall(function()
  vim.secure = stand_in
  local answers = {}
  sylk.setup({ autostart = false })
  answers.default = { denied = sylk.trusted(denied), allowed = sylk.trusted(allowed), plain = sylk.trusted(plain),
    denied_again = sylk.trusted(denied) }
  answers.default_asked = vim.deepcopy(asked)
  asked = {}
  sylk.setup({ autostart = false, trusted = true })
  answers.option_true = sylk.trusted(denied)
  sylk.setup({ autostart = false, trusted = false })
  answers.option_false = sylk.trusted(allowed)
  sylk.setup({ autostart = false, trusted = function(root) if root == plain then return false end end })
  answers.fn = { plain = sylk.trusted(plain), denied = sylk.trusted(denied), allowed = sylk.trusted(allowed) }
  answers.option_asked = vim.deepcopy(asked)
  asked = {}
  vim.secure = false -- as Neovim 0.7 and 0.8, which have no vim.secure
  sylk.setup({ autostart = false })
  answers.no_secure = sylk.trusted(denied)
  local valid, why = pcall(sylk.setup, { autostart = false, trusted = "yes" })
  answers.invalid = { ok = valid, error = tostring(why) }
  out.answers = answers
  vim.secure = stand_in
end, debug.traceback)
if not ok then
  finish(out, ok, err)
end

-- 2. two roots through real servers: each file's root is its copy's .sylk.toml
sylk.setup({ root_markers = { ".sylk.toml" }, settings = { embedding = { enabled = false } } })

local function served(file)
  vim.cmd("edit " .. vim.fn.fnameescape(file))
  local buf = vim.api.nvim_get_current_buf()
  local client
  wait("the Sylk client of " .. file, function()
    client = sylk.client(buf)
    return client ~= nil and client.initialized
  end)
  local status
  wait("the index of " .. file, function()
    local r = compat.request_sync(client, "sylk/status", vim.empty_dict(), harness.ms, buf)
    status = r and r.result
    return status ~= nil and status.ready == true and status.indexing == false
  end)
  return { root = client.config.root_dir, init_options = client.config.init_options, status = status, buf = buf }
end

local function run()
  ok, err = xpcall(function()
    asked = {}
    local untrusted = served(denied .. "/app/http.py")
    served(denied .. "/services/geo/point.go") -- a second buffer of the same root: not asked again
    local trusted = served(allowed .. "/app/http.py")
    out.asked = asked
    out.clients = #compat.clients("sylk")
    for name, s in pairs({ untrusted = untrusted, trusted = trusted }) do
      local languages = {}
      for _, l in ipairs(s.status.languages or {}) do
        languages[l.language] = l.files
      end
      out[name] = { root = s.root, init_options = s.init_options, trusted = s.status.trusted,
        trustMessage = s.status.trustMessage, files = s.status.files, languages = languages }
    end
    -- :SylkStatus in the untrusted root says so
    vim.api.nvim_set_current_buf(untrusted.buf)
    local done = false
    vim.api.nvim_create_autocmd("User", { pattern = "SylkStatusDone", once = true, callback = function() done = true end })
    vim.cmd("SylkStatus")
    wait(":SylkStatus", function() return done end)
  end, debug.traceback)
  finish(out, ok, err)
end

vim.api.nvim_create_autocmd("VimEnter", { once = true, callback = function() vim.schedule(run) end })
