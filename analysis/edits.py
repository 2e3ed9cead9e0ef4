"""Applying text edits to source text.

Positions are the core's: lines 1-based, columns 0-based in code points. Edits
are applied from the last to the first so that each one's positions still
refer to the original text.
"""
from __future__ import annotations

import re
from typing import Iterable

from analysis.findings import TextEdit

_LINE_BREAK = re.compile(r"\r\n|\r|\n")


def apply_edits(text: str, edits: Iterable[TextEdit]) -> str:
    """`text` with every edit applied. Edits must not overlap (two insertions at
    the same point are kept in the order given); ValueError otherwise, or when a
    position lies outside the text."""
    line_starts = _line_starts(text)
    spans = []
    for order, edit in enumerate(edits):
        start = _offset(text, line_starts, edit.line, edit.column)
        end = _offset(text, line_starts, edit.end_line, edit.end_column)
        if end < start:
            raise ValueError(f"edit ends before it starts: {edit}")
        spans.append((start, end, order, edit.new_text))
    spans.sort()
    for (start_a, end_a, _, _), (start_b, end_b, _, _) in zip(spans, spans[1:]):
        # Sorted by start, so checking neighbours finds every overlap. Touching
        # edits are fine; an insertion strictly inside a replaced span is not.
        if start_b < end_a:
            raise ValueError(f"overlapping edits at offsets {start_a}-{end_a} and {start_b}-{end_b}")
    for start, end, _, new_text in reversed(spans):
        text = text[:start] + new_text + text[end:]
    return text


def source_lines(text: str) -> list[str]:
    """The lines of `text` as Python and libcst count them: breaks are "\r\n", "\r"
    or "\n", never form feeds or Unicode line separators (`str.splitlines` splits
    on those too, and then line numbers drift)."""
    return [text[start:end] for start, end in _line_starts(text)]


def newline_of(text: str) -> str:
    """The line break `text` uses (its first one), "\n" when it has none."""
    match = _LINE_BREAK.search(text)
    return match.group(0) if match else "\n"


def _line_starts(text: str) -> list[tuple[int, int]]:
    """(start, end of content) of each line. Lines end as in Python and libcst:
    "\r\n", "\r" or "\n" (not form feeds or Unicode line separators)."""
    lines, start = [], 0
    for match in _LINE_BREAK.finditer(text):
        lines.append((start, match.start()))
        start = match.end()
    lines.append((start, len(text)))
    return lines


def _offset(text: str, lines: list[tuple[int, int]], line: int, column: int) -> int:
    if not 1 <= line <= len(lines) + 1 or column < 0:
        raise ValueError(f"position {line}:{column} is outside the text")
    if line == len(lines) + 1:
        # One line past the last: its start is the end of the text (an edit that
        # removes whole lines may end there).
        if column:
            raise ValueError(f"position {line}:{column} is outside the text")
        return len(text)
    start, end = lines[line - 1]
    if start + column > end:
        raise ValueError(f"position {line}:{column} is past the end of its line")
    return start + column
