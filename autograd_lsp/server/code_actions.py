"""`textDocument/codeAction` and `codeAction/resolve`.

Offered for the findings under the requested range:
- one `quickfix` per fix the finding carries (the first safe one is preferred);
- a `quickfix` that suppresses the finding with `# noqa: CODE`, merged into a
  noqa comment already on the line;
- `source.fixAll.autograd-lsp`, every safe fix in the document.

When the client can resolve the `edit` property lazily, actions go out with a
`data` key instead of an edit and `codeAction/resolve` builds the edit: a
lightbulb then costs no edit building (fix-all re-analyses the fixed text).
"""
from __future__ import annotations

import difflib

from lsprotocol import types

from autograd_lsp.analysis import SYNTAX_CODE, Analyzer, Finding, Fix, TextEdit
from autograd_lsp.analysis.source import SourceText
from autograd_lsp.analysis.suppression import NOQA
from autograd_lsp.fixing import fix_text
from autograd_lsp.server.diagnostics import SOURCE, to_diagnostic
from autograd_lsp.server.documents import Analysis, path_of
from autograd_lsp.server.imports import workspace_of
from autograd_lsp.server.linting import analyse_now
from autograd_lsp.server.texts import text

FIX_ALL = f"{types.CodeActionKind.SourceFixAll.value}.{SOURCE}"
KINDS = [types.CodeActionKind.QuickFix, FIX_ALL]


async def code_action(ls, params: types.CodeActionParams):
    uri = params.text_document.uri
    analysis = await analyse_now(ls, uri)
    if analysis is None:
        return None
    lazy = ls.capabilities.resolve_code_action_edits
    locale = analysis.settings.settings.locale
    index = analysis.index
    start = index.from_client(params.range.start)
    end = index.from_client(params.range.end)
    from_client = {(d.code, _range_key(d.range)): d for d in params.context.diagnostics
                   if d.source == SOURCE}

    actions: list[types.CodeAction] = []
    suppressed: set = set()
    for number, finding in enumerate(analysis.findings):
        if not _overlaps(finding, start, end):
            continue
        diagnostic = to_diagnostic(finding, index, analysis.version)
        diagnostic = from_client.get((finding.code, _range_key(diagnostic.range)), diagnostic)
        if _wants(params.context.only, types.CodeActionKind.QuickFix):
            preferred_given = False
            for fix_number, fix in enumerate(finding.fixes):
                preferred = fix.safe and not preferred_given
                preferred_given |= preferred
                action = types.CodeAction(
                    title=f"{fix.title} ({finding.code})",
                    kind=types.CodeActionKind.QuickFix,
                    diagnostics=[diagnostic], is_preferred=preferred)
                _attach(action, lazy, analysis, uri,
                        {"kind": "fix", "finding": number, "fix": fix_number},
                        lambda fix=fix: fix_edits(analysis, fix))
                actions.append(action)
            key = (finding.line, finding.code)
            if finding.code != SYNTAX_CODE and key not in suppressed:
                edit = suppress_edit(analysis, finding)
                if edit is not None:
                    suppressed.add(key)
                    action = types.CodeAction(
                        title=text("suppress", locale, code=finding.code),
                        kind=types.CodeActionKind.QuickFix, diagnostics=[diagnostic])
                    _attach(action, lazy, analysis, uri,
                            {"kind": "suppress", "finding": number},
                            lambda edit=edit: [analysis.index.text_edit(edit)])
                    actions.append(action)
    if _wants(params.context.only, FIX_ALL) and any(
            fix.safe for finding in analysis.findings for fix in finding.fixes):
        action = types.CodeAction(title=text("fix_all", locale), kind=FIX_ALL)
        _attach(action, lazy, analysis, uri, {"kind": "fixAll"}, lambda: fix_all_edits(analysis, ls, uri))
        actions.append(action)
    return actions


async def resolve_code_action(ls, action: types.CodeAction) -> types.CodeAction:
    data = action.data if isinstance(action.data, dict) else None
    if action.edit is not None or data is None:
        return action
    uri = data.get("uri")
    analysis = await analyse_now(ls, uri) if isinstance(uri, str) else None
    # A resolve for an older version than the document's: its positions no longer
    # hold, so the action stays without an edit (the client will ask again).
    if analysis is None or analysis.result_id != data.get("result_id"):
        return action
    edits = _edits_for(analysis, data, ls, uri)
    if edits is not None:
        action.edit = types.WorkspaceEdit(changes={uri: edits})
    return action


def _edits_for(analysis: Analysis, data: dict, ls, uri: str) -> list[types.TextEdit] | None:
    kind = data.get("kind")
    if kind == "fixAll":
        return fix_all_edits(analysis, ls, uri)
    number = data.get("finding")
    if not isinstance(number, int) or not 0 <= number < len(analysis.findings):
        return None
    finding = analysis.findings[number]
    if kind == "suppress":
        edit = suppress_edit(analysis, finding)
        return [analysis.index.text_edit(edit)] if edit else None
    fix_number = data.get("fix")
    if kind == "fix" and isinstance(fix_number, int) and 0 <= fix_number < len(finding.fixes):
        return fix_edits(analysis, finding.fixes[fix_number])
    return None


def _attach(action, lazy: bool, analysis: Analysis, uri: str, data: dict, build) -> None:
    if lazy:
        action.data = {"uri": uri, "result_id": analysis.result_id, **data}
    else:
        action.edit = types.WorkspaceEdit(changes={uri: build()})


# -- edits ----------------------------------------------------------------------------

def fix_edits(analysis: Analysis, fix: Fix) -> list[types.TextEdit]:
    return [analysis.index.text_edit(edit) for edit in fix.edits]


def suppress_edit(analysis: Analysis, finding: Finding) -> TextEdit | None:
    """`# noqa: CODE` on the finding's first line (where the core looks for it)."""
    line = analysis.index.line_text(finding.line)
    match = NOQA.search(line)
    if match is not None and match.group("codes"):
        at = match.end("codes")
        return TextEdit(finding.line, at, finding.line, at, f", {finding.code}")
    if line.rstrip().endswith("\\"):
        # A comment cannot come before a line continuation.
        return None
    stripped = len(line.rstrip())
    return TextEdit(finding.line, stripped, finding.line, len(line), f"  # noqa: {finding.code}")


def fix_all_edits(analysis: Analysis, ls=None, uri: str | None = None) -> list[types.TextEdit]:
    """Every safe fix, as edits from the analysed text to the fixed one. The
    rounds of fixing (and the refusal to produce code that does not compile) are
    the command line's `check --fix`, so both fix the same way; like it, they
    follow the project's imports (a finding that needs models.py is fixed too)."""
    if analysis.notebook is not None:
        # A cell alone is not the program: fix the notebook, keep this cell's part.
        fixed = analysis.notebook.fixed_text(analysis.settings.settings)
    else:
        workspace = workspace_of(ls, uri) if ls is not None and uri is not None else None
        path = path_of(uri) if workspace is not None else None
        fixed = fix_text(analysis.text, analysis.settings.settings, analyzer=Analyzer(workspace=workspace),
                         path=None if path is None else str(path)).text
    return diff_edits(analysis, fixed)


def diff_edits(analysis: Analysis, new_text: str) -> list[types.TextEdit]:
    """Line-level edits turning the analysed text into `new_text`."""
    old_lines = SourceText(analysis.text).lines_with_ends()
    new_lines = SourceText(new_text).lines_with_ends()
    edits = []
    matcher = difflib.SequenceMatcher(a=old_lines, b=new_lines, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        edits.append(analysis.index.text_edit(TextEdit(i1 + 1, 0, i2 + 1, 0, "".join(new_lines[j1:j2]))))
    return edits


# -- helpers ----------------------------------------------------------------------------

def _wants(only, kind: str) -> bool:
    """Whether `kind` passes the client's `only` filter (a kind matches its parents)."""
    if not only:
        return True
    return any(kind == wanted or kind.startswith(f"{wanted}.") for wanted in only)


def _overlaps(finding: Finding, start: tuple, end: tuple) -> bool:
    return (finding.line, finding.column) <= end and start <= (finding.end_line, finding.end_column)


def _range_key(r: types.Range) -> tuple:
    return (r.start.line, r.start.character, r.end.line, r.end.character)
