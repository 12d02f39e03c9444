-- What differs between Neovim 0.7 and later releases, in one place.
local M = {}

local has_011 = vim.fn.has("nvim-0.11") == 1
-- libuv: vim.uv since 0.10 (vim.loop, deprecated there, is all 0.7 has)
local uv = vim.uv or vim.loop

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

--- The running clients named `name`, attached to `bufnr` when given. Initialized ones
--- only: 0.7's get_active_clients() and 0.12's get_clients() leave out a client that
--- is still starting (vim.lsp.get_client_by_id() finds it).
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
  return uv.fs_stat(path) ~= nil
end

function M.cwd()
  return uv.cwd()
end

--- Check one option's type (0.11 deprecated vim.validate's table form for 1.0; 0.7 has
--- only that form). `types`: a type name or a list of them.
function M.validate(name, value, types, optional)
  if has_011 then
    vim.validate(name, value, types, optional)
  else
    vim.validate({ [name] = { value, types, optional } })
  end
end

--- The LSP log file (where a server's stderr goes). :LspLog is nvim-lspconfig's, not
--- Neovim's; vim.lsp.get_log_path() is deprecated in 0.12; vim.lsp.log's own answer
--- is the same on every version.
function M.log_path()
  local ok, path = pcall(function()
    return require("vim.lsp.log").get_filename()
  end)
  return ok and path or nil
end

function M.dirname(path)
  local parent = vim.fn.fnamemodify(path, ":h")
  return parent
end

return M
