"""The project's own modules a document imports (`from models import Net`), read
as the editor has them: an open document's unsaved text, else the file on disk.

When such a module changes (typed into, opened, closed, saved or changed on
disk), every open document whose analysis read it, directly or through another
module, is analysed again: push clients get new diagnostics, pull clients a
refresh request.
"""
from __future__ import annotations

import os

from autograd_lsp.project import read_file, workspace_for
from autograd_lsp.server.documents import path_of

# A module being typed into changes on every keystroke: its importers wait a little
# longer than the document itself, so that they are analysed once per pause.
DEPENDENT_DELAY_SECONDS = 0.3


def _key(path) -> str:
    return os.path.normpath(os.path.abspath(str(path)))


class ModuleReader:
    """`read(path)` for the core's Workspace. Called from analysis threads: it reads
    only a dict the event loop replaces whole, never one it changes in place."""

    def __init__(self, ls):
        self._ls = ls
        self.open_paths: dict = {}          # normalised path -> URI of the open document

    def document_opened(self, uri: str) -> None:
        path = path_of(uri)
        if path is not None:
            self.open_paths = {**self.open_paths, _key(path): uri}

    def document_closed(self, uri: str) -> None:
        self.open_paths = {k: v for k, v in self.open_paths.items() if v != uri}

    def __call__(self, path: str) -> str | None:
        uri = self.open_paths.get(_key(path))
        if uri is not None:
            document = self._ls.workspace.text_documents.get(uri)
            if document is not None:
                return document.source
        return read_file(path)


def workspace_of(ls, uri: str):
    """The project workspace a document's imports are resolved in; None for unsaved
    buffers (they have no folder to import from)."""
    path = path_of(uri)
    if path is None:
        return None
    return workspace_for(path, read=ls.module_reader)


def module_changed(ls, uri: str) -> set:
    """`uri`'s text changed for its importers: what was read from it is dropped.
    Returns the paths of the modules now out of date (it, and those importing it)."""
    path = path_of(uri)
    if path is None or path.suffix != ".py":
        return set()
    stale = {_key(path)}
    workspace = workspace_of(ls, uri)
    if workspace is not None:
        stale |= workspace.forget(str(path))
    return stale
