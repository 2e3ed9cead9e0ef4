// Starts the autograd-lsp server for Python files and the Python cells of
// Jupyter notebooks, and passes the "autograd-lsp" settings along. Diagnostics,
// hovers, quick fixes and fix-all on save
// ("editor.codeActionsOnSave": {"source.fixAll.autograd-lsp": "explicit"}) are
// plain LSP, handled by vscode-languageclient; notebook cells travel with LSP
// 3.17 notebook sync, so the server sees a notebook as one program.
import { execFile } from "node:child_process";
import * as vscode from "vscode";
import {
  LanguageClient,
  LanguageClientOptions,
  ServerOptions,
  TransportKind,
} from "vscode-languageclient/node";
import { PythonExtension } from "@vscode/python-extension";

const SECTION = "autograd-lsp";
const INSTALL_HINT =
  "Install it into the selected Python interpreter from a checkout (`pip install .`) " +
  "or from its git URL (`pip install git+URL`), or set autograd-lsp.server.command.";
let client: LanguageClient | undefined;

/** Whether `command args... --version` runs and exits with 0 within a few seconds. */
function runs(command: string, args: string[]): Promise<boolean> {
  return new Promise((resolve) => {
    execFile(command, [...args, "--version"], { timeout: 15000 }, (error) => resolve(!error));
  });
}

/** The Python extension's selected interpreter for this workspace, if any. */
async function selectedPython(): Promise<string | undefined> {
  if (!vscode.extensions.getExtension("ms-python.python")) {
    return undefined;
  }
  try {
    const python = await PythonExtension.api();
    const folder = vscode.workspace.workspaceFolders?.[0]?.uri;
    const active = python.environments.getActiveEnvironmentPath(folder);
    const environment = await python.environments.resolveEnvironment(active);
    return environment?.executable.uri?.fsPath;
  } catch {
    return undefined;
  }
}

/** The command that starts the server: the setting, else the selected
 * interpreter's `python -m autograd_lsp`, else `autograd-lsp` on PATH. */
async function findServer(): Promise<string[] | undefined> {
  const configured = vscode.workspace.getConfiguration(SECTION).get<string[]>("server.command", []);
  if (configured.length > 0) {
    return configured;
  }
  const python = await selectedPython();
  if (python && (await runs(python, ["-m", "autograd_lsp"]))) {
    return [python, "-m", "autograd_lsp", "serve"];
  }
  if (await runs("autograd-lsp", [])) {
    return ["autograd-lsp", "serve"];
  }
  return undefined;
}

function initializationOptions(): Record<string, unknown> {
  const settings = vscode.workspace.getConfiguration(SECTION);
  const options: Record<string, unknown> = { debounceMs: settings.get<number>("debounceMs", 0) };
  for (const key of ["enable", "select", "ignore", "severity", "locale"]) {
    const value = settings.get(key);
    if (value !== null && value !== undefined && value !== "auto") {
      options[key] = value;
    }
  }
  return options;
}

function clientOptions(): LanguageClientOptions {
  return {
    documentSelector: [
      { scheme: "file", language: "python" },
      { scheme: "untitled", language: "python" },
      // The Python cells of notebooks, sent with notebook document sync.
      { notebook: "jupyter-notebook", language: "python" },
    ],
    initializationOptions: initializationOptions(),
    synchronize: {
      fileEvents: vscode.workspace.createFileSystemWatcher("**/pyproject.toml"),
    },
  };
}

async function start(): Promise<void> {
  const command = await findServer();
  if (!command) {
    const choice = await vscode.window.showErrorMessage(
      `autograd-lsp: the server is not installed. ${INSTALL_HINT}`, "Open Setting");
    if (choice === "Open Setting") {
      await vscode.commands.executeCommand("workbench.action.openSettings", `${SECTION}.server.command`);
    }
    return;
  }
  const [executable, ...args] = command;
  const server: ServerOptions = { command: executable, args, transport: TransportKind.stdio };
  client = new LanguageClient(SECTION, "autograd-lsp", server, clientOptions());
  await client.start();
}

async function restart(): Promise<void> {
  await client?.stop();
  client = undefined;
  await start();
}

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  context.subscriptions.push(
    vscode.commands.registerCommand("autograd-lsp.restart", restart),
    vscode.workspace.onDidChangeConfiguration(async (event) => {
      // A new server command or debounce needs a new process; the other settings
      // are re-read by the server on workspace/didChangeConfiguration.
      if (event.affectsConfiguration(`${SECTION}.server.command`) ||
          event.affectsConfiguration(`${SECTION}.debounceMs`)) {
        await restart();
      }
    }),
  );
  const python = vscode.extensions.getExtension("ms-python.python");
  if (python) {
    // A newly selected interpreter may be the one that has autograd-lsp.
    const api = await PythonExtension.api().catch(() => undefined);
    api?.environments.onDidChangeActiveEnvironmentPath(() => restart(), undefined, context.subscriptions);
  }
  await start();
}

export async function deactivate(): Promise<void> {
  await client?.stop();
}
