"""One home for lines and offsets: `analysis.source.SourceText`, under Python's
rules (lines end at "\\r\\n", "\\r" or "\\n"; a form feed is whitespace, not a
line end), and the bugs that came from splitting lines in several ways."""
from __future__ import annotations

import pytest
from hypothesis import given, strategies as st

from autograd_lsp.analysis import Analyzer, TextEdit, analyze
from autograd_lsp.analysis.source import SourceText
from autograd_lsp.fixing import fix_text
from autograd_lsp.analysis import Settings

BUG = "import torch\nx = torch.ones(3, requires_grad=True)\ny = x * 2\ny.backward()\n"


def test_lines_end_as_python_says():
    text = "a\r\nb\rc\nd\x0ce\u2028f\x85g"
    source = SourceText(text)
    assert source.lines == ["a", "b", "c", "d\x0ce\u2028f\x85g"]
    assert source.line_count == 4 and source.newline == "\r\n"
    assert source.offset(3, 1) == text.index("c") + 1
    assert source.position(text.index("e")) == (4, 2)
    assert SourceText("x").newline == "\n" and SourceText("a\rb").newline == "\r"
    assert SourceText("a\n").line_count == 2 and SourceText("").lines == [""]


def test_offsets_outside_the_text_are_refused():
    source = SourceText("ab\ncd")
    with pytest.raises(ValueError):
        source.offset(1, 3)
    with pytest.raises(ValueError):
        source.offset(4, 0)
    assert source.offset(3, 0) == len("ab\ncd")      # just past the last line


def test_applying_edits():
    source = SourceText("a = 1\r\nb = 2\r\n")
    assert source.apply([TextEdit(2, 4, 2, 5, "3"), TextEdit(1, 0, 1, 0, "# x\r\n")]) \
        == "# x\r\na = 1\r\nb = 3\r\n"
    with pytest.raises(ValueError):
        source.apply([TextEdit(1, 0, 1, 3, ""), TextEdit(1, 2, 1, 4, "")])


_pieces = st.sampled_from(["a", "中", "🙂", "\r\n", "\r", "\n", "\x0c", "\t", " ", "(", "\u2028"])


@given(st.lists(_pieces, max_size=40))
def test_position_and_offset_are_inverse(pieces):
    text = "".join(pieces)
    source = SourceText(text)
    for offset in range(len(text) + 1):
        if 0 < offset < len(text) and text[offset - 1:offset + 1] == "\r\n":
            continue     # between the two characters of one line break
        assert source.offset(*source.position(offset)) == offset


# -- the bugs ----------------------------------------------------------------------------

def test_a_form_feed_at_the_start_of_a_line_does_not_shift_columns():
    text = BUG.replace("\ny.backward()", "\n\x0cy.backward()")
    [finding] = analyze(text)
    assert (finding.line, finding.column, finding.end_column) == (4, 1, 13)
    fixed = fix_text(text, Settings())
    assert "\x0cy.mean().backward()" in fixed.text and not fixed.problem


def test_fix_works_in_a_file_with_form_feeds_anywhere():
    text = "\x0c\n" + BUG + "\x0c\n# \x0c end\n"
    fixed = fix_text(text, Settings())
    assert "y.mean().backward()" in fixed.text and fixed.problem is None


def test_fix_in_a_file_with_cr_only_line_ends():
    text = "import torch\rx = torch.ones(3, requires_grad=True)\rfor i in range(2):\r" \
           "    y = x * 2\r    y.backward()\r"
    fixed = fix_text(text, Settings())
    assert fixed.applied and "\n" not in fixed.text
    assert "    y.mean().backward()\r" in fixed.text or "    y.sum().backward()\r" in fixed.text


def test_facts_below_the_first_line_of_a_loop_in_a_cr_only_file():
    text = ("import torch\rx = torch.ones(3, requires_grad=True)\rfor i in range(2):\r"
            "    y = x * 2\r    z = y\r")
    analyzer = Analyzer()
    analyzer.analyze(text)
    found = analyzer.facts_at(5, 8)       # the `y` of `z = y`
    assert found is not None and found[0] == "y"


@pytest.mark.parametrize("text", [
    "def f(x):\n    return x + 1\n\nclass C(A, B):\n    def m(self):\n        y = 'é' + \"ü\"  # ç\n        return y\n",
    "x = (1 +\r\n     2)\rz = 'ab'\n\x0cw = [1,\n 2]\n",
    "s = '''a\nb'''\nt = f'{s!r:>{3}}'\n",
])
def test_chunk_segments_are_the_source_segments_ast_gives(text):
    # ParsedChunk.segment replaces ast.get_source_segment, which splits the whole
    # text at every call; the two must agree on every node, whatever the line ends.
    import ast

    from autograd_lsp.analysis.engine import ParsedChunk
    tree = ast.parse(text)
    part = ParsedChunk(text, tree)
    nodes = [node for node in ast.walk(tree) if hasattr(node, "end_lineno")]
    assert nodes
    for node in nodes:
        assert part.segment(node) == ast.get_source_segment(text, node)
