-- The start and the end of every test script (dofile'd before the plugin loads):
--   * from here on, every call of vim.deprecate() whose stack passes through the plugin
--     (lua/sylk/) is recorded, hard- or soft-deprecated (Neovim 0.10+ only warns about the
--     hard ones, and with an echo a test does not see);
--   * the returned function writes the result of xpcall and what the script gathered as
--     JSON to $SYLK_NVIM_OUT for tests/test_nvim.py, with the Neovim that ran it (the
--     first line of :version, as `nvim --version` prints it) and those deprecations;
--     then Neovim quits.
-- And the one bound on every wait of the scripts: $SYLK_NVIM_WAIT_MS (tests/test_nvim.py
-- passes its TIMEOUT, generous: on a machine whose cores are kept busy by other work the
-- server's background threads get about a tenth of a core). ``wait`` polls a condition
-- until it holds and fails naming what it waited for; ``ms`` bounds a synchronous request.
local deprecated = {}
local original_deprecate = vim.deprecate
if type(original_deprecate) == "function" then
  vim.deprecate = function(name, alternative, version, ...)
    local trace = debug.traceback("", 2)
    if trace:find("/lua/sylk/", 1, true) then
      table.insert(deprecated, { name = tostring(name), alternative = alternative and tostring(alternative) or vim.NIL,
        version = version and tostring(version) or vim.NIL, traceback = trace })
    end
    return original_deprecate(name, alternative, version, ...)
  end
end

local function version_line()
  for _, line in ipairs(vim.split(vim.fn.execute("version"), "\n", { plain = true })) do
    if line:match("^NVIM v") then
      return line
    end
  end
  return vim.NIL
end

local WAIT_MS = tonumber(os.getenv("SYLK_NVIM_WAIT_MS") or "") or 240000

local function wait(what, cond)
  if not vim.wait(WAIT_MS, cond, 20) then
    error("timed out after " .. WAIT_MS .. " ms waiting for " .. what)
  end
end

local function finish(out, ok, err)
  out.ok = ok
  out.error = ok and vim.NIL or tostring(err)
  out.nvim_version = version_line()
  out.deprecated = deprecated
  local f = assert(io.open(assert(os.getenv("SYLK_NVIM_OUT")), "w"))
  f:write(vim.fn.json_encode(out))
  f:close()
  vim.cmd("qa!")
end

return { finish = finish, wait = wait, ms = WAIT_MS }
