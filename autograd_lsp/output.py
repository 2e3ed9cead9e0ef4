"""How the command line prints findings and the rule catalogue.

The core counts columns from 0; people and the JSON format count from 1
(columns in code points, so a Chinese comment or an emoji earlier on the line
counts as one column each).
"""
from __future__ import annotations

import json
import re
import textwrap

from autograd_lsp.analysis import Finding, Fix, all_rules
from autograd_lsp.analysis.rule import Rule


def text_line(path: str, finding: Finding, cell: int | None = None) -> str:
    return (f"{location(path, cell)}:{finding.line}:{finding.column + 1}: "
            f"{finding.code} [{finding.name}] {finding.message}")


def location(path: str, cell: int | None) -> str:
    """`path`, or `path:cell N` for a finding in a notebook's Nth code cell."""
    return path if cell is None else f"{path}:cell {cell}"


def finding_json(path: str, finding: Finding, cell: int | None = None) -> dict:
    return {
        "path": path,
        **({"cell": cell} if cell is not None else {}),
        "line": finding.line,
        "column": finding.column + 1,
        "end_line": finding.end_line,
        "end_column": finding.end_column + 1,
        "code": finding.code,
        "name": finding.name,
        "severity": finding.severity,
        "message": finding.message,
        "fixes": [fix_json(fix) for fix in finding.fixes],
    }


def fix_json(fix: Fix) -> dict:
    return {
        "title": fix.title,
        "edits": [{"line": e.line, "column": e.column + 1, "end_line": e.end_line,
                   "end_column": e.end_column + 1, "new_text": e.new_text} for e in fix.edits],
    }


def json_document(items: list[dict]) -> str:
    # json escapes C0 controls itself; the rest that could drive a terminal too.
    text = json.dumps(items, ensure_ascii=False, indent=2)
    return _UNSAFE_IN_JSON.sub(lambda m: f"\\u{ord(m.group(0)):04x}", text)


def rules_table(locale: str) -> str:
    rules = all_rules()
    name_width = max((len(r.name) for r in rules), default=4)
    lines = [f"{'code':<6} {'name':<{name_width}} {'severity':<8} summary"]
    for rule in rules:
        summary, _ = rule.describe(locale)
        lines.append(f"{rule.code:<6} {rule.name:<{name_width}} {rule.severity:<8} {summary}")
    return "\n".join(lines)


def rules_markdown(locale: str) -> str:
    """The catalogue as a Markdown table (the README's rule table is made with it)."""
    lines = ["| code | name | severity | what it catches |", "|---|---|---|---|"]
    for rule in all_rules():
        summary = rule.describe(locale)[0].replace("|", "\\|")
        lines.append(f"| {rule.code} | `{rule.name}` | {rule.severity} | {summary} |")
    return "\n".join(lines)


def explain(rule: Rule, locale: str) -> str:
    summary, explanation = rule.describe(locale)
    bad_label, good_label = ("错误示例", "正确示例") if locale == "zh" else ("Bad", "Good")
    parts = [f"{rule.code} {rule.name} ({rule.severity})", "", summary, "", _wrap(explanation, locale)]
    if rule.bad:
        parts += ["", f"{bad_label}:", "", _indent(rule.bad[0].code)]
    if rule.good:
        parts += ["", f"{good_label}:", "", _indent(rule.good[0].code)]
    return "\n".join(parts).rstrip() + "\n"


def _wrap(text: str, locale: str) -> str:
    if locale == "zh":
        # Chinese has no spaces to break at; terminals wrap it well enough.
        return text
    return "\n".join(textwrap.fill(paragraph, width=88, break_on_hyphens=False,
                                   break_long_words=False)
                     for paragraph in text.split("\n"))


def _indent(code: str) -> str:
    return textwrap.indent(code.rstrip("\n"), "    ")


# C0 and C1 control characters (tab aside), DEL, and the bidirectional overrides
# and isolates that can make a terminal show text other than what it holds.
_UNSAFE = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
_UNSAFE_IN_JSON = re.compile("[\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def terminal_safe(text: str) -> str:
    """`text` without control characters: a file name or a message must never
    drive the terminal (escape sequences, cursor moves, a changed window title)."""
    return _UNSAFE.sub("", text)
