"""Input that would crash or stall libcst's parser is refused before it gets there."""
from __future__ import annotations

import subprocess
import sys
import textwrap
import time

from autograd_lsp.analysis import Analyzer

BUG = "y = torch.ones(3, requires_grad=True)\n(y * 2).backward()\n"


def _analyze_in_child(source: str) -> subprocess.CompletedProcess:
    # A crash of the parser would take the test process with it: run in a child.
    code = textwrap.dedent(f"""
        from autograd_lsp.analysis import Analyzer
        a = Analyzer()
        print(sorted({{f.code for f in a.analyze({source!r})}}), a.internal_errors)
    """)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)


def test_deeply_nested_brackets_are_a_syntax_error_not_a_crash():
    source = "import torch\nx = " + "(" * 5000 + "1" + ")" * 5000 + "\n" + BUG
    run = _analyze_in_child(source)
    assert run.returncode == 0, run.stderr
    assert "AG001" in run.stdout and "AG101" in run.stdout


def test_long_operator_chain_is_skipped_quickly():
    source = "import torch\nx = " + "+".join(["1"] * 20000) + "\n" + BUG
    start = time.perf_counter()
    analyzer = Analyzer()
    codes = [f.code for f in analyzer.analyze(source)]
    assert time.perf_counter() - start < 10
    assert codes == ["AG101"] and not analyzer.internal_errors
