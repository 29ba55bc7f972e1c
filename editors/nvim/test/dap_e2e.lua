-- End to end: nvim-dap in a real Neovim 0.11 debugs a graph through `mirdsl dap`:
-- a breakpoint in `main`, the stop, a tensor in the frame's variables, stepping
-- into a called graph, evaluate, run to cursor, continue to the end; then a
-- MindSpore dump (scoped_net.ir) with its scopes in the frame and the hover. Run by run-dap.sh.
local ws = os.getenv("MIRDSL_WS")
vim.opt.rtp:prepend(os.getenv("MIRDSL_PLUGIN"))
vim.opt.rtp:prepend(os.getenv("MIRDSL_NVIM_DAP"))
local H = dofile(vim.fs.dirname(debug.getinfo(1, "S").source:sub(2)) .. "/harness.lua")
local fail = H.fail
-- Quiet checks: the script prints its own progress.
local function check(cond, msg)
  if not cond then fail(msg) end
end

require("mirdsl").setup({ cmd = { os.getenv("MIRDSL"), "lsp" }, treesitter = false, codelens = false })
check(require("mirdsl.dap").setup(), "mirdsl.dap setup")
local dap = require("dap")

vim.cmd("edit " .. ws .. "/debug.mir")
local file = vim.api.nvim_buf_get_name(0)
-- A breakpoint on `b = square(a)` (line 23).
vim.api.nvim_win_set_cursor(0, { 23, 0 })
dap.toggle_breakpoint()
-- The graph under the cursor is `main`; its argument from :MirDebug's text.
vim.cmd("MirDebug main x=[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]")

local function stopped()
  local s = dap.session()
  return s ~= nil and s.stopped_thread_id ~= nil and s.current_frame ~= nil
end
check(vim.wait(20000, stopped, 50), "no stop at the breakpoint")
local s = dap.session()
check(s.current_frame.line == 23, "stopped on line " .. tostring(s.current_frame.line))
check(s.current_frame.name == "main", "frame " .. tostring(s.current_frame.name))
check(vim.api.nvim_win_get_cursor(0)[1] == 23, "the cursor is on the stop")

-- The frame's variables: `x` as a tensor with its statistics.
local got
s:request("scopes", { frameId = s.current_frame.id }, function(err, r)
  check(not err, "scopes: " .. vim.inspect(err))
  s:request("variables", { variablesReference = r.scopes[1].variablesReference }, function(err2, v)
    check(not err2, "variables: " .. vim.inspect(err2))
    got = v.variables
  end)
end)
check(vim.wait(10000, function() return got ~= nil end, 20), "no variables")
local x
for _, v in ipairs(got) do
  if v.name == "x" then x = v end
end
check(x ~= nil, "no x in " .. vim.inspect(got))
check(x.type == "f32[2, 3]", "x's type " .. tostring(x.type))
check(x.value:find("min=1 max=6", 1, true) ~= nil, "x's value " .. x.value)
print("x = " .. x.value)

-- Evaluate in the frame (the REPL's request).
local ev
s:evaluate("ReduceSum(a)", function(err, r)
  check(not err, "evaluate: " .. vim.inspect(err))
  ev = r
end)
check(vim.wait(10000, function() return ev ~= nil end, 20), "no evaluate answer")
check(ev.result == "f32 27", "ReduceSum(a) = " .. tostring(ev.result))

-- Into `square`.
dap.step_into()
check(vim.wait(10000, function()
  local ss = dap.session()
  return ss and ss.current_frame and ss.current_frame.name == "square"
end, 20), "step into square")
check(dap.session().current_frame.line == 9, "square's line")

-- Run to cursor: back in `main`, on `d = dense(...)` (line 25), past the
-- breakpoint's line; nvim-dap puts the breakpoints back once stopped.
vim.api.nvim_win_set_cursor(0, { 25, 2 })
dap.run_to_cursor()
check(vim.wait(10000, function()
  local ss = dap.session()
  return ss and ss.stopped_thread_id and ss.current_frame
    and ss.current_frame.name == "main" and ss.current_frame.line == 25
end, 20), "run to cursor: stopped at " .. vim.inspect(dap.session().current_frame and
  { dap.session().current_frame.name, dap.session().current_frame.line }))
local bps = require("dap.breakpoints").get()[vim.api.nvim_get_current_buf()] or {}
check(#bps == 1 and bps[1].line == 23, "breakpoints after run to cursor: " .. vim.inspect(bps))
print("run to cursor: main, line 25")

-- Continue to the end.
local ended = false
dap.listeners.after.event_terminated["mirdsl-test"] = function() ended = true end
dap.continue()
check(vim.wait(20000, function() return ended end, 50), "the session did not end")

-- A MindSpore dump: :MirDebug on scoped_net.ir stops at the imported text's
-- first statement; the frame and the hover name MindSpore's scopes.
ended = false
vim.cmd("edit " .. ws .. "/scoped_net.ir")
vim.cmd("MirDebug")
check(vim.wait(20000, function()
  local ss = dap.session()
  return ss and ss.stopped_thread_id and ss.current_frame and ss.current_frame.line == 9
end, 50), "no stop in scoped_net.ir's import")
check(dap.session().current_frame.name == "main [block.fc]", "frame " .. dap.session().current_frame.name)
check(vim.api.nvim_buf_get_name(0):match("scoped_net%.mir$") ~= nil, "the imported text is shown: " .. vim.api.nvim_buf_get_name(0))
-- Hover (nvim-dap's widget) on `block.fc.weight` of `block.fc.x = MatMul(x, block.fc.weight, ...)`.
local line = vim.api.nvim_get_current_line()
local col = line:find("block.fc.weight", 1, true)
check(col ~= nil, "line 9: " .. line)
vim.api.nvim_win_set_cursor(0, { 9, col + 10 })
require("dap.ui.widgets").hover()
local shown
check(vim.wait(10000, function()
  for _, w in ipairs(vim.api.nvim_list_wins()) do
    if vim.api.nvim_win_get_config(w).relative ~= "" then
      local text = table.concat(vim.api.nvim_buf_get_lines(vim.api.nvim_win_get_buf(w), 0, -1, false), "\n")
      if text:find("MindSpore scope", 1, true) then shown = text return true end
    end
  end
  return false
end, 50), "no hover with the scope")
check(shown:find("MindSpore scope `block.fc`: f32[3, 3]", 1, true) ~= nil, "hover: " .. shown)
print("hover: " .. shown:gsub("\n.*", ""))
dap.continue()
check(vim.wait(20000, function() return ended end, 50), "the dump's session did not end")
print("dap e2e: ok")
vim.cmd("qall!")
