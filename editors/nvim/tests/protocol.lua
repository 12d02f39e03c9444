-- Every sample of the protocol (editors/protocol-samples.json, made from the server's
-- schema) through the plugin's formatting: each hit to a quickfix item, each result to
-- its items and summary, each matching line (modes exact and regex) to :SylkGrep's
-- quickfix items, each line result to its items, summary and notes, each status to
-- :SylkStatus lines. Driven by tests/test_nvim.py;
-- no server runs.
local plugin = assert(os.getenv("SYLK_NVIM_PLUGIN"))
local harness = dofile(plugin .. "/tests/report.lua")
local finish = harness.finish
local samples_path = assert(os.getenv("SYLK_NVIM_SAMPLES"))
vim.opt.runtimepath:prepend(plugin)
vim.opt.swapfile = false
vim.opt.shadafile = "NONE"

local format = require("sylk.format")
local samples = vim.fn.json_decode(table.concat(vim.fn.readfile(samples_path), "\n"))
local out = { hits = {}, results = {}, line_hits = {}, line_results = {}, statuses = {}, failures = {} }

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
  for _, s in ipairs(samples.lineHits) do
    local items = try("line hit", s.name, function() return format.line_items(s.hit) end)
    local entries = {}
    for _, it in ipairs(items or {}) do
      table.insert(entries,
        { filename = it.filename, lnum = it.lnum, col = it.col, end_col = it.end_col, text = it.text })
    end
    table.insert(out.line_hits, { name = s.name, items = entries })
  end
  for _, s in ipairs(samples.lineResults) do
    local items = try("line result", s.name, function() return format.qf_items(s.result) end)
    local summary = try("line result summary", s.name, function() return format.summary(s.result) end)
    local notes = try("line result notes", s.name, function() return format.grep_notes(s.result) end)
    table.insert(out.line_results, { name = s.name, items = items and #items or vim.NIL, summary = summary or vim.NIL,
      notes = notes or vim.NIL })
  end
  for _, s in ipairs(samples.statuses) do
    local lines = try("status", s.name, function() return format.status_lines(s.status) end)
    table.insert(out.statuses, { name = s.name, lines = lines or vim.NIL })
  end
end, debug.traceback)
finish(out, ok, err)
