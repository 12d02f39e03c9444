-- The end of every test script: the result of xpcall and what the script gathered,
-- written as JSON to $SYLK_NVIM_OUT for tests/test_nvim.py; then Neovim quits.
return function(out, ok, err)
  out.ok = ok
  out.error = ok and vim.NIL or tostring(err)
  local f = assert(io.open(assert(os.getenv("SYLK_NVIM_OUT")), "w"))
  f:write(vim.fn.json_encode(out))
  f:close()
  vim.cmd("qa!")
end
