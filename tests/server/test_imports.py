"""A document that imports another module of the project: the facts come from that
module as the editor has it, and change when it changes (typed into, closed, or
changed on disk)."""
from __future__ import annotations

import asyncio

import pytest
from lsprotocol import types

from tests.server.session import codes, diagnostics, open_document, session

# The model lives in `models.py`, the loop in `train.py`: while the model's forward
# returns one value per sample, `loss.backward()` in train.py is AG101; once the
# forward reduces, train.py is clean.
TRAIN = (
    "import torch\n"
    "from models import Net\n"
    "model = Net()\n"
    "optimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n"
    "for step in range(3):\n"
    "    optimizer.zero_grad()\n"
    "    loss = model(torch.randn(8, 4))\n"
    "    loss.backward()\n"
    "    optimizer.step()\n"
)
PER_SAMPLE = (
    "import torch.nn as nn\n"
    "class Net(nn.Module):\n"
    "    def __init__(self):\n"
    "        super().__init__()\n"
    "        self.fc = nn.Linear(4, 1)\n"
    "    def forward(self, x):\n"
    "        return self.fc(x).pow(2)\n"
)
REDUCED = PER_SAMPLE.replace(".pow(2)", ".pow(2).mean()")


@pytest.fixture
def project(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    (tmp_path / "models.py").write_text(PER_SAMPLE)
    (tmp_path / "train.py").write_text(TRAIN)
    return tmp_path


def change_whole(client, uri: str, text: str, version: int) -> None:
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
        content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)]))


@pytest.mark.parametrize("profile", ["vscode", "neovim-0.11"])
async def test_findings_follow_the_imported_module_as_it_is_edited(project, profile):
    train, models = (project / "train.py").as_uri(), (project / "models.py").as_uri()
    folders = [types.WorkspaceFolder(uri=project.as_uri(), name="demo")]
    async with session(profile, workspace_folders=folders) as client:
        open_document(client, train, TRAIN)
        # Read from disk: the helper returns a per-sample loss.
        assert codes(await diagnostics(client, train, until=lambda items: codes(items) == ["AG101"])) \
            == ["AG101"]
        # Opened and fixed in the editor (not saved): train.py is clean.
        open_document(client, models, PER_SAMPLE)
        # Let the analyses that opening caused finish: the change below must be
        # what makes train.py clean.
        await asyncio.sleep(1.0)
        change_whole(client, models, REDUCED, 2)
        assert await diagnostics(client, train, until=lambda items: items == []) == []
        # Closed without saving: the file on disk counts again.
        client.text_document_did_close(types.DidCloseTextDocumentParams(
            text_document=types.TextDocumentIdentifier(uri=models)))
        assert codes(await diagnostics(client, train, until=lambda items: codes(items) == ["AG101"])) \
            == ["AG101"]


async def test_a_module_changed_on_disk_is_read_again(project):
    train, models = (project / "train.py").as_uri(), (project / "models.py").as_uri()
    folders = [types.WorkspaceFolder(uri=project.as_uri(), name="demo")]
    async with session("vscode", workspace_folders=folders) as client:
        open_document(client, train, TRAIN)
        await diagnostics(client, train, until=lambda items: codes(items) == ["AG101"])
        (project / "models.py").write_text(REDUCED)
        client.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams(
            changes=[types.FileEvent(uri=models, type=types.FileChangeType.Changed)]))
        assert await diagnostics(client, train, until=lambda items: items == []) == []


async def test_a_module_imported_through_another_counts(project):
    """train.py imports `helpers`, which re-exports Net from `models`."""
    (project / "helpers.py").write_text("from models import Net\n")
    (project / "train.py").write_text(TRAIN.replace("from models", "from helpers"))
    train, models = (project / "train.py").as_uri(), (project / "models.py").as_uri()
    async with session("vscode") as client:
        open_document(client, train, TRAIN.replace("from models", "from helpers"))
        await diagnostics(client, train, until=lambda items: codes(items) == ["AG101"])
        open_document(client, models, REDUCED)
        assert await diagnostics(client, train, until=lambda items: items == []) == []


async def test_fix_all_fixes_a_finding_that_needs_the_imported_module(project):
    from autograd_lsp.analysis import Analyzer
    from autograd_lsp.project import workspace_for
    from tests.server.session import apply_lsp_edits, edits_of
    from tests.server.test_code_actions import actions_for, resolved

    train = (project / "train.py").as_uri()
    folders = [types.WorkspaceFolder(uri=project.as_uri(), name="demo")]
    async with session("vscode", workspace_folders=folders) as client:
        open_document(client, train, TRAIN)
        await diagnostics(client, train, until=lambda items: codes(items) == ["AG101"])
        (fix_all,) = await actions_for(client, train, only=[types.CodeActionKind.SourceFixAll])
        fixed = apply_lsp_edits(TRAIN, edits_of(await resolved(client, fix_all), train))
    assert fixed != TRAIN
    path = project / "train.py"
    assert Analyzer(workspace=workspace_for(path)).analyze(fixed, path=str(path)) == []
