"""Starting the server under a given client profile, and waiting for it.

Profiles are the capability snapshots pytest-lsp ships: VS Code 1.65 and
Neovim 0.7 (push diagnostics, UTF-16), Neovim 0.11 (pull diagnostics, UTF-8)
and Emacs 29 (push, UTF-32).
"""
from __future__ import annotations

import asyncio
import contextlib
import sys
from pathlib import Path

from lsprotocol import types
from pytest_lsp import ClientServerConfig, client_capabilities

SERVER_COMMAND = [sys.executable, "-m", "autograd_lsp.server"]
REPO = Path(__file__).resolve().parents[2]

PROFILES = {
    "vscode": "visual_studio_code@v1.65.2",
    "neovim-0.7": "neovim@v0.7.0",
    "neovim-0.11": "neovim@v0.11.0",
    "emacs": "emacs@v29.1",
}
PUSH_PROFILES = ["vscode", "neovim-0.7", "emacs"]
ALL_PROFILES = list(PROFILES)

AG101_SOURCE = (
    "import torch\n"
    "x = torch.randn(3, requires_grad=True)\n"
    "y = x * 2\n"
    "y.backward()\n"
)


def core_findings(source: str, locale: str = "en"):
    """What the core reports on `source`: the expectations the server must carry over."""
    from autograd_lsp.analysis import Settings, analyze
    return analyze(source, Settings.build(locale=locale))


@contextlib.asynccontextmanager
async def session(profile: str = "vscode", *, locale=None, initialization_options=None,
                  configuration=None, workspace_folders=None, capabilities=None,
                  server_command=None, shutdown=True, env=None):
    client = await ClientServerConfig(server_command=server_command or SERVER_COMMAND,
                                      server_env={**_server_env(), **(env or {})}).start()
    client.published = []       # every PublishDiagnosticsParams, in order
    _record_publishes(client)
    client.registrations = []
    client.feature(types.CLIENT_REGISTER_CAPABILITY)(
        lambda params: client.registrations.extend(params.registrations))
    if configuration is not None:
        for scope, value in configuration.items():
            client.set_configuration(value, section="autograd-lsp", scope_uri=scope)
    caps = capabilities or client_capabilities(PROFILES[profile])
    client.initialize_result = await client.initialize_session(types.InitializeParams(
        capabilities=caps, locale=locale, initialization_options=initialization_options,
        workspace_folders=workspace_folders, root_uri=workspace_folders[0].uri if workspace_folders else None))
    client.pull = caps.text_document is not None and caps.text_document.diagnostic is not None
    try:
        yield client
    finally:
        if shutdown:
            await client.shutdown_session()
        await client.stop()


def _server_env():
    import os
    env = dict(os.environ)
    # The server falls back to the environment's language: tests choose it themselves.
    for variable in ("LC_ALL", "LC_MESSAGES", "LANG"):
        env.pop(variable, None)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    return env


def _record_publishes(client) -> None:
    features = client.protocol.fm.features
    original = features[types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS]

    def publish(params: types.PublishDiagnosticsParams):
        client.published.append(params)
        return original(params)
    features[types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS] = publish


def open_document(client, uri: str, text: str, version: int = 1) -> None:
    client.text_document_did_open(types.DidOpenTextDocumentParams(
        text_document=types.TextDocumentItem(uri=uri, language_id="python", version=version, text=text)))


async def diagnostics(client, uri: str, *, version: int | None = None,
                      until=None, timeout: float = 15.0) -> list[types.Diagnostic]:
    """The diagnostics of `uri` as the client sees them: pulled for pull clients,
    for push clients the newest publish (of `version`, when given) satisfying `until`."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        if client.pull:
            report = await client.text_document_diagnostic_async(types.DocumentDiagnosticParams(
                text_document=types.TextDocumentIdentifier(uri=uri)))
            items = list(report.items)
        else:
            matching = [p for p in client.published if p.uri == uri
                        and (version is None or p.version == version)]
            items = list(matching[-1].diagnostics) if matching else None
        if items is not None and (until is None or until(items)):
            return items
        if loop.time() > deadline:
            raise AssertionError(f"no diagnostics for {uri} (version {version}) matching the "
                                 f"condition; last: {items}")
        await asyncio.sleep(0.05)


def codes(items) -> list[str]:
    return [d.code for d in items]


def apply_lsp_edits(text: str, edits, encoding: str = "utf-16") -> str:
    """What an editor does with a list of TextEdits (written independently of the
    server's position code: the test must not share the server's mistakes)."""
    lines = text.split("\n")

    def offset(position: types.Position) -> int:
        if position.line >= len(lines):
            return len(text)
        line = lines[position.line]
        column = next((k for k in range(len(line) + 1)
                       if _units(line[:k], encoding) >= position.character), len(line))
        return sum(len(l) + 1 for l in lines[:position.line]) + column

    spans = sorted(((offset(e.range.start), offset(e.range.end), e.new_text) for e in edits),
                   key=lambda span: span[:2], reverse=True)
    for start, end, new_text in spans:
        text = text[:start] + new_text + text[end:]
    return text


def _units(text: str, encoding: str) -> int:
    if encoding == "utf-8":
        return len(text.encode("utf-8"))
    if encoding == "utf-16":
        return len(text.encode("utf-16-le")) // 2
    return len(text)


def edits_of(action: types.CodeAction, uri: str) -> list[types.TextEdit]:
    assert action.edit is not None, action.title
    return list(action.edit.changes[uri])
