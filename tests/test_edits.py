"""apply_edits: positions in the core's units (1-based lines, code-point columns)."""
from __future__ import annotations

import pytest
from hypothesis import given, strategies as st

from autograd_lsp.analysis import TextEdit, analyze
from autograd_lsp.analysis.edits import apply_edits

TEXT = "first line\nsecond line\nthird\n"


def test_no_edits_leaves_text_alone():
    assert apply_edits(TEXT, []) == TEXT


def test_insert_replace_and_delete():
    assert apply_edits(TEXT, [TextEdit(1, 0, 1, 0, ">> ")]) == ">> first line\nsecond line\nthird\n"
    assert apply_edits(TEXT, [TextEdit(2, 0, 2, 6, "2nd")]) == "first line\n2nd line\nthird\n"
    assert apply_edits(TEXT, [TextEdit(1, 5, 2, 6, "")]) == "first line\nthird\n"


def test_edits_refer_to_the_original_text_whatever_their_order():
    edits = [TextEdit(1, 0, 1, 5, "1st"), TextEdit(3, 0, 3, 5, "3rd"), TextEdit(2, 0, 2, 6, "2nd")]
    expected = "1st line\n2nd line\n3rd\n"
    assert apply_edits(TEXT, edits) == expected
    assert apply_edits(TEXT, reversed(edits)) == expected


def test_columns_count_code_points_with_cjk_and_emoji():
    text = 'note = "损失🙂"; y.backward()\n'
    column = text.index("y.backward")
    edit = TextEdit(1, column + 1, 1, column + 1, ".sum()")
    assert apply_edits(text, [edit]) == 'note = "损失🙂"; y.sum().backward()\n'


def test_insertions_at_one_point_keep_their_order():
    edits = [TextEdit(1, 0, 1, 0, "a"), TextEdit(1, 0, 1, 0, "b")]
    assert apply_edits("x", edits) == "abx"


def test_touching_edits_are_not_overlapping():
    edits = [TextEdit(1, 0, 1, 5, "FIRST"), TextEdit(1, 5, 1, 5, "!"), TextEdit(1, 5, 1, 10, "-")]
    assert apply_edits(TEXT, edits) == "FIRST!-\nsecond line\nthird\n"


@pytest.mark.parametrize("edits", [
    [TextEdit(1, 0, 1, 5, "a"), TextEdit(1, 3, 1, 8, "b")],
    [TextEdit(1, 0, 2, 3, "a"), TextEdit(2, 1, 2, 1, "b")],
    [TextEdit(2, 0, 2, 4, "a"), TextEdit(2, 0, 2, 4, "b")],
])
def test_overlapping_edits_raise(edits):
    with pytest.raises(ValueError, match="overlap"):
        apply_edits(TEXT, edits)


@pytest.mark.parametrize("edit", [
    TextEdit(0, 0, 0, 0, "x"),
    TextEdit(1, 11, 1, 11, "x"),      # past the end of "first line"
    TextEdit(9, 0, 9, 0, "x"),
    TextEdit(2, 3, 1, 0, "x"),        # ends before it starts
    TextEdit(1, -1, 1, 0, "x"),
])
def test_positions_outside_the_text_raise(edit):
    with pytest.raises(ValueError):
        apply_edits(TEXT, [edit])


def test_end_of_text_positions():
    assert apply_edits("a\nb", [TextEdit(2, 1, 2, 1, "!")]) == "a\nb!"
    assert apply_edits("a\n", [TextEdit(2, 0, 2, 0, "b\n")]) == "a\nb\n"
    # An edit that removes whole lines may end one line past the last.
    assert apply_edits("a\nb\n", [TextEdit(2, 0, 3, 0, "")]) == "a\n"


def test_lines_end_as_in_python():
    assert apply_edits("a = 1\r\nb = 2\r\n", [TextEdit(2, 4, 2, 5, "3")]) == "a = 1\r\nb = 3\r\n"
    assert apply_edits("a = 1\rb = 2\r", [TextEdit(2, 4, 2, 5, "3")]) == "a = 1\rb = 3\r"
    with pytest.raises(ValueError):
        apply_edits("a = 1\r\n", [TextEdit(1, 6, 1, 6, "x")])   # between \r and \n
    # Form feeds and Unicode line separators do not end a Python line.
    assert apply_edits("\x0ca\u2028b\nc", [TextEdit(2, 0, 2, 1, "d")]) == "\x0ca\u2028b\nd"


def test_a_core_fix_applied_makes_the_code_clean():
    source = ("import torch\n"
              "x = torch.randn(3, requires_grad=True)\n"
              "y = x * 2  # 乘以二 🙂\n"
              "y.backward()\n")
    [finding] = [f for f in analyze(source) if f.code == "AG101"]
    safe = next(fix for fix in finding.fixes if fix.safe)
    fixed = apply_edits(source, safe.edits)
    compile(fixed, "<fixed>", "exec")
    assert not [f for f in analyze(fixed) if f.code == "AG101"]


@st.composite
def text_and_edits(draw):
    """A text and non-overlapping edits, with the expected result built on offsets."""
    alphabet = st.sampled_from(list("ab \n汉🙂"))
    text = draw(st.text(alphabet, max_size=40))
    cuts = sorted(draw(st.lists(st.integers(0, len(text)), max_size=8)))
    pairs = [(cuts[i], cuts[i + 1]) for i in range(0, len(cuts) - 1, 2)]
    replacements = [draw(st.text(alphabet, max_size=5)) for _ in pairs]
    expected, last = [], 0
    for (start, end), new in zip(pairs, replacements):
        expected += [text[last:start], new]
        last = end
    expected.append(text[last:])

    def position(offset):
        before = text[:offset]
        return before.count("\n") + 1, len(before) - (before.rfind("\n") + 1)

    edits = [TextEdit(*position(s), *position(e), new) for (s, e), new in zip(pairs, replacements)]
    if len({start for start, _ in pairs}) == len(pairs):
        # Order matters only between insertions at one point.
        edits = draw(st.permutations(edits))
    return text, edits, "".join(expected)


@given(text_and_edits())
def test_matches_offset_arithmetic(case):
    text, edits, expected = case
    assert apply_edits(text, edits) == expected
