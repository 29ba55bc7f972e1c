-- End-to-end test of a MindSpore compile dump (*.ir, filetype `mindspore-ir`)
-- through Neovim 0.11's LSP client: no diagnostics, the outline of subgraphs,
-- folding, go to definition of a subgraph and of a node, hover with the
-- dumped type, scope and the user's Python frame.
--
--   MIRDSL=/path/to/mirdsl MIRDSL_REPO=/path/to/repo nvim --headless --clean DIR/x.ir -c 'luafile editors/nvim/test/dump.lua'
--
-- The file is testdata/irdumps/hof_type_inference.ir (MindSpore 2.10). Prints
-- `ok: ...` per check; exits 0 when all pass, 1 (`:cquit 1`) at the first failure.

local repo = os.getenv("MIRDSL_REPO") or "."
local buf = vim.api.nvim_get_current_buf()
local file = vim.api.nvim_buf_get_name(buf)

local H = dofile(vim.fs.dirname(debug.getinfo(1, "S").source:sub(2)) .. "/harness.lua")
local fail, ok, check = H.fail, H.ok, H.check

local function run()
  -- The plugin's filetype detection.
  dofile(repo .. "/editors/nvim/ftdetect/mindspore_ir.lua")
  local ft = vim.filetype.match({ buf = buf })
  check(ft == "mindspore-ir", "*.ir is filetype mindspore-ir: " .. tostring(ft))
  vim.bo[buf].filetype = ft
  local client_id, client, enc = H.start(buf, vim.fs.dirname(file))

  local function find(pattern, after_line)
    return H.find(buf, pattern, after_line)
  end

  local function request(method, params)
    return H.request(buf, client_id, method, params)
  end

  local doc = { textDocument = vim.lsp.util.make_text_document_params(buf) }
  local function at(row, col)
    return { textDocument = doc.textDocument, position = { line = row, character = col } }
  end

  -- The dump is MindSpore's truth: no diagnostics, even after a moment.
  vim.wait(1500, function()
    return #vim.diagnostic.get(buf) > 0
  end, 50)
  check(#vim.diagnostic.get(buf) == 0, "no diagnostics: " .. vim.inspect(vim.diagnostic.get(buf)))

  -- The outline: the dump's subgraphs.
  local symbols = request("textDocument/documentSymbol", doc)
  local names = {}
  for _, s in ipairs(symbols or {}) do
    names[#names + 1] = s.name
  end
  local joined = table.concat(names, " ")
  check(joined:find("@3_g_21", 1, true) and joined:find("@7_add_12", 1, true), "outline: " .. joined)

  -- Folding: a region per subgraph.
  local folds = request("textDocument/foldingRange", doc)
  local regions = 0
  for _, f in ipairs(folds or {}) do
    if f.kind == "region" then
      regions = regions + 1
    end
  end
  check(regions == 7, "a fold per subgraph: " .. regions)

  -- Go to definition of a called subgraph.
  local row, col = find("call @5_f_16(%para10_x)")
  local def = request("textDocument/definition", at(row, col + 7))
  local drow = def and (def.range or (def[1] and def[1].range))
  local line = drow and vim.api.nvim_buf_get_lines(buf, drow.start.line, drow.start.line + 1, false)[1] or ""
  check(line:find("subgraph @5_f_16(", 1, true) ~= nil, "definition of @5_f_16: " .. line)

  -- Go to definition of a node, through Neovim's own command.
  row, col = find("call @4__mul_tensor_19(%0, %1)")
  vim.api.nvim_win_set_cursor(0, { row + 1, col + 24 })
  vim.lsp.buf.definition()
  vim.wait(5000, function()
    return vim.api.nvim_win_get_cursor(0)[1] ~= row + 1
  end, 50)
  local cursor = vim.api.nvim_win_get_cursor(0)
  line = vim.api.nvim_buf_get_lines(buf, cursor[1] - 1, cursor[1], false)[1]
  check(line:find("%0(CNode_15) = call @5_f_16", 1, true) ~= nil, "definition of %0: " .. line)

  -- Hover: the dumped type, the scope and the user's own Python frame.
  vim.api.nvim_win_set_cursor(0, { row + 1, col + 24 })
  local hover = request("textDocument/hover", vim.lsp.util.make_position_params(0, enc))
  local text = hover and hover.contents and hover.contents.value or ""
  check(
    text:find("<Tensor[Float32], (2)>", 1, true)
      and text:find("Default/5_f_16-op0", 1, true)
      and text:find("t4.py:11", 1, true),
    "hover of %0: " .. text
  )

  ok("all checks passed")
  vim.cmd("qall!")
end

H.main(run)
