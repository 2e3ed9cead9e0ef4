"""The project a checked file belongs to, for following its imports: one
`analysis.workspace.Workspace` per project root, reading files from disk (the
server puts the editor's unsaved text first)."""
from __future__ import annotations

from pathlib import Path

from autograd_lsp.analysis.workspace import Workspace
from autograd_lsp.cache import project_root
from autograd_lsp.sources import SourceError, read_source

_WORKSPACES: dict = {}


def read_file(path: str) -> str | None:
    try:
        return read_source(Path(path)).text
    except (SourceError, OSError, ValueError):
        return None


def _is_file(path: str) -> bool:
    try:
        return Path(path).is_file()
    except OSError:
        return False


def workspace_for(path: Path, read=read_file) -> Workspace:
    """The workspace of the project holding `path` (its nearest pyproject.toml or
    .git folder, else the file's own folder)."""
    root = str(project_root(path.resolve().parent))
    found = _WORKSPACES.get((root, read))
    if found is None:
        found = Workspace(root, read, _is_file)
        _WORKSPACES[(root, read)] = found
    return found
