"""Reading `.ipynb` files, and writing fixed cells back without touching the rest.

`--fix` must leave a notebook as Jupyter wrote it apart from the fixed code:
outputs, metadata, cell ids, key order, indentation, escapes and the final
line break. So the file is never re-serialised: the JSON text is scanned for
the span of each code cell's `source` value, and only the spans of changed
cells are replaced, formatted like the value they replace (a list of lines in
nbformat's layout, or one string).
"""
from __future__ import annotations

import json
import re

from autograd_lsp.analysis.records import record

NOTEBOOK_SUFFIX = ".ipynb"
_DECODER = json.JSONDecoder()
_SPACE = re.compile(r"[ \t\n\r]*")


class NotebookError(Exception):
    """A file that cannot be read as a notebook; str() is the reason."""


@record
class NotebookFile:
    raw: str
    # Code cells in order: their sources, and the span of each `source` value in `raw`.
    sources: tuple[str, ...]
    spans: tuple[tuple[int, int], ...]
    # Not Python (an R or Julia kernel): there is nothing to check.
    language: str = "python"


def is_notebook(path) -> bool:
    return str(path).lower().endswith(NOTEBOOK_SUFFIX)


def parse_notebook(raw: str) -> NotebookFile:
    """Raises NotebookError."""
    try:
        document = json.loads(raw)
    except ValueError as exc:
        raise NotebookError(f"not a notebook: invalid JSON ({exc})") from None
    if not isinstance(document, dict):
        raise NotebookError("not a notebook: the JSON is not an object")
    if "worksheets" in document or not isinstance(document.get("cells"), list):
        raise NotebookError("not a notebook in nbformat 4 (no top-level \"cells\" list)")
    language = _language(document.get("metadata"))
    cell_spans = _source_spans(raw)
    sources, spans = [], []
    for cell, span in zip(document["cells"], cell_spans):
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        source = cell.get("source", "")
        if isinstance(source, list) and all(isinstance(part, str) for part in source):
            source = "".join(source)
        if not isinstance(source, str) or span is None:
            raise NotebookError("not a notebook: a code cell's source is not text")
        sources.append(source)
        spans.append(span)
    return NotebookFile(raw, tuple(sources), tuple(spans), language)


def _language(metadata) -> str:
    if not isinstance(metadata, dict):
        return "python"
    for table, key in (("language_info", "name"), ("kernelspec", "language")):
        value = metadata.get(table)
        if isinstance(value, dict) and isinstance(value.get(key), str):
            return value[key].lower()
    return "python"


def with_sources(notebook: NotebookFile, new_sources: dict[int, str]) -> str:
    """The notebook's text with code cell `i` (0-based among code cells) holding
    `new_sources[i]`; every other byte stays as it was."""
    ascii_only = notebook.raw.isascii() and "\\u" in notebook.raw
    raw = notebook.raw
    for index in sorted(new_sources, reverse=True):
        start, end = notebook.spans[index]
        raw = raw[:start] + _format_like(raw[start:end], new_sources[index], ascii_only) + raw[end:]
    return raw


def _format_like(old_value: str, source: str, ascii_only: bool) -> str:
    if not old_value.startswith("["):
        return json.dumps(source, ensure_ascii=ascii_only)
    # nbformat stores a source as its lines, each with its line break.
    items = [json.dumps(line, ensure_ascii=ascii_only) for line in source.splitlines(keepends=True)]
    opening = re.match(r"\[([ \t\r\n]*)", old_value).group(1)
    closing = re.search(r"([ \t\r\n]*)\]$", old_value).group(1)
    if not items:
        return "[]"
    if not opening and not closing:
        return "[" + ", ".join(items) + "]"
    return "[" + opening + ("," + opening).join(items) + closing + "]"


# -- finding spans in the JSON text ----------------------------------------------------------

def _source_spans(raw: str) -> list[tuple[int, int] | None]:
    """The (start, end) of each cell's "source" value, by the cell's index in "cells"."""
    for key, start in _members(raw, _skip(raw, 0)):
        if key == "cells":
            return [_member_span(raw, element, "source") for element in _elements(raw, start)]
    return []


def _skip(raw: str, position: int) -> int:
    return _SPACE.match(raw, position).end()


def _end_of_value(raw: str, position: int) -> int:
    return _DECODER.raw_decode(raw, position)[1]


def _members(raw: str, position: int):
    """(key, start of value) for each member of the object at `position`."""
    if raw[position:position + 1] != "{":
        return
    position = _skip(raw, position + 1)
    while raw[position:position + 1] == '"':
        key, position = _DECODER.raw_decode(raw, position)
        position = _skip(raw, position)
        position = _skip(raw, position + 1)   # the colon
        yield key, position
        position = _skip(raw, _end_of_value(raw, position))
        if raw[position:position + 1] == ",":
            position = _skip(raw, position + 1)


def _elements(raw: str, position: int):
    """The start of each element of the array at `position`."""
    if raw[position:position + 1] != "[":
        return
    position = _skip(raw, position + 1)
    while position < len(raw) and raw[position] != "]":
        yield position
        position = _skip(raw, _end_of_value(raw, position))
        if raw[position:position + 1] == ",":
            position = _skip(raw, position + 1)


def _member_span(raw: str, position: int, wanted: str) -> tuple[int, int] | None:
    for key, start in _members(raw, position):
        if key == wanted:
            return start, _end_of_value(raw, start)
    return None
