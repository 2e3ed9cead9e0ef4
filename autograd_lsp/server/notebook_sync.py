"""Notebook document sync (LSP 3.17 `notebookDocument/*`): a notebook's code
cells analysed as one program, diagnostics, hovers and code actions per cell.

The client sends the notebook and its cells as text documents with their own
URIs; pygls keeps both in its workspace before these handlers run. Requests
about a cell (hover, code actions, pulled diagnostics) name the cell's URI:
`analyse_cell` answers them with an `Analysis` of the cell alone (its text,
its findings in its own positions), cut from the analysis of the whole
notebook, so the other handlers need not know about notebooks.

The notebook's analysis lives in the `DocumentState` of the notebook URI, with
its own core `Analyzer`: a cell edit changes one part of the program text, and
the core re-analyses only the chunks that changed or that facts flow into.
"""
from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from lsprotocol import types

from autograd_lsp.analysis import Settings
from autograd_lsp.analysis.records import record
from autograd_lsp.notebooks import CellFinding, NotebookProgram, fix_cells, place_findings
from autograd_lsp.server.diagnostics import to_diagnostics
from autograd_lsp.server.documents import Analysis, path_of
from autograd_lsp.server.guard import report_exception
from autograd_lsp.server.linting import _report_settings_problems, _run_analyzer
from autograd_lsp.server.positions import LineIndex

# Advertised in the server's capabilities: any notebook type, for its Python cells.
SYNC_OPTIONS = types.NotebookDocumentSyncOptions(
    notebook_selector=[types.NotebookDocumentFilterWithCells(
        cells=[types.NotebookCellLanguage(language="python")], notebook="*")])


@record
class NotebookAnalysis:
    version: int
    generation: int
    cell_uris: tuple[str, ...]          # code cells, in order
    sources: tuple[str, ...]
    program: NotebookProgram
    placed: tuple[CellFinding, ...]
    settings: object                    # DocumentSettings


@record
class NotebookCell:
    """What an `Analysis` of one cell knows of its notebook (`Analysis.notebook`)."""
    notebook_uri: str
    index: int                          # 0-based among code cells
    whole: NotebookAnalysis

    @property
    def result_id(self) -> str:
        # Another cell's edit changes this cell's diagnostics: the id follows the notebook.
        return f"nb{self.whole.version}"

    def fixed_text(self, settings: Settings) -> str:
        """This cell's text with every safe fix of the notebook applied."""
        return fix_cells(list(self.whole.sources), settings).sources[self.index]

    def program_position(self, line: int, column: int) -> tuple[int, int]:
        program = self.whole.program
        return (program.program_line(self.index, line),
                program.program_column(self.index, line, column))


@dataclass
class NotebookStore:
    analyses: dict[str, NotebookAnalysis] = field(default_factory=dict)
    # Cell URIs each notebook's diagnostics were last pushed to (to clear removed cells).
    published: dict[str, tuple[str, ...]] = field(default_factory=dict)
    pending: dict[str, asyncio.Task] = field(default_factory=dict)


def notebook_of(ls, cell_uri: str):
    return ls.workspace.get_notebook_document(cell_uri=cell_uri)


# -- analysis -----------------------------------------------------------------------------------

async def analyse_notebook(ls, notebook_uri: str, with_facts: bool = False) -> NotebookAnalysis | None:
    notebook = ls.workspace.get_notebook_document(notebook_uri=notebook_uri)
    if notebook is None:
        return None
    state = ls.documents.get(notebook_uri)
    if not ls.capabilities.watched_files_registration:
        ls.settings.notice_changed_projects()
    async with state.lock:
        generation = ls.settings.generation
        cached = ls.notebooks.analyses.get(notebook_uri)
        if cached is not None and cached.version == notebook.version and cached.generation == generation \
                and (not with_facts or state.analyzer is not None):
            return cached
        cells = [cell.document for cell in notebook.cells if cell.kind == types.NotebookCellKind.Code]
        sources = tuple(ls.workspace.get_text_document(uri).source for uri in cells)
        program = NotebookProgram(list(sources))
        doc_settings = ls.settings.for_document(notebook_uri, path_of(notebook_uri))
        _report_settings_problems(ls)
        placed: tuple = ()
        if doc_settings.enabled and not doc_settings.excluded:
            findings = await _run_analyzer(ls, state, program.text, doc_settings.settings,
                                           path_of(notebook_uri))
            if findings is None:
                return None   # stopped (too slow or cancelled): never passed off as no problems
            placed = tuple(place_findings(program, list(findings), doc_settings.settings))
        analysis = NotebookAnalysis(notebook.version, generation, tuple(cells), sources, program,
                                    placed, doc_settings)
        ls.notebooks.analyses[notebook_uri] = analysis
        return analysis


async def analyse_cell(ls, cell_uri: str, with_facts: bool = False) -> Analysis | None:
    """The analysis of one cell, cut from its notebook's; None when the cell is
    not (or no longer) a code cell of an open notebook."""
    notebook = notebook_of(ls, cell_uri)
    if notebook is None:
        return None
    whole = await analyse_notebook(ls, notebook.uri, with_facts)
    if whole is None or cell_uri not in whole.cell_uris:
        return None
    return cell_analysis(ls, whole, notebook.uri, whole.cell_uris.index(cell_uri))


def cell_analysis(ls, whole: NotebookAnalysis, notebook_uri: str, index: int) -> Analysis:
    text = whole.sources[index]
    version = ls.workspace.get_text_document(whole.cell_uris[index]).version
    findings = tuple(p.finding for p in whole.placed if p.cell == index + 1)
    return Analysis(version, whole.generation, text, findings, whole.settings,
                    LineIndex(text, ls.workspace.position_encoding),
                    notebook=NotebookCell(notebook_uri, index, whole))


async def facts_at(ls, analysis: Analysis, line: int, column: int):
    """Hover facts at a cell position, from the notebook's analyzer (which must
    still hold this very analysis)."""
    cell = analysis.notebook
    state = ls.documents.find(cell.notebook_uri)
    if state is None:
        return None
    async with state.lock:
        if state.analyzer is None or ls.notebooks.analyses.get(cell.notebook_uri) is not cell.whole:
            return None
        return state.analyzer.facts_at(*cell.program_position(line, column))


# -- notifications --------------------------------------------------------------------------------

def did_open(ls, params: types.DidOpenNotebookDocumentParams) -> None:
    ls.documents.get(params.notebook_document.uri)
    schedule_notebook(ls, params.notebook_document.uri, 0)


def did_change(ls, params: types.DidChangeNotebookDocumentParams) -> None:
    schedule_notebook(ls, params.notebook_document.uri, ls.debounce_seconds)


def did_close(ls, params: types.DidCloseNotebookDocumentParams) -> None:
    uri = params.notebook_document.uri
    task = ls.notebooks.pending.pop(uri, None)
    if task is not None and not task.done():
        task.cancel()
    ls.notebooks.analyses.pop(uri, None)
    ls.documents.close(uri)
    cells = {cell.uri for cell in params.cell_text_documents} | set(ls.notebooks.published.pop(uri, ()))
    if not ls.capabilities.pull_diagnostics:
        for cell_uri in sorted(cells):
            ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=cell_uri, diagnostics=[]))


def schedule_notebook(ls, notebook_uri: str, delay: float) -> None:
    """Push clients get the notebook's diagnostics after the debounce; pull
    clients are asked to pull again (an edit in one cell changes the others')."""
    pending = ls.notebooks.pending.get(notebook_uri)
    if pending is not None and not pending.done():
        pending.cancel()
    ls.notebooks.pending[notebook_uri] = asyncio.ensure_future(_after(ls, notebook_uri, delay))


async def _after(ls, notebook_uri: str, delay: float) -> None:
    if delay:
        await asyncio.sleep(delay)
    try:
        if ls.capabilities.pull_diagnostics:
            if ls.capabilities.diagnostic_refresh:
                await ls.workspace_diagnostic_refresh_async(None)
            return
        await asyncio.shield(publish_notebook(ls, notebook_uri))
    except asyncio.CancelledError:
        raise
    except Exception:
        report_exception(ls, f"diagnostics of notebook {notebook_uri}")


async def publish_notebook(ls, notebook_uri: str) -> None:
    whole = await analyse_notebook(ls, notebook_uri)
    notebook = ls.workspace.get_notebook_document(notebook_uri=notebook_uri)
    if whole is None or notebook is None or notebook.version != whole.version:
        return   # a newer change has its own analysis coming
    for index, cell_uri in enumerate(whole.cell_uris):
        analysis = cell_analysis(ls, whole, notebook_uri, index)
        ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(
            uri=cell_uri, version=analysis.version, diagnostics=to_diagnostics(analysis)))
    # Cells deleted or turned into Markdown since the last push: clear what they showed.
    for cell_uri in set(ls.notebooks.published.get(notebook_uri, ())) - set(whole.cell_uris):
        ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=cell_uri, diagnostics=[]))
    ls.notebooks.published[notebook_uri] = whole.cell_uris
