-- What the Neovim e2e scripts share: checks that stop at the first failure
-- (`check`) or that all run and are summed up (`suite`), and an LSP client on
-- `mirdsl lsp` with its requests. Loaded by each script with
--   local H = dofile(vim.fs.dirname(debug.getinfo(1, "S").source:sub(2)) .. "/harness.lua")

local H = {}

--- Reports a failure and exits non-zero.
function H.fail(msg)
  io.stderr:write("FAIL: " .. msg .. "\n")
  vim.cmd("cquit 1")
end

function H.ok(msg)
  io.stdout:write("ok: " .. msg .. "\n")
end

--- A check that stops the script when it fails.
function H.check(cond, msg)
  if not cond then
    H.fail(msg)
  end
  H.ok(msg)
end

--- Runs `body`; an error in it is a failure.
function H.main(body)
  local ran, err = pcall(body)
  if not ran then
    H.fail(tostring(err))
  end
end

--- Starts `mirdsl lsp` (the `MIRDSL` binary) on `buf` rooted at `root` and
--- waits until it is initialized: the client id, the client and its
--- position encoding.
function H.start(buf, root)
  local client_id = vim.lsp.start({
    name = "mirdsl",
    cmd = { os.getenv("MIRDSL") or "mirdsl", "lsp" },
    root_dir = root,
  }, { bufnr = buf })
  H.check(client_id ~= nil, "the client started")
  local client
  vim.wait(20000, function()
    client = vim.lsp.get_client_by_id(client_id)
    return client ~= nil and client.initialized and vim.lsp.buf_is_attached(buf, client_id)
  end, 50)
  H.check(client ~= nil and client.initialized, "the server initialized")
  return client_id, client, client.offset_encoding
end

--- The 0-based row and byte column of the first `pattern` (plain text) in
--- `buf`, from line `after_line` (1-based) on.
function H.find(buf, pattern, after_line)
  local lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
  for i = (after_line or 1), #lines do
    local c = lines[i]:find(pattern, 1, true)
    if c then
      return i - 1, c - 1
    end
  end
  H.fail("pattern not found: " .. pattern)
end

--- A request to `client_id` for `buf`, synchronously; its result.
function H.request(buf, client_id, method, params)
  local responses = vim.lsp.buf_request_sync(buf, method, params, 10000)
  if not responses or not responses[client_id] then
    H.fail(method .. ": no response")
  end
  local r = responses[client_id]
  if r.err then
    H.fail(method .. ": " .. vim.inspect(r.err))
  end
  return r.result
end

--- Checks that all run: `check(name, fn)` records a failure (an error in
--- `fn`) and goes on; `finish()` prints the count, stops the clients and
--- exits non-zero when any failed.
function H.suite()
  local S = { passed = 0, failed = 0 }
  function S.check(name, fn)
    local ran, err = pcall(fn)
    if ran then
      S.passed = S.passed + 1
      io.stdout:write("ok   " .. name .. "\n")
    else
      S.failed = S.failed + 1
      io.stdout:write("FAIL " .. name .. ": " .. tostring(err) .. "\n")
    end
  end
  function S.finish()
    io.stdout:write(string.format("%d passed, %d failed\n", S.passed, S.failed))
    for _, c in ipairs(vim.lsp.get_clients()) do c:stop(true) end
    if S.failed > 0 then vim.cmd("cquit 1") else vim.cmd("qall!") end
  end
  return S
end

--- Waits up to `ms` for `cond`; an error naming `what` when it times out.
function H.wait(ms, cond, what)
  if not vim.wait(ms, cond, 20) then error("timed out waiting for " .. what, 2) end
end

return H
