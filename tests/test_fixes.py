"""Every fix of every bad example is a real edit: applied, the code still
compiles, and a safe fix removes the finding it was offered for."""
from __future__ import annotations

import pytest

from autograd_lsp.analysis import analyze
from autograd_lsp.analysis.edits import apply_edits
from tests.rule_examples import BAD


def _fix_params():
    params = []
    for p in BAD:
        rule, example = p.values
        for finding in analyze(example.code):
            if finding.name != rule.name:
                continue
            for index, fix in enumerate(finding.fixes):
                params.append(pytest.param(rule, example, finding, fix,
                                           id=f"{p.id}-L{finding.line}-fix{index}"))
    return params


FIXES = _fix_params()


def test_some_fixes_exist():
    assert len(FIXES) >= 10


@pytest.mark.parametrize("rule,example,finding,fix", FIXES)
def test_fix_applies_and_compiles(rule, example, finding, fix):
    fixed = apply_edits(example.code, fix.edits)
    assert fixed != example.code
    compile(fixed, "<fixed>", "exec")
    if fix.safe:
        left = [f for f in analyze(fixed) if f.name == rule.name and f.line == finding.line]
        assert not left, f"{fix.title!r} left {left} in:\n{fixed}"
