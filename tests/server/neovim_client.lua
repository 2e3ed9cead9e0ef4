-- A headless Neovim 0.7 session against autograd-lsp: open a file, collect the
-- diagnostics, hover a variable, apply the first AG101 quick fix, shut down.
-- Driven by tests/server/test_neovim.py through environment variables; writes
-- what it saw as JSON to $AG_OUT.
local env = vim.env
local results = { published = {}, log = {} }

local function write_results()
  local file = io.open(env.AG_OUT, "w")
  file:write(vim.fn.json_encode(results))
  file:close()
end

local function finish(message)
  if message then results.error = message end
  write_results()
  vim.cmd("qall!")
end

local function last_publish_for(uri)
  for i = #results.published, 1, -1 do
    if results.published[i].uri == uri then return results.published[i] end
  end
end

local function codes_of(publish)
  local codes = {}
  for _, d in ipairs(publish and publish.diagnostics or {}) do table.insert(codes, d.code) end
  return codes
end

vim.api.nvim_create_autocmd("VimEnter", { callback = function()
  local ok, err = pcall(function()
    vim.cmd("edit " .. vim.fn.fnameescape(env.AG_FILE))
    local bufnr = vim.api.nvim_get_current_buf()
    local uri = vim.uri_from_bufnr(bufnr)
    local capabilities = vim.lsp.protocol.make_client_capabilities()
    capabilities.general = { positionEncodings = { env.AG_ENCODING } }
    local client_id = vim.lsp.start_client({
      name = "autograd-lsp",
      cmd = { env.AG_PYTHON, "-m", "autograd_lsp.server" },
      cmd_env = { PYTHONPATH = env.AG_PYTHONPATH },
      root_dir = vim.fn.fnamemodify(env.AG_FILE, ":p:h"),
      capabilities = capabilities,
      -- Neovim 0.7 reads no `positionEncoding` from the server: tell it the same.
      offset_encoding = env.AG_ENCODING,
      init_options = { locale = env.AG_LOCALE },
      handlers = {
        ["textDocument/publishDiagnostics"] = function(err, result, ctx, config)
          table.insert(results.published, result)
          return vim.lsp.diagnostic.on_publish_diagnostics(err, result, ctx, config)
        end,
        ["window/logMessage"] = function(_, result)
          table.insert(results.log, result.message)
        end,
      },
      on_exit = function(code, signal) results.exit_code = code; results.exit_signal = signal end,
    })
    vim.lsp.buf_attach_client(bufnr, client_id)
    local client = vim.lsp.get_client_by_id(client_id)

    -- 1. Diagnostics arrive (pushed).
    vim.wait(30000, function()
      local p = last_publish_for(uri)
      return p ~= nil and #p.diagnostics > 0
    end, 20)
    local first = last_publish_for(uri)
    if not first then return finish("no diagnostics published") end
    results.first = first

    -- 2. Hover on a tensor variable.
    local hover = client.request_sync("textDocument/hover", {
      textDocument = { uri = uri },
      position = { line = tonumber(env.AG_HOVER_LINE), character = tonumber(env.AG_HOVER_CHARACTER) },
    }, 10000, bufnr)
    results.hover = hover and hover.result and hover.result.contents.value or vim.NIL

    -- 3. The first quick fix of the AG101 diagnostic, resolved if lazy, applied.
    local target
    for _, d in ipairs(first.diagnostics) do
      if d.code == "AG101" then target = d; break end
    end
    if not target then return finish("no AG101 diagnostic") end
    local response = client.request_sync("textDocument/codeAction", {
      textDocument = { uri = uri }, range = target.range,
      context = { diagnostics = { target }, only = { "quickfix" } },
    }, 10000, bufnr)
    local action = response.result[1]
    results.action_title = action.title
    if not action.edit then
      action = client.request_sync("codeAction/resolve", action, 10000, bufnr).result
    end
    vim.lsp.util.apply_workspace_edit(action.edit, client.offset_encoding)
    local changed_version = vim.lsp.util.buf_versions[bufnr]
    vim.wait(30000, function()
      local p = last_publish_for(uri)
      return p ~= nil and p.version == changed_version
    end, 20)
    results.after_fix = last_publish_for(uri)
    results.after_fix_codes = codes_of(results.after_fix)
    results.fixed_line = vim.api.nvim_buf_get_lines(bufnr, target.range.start.line,
                                                     target.range.start.line + 1, false)[1]

    -- 4. shutdown + exit; on_exit records the server's exit code.
    client.stop()
    vim.wait(10000, function() return results.exit_code ~= nil end, 20)
  end)
  finish(not ok and tostring(err) or nil)
end })
