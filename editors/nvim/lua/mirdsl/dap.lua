-- Debugging graphs with nvim-dap (https://github.com/mfussenegger/nvim-dap):
-- the `mirdsl` adapter (`mirdsl dap` over stdio) and launch configurations
-- for `mindir` buffers.
--
--   require('mirdsl.dap').setup()            -- after require('mirdsl').setup()
--   :MirDebug [graph] [NAME=VALUE ...]       -- debug a graph (default: under the cursor)
--
-- Launch fields: program, entry, args (parameter name -> `--arg` VALUE
-- string), dims (symbol -> size), loadWeights, steps, device, stopOnEntry.
-- The `nan` exception filter: require('dap').set_exception_breakpoints({ 'nan' }).

local M = {}

local function mirdsl()
  return require("mirdsl")
end

-- The adapter: the `mirdsl` binary of the plugin's `cmd`, run as `mirdsl dap`.
function M.adapter()
  local cmd = (mirdsl().config.cmd or { "mirdsl" })[1]
  return { type = "executable", command = cmd, args = { "dap" } }
end

-- A launch configuration for `graph` (a name, or nil for the graph under the
-- cursor) of the current buffer, with :MirRun's default arguments overridden
-- by `args_text` (`x=ones, n=3`).
function M.config_for(graph, args_text, bufnr)
  bufnr = bufnr or vim.api.nvim_get_current_buf()
  local m = mirdsl()
  local here = m.graph_at_cursor(bufnr)
  local name = graph or (here and here.name)
  local info
  for _, g in ipairs(m.list_graphs(bufnr)) do
    if g.name == name then info = g end
  end
  local req = m.parse_run_args(args_text or "", info and info.params or {}, m.config.run_fill, m.config.run_dim)
    or { args = {}, dims = {} }
  local program = vim.api.nvim_buf_get_name(bufnr)
  -- A MindSpore dump (`.ir`) is imported by the adapter: with no `args` its
  -- parameters get `ones`, and it stops at the first statement, since
  -- breakpoints go in the imported text, which exists only once it runs.
  local dump = program:match("%.ir$") ~= nil or program:match("%.mindir$") ~= nil
  return {
    type = "mirdsl",
    request = "launch",
    name = "Debug " .. (name or vim.fn.fnamemodify(program, ":t")),
    program = program,
    entry = name,
    args = next(req.args) and req.args or nil,
    dims = next(req.dims) and req.dims or nil,
    device = m.config.run_device,
    stopOnEntry = dump,
  }
end

function M.setup(opts)
  opts = opts or {}
  local ok, dap = pcall(require, "dap")
  if not ok then
    vim.notify("mirdsl: nvim-dap is not installed; :MirDebug needs it", vim.log.levels.WARN)
    return false
  end
  dap.adapters.mirdsl = opts.adapter or M.adapter()
  dap.configurations.mindir = dap.configurations.mindir or {
    {
      type = "mirdsl",
      request = "launch",
      name = "Debug the graph under the cursor",
      program = "${file}",
      entry = function()
        local g = mirdsl().graph_at_cursor(0)
        return g and g.name
      end,
      args = function() return M.config_for(nil, "").args end,
      dims = function() return M.config_for(nil, "").dims end,
      stopOnEntry = false,
    },
  }
  vim.api.nvim_create_user_command("MirDebug", function(c)
    local graph, rest = c.args:match("^%s*([%a_][%w_%.]*)%s*(.*)$")
    if graph and graph:find("=") then graph, rest = nil, c.args end
    dap.run(M.config_for(graph ~= "" and graph or nil, rest or ""))
  end, { nargs = "*", desc = "mirdsl: debug a graph (default: the one under the cursor)" })
  return true
end

return M
