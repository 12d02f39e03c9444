-- Every sample of the protocol (editors/protocol-samples.json, made from the server's
-- schema) through the plugin's formatting: each hit to a quickfix item, each result to
-- its items and summary, each status to :SylkStatus lines. Driven by tests/test_nvim.py;
-- no server runs.
local plugin = assert(os.getenv("SYLK_NVIM_PLUGIN"))
local finish = dofile(plugin .. "/tests/report.lua")
local samples_path = assert(os.getenv("SYLK_NVIM_SAMPLES"))
vim.opt.runtimepath:prepend(plugin)
vim.opt.swapfile = false
vim.opt.shadafile = "NONE"

local format = require("sylk.format")
local samples = vim.fn.json_decode(table.concat(vim.fn.readfile(samples_path), "\n"))
local out = { hits = {}, results = {}, statuses = {}, failures = {} }

local function try(kind, name, fn)
  local ok, value = xpcall(fn, debug.traceback)
  if not ok then
    table.insert(out.failures, kind .. " '" .. name .. "': " .. tostring(value))
  end
  return ok and value or nil
end

local ok, err = xpcall(function()
  for _, s in ipairs(samples.hits) do
    local item = try("hit", s.name, function() return format.qf_item(s.hit) end)
    if item then
      table.insert(out.hits, { name = s.name, filename = item.filename, lnum = item.lnum, text = item.text })
    end
  end
  for _, s in ipairs(samples.results) do
    local items = try("result", s.name, function() return format.qf_items(s.result) end)
    local summary = try("result summary", s.name, function() return format.summary(s.result) end)
    table.insert(out.results, { name = s.name, items = items and #items or vim.NIL, summary = summary or vim.NIL })
  end
  for _, s in ipairs(samples.statuses) do
    local lines = try("status", s.name, function() return format.status_lines(s.status) end)
    table.insert(out.statuses, { name = s.name, lines = lines or vim.NIL })
  end
end, debug.traceback)
finish(out, ok, err)
