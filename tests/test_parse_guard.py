"""Text that would crash or stall libcst's native parser is measured without
recursion and refused before any parser sees it; the refusal is said, never a
silent "no problems" and never a false syntax error."""
from __future__ import annotations

import subprocess
import sys
import textwrap

from autograd_lsp.analysis.parse_guard import MAX_ELIF_CHAIN, MAX_EXPRESSION_CHAIN, measure

BUG = "import torch\ny = torch.ones(3, requires_grad=True)\n(y * 2).backward()\n"


def _elif_chain(branches: int) -> str:
    return "x = 0\nif x == 0:\n    pass\n" + "".join(f"elif x == {i}:\n    pass\n"
                                                     for i in range(1, branches))


def _analyze_in_child(source: str) -> subprocess.CompletedProcess:
    # A crash of the parser would take the test process with it: run in a child.
    code = textwrap.dedent("""
        import sys
        from autograd_lsp.analysis import Analyzer
        a = Analyzer()
        codes = sorted(f.code for f in a.analyze(sys.stdin.read()))
        print(codes, [line for line, _ in a.unread], a.internal_errors)
    """)
    return subprocess.run([sys.executable, "-c", code], input=source, capture_output=True,
                          text=True, timeout=120)


def test_a_10000_branch_elif_chain_is_refused_not_a_crash():
    run = _analyze_in_child(BUG + _elif_chain(10_000))
    assert run.returncode == 0, run.stderr[-500:]
    # Unread from the branch past the limit on; the finding before the chain stays.
    assert run.stdout.strip() == f"['AG101'] [{3 + 2 + 2 * (MAX_ELIF_CHAIN + 1)}] []"


def test_10000_unary_minus_signs_are_refused_not_a_crash():
    run = _analyze_in_child(BUG + "x = " + "-" * 10_000 + "1\n")
    assert run.returncode == 0, run.stderr[-500:]
    assert run.stdout.strip() == "['AG101'] [4] []"


def test_a_file_without_torch_is_guarded_too():
    # Only Python's own parser sees it, which refuses it without crashing: unread.
    run = _analyze_in_child(_elif_chain(10_000))
    assert run.returncode == 0, run.stderr[-500:]
    assert run.stdout.strip() == "[] [1] []"
    # Long but within what Python's parser takes: checked, nothing left unread.
    run = _analyze_in_child("x = " + " + ".join(["1"] * 500) + "\n")
    assert run.stdout.strip() == "[] [] []"


def test_chains_are_measured_where_they_are():
    assert measure("x = " + " + ".join(["1"] * (MAX_EXPRESSION_CHAIN + 2))).refusal is not None
    assert measure(_elif_chain(MAX_ELIF_CHAIN + 2)).refusal.line == 2 + 2 * (MAX_ELIF_CHAIN + 1)
    # Operators inside strings and comments, and items of a list, are not a chain.
    assert measure("x = '" + "-" * 5_000 + "'\n").refusal is None
    assert measure("# " + "-" * 5_000 + "\nx = 1\n").refusal is None
    assert measure("x = [" + ", ".join(["-1"] * 5_000) + "]\n").refusal is None
    assert measure('"""\n' + "+\n" * 3_000 + '"""\n').refusal is None
    # Separate if statements are not one chain.
    assert measure(("if a:\n    pass\nelif b:\n    pass\n") * 1_000).refusal is None


def test_nesting_deeper_than_python_allows_is_a_syntax_error():
    refusal = measure("x = " + "(" * 300 + "1" + ")" * 300 + "\n").refusal
    assert refusal.syntax_error and "too many nested parentheses" in refusal.reason


def test_nested_lambdas_count_as_one_chain():
    assert measure("f = " + "lambda: " * 2_000 + "1\n").refusal is not None


def test_depth_is_measured_for_accepted_text():
    assert measure(_elif_chain(400)).deep
    assert not measure("x = 1\n" * 100).deep
