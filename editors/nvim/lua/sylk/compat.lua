-- What differs between Neovim 0.7 and later releases, in one place.
local M = {}

local has_011 = vim.fn.has("nvim-0.11") == 1

--- Send a request through one client (0.11 made the client methods take `self`).
function M.request(client, method, params, handler, bufnr)
  if has_011 then
    return client:request(method, params, handler, bufnr)
  end
  return client.request(method, params, handler, bufnr)
end

--- The same, waiting at most `timeout_ms`; returns `{ err =, result = }` or nil, err.
function M.request_sync(client, method, params, timeout_ms, bufnr)
  if has_011 then
    return client:request_sync(method, params, timeout_ms, bufnr)
  end
  return client.request_sync(method, params, timeout_ms, bufnr)
end

function M.is_stopped(client)
  if has_011 then
    return client:is_stopped()
  end
  return client.is_stopped()
end

--- The running clients named `name`, attached to `bufnr` when given.
function M.clients(name, bufnr)
  if vim.lsp.get_clients then
    return vim.lsp.get_clients({ name = name, bufnr = bufnr })
  end
  local out = {}
  for _, client in pairs(vim.lsp.get_active_clients()) do
    if client.name == name and (bufnr == nil or vim.lsp.buf_is_attached(bufnr, client.id)) then
      table.insert(out, client)
    end
  end
  return out
end

--- Byte column of a UTF-16 column in `line` (what LSP ranges count).
function M.byte_col(line, utf16_col)
  local ok, col
  if has_011 then
    ok, col = pcall(vim.str_byteindex, line, "utf-16", utf16_col, false)
  else
    ok, col = pcall(vim.str_byteindex, line, utf16_col, true)
  end
  if ok and col then
    return col
  end
  return math.min(utf16_col, #line)
end

--- Fire `User <pattern>` if anyone listens (0.8+ passes `data` along).
function M.user_event(pattern, data)
  if vim.fn.exists("#User#" .. pattern) == 0 then
    return
  end
  if vim.fn.has("nvim-0.8") == 1 then
    vim.api.nvim_exec_autocmds("User", { pattern = pattern, modeline = false, data = data })
  else
    vim.api.nvim_exec_autocmds("User", { pattern = pattern, modeline = false })
  end
end

--- Neovim's own answer on trusting the file `path` (0.9+: |vim.secure.read()|, the trust
--- database 'exrc' uses; it asks the user the first time): true when the user allows it,
--- false when not (denied, ignored, or unreadable). nil: this Neovim has no vim.secure
--- (0.7, 0.8).
function M.trusts(path)
  local secure = vim.secure
  if type(secure) ~= "table" or type(secure.read) ~= "function" then
    return nil
  end
  local ok, contents = pcall(secure.read, path)
  return ok and contents ~= nil
end

function M.exists(path)
  return vim.loop.fs_stat(path) ~= nil
end

function M.dirname(path)
  local parent = vim.fn.fnamemodify(path, ":h")
  return parent
end

return M
