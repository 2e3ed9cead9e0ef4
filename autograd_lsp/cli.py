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

from autograd_lsp.startup import quiet_gc, quiet_parser_warnings

with quiet_gc():
    # Analyzer is re-exported: callers and tests reach the analysis through `cli.Analyzer`.
    from analysis import Analyzer, Finding, rule_by_key  # noqa: F401
    from autograd_lsp import __version__, output
    from autograd_lsp.cache import CACHE_FOLDER, ResultsCache, project_root
    from autograd_lsp.checking import Job, Outcome, check_files
    from autograd_lsp.config import LOCALES, ConfigError, ProjectConfig, check_values, load_config
    from autograd_lsp.progress import Progress
    from autograd_lsp.sources import discover

OK, PROBLEMS, ERROR, CRASH = 0, 1, 2, 3


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
    check.add_argument("paths", nargs="*", default=["."], metavar="PATH")
    check.add_argument("--format", choices=("text", "json"), default="text")
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
        # The configuration above a path governs it, also for a folder that has its
        # own pyproject.toml: whether to enter that folder is the parent's decision.
        folder = path.absolute().parent
        config = self._by_folder.get(folder)
        if config is None:
            config = load_config(folder)
            self._by_folder[folder] = config
        return config


def run_check(args) -> int:
    select, ignore = _rule_keys(args.select), _rule_keys(args.ignore)
    _, problems = check_values({"select": select, "ignore": ignore})
    if problems:
        _error(f"--{problems[0]}; see `autograd-lsp rules`")
        return ERROR
    configs = ConfigCache()
    report = Report(args.format)
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
    cache = None if args.no_cache or args.fix else _open_cache(args.cache_dir)
    progress = Progress(len(jobs), sys.stderr)
    try:
        outcomes = check_files(jobs, args.fix, cache, on_done=progress.advance)
    finally:
        progress.clear()
    for path, missing in missing_paths:
        report.error(path, missing)
    # Sorted by path: the same output whatever order the workers finished in.
    for outcome in sorted(outcomes, key=lambda o: o.path):
        report.outcome(outcome)
    return report.finish()


def _open_cache(folder: str | None) -> ResultsCache:
    return ResultsCache(Path(folder) if folder else project_root(Path.cwd()) / CACHE_FOLDER)


class Report:
    """Prints findings as they come (text) or all at the end (JSON), and counts."""

    def __init__(self, format: str):
        self.format = format
        self.items: list[dict] = []
        self.problem_count = 0
        self.fixed_count = 0
        self.files_with_problems = 0
        self.error_count = 0
        self.crash_count = 0

    def outcome(self, outcome: Outcome) -> None:
        fixed_cells = outcome.fixed_cells or [None] * len(outcome.fixed)
        for (finding, title), cell in zip(outcome.fixed, fixed_cells):
            self.fixed(outcome.path, finding, title, cell)
        for note in outcome.notes:
            self.note(outcome.path, note)
        self.crash_count += outcome.crashed
        if outcome.error is not None:
            self.error(outcome.path, outcome.error)
            return
        self.findings(outcome.path, outcome.findings, outcome.cells or None)
        for line, reason in outcome.unread:
            self.error_count += 1
            _print(f"{outcome.path}:{line}: error: not checked: {reason}", sys.stderr)

    def findings(self, path: Path, findings: list[Finding], cells: list[int] | None = None) -> None:
        shown = str(path)
        self.problem_count += len(findings)
        self.files_with_problems += bool(findings)
        for finding, cell in zip(findings, cells or [None] * len(findings)):
            if self.format == "json":
                self.items.append(output.finding_json(shown, finding, cell))
            else:
                _print(output.text_line(shown, finding, cell), sys.stdout)

    def fixed(self, path: Path, finding: Finding, title: str, cell: int | None = None) -> None:
        self.fixed_count += 1
        # With JSON the standard output is the document; progress goes to stderr.
        stream = sys.stderr if self.format == "json" else sys.stdout
        _print(f"{output.location(str(path), cell)}:{finding.line}:{finding.column + 1}: "
               f"fixed {finding.code} [{finding.name}]: {title}", stream)

    def note(self, path: Path, message: str) -> None:
        _print(f"{path}: {message}", sys.stderr)

    def error(self, path: Path, message: str) -> None:
        self.error_count += 1
        _print(f"{path}: error: {message}", sys.stderr)

    def finish(self) -> int:
        if self.format == "json":
            print(output.json_document(self.items))
        else:
            print(self._summary(), file=sys.stderr)
        if self.crash_count:
            return CRASH
        if self.error_count:
            return ERROR
        return PROBLEMS if self.problem_count else OK

    def _summary(self) -> str:
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
    locale = _locale_for_catalogue(args)
    if locale is None:
        return ERROR
    render = output.rules_markdown if args.format == "markdown" else output.rules_table
    print(render(locale))
    return OK


def run_explain(args) -> int:
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
    print(output.terminal_safe(text), file=stream)
