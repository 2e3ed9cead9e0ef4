"""Splitting a module into top-level statements ("chunks") without parsing it.

Each chunk is parsed on its own and cached by its text, so an edit inside one
function re-parses that function only. A chunk starts at a line whose first
character is code at column 0, outside any bracket, string or line
continuation; `else`/`elif`/`except`/`finally` lines stay with the statement
they continue, and decorators with the definition below them.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

# Tokens that change the scanner's state; everything else is skipped in bulk.
_TOKEN = re.compile(r"""'''|\"\"\"|'|"|#|\\\n|\\|[()\[\]{}]|\n""")
_CONTINUATIONS = ("else", "elif", "except", "finally")


@dataclass(frozen=True)
class Chunk:
    text: str
    start_line: int   # 1-based line of the chunk's first line in the module

    @property
    def line_count(self) -> int:
        return self.text.count("\n") + (0 if self.text.endswith("\n") else 1)


def split_chunks(source: str) -> list[Chunk]:
    starts = _statement_start_lines(source)
    lines = source.splitlines(keepends=True)
    chunks: list[Chunk] = []
    # Group lines: a chunk runs from one start to the next. Leading comments and
    # blank lines before the first start go with the first chunk.
    boundaries = [0] + [s for s in starts if s > 0] + [len(lines)]
    boundaries = sorted(set(boundaries))
    for begin, end in zip(boundaries, boundaries[1:]):
        text = "".join(lines[begin:end])
        if text.strip():
            chunks.append(Chunk(text, begin + 1))
    return chunks


def _statement_start_lines(source: str) -> list[int]:
    """0-based indexes of lines that begin a new top-level statement."""
    starts: list[int] = []
    depth = 0
    quote: str | None = None     # the quote that closes the open string
    line = 0
    at_line_start = True
    pending_decorator = False
    pos = 0
    n = len(source)
    while pos < n:
        if at_line_start and quote is None and depth == 0:
            ch = source[pos]
            if ch not in " \t\r\n#\f":
                word = re.match(r"[A-Za-z_]+", source[pos:pos + 10])
                keyword = word.group(0) if word else ""
                if keyword not in _CONTINUATIONS and not pending_decorator:
                    starts.append(line)
                pending_decorator = ch == "@"
        at_line_start = False
        m = _TOKEN.search(source, pos)
        if m is None:
            break
        tok = m.group(0)
        pos = m.end()
        if quote is not None:
            if tok == "\\" :
                pos += 1              # skip the escaped character
            elif tok == "\\\n" or tok == "\n":
                line += 1
                if tok == "\n" and len(quote) == 1:
                    quote = None      # an unterminated one-line string ends here
            elif tok == quote or (len(quote) == 1 and tok in ("'''", '"""') and tok[0] == quote):
                quote = None
            continue
        if tok in ("'''", '"""', "'", '"'):
            quote = tok
        elif tok == "#":
            nl = source.find("\n", pos)
            pos = n if nl < 0 else nl
        elif tok in "([{":
            depth += 1
        elif tok in ")]}":
            depth = max(0, depth - 1)
        elif tok == "\\\n":
            line += 1
        elif tok == "\n":
            line += 1
            at_line_start = True
    return starts
