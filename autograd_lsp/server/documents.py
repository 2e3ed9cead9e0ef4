"""Per-document state: the core's `Analyzer`, the newest analysis, the debounce.

Rules of the road:
- Only the newest version of a document is analysed. A change schedules an
  analysis after `DEBOUNCE_SECONDS`; a newer change cancels the wait.
- The analysis runs in a worker thread so that the server keeps reading
  messages; one analysis per document at a time (the `Analyzer` keeps caches).
- A result whose version the client has moved past is kept as a cache but is
  never published (`Analysis.version` is checked against the live document).
"""
from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote, urlparse

from analysis import Analyzer, Finding
from autograd_lsp.server.positions import LineIndex
from autograd_lsp.server.settings import DocumentSettings

DEBOUNCE_SECONDS = 0.15
# A request that needs a fresh analysis waits at most this long, then answers
# with what it has: an editor must never hang on the server.
ANALYSIS_TIMEOUT_SECONDS = 10.0


@dataclass(frozen=True)
class Analysis:
    version: int | None
    generation: int             # settings generation it was made with
    text: str
    findings: tuple[Finding, ...]
    settings: DocumentSettings
    index: LineIndex

    @property
    def result_id(self) -> str:
        return f"{self.version}:{self.generation}"


@dataclass
class DocumentState:
    uri: str
    analyzer: Analyzer = field(default_factory=Analyzer)
    latest: Analysis | None = None
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    pending: asyncio.Task | None = None
    # result_id of the last push, to skip re-sending identical diagnostics
    published: str | None = None

    def is_current(self, version: int | None, generation: int) -> bool:
        return self.latest is not None and self.latest.version == version \
            and self.latest.generation == generation


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
    def __init__(self):
        self._states: dict[str, DocumentState] = {}

    def get(self, uri: str) -> DocumentState:
        state = self._states.get(uri)
        if state is None:
            state = self._states[uri] = DocumentState(uri)
        return state

    def find(self, uri: str) -> DocumentState | None:
        return self._states.get(uri)

    def close(self, uri: str) -> None:
        state = self._states.pop(uri, None)
        if state and state.pending and not state.pending.done():
            state.pending.cancel()

    def uris(self) -> list[str]:
        return list(self._states)
