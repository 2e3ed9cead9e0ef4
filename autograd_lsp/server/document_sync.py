"""`textDocument/didOpen`, `didChange`, `didClose`.

pygls applies the (incremental) changes to its workspace copy before these
handlers run; here we only schedule analyses and clean up. A document is also
a module other documents may import: they are told when its text changes.
"""
from __future__ import annotations

from lsprotocol import types

from autograd_lsp.server.imports import module_changed
from autograd_lsp.server.linting import refresh_dependents, schedule


def did_open(ls, params: types.DidOpenTextDocumentParams) -> None:
    uri = params.text_document.uri
    ls.documents.get(uri)
    ls.module_reader.document_opened(uri)
    if not ls.capabilities.pull_diagnostics:
        schedule(ls, uri, 0)
    refresh_dependents(ls, uri, module_changed(ls, uri))


def did_change(ls, params: types.DidChangeTextDocumentParams) -> None:
    uri = params.text_document.uri
    ls.documents.get(uri)
    # Pull clients ask when they want diagnostics; analysing here would be wasted.
    if not ls.capabilities.pull_diagnostics:
        schedule(ls, uri, ls.debounce_seconds)
    refresh_dependents(ls, uri, module_changed(ls, uri))


def did_close(ls, params: types.DidCloseTextDocumentParams) -> None:
    uri = params.text_document.uri
    ls.documents.close(uri)
    # Importers now read the file on disk, which may differ from the closed text.
    ls.module_reader.document_closed(uri)
    refresh_dependents(ls, uri, module_changed(ls, uri))
    if not ls.capabilities.pull_diagnostics:
        # Diagnostics of a closed file would stay in the editor's problem list.
        ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))
