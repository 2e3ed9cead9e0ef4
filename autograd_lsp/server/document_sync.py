"""`textDocument/didOpen`, `didChange`, `didClose`.

pygls applies the (incremental) changes to its workspace copy before these
handlers run; here we only schedule analyses and clean up.
"""
from __future__ import annotations

from lsprotocol import types

from autograd_lsp.server.linting import schedule


def did_open(ls, params: types.DidOpenTextDocumentParams) -> None:
    ls.documents.get(params.text_document.uri)
    if not ls.capabilities.pull_diagnostics:
        schedule(ls, params.text_document.uri, 0)


def did_change(ls, params: types.DidChangeTextDocumentParams) -> None:
    uri = params.text_document.uri
    ls.documents.get(uri)
    # Pull clients ask when they want diagnostics; analysing here would be wasted.
    if not ls.capabilities.pull_diagnostics:
        schedule(ls, uri, ls.debounce_seconds)


def did_close(ls, params: types.DidCloseTextDocumentParams) -> None:
    uri = params.text_document.uri
    ls.documents.close(uri)
    if not ls.capabilities.pull_diagnostics:
        # Diagnostics of a closed file would stay in the editor's problem list.
        ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))
