-- Neovim 0.7 - 0.10: put in init.lua (0.8+ can use vim.lsp.start with the same table).
local autograd_lsp_client

vim.api.nvim_create_autocmd("FileType", {
  pattern = "python",
  callback = function(args)
    -- One server for the whole session, attached to every Python buffer.
    if autograd_lsp_client == nil or vim.lsp.get_client_by_id(autograd_lsp_client) == nil then
      autograd_lsp_client = vim.lsp.start_client({
        name = "autograd-lsp",
        cmd = { "autograd-lsp", "serve" },
        root_dir = vim.fn.getcwd(),
        -- Options go here: Neovim 0.7 sends `init_options` with initialize, and
        -- never sends `settings` to a server that does not ask for them.
        -- Values given replace the project's [tool.autograd-lsp] for these keys.
        init_options = {
          -- locale = "zh-CN",
          -- ignore = { "AG3" },
          -- severity = { ["nonscalar-backward"] = "warning" },
        },
      })
    end
    vim.lsp.buf_attach_client(args.buf, autograd_lsp_client)
  end,
})
