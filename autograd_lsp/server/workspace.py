"""`workspace/didChangeConfiguration`, `workspace/didChangeWatchedFiles`,
`workspace/didChangeWorkspaceFolders`, and reading `workspace/configuration`."""
from __future__ import annotations

import asyncio

from lsprotocol import types

from autograd_lsp.server.guard import report_exception
from autograd_lsp.server.imports import module_changed
from autograd_lsp.server.linting import reanalyse_open_documents, refresh_dependents
from autograd_lsp.server.settings import SECTION, EditorSettings, parse_editor_settings

# A client that never answers a request of ours must not block the server.
CLIENT_REQUEST_TIMEOUT_SECONDS = 5.0


async def fetch_configuration(ls) -> bool:
    """Ask the client for our section, globally and for each workspace folder;
    True when the answer differs from what the server had."""
    folders = [folder.uri for folder in ls.workspace.folders.values()]
    scopes = [""] + folders
    items = [types.ConfigurationItem(section=SECTION, scope_uri=scope or None) for scope in scopes]
    try:
        values = await asyncio.wait_for(
            ls.workspace_configuration_async(types.ConfigurationParams(items=items)),
            CLIENT_REQUEST_TIMEOUT_SECONDS)
    except Exception:
        report_exception(ls, "workspace/configuration")
        return False
    by_folder = {}
    for scope, value in zip(scopes, values or ()):
        editor, problems = parse_editor_settings(value)
        ls.settings.problems.extend(problems)
        by_folder[scope] = editor
    # Scopes without settings count as absent, so that an empty answer changes nothing.
    by_folder = {scope: value for scope, value in by_folder.items() if value != EditorSettings()}
    changed = by_folder != ls.settings.by_folder
    ls.settings.by_folder = by_folder
    return changed


async def did_change_configuration(ls, params: types.DidChangeConfigurationParams) -> None:
    settings = params.settings
    # Push-model clients (Neovim's `settings`, Sublime) send the values here;
    # pull-model ones send null and expect us to ask.
    if isinstance(settings, dict) and (SECTION in settings or not ls.capabilities.workspace_configuration):
        editor, problems = parse_editor_settings(settings)
        ls.settings.problems.extend(problems)
        ls.settings.by_folder = {**ls.settings.by_folder, "": editor}
    if ls.capabilities.workspace_configuration:
        await fetch_configuration(ls)
    await reanalyse_open_documents(ls)


async def did_change_watched_files(ls, params: types.DidChangeWatchedFilesParams) -> None:
    # A module changed on disk (a `git checkout`, another editor): its importers.
    # (An open document's own text is the editor's, told by didChange.)
    for change in params.changes:
        if change.uri.endswith(".py") and ls.documents.find(change.uri) is None:
            refresh_dependents(ls, change.uri, module_changed(ls, change.uri))
    if any(change.uri.endswith("pyproject.toml") for change in params.changes):
        ls.settings.forget_projects()
        await reanalyse_open_documents(ls)


async def did_change_workspace_folders(ls, params: types.DidChangeWorkspaceFoldersParams) -> None:
    try:
        if ls.capabilities.workspace_configuration:
            await fetch_configuration(ls)
        await reanalyse_open_documents(ls)
    except Exception:
        report_exception(ls, "workspace/didChangeWorkspaceFolders")
