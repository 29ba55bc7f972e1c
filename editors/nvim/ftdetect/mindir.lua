-- *.mir files are MindIR DSL (filetype `mindir`).
vim.filetype.add({ extension = { mir = "mindir" } })
