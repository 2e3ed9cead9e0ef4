"""What the core reports: findings, their fixes and text edits.

Positions follow libcst: lines are 1-based, columns are 0-based and counted in
code points. Converting to LSP units (UTF-16 by default) or to the CLI's 1-based
columns happens at the edge, in `autograd_lsp`.
"""
from __future__ import annotations

from dataclasses import field

from autograd_lsp.analysis.records import record

SEVERITIES = ("error", "warning", "info")


@record
class TextEdit:
    line: int
    column: int
    end_line: int
    end_column: int
    new_text: str


@record
class Fix:
    title: str
    edits: tuple[TextEdit, ...]
    # A safe fix keeps the program's meaning apart from removing the bug;
    # `check --fix` and fix-all apply only these.
    safe: bool = True


@record
class Finding:
    code: str
    name: str
    severity: str
    message: str
    line: int
    column: int
    end_line: int
    end_column: int
    fixes: tuple[Fix, ...] = field(default=())

    def sort_key(self) -> tuple:
        return (self.line, self.column, self.code)
