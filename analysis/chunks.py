"""Splitting a module into top-level statements ("chunks") without parsing it.

Each chunk is parsed on its own and cached by its text, so an edit inside one
function re-parses that function only. A chunk starts at a line whose first
character is code at column 0, outside any bracket, string or line
continuation; `else`/`elif`/`except`/`finally` lines stay with the statement
they continue, and decorators with the definition below them. Comments and
blank lines before the first statement form a chunk of their own.

Text is often invalid while it is typed, and one unclosed bracket or docstring
must not swallow the rest of the file:

- a column-0 line that begins with a keyword no expression can hold (`def`,
  `class`, `import`, `return`, ...) closes any open bracket, since in a valid
  module it can never sit inside one;
- a column-0 line that begins with a name inside a bracket, a column-0
  `def`/`class` inside a triple-quoted string, and any column-0 line that
  begins with a name inside a triple-quoted string opened at column 0, is
  remembered as a recovery line of its chunk. The engine cuts there only when
  the chunk does not parse (a bracket or docstring left open, `class C(`),
  because valid code may well hold such lines.

`ChunkSplitter` keeps the previous version's starts and rescans only from the
statement before the first changed character until the scan meets a start
the previous version also had; the result is always what `split_chunks` gives.
"""
from __future__ import annotations

import re
from bisect import bisect_right

from autograd_lsp.analysis.records import record
from autograd_lsp.analysis.source import LINE_BREAK, SourceText

# Tokens that change the scanner's state; everything else is skipped in bulk.
_TOKEN = re.compile(r"""'''|\"\"\"|'|"|#|\\(?:\r\n|\r|\n)|\\|[()\[\]{}]|\r\n|\r|\n""")
_WORD = re.compile(r"[^\W\d]\w*")
_CONTINUATIONS = frozenset(("else", "elif", "except", "finally"))
# Keywords that cannot appear inside an expression: at column 0 they begin a
# statement even when a bracket before them was never closed.
_STATEMENT_ONLY = frozenset(("def", "class", "import", "return", "raise", "assert", "del",
                             "pass", "global", "nonlocal", "with", "while", "try", "break",
                             "continue"))
_DEFINITIONS = frozenset(("def", "class", "async"))
_NEWLINES = ("\n", "\r\n", "\r")


@record
class Chunk:
    text: str
    start_line: int   # 1-based line of the chunk's first line in the module
    # 0-based lines, relative to the chunk, where to cut it if it fails to parse (see above).
    recovery_lines: tuple = ()

    @property
    def line_count(self) -> int:
        """Lines the chunk spans (its final line break ends its last line)."""
        lines = SourceText(self.text).line_count
        return lines - 1 if self.text.endswith(_NEWLINES) else lines


def split_chunks(source: str) -> list[Chunk]:
    starts, recovery, _ = _scan(source, 0, 0)
    return _build_chunks(source, starts, recovery)


def cut_at_recovery_lines(chunk: Chunk) -> list[Chunk]:
    """The chunk split at its recovery lines, each piece split again as a module of its own."""
    if not chunk.recovery_lines:
        return [chunk]
    lines = SourceText(chunk.text).line_starts
    cuts = [0] + [lines[i] for i in chunk.recovery_lines] + [len(chunk.text)]
    pieces: list[Chunk] = []
    for begin, end in zip(cuts, cuts[1:]):
        text = chunk.text[begin:end]
        first_line = chunk.start_line + len(LINE_BREAK.findall(chunk.text, 0, begin))
        for piece in split_chunks(text):
            pieces.append(Chunk(piece.text, first_line + piece.start_line - 1, piece.recovery_lines))
    return pieces


class ChunkSplitter:
    """`split_chunks` for successive versions of one text, rescanning only what changed."""

    def __init__(self):
        self._source: str | None = None
        self._starts: list[tuple[int, int]] = []     # (offset, 0-based line) of each start
        self._offsets: list[int] = []
        self._recovery: list[tuple[int, int]] = []   # (offset, line) of recovery lines

    def split(self, source: str) -> list[Chunk]:
        old = self._source
        if old is None:
            starts, recovery, _ = _scan(source, 0, 0)
        elif old == source:
            starts, recovery = self._starts, self._recovery
        else:
            starts, recovery = self._rescan(old, source)
        self._source, self._starts, self._recovery = source, starts, recovery
        self._offsets = [offset for offset, _ in starts]
        return _build_chunks(source, starts, recovery)

    def _rescan(self, old: str, new: str):
        prefix = _common_prefix(old, new)
        suffix = _common_suffix(old, new, limit=min(len(old), len(new)) - prefix)
        delta = len(new) - len(old)
        # Restart from the statement before the one holding the first change: that
        # line is unchanged and was a start, so the scanner's state there is clean;
        # the change may still turn the next statement into a continuation of it.
        k = max(bisect_right(self._offsets, prefix) - 2, 0)
        begin, begin_line = self._starts[k] if k > 0 else (0, 0)
        old_index = {offset: i for i, (offset, _) in enumerate(self._starts)
                     if offset >= len(old) - suffix}
        changed_end = len(new) - suffix

        def resync(offset: int) -> int | None:
            if offset < changed_end:
                return None
            return old_index.get(offset - delta)

        starts, recovery, resumed = _scan(new, begin, begin_line, resync)
        head = self._starts[:k]
        head_recovery = [r for r in self._recovery if r[0] < begin]
        if resumed is None:
            return head + starts, head_recovery + recovery
        offset, line, old_i = resumed
        line_delta = line - self._starts[old_i][1]
        tail = [(o + delta, l + line_delta) for o, l in self._starts[old_i:]]
        resume_old = self._starts[old_i][0]
        tail_recovery = [(o + delta, l + line_delta) for o, l in self._recovery if o >= resume_old]
        return head + starts + tail, head_recovery + recovery + tail_recovery


# -- scanning --------------------------------------------------------------------------

def _scan(source: str, pos: int, line: int, resync=None):
    """Statement starts from `pos` (a clean top-level line start) to the end.

    Returns (starts, recovery lines, resumed): starts and recovery lines as
    (offset, 0-based line). When `resync(offset)` gives a value for a start, the
    scan stops there and `resumed` is (offset, line, that value).
    """
    starts: list[tuple[int, int]] = []
    recovery: list[tuple[int, int]] = []
    depth = 0
    quote: str | None = None      # the quote that closes the open string
    quote_indented = False        # that string was opened on an indented line
    line_start = pos
    at_line_start = True
    pending_decorator = False
    n = len(source)
    token = _TOKEN.search
    while pos < n:
        if at_line_start:
            ch = source[pos]
            if ch not in " \t\r\n#\f\\":
                word = _WORD.match(source, pos)
                keyword = word.group(0) if word else ""
                if quote is None:
                    if depth and keyword in _STATEMENT_ONLY:
                        depth = 0
                    if depth and keyword and keyword not in _CONTINUATIONS:
                        recovery.append((pos, line))
                    if depth == 0:
                        if keyword not in _CONTINUATIONS and not pending_decorator:
                            if resync is not None and starts:
                                old = resync(pos)
                                if old is not None:
                                    return starts, recovery, (pos, line, old)
                            starts.append((pos, line))
                        pending_decorator = ch == "@"
                elif len(quote) == 3 and (keyword in _DEFINITIONS or keyword and not quote_indented):
                    recovery.append((pos, line))
        at_line_start = False
        m = token(source, pos)
        if m is None:
            break
        tok = m.group(0)
        pos = m.end()
        if quote is not None:
            if tok == "\\":
                pos += 1              # skip the escaped character
            elif tok[0] == "\\" or tok in _NEWLINES:
                line += 1
                line_start = pos
                at_line_start = True
                if tok[0] != "\\" and len(quote) == 1:
                    quote = None      # an unterminated one-line string ends here
            elif tok == quote:
                quote = None
            elif len(quote) == 1 and tok[0] == quote:
                # `'a''''b'''`: the first quote closes this string; the rest is read again
                quote = None
                pos = m.start() + 1
            continue
        if tok in ("'''", '"""', "'", '"'):
            quote = tok
            quote_indented = source[line_start:line_start + 1] in (" ", "\t")
        elif tok == "#":
            nl = _next_newline(source, pos)
            pos = n if nl < 0 else nl
        elif tok in "([{":
            depth += 1
        elif tok in ")]}":
            depth = max(0, depth - 1)
        elif tok[0] == "\\":
            if len(tok) > 1:          # a line continuation
                line += 1
                line_start = pos
        else:                         # a newline
            line += 1
            line_start = pos
            at_line_start = True
    return starts, recovery, None


def _build_chunks(source: str, starts, recovery) -> list[Chunk]:
    offsets = [offset for offset, _ in starts]
    boundaries = ([] if offsets and offsets[0] == 0 else [(0, 0)]) + list(starts) + [(len(source), -1)]
    chunks: list[Chunk] = []
    r = 0
    for (begin, line), (end, _) in zip(boundaries, boundaries[1:]):
        text = source[begin:end]
        lines = []
        while r < len(recovery) and recovery[r][0] < end:
            if recovery[r][0] >= begin:
                lines.append(recovery[r][1] - line)
            r += 1
        if begin == 0 and not text.strip():
            continue
        chunks.append(Chunk(text, line + 1, tuple(lines)))
    return chunks


# -- text helpers ----------------------------------------------------------------------

def _next_newline(source: str, pos: int) -> int:
    m = LINE_BREAK.search(source, pos)
    return -1 if m is None else m.start()


def _common_prefix(a: str, b: str) -> int:
    """Length of the longest common prefix (binary search over C-speed comparisons)."""
    lo, hi = 0, min(len(a), len(b))
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a.startswith(b[lo:mid], lo):
            lo = mid
        else:
            hi = mid - 1
    return lo


def _common_suffix(a: str, b: str, limit: int) -> int:
    lo, hi = 0, max(0, limit)
    la, lb = len(a), len(b)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a.endswith(b[lb - mid:lb - lo], 0, la - lo):
            lo = mid
        else:
            hi = mid - 1
    return lo
