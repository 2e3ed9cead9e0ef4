"""`textDocument/diagnostic`: diagnostics on the client's request (LSP 3.17 pull).

The result id is the document version plus the settings generation, so a
client that asks again for an unchanged document gets an "unchanged" report.
"""
from __future__ import annotations

from lsprotocol import types

from autograd_lsp.server.diagnostics import to_diagnostics
from autograd_lsp.server.guard import ServerCancelled
from autograd_lsp.server.linting import analyse_now

EMPTY = types.RelatedFullDocumentDiagnosticReport(items=[])


async def document_diagnostic(ls, params: types.DocumentDiagnosticParams):
    uri = params.text_document.uri
    analysis = await analyse_now(ls, uri)
    # The document may have changed while it was analysed: catch up a few times.
    for _ in range(3):
        if analysis is None or ls.workspace.get_text_document(uri).version == analysis.version:
            break
        analysis = await analyse_now(ls, uri)
    if analysis is None:
        if ls.documents.find(uri) is not None:
            raise ServerCancelled()
        return EMPTY
    if params.previous_result_id == analysis.result_id:
        return types.RelatedUnchangedDocumentDiagnosticReport(result_id=analysis.result_id)
    return types.RelatedFullDocumentDiagnosticReport(
        items=to_diagnostics(analysis), result_id=analysis.result_id)
