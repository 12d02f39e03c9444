-- :SylkSearch in a Telescope picker (when telescope.nvim is installed): the query
-- runs again as you edit the prompt; the server's ranking is kept.
local compat = require("sylk.compat")
local format = require("sylk.format")

local M = {}

function M.available()
  return (pcall(require, "telescope"))
end

local function entry_maker(hit)
  local item = format.qf_item(hit)
  -- a commit that touched no file has path null (vim.NIL); its filename is its sylk:// URI
  local path = (hit.path ~= nil and hit.path ~= vim.NIL) and hit.path or vim.fn.fnamemodify(item.filename, ":.")
  local display = string.format("%s:%d  %s", path, item.lnum, item.text)
  return {
    value = hit,
    display = display,
    ordinal = display,
    filename = item.filename,
    lnum = item.lnum,
    col = item.col,
    text = item.text,
  }
end

function M.pick(client, bufnr, params)
  local pickers = require("telescope.pickers")
  local finders = require("telescope.finders")
  local sorters = require("telescope.sorters")
  local conf = require("telescope.config").values
  local base = vim.deepcopy(params)
  local finder = finders.new_dynamic({
    entry_maker = entry_maker,
    fn = function(prompt)
      if prompt == nil or vim.trim(prompt) == "" then
        return {}
      end
      local p = vim.deepcopy(base)
      p.query = prompt
      local response = compat.request_sync(client, "sylk/search", p, 10000, bufnr)
      if response == nil or response.err or response.result == nil then
        return {}
      end
      return response.result.hits or {}
    end,
  })
  pickers.new({}, {
    prompt_title = "Sylk Search" .. (params.mode and (" (" .. params.mode .. ")") or ""),
    default_text = params.query,
    finder = finder,
    sorter = sorters.empty(),
    previewer = conf.qflist_previewer({}),
  }):find()
end

return M
