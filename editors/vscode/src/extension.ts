// Starts `autograd-lsp serve` for Python files and passes the "autograd-lsp"
// settings along. Everything else (diagnostics, hovers, quick fixes, fix-all on
// save via "editor.codeActionsOnSave": {"source.fixAll.autograd-lsp": "explicit"})
// is plain LSP handled by vscode-languageclient.
import * as vscode from "vscode";
import {
  LanguageClient,
  LanguageClientOptions,
  ServerOptions,
  TransportKind,
} from "vscode-languageclient/node";

const SECTION = "autograd-lsp";
let client: LanguageClient | undefined;

function serverOptions(): ServerOptions {
  const configured = vscode.workspace
    .getConfiguration(SECTION)
    .get<string[]>("server.command", ["autograd-lsp", "serve"]);
  const [command, ...args] = configured.length > 0 ? configured : ["autograd-lsp", "serve"];
  return { command, args, transport: TransportKind.stdio };
}

function clientOptions(): LanguageClientOptions {
  return {
    documentSelector: [
      { scheme: "file", language: "python" },
      { scheme: "untitled", language: "python" },
    ],
    // The server asks for the section with workspace/configuration; the initial
    // values also travel as initializationOptions for the first analysis.
    initializationOptions: vscode.workspace.getConfiguration(SECTION),
    synchronize: {
      fileEvents: vscode.workspace.createFileSystemWatcher("**/pyproject.toml"),
    },
  };
}

async function start(): Promise<void> {
  client = new LanguageClient(SECTION, "autograd-lsp", serverOptions(), clientOptions());
  await client.start();
}

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  context.subscriptions.push(
    vscode.commands.registerCommand("autograd-lsp.restart", async () => {
      await client?.stop();
      await start();
    }),
    vscode.workspace.onDidChangeConfiguration(async (event) => {
      // A new server command needs a new process; other settings are re-read by
      // the server itself on workspace/didChangeConfiguration.
      if (event.affectsConfiguration(`${SECTION}.server.command`)) {
        await client?.stop();
        await start();
      }
    }),
  );
  await start();
}

export async function deactivate(): Promise<void> {
  await client?.stop();
}
