"""The project a checked file belongs to, for following its imports: one
`analysis.workspace.Workspace` per project root, reading files from disk (the
server puts the editor's unsaved text first)."""
from __future__ import annotations

import os
from pathlib import Path

from autograd_lsp.analysis.workspace import Workspace
from autograd_lsp.cache import project_root
from autograd_lsp.sources import SourceError, read_source

_WORKSPACES: dict = {}


# path -> (the file's identity and times, its text). Every analysis of a file that
# imports project modules asks for their texts (to see whether they changed): a
# file whose stat is unchanged is not read and decoded again.
_TEXTS: dict = {}
_MAX_CACHED_TEXTS = 4096


def read_file(path: str) -> str | None:
    try:
        status = os.stat(path)
    except (OSError, ValueError):
        return None
    stamp = (status.st_ino, status.st_size, status.st_mtime_ns, status.st_ctime_ns)
    cached = _TEXTS.get(path)
    if cached is not None and cached[0] == stamp:
        return cached[1]
    try:
        text = read_source(Path(path)).text
    except (SourceError, OSError, ValueError):
        return None
    if len(_TEXTS) >= _MAX_CACHED_TEXTS:
        _TEXTS.clear()
    _TEXTS[path] = (stamp, text)
    return text


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
