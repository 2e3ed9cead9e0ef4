"""Refusing text that would crash or stall a parser, before any parser sees it.

Native parsers recurse once per level of nesting. libcst's (which the rules use
to build fixes) overflows its stack on a valid file with a 10,000-branch `elif`
chain or 10,000 unary minus signs, and the process dies (SIGSEGV), which no
`try` can catch; it is also about quadratic in the length of an operator chain
(a 3,000-term sum takes a minute). CPython's `ast` refuses the same input with
a MemoryError, or a RecursionError once the tree is deeper than Python's
recursion limit. Either way the text must be measured first, without recursion.

`check_text` measures what matters with one flat scan of the tokens (no
recursion, linear time) and says whether the text may be parsed:

- bracket nesting: deeper than CPython's limit is a syntax error there too, and
  is reported as one, with CPython's message;
- the longest chain in one expression: binary and unary operators, `and`/`or`/
  `not`, comparisons, ternaries, attribute and call trailers, adjacent strings;
- the longest `if`/`elif` chain.

Anything over a limit is refused: the chunk is left unread and the caller says
so (never a false "syntax error", never a silent "no problems").

What is accepted may still be deep: building an `ast` tree and walking any tree
recursively takes a few Python frames per level, so a chain of a few hundred
links exceeds Python's default recursion limit of 1,000. `TextShape.deep` says
when, and `call_with_room` runs such work on a thread with a large stack and a
recursion limit that fits the measured depth.
"""
from __future__ import annotations

import re
import sys
import threading

from autograd_lsp.analysis.records import record

# CPython's tokenizer refuses more than 200 open brackets ("too many nested parentheses").
MAX_BRACKET_DEPTH = 200
# Chains up to these lengths are analysed; longer ones are refused. libcst crashes
# somewhere between 3,000 and 10,000 (depending on the thread's stack) and needs
# ~2 s for a 1,000-term sum, ~8 s for 1,500.
MAX_EXPRESSION_CHAIN = 1_200
MAX_ELIF_CHAIN = 1_200
# Texts shorter than this cannot hold a chain or nesting over the limits.
SHORTEST_RISKY_TEXT = 200
# Python frames a recursive tree walk may take per level of nesting (measured on
# libcst's codegen for an elif chain: 8), with a margin.
FRAMES_PER_LEVEL = 12
# Below this many levels, Python's default recursion limit is enough.
SHALLOW_LEVELS = 60

# Spaces are skipped as part of the next token: most of a file's tokens are names
# and spaces, and the scan's cost is one Python iteration per token.
_TOKEN = re.compile(r"""[ \t\f]*(?:
    (?P<string>(?:[rRbBuUfF]{1,2})?(?:'''|\"\"\"|'|"))
  | (?P<comment>\#[^\r\n]*)
  | (?P<continuation>\\(?:\r\n|\r|\n))
  | (?P<newline>\r\n|\r|\n)
  | (?P<number>\.?[0-9](?:[0-9a-zA-Z_.]|(?<=[eE])[-+])*)
  | (?P<name>[^\W\d]\w*)
  | (?P<open>[(\[{])
  | (?P<close>[)\]}])
  | (?P<separator>:=|->|(?:\*\*|//|<<|>>|[-+*/%@&|^])=|,|;|:|=(?!=))
  | (?P<operator>\*\*|//|<<|>>|<=|>=|==|!=|[-+*/%@&|^~<>.])
  | (?P<other>.)
)""", re.VERBOSE | re.DOTALL)
(_STRING, _COMMENT, _CONTINUATION, _NEWLINE, _NUMBER, _NAME, _OPEN, _CLOSE, _SEPARATOR,
 _OPERATOR, _OTHER) = range(1, 12)

_STRING_END = {
    quote: re.compile(r"\\(?:\r\n|.)|" + re.escape(quote) + r"|\r\n|\r|\n", re.DOTALL)
    for quote in ("'''", '"""', "'", '"')
}
# Keywords that link the parts of one expression (each one a level of the tree).
_CHAIN_KEYWORDS = frozenset(("and", "or", "not", "is", "in", "if", "else", "lambda", "await"))


@record
class Refusal:
    """Why a text must not be parsed, and where (1-based line, 0-based column)."""
    reason: str
    line: int
    column: int
    # True when Python itself rejects the text: then it is a syntax error.
    syntax_error: bool = False


@record
class TextShape:
    """What one scan of a text found: the deepest level of nesting a parse of it
    holds (chains count one level per link) and, if any, why it must not be parsed."""
    levels: int = 0
    refusal: Refusal | None = None

    @property
    def deep(self) -> bool:
        """Walking its tree recursively may exceed Python's default recursion limit."""
        return self.levels > SHALLOW_LEVELS


def check_text(text: str) -> Refusal | None:
    """None when `text` is safe to hand to a parser, else why not."""
    return measure(text).refusal


def measure(text: str) -> TextShape:
    """The shape of `text`, in one flat scan of its tokens."""
    if len(text) < SHORTEST_RISKY_TEXT:
        return TextShape()
    levels = 0
    line = 1
    line_start = 0
    # One counter per open bracket level (plus the statement level): the length of
    # the current chain there. Separators (`,`, `:`, `=`...) end a chain.
    chains = [0]
    # `lambda`s at each level still waiting for their `:` (which does not end the chain).
    lambdas = [0]
    logical_start = True
    elif_runs: dict[int, int] = {}    # indentation width -> length of the if/elif chain there
    longest_elif = 0
    # Trailing spaces would leave the last match nothing to take.
    pos, n = 0, len(text.rstrip(" \t\f"))
    match = _TOKEN.match
    while pos < n:
        m = match(text, pos)
        kind = m.lastindex
        pos = m.end()
        if kind == _NEWLINE or kind == _CONTINUATION:
            line += 1
            line_start = pos
            if kind == _NEWLINE and len(chains) == 1:
                chains[0] = lambdas[0] = 0
                logical_start = True
            continue
        if kind == _COMMENT:
            continue
        if logical_start:
            logical_start = False
            start = m.start(kind)
            refusal = _note_statement(text, line_start, start, m.group(kind) if kind == _NAME else "",
                                      elif_runs, line)
            if refusal is not None:
                return TextShape(MAX_ELIF_CHAIN, refusal)
            if elif_runs:
                longest_elif = max(longest_elif, max(elif_runs.values()))
        if kind == _STRING:
            pos, lines_crossed, last_break = _skip_string(text, pos, m.group(kind).lstrip("rRbBuUfF"))
            if lines_crossed:
                line += lines_crossed
                line_start = last_break
            chains[-1] += 1
        elif kind == _OPEN:
            chains[-1] += 1
            chains.append(0)
            lambdas.append(0)
            if len(chains) - 1 > MAX_BRACKET_DEPTH:
                return TextShape(levels, Refusal("too many nested parentheses", line,
                                                 m.start(kind) - line_start, True))
        elif kind == _CLOSE:
            if len(chains) > 1:
                chains.pop()
                lambdas.pop()
        elif kind == _SEPARATOR:
            if lambdas[-1] and m.group(kind) == ":":
                lambdas[-1] -= 1
            else:
                chains[-1] = 0
        elif kind == _OPERATOR:
            chains[-1] += 1
        elif kind == _NAME:
            token = m.group(kind)
            if token not in _CHAIN_KEYWORDS:
                continue
            chains[-1] += 1
            if token == "lambda":
                lambdas[-1] += 1
        else:
            continue
        depth = chains[-1] + len(chains)
        if depth > levels:
            levels = depth
        if chains[-1] > MAX_EXPRESSION_CHAIN:
            return TextShape(levels, Refusal(
                f"an expression chains more than {MAX_EXPRESSION_CHAIN:,} operators",
                line, m.start(kind) - line_start))
    return TextShape(max(levels, longest_elif))


def _note_statement(text: str, line_start: int, start: int, keyword: str, elif_runs: dict,
                    line: int) -> Refusal | None:
    """Follow if/elif chains by indentation, at the first token of each statement."""
    indent = len(text[line_start:start].expandtabs(8))
    if keyword == "elif":
        elif_runs[indent] = elif_runs.get(indent, 0) + 1
        if elif_runs[indent] > MAX_ELIF_CHAIN:
            return Refusal(f"an if statement has more than {MAX_ELIF_CHAIN:,} elif branches",
                           line, start - line_start)
        return None
    if keyword != "else":
        # Any other statement ends the chains at its indentation and deeper.
        for width in [w for w in elif_runs if w >= indent]:
            del elif_runs[width]
    return None


def _skip_string(text: str, pos: int, quote: str) -> tuple[int, int, int]:
    """(position after the string, line breaks inside it, offset after the last one)."""
    ends = _STRING_END[quote]
    lines = 0
    last_break = 0
    while True:
        m = ends.search(text, pos)
        if m is None:
            return len(text), lines, last_break
        token = m.group(0)
        pos = m.end()
        if token == quote:
            return pos, lines, last_break
        if token in ("\r\n", "\r", "\n") and len(quote) == 1:
            # A one-line string ends at its line's end (an error the parser reports).
            return m.start(), lines, last_break
        if token[-1] in "\r\n":
            lines += 1
            last_break = pos


# -- running deep work ---------------------------------------------------------------

# Virtual memory only: the pages a walk never touches are never committed.
DEEP_STACK_BYTES = 512 * 1024 * 1024
_limit_lock = threading.Lock()
_raised: list[int] = []     # recursion limits asked for by the calls running now
_original_limit: list[int] = []


def call_with_room(shape: TextShape, function, *args):
    """`function(*args)`, run where a recursive walk of a tree of `shape` fits:
    directly when it is shallow, else on a thread with a large stack and a raised
    recursion limit (restored when the last such call ends)."""
    if not shape.deep:
        return function(*args)
    needed = sys.getrecursionlimit() + FRAMES_PER_LEVEL * shape.levels
    outcome: dict = {}

    def run():
        try:
            outcome["value"] = function(*args)
        except BaseException as exc:  # re-raised in the caller's thread
            outcome["error"] = exc

    with _limit_lock:
        if not _raised:
            _original_limit[:] = [sys.getrecursionlimit()]
        _raised.append(needed)
        sys.setrecursionlimit(max(_raised))
        previous = threading.stack_size(DEEP_STACK_BYTES)
        try:
            thread = threading.Thread(target=run, name="deep-tree-walk", daemon=True)
            thread.start()
        finally:
            threading.stack_size(previous)
    try:
        thread.join()
    finally:
        with _limit_lock:
            _raised.remove(needed)
            sys.setrecursionlimit(max(_raised) if _raised else _original_limit[0])
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]
