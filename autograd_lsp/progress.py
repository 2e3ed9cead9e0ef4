"""A one-line progress count on a terminal, for long `check` runs.

Only when the stream is a terminal: piped or redirected output (CI logs, `| head`)
never gets carriage returns mixed into it. Nothing shows before `DELAY_SECONDS`,
so quick runs look exactly as before.
"""
from __future__ import annotations

import time
from typing import TextIO

DELAY_SECONDS = 0.5
REFRESH_SECONDS = 0.1


class Progress:
    def __init__(self, total: int, stream: TextIO, clock=time.monotonic):
        self.total = total
        self.done = 0
        self.stream = stream
        self.clock = clock
        self.enabled = total > 1 and _is_terminal(stream)
        self._started = clock()
        self._shown_at: float | None = None

    def advance(self) -> None:
        self.done += 1
        if not self.enabled:
            return
        now = self.clock()
        if now - self._started < DELAY_SECONDS:
            return
        if self._shown_at is not None and now - self._shown_at < REFRESH_SECONDS \
                and self.done < self.total:
            return
        self._shown_at = now
        self.stream.write(f"\rChecked {self.done}/{self.total} files")
        self.stream.flush()

    def clear(self) -> None:
        if self._shown_at is not None:
            # Return to the line's start and erase it, so the summary prints in its place.
            self.stream.write("\r\x1b[K")
            self.stream.flush()
            self._shown_at = None


def _is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # closed or not a real file
        return False
