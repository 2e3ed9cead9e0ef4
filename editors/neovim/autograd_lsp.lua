-- Neovim 0.11+: ~/.config/nvim/lsp/autograd_lsp.lua returns this table, or call
-- vim.lsp.config("autograd_lsp", {...}) with it; then vim.lsp.enable("autograd_lsp").
vim.lsp.config("autograd_lsp", {
  cmd = { "autograd-lsp", "serve" },
  filetypes = { "python" },
  root_markers = { "pyproject.toml", "setup.py", ".git" },
  init_options = {
    -- locale = "zh-CN",
    -- ignore = { "AG3" },
  },
  settings = {
    ["autograd-lsp"] = {
      -- severity = { ["nonscalar-backward"] = "warning" },
    },
  },
})
vim.lsp.enable("autograd_lsp")

-- Fix everything fixable on demand:
vim.keymap.set("n", "<leader>af", function()
  vim.lsp.buf.code_action({ context = { only = { "source.fixAll.autograd-lsp" } }, apply = true })
end, { desc = "autograd-lsp: fix all" })
