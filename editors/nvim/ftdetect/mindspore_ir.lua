-- MindSpore's compile dumps (`save_graphs`, *.ir) are filetype `mindspore-ir`.
vim.filetype.add({ extension = { ir = "mindspore-ir" } })
