"""Long but ordinary code keeps its findings: no part of the analysis may
recurse once per link of a chain (an `elif` chain nests one `If` per branch, a
sum one `BinaryOperation` per term), so a long chain must neither drop the
file's findings, nor stop the analysis, nor pass for a syntax error."""
from __future__ import annotations

import pytest

from autograd_lsp.analysis import Analyzer

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


def _chain_findings(branches: int, indent: str = "", head: str = "x = 0\n") -> list:
    """The findings of a file holding a `branches`-long chain, with the lines below
    the chain moved up as if it had 3 branches: a long chain must change nothing else."""
    source = HEAD + head + _elif_chain(branches, indent) + f"{indent}(w * 4).backward()\n"
    chain_end = 3 + 2 * branches + 1      # the chain's last line (with HEAD and `head`)
    shift = 2 * (branches - 3)
    return [(code, line - shift if line > chain_end - 2 else line)
            for code, line in _findings(source)]


@pytest.mark.parametrize("branches", [320, 1_000])
def test_an_elif_chain_keeps_the_findings_inside_and_around_it(branches):
    # Valid Python whatever its length: never a syntax error, never fewer findings.
    short = _chain_findings(3)
    assert len(short) >= 2 and all(code == "AG101" for code, _ in short)
    assert _chain_findings(branches) == short


@pytest.mark.parametrize("branches", [400])
def test_an_elif_chain_in_a_loop_keeps_its_findings(branches):
    head = "for x in range(3):\n"
    assert _chain_findings(branches, "    ", head) == _chain_findings(3, "    ", head)


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
