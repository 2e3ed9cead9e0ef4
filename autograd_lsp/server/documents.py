"""Per-document state: the core's `Analyzer`, the newest analysis, the debounce.

Rules of the road:
- Only the newest version of a document is analysed. A change schedules an
  analysis after `DEBOUNCE_SECONDS` (0 unless the user sets a wait); a newer
  change cancels a wait that has not ended.
- The analysis runs in a worker thread so that the server keeps reading
  messages; one analysis per document at a time (the `Analyzer` keeps caches).
- A result whose version the client has moved past is kept as a cache but is
  never published (`Analysis.version` is checked against the live document).
- The core's incremental caches cost about 4 MB for a 2,000-line file, so only
  the `MAX_ANALYZERS` documents analysed most recently keep theirs; the others
  keep their last findings, and an edit there starts from a fresh `Analyzer`.
"""
from __future__ import annotations

import asyncio
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from autograd_lsp.analysis import Analyzer, Finding
from autograd_lsp.analysis.records import record
from autograd_lsp.server.positions import LineIndex
from autograd_lsp.server.settings import DocumentSettings

# No wait by default: an analysis starts as soon as nothing runs for the document,
# and changes that arrive while one runs are coalesced into one more run (see
# `DocumentState.running`), so a burst of typing costs at most two analyses.
DEBOUNCE_SECONDS = 0.0
# A wait before analysing, in milliseconds (also `debounceMs` in initializationOptions),
# for users who prefer diagnostics to settle after they stop typing.
DEBOUNCE_ENV = "AUTOGRAD_LSP_DEBOUNCE_MS"
# An analysis that takes longer is stopped: its result is never sent (it is not
# "no problems"), and the user is told once. Overridden in milliseconds by this
# variable (for tests and slow machines).
ANALYSIS_TIMEOUT_SECONDS = 10.0
ANALYSIS_TIMEOUT_ENV = "AUTOGRAD_LSP_ANALYSIS_TIMEOUT_MS"
# Larger documents are not analysed (the user is told once): a 50 MB file would
# hold the server for minutes and take gigabytes.
MAX_DOCUMENT_CHARS = 2_000_000
# Documents whose incremental caches are kept (the ones being edited, in practice).
MAX_ANALYZERS = 8


@record
class Analysis:
    version: int | None
    generation: int             # settings generation it was made with
    text: str
    findings: tuple[Finding, ...]
    settings: DocumentSettings
    index: LineIndex
    # For a notebook cell: its notebook's analysis (notebook_sync.NotebookCell).
    notebook: Any = None

    @property
    def result_id(self) -> str:
        if self.notebook is not None:
            return f"{self.notebook.result_id}:{self.version}:{self.generation}"
        return f"{self.version}:{self.generation}"


@dataclass
class DocumentState:
    uri: str
    # None when the document's caches were dropped to bound memory (see Documents).
    analyzer: Analyzer | None = None
    latest: Analysis | None = None
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    pending: asyncio.Task | None = None
    # result_id of the last push, to skip re-sending identical diagnostics
    published: str | None = None
    # A scheduled publish is past its debounce wait and analysing: a newer change
    # then only sets `rerun_after` (the delay before one more run), so that at most
    # one analysis per document is ever queued behind the running one.
    running: bool = False
    rerun_after: float | None = None
    # Paths of the project modules its last analysis read (see server/imports.py).
    dependencies: frozenset = frozenset()
    # Budget overruns already told to the user, so that each is told once.
    told: set = field(default_factory=set)
    # How many times the core ran on this document, and the most requests ever
    # waiting for its lock at once (reported by `autograd-lsp/stats`).
    analyses: int = 0
    waiting: int = 0
    max_waiting: int = 0

    def is_current(self, version: int | None, generation: int, text: str) -> bool:
        # By text as well: a client may re-send an old version number (a second
        # didOpen without didClose, versions going back) with another text.
        latest = self.latest
        return latest is not None and latest.version == version \
            and latest.generation == generation and latest.text == text


def debounce_from(value, default: float) -> float:
    """Seconds from a millisecond value (a number or a numeric string); `default`
    for anything else, so a bad value never stops the server."""
    try:
        milliseconds = float(value)
    except (TypeError, ValueError):
        return default
    if not 0 <= milliseconds <= 10_000:
        return default
    return milliseconds / 1000


def path_of(uri: str) -> Path | None:
    """The file system path of a `file:` URI; None for unsaved buffers and other schemes."""
    parsed = urlparse(uri)
    if parsed.scheme != "file":
        return None
    path = unquote(parsed.path)
    # file:///C:/x on Windows
    if len(path) > 2 and path[0] == "/" and path[2] == ":":
        path = path[1:]
    return Path(path)


class Documents:
    def __init__(self, max_analyzers: int = MAX_ANALYZERS):
        self._states: dict[str, DocumentState] = {}
        self.max_analyzers = max_analyzers
        # Documents holding an Analyzer, least recently analysed first.
        self._with_analyzer: OrderedDict[str, None] = OrderedDict()

    def analyzer_for(self, state: DocumentState, workspace=None) -> Analyzer:
        """The document's Analyzer (a new one, resolving imports in `workspace`, if it
        had none), marking it recently used and dropping the caches of the least
        recently analysed documents beyond the limit."""
        if state.analyzer is None:
            state.analyzer = Analyzer(workspace=workspace)
        self._with_analyzer[state.uri] = None
        self._with_analyzer.move_to_end(state.uri)
        while len(self._with_analyzer) > self.max_analyzers:
            uri, _ = self._with_analyzer.popitem(last=False)
            other = self._states.get(uri)
            if other is not None:
                # An analysis running in a worker holds its own reference and finishes.
                other.analyzer = None
        return state.analyzer

    def drop_analyzer(self, state: DocumentState) -> None:
        state.analyzer = None
        self._with_analyzer.pop(state.uri, None)

    def get(self, uri: str) -> DocumentState:
        state = self._states.get(uri)
        if state is None:
            state = self._states[uri] = DocumentState(uri)
        return state

    def find(self, uri: str) -> DocumentState | None:
        return self._states.get(uri)

    def close(self, uri: str) -> None:
        state = self._states.pop(uri, None)
        self._with_analyzer.pop(uri, None)
        if state and state.pending and not state.pending.done():
            state.pending.cancel()

    def uris(self) -> list[str]:
        return list(self._states)
