"""Source text, its lines and its positions: the one place where lines are split.

Lines end as Python's tokenizer (and libcst, and LSP) say: at "\\r\\n", "\\r" or
"\\n", and nowhere else. `str.splitlines` also ends lines at form feeds, vertical
tabs, U+001C-U+001E, U+0085, U+2028 and U+2029, which Python reads as ordinary
characters; splitting that way makes line numbers drift.

Positions are the core's: lines 1-based, columns 0-based in code points.

    source = SourceText(text)
    source.line(3), source.offset(3, 4), source.position(120), source.newline
    source.apply(edits)
"""
from __future__ import annotations

import re
from bisect import bisect_right
from itertools import accumulate
from typing import Iterable

from autograd_lsp.analysis.findings import TextEdit

LINE_BREAK = re.compile(r"\r\n|\r|\n")
_SPLIT_KEEPING_BREAKS = re.compile(r"(\r\n|\r|\n)")


class SourceText:
    """One text, its lines (`lines`: each line's content, without its line break)
    and the offsets where they start (`line_starts`)."""

    __slots__ = ("text", "line_starts", "lines")

    def __init__(self, text: str):
        self.text = text
        # Split in C (str.split, re.split): this runs on every keystroke.
        if "\r" not in text:
            self.lines = text.split("\n")
            widths = [len(line) + 1 for line in self.lines]
        else:
            parts = _SPLIT_KEEPING_BREAKS.split(text)
            self.lines = parts[0::2]
            widths = [len(line) + len(end) for line, end in zip(parts[0::2], parts[1::2])]
        self.line_starts = [0, *accumulate(widths[:len(self.lines) - 1])]

    @property
    def line_count(self) -> int:
        """Lines in the text; a text ending with a line break has an empty last line."""
        return len(self.line_starts)

    def lines_with_ends(self) -> list[str]:
        """Each line with its line break (the last one has none); "" gives []."""
        starts = self.line_starts + [len(self.text)]
        return [self.text[a:b] for a, b in zip(starts, starts[1:]) if a < b]

    @property
    def newline(self) -> str:
        """The line break the text uses (its first one); "\\n" when it has none."""
        if len(self.line_starts) == 1:
            return "\n"
        end = self.line_starts[1]
        return "\r\n" if self.text[end - 2:end] == "\r\n" else self.text[end - 1]

    def line(self, number: int) -> str:
        """The content of a 1-based line; "" outside the text."""
        if not 1 <= number <= len(self.line_starts):
            return ""
        return self.lines[number - 1]

    def offset(self, line: int, column: int) -> int:
        """The offset of (1-based line, code-point column). ValueError outside the
        text; the start of the line after the last one is the end of the text."""
        if column < 0 or not 1 <= line <= len(self.line_starts) + 1:
            raise ValueError(f"position {line}:{column} is outside the text")
        if line == len(self.line_starts) + 1:
            if column:
                raise ValueError(f"position {line}:{column} is outside the text")
            return len(self.text)
        start = self.line_starts[line - 1]
        if start + column > self._content_end(line - 1):
            raise ValueError(f"position {line}:{column} is past the end of its line")
        return start + column

    def position(self, offset: int) -> tuple[int, int]:
        """(1-based line, column) of an offset (clamped to the text)."""
        offset = min(max(offset, 0), len(self.text))
        row = bisect_right(self.line_starts, offset) - 1
        return row + 1, offset - self.line_starts[row]

    def apply(self, edits: Iterable[TextEdit]) -> str:
        """The text with every edit applied. Edits must not overlap (two insertions
        at the same point are kept in the order given); ValueError otherwise, or
        when a position lies outside the text."""
        spans = []
        for order, edit in enumerate(edits):
            start = self.offset(edit.line, edit.column)
            end = self.offset(edit.end_line, edit.end_column)
            if end < start:
                raise ValueError(f"edit ends before it starts: {edit}")
            spans.append((start, end, order, edit.new_text))
        spans.sort()
        for (start_a, end_a, _, _), (start_b, end_b, _, _) in zip(spans, spans[1:]):
            # Sorted by start, so checking neighbours finds every overlap. Touching
            # edits are fine; an insertion strictly inside a replaced span is not.
            if start_b < end_a:
                raise ValueError(f"overlapping edits at offsets {start_a}-{end_a} and {start_b}-{end_b}")
        pieces, done = [], 0
        for start, end, _, new_text in spans:
            pieces += [self.text[done:start], new_text]
            done = end
        pieces.append(self.text[done:])
        return "".join(pieces)

    def _content_end(self, row: int) -> int:
        """Offset where the line with 0-based index `row` ends, before its break."""
        return self.line_starts[row] + len(self.lines[row])

