"""Findings as LSP diagnostics.

`Diagnostic.data` carries what code actions need, as Ruff's server does: the
rule's name, the document version the positions refer to, and each fix with
its edits already in the client's position units.
"""
from __future__ import annotations

from lsprotocol import types

from autograd_lsp.analysis import Finding
from autograd_lsp.server.documents import Analysis
from autograd_lsp.server.positions import LineIndex

SOURCE = "autograd-lsp"

SEVERITY = {
    "error": types.DiagnosticSeverity.Error,
    "warning": types.DiagnosticSeverity.Warning,
    "info": types.DiagnosticSeverity.Information,
}


def to_diagnostics(analysis: Analysis) -> list[types.Diagnostic]:
    return [to_diagnostic(f, analysis.index, analysis.version) for f in analysis.findings]


def to_diagnostic(finding: Finding, index: LineIndex, version: int | None) -> types.Diagnostic:
    return types.Diagnostic(
        range=index.finding_range(finding),
        severity=SEVERITY.get(finding.severity, types.DiagnosticSeverity.Warning),
        code=finding.code,
        source=SOURCE,
        message=finding.message,
        data={
            "name": finding.name,
            "version": version,
            "fixes": [
                {"title": fix.title, "safe": fix.safe,
                 "edits": [_edit_json(index.text_edit(edit)) for edit in fix.edits]}
                for fix in finding.fixes
            ],
        },
    )


def _edit_json(edit: types.TextEdit) -> dict:
    # Plain JSON: `data` is sent as is, lsprotocol does not convert what is inside it.
    r = edit.range
    return {"range": {"start": {"line": r.start.line, "character": r.start.character},
                      "end": {"line": r.end.line, "character": r.end.character}},
            "newText": edit.new_text}


def is_ours(diagnostic: types.Diagnostic) -> bool:
    return diagnostic.source == SOURCE
