"""Ranges in the negotiated encoding, on lines holding Chinese text and emoji."""
from __future__ import annotations

import pytest
from lsprotocol import types

from autograd_lsp.server.positions import UTF8, UTF16, UTF32, LineIndex
from tests.server.session import ALL_PROFILES, diagnostics, open_document, session

URI = "file:///tmp/autograd_lsp_test/positions.py"
PREFIX = 's = "é😀中文"; '
SOURCE = (
    "import torch\n"
    "x = torch.randn(3, requires_grad=True)  # 输入张量 🔥\n"
    "y = x * 2\n"
    f"{PREFIX}y.backward()  # 反向传播\n"
)


def units(text: str, encoding: str) -> int:
    if encoding == UTF8:
        return len(text.encode("utf-8"))
    if encoding == UTF16:
        return len(text.encode("utf-16-le")) // 2
    return len(text)


@pytest.mark.parametrize("encoding", [UTF8, UTF16, UTF32])
def test_line_index_round_trips_every_column(encoding):
    line = 'a = "é😀中"  # 注释🎉'
    index = LineIndex(f"first\r\n{line}\rlast\n", encoding)
    for column in range(len(line) + 1):
        position = index.to_client(2, column)
        assert position == types.Position(1, units(line[:column], encoding))
        assert index.from_client(position) == (2, column)


def test_line_index_clamps_past_the_end_and_inside_surrogate_pairs():
    index = LineIndex("a😀\n", UTF16)
    assert index.from_client(types.Position(0, 99)) == (1, 2)
    assert index.from_client(types.Position(0, 2)) == (1, 2)   # inside the pair -> after it
    assert index.from_client(types.Position(5, 0)) == (2, 0)
    assert index.to_client(9, 0) == types.Position(1, 0)


def test_only_lsp_line_ends_split_lines():
    # Form feed and U+2028 are not line ends for LSP (str.splitlines thinks they are).
    index = LineIndex("a\x0cb\u2028c\nd", UTF16)
    assert index.lines == ["a\x0cb\u2028c", "d"]


@pytest.mark.parametrize("profile", ALL_PROFILES)
async def test_diagnostic_range_in_negotiated_encoding(profile):
    async with session(profile) as client:
        encoding = client.initialize_result.capabilities.position_encoding
        open_document(client, URI, SOURCE)
        (d,) = await diagnostics(client, URI, until=lambda items: items)
        start = units(PREFIX, encoding)
        assert d.range == types.Range(types.Position(3, start),
                                      types.Position(3, start + len("y.backward()")))
        # The first fix inserts a reduction right after `y`.
        assert d.data["fixes"][0]["edits"][0]["range"]["start"] == {"line": 3, "character": start + 1}
        hover = await client.text_document_hover_async(types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=URI),
            position=types.Position(3, start)))
        assert hover is not None and "`y`" in hover.contents.value
        assert hover.range == types.Range(types.Position(3, start), types.Position(3, start + 1))
