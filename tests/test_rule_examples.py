"""Each rule flags its bad examples on the stated line and stays quiet on its
good ones; generated from the examples inside the rule modules."""
from __future__ import annotations

import pytest

from autograd_lsp.analysis import analyze, all_rules
from autograd_lsp.analysis.edits import apply_edits
from autograd_lsp.analysis.rule import Raises, Warns
from tests.rule_examples import BAD, GOOD


@pytest.mark.parametrize("rule,example", BAD)
def test_bad_example_is_flagged(rule, example):
    findings = analyze(example.code)
    mine = [f for f in findings if f.name == rule.name]
    assert mine, f"{rule.name} missed:\n{example.code}\nfound: {findings}"
    assert example.line in [f.line for f in mine], (
        f"{rule.name} flagged lines {[f.line for f in mine]}, expected {example.line}")
    on_line = [f for f in mine if f.line == example.line]
    if example.column is not None:
        # Columns are stated 1-based, as the command line prints them.
        assert example.column in [f.column + 1 for f in on_line], (
            f"{rule.name} flagged columns {[f.column + 1 for f in on_line]}, expected {example.column}")
    if example.fixed is not None:
        fixes = [f.fixes[0] for f in on_line if f.fixes]
        assert fixes, f"{rule.name} offers no fix on line {example.line}"
        assert apply_edits(example.code, fixes[0].edits) == example.fixed


QUOTED = [p for p in BAD
          if isinstance(p.values[1].runtime, Warns)
          or (isinstance(p.values[1].runtime, Raises) and p.values[0].severity == "error")]


@pytest.mark.parametrize("rule,example", QUOTED)
def test_message_quotes_what_torch_says(rule, example):
    # An error rule claims the exception; a warning rule quotes torch's warning.
    # (A silent wrong result may raise later, far from the cause: nothing to quote.)
    mine = [f for f in analyze(example.code) if f.name == rule.name and f.line == example.line]
    assert mine and all(example.runtime.match in f.message for f in mine), \
        f"message should quote {example.runtime.match!r}: {[f.message for f in mine]}"


@pytest.mark.parametrize("rule,example", GOOD)
def test_good_example_is_quiet(rule, example):
    findings = analyze(example.code)
    loud = [f for f in findings if f.name == rule.name or f.severity in ("error", "warning")]
    assert not loud, f"false alarm on correct code:\n{example.code}\n{loud}"


@pytest.mark.parametrize("rule", all_rules(), ids=lambda r: r.name)
def test_rule_is_complete(rule):
    assert rule.code.startswith("AG") and rule.name and rule.severity in ("error", "warning", "info")
    assert rule.bad and rule.good, "a rule carries both bad and good examples"
    assert all(e.line for e in rule.bad), "every bad example names its line"
    for locale in ("en", "zh"):
        assert rule.summary.get(locale) and rule.explanation.get(locale), f"{locale} texts missing"
        assert set(rule.messages.get(locale, {})) == set(rule.messages["en"]), \
            f"{locale} messages differ from en"
