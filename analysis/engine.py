"""From source text to findings.

`Analyzer` keeps what it learnt about the previous versions of one document:
the chunks (top-level statements) and their `ast` parses, cached by text, so
that an edit inside one function re-parses that function only.

An analysis runs the module's code in order (analysis/walker.py), following the
calls it makes into functions and classes of the file and of the project; then
every function or method no call reached runs on its own, with unknown
parameters; then every rule reads the trace. Findings are placed through the
chunk holding their node: a node in another file is reported at the call in
this file that led to it.
"""
from __future__ import annotations

import ast
import re
import warnings
from dataclasses import dataclass, field

from autograd_lsp.analysis.chunks import Chunk, ChunkSplitter, cut_at_recovery_lines
from autograd_lsp.analysis.edits import newline_of, source_lines
from autograd_lsp.analysis.errors import describe_error
from autograd_lsp.analysis.call_sites import reported_at_call
from autograd_lsp.analysis.cascades import without_cascades
from autograd_lsp.analysis.parse_guard import Refusal, TextShape, call_with_room, measure
from autograd_lsp.analysis.facts import ClassValue, FunctionValue, ObjectRef, replace
from autograd_lsp.analysis.relevance import Relevance
from autograd_lsp.analysis.findings import Finding, Fix, TextEdit
from autograd_lsp.analysis.rule import Edit, Report, Rule
from autograd_lsp.analysis.rules import all_rules
from autograd_lsp.analysis.settings import Settings
from autograd_lsp.analysis.state import State
from autograd_lsp.analysis.suppression import is_suppressed
from autograd_lsp.analysis.trace import CallSite, Context, Trace
from autograd_lsp.analysis.source import SourceText
from autograd_lsp.analysis.walker import ALONE_BUDGET, Frame, ModuleContext, Walker, alone_budget
from autograd_lsp.analysis.workspace import project_imports
from autograd_lsp.analysis.tree import nodes

class AnalysisStopped(Exception):
    """Raised by `Analyzer.analyze` when its `should_stop` says so."""


SYNTAX_CODE = "AG001"
SYNTAX_NAME = "syntax-error"
# A word of Python text: every identifier is one (see ParsedChunk.free_names).
_WORD = re.compile(r"\w+")
# Methods that make a loop a training loop (see ParsedChunk.trains_nothing).
_TRAINING_METHODS = frozenset({"backward", "step", "zero_grad", "grad"})


@dataclass(eq=False)
class ParsedChunk:
    """One chunk's text and its parse. Shared by every version of the document
    that holds the same text (at whatever line)."""
    text: str
    tree: ast.Module | None
    key: tuple = ()
    error: str | None = None
    error_line: int = 1          # relative to the chunk
    error_column: int = 0
    # Why the chunk was left unread (see analysis.parse_guard), and how deep it is.
    refusal: Refusal | None = None
    shape: TextShape = TextShape()
    _lines: list | None = None
    _starts: list | None = None
    _cst: object = None
    _signature: object = None
    _free: dict = field(default_factory=dict)
    _bound: dict = field(default_factory=dict)
    _trains: dict = field(default_factory=dict)
    # id(function node) -> relevance._Summary of it (see analysis/relevance.py).
    relevance_summaries: dict = field(default_factory=dict)
    _generators: dict = field(default_factory=dict)
    # For a chunk of another module of the project: that module's names, which its
    # functions read as their globals.
    module_names: dict | None = None

    def bound_names(self, node) -> frozenset:
        """The names a statement (a loop: its target and body) binds."""
        key = id(node)
        found = self._bound.get(key)
        if found is None:
            found = frozenset(_bound_names(node))
            self._bound[key] = found
        return found

    def trains_nothing(self, node) -> bool:
        """Whether a loop's body holds no backward, step or gradient clearing, nor a
        loop of its own: a loop that builds (layers, a list of blocks), which a short
        `range` may run number by number."""
        key = id(node)
        found = self._trains.get(key)
        if found is None:
            found = not any(isinstance(n, (ast.For, ast.While, ast.AsyncFor)) or
                            (isinstance(n, ast.Attribute) and n.attr in _TRAINING_METHODS)
                            for body in (node.body, node.orelse) for stmt in body for n in nodes(stmt))
            self._trains[key] = found
        return found

    def free_names(self, node) -> tuple:
        """The names a definition may read (that it may find among the module's): every
        word of its text and its decorators'. A few more than it reads (attributes,
        words of strings) only make the caches keyed by them more careful; reading
        the text is several times faster than walking the tree."""
        key = id(node)
        found = self._free.get(key)
        if found is None:
            texts = [self.segment(n) for n in (node, *getattr(node, "decorator_list", ()))]
            if None in texts:
                found = tuple(sorted({n.id for n in nodes(node)
                                      if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}))
            else:
                found = tuple(sorted(set(_WORD.findall("\n".join(texts)))))
            self._free[key] = found
        return found

    @property
    def lines(self) -> list:
        if self._lines is None:
            self._lines = source_lines(self.text)
        return self._lines

    def column(self, line: int, byte_column: int) -> int:
        """`ast` counts columns in UTF-8 bytes; findings count code points."""
        if not 1 <= line <= len(self.lines):
            return byte_column
        text = self.lines[line - 1]
        if text.isascii():
            return byte_column
        return len(text.encode("utf-8")[:byte_column].decode("utf-8", errors="ignore"))

    def segment(self, node) -> str | None:
        """The chunk's text of `node`, as `ast.get_source_segment` gives it, without
        splitting the whole text into lines again at every call (that made indexing
        a class of a hundred methods quadratic)."""
        if getattr(node, "end_lineno", None) is None or getattr(node, "end_col_offset", None) is None:
            return None
        if self._starts is None:
            self._starts = SourceText(self.text).line_starts
        line, column, end_line, end_column = self.span(node)
        if not (1 <= line <= len(self._starts) and 1 <= end_line <= len(self._starts)):
            return None
        return self.text[self._starts[line - 1] + column:self._starts[end_line - 1] + end_column]

    def span(self, node) -> tuple[int, int, int, int]:
        """(line, column, end line, end column) of a node, relative to the chunk."""
        line, end_line = node.lineno, getattr(node, "end_lineno", None) or node.lineno
        column = self.column(line, node.col_offset)
        end_column = self.column(end_line, getattr(node, "end_col_offset", None) or node.col_offset)
        return line, column, end_line, end_column


@dataclass
class Analysis:
    findings: list
    # (start_line, ParsedChunk) of the chunks analysed, for hovers
    chunks: list = field(default_factory=list)
    seen: dict = field(default_factory=dict)
    # One trace per run: the module's code, then each function run on its own.
    traces: list = field(default_factory=list)


@dataclass
class _Segment:
    """What one run found: the rules' reports, and the facts of names for hovers."""
    reports: list
    seen: dict
    trace: Trace
    # The functions the run followed into (their code was checked in its context).
    followed: frozenset = frozenset()


@dataclass
class _ModuleRun:
    parts: list
    locale: str
    path: str | None
    segment: _Segment
    state: State
    followed_sources: set
    followed_nodes: set


class Analyzer:
    """Analyses successive versions of one document, reusing unchanged work."""

    def __init__(self, rules: tuple[Rule, ...] | None = None, workspace=None):
        self.rules = rules if rules is not None else all_rules()
        self.workspace = workspace
        self._splitter = ChunkSplitter()
        self._parsed: dict[tuple, ParsedChunk] = {}
        self.last: Analysis | None = None
        # Exceptions raised by the analysis itself (bugs of ours), newest last.
        self.internal_errors: list[tuple[int, str]] = []
        # Parts of the last text left unread because a parser could not take them:
        # (1-based line, reason). Callers must say so; they are not "no problems".
        self.unread: list[tuple[int, str]] = []
        self._should_stop = None
        # Whether the facts of each name are kept for hovers (`last.seen`); a caller
        # that never asks (the command line) saves their cost.
        self.keeps_facts = True
        # Whether runs are kept for the next analysis of an edited text (an editor's);
        # a caller that analyses each text once (the command line) saves the digests
        # of what each run reads.
        self.reuses_runs = True
        # Paths of the project's modules the last analysis read.
        self.dependencies: set = set()
        # The last run of the module's code, and the runs of functions on their own,
        # reused while what they read is unchanged.
        self._module_cache: _ModuleRun | None = None
        self._alone_cache: dict = {}
        # Which functions may matter, as the last analysis found (see Relevance).
        self._relevance: Relevance | None = None
        # Functions no call reached and in which no rule can find anything are not run
        # on their own (see analysis/relevance.py) unless `run_everything`; a hover
        # inside one runs it then, for its facts only.
        self.run_everything = False
        self._deferred: dict = {}
        self._deferred_seen: dict = {}
        self._globals_digests: "_GlobalsDigests | None" = None

    def analyze(self, source: str, settings: Settings | None = None, path: str | None = None,
                should_stop=None) -> list[Finding]:
        """Findings for `source`. `should_stop()`, when given, is asked between steps;
        True raises AnalysisStopped."""
        settings = settings or Settings()
        self.unread = []
        self._should_stop = should_stop
        if "torch" not in source and ".backward(" not in source:
            # Every fact the rules need starts from a torch name: a file that never
            # mentions torch has nothing to report but its syntax, which `ast` checks.
            syntax, self.unread = _python_syntax_findings(source)
            out = self._final(syntax, source, settings)
            self.last = Analysis(out, [])
            return out
        chunks, parsed = self._chunks_and_parses(source, path)
        findings: list[Finding] = []
        for chunk, part in zip(chunks, parsed):
            if part.tree is None and part.error is not None:
                findings.append(self._syntax_finding(chunk, part))
            elif part.tree is None and part.refusal is not None:
                self.unread.append((chunk.start_line + part.refusal.line - 1, part.refusal.reason))
        starts = {id(part): chunk.start_line for chunk, part in zip(chunks, parsed) if part.tree is not None}
        parts = [p for p in parsed if p.tree is not None]
        segments = self._segments(parts, path, settings.locale, ".backward(" in source)
        seen: dict = {}
        for segment in segments:
            for rule, report in segment.reports:
                placed = self._place(rule, report, starts)
                if placed is not None:
                    findings.append(placed)
                    again = reported_at_call(rule, report, settings.locale)
                    if again is not None:
                        placed = self._place(rule, again, starts)
                        if placed is not None:
                            findings.append(placed)
            seen.update(segment.seen)
        out = self._final(findings, source, settings)
        live = {c.text for c in chunks}
        if len(self._parsed) > 2 * len(live) + 64:
            self._parsed = {k: p for k, p in self._parsed.items() if k[0] in live}
        self.last = Analysis(out, [(c.start_line, p) for c, p in zip(chunks, parsed) if p.tree is not None],
                             seen, [s.trace for s in segments])
        return out

    # -- running ---------------------------------------------------------------------------

    def _segments(self, parts: list, path, locale: str, mentions_backward: bool) -> list:
        """The module's run, then each function no call reached, run on its own: each a
        segment whose findings depend on nothing else, kept while its inputs stay the same."""
        module, state, followed = self._module_segment(parts, path, locale, mentions_backward)
        context = self._module_context(path)
        reuse = _GlobalsDigests(state, self._globals_digests) if self.reuses_runs else None
        self._globals_digests = reuse
        relevance = None
        self._deferred = {}
        runs = []
        # The functions that may matter share the file's budget. (Asked of every
        # function, cached or not, and counted alike when `run_everything`: each
        # run's share must depend on the text only, never on the cache.)
        sharing = 0
        for part in parts:
            for node in part.tree.body:
                for function, owner in _definitions(node, state.names):
                    if function.node in followed:
                        continue
                    self._check_stop()
                    if relevance is None:
                        relevance = Relevance(parts, self._project_imports(parts, path, state), self._relevance)
                        self._relevance = relevance
                    if relevance.may_matter(function.node, owner.node if owner else None):
                        sharing += 1
                    elif not self.run_everything:
                        # Nothing a rule reads: run only if a hover asks for its facts.
                        self._deferred[function.node] = (function, owner, part, state, context,
                                                         locale, mentions_backward)
                        continue
                    key = (function, owner, locale, reuse.digest(function, part, owner) if reuse else None)
                    runs.append((function, owner, part, key))
        budget = alone_budget(sharing)
        segments = [module]
        kept = {}
        instances: dict = {}
        # Callers are defined after what they call (a Trainer's `fit` after its
        # `train_epoch`): run the last first, and a function a run followed into is
        # checked already, in a context that knows more than its unknown parameters.
        covered: set = set()
        for function, owner, part, key in reversed(runs):
            if function.node in covered:
                continue
            self._check_stop()
            key = key + (budget,)
            segment = self._alone_cache.get(key) if self.reuses_runs else None
            if segment is None:
                if owner is not None and owner not in instances:
                    instances[owner] = self._instance(owner, part, state, context, budget)
                segment = self._run_alone(function, instances.get(owner), part, state, context,
                                          locale, mentions_backward, budget=budget)
            kept[key] = segment
            segments.append(segment)
            covered |= segment.followed
        self._alone_cache = kept
        return segments

    def _project_imports(self, parts: list, path, state: State) -> set:
        """Names bound by imports of the project's own modules whose code may matter:
        all of them, less the functions and classes of modules the workspace ran
        whose definitions touch nothing a rule reads."""
        names = project_imports(self.workspace, [part.tree for part in parts], path)
        if self.workspace is None:
            return names
        bound = state.names
        return {name for name in names if name not in bound or self.workspace.may_matter(bound[name])}

    def _deferred_facts(self, node) -> dict:
        """The facts of names in a function whose run on its own was skipped (nothing
        a rule reads), computed when a hover asks; they hold no findings."""
        pending = self._deferred.pop(node, None)
        if pending is None:
            return {}
        function, owner, part, state, context, locale, mentions_backward = pending
        key = (function, owner, locale, _globals_digest(function, part, state, owner))
        seen = self._deferred_seen.get(key)
        if seen is None:
            instance = self._instance(owner, part, state, context) if owner is not None else None
            seen = self._run_alone(function, instance, part, state, context, locale, mentions_backward).seen
            self._deferred_seen = {**{k: v for k, v in list(self._deferred_seen.items())[-15:]}, key: seen}
        return seen

    def _instance(self, cls, part, state: State, context, budget: int = ALONE_BUDGET):
        """(state, `self`) for the methods of a class run on their own: an instance
        whose `__init__` ran with unknown arguments, made once for all its methods."""
        walker = Walker(budget=budget, record_seen=self.keeps_facts)
        run_state = state.copy()
        run_state.work = [0]
        frame = Frame(None, part, None, prefix=("instance",) + part.key, module=context)
        found = []
        self._guarded(lambda: found.append(_instance_for_alone_run(walker, cls, run_state, frame)))
        return run_state, (found[0] if found else None)

    def _module_segment(self, parts: list, path, locale: str, mentions_backward: bool):
        """(segment, final state, functions its calls reached) of the module's own code.
        Reused from the previous analysis when only bodies of functions it never
        called changed: then only those definitions are run again, to bind their names."""
        previous = self._module_cache
        if previous is not None and previous.locale == locale and previous.path == path \
                and len(previous.parts) == len(parts):
            changed = []
            for old, new in zip(previous.parts, parts):
                if old is new:
                    continue
                if old in previous.followed_sources or _signature(old) is None \
                        or _signature(old) != _signature(new):
                    changed = None
                    break
                changed.append(new)
            if changed is not None:
                state = previous.state
                if changed:
                    state = state.copy()
                    walker = Walker(record_seen=self.keeps_facts)
                    context = self._module_context(path)
                    for part in changed:
                        frame = Frame(None, part, None, prefix=part.key, module=context)
                        self._guarded(lambda: walker.run_module(part.tree, state, frame, Context(no_grad=False)),
                                      part.shape)
                    previous = replace(previous, parts=list(parts), state=state)
                    self._module_cache = previous
                return previous.segment, previous.state, previous.followed_nodes
        trace = Trace(mentions_backward=mentions_backward)
        walker = Walker(trace, record_seen=self.keeps_facts)
        context = self._module_context(path)
        state = State()
        ctx = Context(no_grad=False)

        def run():
            for part in parts:
                frame = Frame(None, part, None, prefix=part.key, module=context)
                walker.run_module(part.tree, state, frame, ctx)
                if not state.reachable:
                    # `sys.exit()` or a raise at module level: what follows is still
                    # code the user wants checked.
                    state.reachable = True

        self._guarded(run, max((p.shape for p in parts), key=lambda shape: shape.levels,
                               default=TextShape()))
        walker.torch_name = _torch_name(state.names)
        segment = self._segment(walker, trace, locale)
        self._module_cache = _ModuleRun(list(parts), locale, path, segment, state,
                                        set(walker.followed_sources), set(walker.followed_nodes))
        return segment, state, walker.followed_nodes

    def _run_alone(self, function, instance, part, state: State, context, locale: str, mentions_backward: bool,
                   budget: int = ALONE_BUDGET):
        trace = Trace(mentions_backward=mentions_backward)
        walker = Walker(trace, budget=budget, record_seen=self.keeps_facts)
        walker.torch_name = _torch_name(state.names)
        receiver = None
        if instance is not None:
            state, receiver = instance
        run_state = state.copy()
        run_state.work = [0]    # its own budget, whatever ran before it
        # Its callers are unknown and may call it after a backward: the `.grad` of
        # every tensor that exists before it runs (globals, `self`'s parameters) may
        # be set. Tensors it makes itself are still known.
        run_state.any_grad_may_be_set()
        frame = Frame(None, part, None, prefix=("alone",) + part.key, module=context)

        def run():
            walker.run_alone(function, receiver, run_state, frame, Context(no_grad=None))

        self._guarded(run, part.shape)
        return self._segment(walker, trace, locale)

    def _segment(self, walker: Walker, trace: Trace, locale: str) -> "_Segment":
        trace.torch_name = walker.torch_name
        reports = []
        for rule in self.rules:
            try:
                reports.extend((rule, report) for report in rule.check(trace, locale))
            except Exception as exc:  # noqa: BLE001 - one rule's bug must not hide the others
                self.internal_errors.append((1, f"{rule.name}: {type(exc).__name__}: {exc}"))
        return _Segment(without_cascades(reports, trace), walker.seen, trace, frozenset(walker.followed_nodes))

    def _guarded(self, run, shape: TextShape = TextShape()) -> None:
        try:
            # Deep trees (long chains) are walked where the recursion fits.
            call_with_room(shape, run)
        except RecursionError:
            self.internal_errors.append((1, "RecursionError"))
        except AnalysisStopped:
            raise
        except Exception as exc:  # noqa: BLE001 - a bug of ours must not cost the user the rest
            self.internal_errors.append((1, describe_error(exc)))

    def forget_modules(self, paths) -> bool:
        """Project modules at `paths` changed: when the last analyses read any of them,
        the cached runs are dropped (the next analysis runs the code again). True
        when they had been read."""
        if not self.dependencies & set(paths):
            return False
        self._module_cache = None
        self._alone_cache = {}
        return True

    def _check_stop(self) -> None:
        if self._should_stop is not None and self._should_stop():
            raise AnalysisStopped()

    def _module_context(self, path) -> ModuleContext:
        """The file's own module (`__name__ == "__main__"`), reading the project's
        modules it imports, each a dependency of this analysis."""
        if self.workspace is None:
            return ModuleContext("__main__", path)

        def resolve(name, level, from_path):
            found = self.workspace.module_namespace(name, level, from_path)
            if found is not None:
                self.dependencies.add(found.path)
            return found

        def reexported(name, level, from_path, member):
            found = self.workspace.reexported(name, level, from_path, member)
            if found is not None:
                self.dependencies.add(found[0].path)
                self.dependencies.update(found[2])
            return found

        return ModuleContext("__main__", path, resolve, reexported)

    # -- parsing ---------------------------------------------------------------------------------

    def _chunks_and_parses(self, source: str, path: str | None = None):
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
            self._check_stop()
            chunk = pending.pop()
            occurrence = occurrences.get(chunk.text, 0)
            part = self._parse(chunk, occurrence, path)
            if part.tree is None and chunk.recovery_lines:
                pieces = cut_at_recovery_lines(chunk)
                pieces.reverse()
                pending.extend(pieces)
                continue
            occurrences[chunk.text] = occurrence + 1
            chunks.append(chunk)
            parsed.append(part)
        return chunks, parsed

    def _parse(self, chunk: Chunk, occurrence: int = 0, path: str | None = None) -> ParsedChunk:
        key = (chunk.text, occurrence)
        cached = self._parsed.get(key)
        if cached is not None:
            return cached
        ident = (hash(chunk.text), occurrence)
        # -- parse guard: measured without recursion before any parser sees the text.
        shape = measure(chunk.text)
        if shape.refusal is not None:
            refusal = shape.refusal
            part = (ParsedChunk(chunk.text, None, ident, refusal.reason, refusal.line, refusal.column)
                    if refusal.syntax_error else ParsedChunk(chunk.text, None, ident, refusal=refusal))
            self._parsed[key] = part
            return part
        try:
            with warnings.catch_warnings():
                # CPython's own SyntaxWarnings name a file and line that are not the user's.
                warnings.simplefilter("ignore")
                # This file, run by the workspace as a module another file imported,
                # is parsed once: trees are never changed. (Only its own chunks: a
                # helper copied into two files must keep a node of its own in each,
                # and so must a second chunk of the same text in this document.)
                tree = self.workspace.tree_of(path, chunk.text) \
                    if self.workspace is not None and path is not None and occurrence == 0 else None
                summaries = None
                if tree is None:
                    tree = call_with_room(shape, ast.parse, chunk.text)
                else:
                    summaries = self.workspace.summaries_of(path, chunk.text)
            part = ParsedChunk(chunk.text, tree, ident, shape=shape)
            if summaries is not None:
                part.relevance_summaries = summaries
        except SyntaxError as exc:
            part = ParsedChunk(chunk.text, None, ident, _syntax_message(exc), exc.lineno or 1,
                               max((exc.offset or 1) - 1, 0))
        except (RecursionError, MemoryError):
            # Valid code too deep for the parser: the chunk is left unread (and the
            # caller says so), the rest of the file is still analysed.
            part = ParsedChunk(chunk.text, None, ident,
                               refusal=Refusal("too deeply nested for Python's parser", 1, 0))
        except ValueError as exc:
            part = ParsedChunk(chunk.text, None, ident, f"cannot parse: {exc}")
        self._parsed[key] = part
        return part

    # -- findings -------------------------------------------------------------------------------

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
                f = replace(f, severity=severity)
            out.append(f)
        return out

    def _place(self, rule: Rule, report: Report, starts: dict) -> Finding | None:
        node, source = _in_document(report.node, report.at, starts)
        if node is None:
            return None
        base = starts[id(source)] - 1
        line, column, end_line, end_column = source.span(node)
        fixes = []
        if node is report.node:
            for spec in report.fixes:
                edits = []
                for edit in spec.edits:
                    edit_source = (edit.at.source if isinstance(edit.at, CallSite) else edit.at.ctx.source) \
                        if edit.at is not None else source
                    if id(edit_source) not in starts:
                        break
                    made = _edits(edit, edit_source, starts[id(edit_source)] - 1)
                    if made is None:
                        break
                    edits.extend(made)
                else:
                    fixes.append(Fix(spec.title, tuple(edits), spec.safe))
        return Finding(rule.code, rule.name, rule.severity, report.message, line + base, column,
                       end_line + base, end_column, tuple(fixes))

    def facts_at(self, line: int, column: int):
        """The name at (1-based line, code-point column) and its facts, from the last analysis."""
        if self.last is None:
            return None
        for start, part in self.last.chunks:
            rel = line - start + 1
            if not 1 <= rel <= len(part.lines):
                continue
            for node in ast.walk(part.tree):
                if isinstance(node, ast.Name):
                    name, where = node.id, node
                elif isinstance(node, ast.arg):
                    name, where = node.arg, node
                else:
                    continue
                if where.lineno != rel:
                    continue
                start_col = part.column(rel, where.col_offset)
                if not start_col <= column <= start_col + len(name):
                    continue
                if where not in self.last.seen:
                    self._guarded(lambda: self.last.seen.update(self._deferred_facts(
                        _enclosing_definition(part.tree, where))))
                if where in self.last.seen:
                    return name, self.last.seen[where]
        return None

    def _syntax_finding(self, chunk: Chunk, part: ParsedChunk) -> Finding:
        # Within the chunk's own lines: a parser reports an unclosed bracket at the
        # end of the input, which may be the line after the chunk's last.
        lines = part.lines
        rel = min(max(part.error_line, 1), max(chunk.line_count, 1), len(lines))
        line = chunk.start_line + rel - 1
        column = min(part.error_column, len(lines[rel - 1])) if lines else 0
        return Finding(SYNTAX_CODE, SYNTAX_NAME, "error", f"syntax error: {part.error}",
                       line, column, line, column + 1)


def analyze(source: str, settings: Settings | None = None) -> list[Finding]:
    """Findings for one source text (no caches kept)."""
    return Analyzer().analyze(source, settings)


# -- helpers -----------------------------------------------------------------------------------

def _in_document(node, at, starts: dict):
    """(node, chunk) where a report belongs in this document: its own place, or
    the call of this document through which it was reached."""
    if at is None:
        return None, None
    if isinstance(at, CallSite):
        return (node, at.source) if id(at.source) in starts else (None, None)
    ctx = at.ctx
    if ctx.source is not None and id(ctx.source) in starts:
        return node, ctx.source
    for site in reversed(ctx.calls):
        if isinstance(site, CallSite) and id(site.source) in starts:
            return site.node, site.source
    return None, None


def _enclosing_definition(tree, target):
    """The top-level function or method whose body holds `target`, if any."""
    for node in tree.body:
        candidates = [node] if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) else (
            [n for n in node.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
            if isinstance(node, ast.ClassDef) else [])
        for function in candidates:
            if function.lineno <= target.lineno <= (function.end_lineno or function.lineno) \
                    and any(n is target for n in ast.walk(function)):
                return function
    return None


def _definitions(node, names: dict):
    """(function, owning class or None) for a top-level def or class statement."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        value = names.get(node.name)
        if isinstance(value, FunctionValue) and value.node is node:
            yield value, None
    elif isinstance(node, ast.ClassDef):
        value = names.get(node.name)
        if isinstance(value, ClassValue) and value.node is node:
            for method in value.methods.values():
                if method.is_static or method.is_classmethod:
                    yield method, None
                else:
                    yield method, value


def _signature(part: ParsedChunk):
    """What running a chunk of definitions at module level does, apart from the
    bodies of its functions: None for a chunk that is not only definitions."""
    if part._signature is None:
        body = part.tree.body if part.tree is not None else []
        if not body or not all(isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) for n in body):
            part._signature = False
        else:
            part._signature = tuple(_outline(n) for n in body)
    return part._signature or None


def _outline(node) -> str:
    """A definition without its functions' bodies."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return ast.dump(node.args) + "|" + node.name + "|" + "|".join(ast.dump(d) for d in node.decorator_list)
    parts = [node.name, "|".join(ast.dump(b) for b in node.bases),
             "|".join(ast.dump(d) for d in node.decorator_list)]
    for stmt in node.body:
        parts.append(_outline(stmt) if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
                     else ast.dump(stmt))
    return "#".join(parts)


class _GlobalsDigests:
    """`_globals_digest` for the functions of one analysis, reusing the last
    analysis's where nothing it depends on changed. A keystroke inside a function
    leaves the module's state as it was but for the names the edited definitions
    bind: a function whose reached names are all bound to the same values as
    before (and no module-level name appeared or went away) has the same digest."""

    def __init__(self, state: State, previous: "_GlobalsDigests | None"):
        self.state = state
        self.digests: dict = {}
        self.closures: dict = {}
        # id(function node) -> (node, owner node, reached names, digest)
        self.entries: dict = {}
        self.changed = None          # names bound anew since `previous`; None: anything may differ
        if previous is not None:
            before, now = previous.state.names, state.names
            if before is now:
                self.changed = frozenset()
            elif before.keys() == now.keys():
                self.changed = frozenset(n for n, v in now.items() if before[n] is not v)
            self.old = previous.entries
        else:
            self.old = {}

    def digest(self, function, part, owner=None):
        owner_node = owner.node if isinstance(owner, ClassValue) else None
        entry = self.old.get(id(function.node)) if self.changed is not None else None
        if entry is not None and entry[0] is function.node and entry[1] is owner_node \
                and entry[2].isdisjoint(self.changed):
            self.entries[id(function.node)] = entry
            return entry[3]
        reached = _names_reached_by(function, part, self.state, owner, self.closures)
        found = _digest_of(reached, self.state, self.digests)
        self.entries[id(function.node)] = (function.node, owner_node, reached, found)
        return found


def _globals_digest(function, part: ParsedChunk, state: State, owner=None) -> tuple:
    """The module-level names a function may read, with what they hold: those it
    names, and those the module's functions and classes it reaches name, and so on
    (a helper's helper that changed changes what the function's run finds)."""
    return _digest_of(_names_reached_by(function, part, state, owner, {}), state, {})


def _names_reached_by(function, part: ParsedChunk, state: State, owner, closures: dict) -> frozenset:
    """What `_globals_digest` reads: the function's reached names and, for a method,
    its class's. `closures` is shared by the functions of one analysis (one state):
    most reach the same helpers."""
    reached = _reached_names(function.node, part, state, closures)
    if isinstance(owner, ClassValue):
        reached = reached | _reached_names(owner.node, owner.source, state, closures)
    return reached


def _digest_of(names, state: State, digests: dict) -> tuple:
    out = []
    for name in sorted(names):
        if name not in digests:
            digests[name] = state.digest(state.names[name])
        out.append((name, digests[name]))
    return tuple(out)


def _reached_names(node, source, state: State, closures: dict) -> frozenset:
    """The module-level names a definition reads, and those the definitions it
    reaches through them read, and so on. A definition met on the way whose names
    are known already brings them all: what it reaches, the one that reached it
    reaches too."""
    known = closures.get(id(node))
    if known is not None:
        return known
    seen: set = set()
    todo = [(node, source)]
    while todo:
        current, current_source = todo.pop()
        if not isinstance(current_source, ParsedChunk):
            continue
        for name in current_source.free_names(current):
            if name in seen or name not in state.names:
                continue
            seen.add(name)
            value = state.names[name]
            if isinstance(value, (FunctionValue, ClassValue)):
                done = closures.get(id(value.node))
                if done is not None:
                    seen |= done
                else:
                    todo.append((value.node, value.source))
    found = closures[id(node)] = frozenset(seen)
    return found


def _instance_for_alone_run(walker: Walker, cls: ClassValue, state: State, frame: Frame):
    """`self` for a method run on its own: an instance whose `__init__` ran with
    unknown arguments, so the attributes it sets from literals are known."""
    from autograd_lsp.analysis.facts import UNKNOWN
    from autograd_lsp.analysis.semantics import Call
    from autograd_lsp.analysis.semantics.objects import instantiate
    init = cls.lookup("__init__")
    count = 0
    if isinstance(init, FunctionValue):
        count = max(0, len(init.node.args.args) - 1 - len(init.defaults))
    run_state = state.copy()
    call = Call(cls.node, [UNKNOWN] * count, {}, run_state, Context(no_grad=None, alone=True),
                walker, frame, starred=True)
    try:
        ref = instantiate(walker, cls, call)
    except RecursionError:
        return None
    state.become(run_state)
    return ref if isinstance(ref, ObjectRef) else None


def _torch_name(names: dict) -> str | None:
    from autograd_lsp.analysis.facts import TorchName
    for key, value in names.items():
        if isinstance(value, TorchName) and value.qualname == "torch":
            return key
    return None


class _LineIndex:
    """Lines of the source by number, split only on first need (suppression comments)."""

    def __init__(self, source: str):
        self._lines = source_lines(source)

    def line(self, number: int) -> str:
        return self._lines[number - 1] if 0 < number <= len(self._lines) else ""


def _syntax_message(exc: SyntaxError) -> str:
    return (exc.msg or "invalid syntax").strip().splitlines()[0] if exc.msg else "invalid syntax"


def _python_syntax_findings(source: str) -> tuple[list[Finding], list[tuple[int, str]]]:
    """The syntax error of a file, if any, and what was left unread (`ast` refuses
    deep nesting without crashing; that is not "no problems")."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ast.parse(source)
        return [], []
    except SyntaxError as exc:
        lines = source_lines(source)
        line = min(max(exc.lineno or 1, 1), len(lines))
        column = min(max((exc.offset or 1) - 1, 0), len(lines[line - 1]))
        return [Finding(SYNTAX_CODE, SYNTAX_NAME, "error", f"syntax error: {_syntax_message(exc)}",
                        line, column, line, column + 1)], []
    except (RecursionError, MemoryError):
        return [], [(1, "too deeply nested for Python's parser")]
    except ValueError:
        return [], []


def _indent_of(line: str) -> str:
    return line[: len(line) - len(line.lstrip())]


def _edits(edit: Edit, part: ParsedChunk, base: int) -> tuple[TextEdit, ...] | None:
    """A rule's edit as text edits in the document: one, or for "wrap_run" a header
    and an indentation per line (one insertion per point: editors order insertions
    at one point differently)."""
    if edit.kind != "wrap_run":
        made = _edit(edit, part, base)
        return None if made is None else (made,)
    lines = part.lines
    first = part.span(edit.node)[0]
    last = part.span(edit.through if edit.through is not None else edit.node)[2]
    indent = _indent_of(lines[first - 1])
    unit = "\t" if "\t" in indent else "    "
    header = TextEdit(first + base, 0, first + base, 0,
                      f"{indent}{edit.text}{newline_of(part.text)}{unit}")
    return (header,) + tuple(TextEdit(n + base, 0, n + base, 0, unit)
                             for n in range(first + 1, last + 1) if lines[n - 1].strip())


def _edit(edit: Edit, part: ParsedChunk, base: int) -> TextEdit | None:
    """A rule's edit, described by an ast node, as a text edit in the document."""
    lines = part.lines
    newline = newline_of(part.text)
    line, column, end_line, end_column = part.span(edit.node)
    kind = edit.kind
    if kind == "replace":
        made = (line, column, end_line, end_column, edit.text)
    elif kind == "insert_after":
        made = (end_line, end_column, end_line, end_column, edit.text)
    elif kind == "insert_before":
        made = (line, column, line, column, edit.text)
    elif kind == "line_before":
        indent = _indent_of(lines[line - 1])
        made = (line, 0, line, 0, f"{indent}{edit.text}{newline}")
    elif kind == "line_after":
        indent = _indent_of(lines[line - 1])
        made = (end_line, len(lines[end_line - 1]), end_line, len(lines[end_line - 1]),
                f"{newline}{indent}{edit.text}")
    elif kind == "delete_line":
        if end_line < len(lines):
            made = (line, 0, end_line + 1, 0, "")
        else:
            made = (line, 0, end_line, len(lines[end_line - 1]), "")
    elif kind == "wrap":
        first = lines[line - 1]
        indent = _indent_of(first)
        body = lines[line - 1:end_line]
        new = [f"{indent}{edit.text}"] + [("    " + text) if text.strip() else text for text in body]
        made = (line, 0, end_line, len(lines[end_line - 1]), newline.join(new))
    else:
        raise ValueError(f"unknown edit kind {kind!r}")
    l1, c1, l2, c2, text = made
    return TextEdit(l1 + base, c1, l2 + base, c2, text)


__all__ = ["Analyzer", "analyze", "ParsedChunk", "SYNTAX_CODE", "SYNTAX_NAME", "re"]


def _bound_names(node) -> set:
    bound = set()
    for n in nodes(node):
        if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del)):
            bound.add(n.id)
        elif isinstance(n, (ast.Global, ast.Nonlocal)):
            bound.update(n.names)
    return bound
