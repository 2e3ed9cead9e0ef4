"""Applying text edits to source text (positions and lines: `analysis.source`).

Positions are the core's: lines 1-based, columns 0-based in code points.
"""
from __future__ import annotations

from typing import Iterable

from autograd_lsp.analysis.findings import TextEdit
from autograd_lsp.analysis.source import SourceText


def apply_edits(text: str, edits: Iterable[TextEdit]) -> str:
    """`text` with every edit applied (see `SourceText.apply`)."""
    return SourceText(text).apply(edits)


def source_lines(text: str) -> list[str]:
    """The lines of `text` as Python counts them (see `SourceText`)."""
    return SourceText(text).lines


def newline_of(text: str) -> str:
    """The line break `text` uses (its first one), "\\n" when it has none."""
    return SourceText(text).newline
