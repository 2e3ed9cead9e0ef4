"""Long but ordinary code keeps its findings: no part of the analysis may
recurse once per link of a chain (an `elif` chain nests one `If` per branch, a
sum one `BinaryOperation` per term), so a long chain must neither drop the
file's findings, nor stop the analysis, nor pass for a syntax error."""
from __future__ import annotations

import pytest

from analysis import Analyzer

HEAD = "import torch\nw = torch.ones(3, requires_grad=True)\n"


def _elif_chain(branches: int, indent: str = "") -> str:
    """An if/elif/else chain whose first and last branches call backward on a
    tensor of shape (3,) (an AG101 each), with `branches` branches in all."""
    lines = [f"{indent}if x == 0:", f"{indent}    (w * 2).backward()"]
    for number in range(1, branches - 1):
        lines += [f"{indent}elif x == {number}:", f"{indent}    y = w + {number}"]
    lines += [f"{indent}else:", f"{indent}    (w * 3).backward()"]
    return "\n".join(lines) + "\n"


def _findings(source: str):
    analyzer = Analyzer()
    findings = analyzer.analyze(source)
    assert not analyzer.internal_errors, analyzer.internal_errors[:1]
    return [(f.code, f.line) for f in findings]


@pytest.mark.parametrize("branches", [320, 1_000])
def test_an_elif_chain_keeps_the_findings_inside_and_around_it(branches):
    # Exactly these: 1,000 branches is valid Python, not a syntax error.
    source = HEAD + "x = 0\n" + _elif_chain(branches) + "(w * 4).backward()\n"
    last_branch_line = 2 * branches + 3
    assert _findings(source) == [("AG101", 5), ("AG101", last_branch_line),
                                 ("AG101", last_branch_line + 1)]


@pytest.mark.parametrize("branches", [400])
def test_an_elif_chain_in_a_loop_keeps_its_findings(branches):
    source = HEAD + "for x in range(3):\n" + _elif_chain(branches, "    ")
    codes = [code for code, _ in _findings(source)]
    assert codes.count("AG101") == 2 and "AG001" not in codes


@pytest.mark.parametrize("terms", [1_000])
def test_a_long_sum_keeps_its_finding(terms):
    source = HEAD + "z = " + " + ".join(["w"] * terms) + "\nz.backward()\n"
    assert _findings(source) == [("AG101", 4)]


def test_a_long_run_of_unary_minus_keeps_its_finding():
    source = HEAD + "z = " + "-" * 1_000 + "w\nz.backward()\n"
    assert _findings(source) == [("AG101", 4)]


def test_a_long_boolean_chain_keeps_the_findings_of_its_chunk():
    condition = " and ".join(["w is not None"] * 1_000)
    source = HEAD + f"ok = {condition}\n(w * 2).backward()\n"
    assert _findings(source) == [("AG101", 4)]
