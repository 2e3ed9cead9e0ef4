"""Applying text edits to source text.

Positions are the core's: lines 1-based, columns 0-based in code points. Edits
are applied from the last to the first so that each one's positions still
refer to the original text.
"""
from __future__ import annotations

from typing import Iterable

from analysis.findings import TextEdit


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


def _line_starts(text: str) -> list[int]:
    # Offsets where each line begins; only "\n" ends a line, as in libcst's positions.
    starts = [0]
    index = text.find("\n")
    while index != -1:
        starts.append(index + 1)
        index = text.find("\n", index + 1)
    return starts


def _offset(text: str, line_starts: list[int], line: int, column: int) -> int:
    if not 1 <= line <= len(line_starts) + 1 or column < 0:
        raise ValueError(f"position {line}:{column} is outside the text")
    if line == len(line_starts) + 1:
        # One line past the last: its start is the end of the text (an edit that
        # removes whole lines may end there).
        if column:
            raise ValueError(f"position {line}:{column} is outside the text")
        return len(text)
    start = line_starts[line - 1]
    end = line_starts[line] - 1 if line < len(line_starts) else len(text)
    if start + column > end:
        raise ValueError(f"position {line}:{column} is past the end of its line")
    return start + column
