-- Server configurations for setups that do not call require('mirdsl').setup():
--
-- nvim-lspconfig:
--   local configs = require('lspconfig.configs')
--   configs.mirdsl = configs.mirdsl or require('mirdsl.lspconfig')
--   require('lspconfig').mirdsl.setup({})
--
-- Neovim 0.11's own configuration:
--   vim.lsp.config('mirdsl', require('mirdsl.lspconfig').config)
--   vim.lsp.enable('mirdsl')
--
-- (The :Mir* commands come with require('mirdsl').setup(); without it, the code
-- lenses' commands are carried out by the server, through workspace/executeCommand.)

local M = {}

-- nvim-lspconfig's shape.
M.default_config = {
  cmd = { "mirdsl", "lsp" },
  filetypes = { "mindir", "mindspore-ir" },
  root_dir = function(fname)
    local found = vim.fs.find({ ".git" }, { path = fname, upward = true })[1]
    return found and vim.fs.dirname(found) or vim.fs.dirname(fname)
  end,
  single_file_support = true,
  settings = {},
  init_options = { inlayHints = { enabled = true } },
  -- The server answers an edit in a few ms: send changes sooner than
  -- Neovim's default 150 ms.
  flags = { debounce_text_changes = 30 },
}

M.docs = {
  description = [[
`mirdsl lsp`: the language server of the MindIR DSL (`.mir` files, filetype `mindir`):
diagnostics, hover with inferred shapes, inlay hints, completion, go to definition,
references, rename, formatting, semantic tokens, code lenses, and the custom requests
`mirdsl/graph`, `mirdsl/ir`, `mirdsl/run`.
]],
}

-- vim.lsp.config's shape (Neovim 0.11).
M.config = {
  cmd = { "mirdsl", "lsp" },
  filetypes = { "mindir", "mindspore-ir" },
  root_markers = { ".git" },
  settings = {},
  init_options = { inlayHints = { enabled = true } },
  flags = { debounce_text_changes = 30 },
}

return M
