"""Notebook document sync: the cells of a notebook analysed as one program,
with diagnostics, hovers and code actions per cell, for push and pull clients."""
from __future__ import annotations

import pytest
from lsprotocol import types

from pytest_lsp import client_capabilities

from tests.server.session import (ALL_PROFILES, PROFILES, apply_lsp_edits, codes, diagnostics,
                                  edits_of, session)

NOTEBOOK = "file:///tmp/autograd_lsp_test/nb.ipynb"
CELLS = [
    "import torch\nx = torch.randn(3, requires_grad=True)\n",
    "y = x * 2\n",
    "# Markdown between the cells",
    "%time print(y)\n",
    "y.backward()\n",
]
KINDS = [types.NotebookCellKind.Code, types.NotebookCellKind.Code, types.NotebookCellKind.Markup,
         types.NotebookCellKind.Code, types.NotebookCellKind.Code]


def notebook_client(profile: str, **options):
    """A session whose client declares notebook sync on top of the profile's
    capabilities (pygls offers notebook sync only to clients that declare it)."""
    capabilities = client_capabilities(PROFILES[profile])
    capabilities.notebook_document = types.NotebookDocumentClientCapabilities(
        synchronization=types.NotebookDocumentSyncClientCapabilities())
    return session(profile, capabilities=capabilities, **options)


def cell_uri(number: int) -> str:
    return f"vscode-notebook-cell:/tmp/autograd_lsp_test/nb.ipynb#cell{number}"


def open_notebook(client, cells=CELLS, kinds=KINDS) -> None:
    client.notebook_document_did_open(types.DidOpenNotebookDocumentParams(
        notebook_document=types.NotebookDocument(
            uri=NOTEBOOK, notebook_type="jupyter-notebook", version=1,
            cells=[types.NotebookCell(kind=kind, document=cell_uri(n)) for n, kind in enumerate(kinds)]),
        cell_text_documents=[
            types.TextDocumentItem(uri=cell_uri(n), version=1, text=text,
                                   language_id="python" if kind == types.NotebookCellKind.Code else "markdown")
            for n, (text, kind) in enumerate(zip(cells, kinds))]))


def change_cell(client, number: int, notebook_version: int, cell_version: int, text: str) -> None:
    old = CELLS[number]
    end = types.Position(line=old.count("\n"), character=0)
    client.notebook_document_did_change(types.DidChangeNotebookDocumentParams(
        notebook_document=types.VersionedNotebookDocumentIdentifier(uri=NOTEBOOK, version=notebook_version),
        change=types.NotebookDocumentChangeEvent(cells=types.NotebookDocumentCellChanges(
            text_content=[types.NotebookDocumentCellContentChanges(
                document=types.VersionedTextDocumentIdentifier(uri=cell_uri(number), version=cell_version),
                changes=[types.TextDocumentContentChangePartial(
                    range=types.Range(types.Position(0, 0), end), text=text)])]))))


@pytest.mark.parametrize("profile", ALL_PROFILES)
async def test_nonscalar_backward_two_cells_later_is_reported_in_its_cell(profile):
    async with notebook_client(profile, initialization_options={"debounceMs": 0}) as client:
        sync = client.initialize_result.capabilities.notebook_document_sync
        assert [f.cells[0].language for f in sync.notebook_selector] == ["python"]
        open_notebook(client)
        found = await diagnostics(client, cell_uri(4), until=lambda items: items)
        assert codes(found) == ["AG101"]
        assert found[0].range == types.Range(types.Position(0, 0), types.Position(0, 12))
        for quiet in (0, 1, 3):
            assert await diagnostics(client, cell_uri(quiet)) == []

        # Hover on `y` in the cell of the backward: the facts flowed in from cell 1.
        hover = await client.text_document_hover_async(types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=cell_uri(4)), position=types.Position(0, 0)))
        assert "`y`" in hover.contents.value and "requires grad: yes" in hover.contents.value

        # The quick fix edits the cell it is in.
        actions = await client.text_document_code_action_async(types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=cell_uri(4)), range=found[0].range,
            context=types.CodeActionContext(diagnostics=found, only=[types.CodeActionKind.QuickFix])))
        action = actions[0]
        if action.edit is None:
            action = await client.code_action_resolve_async(action)
        assert apply_lsp_edits(CELLS[4], edits_of(action, cell_uri(4))) == "y.mean().backward()\n"


async def test_an_edit_in_one_cell_changes_another_cells_diagnostics():
    async with notebook_client("vscode", initialization_options={"debounceMs": 0}) as client:
        open_notebook(client)
        assert codes(await diagnostics(client, cell_uri(4), until=lambda items: items)) == ["AG101"]
        change_cell(client, 1, notebook_version=2, cell_version=2, text="y = (x * 2).sum()\n")
        assert await diagnostics(client, cell_uri(4), until=lambda items: not items) == []


async def test_a_cell_that_does_not_parse_is_reported_there_and_the_rest_still_analysed():
    cells = ["import torch\nx = torch.randn(3, requires_grad=True)\n", "y = (x * 2\n", "z = x * 3\nz.backward()\n"]
    kinds = [types.NotebookCellKind.Code] * 3
    async with notebook_client("neovim-0.11") as client:
        open_notebook(client, cells, kinds)
        assert codes(await diagnostics(client, cell_uri(1))) == ["AG001"]
        found = await diagnostics(client, cell_uri(2))
        assert codes(found) == ["AG101"] and found[0].range.start.line == 1


async def test_fix_all_in_a_cell_uses_the_whole_notebook():
    async with notebook_client("vscode", initialization_options={"debounceMs": 0}) as client:
        open_notebook(client)
        await diagnostics(client, cell_uri(4), until=lambda items: items)
        actions = await client.text_document_code_action_async(types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=cell_uri(4)),
            range=types.Range(types.Position(0, 0), types.Position(0, 0)),
            context=types.CodeActionContext(diagnostics=[], only=["source.fixAll.autograd-lsp"])))
        [action] = actions
        if action.edit is None:
            action = await client.code_action_resolve_async(action)
        assert apply_lsp_edits(CELLS[4], edits_of(action, cell_uri(4))) == "y.mean().backward()\n"


async def test_closing_the_notebook_clears_its_cells_diagnostics():
    async with notebook_client("vscode", initialization_options={"debounceMs": 0}) as client:
        open_notebook(client)
        await diagnostics(client, cell_uri(4), until=lambda items: items)
        client.notebook_document_did_close(types.DidCloseNotebookDocumentParams(
            notebook_document=types.NotebookDocumentIdentifier(uri=NOTEBOOK),
            cell_text_documents=[types.TextDocumentIdentifier(uri=cell_uri(n)) for n in range(5)]))
        assert await diagnostics(client, cell_uri(4), until=lambda items: not items) == []
