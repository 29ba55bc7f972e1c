-- The MindIR DSL plugin for Neovim 0.11: starts `mirdsl lsp` for `mindir` buffers,
-- registers the tree-sitter grammar, and adds :MirGraph, :MirRun, :MirIR,
-- :MirGradient and the code lens commands (mirdsl.run / showGraph / showGradient);
-- on MindSpore compile dumps (*.ir) :MirGraph, :MirComparePrevious,
-- :MirFollowNext, :MirFollowPrevious and :MirSource.
--
--   require('mirdsl').setup({ cmd = { 'mirdsl', 'lsp' }, settings = {} })

local M = {}

M.defaults = {
  -- The server command; `mirdsl` on PATH by default.
  cmd = { "mirdsl", "lsp" },
  -- Sent with workspace/didChangeConfiguration (and as `settings` to vim.lsp.start).
  settings = {},
  -- Turn inlay hints (inferred types and shapes) on in attached buffers.
  inlay_hints = true,
  -- Refresh code lenses (Run / Show graph / Show gradient) on open, save and idle.
  codelens = true,
  -- Start tree-sitter highlighting when the `mindir` parser is installed.
  treesitter = true,
  -- Root markers for the workspace folder.
  root_markers = { ".git" },
  -- How :MirGraph shows the SVG file: a function(path) or nil for vim.ui.open.
  open_svg = nil,
  -- Arguments :MirRun uses for parameters not given: "ones", "zeros" or "random".
  run_fill = "ones",
  -- Size given to symbolic dimensions (`B` in f32[B, 784]) not given to :MirRun.
  run_dim = 2,
  -- Device for :MirRun: "cpu", "gpu" or "auto" (the GPU when a CUDA driver and
  -- device are present, else the CPU), as `mirdsl run --device`.
  run_device = "cpu",
  -- Milliseconds Neovim waits after a change before sending it (its own default
  -- is 150). The server answers an edit in a few milliseconds, even on 100k-line
  -- files, so a short wait shows diagnostics sooner; 0 sends every keystroke.
  debounce_text_changes = 30,
  -- Extra on_attach(client, bufnr).
  on_attach = nil,
}

M.config = vim.deepcopy(M.defaults)

local function notify(msg, level)
  vim.notify("mirdsl: " .. msg, level or vim.log.levels.INFO)
end

local function client_for(bufnr)
  return vim.lsp.get_clients({ bufnr = bufnr, name = "mirdsl" })[1]
end

-- Top-level graphs of a buffer: { {name=, line= (0-based), params={{name=, type=}}} }.
function M.list_graphs(bufnr)
  local lines = vim.api.nvim_buf_get_lines(bufnr or 0, 0, -1, false)
  local graphs, depth = {}, 0
  for i, raw in ipairs(lines) do
    -- Drop strings and comments before counting braces.
    local line = raw:gsub('"[^"]*"', '""'):gsub("#.*$", "")
    if depth == 0 then
      local name, rest = line:match("^%s*graph%s+([%a_][%w_]*)%s*(%b())")
      if not name then
        name = line:match("^%s*graph%s+([%a_][%w_]*)%s*%(")
      end
      if name then
        local params = {}
        if rest then
          local inner = rest:sub(2, -2)
          local part, d = "", 0
          local function push()
            local p = vim.trim(part)
            if p ~= "" then
              local n, ty = p:match("^([^:]+):(.*)$")
              table.insert(params, { name = vim.trim(n or p), type = vim.trim(ty or "") })
            end
            part = ""
          end
          for c in inner:gmatch(".") do
            if c == "[" or c == "(" then d = d + 1 end
            if c == "]" or c == ")" then d = d - 1 end
            if c == "," and d == 0 then push() else part = part .. c end
          end
          push()
        end
        table.insert(graphs, { name = name, line = i - 1, params = params })
      end
    end
    for c in line:gmatch("[{}]") do
      depth = math.max(0, depth + (c == "{" and 1 or -1))
    end
  end
  return graphs
end

-- The top-level graph around the cursor (or the last one above it).
function M.graph_at_cursor(bufnr)
  bufnr = bufnr or 0
  local row = vim.api.nvim_win_get_cursor(0)[1] - 1
  local found
  for _, g in ipairs(M.list_graphs(bufnr)) do
    if g.line <= row then found = g end
  end
  return found
end

local function find_graph(bufnr, name)
  for _, g in ipairs(M.list_graphs(bufnr)) do
    if g.name == name then return g end
  end
end

-- Symbolic dimensions named in parameter annotations.
local function symbolic_dims(params)
  local out, seen = {}, {}
  for _, p in ipairs(params) do
    for inner in p.type:gmatch("%[([^%]]*)%]") do
      for d in inner:gmatch("[^,]+") do
        d = vim.trim(d)
        if d:match("^[%a_][%w_]*$") and not seen[d] then
          seen[d] = true
          table.insert(out, d)
        end
      end
    end
  end
  return out
end

-- Parses `x=[1.0, 2.0] y=ones B=4` (spaces or commas between) into args and dims.
function M.parse_run_args(text, params, fill, dim)
  local args, dims = {}, {}
  local names = {}
  for i, p in ipairs(params) do
    names[p.name] = true
    names[tostring(i - 1)] = p.name
    args[p.name] = p.type == "" and "1.0" or (fill or "ones")
  end
  for _, d in ipairs(symbolic_dims(params)) do dims[d] = dim or 2 end
  -- Split on whitespace/commas outside brackets and quotes.
  local parts, cur, depth, quoted = {}, "", 0, false
  for c in (text or ""):gmatch(".") do
    if c == '"' then quoted = not quoted end
    if not quoted and (c == "[" or c == "(") then depth = depth + 1 end
    if not quoted and (c == "]" or c == ")") then depth = depth - 1 end
    if not quoted and depth == 0 and (c == " " or c == ",") then
      if cur ~= "" then table.insert(parts, cur) end
      cur = ""
    else
      cur = cur .. c
    end
  end
  if cur ~= "" then table.insert(parts, cur) end
  for _, part in ipairs(parts) do
    local k, v = part:match("^([^=]+)=(.+)$")
    if not k then return nil, "expected NAME=VALUE, got `" .. part .. "`" end
    if names[k] == true then
      args[k] = v
    elseif type(names[k]) == "string" then
      args[names[k]] = v
    elseif k:match("^[%a_][%w_]*$") and v:match("^%d+$") then
      dims[k] = tonumber(v)
    else
      return nil, "`" .. k .. "` is not a parameter of the graph"
    end
  end
  return { args = args, dims = dims }
end

-- A run result (the JSON `mirdsl run --format json` prints) as lines of text.
function M.format_result(v, indent)
  indent = indent or ""
  if v == nil or v == vim.NIL then return { indent .. "none" } end
  if type(v) == "table" and vim.islist(v) then
    local out = { indent .. "(tuple of " .. #v .. ")" }
    for i, item in ipairs(v) do
      local sub = M.format_result(item, indent .. "  ")
      sub[1] = indent .. "  [" .. (i - 1) .. "] " .. vim.trim(sub[1])
      vim.list_extend(out, sub)
    end
    return out
  end
  if type(v) == "table" and v.shape and v.data then
    local shown = {}
    for i = 1, math.min(#v.data, 24) do shown[i] = tostring(v.data[i]) end
    local more = #v.data > 24 and (", … (" .. #v.data .. " values)") or ""
    local shape = {}
    for i, d in ipairs(v.shape) do shape[i] = tostring(d) end
    return { indent .. v.dtype .. "[" .. table.concat(shape, ", ") .. "] = [" .. table.concat(shown, ", ") .. more .. "]" }
  end
  if type(v) == "table" and v.value ~= nil then
    return { indent .. (v.dtype and (v.dtype .. " ") or "") .. tostring(v.value) }
  end
  return { indent .. vim.json.encode(v) }
end

-- A scratch buffer named NAME (reused), filled with LINES, shown in a split.
local function scratch(name, lines, filetype)
  local bufnr = vim.fn.bufnr(name)
  if bufnr == -1 then
    bufnr = vim.api.nvim_create_buf(true, true)
    vim.api.nvim_buf_set_name(bufnr, name)
    vim.bo[bufnr].bufhidden = "hide"
    vim.bo[bufnr].swapfile = false
  end
  vim.bo[bufnr].modifiable = true
  vim.api.nvim_buf_set_lines(bufnr, 0, -1, false, lines)
  vim.bo[bufnr].modifiable = false
  vim.bo[bufnr].modified = false
  if filetype then vim.bo[bufnr].filetype = filetype end
  if vim.fn.bufwinid(bufnr) == -1 then
    vim.cmd("botright split")
    vim.api.nvim_win_set_buf(0, bufnr)
  end
  return bufnr
end

-- Sends a custom request for the graph NAME (or the one under the cursor).
local function graph_request(method, extra, name, on_result)
  local bufnr = vim.api.nvim_get_current_buf()
  local client = client_for(bufnr)
  if not client then return notify("the language server is not attached to this buffer", vim.log.levels.ERROR) end
  local graph = (name and name ~= "") and find_graph(bufnr, name) or M.graph_at_cursor(bufnr)
  if not graph and name and name ~= "" then graph = { name = name, params = {} } end
  if not graph then return notify("no graph under the cursor", vim.log.levels.WARN) end
  local params = { uri = vim.uri_from_bufnr(bufnr), graph = graph.name }
  if type(extra) == "function" then
    params = extra(params, graph)
  elseif extra then
    params = vim.tbl_extend("force", params, extra)
  end
  if not params then return end
  client:request(method, params, function(err, result)
    if err then return notify(method .. " failed: " .. (err.message or vim.inspect(err)), vim.log.levels.ERROR) end
    on_result(result, graph, bufnr)
  end, bufnr)
end

-- :MirIR / :MirGradient
function M.show_ir(kind, name)
  graph_request("mirdsl/ir", { kind = kind or "ir" }, name, function(result, graph)
    local text = result and result.text or ""
    local suffix = kind == "gradient" and "gradient" or "ir"
    scratch("mirdsl://" .. suffix .. "/" .. graph.name .. ".mir", vim.split(text, "\n", { trimempty = false }), "mindir")
  end)
end

-- The graph view of a compile dump's subgraph NAME, else the one under the
-- cursor, grouped by scope (an SVG file, opened as :MirGraph opens one).
local function show_dump_graph(name)
  local bufnr = vim.api.nvim_get_current_buf()
  local client = client_for(bufnr)
  if not client then return notify("the language server is not attached to this buffer", vim.log.levels.ERROR) end
  local params = { uri = vim.uri_from_bufnr(bufnr), position = vim.lsp.util.make_position_params(0, client.offset_encoding).position }
  if name and name ~= "" then params.graph = name end
  client:request("mirdsl/graph", params, function(err, result)
    if err then return notify("mirdsl/graph failed: " .. (err.message or vim.inspect(err)), vim.log.levels.ERROR) end
    local path = vim.fn.tempname() .. "-" .. result.graph:gsub("[^%w_.-]", "_") .. ".svg"
    vim.fn.writefile(vim.split(result.svg or "", "\n"), path)
    M.last_graph_file = path
    local open = M.config.open_svg or function(p)
      local _, e = vim.ui.open(p)
      if e then notify("cannot open " .. p .. ": " .. e, vim.log.levels.WARN) end
    end
    open(path)
    notify("graph " .. result.graph .. " written to " .. path)
  end, bufnr)
end

-- :MirComparePrevious: the structural diff of the stage before this dump in
-- its folder and this one (as `mirdsl diff PREVIOUS THIS`), in a scratch buffer.
function M.compare_previous()
  local bufnr = vim.api.nvim_get_current_buf()
  local client = client_for(bufnr)
  if not client then return notify("the language server is not attached to this buffer", vim.log.levels.ERROR) end
  client:request("mirdsl/dump/compare", { uri = vim.uri_from_bufnr(bufnr) }, function(err, result)
    if err then return notify(err.message or vim.inspect(err), vim.log.levels.WARN) end
    local prev = vim.fs.basename(vim.uri_to_fname(result.previous))
    local this = vim.fs.basename(vim.api.nvim_buf_get_name(bufnr))
    M.last_compare = scratch("mirdsl://compare/" .. prev .. " -> " .. this, vim.split(result.text, "\n", { trimempty = true }), nil)
  end, bufnr)
end

-- :MirFollowNext[!] / :MirFollowPrevious[!]: the node under the cursor in the
-- next or previous stage of the dump's folder (with !, the next or previous
-- stage that changes it) (paired by scope, debug name and
-- structure, as `mirdsl diff` pairs them).
function M.follow_node(direction, until_change)
  local bufnr = vim.api.nvim_get_current_buf()
  local client = client_for(bufnr)
  if not client then return notify("the language server is not attached to this buffer", vim.log.levels.ERROR) end
  local params = {
    uri = vim.uri_from_bufnr(bufnr),
    position = vim.lsp.util.make_position_params(0, client.offset_encoding).position,
    direction = direction,
    untilChange = until_change or false,
  }
  client:request("mirdsl/dump/follow", params, function(err, result)
    if err then return notify(err.message or vim.inspect(err), vim.log.levels.WARN) end
    vim.lsp.util.show_document({ uri = result.uri, range = result.range }, client.offset_encoding, { focus = true })
    notify(result.message, result.found and vim.log.levels.INFO or vim.log.levels.WARN)
  end, bufnr)
end

-- :MirSource: opens the line of your own Python code that made the dump's
-- node under the cursor (what the hover links to).
function M.dump_source()
  local bufnr = vim.api.nvim_get_current_buf()
  local client = client_for(bufnr)
  if not client then return notify("the language server is not attached to this buffer", vim.log.levels.ERROR) end
  local params = { uri = vim.uri_from_bufnr(bufnr), position = vim.lsp.util.make_position_params(0, client.offset_encoding).position }
  client:request("mirdsl/dump/source", params, function(err, result)
    if err then return notify(err.message or vim.inspect(err), vim.log.levels.WARN) end
    if not result then return notify("no line of your own code made this node", vim.log.levels.WARN) end
    vim.cmd.edit(vim.fn.fnameescape(vim.uri_to_fname(result.uri)))
    vim.api.nvim_win_set_cursor(0, { result.line + 1, 0 })
  end, bufnr)
end

-- :MirGraph
function M.show_graph(name)
  if vim.bo.filetype == "mindspore-ir" then return show_dump_graph(name) end
  graph_request("mirdsl/graph", nil, name, function(result, graph)
    local content, ext = result and result.svg, "svg"
    if type(content) ~= "string" then content, ext = result and result.dot or "", "dot" end
    local path = vim.fn.tempname() .. "-" .. graph.name .. "." .. ext
    vim.fn.writefile(vim.split(content, "\n"), path)
    M.last_graph_file = path
    local open = M.config.open_svg or function(p)
      local _, err = vim.ui.open(p)
      if err then notify("cannot open " .. p .. ": " .. err, vim.log.levels.WARN) end
    end
    open(path)
    notify("graph " .. graph.name .. " written to " .. path)
  end)
end

-- :MirRun [NAME=VALUE ...]
function M.run(args_text, name)
  graph_request("mirdsl/run", function(params, graph)
    local req, err = M.parse_run_args(args_text, graph.params or {}, M.config.run_fill, M.config.run_dim)
    if not req then
      notify(err, vim.log.levels.ERROR)
      return nil
    end
    params.args, params.dims, params.device = req.args, req.dims, M.config.run_device
    M._last_run = params
    return params
  end, name, function(result, graph)
    local parts = {}
    for k, v in pairs(M._last_run.args) do table.insert(parts, k .. "=" .. v) end
    table.sort(parts)
    local lines = { "▶ " .. graph.name .. "(" .. table.concat(parts, ", ") .. ") on " .. M.config.run_device }
    vim.list_extend(lines, M.format_result(result and result.result))
    scratch("mirdsl://run/" .. graph.name, lines, nil)
  end)
end

local function graph_names(bufnr)
  return vim.tbl_map(function(g) return g.name end, M.list_graphs(bufnr or 0))
end

local commands_made = false
local function make_commands()
  if commands_made then return end
  commands_made = true
  local complete = function() return graph_names(0) end
  vim.api.nvim_create_user_command("MirGraph", function(o) M.show_graph(o.args) end,
    { nargs = "?", complete = complete, desc = "mirdsl: draw the graph under the cursor (SVG) and open it" })
  vim.api.nvim_create_user_command("MirIR", function(o) M.show_ir("ir", o.args) end,
    { nargs = "?", complete = complete, desc = "mirdsl: the IR of the graph under the cursor" })
  vim.api.nvim_create_user_command("MirGradient", function(o) M.show_ir("gradient", o.args) end,
    { nargs = "?", complete = complete, desc = "mirdsl: the gradient program of the graph under the cursor" })
  vim.api.nvim_create_user_command("MirRun", function(o) M.run(o.args) end,
    { nargs = "*", desc = "mirdsl: run the graph under the cursor (:MirRun x=[1.0, 2.0] B=4)" })
  vim.api.nvim_create_user_command("MirComparePrevious", function() M.compare_previous() end,
    { desc = "mirdsl: the structural diff of the previous stage of this compile dump and this one" })
  vim.api.nvim_create_user_command("MirSource", function() M.dump_source() end,
    { desc = "mirdsl: the line of your Python code that made the compile dump's node under the cursor" })
  -- With a bang: past the stages that leave the node as it is.
  vim.api.nvim_create_user_command("MirFollowNext", function(o) M.follow_node("next", o.bang) end,
    { bang = true, desc = "mirdsl: the node under the cursor in the next stage of the compile dump (!: the next that changes it)" })
  vim.api.nvim_create_user_command("MirFollowPrevious", function(o) M.follow_node("previous", o.bang) end,
    { bang = true, desc = "mirdsl: the node under the cursor in the previous stage of the compile dump (!: the previous that changes it)" })
  vim.api.nvim_create_user_command("MirRestart", function()
    for _, c in ipairs(vim.lsp.get_clients({ name = "mirdsl" })) do c:stop() end
    vim.defer_fn(function()
      for _, b in ipairs(vim.api.nvim_list_bufs()) do
        if vim.api.nvim_buf_is_loaded(b) and vim.bo[b].filetype == "mindir" then M.start(b) end
      end
    end, 500)
  end, { desc = "mirdsl: restart the language server" })
  -- Code lens commands from the server: arguments are (uri, graph).
  local function lens(fn)
    return function(command)
      local a = command.arguments or {}
      local bufnr = a[1] and vim.uri_to_bufnr(a[1]) or 0
      if vim.api.nvim_get_current_buf() ~= bufnr then vim.api.nvim_set_current_buf(bufnr) end
      fn(a[2])
    end
  end
  vim.lsp.commands["mirdsl.run"] = lens(function(g) M.run("", g) end)
  vim.lsp.commands["mirdsl.showGraph"] = lens(function(g) M.show_graph(g) end)
  vim.lsp.commands["mirdsl.showGradient"] = lens(function(g) M.show_ir("gradient", g) end)
  vim.lsp.commands["mirdsl.showIr"] = lens(function(g) M.show_ir("ir", g) end)
  -- On compile dumps: the lens above the dump (its argument is the dump's URI).
  vim.lsp.commands["mirdsl.comparePreviousPass"] = lens(function() M.compare_previous() end)
end

-- Starts (or reuses) the server for a buffer.
function M.start(bufnr)
  bufnr = bufnr or vim.api.nvim_get_current_buf()
  local cfg = M.config
  local fname = vim.api.nvim_buf_get_name(bufnr)
  local root = vim.fs.root(bufnr, cfg.root_markers) or vim.fs.dirname(fname) or vim.fn.getcwd()
  return vim.lsp.start({
    name = "mirdsl",
    cmd = cfg.cmd,
    root_dir = root,
    settings = cfg.settings,
    flags = { debounce_text_changes = cfg.debounce_text_changes },
    -- The code lenses' commands are the plugin's (vim.lsp.commands below).
    init_options = {
      inlayHints = { enabled = cfg.inlay_hints },
      clientCommands = { "mirdsl.run", "mirdsl.showGraph", "mirdsl.showGradient" },
    },
    on_attach = function(client, b)
      if cfg.inlay_hints and client:supports_method("textDocument/inlayHint") then
        vim.lsp.inlay_hint.enable(true, { bufnr = b })
      end
      if cfg.codelens and client:supports_method("textDocument/codeLens") then
        vim.lsp.codelens.refresh({ bufnr = b })
        vim.api.nvim_create_autocmd({ "BufEnter", "BufWritePost", "CursorHold", "InsertLeave" }, {
          buffer = b,
          group = vim.api.nvim_create_augroup("mirdsl_codelens_" .. b, { clear = true }),
          callback = function() vim.lsp.codelens.refresh({ bufnr = b }) end,
        })
      end
      if cfg.on_attach then cfg.on_attach(client, b) end
    end,
  }, { bufnr = bufnr })
end

-- The tree-sitter grammar: filetype `mindir` uses the parser named `mindir`
-- (parser/mindir.so on 'runtimepath'; see scripts/build-parser.sh).
function M.treesitter_available()
  local ok = pcall(vim.treesitter.language.add, "mindir")
  return ok
end

function M.setup(opts)
  M.config = vim.tbl_deep_extend("force", vim.deepcopy(M.defaults), opts or {})
  vim.filetype.add({ extension = { mir = "mindir" } })
  vim.treesitter.language.register("mindir", "mindir")
  make_commands()
  local group = vim.api.nvim_create_augroup("mirdsl", { clear = true })
  local function attach(bufnr)
    if M.config.treesitter and M.treesitter_available() then
      pcall(vim.treesitter.start, bufnr, "mindir")
    end
    vim.bo[bufnr].commentstring = "# %s"
    -- Only real files and unnamed buffers go to the server, not our scratch views.
    if not vim.api.nvim_buf_get_name(bufnr):match("^mirdsl://") then M.start(bufnr) end
  end
  vim.api.nvim_create_autocmd("FileType", {
    group = group,
    pattern = "mindir",
    callback = function(ev) attach(ev.buf) end,
  })
  -- MindSpore's compile dumps (*.ir, filetype `mindspore-ir`): the same server
  -- gives their outline, folding, definition, references and hover.
  vim.api.nvim_create_autocmd("FileType", {
    group = group,
    pattern = "mindspore-ir",
    callback = function(ev) M.start(ev.buf) end,
  })
  -- Buffers already open when setup() runs.
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(b) and vim.bo[b].filetype == "mindir" then attach(b) end
    if vim.api.nvim_buf_is_loaded(b) and vim.bo[b].filetype == "mindspore-ir" then M.start(b) end
  end
end

return M
