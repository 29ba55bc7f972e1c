-- End-to-end test of the Neovim plugin (editors/nvim) on MindSpore compile dumps:
-- the checked-in stages of a tiny network (testdata/irdumps/tiny, MindSpore 2.10)
-- in a copy of testdata/, run by run-plugin.sh after plugin_e2e.lua:
--   MIRDSL=... MIRDSL_WS=... MIRDSL_PLUGIN=... \
--     nvim --headless --clean -c 'luafile editors/nvim/test/dump_plugin.lua'
-- Semantic tokens, hover, :MirGraph (grouped by scope), :MirComparePrevious,
-- :MirFollowPrevious and :MirFollowNext. Prints `ok`/`FAIL` per check and
-- `N passed, M failed`; exits non-zero (:cquit) when any failed.

local ws = assert(os.getenv("MIRDSL_WS"), "MIRDSL_WS")
vim.opt.runtimepath:prepend(assert(os.getenv("MIRDSL_PLUGIN"), "MIRDSL_PLUGIN"))
vim.cmd("runtime! ftdetect/*.lua")

local opened = {}
require("mirdsl").setup({
  cmd = { os.getenv("MIRDSL") or "mirdsl", "lsp" },
  open_svg = function(path) table.insert(opened, path) end,
})

local H = dofile(vim.fs.dirname(debug.getinfo(1, "S").source:sub(2)) .. "/harness.lua")
local suite = H.suite()
local check, wait = suite.check, H.wait

local dir = ws .. "/irdumps/tiny/dump/"
local stage = dir .. "hwopt_comm_after_kernel_select_kernel_graph0_0112.ir"
local before = dir .. "hwopt_cpu_custom_optimization_after_graph_0_0106.ir"

-- The 0-based (row, col) of `needle` in a file.
local function where(path, needle)
  for i, l in ipairs(vim.fn.readfile(path)) do
    local c = l:find(needle, 1, true)
    if c then return i - 1, c - 1 end
  end
  error("no " .. needle .. " in " .. path)
end

vim.cmd.edit(stage)
local buf = vim.api.nvim_get_current_buf()
local client
check("a dump is filetype mindspore-ir and the server attaches", function()
  assert(vim.bo[buf].filetype == "mindspore-ir", "filetype " .. vim.bo[buf].filetype)
  wait(20000, function()
    client = vim.lsp.get_clients({ bufnr = buf, name = "mirdsl" })[1]
    return client ~= nil and client.initialized
  end, "the server")
end)

check("semantic tokens: a weight is a static variable, a primitive a library function", function()
  local row, col = where(stage, "%para2_block.fc.weight, UMonad")
  local function tok(r, c)
    for _, t in ipairs(vim.lsp.semantic_tokens.get_at_pos(buf, r, c) or {}) do
      if t.type then return t end
    end
  end
  wait(20000, function() return tok(row, col + 2) ~= nil end, "semantic tokens")
  local t = tok(row, col + 2)
  assert(t.type == "variable" and t.modifiers.static, vim.inspect(t))
  row, col = where(stage, "PrimFunc_MatMul")
  t = tok(row, col + 3)
  assert(t and t.type == "function" and t.modifiers.defaultLibrary, vim.inspect(t))
end)

check("hover: the dumped type, scope and the user's line next to the dump folder", function()
  local row, col = where(stage, "%4(CNode_96)")
  local res = vim.lsp.buf_request_sync(buf, "textDocument/hover", {
    textDocument = { uri = vim.uri_from_bufnr(buf) },
    position = { line = row, character = col + 1 },
  }, 10000)
  local md = ""
  for _, r in pairs(res or {}) do
    if r.result then md = r.result.contents.value end
  end
  local model = vim.uv.fs_realpath(ws .. "/irdumps/tiny/model.py")
  for _, want in ipairs({ "Default/block-Block/act-ReLU/ReLU-op0", "(<Tensor[Float32], (2, 3)>)",
    "[model.py:24](file://" .. model .. "#L24)" }) do
    assert(md:find(want, 1, true), "hover lacks " .. want .. ": " .. md)
  end
end)

check(":MirSource opens the line of the user's code that made the node", function()
  local row = where(stage, "%4(CNode_96)")
  vim.api.nvim_win_set_cursor(0, { row + 3, 8 })
  vim.cmd("MirSource")
  local model = vim.uv.fs_realpath(ws .. "/irdumps/tiny/model.py")
  wait(20000, function() return vim.api.nvim_buf_get_name(0) == model end, "model.py")
  assert(vim.api.nvim_win_get_cursor(0)[1] == 24, vim.inspect(vim.api.nvim_win_get_cursor(0)))
  vim.cmd.edit(stage)
end)

check(":MirGraph draws the subgraph under the cursor grouped by scope", function()
  local row = where(stage, "%1(x) = PrimFunc_MatMul")
  vim.api.nvim_win_set_cursor(0, { row + 1, 2 })
  vim.cmd("MirGraph")
  wait(20000, function() return #opened == 1 end, "the SVG")
  local svg = table.concat(vim.fn.readfile(opened[1]), "\n")
  assert(svg:find('data-graph="scope:Default/block-Block/fc-Dense"', 1, true), svg:sub(1, 300))
  assert(svg:find('data-graph="@kernel_graph0"', 1, true), svg:sub(1, 300))
end)

check(":MirComparePrevious shows the structural diff with the stage before", function()
  vim.cmd("MirComparePrevious")
  local b
  wait(20000, function()
    b = require("mirdsl").last_compare
    return b ~= nil
  end, "the comparison")
  local text = table.concat(vim.api.nvim_buf_get_lines(b, 0, -1, false), "\n")
  assert(text:find("--- hwopt_cpu_custom_optimization_after_graph_0_0106.ir", 1, true), text)
  assert(text:find("- %5 = PrimFunc_Muls(%4, F32(2))", 1, true), text)
  assert(text:find("3 differences", 1, true), text)
  vim.cmd.edit(stage)
end)

check(":MirFollowPrevious and :MirFollowNext follow a node from stage to stage", function()
  local row, col = where(stage, "%6(CNode_98) = PrimFunc_Add")
  vim.api.nvim_win_set_cursor(0, { row + 1, col + 1 })
  vim.cmd("MirFollowPrevious")
  wait(20000, function() return vim.api.nvim_buf_get_name(0) == vim.uv.fs_realpath(before) end, "the previous stage")
  local prow = where(before, "%6(CNode_98) = PrimFunc_Add")
  wait(5000, function() return vim.api.nvim_win_get_cursor(0)[1] == prow + 1 end, "the cursor on %6")
  -- The server attaches to the other stage too, then follows it back.
  wait(20000, function() return vim.lsp.get_clients({ bufnr = 0, name = "mirdsl" })[1] ~= nil end, "the server")
  vim.cmd("MirFollowNext")
  wait(20000, function() return vim.api.nvim_buf_get_name(0) == vim.uv.fs_realpath(stage) end, "the stage again")
  wait(5000, function() return vim.api.nvim_win_get_cursor(0)[1] == row + 1 end, "the cursor back on %6")
end)

check(":MirFollowNext! passes the stages that leave the node as it is", function()
  local first = dir .. "22_backend_pass_0077.ir"
  vim.cmd.edit(first)
  wait(20000, function() return vim.lsp.get_clients({ bufnr = 0, name = "mirdsl" })[1] ~= nil end, "the server")
  local row, col = where(first, "%6(CNode_88) = PrimFunc_Add")
  vim.api.nvim_win_set_cursor(0, { row + 1, col + 1 })
  vim.cmd("MirFollowNext!")
  wait(20000, function() return vim.api.nvim_buf_get_name(0) == vim.uv.fs_realpath(stage) end, "the stage that changes it")
  wait(5000, function() return vim.api.nvim_win_get_cursor(0)[1] == where(stage, "%6(CNode_98) = PrimFunc_Add") + 1 end, "the cursor on %6")
end)

check("code lenses: Compare with previous pass, Show graph; the compare lens runs", function()
  vim.cmd.edit(stage)
  local b = vim.api.nvim_get_current_buf()
  local res = vim.lsp.buf_request_sync(b, "textDocument/codeLens", { textDocument = { uri = vim.uri_from_bufnr(b) } }, 10000)
  local lenses = {}
  for _, r in pairs(res or {}) do
    for _, l in ipairs(r.result or {}) do lenses[#lenses + 1] = l end
  end
  assert(#lenses == 2, vim.inspect(lenses))
  assert(lenses[1].command.title:find("Compare with previous pass", 1, true), vim.inspect(lenses[1]))
  assert(lenses[2].command.command == "mirdsl.showGraph", vim.inspect(lenses[2]))
  require("mirdsl").last_compare = nil
  vim.lsp.commands[lenses[1].command.command](lenses[1].command, {})
  wait(20000, function() return require("mirdsl").last_compare ~= nil end, "the comparison from the lens")
end)

suite.finish()
