"""The autograd-lsp core: Python source text in, autograd findings out.

No LSP types, no I/O and no torch import here; `autograd_lsp` turns findings
into editor diagnostics and command-line output.

    from autograd_lsp.analysis import analyze, Analyzer, Settings
    findings = analyze(source)                  # one-off
    analyzer = Analyzer(); analyzer.analyze(v1); analyzer.analyze(v2)   # incremental
"""
from autograd_lsp.analysis.engine import SYNTAX_CODE, SYNTAX_NAME, Analyzer, analyze
from autograd_lsp.analysis.findings import SEVERITIES, Finding, Fix, TextEdit
from autograd_lsp.analysis.rules import all_rules, rule_by_key
from autograd_lsp.analysis.settings import Settings

__all__ = [
    "Analyzer", "analyze", "Finding", "Fix", "TextEdit", "Settings", "SEVERITIES",
    "all_rules", "rule_by_key", "SYNTAX_CODE", "SYNTAX_NAME",
]
