-- Pure conversions: search hits, references and matching lines to quickfix items, the
-- index status to lines, the arguments of :SylkSearch and :SylkGrep, and
-- sylk/documentText's answer to buffer lines. No LSP calls here.
local compat = require("sylk.compat")

local M = {}

local function trim(s)
  return (s:gsub("^%s+", ""):gsub("%s+$", ""))
end

local function present(v)
  return v ~= nil and v ~= vim.NIL
end

local function split_lines(s)
  local lines = {}
  for line in (s .. "\n"):gmatch("(.-)\n") do
    table.insert(lines, line)
  end
  return lines
end

--- "HttpRetryPolicy.should_retry", or "" for a hit that is not a symbol.
function M.hit_name(hit)
  local symbol = hit.symbol
  if symbol == nil or symbol == vim.NIL or symbol == "" then
    return ""
  end
  local container = hit.containerName
  if hit.type == "git_commit" then
    return symbol -- the short sha (its containerName is the author)
  end
  if container ~= nil and container ~= vim.NIL and container ~= "" then
    return container .. "." .. symbol
  end
  return symbol
end

--- The line of a hit worth showing and jumping to: the first highlighted line of its
--- snippet, else the first non-blank one. Returns (0-based line, byte col, text).
function M.hit_line(hit)
  local lines = split_lines(hit.snippet or "")
  -- a commit's hit has no range (vim.NIL): its text starts at the top
  local start = present(hit.range) and hit.range.start.line or 0
  local first = present(hit.snippetRange) and hit.snippetRange.start.line or start
  for _, h in ipairs(hit.highlights or {}) do
    local index = h.start.line - first + 1
    local text = lines[index]
    if text ~= nil and trim(text) ~= "" then
      return h.start.line, compat.byte_col(text, h.start.character), text
    end
  end
  for index, text in ipairs(lines) do
    if trim(text) ~= "" then
      return first + index - 1, #text:match("^%s*"), text
    end
  end
  return start, 0, ""
end

--- Modes exact and regex answer with matching lines (LineSearchResult), not ranked hits.
function M.is_line_result(result)
  return result.mode == "exact" or result.mode == "regex"
end

--- One quickfix item per hit: the file, the matching line, and
--- "[kind] Container.symbol: the line's text" (a matching line of the modes exact and
--- regex: its first match and its text).
function M.qf_item(hit)
  if hit.matches ~= nil and hit.snippet == nil then
    return M.line_items(hit)[1]
  end
  local line, col, text = M.hit_line(hit)
  local name = M.hit_name(hit)
  local kind = hit.kind
  local label = trim(text):gsub("%s+", " ")
  if name ~= "" then
    local prefix = (kind ~= nil and kind ~= vim.NIL and kind ~= "") and ("[" .. kind .. "] ") or ""
    label = prefix .. name .. ": " .. label
  end
  if hit.stale == true then -- the file changed and the chunk is not in it any more
    label = "[stale] " .. label
  end
  return {
    -- a file's path, or the sylk:// URI itself (a virtual document, a commit), which
    -- init.lua's BufReadCmd fills from the server
    filename = vim.uri_to_fname(hit.uri),
    lnum = line + 1,
    col = col + 1,
    text = label,
    user_data = hit,
  }
end

function M.qf_items(result)
  if M.is_line_result(result) then
    return M.grep_items(result)
  end
  local items = {}
  for _, hit in ipairs(result.hits or {}) do
    table.insert(items, M.qf_item(hit))
  end
  return items
end

--- One quickfix item per occurrence of `sylk/references`: the file, the line, the byte
--- column of the name (the server's columns are UTF-16), and "Symbol: the line's text"
--- ("[def]" marks a definition's own name).
function M.ref_item(ref)
  local text = present(ref.text) and ref.text or ""
  local col = compat.byte_col(text, ref.range.start.character)
  local label = trim(text):gsub("%s+", " ")
  if present(ref.symbol) and ref.symbol ~= "" then
    label = ref.symbol .. ": " .. label
  end
  if ref.declaration == true then
    label = "[def] " .. label
  end
  return {
    filename = vim.uri_to_fname(ref.uri),
    lnum = ref.range.start.line + 1,
    col = col + 1,
    text = label,
    user_data = ref,
  }
end

function M.ref_items(result)
  local items = {}
  for _, ref in ipairs(result.references or {}) do
    table.insert(items, M.ref_item(ref))
  end
  return items
end

--- The quickfix items of one matching line of `sylk/search` in the modes exact and regex:
--- one per match on the line (a line with only empty matches: one, at its range), with
--- byte columns (the server's are UTF-16; end_col is the byte after the match, as
--- :vimgrep sets it) and the line's text.
function M.line_items(hit)
  local text = present(hit.text) and hit.text or ""
  local ranges = (present(hit.matches) and #hit.matches > 0) and hit.matches or { hit.range }
  local filename = vim.uri_to_fname(hit.uri)
  local items = {}
  for _, r in ipairs(ranges) do
    table.insert(items, {
      filename = filename,
      lnum = hit.line + 1,
      col = compat.byte_col(text, r.start.character) + 1,
      end_lnum = hit.line + 1,
      end_col = compat.byte_col(text, r["end"].character) + 1,
      text = text,
      user_data = hit,
    })
  end
  return items
end

function M.grep_items(result)
  local items = {}
  for _, hit in ipairs(result.hits or {}) do
    vim.list_extend(items, M.line_items(hit))
  end
  return items
end

--- "12" matching lines, or "at least 12" when the search stopped early.
local function line_count(result)
  local n = result.totalHits or #(result.hits or {})
  return (result.totalHitsLowerBound == true and "at least " or "") .. n
end

--- A one-line summary of a line search: "12 matching lines in 3 files searched (regex, 0.8 ms)".
function M.grep_summary(result)
  local n = result.totalHits or #(result.hits or {})
  local files = result.filesSearched or 0
  local took = result.tookMs and string.format(", %.1f ms", result.tookMs) or ""
  return string.format("%s matching line%s%s in %d file%s searched (%s%s)", line_count(result), n == 1 and "" or "s",
    result.partial == true and " (partial)" or "", files, files == 1 and "" or "s", result.mode or "?", took)
end

--- What a user should know about a line search's answer besides its lines, one note a
--- line: the server's message (which explains the flags below), else a time limit that
--- cut it and a pattern that made it read every file; lines beyond the limit. Returns
--- the notes and whether to warn (the list may lack lines).
function M.grep_notes(result)
  local notes, warn = {}, result.partial == true
  if present(result.message) and result.message ~= "" then
    table.insert(notes, result.message)
  else
    if result.partial == true then
      table.insert(notes, "the search stopped at its time limit: the list may lack matching lines")
    end
    if result.scanned == true then
      table.insert(notes, "the pattern has no literal text the index could look up: every indexed file was read")
    end
  end
  local shown = #(result.hits or {})
  if shown > 0 and (shown < (result.totalHits or 0) or result.totalHitsLowerBound == true) then
    table.insert(notes, string.format("the first %d of %s matching lines (grep.limit)", shown, line_count(result)))
  end
  return notes, warn
end

--- The quickfix title of a search.
function M.title(query)
  return "Sylk: " .. query
end

--- A one-line summary of a result: "5 hits (lexical, 0.8 ms)".
function M.summary(result)
  if M.is_line_result(result) then
    return M.grep_summary(result)
  end
  local n = result.totalHits or #(result.hits or {})
  local took = result.tookMs and string.format(", %.1f ms", result.tookMs) or ""
  return string.format("%d hit%s (%s%s)", n, n == 1 and "" or "s", result.mode or "?", took)
end

local function bytes(n)
  local units = { "B", "KiB", "MiB", "GiB" }
  local i = 1
  while n >= 1024 and i < #units do
    n = n / 1024
    i = i + 1
  end
  return i == 1 and string.format("%d B", n) or string.format("%.1f %s", n, units[i])
end

--- What an untrusted workspace means (the `trusted` option false): one line, if any.
local function add_trust_line(lines, status)
  if status.trusted ~= false then
    return
  end
  local message = present(status.trustMessage) and status.trustMessage
    or "untrusted workspace: its .sylk.toml and [tool.sylk] are ignored and git is not run"
  table.insert(lines, message:sub(1, 1):upper() .. message:sub(2))
end

--- The lines of :SylkStatus.
function M.status_lines(status)
  local lines = {}
  if status.indexing then
    table.insert(lines, "Sylk: indexing...")
  elseif status.embedding then
    table.insert(lines, "Sylk: embedding...")
  end
  if not present(status.files) then
    table.insert(lines, status.ready and "Sylk: the index is not open" or "Sylk: opening the index...")
    add_trust_line(lines, status)
    return lines
  end
  table.insert(lines, string.format("Sylk: %d files, %d symbols, %d chunks (%s)", status.files, status.symbols or 0,
    status.chunks or 0, status.root or "?"))
  add_trust_line(lines, status)
  local semantic = status.semantic
  if present(semantic) then
    if semantic.ready then
      table.insert(lines, string.format("Semantic: %d/%d chunks embedded (%s)", status.embedded or 0, status.chunks or 0,
        present(semantic.model) and semantic.model or "model"))
    elseif present(semantic.message) then
      table.insert(lines, "Semantic: unavailable (" .. semantic.message .. "); lexical search only")
    else
      table.insert(lines, string.format("Semantic: not loaded yet; %d/%d chunks embedded", status.embedded or 0,
        status.chunks or 0))
    end
  end
  local watch = status.watch
  if present(watch) and watch.active then
    local waiting = (watch.pendingChanges or 0) > 0 and string.format(" (%d waiting)", watch.pendingChanges) or ""
    table.insert(lines, "Following changes on disk" .. waiting)
  elseif present(watch) and present(watch.error) then
    table.insert(lines, "Not following changes on disk: " .. watch.error)
  end
  if present(status.languages) and #status.languages > 0 then
    local parts = {}
    for _, l in ipairs(status.languages) do
      table.insert(parts, l.language .. " " .. l.files)
    end
    table.insert(lines, "Languages: " .. table.concat(parts, ", "))
  end
  if present(status.lastRun) then
    table.insert(lines, "Last run: " .. status.lastRun)
  end
  local skipped = status.skipped
  if present(skipped) and present(skipped.total) and skipped.total > 0 then
    -- counts by reason; the server names only the first 20 files of each (`sylk status --skipped`: all)
    local reasons = {}
    for _, r in ipairs(present(skipped.byReason) and skipped.byReason or {}) do
      table.insert(reasons, r.reason .. " " .. r.count)
    end
    table.insert(lines, string.format("Skipped: %d file%s (%s)", skipped.total, skipped.total == 1 and "" or "s",
      table.concat(reasons, ", ")))
  end
  if status.readOnly then
    table.insert(lines, "Read-only: another Sylk process owns this index")
  end
  if present(status.indexDir) then
    local size = present(status.indexBytes) and (" (" .. bytes(status.indexBytes) .. ")") or ""
    table.insert(lines, "Index: " .. status.indexDir .. size)
  end
  return lines
end

--- The lines of a `sylk/documentText` answer's text (no empty line for its final newline).
function M.text_lines(text)
  local lines = split_lines(text or "")
  if #lines > 1 and lines[#lines] == "" then
    table.remove(lines)
  end
  return lines
end

M.modes = { hybrid = true, lexical = true, semantic = true }

--- ":SylkSearch -mode=lexical -limit=5 retry backoff" -> "retry backoff", { mode =, limit = }.
--- Returns nil and a message for an unknown option or a bad value.
function M.parse_args(args)
  local opts = {}
  local words = {}
  for word in args:gmatch("%S+") do
    local key, value = word:match("^%-%-?(%a+)=(.*)$")
    if key == nil and #words == 0 and word:match("^%-%-?%a+$") and M.modes[word:gsub("^%-+", "")] then
      opts.mode = word:gsub("^%-+", "")
    elseif key == "mode" then
      if not M.modes[value] then
        local hint = (value == "exact" or value == "regex") and " (every matching line: :SylkGrep)" or ""
        return nil, "mode must be hybrid, lexical or semantic, got " .. value .. hint
      end
      opts.mode = value
    elseif key == "limit" then
      local n = tonumber(value)
      if n == nil or n < 1 or n ~= math.floor(n) then
        return nil, "limit must be a positive integer, got " .. value
      end
      opts.limit = n
    elseif key ~= nil and #words == 0 then
      return nil, "unknown option -" .. key .. " (options: -mode=hybrid|lexical|semantic, -limit=N)"
    else
      table.insert(words, word)
    end
  end
  return table.concat(words, " "), opts
end

local GREP_USAGE = "usage: :SylkGrep [-F] [-i|-s] [-w] [--] {pattern} (regex; -F: exact text; -i: ignore case; " ..
  "-s: match case; default: smart case; -w: whole words)"

--- ":SylkGrep -F -w foo(bar, " -> "foo(bar, ", { mode = "exact", case = "smart", whole_word = true }.
--- Flags come first (-F, -i, -s, -w, combined as -Fw too); "--" ends them; everything
--- after them is the pattern, spaces included (not the whitespace that separates it from
--- the flags). Returns nil and a message for an unknown flag or no pattern.
function M.grep_args(args)
  local opts = { mode = "regex", case = "smart", whole_word = false }
  local rest = (args or ""):gsub("^%s+", "")
  while true do
    local word, after = rest:match("^(%S+)%s*(.*)$")
    if word == "--" then
      rest = after
      break
    end
    if word == nil or not word:match("^%-%a+$") then
      break
    end
    for flag in word:sub(2):gmatch(".") do
      if flag == "F" then
        opts.mode = "exact"
      elseif flag == "i" then
        opts.case = false
      elseif flag == "s" then
        opts.case = true
      elseif flag == "w" then
        opts.whole_word = true
      else
        return nil, "unknown flag -" .. flag .. " in " .. word .. " (" .. GREP_USAGE .. "; a pattern starting " ..
          "with - goes after --)"
      end
    end
    rest = after
  end
  if rest == "" then
    return nil, GREP_USAGE
  end
  return rest, opts
end

return M
