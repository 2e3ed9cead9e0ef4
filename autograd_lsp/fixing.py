"""Applying the safe fixes to one source text, round after round.

Fixes of different findings may overlap, and one fix can change what the next
analysis finds, so each round applies a set of non-overlapping fixes, the text
is analysed again, and this repeats until nothing is left to fix. A round whose
result would not compile is thrown away: a fixer must never break code.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from autograd_lsp.analysis import Analyzer, Finding, Fix, Settings, TextEdit
from autograd_lsp.analysis.records import record
from autograd_lsp.analysis.source import SourceText

MAX_ROUNDS = 5


@record
class AppliedFix:
    finding: Finding
    fix: Fix


@dataclass
class FixResult:
    text: str
    applied: list[AppliedFix] = field(default_factory=list)
    # Why fixing stopped early (the text is then as fixed by the rounds before).
    problem: str | None = None
    # What remains in the final text.
    findings: list[Finding] = field(default_factory=list)


def fix_text(text: str, settings: Settings, filename: str = "<source>",
             analyzer: Analyzer | None = None, path: str | None = None) -> FixResult:
    """`text` with the safe fixes applied, round after round. `path`: the file's path,
    for an analyzer that follows the project's imports (it then finds what `check`
    finds)."""
    analyzer = analyzer or Analyzer()
    result = FixResult(text)

    def analyze(source: str) -> list[Finding]:
        if path is None:
            return analyzer.analyze(source, settings)
        return analyzer.analyze(source, settings, path=path)

    if not _compiles(text, filename):
        # Without a compiling original there is no way to tell a fix that breaks
        # the code from the code's own error.
        if any(f.fixes for f in analyze(text)):
            result.problem = "not fixed: the file does not compile"
        result.findings = analyze(text)
        return result
    newline = SourceText(text).newline
    for _ in range(MAX_ROUNDS):
        chosen = choose_fixes(analyze(result.text))
        if not chosen:
            break
        edits = [_with_line_ending(e, newline) for applied in chosen for e in applied.fix.edits]
        try:
            new_text = SourceText(result.text).apply(edits)
        except ValueError as exc:
            result.problem = f"not fixed: a fix has invalid edits ({exc})"
            break
        if new_text == result.text:
            break
        if not _compiles(new_text, filename):
            names = ", ".join(sorted({a.finding.code for a in chosen}))
            result.problem = f"fix for {names} skipped: it would produce code that does not compile"
            break
        result.text = new_text
        result.applied.extend(chosen)
    # Cheap: the analyzer has every chunk of the final text cached already.
    result.findings = analyze(result.text)
    return result


def choose_fixes(findings: list[Finding]) -> list[AppliedFix]:
    """The first safe fix of each finding, leaving out those that overlap a fix
    already chosen (they get their turn in the next round)."""
    chosen: list[AppliedFix] = []
    taken: list[tuple[tuple[int, int], tuple[int, int]]] = []
    for finding in findings:
        fix = next((f for f in finding.fixes if f.safe and f.edits), None)
        if fix is None:
            continue
        spans = [_span(edit) for edit in fix.edits]
        if any(_overlap(span, other) for span in spans for other in taken):
            continue
        chosen.append(AppliedFix(finding, fix))
        taken.extend(spans)
    return chosen


def _span(edit: TextEdit) -> tuple[tuple[int, int], tuple[int, int]]:
    return (edit.line, edit.column), (edit.end_line, edit.end_column)


def _overlap(a, b) -> bool:
    # Two insertions at the same point, or a replacement touching another, would
    # make the order of the result ambiguous: treat touching as overlapping too.
    (a_start, a_end), (b_start, b_end) = a, b
    return a_start <= b_end and b_start <= a_end


def _with_line_ending(edit: TextEdit, newline: str) -> TextEdit:
    # Fixes insert lines with "\n"; a CRLF or CR file should keep its line ends.
    if newline == "\n" or not any(ch in edit.new_text for ch in "\r\n"):
        return edit
    new_text = "\n".join(SourceText(edit.new_text).lines).replace("\n", newline)
    return TextEdit(edit.line, edit.column, edit.end_line, edit.end_column, new_text)


def _compiles(text: str, filename: str) -> bool:
    # compile() only translates the text to bytecode; nothing of it runs.
    try:
        compile(text, filename, "exec", dont_inherit=True)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True
