"""The one place where positions change units.

The core counts columns in code points (libcst's columns). LSP counts them in
the code units of the negotiated position encoding: UTF-16 unless client and
server agreed on UTF-8 or UTF-32 in `initialize`. Every conversion between the
two goes through `LineIndex`.

Lines are the core's `SourceText` lines: LSP, like Python, ends lines at "\n",
"\r\n" and "\r" and nowhere else. pygls' own codec is not used for two reasons:
`TextDocument.lines` splits with `str.splitlines`, which also breaks at form
feeds, U+2028 and other characters LSP does not treat as line ends, and a client
column past the end of a line is clamped to one before the end instead of to
the end.
"""
from __future__ import annotations

from lsprotocol import types

from autograd_lsp.analysis import Finding, TextEdit
from autograd_lsp.analysis.source import SourceText

UTF8 = types.PositionEncodingKind.Utf8
UTF16 = types.PositionEncodingKind.Utf16
UTF32 = types.PositionEncodingKind.Utf32


def _units(text: str, encoding: str) -> int:
    if encoding == UTF32:
        return len(text)
    if encoding == UTF8:
        return len(text.encode("utf-8", "surrogatepass"))
    # UTF-16: characters outside the BMP take two code units.
    return len(text) + sum(1 for ch in text if ord(ch) > 0xFFFF)


class LineIndex:
    """The lines of one text, for converting positions in both directions."""

    def __init__(self, text: str, encoding: str = UTF16):
        self.encoding = encoding
        self.source = SourceText(text)
        self.lines = self.source.lines

    # -- core (1-based line, code-point column) -> LSP -------------------------------

    def to_client(self, line: int, column: int) -> types.Position:
        row = line - 1
        if row < 0:
            return types.Position(0, 0)
        if row >= len(self.lines):
            # Just past the end of the text: the end of the last line.
            last = len(self.lines) - 1
            return types.Position(last, _units(self.lines[last], self.encoding))
        text = self.lines[row]
        return types.Position(row, _units(text[:max(column, 0)], self.encoding))

    def range_to_client(self, line: int, column: int, end_line: int, end_column: int) -> types.Range:
        return types.Range(self.to_client(line, column), self.to_client(end_line, end_column))

    def finding_range(self, finding: Finding) -> types.Range:
        return self.range_to_client(finding.line, finding.column, finding.end_line, finding.end_column)

    def text_edit(self, edit: TextEdit) -> types.TextEdit:
        return types.TextEdit(
            range=self.range_to_client(edit.line, edit.column, edit.end_line, edit.end_column),
            new_text=edit.new_text)

    # -- LSP -> core ----------------------------------------------------------------

    def from_client(self, position: types.Position) -> tuple[int, int]:
        """(1-based line, code-point column) of an LSP position, clamped to the text."""
        if position.line >= len(self.lines):
            last = len(self.lines) - 1
            return last + 1, len(self.lines[last])
        text = self.lines[position.line]
        wanted = max(position.character, 0)
        if self.encoding == UTF32:
            return position.line + 1, min(wanted, len(text))
        units = 0
        for index, ch in enumerate(text):
            if units >= wanted:
                return position.line + 1, index
            units += _units(ch, self.encoding)
        # Past the line's end (LSP says: use the line's length).
        return position.line + 1, len(text)

    def line_text(self, line: int) -> str:
        """The text of a 1-based line without its line end ("" outside the text)."""
        return self.lines[line - 1] if 1 <= line <= len(self.lines) else ""
