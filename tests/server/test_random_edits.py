"""Random edit sequences sent as incremental changes: the server never crashes,
answers every request, and its diagnostics equal the command line's on the
final text. Positions are converted here with code of the test's own (UTF-16,
lines ended by CRLF, CR or LF), not the server's."""
from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from autograd_lsp.analysis import Settings, analyze
from tests.server.raw_client import PULL, RawClient

START = ("import torch\n"
         "x = torch.ones(3, requires_grad=True)  # 输入 🙂\n"
         "for step in range(2):\n"
         "    y = x * 2\n"
         "    y.backward()\n")
PIECES = ["中文", "🙂", "\r\n", "\r", "\n", "\x0c", "\t", "    ", "(", ")", "[", '"""', "'",
          "x", "y.backward()\n", "z = x * 2\n", "elif y:\n    pass\n", " + x" * 30, "-" * 40,
          "def f(a):\n", "class C(", "torch.ones(2, requires_grad=True)", "#", "\\\n"]
_BREAK = re.compile(r"\r\n|\r|\n")


def _position(text: str, offset: int) -> dict:
    starts = [0] + [m.end() for m in _BREAK.finditer(text)]
    line = max(i for i, start in enumerate(starts) if start <= offset)
    before = text[starts[line]:offset]
    return {"line": line, "character": len(before.encode("utf-16-le")) // 2}


def _not_inside_crlf(text: str, offset: int) -> int:
    return offset - 1 if 0 < offset < len(text) and text[offset - 1:offset + 1] == "\r\n" else offset


edits = st.lists(st.tuples(st.floats(0, 1), st.integers(0, 12), st.lists(st.sampled_from(PIECES),
                                                                          max_size=3)),
                 min_size=1, max_size=12)


@pytest.fixture(scope="module")
def client():
    client = RawClient()
    client.initialize(PULL)
    yield client
    assert client.close() == 0


_documents = iter(range(10 ** 6))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(edits)
def test_random_edits_never_break_the_server(client, changes):
    uri = f"file:///random/{next(_documents)}.py"
    text = START
    client.open(uri, text, 0)
    for version, (where, length, pieces) in enumerate(changes, 1):
        start = _not_inside_crlf(text, int(where * len(text)))
        end = _not_inside_crlf(text, min(len(text), start + length))
        new = "".join(pieces)
        change = {"range": {"start": _position(text, start), "end": _position(text, end)}, "text": new}
        client.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": version},
                                                 "contentChanges": [change]})
        text = text[:start] + new + text[end:]
        if version % 4 == 0:
            client.pull(uri)        # answered, whatever the text is now
    items = client.pull(uri)
    assert client.process.poll() is None
    expected = sorted((f.code, _position(text, _offset(text, f.line, f.column))["line"],
                       _position(text, _offset(text, f.line, f.column))["character"])
                      for f in analyze(text, Settings()))
    got = sorted((d["code"], d["range"]["start"]["line"], d["range"]["start"]["character"])
                 for d in items)
    assert got == expected
    client.notify("textDocument/didClose", {"textDocument": {"uri": uri}})


def _offset(text: str, line: int, column: int) -> int:
    starts = [0] + [m.end() for m in _BREAK.finditer(text)]
    return starts[line - 1] + column if line - 1 < len(starts) else len(text)
