-- Headless Neovim (0.7 or 0.11) set up as editors/neovim/README.md says, driven
-- through one session with autograd-lsp: open a file, wait for its diagnostics,
-- hover a variable, apply the first quick fix of the first AG101 diagnostic, see
-- the diagnostics change, stop the server. Writes what it saw as JSON to $AG_OUT.
local env = vim.env
local results = { log = {} }
vim.lsp.set_log_level(env.AG_LSP_LOG or "warn")

local function finish(message)
  if message then results.error = message end
  local file = io.open(env.AG_OUT, "w")
  file:write(vim.fn.json_encode(results))
  file:close()
  vim.cmd("qall!")
end

local function on_exit(code, signal)
  results.exit_code = code
  results.exit_signal = signal
end

-- What the user's init.lua holds. The test only adds an on_exit callback, to
-- see the server's exit code.
if env.AG_NEOVIM == "0.7" then
  local start_client = vim.lsp.start_client
  vim.lsp.start_client = function(config)
    config.on_exit = on_exit
    return start_client(config)
  end
  dofile(env.AG_INIT)   -- editors/neovim/autograd_lsp_0_7.lua, as pasted into init.lua
else
  vim.lsp.config("autograd_lsp", { on_exit = on_exit })
  vim.lsp.enable("autograd_lsp")   -- reads ~/.config/nvim/lsp/autograd_lsp.lua
end

local function lsp_diagnostics(bufnr)
  local out = {}
  for _, d in ipairs(vim.diagnostic.get(bufnr)) do
    local lsp = d.user_data and d.user_data.lsp or {}
    -- The diagnostic as the server sent it (Neovim keeps part of it in user_data);
    -- positions are ASCII-only here, so Neovim's byte columns are the server's too.
    local range = { start = { line = d.lnum, character = d.col },
                    ["end"] = { line = d.end_lnum, character = d.end_col } }
    table.insert(out, { code = lsp.code or d.code, message = d.message, severity = d.severity,
                        lsp = { range = range, code = lsp.code or d.code, message = d.message,
                                severity = d.severity, source = d.source, data = lsp.data } })
  end
  return out
end

local function count(items, code)
  local n = 0
  for _, d in ipairs(items) do if d.code == code then n = n + 1 end end
  return n
end

local function our_client(bufnr)
  local clients = vim.lsp.get_clients and vim.lsp.get_clients({ bufnr = bufnr })
    or vim.lsp.buf_get_clients(bufnr)
  for _, client in pairs(clients) do return client end
end

local function request(bufnr, method, params)
  local responses, problem = vim.lsp.buf_request_sync(bufnr, method, params, 60000)
  for _, response in pairs(responses or {}) do
    if response.err then error(method .. ": " .. vim.inspect(response.err)) end
    return response.result
  end
  error(method .. ": no response (" .. tostring(problem) .. ")")
end

-- nested: opening the file must fire FileType, which starts the server.
vim.api.nvim_create_autocmd("VimEnter", { nested = true, callback = function()
  local ok, err = pcall(function()
    vim.cmd("edit " .. vim.fn.fnameescape(env.AG_FILE))
    local bufnr = vim.api.nvim_get_current_buf()
    local uri = vim.uri_from_bufnr(bufnr)
    if env.AG_NEOVIM ~= "0.7" then
      results.config_cmd = vim.lsp.config.autograd_lsp.cmd
    end

    -- 1. Diagnostics (pushed to 0.7, pulled by 0.11).
    vim.wait(60000, function() return #vim.diagnostic.get(bufnr) > 0 end, 50)
    local client = our_client(bufnr)
    if not client then
      return finish("no client attached (filetype " .. vim.bo[bufnr].filetype .. ", "
                    .. #vim.lsp.get_active_clients() .. " clients)")
    end
    results.client_name = client.name
    results.offset_encoding = client.offset_encoding
    results.first = lsp_diagnostics(bufnr)
    if #results.first == 0 then return finish("no diagnostics") end

    -- 2. Hover.
    local hover = request(bufnr, "textDocument/hover", {
      textDocument = { uri = uri },
      position = { line = tonumber(env.AG_HOVER_LINE), character = tonumber(env.AG_HOVER_CHARACTER) },
    })
    results.hover = hover and hover.contents.value or vim.NIL

    -- 3. The first quick fix of the first AG101 diagnostic, resolved if lazy, applied.
    local target
    for _, d in ipairs(results.first) do
      if d.code == "AG101" then target = d.lsp; break end
    end
    if not target then return finish("no AG101 diagnostic") end
    local actions = request(bufnr, "textDocument/codeAction", {
      textDocument = { uri = uri }, range = target.range,
      context = { diagnostics = { target }, only = { "quickfix" } },
    })
    local action = actions and actions[1]
    if not action then return finish("no code action for " .. vim.inspect(target)) end
    results.action_title = action.title
    if not action.edit then
      action = request(bufnr, "codeAction/resolve", action)
    end
    vim.lsp.util.apply_workspace_edit(action.edit, client.offset_encoding)
    results.fixed_line = vim.api.nvim_buf_get_lines(bufnr, target.range.start.line,
                                                     target.range.start.line + 1, false)[1]
    local before = count(results.first, "AG101")
    vim.wait(60000, function() return count(lsp_diagnostics(bufnr), "AG101") < before end, 50)
    results.after_fix = lsp_diagnostics(bufnr)

    -- 4. shutdown + exit; on_exit records the server's exit code.
    vim.lsp.stop_client(client.id)
    vim.wait(15000, function() return results.exit_code ~= nil end, 50)
  end)
  finish(not ok and tostring(err) or nil)
end })
