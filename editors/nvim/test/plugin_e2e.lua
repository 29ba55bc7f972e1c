-- End-to-end test of the Neovim plugin (editors/nvim) with `mirdsl lsp`, run by
-- run-plugin.sh:
--   MIRDSL=... MIRDSL_WS=... MIRDSL_PLUGIN=... MIRDSL_PARSER_DIR=... \
--     nvim --headless --clean -c 'luafile editors/nvim/test/plugin_e2e.lua'
-- Every check runs; prints `ok`/`FAIL` per check and `N passed, M failed`, and
-- exits non-zero (:cquit) when any failed.

local ws = assert(os.getenv("MIRDSL_WS"), "MIRDSL_WS")
vim.opt.runtimepath:prepend(assert(os.getenv("MIRDSL_PLUGIN"), "MIRDSL_PLUGIN"))
vim.opt.runtimepath:append(assert(os.getenv("MIRDSL_PARSER_DIR"), "MIRDSL_PARSER_DIR"))
vim.cmd("runtime! ftdetect/*.lua")

local opened = {}
require("mirdsl").setup({
  cmd = { os.getenv("MIRDSL") or "mirdsl", "lsp" },
  open_svg = function(path) table.insert(opened, path) end,
})

local H = dofile(vim.fs.dirname(debug.getinfo(1, "S").source:sub(2)) .. "/harness.lua")
local suite = H.suite()
local check, wait = suite.check, H.wait
local function buf_text(b)
  return table.concat(vim.api.nvim_buf_get_lines(b, 0, -1, false), "\n")
end
local function find_buf(name)
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_get_name(b):find(name, 1, true) then return b end
  end
end

-- The broken file first: diagnostics.
vim.cmd.edit(ws .. "/e2e_error.mir")
local err_buf = vim.api.nvim_get_current_buf()
check("filetype detection: *.mir is mindir", function()
  assert(vim.bo[err_buf].filetype == "mindir", "filetype " .. vim.bo[err_buf].filetype)
end)
check("the server attaches", function()
  wait(20000, function()
    local c = vim.lsp.get_clients({ bufnr = err_buf, name = "mirdsl" })[1]
    return c ~= nil and c.initialized
  end, "mirdsl to attach")
end)
check("changes are sent after the plugin's short debounce", function()
  local c = vim.lsp.get_clients({ bufnr = err_buf, name = "mirdsl" })[1]
  assert(c.flags.debounce_text_changes == 30, vim.inspect(c.flags))
end)
check("diagnostics for a broken file", function()
  wait(20000, function() return #vim.diagnostic.get(err_buf, { severity = vim.diagnostic.severity.ERROR }) > 0 end, "an error")
  local d = vim.diagnostic.get(err_buf)[1]
  assert(d.lnum == 1, "error on line " .. d.lnum .. ": " .. d.message)
end)

vim.cmd.edit(ws .. "/test_f.mir")
local buf = vim.api.nvim_get_current_buf()
local client
wait(20000, function()
  client = vim.lsp.get_clients({ bufnr = buf, name = "mirdsl" })[1]
  return client ~= nil and client.initialized
end, "mirdsl on test_f.mir")

check("tree-sitter parser registered and highlighting on", function()
  assert(vim.treesitter.language.get_lang("mindir") == "mindir", "no language for filetype mindir")
  local parser = vim.treesitter.get_parser(buf, "mindir")
  local tree = parser:parse()[1]
  assert(tree:root():type() == "source_file", "root " .. tree:root():type())
  assert(not tree:root():has_error(), "parse errors in test_f.mir")
  assert(vim.treesitter.query.get("mindir", "highlights") ~= nil, "no highlights query")
  assert(vim.treesitter.highlighter.active[buf] ~= nil, "highlighter not active")
  local caps = vim.treesitter.get_captures_at_pos(buf, 6, 0) -- `graph` keyword of test_f
  assert(#caps > 0, "no capture at the graph keyword")
end)

check("hover shows a shape", function()
  local params = { textDocument = { uri = vim.uri_from_bufnr(buf) }, position = { line = 7, character = 2 } }
  local res = vim.lsp.buf_request_sync(buf, "textDocument/hover", params, 10000)
  local text = ""
  for _, r in pairs(res or {}) do
    if r.result then text = text .. vim.inspect(r.result.contents) end
  end
  assert(text:find("f32[3]", 1, true), "hover: " .. text)
end)

check("inlay hints are on and show shapes", function()
  assert(vim.lsp.inlay_hint.is_enabled({ bufnr = buf }), "inlay hints not enabled")
  wait(10000, function() return #vim.lsp.inlay_hint.get({ bufnr = buf }) > 0 end, "inlay hints")
  local labels = {}
  for _, h in ipairs(vim.lsp.inlay_hint.get({ bufnr = buf })) do
    local l = h.inlay_hint.label
    table.insert(labels, type(l) == "string" and l or l[1].value)
  end
  assert(vim.tbl_contains(labels, ": f32[3]"), "labels: " .. table.concat(labels, " | "))
end)

check("code lenses carry the plugin's commands", function()
  wait(10000, function() return #vim.lsp.codelens.get(buf) > 0 end, "code lenses")
  local seen = {}
  for _, l in ipairs(vim.lsp.codelens.get(buf)) do
    if l.command then seen[l.command.command] = true end
  end
  for _, c in ipairs({ "mirdsl.run", "mirdsl.showGraph", "mirdsl.showGradient" }) do
    assert(seen[c], "no lens " .. c)
    assert(vim.lsp.commands[c], "no handler for " .. c)
  end
end)

check(":MirIR puts the IR of the graph under the cursor in a scratch buffer", function()
  vim.api.nvim_set_current_buf(buf)
  vim.api.nvim_win_set_cursor(0, { 9, 2 }) -- inside test_f
  vim.cmd("MirIR")
  wait(10000, function() return find_buf("mirdsl://ir/test_f.mir") ~= nil end, "the IR buffer")
  local b = find_buf("mirdsl://ir/test_f.mir")
  wait(5000, function() return buf_text(b):find("a = Sub(x, 1)", 1, true) ~= nil end, "IR text")
  assert(buf_text(b):find("graph test_f(x: f32[3], y: f32[3])", 1, true), buf_text(b))
  assert(not vim.bo[b].modifiable, "IR buffer is modifiable")
  assert(vim.bo[b].filetype == "mindir")
end)

check(":MirGraph writes the SVG and opens it", function()
  vim.cmd("wincmd t")
  vim.api.nvim_set_current_buf(buf)
  vim.api.nvim_win_set_cursor(0, { 9, 2 })
  vim.cmd("MirGraph")
  wait(10000, function() return #opened > 0 end, "the viewer to be called")
  local svg = table.concat(vim.fn.readfile(opened[1]), "\n")
  assert(opened[1]:match("%.svg$"), opened[1])
  assert(svg:find('<svg', 1, true) and svg:find('data-node="n10"', 1, true), svg:sub(1, 200))
end)

check(":MirRun runs the graph under the cursor into a scratch buffer", function()
  vim.cmd("wincmd t")
  vim.api.nvim_set_current_buf(buf)
  vim.api.nvim_win_set_cursor(0, { 9, 2 })
  vim.cmd("MirRun x=[1.0, 2.0, 3.0] y=ones")
  wait(15000, function()
    local b = find_buf("mirdsl://run/test_f")
    return b ~= nil and buf_text(b):find("f32[3] = ", 1, true) ~= nil
  end, "the run output")
  local text = buf_text(find_buf("mirdsl://run/test_f"))
  -- a = x - 1 = [0, 1, 2]; b = a + 1; %1 = a / b; c = b * %1 = a
  assert(text:find("f32[3] = [0, 1, 2]", 1, true), text)
end)

check(":MirGradient shows the gradient program", function()
  vim.cmd("wincmd t")
  vim.api.nvim_set_current_buf(buf)
  vim.api.nvim_win_set_cursor(0, { 9, 2 })
  vim.cmd("MirGradient")
  wait(10000, function()
    local b = find_buf("mirdsl://gradient/test_f.mir")
    return b ~= nil and buf_text(b):find("graph", 1, true) ~= nil
  end, "the gradient buffer")
end)

check("argument parsing", function()
  local m = require("mirdsl")
  local params = { { name = "x", type = "f32[B, 784]" }, { name = "n", type = "" } }
  local r = assert(m.parse_run_args("x=[[1.0, 2.0]] B=4", params))
  assert(r.args.x == "[[1.0, 2.0]]" and r.args.n == "1.0" and r.dims.B == 4, vim.inspect(r))
  local r2 = assert(m.parse_run_args("1=3", params))
  assert(r2.args.n == "3" and r2.dims.B == 2, vim.inspect(r2))
  assert(m.parse_run_args("q=1.0", params) == nil)
  local gs = m.list_graphs(buf)
  assert(#gs == 3 and gs[2].name == "test_f" and gs[2].params[1].type == "f32[3]", vim.inspect(gs))
end)

check("an undefined library name is imported by its quick fix", function()
  local path = ws .. "/e2e_import.mir"
  local f = assert(io.open(path, "w"))
  f:write("graph loss(x: f32[2, 4], labels: i32[2]) -> f32[] {\n  return sparse_softmax_cross_entropy(x, labels)\n}\n")
  f:close()
  vim.cmd.edit(path)
  local b = vim.api.nvim_get_current_buf()
  wait(20000, function()
    local ds = vim.diagnostic.get(b, { severity = vim.diagnostic.severity.ERROR })
    return #ds > 0 and ds[1].message:find("@std/nn/loss.mir", 1, true) ~= nil
  end, "the E0100 naming @std/nn/loss.mir")
  local c = vim.lsp.get_clients({ bufnr = b, name = "mirdsl" })[1]
  local params = vim.lsp.util.make_range_params(0, c.offset_encoding)
  params.range = { start = { line = 1, character = 12 }, ["end"] = { line = 1, character = 12 } }
  params.context = { diagnostics = {} }
  local res = c:request_sync("textDocument/codeAction", params, 10000, b)
  local action
  for _, a in ipairs((res and res.result) or {}) do
    if (a.title or ""):find('import "@std/nn/loss.mir"', 1, true) then action = a end
  end
  assert(action, "an import action: " .. vim.inspect(res))
  vim.lsp.util.apply_workspace_edit(action.edit, c.offset_encoding)
  assert(vim.api.nvim_buf_get_lines(b, 0, 1, false)[1] == 'import "@std/nn/loss.mir"', buf_text(b))
  wait(20000, function()
    return #vim.diagnostic.get(b, { severity = vim.diagnostic.severity.ERROR }) == 0
  end, "the error to go once imported")
end)

suite.finish()
