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
        init_options = { --[[ locale = "zh-CN" ]] },
        -- Sent as workspace/didChangeConfiguration: 0.7 does not answer workspace/configuration.
        settings = { ["autograd-lsp"] = {} },
      })
    end
    vim.lsp.buf_attach_client(args.buf, autograd_lsp_client)
  end,
})
