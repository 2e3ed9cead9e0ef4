"""`initialize`, `initialized`, `shutdown`: what the client can do and wants.

(`exit` is handled by `transport`: it stops the loop, and `run` ends the
process with 0 when `shutdown` came first, 1 otherwise.)
"""
from __future__ import annotations

import asyncio
import os

from lsprotocol import types

from autograd_lsp.server.capabilities import ClientCapabilities
from autograd_lsp.server.documents import debounce_from
from autograd_lsp.server.guard import log_to_client
from autograd_lsp.server.settings import SECTION, parse_editor_settings
from autograd_lsp.config import normalize_locale
from autograd_lsp.server.texts import environment_locale
from autograd_lsp.server.workspace import CLIENT_REQUEST_TIMEOUT_SECONDS, fetch_configuration
from autograd_lsp.server.linting import reanalyse_open_documents

def initialize(ls, params: types.InitializeParams) -> None:
    ls.capabilities = ClientCapabilities.from_client(params.capabilities)
    ls.settings.client_locale = normalize_locale(params.locale)
    ls.settings.environment_locale = environment_locale(os.environ)
    editor, problems = parse_editor_settings(params.initialization_options)
    options = params.initialization_options
    if isinstance(options, dict):
        nested = options.get(SECTION) if isinstance(options.get(SECTION), dict) else options
        if "debounceMs" in nested:
            ls.debounce_seconds = debounce_from(nested["debounceMs"], ls.debounce_seconds)
    ls.settings.initialization = editor
    ls.settings.problems.extend(problems)


async def initialized(ls, params: types.InitializedParams) -> None:
    registrations = []
    if ls.capabilities.watched_files_registration:
        registrations.append(types.Registration(
            id="autograd-lsp/pyproject", method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
            register_options=types.DidChangeWatchedFilesRegistrationOptions(
                # Python files: modules that open documents import, changed on disk.
                watchers=[types.FileSystemWatcher(glob_pattern="**/pyproject.toml"),
                          types.FileSystemWatcher(glob_pattern="**/*.py")])))
    if ls.capabilities.configuration_registration:
        # Pull-model clients send didChangeConfiguration only to servers that register it.
        registrations.append(types.Registration(
            id="autograd-lsp/configuration", method=types.WORKSPACE_DID_CHANGE_CONFIGURATION,
            register_options=types.DidChangeConfigurationRegistrationOptions(section=SECTION)))
    if registrations:
        try:
            await asyncio.wait_for(
                ls.client_register_capability_async(types.RegistrationParams(registrations)),
                CLIENT_REQUEST_TIMEOUT_SECONDS)
        except Exception as exc:
            # Some clients announce dynamic registration and then refuse it; the
            # server works without (no reload on pyproject.toml changes).
            log_to_client(ls, f"autograd-lsp: client/registerCapability failed: {exc}",
                          types.MessageType.Warning)
    if ls.capabilities.workspace_configuration and await fetch_configuration(ls):
        await reanalyse_open_documents(ls)


def shutdown(ls, params) -> None:
    for uri in ls.documents.uris():
        ls.documents.close(uri)
