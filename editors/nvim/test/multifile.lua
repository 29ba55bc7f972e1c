-- End-to-end test of a workspace of several files through Neovim 0.11's LSP client
-- (docs/language.md §10.1): a model whose layers live in another file.
--
--   MIRDSL=/path/to/mirdsl nvim --headless --clean DIR/model.mir -c 'luafile editors/nvim/test/multifile.lua'
--
-- DIR holds testdata/multifile (model.mir, layers.mir, losses.mir). Prints `ok: ...` per
-- check; exits 0 when all pass, 1 (`:cquit 1`) at the first failure.

local buf = vim.api.nvim_get_current_buf()
local file = vim.api.nvim_buf_get_name(buf)
local dir = vim.fs.dirname(file)

local H = dofile(vim.fs.dirname(debug.getinfo(1, "S").source:sub(2)) .. "/harness.lua")
local fail, ok, check = H.fail, H.ok, H.check

local function run()
  vim.bo[buf].filetype = "mindir"
  local client_id, client, enc = H.start(buf, dir)

  local function find(pattern, after_line)
    return H.find(buf, pattern, after_line)
  end

  local function request(method, params)
    return H.request(buf, client_id, method, params)
  end

  -- The model checks with its imports: no diagnostics, even after a moment.
  vim.wait(1500, function()
    return #vim.diagnostic.get(buf) > 0
  end, 50)
  check(#vim.diagnostic.get(buf) == 0, "the model has no diagnostics: " .. vim.inspect(vim.diagnostic.get(buf)))

  -- Hover of an imported graph shows its signature and file.
  local row, col = find("layers.mlp(x), labels")
  vim.api.nvim_win_set_cursor(0, { row + 1, col + 8 })
  local hover = request("textDocument/hover", vim.lsp.util.make_position_params(0, enc))
  local text = hover and hover.contents and hover.contents.value or ""
  check(text:find("graph mlp", 1, true) and text:find("layers.mir", 1, true), "hover of layers.mlp: " .. text)

  -- The graph view of a model whose layers live in another file.
  local graph = request("mirdsl/graph", { uri = vim.uri_from_bufnr(buf), graph = "main" })
  check(graph and graph.dot and graph.dot:find("layers.mlp", 1, true), "graph view of main draws layers.mlp")

  -- Go to definition opens the library file at the definition.
  vim.api.nvim_win_set_cursor(0, { row + 1, col + 8 })
  vim.lsp.buf.definition()
  vim.wait(10000, function()
    return vim.api.nvim_buf_get_name(0):find("layers.mir", 1, true) ~= nil
  end, 50)
  local name = vim.api.nvim_buf_get_name(0)
  check(name:find("layers.mir", 1, true) ~= nil, "go to definition opened " .. name)
  local cursor = vim.api.nvim_win_get_cursor(0)
  local line = vim.api.nvim_buf_get_lines(0, cursor[1] - 1, cursor[1], false)[1]
  check(line:find("graph mlp", 1, true) ~= nil, "the cursor is on the definition: " .. line)

  -- Breaking the library (now open) republishes the model's diagnostics.
  local lib = vim.api.nvim_get_current_buf()
  -- (With --clean no FileType autocommand starts the client on it: attach here.)
  vim.bo[lib].filetype = "mindir"
  vim.lsp.buf_attach_client(lib, client_id)
  vim.wait(5000, function()
    return vim.lsp.buf_is_attached(lib, client_id)
  end, 50)
  local lines = vim.api.nvim_buf_get_lines(lib, 0, -1, false)
  for i, l in ipairs(lines) do
    if l:find("graph mlp(x: f32[B, 8])", 1, true) then
      vim.api.nvim_buf_set_lines(lib, i - 1, i, false, { "graph mlp(x: f32[B, 9]) -> f32[B, 4] {" })
      break
    end
  end
  vim.wait(10000, function()
    return #vim.diagnostic.get(buf) > 0
  end, 50)
  local diags = vim.diagnostic.get(buf)
  check(#diags > 0 and diags[1].message:find("f32[B, 9]", 1, true), "the model's diagnostics follow the library: " .. vim.inspect(diags[1] and diags[1].message))

  ok("all checks passed")
  vim.cmd("qall!")
end

H.main(run)
