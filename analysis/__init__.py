"""The autograd-lsp core: Python source text in, autograd findings out.

No LSP types, no I/O and no torch import here; `autograd_lsp` turns findings
into editor diagnostics and command-line output.

    from analysis import analyze, Analyzer, Settings
    findings = analyze(source)                  # one-off
    analyzer = Analyzer(); analyzer.analyze(v1); analyzer.analyze(v2)   # incremental
"""
from analysis.engine import SYNTAX_CODE, SYNTAX_NAME, Analyzer, analyze
from analysis.findings import SEVERITIES, Finding, Fix, TextEdit
from analysis.rules import all_rules, rule_by_key
from analysis.settings import Settings

__all__ = [
    "Analyzer", "analyze", "Finding", "Fix", "TextEdit", "Settings", "SEVERITIES",
    "all_rules", "rule_by_key", "SYNTAX_CODE", "SYNTAX_NAME",
]
