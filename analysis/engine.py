"""From source text to findings, one chunk at a time, with caches.

`Analyzer` keeps what it learnt about the previous versions of one document:
parsed chunks by text, and each chunk's results by (text, facts flowing in,
module summary). After an edit only the chunks whose text or incoming facts
changed are analysed again; a `def` chunk does not depend on the module-level
facts before it, so an edit inside one function re-analyses that function.
"""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field, replace

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from analysis.chunks import Chunk, ChunkSplitter, cut_at_recovery_lines
from analysis.facts import ModuleValue, OptimizerValue, Value
from analysis.edits import newline_of, source_lines
from analysis.findings import Finding, Fix, TextEdit
from analysis.interpreter import Env, Interpreter
from analysis.rule import Edit, Report, Rule
from analysis.rules import all_rules
from analysis.settings import Settings
from analysis.summary import ChunkSummary, ModuleSummary, summarize_chunk
from analysis.suppression import is_suppressed

SYNTAX_CODE = "AG001"
SYNTAX_NAME = "syntax-error"


@dataclass
class ParsedChunk:
    text: str
    module: cst.Module | None
    error: str | None = None
    error_line: int = 1          # relative to the chunk
    error_column: int = 0
    summary: ChunkSummary = ChunkSummary()
    _positions: dict | None = None

    @property
    def function_names(self) -> tuple:
        return tuple(s.name.value for s in self.module.body if isinstance(s, cst.FunctionDef))

    @property
    def is_definition(self) -> bool:
        """Only `def`/`class` statements: module-level facts do not flow through it."""
        return all(isinstance(s, (cst.FunctionDef, cst.ClassDef)) for s in self.module.body)

    def positions(self) -> dict:
        """Node -> CodeRange, resolved on first need (only chunks with findings pay)."""
        if self._positions is None:
            wrapper = MetadataWrapper(self.module, unsafe_skip_copy=True)
            self._positions = wrapper.resolve(PositionProvider)
        return self._positions


@dataclass
class ChunkResult:
    env_in: Env
    env_out: Env
    # Findings with lines relative to the chunk (1 = its first line).
    findings: tuple
    seen: dict
    # What the chunk asked of the module summary, and the answers: (member, args) -> answer.
    reads: dict
    # The summary version these results were last known valid for.
    summary_version: int
    part: ParsedChunk
    # Calls of this module's functions: (function name, positional argument facts).
    calls: tuple = ()


@dataclass
class Analysis:
    findings: list[Finding]
    # (start_line, ParsedChunk, facts of Name nodes) for hovers
    chunks: list = field(default_factory=list)


class Analyzer:
    """Analyses successive versions of one document, reusing unchanged work."""

    def __init__(self, rules: tuple[Rule, ...] | None = None):
        self.rules = rules if rules is not None else all_rules()
        self._splitter = ChunkSplitter()
        self._parsed: dict[tuple, ParsedChunk] = {}
        self._results: dict[tuple, ChunkResult] = {}
        self._context_results: dict[tuple, tuple] = {}
        self._kept_context: dict[tuple, tuple] = {}
        self._older_results: dict[tuple, ChunkResult] = {}
        self._summary_parts: tuple | None = None
        self._summary = ModuleSummary()
        self._summary_version = 0
        self._summary_answers: dict = {}
        self.last: Analysis | None = None
        # Exceptions raised by the analysis itself (bugs of ours), newest last.
        self.internal_errors: list[tuple[int, str]] = []

    def analyze(self, source: str, settings: Settings | None = None) -> list[Finding]:
        settings = settings or Settings()
        if "torch" not in source:
            # Every fact the rules need starts from a torch name: a file that never
            # mentions torch has nothing to report but its syntax, which `ast` checks
            # in a fraction of a libcst parse.
            out = self._final(_python_syntax_findings(source), source, settings)
            self.last = Analysis(out, [])
            return out
        chunks, parsed = self._chunks_and_parses(source)
        summary_version = self._summary_version_of(parsed)

        findings: list[Finding] = []
        env = Env()
        kept_results: dict[tuple, ChunkResult] = {}
        view = []
        occurrences: dict[str, int] = {}
        # Where each chunk analysed so far starts in this version: a finding may
        # point into an earlier chunk (the in-place op a later backward trips on).
        starts: dict[int, int] = {}
        earlier: list[ParsedChunk] = []
        definitions = []
        module_objects = _ModuleObjects()
        for chunk, part in zip(chunks, parsed):
            if part.module is None:
                if part.error is not None:
                    findings.append(self._syntax_finding(chunk, part))
                continue
            # Identical chunks (two `optimizer.step()` lines) need distinct tensor ids.
            occurrence = occurrences.get(chunk.text, 0)
            occurrences[chunk.text] = occurrence + 1
            starts[id(part)] = chunk.start_line
            if part.is_definition:
                # Analysed after the module code: functions run when called, and see
                # the models and optimizers the module builds, wherever it builds them.
                definitions.append((chunk, part, occurrence))
                continue
            result = self._chunk_result(chunk, part, occurrence, env, summary_version,
                                        settings.locale, kept_results, earlier)
            earlier.append(part)
            env = result.env_out
            module_objects.note(env)
            view.append((chunk.start_line, part, result.seen))
            findings.extend(placed.place(starts) for placed in result.findings)
        function_env = Env(module_objects.consistent())
        calls = []
        for result in kept_results.values():
            calls.extend(result.calls)
        for chunk, part, occurrence in definitions:
            result = self._chunk_result(chunk, part, occurrence, function_env, summary_version,
                                        settings.locale, kept_results, earlier)
            earlier.append(part)
            view.append((chunk.start_line, part, result.seen))
            findings.extend(placed.place(starts) for placed in result.findings)
            calls.extend(result.calls)
        # Functions again, with what the calls in this file pass them.
        self._kept_context = {}
        contexts = _call_contexts(calls)
        for chunk, part, occurrence in definitions:
            parameters = {name: contexts[name] for name in part.function_names if name in contexts}
            if parameters:
                placed = self._in_context(chunk, part, occurrence, function_env, parameters,
                                          summary_version, settings.locale, earlier)
                findings.extend(p.place(starts) for p in placed)
        self._context_results = self._kept_context
        findings = [f for f in findings if f is not None]
        view.sort(key=lambda item: item[0])
        # Keep this version's results and the previous version's: breaking a line and
        # repairing it brings the old chunks back.
        self._older_results = self._results
        self._results = kept_results
        live = {c.text for c in chunks}
        if len(self._parsed) > 2 * len(live) + 64:
            self._parsed = {k: p for k, p in self._parsed.items() if k[0] in live}

        out = self._final(findings, source, settings)
        self.last = Analysis(out, view)
        return out

    def _chunks_and_parses(self, source: str):
        """The chunks of `source` and their parses; a chunk that does not parse is cut
        at its recovery lines, so an open docstring does not hide the code below it."""
        chunks: list[Chunk] = []
        parsed: list[ParsedChunk] = []
        pending = self._splitter.split(source)
        pending.reverse()
        # Identical texts get parses of their own: findings and fixes name nodes, and
        # the second `y.backward()` must not be mistaken for the first.
        occurrences: dict[str, int] = {}
        while pending:
            chunk = pending.pop()
            occurrence = occurrences.get(chunk.text, 0)
            part = self._parse(chunk, occurrence)
            if part.module is None and chunk.recovery_lines:
                pieces = cut_at_recovery_lines(chunk)
                pieces.reverse()
                pending.extend(pieces)
                continue
            occurrences[chunk.text] = occurrence + 1
            if part.module is None and chunk.recovery_lines:
                pieces = cut_at_recovery_lines(chunk)
                pieces.reverse()
                pending.extend(pieces)
                continue
            chunks.append(chunk)
            parsed.append(part)
        return chunks, parsed

    def _summary_version_of(self, parsed: list[ParsedChunk]) -> int:
        """A number that changes exactly when the module summary does (cheap to hash)."""
        parts = tuple(p.summary for p in parsed if p.module is not None)
        if parts != self._summary_parts:
            summary = ModuleSummary.merge(list(parts))
            self._summary_parts = parts
            if summary != self._summary:
                self._summary = summary
                self._summary_version += 1
                self._summary_answers = {}
        return self._summary_version

    def _final(self, findings: list[Finding], source: str, settings: Settings) -> list[Finding]:
        """Sorted, deduplicated findings that the settings enable and no comment suppresses."""
        lines = None
        out = []
        seen_keys = set()
        for f in sorted(findings, key=Finding.sort_key):
            if not settings.enables(f.code, f.name):
                continue
            if f.code != SYNTAX_CODE:
                if lines is None:
                    lines = _LineIndex(source)
                if is_suppressed(lines.line(f.line), f.code):
                    continue
            key = (f.code, f.line, f.column, f.end_line, f.end_column)
            if key in seen_keys:
                continue
            seen_keys.add(key)
            severity = settings.severity_for(f.code, f.name, f.severity)
            if severity != f.severity:
                f = _replace_severity(f, severity)
            out.append(f)
        return out

    def facts_at(self, line: int, column: int) -> tuple[str, Value] | None:
        """The name at (1-based line, code-point column) and its facts, from the last analysis."""
        if self.last is None:
            return None
        for start, part, seen in self.last.chunks:
            if not (start <= line < start + part.text.count("\n") + 1):
                continue
            positions = part.positions()
            rel = line - start + 1
            for node, value in seen.items():
                pos = positions.get(node)
                if pos and pos.start.line == rel and pos.start.column <= column <= pos.end.column:
                    return node.value, value
        return None

    # -- steps ---------------------------------------------------------------------

    def _parse(self, chunk: Chunk, occurrence: int = 0) -> ParsedChunk:
        key = (chunk.text, occurrence)
        cached = self._parsed.get(key)
        if cached is not None:
            return cached
        tree, refusal = _python_parse(chunk.text)
        if refusal is not None:
            # Too deep for libcst's parser, which crashes the process on deep nesting
            # and is about quadratic in the length of an operator chain: the chunk is
            # left unread (a syntax error when Python itself refuses it).
            error, line, column = refusal
            part = ParsedChunk(chunk.text, None, error, line, column)
            self._parsed[key] = part
            return part
        try:
            module = cst.parse_module(chunk.text)
            part = ParsedChunk(chunk.text, module, summary=summarize_chunk(tree, chunk.text))
        except cst.ParserSyntaxError as exc:
            part = ParsedChunk(chunk.text, None, _first_line(exc.message),
                               *_syntax_position(exc, chunk.text))
        except SyntaxError as exc:
            # libcst's node validation (`b'' ''` concatenates bytes and str) raises a
            # SyntaxError of its own, without positions.
            part = ParsedChunk(chunk.text, None, _first_line(str(exc)))
        except (RecursionError, MemoryError, ValueError) as exc:
            part = ParsedChunk(chunk.text, None, f"cannot parse: {type(exc).__name__}")
        self._parsed[key] = part
        return part

    def _chunk_result(self, chunk, part, occurrence, env, summary_version, locale, kept,
                      earlier) -> ChunkResult:
        # For a definition, `env` holds the module's models and optimizers its
        # functions may use; for module code, the facts flowing in.
        is_definition = part.is_definition
        key = (chunk.text, occurrence, is_definition, _env_key(env), locale)
        for cached in (kept.get(key), self._results.get(key), self._older_results.get(key)):
            # Same parsed module too: results hold its nodes (`seen`, loop ids in facts),
            # which a re-parse after the parse cache dropped the text would not match.
            if cached is None or cached.part is not part or not _same_env(cached.env_in, env):
                continue
            if cached.summary_version != summary_version and not self._same_answers(cached.reads):
                continue
            # Remember this very `env` as the input, so the next version's lookup is by identity.
            hit = ChunkResult(env, env if is_definition else cached.env_out, cached.findings,
                              cached.seen, cached.reads, summary_version, part, cached.calls)
            kept[key] = hit
            return hit
        summary = _RecordingSummary(self._summary)
        # Ids depend on the chunk's text and occurrence only, never on its index, so a
        # result reused after chunks above it moved equals one computed afresh.
        interpreter = Interpreter(summary, id_prefix=(hash(chunk.text), occurrence),
                                  function_globals=env.names if is_definition else None)
        try:
            env_out = interpreter.run_module(part.module, env.copy() if not is_definition else Env())
            if is_definition:
                env_out = env
            reports = []
            for rule in self.rules:
                for report in rule.check(interpreter.trace, locale):
                    reports.append((rule, report))
            findings = tuple(_place(rule, report, part, earlier) for rule, report in reports)
        except Exception as exc:  # noqa: BLE001 - a bug of ours must not cost the user the rest
            # Stay quiet about this chunk rather than guess; keep the error for tests and logs.
            self.internal_errors.append((chunk.start_line, f"{type(exc).__name__}: {exc}"))
            env_out, findings = (env if is_definition else _forget_all(env)), ()
        result = ChunkResult(env, env_out, findings, interpreter.seen, summary.reads, summary_version,
                             part, tuple(interpreter.calls))
        kept[key] = result
        return result

    def _in_context(self, chunk, part, occurrence, env, parameters, summary_version, locale,
                    earlier) -> tuple:
        """Findings inside the functions of a definition chunk when their parameters
        hold what every call in this file passes them (`normalize(x * 2)` hands
        `normalize` a tensor that requires grad)."""
        key = (chunk.text, occurrence, locale)
        cached = self._context_results.get(key)
        if cached is not None and cached[0] == parameters and cached[1] == summary_version \
                and cached[2] is part and _same_env(cached[3], env):
            self._kept_context[key] = cached
            return cached[4]
        interpreter = Interpreter(_RecordingSummary(self._summary), id_prefix=(hash(chunk.text), occurrence, "calls"),
                                  function_globals=env.names, parameters=parameters)
        try:
            interpreter.run_module(part.module, Env())
            findings = tuple(_place(rule, report, part, earlier)
                             for rule in self.rules for report in rule.check(interpreter.trace, locale))
        except Exception as exc:  # noqa: BLE001 - as in _chunk_result
            self.internal_errors.append((chunk.start_line, f"{type(exc).__name__}: {exc}"))
            findings = ()
        self._kept_context[key] = (parameters, summary_version, part, env, findings)
        return findings

    def _same_answers(self, reads: dict) -> bool:
        """Whether the current module summary answers a cached result's reads as before."""
        memo = self._summary_answers
        for question, answer in reads.items():
            if question not in memo:
                memo[question] = _ask(self._summary, question)
            if memo[question] != answer:
                return False
        return True

    def _syntax_finding(self, chunk: Chunk, part: ParsedChunk) -> Finding:
        line = chunk.start_line + max(part.error_line, 1) - 1
        return Finding(SYNTAX_CODE, SYNTAX_NAME, "error", f"syntax error: {part.error}",
                       line, part.error_column, line, part.error_column + 1)


@dataclass(frozen=True)
class _Placed:
    """A finding whose positions are relative to the chunks holding its nodes
    (`anchor` for the finding, `edit_anchors` for each fix's edits), so that it
    stays right when those chunks move."""
    finding: Finding
    anchor: ParsedChunk
    edit_anchors: tuple

    def place(self, starts: dict) -> Finding | None:
        def offset(part):
            start = starts.get(id(part))
            return None if start is None else start - 1

        base = offset(self.anchor)
        if base is None:
            return None
        f = self.finding
        fixes = []
        for fix, anchors in zip(f.fixes, self.edit_anchors):
            offsets = [offset(a) for a in anchors]
            if None in offsets:
                continue
            fixes.append(Fix(fix.title, tuple(
                TextEdit(e.line + o, e.column, e.end_line + o, e.end_column, e.new_text)
                for e, o in zip(fix.edits, offsets)), fix.safe))
        return Finding(f.code, f.name, f.severity, f.message, f.line + base, f.column,
                       f.end_line + base, f.end_column, tuple(fixes))


def _place(rule: Rule, report: Report, part: ParsedChunk, earlier: list) -> _Placed:
    """Resolve a report's nodes to positions in whichever chunk holds them: this
    one first, then the chunks before it, nearest first."""
    def locate(node):
        for candidate in (part, *reversed(earlier)):
            positions = candidate.positions()
            if node in positions:
                return candidate, positions
        raise LookupError("a reported node belongs to no analysed chunk")

    anchor, positions = locate(report.node)
    rng = positions[report.node]
    fixes, edit_anchors = [], []
    for spec in report.fixes:
        edits, anchors = [], []
        for edit in spec.edits:
            owner, owner_positions = locate(edit.node)
            edits.append(_edit(edit, owner_positions, owner.text))
            anchors.append(owner)
        fixes.append(Fix(spec.title, tuple(edits), spec.safe))
        edit_anchors.append(tuple(anchors))
    finding = Finding(rule.code, rule.name, rule.severity, report.message,
                      rng.start.line, rng.start.column, rng.end.line, rng.end.column, tuple(fixes))
    return _Placed(finding, anchor, tuple(edit_anchors))


def analyze(source: str, settings: Settings | None = None) -> list[Finding]:
    """Findings for one source text (no caches kept)."""
    return Analyzer().analyze(source, settings)


# -- helpers -------------------------------------------------------------------------

def _env_key(env: Env):
    # Cheap, order-insensitive digest; the full comparison happens on a hit.
    return (len(env.names), len(env.freed))


def _same_env(a: Env, b: Env) -> bool:
    # Unchanged chunks hand the very same Env object on, so identity settles most lookups.
    return a is b or (a.names == b.names and a.freed == b.freed and a.clobbered == b.clobbered)


class _RecordingSummary:
    """The module summary as one chunk's interpreter sees it, noting every question
    and answer. A cached result stays valid under a new summary that answers the
    same questions the same way, so a change to one function's summary re-analyses
    only the chunks that asked about that function."""

    def __init__(self, summary: ModuleSummary):
        self._summary = summary
        self.reads: dict = {}

    @property
    def aliases(self):
        return self._note(("aliases", None))

    @property
    def functions(self):
        return self._note(("functions", None))

    @property
    def changes_default_dtype(self):
        return self._note(("changes_default_dtype", None))

    def function(self, name):
        return self._note(("function", (name,)))

    def effects(self, name, depth=3):
        return self._note(("effects", (name, depth)))

    def module_class(self, name):
        return self._note(("module_class", (name,)))

    @property
    def mentions_backward(self):
        return self._note(("mentions_backward", None))

    def __getattr__(self, member):
        # Anything this class does not know: depend on the whole summary.
        self._note(("", None))
        return getattr(self._summary, member)

    def _note(self, question):
        answer = _ask(self._summary, question)
        self.reads[question] = answer
        return answer


def _ask(summary: ModuleSummary, question):
    member, args = question
    if not member:
        return summary
    value = getattr(summary, member)
    return value if args is None else value(*args)


class _LineIndex:
    """Lines of the source by number, split only on first need (suppression comments)."""

    def __init__(self, source: str):
        self._lines = source_lines(source)

    def line(self, number: int) -> str:
        return self._lines[number - 1] if 0 < number <= len(self._lines) else ""


def _call_contexts(calls) -> dict:
    """Function name -> facts of its positional parameters, joined over every call
    in the file; only functions where some parameter gets a known tensor."""
    from analysis.facts import UNKNOWN, TensorFacts, join
    by_function: dict[str, list] = {}
    for name, args in calls:
        by_function.setdefault(name, []).append(args)
    contexts = {}
    for name, arg_lists in by_function.items():
        width = max(len(args) for args in arg_lists)
        joined = []
        for index in range(width):
            values = [args[index] if index < len(args) else UNKNOWN for args in arg_lists]
            value = values[0]
            for other in values[1:]:
                value = join(value, other)
            joined.append(value if isinstance(value, TensorFacts) else UNKNOWN)
        if any(isinstance(v, TensorFacts) for v in joined):
            contexts[name] = tuple(joined)
    return contexts


class _ModuleObjects:
    """The models and optimizers module code binds to names, for the functions that
    use them as globals. A name bound to two different objects (or to anything
    else) is left out: which one a function sees depends on when it is called."""

    _MIXED = object()

    def __init__(self):
        self._by_name: dict = {}

    def note(self, env: Env) -> None:
        for name, value in env.names.items():
            known = self._by_name.get(name)
            if known is self._MIXED:
                continue
            if isinstance(value, (ModuleValue, OptimizerValue)):
                if known is None or _identity(known) == _identity(value):
                    self._by_name[name] = value
                    continue
            if known is not None or isinstance(value, (ModuleValue, OptimizerValue)):
                self._by_name[name] = self._MIXED

    def consistent(self) -> dict:
        out = {}
        for name, value in self._by_name.items():
            if value is self._MIXED:
                continue
            # Whether a function runs in train or eval mode is the caller's business.
            out[name] = replace(value, training=None) if isinstance(value, ModuleValue) else value
        return out


def _identity(value):
    return value.mid if isinstance(value, ModuleValue) else value.oid


def _forget_all(env: Env) -> Env:
    """After a chunk we could not follow, nothing it may have bound is known."""
    from analysis.facts import UNKNOWN
    return Env({key: UNKNOWN for key in env.names}, {}, {})


# Chunks longer than this are checked for operator chains before libcst sees them.
_LONG_CHUNK = 4_000
_MAX_OPERATOR_CHAIN = 1_500
_UNREAD = (None, 1, 0)


def _python_parse(text: str):
    """(ast tree or None, refusal or None). The tree feeds the module summary. A
    refusal, (syntax error message or None, line, column), means libcst must not
    parse the text: Python's own parser found it too deep, or it holds an operator
    chain libcst would take minutes on."""
    try:
        tree = ast.parse(text)
    except RecursionError:
        return None, _UNREAD
    except SyntaxError as exc:
        if "too many nested" in str(exc.msg):
            return None, (str(exc.msg), exc.lineno or 1, max((exc.offset or 1) - 1, 0))
        return None, None
    except (ValueError, MemoryError):
        return None, None
    if len(text) > _LONG_CHUNK and _longest_operator_chain(tree) > _MAX_OPERATOR_CHAIN:
        return None, _UNREAD
    return tree, None


def _python_syntax_findings(source: str) -> list[Finding]:
    """The syntax error of a file, if any: `ast` first (fast); only when it refuses
    the text does libcst decide, since it knows syntax newer than this Python."""
    try:
        ast.parse(source)
        return []
    except SyntaxError as exc:
        if "too many nested" in str(exc.msg):
            line, column, message = exc.lineno or 1, max((exc.offset or 1) - 1, 0), exc.msg
        else:
            try:
                cst.parse_module(source)
                return []
            except cst.ParserSyntaxError as error:
                (line, column), message = _syntax_position(error, source), _first_line(error.message)
            except SyntaxError as error:
                line, column, message = 1, 0, _first_line(str(error))
            except (ValueError, RecursionError, MemoryError):
                return []
    except (ValueError, RecursionError, MemoryError):
        return []
    return [Finding(SYNTAX_CODE, SYNTAX_NAME, "error", f"syntax error: {message}",
                    line, column, line, column + 1)]


def _longest_operator_chain(tree) -> int:
    longest = 0
    for node in ast.walk(tree):
        if isinstance(node, ast.BinOp):
            depth, current = 0, node
            while isinstance(current, ast.BinOp):
                depth += 1
                current = current.left
            longest = max(longest, depth)
        elif isinstance(node, ast.BoolOp):
            longest = max(longest, len(node.values))
        elif isinstance(node, ast.Compare):
            longest = max(longest, len(node.comparators))
    return longest


_ERROR_AT = re.compile(r"error at (\d+):(\d+)")


def _syntax_position(error: cst.ParserSyntaxError, text: str) -> tuple[int, int]:
    """(line, column) of a libcst parse error of `text`. The native parser leaves
    raw_line at 1; its message says where ("error at 2:4")."""
    found = _ERROR_AT.search(error.message)
    if found:
        return int(found.group(1)), int(found.group(2))
    # A tokenizer error says nothing of where: ask Python's own parser.
    try:
        ast.parse(text)
    except SyntaxError as exc:
        return exc.lineno or 1, max((exc.offset or 1) - 1, 0)
    except (ValueError, RecursionError, MemoryError):
        pass
    return error.raw_line, error.raw_column


def _first_line(message: str) -> str:
    return message.strip().splitlines()[0] if message.strip() else "invalid syntax"


def _replace_severity(f: Finding, severity: str) -> Finding:
    return Finding(f.code, f.name, severity, f.message, f.line, f.column, f.end_line,
                   f.end_column, f.fixes)


def _indent_of(line: str) -> str:
    return line[: len(line) - len(line.lstrip())]


def _edit(edit: Edit, positions, text: str) -> TextEdit:
    lines = source_lines(text)
    newline = newline_of(text)
    rng = positions[edit.node]
    start, end = rng.start, rng.end
    if edit.kind == "replace":
        return TextEdit(start.line, start.column, end.line, end.column, edit.text)
    if edit.kind == "insert_after":
        return TextEdit(end.line, end.column, end.line, end.column, edit.text)
    if edit.kind == "insert_before":
        return TextEdit(start.line, start.column, start.line, start.column, edit.text)
    if edit.kind == "line_before":
        indent = _indent_of(lines[start.line - 1])
        return TextEdit(start.line, 0, start.line, 0, f"{indent}{edit.text}{newline}")
    if edit.kind == "line_after":
        indent = _indent_of(lines[start.line - 1])
        return TextEdit(end.line, len(lines[end.line - 1]), end.line, len(lines[end.line - 1]),
                        f"{newline}{indent}{edit.text}")
    if edit.kind == "delete_line":
        # the statement's whole lines, line break included
        if end.line < len(lines):
            return TextEdit(start.line, 0, end.line + 1, 0, "")
        return TextEdit(start.line, 0, end.line, len(lines[end.line - 1]), "")
    if edit.kind == "wrap":
        first = lines[start.line - 1]
        indent = _indent_of(first)
        body = lines[start.line - 1:end.line]
        new = [f"{indent}{edit.text}"] + [("    " + l) if l.strip() else l for l in body]
        return TextEdit(start.line, 0, end.line, len(lines[end.line - 1]), newline.join(new))
    raise ValueError(f"unknown edit kind {edit.kind!r}")
