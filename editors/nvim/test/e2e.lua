-- End-to-end test of `mirdsl lsp` through Neovim 0.11's LSP client.
--
--   MIRDSL=/path/to/mirdsl nvim --headless --clean testdata/mlp.mir -c 'luafile editors/nvim/test/e2e.lua'
--
-- Prints `ok: ...` per check; exits 0 when all pass, 1 (`:cquit 1`) at the first failure.

local buf = vim.api.nvim_get_current_buf()
local file = vim.api.nvim_buf_get_name(buf)

local H = dofile(vim.fs.dirname(debug.getinfo(1, "S").source:sub(2)) .. "/harness.lua")
local fail, ok, check = H.fail, H.ok, H.check

local function run()
  vim.bo[buf].filetype = "mindir"
  local client_id, client, enc = H.start(buf, vim.fs.dirname(file))
  check(enc == "utf-8" or enc == "utf-16", "position encoding negotiated: " .. tostring(enc))

  local function find(pattern, after_line)
    return H.find(buf, pattern, after_line)
  end

  local function request(method, row, col, extra)
    vim.api.nvim_win_set_cursor(0, { row + 1, col })
    local params = vim.lsp.util.make_position_params(0, enc)
    for k, v in pairs(extra or {}) do
      params[k] = v
    end
    return H.request(buf, client_id, method, params)
  end

  -- Diagnostics: break the file (on a line with non-ASCII text), then fix it.
  local last = vim.api.nvim_buf_line_count(buf)
  vim.api.nvim_buf_set_lines(buf, last, last, false, {
    "",
    "# 日本語のコメント 😀",
    'graph broken() { s = "😀 é"; return (s, undefined_name) }',
  })
  local diags = {}
  vim.wait(20000, function()
    diags = vim.diagnostic.get(buf)
    return #diags > 0
  end, 50)
  check(#diags > 0, "diagnostics arrive after an edit")
  local found
  for _, d in ipairs(diags) do
    if d.code == "E0100" then
      found = d
    end
  end
  check(found ~= nil, "an undefined-name error (E0100) is reported")
  local brow, bcol = find("undefined_name", last)
  check(found.lnum == brow and found.col == bcol,
    string.format("its position is exact on a non-ASCII line (%d:%d, expected %d:%d)", found.lnum, found.col, brow, bcol))
  vim.api.nvim_buf_set_lines(buf, last, last + 3, false, {})
  vim.wait(20000, function()
    return #vim.diagnostic.get(buf) == 0
  end, 50)
  check(#vim.diagnostic.get(buf) == 0, "fixed errors disappear")

  -- Hover: the type and shape of `h`.
  local hrow, hcol = find("h = ReLU")
  local hover = request("textDocument/hover", hrow, hcol)
  local text = hover and hover.contents and hover.contents.value or ""
  check(text:find("f32[B, 128]", 1, true) ~= nil, "hover shows a shape: " .. text:gsub("\n", " "))

  -- Definition: `mlp` in `loss` goes to `graph mlp`.
  local urow, ucol = find("logits = mlp")
  local def = request("textDocument/definition", urow, ucol + #"logits = ")
  if def and def[1] then
    def = def[1]
  end
  local drow = find("graph mlp")
  check(def and def.range and def.range.start.line == drow, "definition goes to `graph mlp`")

  -- Completion includes primitives: after `m` (of `mlp`), MatMul is offered
  -- (with no prefix at all, the 200 best items are the names in scope first).
  local items = request("textDocument/completion", urow, ucol + #"logits = m")
  items = items and (items.items or items) or {}
  local has_matmul = false
  for _, item in ipairs(items) do
    if item.label == "MatMul" then
      has_matmul = true
    end
  end
  check(has_matmul, "completion offers the primitive MatMul (" .. #items .. " items)")

  -- Inlay hints: the inferred type after `h`.
  vim.lsp.inlay_hint.enable(true, { bufnr = buf })
  local hints = {}
  vim.wait(20000, function()
    hints = vim.lsp.inlay_hint.get({ bufnr = buf })
    return #hints > 0
  end, 50)
  local hint_text
  for _, h in ipairs(hints) do
    local label = h.inlay_hint.label
    if type(label) == "table" then
      label = label[1].value
    end
    if h.inlay_hint.position.line == hrow then
      hint_text = label
    end
  end
  check(hint_text ~= nil and hint_text:find("f32[B, 128]", 1, true) ~= nil,
    "inlay hint after `h`: " .. tostring(hint_text))

  -- Semantic tokens: a primitive and a weight.
  local prow, pcol = find("ReLU(")
  local tokens
  vim.wait(20000, function()
    tokens = vim.lsp.semantic_tokens.get_at_pos(buf, prow, pcol)
    return tokens ~= nil and #tokens > 0
  end, 50)
  check(tokens and #tokens > 0 and tokens[1].type == "function" and tokens[1].modifiers.defaultLibrary,
    "semantic token of `ReLU`: function +defaultLibrary")
  local wrow, wcol = find("fc1.weight,", hrow + 1)
  tokens = vim.lsp.semantic_tokens.get_at_pos(buf, wrow, wcol)
  check(tokens and #tokens > 0 and tokens[1].type == "variable" and tokens[1].modifiers.static,
    "semantic token of the weight `fc1.weight`: variable +static")

  vim.lsp.stop_client(client_id)
  vim.wait(5000, function()
    return vim.lsp.get_client_by_id(client_id) == nil
  end, 50)
  ok("all checks passed")
  vim.cmd("qall!")
end

H.main(run)
