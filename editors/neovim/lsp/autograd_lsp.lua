-- Neovim 0.11+: copy to ~/.config/nvim/lsp/autograd_lsp.lua, then in init.lua:
--   vim.lsp.enable("autograd_lsp")
-- Neovim reads this file when the server is enabled: it must return the table.
return {
  cmd = { "autograd-lsp", "serve" },
  filetypes = { "python" },
  root_markers = { "pyproject.toml", "setup.py", ".git" },
  -- Options the server reads at start; values given here replace the project's
  -- [tool.autograd-lsp] (pyproject.toml) for these keys, so set only what you mean to.
  init_options = {
    -- locale = "zh-CN",
    -- ignore = { "AG3" },
  },
  -- Answered to workspace/configuration (section "autograd-lsp"); the same keys.
  settings = {
    ["autograd-lsp"] = {
      -- severity = { ["nonscalar-backward"] = "warning" },
    },
  },
}
