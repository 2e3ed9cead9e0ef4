"""Half-typed code at module level loses only its own chunk's findings: an
unclosed bracket or triple quote, a stray indent, `class C(` hide nothing below."""
from __future__ import annotations

import pytest

from autograd_lsp.analysis import analyze

BUG = "x = torch.ones(3, requires_grad=True)\ny = x * 2\ny.backward()\n"
ACCUMULATES = ("w = torch.ones(3, requires_grad=True)\ntotal = 0\nfor i in range(3):\n"
               "    loss = (w * 2).sum()\n    loss.backward()\n    total += loss\n")


@pytest.mark.parametrize("typing, code, line", [
    ("foo = bar(\n", "AG101", 5),
    ("foo = [1,\n", "AG101", 5),
    ("foo = {'a':\n", "AG101", 5),
    ('s = """doc\n', "AG101", 5),
    ("s = '''doc\n", "AG101", 5),
    ("z = 1\n    w = 2\n", "AG101", 6),
])
def test_what_follows_half_typed_code_is_still_checked(typing, code, line):
    source = "import torch\n" + typing + BUG
    found = [(f.code, f.line) for f in analyze(source)]
    assert (code, line) in found and any(c == "AG001" for c, _ in found), found


def test_an_open_class_header_hides_no_loss_accumulation():
    found = [(f.code, f.line) for f in analyze("import torch\nclass C(\n" + ACCUMULATES)]
    assert ("AG302", 8) in found and ("AG001", 2) in found


def test_valid_code_with_column_zero_continuation_lines_is_one_statement():
    source = "import torch\nx = torch.ones(\n3,\nrequires_grad=True)\ny = x * 2\ny.backward()\n"
    assert [(f.code, f.line) for f in analyze(source)] == [("AG101", 6)]


def test_a_docstring_with_code_in_it_stays_a_docstring():
    source = 'import torch\n"""Example:\nx = 1\ny.backward()\n"""\n' + BUG
    assert [(f.code, f.line) for f in analyze(source)] == [("AG101", 8)]


def test_syntax_errors_point_inside_the_file():
    for source in ("import torch\n" + BUG + "foo = (\n", "import torch\nfoo = (", 'import torch\ns = """\n'):
        lines = source.count("\n") + 1
        for finding in analyze(source):
            assert 1 <= finding.line <= lines, (source, finding)
