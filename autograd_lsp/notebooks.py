"""A notebook's code cells read as one Python program, and findings mapped back to cells.

IPython runs code cells in one namespace, so a tensor built in cell 2 can be
backwarded in cell 4: the analysis must see the cells as one program. The
program is the cells' texts one after another, each starting on a fresh line,
with IPython's own syntax turned into plain Python that keeps every line where
it was:

- a line magic (`%matplotlib inline`), a shell line (`!pip install ...`) or a
  help request (`torch.randn?`, `??x`) becomes `pass` at the same indentation
  (`files = !ls` becomes `files = get_ipython()`: some value nobody knows);
- a cell magic whose body is Python (`%%time`, `%%capture` ...) loses its first
  line only; any other (`%%bash`, `%%writefile`) makes the whole cell blank;
- top-level `await` (and `async for`/`async with`), which IPython runs in its
  event loop, loses the keyword; the columns after it shift back by its width.

A cell that still does not parse is reported once, where Python says, and is
blank in the program: the other cells are analysed as if it had not run, and
every cell that parses starts a top-level statement of its own, so the core's
chunks never straddle two cells.

The analysis runs through the core's public entry, `Analyzer.analyze`; this
module only builds its input and places its output.
"""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from functools import lru_cache

from autograd_lsp.analysis import SYNTAX_CODE, SYNTAX_NAME, Analyzer, Finding, Fix, Settings, TextEdit
from autograd_lsp.analysis.records import record

_LINE_BREAK = re.compile(r"\r\n|\r|\n")

# Cell magics whose body IPython runs as Python in the notebook's namespace.
# (`%%python` and `%%python3` run theirs in another process: not this program.)
PYTHON_CELL_MAGICS = frozenset({
    "time", "timeit", "capture", "prun", "debug", "memit", "mprun", "snakeviz",
})

_ESCAPE = re.compile(r"[ \t]*(%|!)")
# `x = %time f()`, `files = !ls`: an assignment whose value is an IPython command.
_ASSIGNED_ESCAPE = re.compile(r"(?P<target>[ \t]*[\w.\[\], ()*]+?\s*=\s*)(?:%|!)")
# `obj?`, `obj??`, `?obj`, `??obj` with a (dotted, possibly wildcard) name.
_HELP = re.compile(r"[ \t]*(\?{1,2}[\w.*\[\]]+|[\w.*\[\]]+\?{1,2})[ \t]*")
_INDENT = re.compile(r"[ \t]*")


@record
class CellCode:
    """One code cell as the analysis reads it."""
    source: str
    # The cell as Python, line for line. Blank when the cell does not parse.
    python: str
    line_count: int
    # 0-based lines whose program text is ours, not the user's (magics, help).
    replaced: frozenset
    # 0-based line -> ((column, removed width), ...): `await ` taken out there.
    shifts: tuple
    # The cell's syntax error (cell-relative position), if it does not parse.
    error: Finding | None = None

    def user_column(self, line: int, column: int) -> int:
        """The column in the user's text of a program column on 0-based `line`."""
        # Removals in the user's columns, left to right: each one passed puts its
        # width back, which is also what the next one's column assumes.
        for at, width in dict(self.shifts).get(line, ()):
            if column >= at:
                column += width
        return column

    def program_column(self, line: int, column: int) -> int:
        """The program column of a user's column on 0-based `line` (a column
        inside a removed keyword goes to where the keyword was)."""
        taken = 0
        for at, width in dict(self.shifts).get(line, ()):
            if column >= at + width:
                taken += width
            elif column >= at:
                return at - taken
            else:
                break
        return column - taken


@lru_cache(maxsize=2048)
def read_cell(source: str) -> CellCode:
    """The cell as Python (cached: while a notebook is edited, the other cells'
    texts come back unchanged at every analysis)."""
    lines = _LINE_BREAK.split(source)
    if lines and lines[-1] == "" and len(lines) > 1:
        lines.pop()   # a final line break ends the last line; it opens no new one
    replaced: set[int] = set()
    _replace_cell_magic(lines, replaced)
    _replace_line_commands(lines, replaced)
    shifts = _remove_top_level_await(lines)
    python = "\n".join(lines) + "\n"
    error = _syntax_error(python)
    cell = CellCode(source, python, len(lines), frozenset(replaced), tuple(sorted(shifts.items())))
    if error is not None:
        line, column, message = error
        column = cell.user_column(line - 1, column)
        finding = Finding(SYNTAX_CODE, SYNTAX_NAME, "error", f"syntax error: {message}",
                          line, column, line, column + 1)
        cell = CellCode(source, "\n" * len(lines), len(lines), cell.replaced, cell.shifts, finding)
    return cell


def _replace_cell_magic(lines: list[str], replaced: set[int]) -> None:
    first = next((i for i, line in enumerate(lines) if line.strip()), None)
    if first is None or not lines[first].startswith("%%"):
        return
    name = lines[first][2:].split(None, 1)[0] if lines[first][2:].strip() else ""
    if name in PYTHON_CELL_MAGICS:
        lines[first] = ""
        replaced.add(first)
        return
    # The body is another language (or a file to write): nothing of it is Python.
    for number in range(first, len(lines)):
        lines[number] = ""
        replaced.add(number)


def _replace_line_commands(lines: list[str], replaced: set[int]) -> None:
    """Magics, shell lines and help requests at the start of a logical line."""
    scanner = _LogicalLines()
    number = 0
    while number < len(lines):
        line = lines[number]
        if scanner.at_start and not line.startswith("%%"):
            replacement = _command_replacement(line)
            if replacement is not None:
                lines[number] = replacement
                replaced.add(number)
                # IPython continues a command over lines ending with a backslash.
                while line.endswith("\\") and number + 1 < len(lines):
                    number += 1
                    line = lines[number]
                    lines[number] = ""
                    replaced.add(number)
                number += 1
                continue
        scanner.feed(line)
        number += 1


def _command_replacement(line: str) -> str | None:
    indent = _INDENT.match(line).group()
    if _ESCAPE.match(line):
        return f"{indent}pass"
    if _HELP.fullmatch(line) and not line.lstrip().startswith("#"):
        return f"{indent}pass"
    assigned = _ASSIGNED_ESCAPE.match(line)
    if assigned:
        return f"{assigned.group('target')}get_ipython()"
    return None


class _LogicalLines:
    """Whether the next physical line starts a logical line: no bracket, string
    or backslash continuation is open. A light scanner, not a tokenizer: it only
    tracks quotes, comments, brackets and continuations."""

    _TOKEN = re.compile(r"'''|\"\"\"|'|\"|#|\\|[()\[\]{}]")

    def __init__(self):
        self.depth = 0
        self.quote: str | None = None
        self.continued = False

    @property
    def at_start(self) -> bool:
        return self.depth == 0 and self.quote is None and not self.continued

    def feed(self, line: str) -> None:
        self.continued = False
        position = 0
        while True:
            match = self._TOKEN.search(line, position)
            if match is None:
                break
            token, position = match.group(), match.end()
            if self.quote is not None:
                if token == "\\":
                    if position == len(line):
                        self.continued = True
                    position += 1
                elif token == self.quote:
                    self.quote = None
                continue
            if token in ("'''", '"""', "'", '"'):
                self.quote = token
            elif token == "#":
                break
            elif token == "\\":
                self.continued = position == len(line)
            elif token in "([{":
                self.depth += 1
            else:
                self.depth = max(0, self.depth - 1)
        if self.quote in ("'", '"') and not self.continued:
            self.quote = None   # a one-line string left open ends with its line


def _remove_top_level_await(lines: list[str]) -> dict[int, list[tuple[int, int]]]:
    """Take `await` / `async` out where only IPython's top level allows them;
    the removed widths per 0-based line, to map columns back."""
    text = "\n".join(lines) + "\n"
    if "await" not in text and "async" not in text:
        return {}
    # Python's parser accepts `await` anywhere; only compiling refuses it outside
    # a coroutine, so the tree is walked for the ones at the top level.
    try:
        tree = compile(text, "<cell>", "exec",
                       flags=ast.PyCF_ONLY_AST | ast.PyCF_ALLOW_TOP_LEVEL_AWAIT, dont_inherit=True)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return {}
    keywords: list[tuple[int, int, str]] = []
    for node in _outside_functions(tree):
        if isinstance(node, ast.Await):
            keywords.append((node.lineno - 1, node.col_offset, "await"))
        elif isinstance(node, (ast.AsyncFor, ast.AsyncWith)):
            keywords.append((node.lineno - 1, node.col_offset, "async"))
        elif isinstance(node, ast.comprehension) and node.is_async:
            keywords.append((node.target.lineno - 1, None, "async"))
    shifts: dict[int, list[tuple[int, int]]] = {}
    for row, byte_column, keyword in keywords:
        line = lines[row]
        if byte_column is None:
            # `[x async for x in y]`: the keyword's column is not in the tree.
            found = re.search(r"\basync\s+(?=for\b)", line)
            if found is None:
                continue
            column = found.start()
        else:
            column = len(line.encode("utf-8")[:byte_column].decode("utf-8", "replace"))
        found = re.compile(rf"{keyword}\s+").match(line, column)
        if found is not None:
            shifts.setdefault(row, []).append((column, found.end() - column))
    for row, removed in shifts.items():
        removed.sort()
        line = lines[row]
        for column, width in reversed(removed):
            line = line[:column] + line[column + width:]
        lines[row] = line
    return {row: tuple(value) for row, value in shifts.items()}


def _outside_functions(tree: ast.AST):
    """Nodes of `tree` that are not inside a function or lambda body."""
    stack = [tree]
    while stack:
        node = stack.pop()
        yield node
        for child in ast.iter_child_nodes(node):
            if not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                stack.append(child)


def _syntax_error(python: str) -> tuple[int, int, str] | None:
    """(1-based line, column, message) when `python` does not parse. libcst has
    the last word when Python refuses: it knows syntax newer than this Python."""
    try:
        ast.parse(python)
        return None
    except SyntaxError as exc:
        error = (exc.lineno or 1, max((exc.offset or 1) - 1, 0), exc.msg)
    except (ValueError, RecursionError, MemoryError) as exc:
        return 1, 0, f"cannot parse: {type(exc).__name__}"
    import libcst
    try:
        libcst.parse_module(python)
        return None
    except Exception:  # libcst's ParserSyntaxError, or its own validation errors
        return error


# -- the program and its mapping -------------------------------------------------------------

@record
class CellFinding:
    """A finding placed in a notebook: `cell` is the 1-based index among code
    cells, and the finding's lines and columns are inside that cell."""
    cell: int
    finding: Finding


class NotebookProgram:
    """The code cells as one program, and the way back from its lines to cells."""

    def __init__(self, sources: list[str], cells: list[CellCode] | None = None):
        self.cells = cells if cells is not None else [read_cell(s) for s in sources]
        self.starts: list[int] = []
        line = 1
        for cell in self.cells:
            self.starts.append(line)
            line += cell.line_count
        self.text = "".join(cell.python for cell in self.cells)

    def cell_at(self, line: int) -> int | None:
        """0-based index of the cell holding program `line` (1-based)."""
        low, high = 0, len(self.starts) - 1
        found = None
        while low <= high:
            middle = (low + high) // 2
            if self.starts[middle] <= line:
                found, low = middle, middle + 1
            else:
                high = middle - 1
        if found is None or line >= self.starts[found] + self.cells[found].line_count:
            return None
        return found

    def program_line(self, cell: int, line: int) -> int:
        return self.starts[cell] + line - 1

    def program_column(self, cell: int, line: int, column: int) -> int:
        """The program column of a user's column (1-based cell `line`)."""
        return self.cells[cell].program_column(line - 1, column)

    def place(self, finding: Finding) -> CellFinding | None:
        """The finding in cell coordinates; None when it lies on text the user did
        not write (a replaced magic line). Fixes that reach into another cell or
        onto replaced text are left out: a fix never edits what it cannot see."""
        cell = self.cell_at(finding.line)
        if cell is None:
            return None
        code = self.cells[cell]
        line = finding.line - self.starts[cell] + 1
        if line - 1 in code.replaced:
            return None
        end_line, end_column = finding.end_line - self.starts[cell] + 1, finding.end_column
        if end_line > code.line_count:
            # Ends past the cell: stop at the end of the cell's last line.
            end_line = code.line_count
            end_column = len(_LINE_BREAK.split(code.source)[end_line - 1]) if code.source else 0
        else:
            end_column = code.user_column(end_line - 1, end_column)
        fixes = tuple(fix for fix in (self._fix_in_cell(fix, cell) for fix in finding.fixes)
                      if fix is not None)
        return CellFinding(cell + 1, Finding(
            finding.code, finding.name, finding.severity, finding.message,
            line, code.user_column(line - 1, finding.column), end_line, end_column, fixes))

    def _fix_in_cell(self, fix: Fix, cell: int) -> Fix | None:
        code = self.cells[cell]
        start = self.starts[cell]
        edits = []
        for edit in fix.edits:
            line, end_line = edit.line - start + 1, edit.end_line - start + 1
            # An edit may end at the start of the line after the cell (a deleted last line).
            if not 1 <= line <= code.line_count or not 1 <= end_line <= code.line_count + 1:
                return None
            if end_line == code.line_count + 1 and edit.end_column:
                return None
            if any(number - 1 in code.replaced for number in range(line, min(end_line, code.line_count) + 1)):
                return None
            edits.append(TextEdit(line, code.user_column(line - 1, edit.column), end_line,
                                  code.user_column(end_line - 1, edit.end_column), edit.new_text))
        return Fix(fix.title, tuple(edits), fix.safe)


def analyze_cells(sources: list[str], settings: Settings | None = None,
                  analyzer: Analyzer | None = None, path: str | None = None) -> list[CellFinding]:
    """Findings of the code cells `sources` (in order), placed in their cells,
    sorted by cell and position. `path`: the notebook's, for the core to follow
    imports of the project's modules (with an analyzer given a workspace)."""
    settings = settings or Settings()
    program = NotebookProgram(sources)
    analyzer = analyzer or Analyzer()
    return place_findings(program, analyzer.analyze(program.text, settings, path=path), settings)


def place_findings(program: NotebookProgram, findings: list[Finding],
                   settings: Settings) -> list[CellFinding]:
    """The core's findings on `program.text`, and the cells' own syntax errors,
    placed in their cells and sorted by cell and position."""
    placed = [p for p in map(program.place, findings) if p is not None]
    if settings.enables(SYNTAX_CODE, SYNTAX_NAME):
        severity = settings.severity_for(SYNTAX_CODE, SYNTAX_NAME, "error")
        for number, cell in enumerate(program.cells):
            if cell.error is not None:
                error = cell.error
                placed.append(CellFinding(number + 1, Finding(
                    error.code, error.name, severity, error.message, error.line, error.column,
                    error.end_line, error.end_column)))
    placed.sort(key=lambda p: (p.cell, p.finding.sort_key()))
    return placed


# -- fixing ---------------------------------------------------------------------------------

MAX_FIX_ROUNDS = 5


@dataclass
class CellFixResult:
    sources: list[str]
    # Fixed cells (0-based index among code cells) -> their new source.
    changed: dict = field(default_factory=dict)
    # (CellFinding, Fix) pairs, in the order applied.
    applied: list = field(default_factory=list)
    # Why a fix was left out (the other cells' fixes are applied).
    problem: str | None = None
    # What remains, as CellFindings.
    findings: list = field(default_factory=list)


def fix_cells(sources: list[str], settings: Settings, analyzer: Analyzer | None = None,
              path: str | None = None) -> CellFixResult:
    """Apply the safe fixes cell by cell, round after round as `fixing.fix_text`
    does for a file: each round's fixes do not overlap within a cell, and a round
    that would leave a cell unparsable is dropped."""
    from autograd_lsp.analysis.edits import apply_edits
    from autograd_lsp.fixing import choose_fixes

    analyzer = analyzer or Analyzer()
    current = list(sources)
    result = CellFixResult(current)
    broken = {number for number, source in enumerate(sources) if not _compiles(read_cell(source))}
    for _ in range(MAX_FIX_ROUNDS):
        placed = analyze_cells(current, settings, analyzer, path)
        by_cell: dict[int, list[CellFinding]] = {}
        for item in placed:
            by_cell.setdefault(item.cell - 1, []).append(item)
        new = list(current)
        applied = []
        for number, items in by_cell.items():
            if number in broken:
                continue   # without a parsing original, a broken fix cannot be told apart
            chosen = choose_fixes([item.finding for item in items])
            if not chosen:
                continue
            names = ", ".join(sorted({c.finding.code for c in chosen}))
            try:
                text = apply_edits(current[number], [e for c in chosen for e in c.fix.edits])
            except ValueError as exc:
                result.problem = f"fix for {names} in cell {number + 1} skipped: invalid edits ({exc})"
                continue
            if text == current[number]:
                continue
            if not _compiles(read_cell(text)):
                result.problem = (f"fix for {names} in cell {number + 1} skipped: it would produce "
                                  "code that does not compile")
                continue
            new[number] = text
            applied.extend((CellFinding(number + 1, c.finding), c.fix) for c in chosen)
        if not applied:
            break
        current = new
        result.applied.extend(applied)
    result.sources = current
    result.changed = {n: s for n, (s, old) in enumerate(zip(current, sources)) if s != old}
    result.findings = analyze_cells(current, settings, analyzer, path)
    return result


def _compiles(cell: CellCode) -> bool:
    """Whether the cell, as IPython would run it, compiles (compile() translates
    the text to bytecode; nothing of it runs)."""
    if cell.error is not None:
        return False
    try:
        compile(cell.python, "<cell>", "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT, dont_inherit=True)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True
