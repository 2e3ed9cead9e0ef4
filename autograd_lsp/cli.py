"""The `autograd-lsp` command: check files, list and explain rules, start the server.

Exit codes of `check`: 0 when no problem is found, 1 when problems remain,
2 on a usage, configuration or I/O error or when part of a file could not be
checked, 3 when the analysis itself failed (an internal error, a dead worker).
The other files are still checked in every case.

Everything printed goes through `output.terminal_safe`: paths and messages come
from files and caches that may hold escape sequences.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from autograd_lsp import __version__
from autograd_lsp.cache import CACHE_FOLDER
from autograd_lsp.locales import LOCALES
from autograd_lsp.startup import quiet_gc, quiet_parser_warnings

# The analyser (and libcst under it) is imported by the commands that use it, in
# `_import_checker`: `--version` and `--help` answer without loading it.
if TYPE_CHECKING:
    from autograd_lsp.analysis import Finding
    from autograd_lsp.checking import Outcome
    from autograd_lsp.config import ProjectConfig


def _import_checker() -> None:
    with quiet_gc():
        import autograd_lsp.checking  # noqa: F401 (the analyser, the rules, libcst)


def __getattr__(name: str):
    # `cli.Analyzer`: callers and tests reach the analysis through it.
    if name == "Analyzer":
        _import_checker()
        from autograd_lsp.analysis import Analyzer
        return Analyzer
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

OK, PROBLEMS, ERROR, CRASH = 0, 1, 2, 3
FORMATS = ("text", "json", "sarif", "github")
STDIN = "-"


def main(argv: list[str] | None = None) -> int:
    quiet_parser_warnings()
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exit_request:
        # argparse exits on --help and on usage errors; return its code instead so
        # that main() can be called from tests and other programs.
        return exit_request.code if isinstance(exit_request.code, int) else ERROR
    if not hasattr(args, "handler"):
        parser.print_help(sys.stderr)
        return ERROR
    try:
        return args.handler(args)
    except BrokenPipeError:
        # `autograd-lsp check | head` closes our stdout early; that is not an error.
        sys.stderr.close()
        return OK
    except KeyboardInterrupt:
        return 130


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="autograd-lsp",
        description="Find PyTorch autograd pitfalls by reading the code, without running it.")
    parser.add_argument("--version", action="version", version=f"autograd-lsp {__version__}")
    commands = parser.add_subparsers(title="commands", metavar="COMMAND")

    check = commands.add_parser("check", help="check Python files and folders",
                                description="Check Python files and folders (default: the current folder).")
    check.add_argument("paths", nargs="*", default=["."], metavar="PATH",
                       help="files and folders; - reads one file's text from standard input")
    check.add_argument("--format", choices=FORMATS, default="text",
                       help="text, json, sarif (SARIF 2.1.0) or github (workflow annotations)")
    check.add_argument("--output-file", "-o", metavar="FILE",
                       help="write the findings to FILE instead of standard output")
    check.add_argument("--exit-zero", action="store_true",
                       help="exit with 0 even when problems are found (2 still means an error)")
    check.add_argument("--statistics", action="store_true",
                       help="print how many findings each rule has instead of the findings")
    check.add_argument("--diff", action="store_true",
                       help="print what --fix would change, change nothing; exit 1 if it would")
    check.add_argument("--stdin-filename", metavar="PATH",
                       help="with -: the name of the piped file (for configuration and output)")
    check.add_argument("--select", action="append", metavar="RULES",
                       help="only these rules: comma-separated names or code prefixes (AG1)")
    check.add_argument("--ignore", action="append", metavar="RULES",
                       help="skip these rules: comma-separated names or code prefixes")
    check.add_argument("--fix", action="store_true", help="apply the safe fixes in place")
    check.add_argument("--no-cache", action="store_true",
                       help=f"neither read nor write the results cache ({CACHE_FOLDER}/)")
    check.add_argument("--cache-dir", metavar="DIR",
                       help=f"where to keep the results cache (default: {CACHE_FOLDER}/ "
                            "in the project root)")
    _add_locale(check)
    check.set_defaults(handler=run_check)

    rules = commands.add_parser("rules", help="list the rules")
    rules.add_argument("--format", choices=("text", "markdown"), default="text")
    _add_locale(rules)
    rules.set_defaults(handler=run_rules)

    explain = commands.add_parser("explain", help="explain a rule, with examples")
    explain.add_argument("rule", metavar="NAME|CODE")
    _add_locale(explain)
    explain.set_defaults(handler=run_explain)

    serve = commands.add_parser("serve", help="start the language server (stdio by default)")
    serve.add_argument("--tcp", type=_host_port, metavar="HOST:PORT", help="listen on TCP instead of stdio")
    # Editor clients (vscode-languageclient among them) append --stdio; it is the default.
    serve.add_argument("--stdio", action="store_true", help=argparse.SUPPRESS)
    serve.set_defaults(handler=run_serve)
    return parser


def _add_locale(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--locale", choices=LOCALES, default=None,
                        help="language of messages (default: from pyproject.toml, else en)")


def _host_port(value: str) -> tuple[str, int]:
    host, _, port = value.rpartition(":")
    host = host.strip("[]") or "127.0.0.1"
    if not port.isdigit() or not 0 < int(port) < 65536:
        raise argparse.ArgumentTypeError(f"expected HOST:PORT, got {value!r}")
    return host, int(port)


def _rule_keys(values: list[str] | None) -> list[str] | None:
    if values is None:
        return None
    return [key.strip() for value in values for key in value.split(",") if key.strip()]


# -- check ------------------------------------------------------------------------------

class ConfigCache:
    """The configuration of each folder, each pyproject.toml read once."""

    def __init__(self):
        self._by_folder: dict[Path, ProjectConfig] = {}

    def for_path(self, path: Path) -> ProjectConfig:
        from autograd_lsp.config import load_config

        # The configuration above a path governs it, also for a folder that has its
        # own pyproject.toml: whether to enter that folder is the parent's decision.
        folder = path.absolute().parent
        config = self._by_folder.get(folder)
        if config is None:
            config = load_config(folder)
            self._by_folder[folder] = config
        return config


def run_check(args) -> int:
    _import_checker()
    from autograd_lsp.checking import Job, check_files
    from autograd_lsp.config import ConfigError, check_values
    from autograd_lsp.progress import Progress
    from autograd_lsp.sources import discover

    select, ignore = _rule_keys(args.select), _rule_keys(args.ignore)
    _, problems = check_values({"select": select, "ignore": ignore})
    if problems:
        _error(f"--{problems[0]}; see `autograd-lsp rules`")
        return ERROR
    if args.fix and args.diff:
        _error("--fix and --diff exclude each other (--diff shows what --fix would do)")
        return ERROR
    if STDIN in args.paths and args.paths != [STDIN]:
        _error("- (standard input) cannot be combined with other paths")
        return ERROR
    configs = ConfigCache()
    try:
        report = Report(args.format, args.output_file, statistics=args.statistics,
                        diff=args.diff, exit_zero=args.exit_zero)
    except OSError as exc:
        _error(f"cannot write {args.output_file}: {exc.strerror or exc}")
        return ERROR
    with report:
        if args.paths == [STDIN]:
            return _check_stdin(args, configs, report, select, ignore)
        jobs: list[Job] = []
        missing_paths: list[tuple[Path, str]] = []
        try:
            for path, missing in discover(args.paths, lambda p: configs.for_path(p).is_excluded(p)):
                if missing:
                    missing_paths.append((path, missing))
                    continue
                settings = configs.for_path(path).settings_with(select=select, ignore=ignore,
                                                                  locale=args.locale)
                jobs.append(Job(path, settings))
        except ConfigError as exc:
            _error(str(exc))
            return ERROR
        fixing = args.fix or args.diff
        cache = None if args.no_cache or fixing else _open_cache(args.cache_dir)
        progress = Progress(len(jobs), sys.stderr)
        try:
            outcomes = check_files(jobs, fixing, cache, on_done=progress.advance, write=not args.diff)
        finally:
            progress.clear()
        for path, missing in missing_paths:
            report.error(path, missing)
        # Sorted by path: the same output whatever order the workers finished in.
        for outcome in sorted(outcomes, key=lambda o: o.path):
            report.outcome(outcome)
        return report.finish()


def _check_stdin(args, configs: "ConfigCache", report: "Report", select, ignore) -> int:
    """`check -`: one text from standard input, named by --stdin-filename. With
    --fix the fixed text goes to standard output (as formatters do) and the
    findings to standard error."""
    from autograd_lsp.checking import check_one
    from autograd_lsp.config import ConfigError

    path = Path(args.stdin_filename or STDIN)
    try:
        settings = configs.for_path(path if args.stdin_filename else Path.cwd() / "stdin.py") \
            .settings_with(select=select, ignore=ignore, locale=args.locale)
    except ConfigError as exc:
        _error(str(exc))
        return ERROR
    text = sys.stdin.read()
    outcome = check_one(path, settings, args.fix or args.diff, text, write=False)
    if args.fix:
        report.stream = sys.stderr
        print(outcome.fixed_text if outcome.fixed_text is not None else text, end="")
    report.outcome(outcome)
    return report.finish()
def _open_cache(folder: str | None):
    from autograd_lsp.cache import ResultsCache, project_root
    return ResultsCache(Path(folder) if folder else project_root(Path.cwd()) / CACHE_FOLDER)


class Report:
    """Prints findings as they come (text, github) or all at the end (JSON, SARIF,
    statistics), and counts. With `diff`, prints what fixing would change instead."""

    def __init__(self, format: str, output_file: str | None = None, statistics: bool = False,
                 diff: bool = False, exit_zero: bool = False):
        self.format = format
        self.statistics = statistics
        self.diff = diff
        self.exit_zero = exit_zero
        self._file = open(output_file, "w", encoding="utf-8") if output_file else None
        self.stream = self._file or sys.stdout
        self.items: list[tuple[str, Finding, int | None]] = []
        self.problem_count = 0
        self.fixed_count = 0
        self.files_with_problems = 0
        self.error_count = 0
        self.crash_count = 0
        self.changed_files = 0

    def __enter__(self) -> "Report":
        return self

    def __exit__(self, *exc_info) -> None:
        if self._file is not None:
            self._file.close()

    def _streams(self) -> bool:
        """Whether findings are printed one by one as they come."""
        return self.format in ("text", "github") and not self.statistics

    def outcome(self, outcome: Outcome) -> None:
        if self.diff:
            self.changes(outcome)
        else:
            fixed_cells = outcome.fixed_cells or [None] * len(outcome.fixed)
            for (finding, title), cell in zip(outcome.fixed, fixed_cells):
                self.fixed(outcome.path, finding, title, cell)
        for note in outcome.notes:
            self.note(outcome.path, note)
        self.crash_count += outcome.crashed
        if outcome.error is not None:
            self.error(outcome.path, outcome.error)
            return
        if not self.diff:
            self.findings(outcome.path, outcome.findings, outcome.cells or None)
        for line, reason in outcome.unread:
            self.error_count += 1
            _print(f"{outcome.path}:{line}: error: not checked: {reason}", sys.stderr)

    def findings(self, path: Path, findings: list[Finding], cells: list[int] | None = None) -> None:
        from autograd_lsp import ci_formats, output
        shown = str(path)
        self.problem_count += len(findings)
        self.files_with_problems += bool(findings)
        for finding, cell in zip(findings, cells or [None] * len(findings)):
            if not self._streams():
                self.items.append((shown, finding, cell))
            elif self.format == "github":
                _print(ci_formats.github_line(shown, finding, cell), self.stream)
            else:
                _print(output.text_line(shown, finding, cell), self.stream)

    def changes(self, outcome: Outcome) -> None:
        from autograd_lsp import ci_formats
        self.fixed_count += len(outcome.fixed)
        self.changed_files += bool(outcome.changes)
        for label, old, new in outcome.changes:
            print(ci_formats.unified_diff(label, old, new), end="", file=self.stream)

    def fixed(self, path: Path, finding: Finding, title: str, cell: int | None = None) -> None:
        from autograd_lsp import output
        self.fixed_count += 1
        # With JSON the standard output is the document; progress goes to stderr.
        stream = self.stream if self._streams() else sys.stderr
        _print(f"{output.location(str(path), cell)}:{finding.line}:{finding.column + 1}: "
               f"fixed {finding.code} [{finding.name}]: {title}", stream)

    def note(self, path: Path, message: str) -> None:
        _print(f"{path}: {message}", sys.stderr)

    def error(self, path: Path, message: str) -> None:
        self.error_count += 1
        _print(f"{path}: error: {message}", sys.stderr)

    def finish(self) -> int:
        from autograd_lsp import ci_formats, output
        if self.statistics:
            if self.items:
                print(ci_formats.statistics(self.items), file=self.stream)
        elif self.format == "json":
            print(output.json_document([output.finding_json(path, finding, cell)
                                        for path, finding, cell in self.items]), file=self.stream)
        elif self.format == "sarif":
            print(ci_formats.sarif_document(self.items, __version__), file=self.stream)
        print(self._summary(), file=sys.stderr)
        if self.crash_count:
            return CRASH
        if self.error_count:
            return ERROR
        if self.diff:
            return PROBLEMS if self.changed_files else OK
        return PROBLEMS if self.problem_count and not self.exit_zero else OK

    def _summary(self) -> str:
        if self.diff:
            if not self.fixed_count:
                return "Nothing to fix."
            return (f"Would fix {self.fixed_count} problem{'s' * (self.fixed_count != 1)} in "
                    f"{self.changed_files} file{'s' * (self.changed_files != 1)}.")
        parts = []
        if self.fixed_count:
            parts.append(f"fixed {self.fixed_count} problem{'s' * (self.fixed_count != 1)}")
        if self.problem_count:
            parts.append(f"found {self.problem_count} problem{'s' * (self.problem_count != 1)} in "
                         f"{self.files_with_problems} file{'s' * (self.files_with_problems != 1)}")
        else:
            parts.append("no problems found")
        if self.error_count:
            parts.append(f"{self.error_count} path{'s' * (self.error_count != 1)} could not be checked")
        text = ", ".join(parts)
        return text[0].upper() + text[1:] + "."


# -- rules, explain, serve ----------------------------------------------------------------

def run_rules(args) -> int:
    _import_checker()
    from autograd_lsp import output
    locale = _locale_for_catalogue(args)
    if locale is None:
        return ERROR
    render = output.rules_markdown if args.format == "markdown" else output.rules_table
    print(render(locale))
    return OK


def run_explain(args) -> int:
    _import_checker()
    from autograd_lsp.analysis import rule_by_key
    from autograd_lsp import output
    locale = _locale_for_catalogue(args)
    if locale is None:
        return ERROR
    rule = rule_by_key(args.rule.strip())
    if rule is None:
        _error(f"unknown rule {args.rule!r}; `autograd-lsp rules` lists them")
        return ERROR
    print(output.explain(rule, locale), end="")
    return OK


def _locale_for_catalogue(args) -> str | None:
    from autograd_lsp.config import ConfigError, load_config
    if args.locale:
        return args.locale
    try:
        return load_config(Path.cwd()).settings.locale
    except ConfigError as exc:
        _error(str(exc))
        return None


def run_serve(args) -> int:
    try:
        from autograd_lsp.server import run
    except ImportError as exc:
        if exc.name == "autograd_lsp.server":
            _error("the language server is not part of this installation (autograd_lsp.server is missing)")
        else:
            _error(f"cannot start the language server: {exc}")
        return ERROR
    run(tcp=args.tcp)
    return OK


def _error(message: str) -> None:
    _print(f"autograd-lsp: error: {message}", sys.stderr)


def _print(text: str, stream) -> None:
    from autograd_lsp.output import terminal_safe
    print(terminal_safe(text), file=stream)
