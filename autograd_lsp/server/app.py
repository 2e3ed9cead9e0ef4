"""The language server: its state, and every LSP method it answers, registered
in one place. Each handler lives in the module named after its concern."""
from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol

from autograd_lsp.server import (code_actions, document_sync, hover, lifecycle, notebook_sync,
                                 pull_diagnostics, workspace)
from autograd_lsp.server.capabilities import ClientCapabilities
from autograd_lsp.server.documents import DEBOUNCE_ENV, DEBOUNCE_SECONDS, Documents, debounce_from
from autograd_lsp.server.guard import ServerCancelled, guarded, report_exception
from autograd_lsp.server.imports import ModuleReader
from autograd_lsp.server.settings import SettingsStore

NAME = "autograd-lsp"


def _version() -> str:
    try:
        from importlib.metadata import version
        return version(NAME)
    except Exception:
        return "0.1.0"


class AutogradProtocol(LanguageServerProtocol):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._finished_notifications: list = []

    def _send_handler_result(self, future, *, msg_id):
        # A stopped analysis is answered with its error, without pygls' traceback
        # in the log: it is not a failure of the server.
        if not future.cancelled() and isinstance(future.exception(), ServerCancelled):
            self._request_futures.pop(msg_id, None)
            self._send_response(msg_id, error=future.exception().to_response_error())
            return
        super()._send_handler_result(future, msg_id=msg_id)

    def _check_handler_result(self, future):
        super()._check_handler_result(future)
        # pygls 2.1 files the future of every notification it handles with a
        # generator (didOpen, didChange, didClose...) in `_request_futures` under a
        # fresh uuid and never removes it: about 1.5 KB per keystroke, for ever.
        # Removed before the next message, not here: pygls may be iterating over
        # that dict (shutdown cancels what is pending).
        self._finished_notifications.append(future)

    def handle_message(self, message):
        if self._finished_notifications:
            finished = {id(future) for future in self._finished_notifications}
            self._finished_notifications = []
            for key in [key for key, kept in self._request_futures.items() if id(kept) in finished]:
                del self._request_futures[key]
        super().handle_message(message)


class AutogradLanguageServer(LanguageServer):
    def __init__(self):
        super().__init__(NAME, _version(), text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
                         protocol_cls=AutogradProtocol,
                         notebook_document_sync=notebook_sync.SYNC_OPTIONS)
        self.capabilities = ClientCapabilities()
        self.settings = SettingsStore()
        self.documents = Documents()
        self.notebooks = notebook_sync.NotebookStore()
        # Analyses run here, off the event loop, so that the server keeps reading
        # messages (cancellations, newer changes) while one runs.
        self.analysis_pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="analysis")
        self.debounce_seconds = debounce_from(os.environ.get(DEBOUNCE_ENV), DEBOUNCE_SECONDS)
        # Reads the project modules documents import (open ones as the editor has them).
        self.module_reader = ModuleReader(self)

    def close(self) -> None:
        """Stop the analyses; a running one is abandoned (its thread ends with it)."""
        self.analysis_pool.shutdown(wait=False, cancel_futures=True)

    def report_server_error(self, error, source):
        # pygls would show every internal error as a popup; a log line is enough.
        report_exception(self, f"pygls ({getattr(source, '__name__', source)})")


def create_server() -> AutogradLanguageServer:
    ls = AutogradLanguageServer()

    def feature(method: str, handler, default=None, options=None):
        ls.feature(method, options)(guarded(handler, default))

    feature(types.INITIALIZE, lifecycle.initialize)
    feature(types.INITIALIZED, lifecycle.initialized)
    feature(types.SHUTDOWN, lifecycle.shutdown)

    feature(types.TEXT_DOCUMENT_DID_OPEN, document_sync.did_open)
    feature(types.TEXT_DOCUMENT_DID_CHANGE, document_sync.did_change)
    feature(types.TEXT_DOCUMENT_DID_CLOSE, document_sync.did_close)
    feature(types.NOTEBOOK_DOCUMENT_DID_OPEN, notebook_sync.did_open)
    feature(types.NOTEBOOK_DOCUMENT_DID_CHANGE, notebook_sync.did_change)
    feature(types.NOTEBOOK_DOCUMENT_DID_CLOSE, notebook_sync.did_close)

    feature(types.TEXT_DOCUMENT_DIAGNOSTIC, pull_diagnostics.document_diagnostic,
            default=pull_diagnostics.EMPTY,
            options=types.DiagnosticOptions(identifier=NAME, inter_file_dependencies=False,
                                            workspace_diagnostics=False))
    feature(types.TEXT_DOCUMENT_HOVER, hover.hover)
    feature(types.TEXT_DOCUMENT_CODE_ACTION, code_actions.code_action, default=[],
            options=types.CodeActionOptions(code_action_kinds=code_actions.KINDS, resolve_provider=True))
    ls.feature(types.CODE_ACTION_RESOLVE)(_resolve_guard())

    feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION, workspace.did_change_configuration)
    feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES, workspace.did_change_watched_files)
    feature(types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS, workspace.did_change_workspace_folders)
    feature(STATS, _stats)
    return ls


# A server-specific request for benchmarks and tests: how much work the server did.
STATS = "autograd-lsp/stats"


def _stats(ls, params) -> dict:
    states = [ls.documents.find(uri) for uri in ls.documents.uris()]
    return {"analyses": {state.uri: state.analyses for state in states},
            "maxWaiting": {state.uri: state.max_waiting for state in states},
            "debounceMs": ls.debounce_seconds * 1000}


def _resolve_guard():
    # On failure, resolve answers with the action it was given (a valid result).
    async def resolve(ls, action: types.CodeAction) -> types.CodeAction:
        try:
            return await code_actions.resolve_code_action(ls, action)
        except Exception:
            report_exception(ls, "codeAction/resolve")
            return action
    return resolve
