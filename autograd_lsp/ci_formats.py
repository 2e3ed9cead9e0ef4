"""Output for CI systems: SARIF 2.1.0 (code scanning), GitHub workflow
annotations, per-rule statistics and unified diffs of what `--fix` would do.

Positions: SARIF and GitHub count lines and columns from 1; columns here are
code points, which SARIF states with `columnKind: unicodeCodePoints`. A finding
in a notebook is placed inside its cell, which neither format can express: the
result names the cell in its message (and, in SARIF, in `properties.cell`) and
carries no region or fix, rather than point at the wrong line of the JSON.
"""
from __future__ import annotations

import difflib
import json
from collections import Counter
from pathlib import Path
from urllib.parse import quote

from autograd_lsp.analysis import SYNTAX_CODE, SYNTAX_NAME, Finding, all_rules

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
SARIF_LEVEL = {"error": "error", "warning": "warning", "info": "note"}
GITHUB_COMMAND = {"error": "error", "warning": "warning", "info": "notice"}

# (path shown, finding, code cell or None)
Item = tuple[str, Finding, "int | None"]


# -- SARIF -----------------------------------------------------------------------------------

def sarif_document(items: list[Item], version: str, locale: str = "en") -> str:
    rules = sarif_rules(locale)
    index = {rule["id"]: number for number, rule in enumerate(rules)}
    results = [_sarif_result(path, finding, cell, index) for path, finding, cell in items]
    log = {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {"name": "autograd-lsp", "version": version, "rules": rules}},
            "columnKind": "unicodeCodePoints",
            "results": results,
        }],
    }
    return json.dumps(log, ensure_ascii=False, indent=2)


def sarif_rules(locale: str = "en") -> list[dict]:
    """Every rule's metadata and help (its explanation with a bad and a good example)."""
    descriptors = [{
        "id": SYNTAX_CODE, "name": SYNTAX_NAME,
        "shortDescription": {"text": "The file (or notebook cell) does not parse."},
        "fullDescription": {"text": "Python cannot parse this code; the rest of the file is still checked."},
        "defaultConfiguration": {"level": "error"},
    }]
    for rule in all_rules():
        summary, explanation = rule.describe(locale)
        help_text, help_markdown = explanation, explanation
        if rule.bad and rule.good:
            bad, good = rule.bad[0].code.rstrip(), rule.good[0].code.rstrip()
            help_text += f"\n\nBad:\n\n{bad}\n\nGood:\n\n{good}\n"
            help_markdown += f"\n\nBad:\n\n```python\n{bad}\n```\n\nGood:\n\n```python\n{good}\n```\n"
        descriptors.append({
            "id": rule.code, "name": rule.name,
            "shortDescription": {"text": summary},
            "fullDescription": {"text": explanation},
            "help": {"text": help_text, "markdown": help_markdown},
            "defaultConfiguration": {"level": SARIF_LEVEL[rule.severity]},
            "properties": {"tags": ["pytorch", "autograd"]},
        })
    return descriptors


def _sarif_result(path: str, finding: Finding, cell: int | None, index: dict) -> dict:
    artifact = {"uri": _uri(path)}
    if not Path(path).is_absolute():
        artifact["uriBaseId"] = "%SRCROOT%"
    message = finding.message if cell is None else (
        f"cell {cell}, line {finding.line}, column {finding.column + 1}: {finding.message}")
    location: dict = {"physicalLocation": {"artifactLocation": artifact}}
    result = {"ruleId": finding.code, "level": SARIF_LEVEL.get(finding.severity, "warning"),
              "message": {"text": message}, "locations": [location]}
    if finding.code in index:
        result["ruleIndex"] = index[finding.code]
    if cell is not None:
        result["properties"] = {"cell": cell}
        return result
    location["physicalLocation"]["region"] = _region(finding.line, finding.column,
                                                     finding.end_line, finding.end_column)
    fixes = [{"description": {"text": fix.title},
              "artifactChanges": [{"artifactLocation": artifact, "replacements": [
                  {"deletedRegion": _region(e.line, e.column, e.end_line, e.end_column),
                   "insertedContent": {"text": e.new_text}} for e in fix.edits]}]}
             for fix in finding.fixes if fix.edits]
    if fixes:
        result["fixes"] = fixes
    return result


def _region(line: int, column: int, end_line: int, end_column: int) -> dict:
    return {"startLine": line, "startColumn": column + 1, "endLine": end_line,
            "endColumn": end_column + 1}


def _uri(path: str) -> str:
    posix = Path(path).as_posix()
    if Path(path).is_absolute():
        return "file://" + quote(posix)
    return quote(posix)


# -- GitHub workflow commands --------------------------------------------------------------------

def github_line(path: str, finding: Finding, cell: int | None) -> str:
    """One `::error`/`::warning`/`::notice` workflow command; GitHub shows it as an
    annotation on the file (on the line, for Python files)."""
    command = GITHUB_COMMAND.get(finding.severity, "warning")
    title = f"{finding.code} [{finding.name}]"
    if cell is None:
        properties = (f"file={_property(path)},line={finding.line},col={finding.column + 1},"
                      f"endLine={finding.end_line},endColumn={finding.end_column + 1},"
                      f"title={_property(title)}")
        message = finding.message
    else:
        properties = f"file={_property(path)},title={_property(title)}"
        message = f"cell {cell}, line {finding.line}, column {finding.column + 1}: {finding.message}"
    return f"::{command} {properties}::{_data(message)}"


def _data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _property(text: str) -> str:
    return _data(text).replace(":", "%3A").replace(",", "%2C")


# -- statistics and diffs ----------------------------------------------------------------------

def statistics(items: list[Item]) -> str:
    """One line per rule found: count, code, name; the most frequent first."""
    counts = Counter((finding.code, finding.name) for _, finding, _ in items)
    rows = sorted(counts.items(), key=lambda row: (-row[1], row[0]))
    return "\n".join(f"{count:>5}  {code}  {name}" for (code, name), count in rows)


def unified_diff(label: str, old: str, new: str) -> str:
    lines = difflib.unified_diff(old.splitlines(keepends=True), new.splitlines(keepends=True),
                                 fromfile=label, tofile=label)
    return "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n"
                   for line in lines)
