"""Checking many files: the results cache first, then the rest analysed on all
cores. Outcomes come back keyed by path; the caller prints them sorted, so the
output never depends on which worker finished first.

A process pool costs a fork and some pickling per file, which pays off only
when several files need analysing; small runs stay in this process.

A worker can die (a parser crash no `try` catches, the kernel's OOM killer).
The pool is then broken and which file killed it is unknown: the files not yet
done are checked again one at a time, each in a process of its own, so the
culprit is reported as not checked and every other file gets its outcome.
"""
from __future__ import annotations

import os
import re
import signal
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from autograd_lsp.analysis import Analyzer, Finding, Settings
from autograd_lsp.analysis.errors import describe_error
from autograd_lsp.cache import ResultsCache
from autograd_lsp.fixing import fix_text
from autograd_lsp.project import workspace_for
from autograd_lsp.notebook_files import NotebookError, is_notebook, parse_notebook, with_sources
from autograd_lsp.sources import SourceError, read_source, write_source
from autograd_lsp.startup import settle

# Below this many files to analyse, starting worker processes costs more than it saves.
PARALLEL_MIN_FILES = 8


@dataclass
class Outcome:
    """What checking one file gave: findings, fixes applied, notes, or an error."""
    path: Path
    findings: list[Finding] = field(default_factory=list)
    fixed: list[tuple[Finding, str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    error: str | None = None
    # Modules of the project the analysis read: findings depend on them too.
    dependencies: set = field(default_factory=set)
    # The analysis itself failed (a bug of ours or a dead worker), not the file.
    crashed: bool = False
    # Lines from which part of the file was not analysed, and why (see analysis.parse_guard).
    unread: list[tuple[int, str]] = field(default_factory=list)
    # For a notebook: the code cell (1-based) of each finding and of each fix, in
    # order; the findings' positions are then inside their cells. Empty otherwise.
    cells: list[int] = field(default_factory=list)
    fixed_cells: list[int] = field(default_factory=list)
    # With fixes applied: the file's new text, and each changed part as
    # (label, old text, new text): the file, or each changed cell of a notebook.
    fixed_text: str | None = None
    changes: list[tuple[str, str, str]] = field(default_factory=list)


@dataclass
class Job:
    path: Path
    settings: Settings
    text: str | None = None      # already read (to look it up in the cache)
    cache_key: str | None = None


def available_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def check_files(jobs: list[Job], fix: bool, cache: ResultsCache | None,
                on_done: Callable[[], None] = lambda: None,
                workers: int | None = None, write: bool = True) -> list[Outcome]:
    """The outcome of every job, in the order of `jobs`. With `fix` and not
    `write`, fixed texts are only kept in the outcomes (for `--diff`)."""
    outcomes: dict[int, Outcome] = {}
    todo: list[int] = []
    for number, job in enumerate(jobs):
        # Notebooks are not cached: an entry holds findings without their cells.
        if fix or cache is None or is_notebook(job.path):
            todo.append(number)
            continue
        try:
            job.text = read_source(job.path).text
        except SourceError as exc:
            outcomes[number] = Outcome(job.path, error=str(exc))
            on_done()
            continue
        job.cache_key = cache.key(job.text, job.settings)
        cached = cache.get(job.cache_key)
        if cached is None:
            todo.append(number)
        else:
            outcomes[number] = Outcome(job.path, findings=cached)
            on_done()

    workers = available_cores() if workers is None else workers
    parallel = workers > 1 and len(todo) >= PARALLEL_MIN_FILES
    if parallel:
        warm_project_imports([jobs[n] for n in todo])
    # Frozen, the imported modules are never walked by the collector (nor, in a
    # forked worker, touched and so copied); see startup.settle.
    settle()
    if parallel:
        # Largest first, so that one big file does not finish alone at the end.
        todo.sort(key=lambda n: -_size(jobs[n]))
        _check_in_pool(jobs, todo, fix, workers, outcomes, on_done, write)
    else:
        for number in todo:
            job = jobs[number]
            outcomes[number] = check_one(job.path, job.settings, fix, job.text, write)
            on_done()

    if cache is not None and not fix:
        for number in todo:
            outcome, key = outcomes[number], jobs[number].cache_key
            # Only complete analyses are worth keeping; errors are retried next time. A
            # file whose findings depend on other modules is analysed afresh each time,
            # and so is a notebook (an entry holds findings without their cells).
            if key is not None and outcome.error is None and not outcome.dependencies \
                    and not outcome.unread and not outcome.cells:
                cache.put(key, outcome.findings)
    return [outcomes[number] for number in range(len(jobs))]


# The import statements at the top level of a file (`from x import (a,\n b)` whole).
_TOP_LEVEL_IMPORT = re.compile(r"^(?:from[ \t]+[\w.]+[ \t]+import[ \t]*(?:\([^)]*\)|[^\n]*)|import[ \t][^\n]*)",
                               re.MULTILINE)


def warm_project_imports(jobs: list[Job]) -> None:
    """Run here, once, the project modules the files import at their top level.
    The workers forked next inherit them: each worker would otherwise run every
    module the files it is given import, and the same shared modules (a package's
    layers and builders) ran once per worker. A module's run depends only on its
    text and its import depth, so what a worker inherits is what it would have
    computed (`Workspace.module_namespace`)."""
    for job in jobs:
        if is_notebook(job.path):
            continue
        try:
            text = job.text if job.text is not None else read_source(job.path).text
        except SourceError:
            continue
        imports = "\n".join(m.group(0) for m in _TOP_LEVEL_IMPORT.finditer(text))
        if not imports:
            continue
        try:
            _analyzer(job.path).analyze(imports, job.settings, path=str(job.path))
        except Exception:  # noqa: BLE001 - only a head start: the worker reports any failure
            continue


def _check_in_pool(jobs, todo, fix, workers, outcomes, on_done, write=True) -> None:
    # Imported here: checking one file (an editor's or pre-commit's usual call) never
    # needs a pool, and these imports are a tenth of its time.
    from concurrent.futures import ProcessPoolExecutor, as_completed
    from concurrent.futures.process import BrokenProcessPool
    pending = set(todo)
    try:
        with ProcessPoolExecutor(max_workers=min(workers, len(todo))) as pool:
            futures = {pool.submit(check_one, jobs[n].path, jobs[n].settings, fix, jobs[n].text,
                                   write): n
                       for n in todo}
            try:
                for future in as_completed(futures):
                    outcomes[futures[future]] = future.result()
                    pending.discard(futures[future])
                    on_done()
            except BrokenProcessPool:
                # Keep what finished before the pool broke.
                for future, number in futures.items():
                    if number in pending and future.done() and not future.cancelled() \
                            and future.exception() is None:
                        outcomes[number] = future.result()
                        pending.discard(number)
                        on_done()
                raise
    except BrokenProcessPool:
        for number in sorted(pending):
            job = jobs[number]
            outcomes[number] = check_alone(job.path, job.settings, fix, job.text, write)
            on_done()


def check_alone(path: Path, settings: Settings, fix: bool, text: str | None = None,
                write: bool = True) -> Outcome:
    """`check_one` in a process of its own: if that process dies, only this file's
    outcome says so."""
    import multiprocessing
    context = multiprocessing.get_context("fork")
    receiver, sender = context.Pipe(duplex=False)
    process = context.Process(target=_check_and_send, args=(sender, path, settings, fix, text, write))
    process.start()
    sender.close()
    try:
        outcome = receiver.recv()
    except EOFError:
        outcome = None
    process.join()
    receiver.close()
    if outcome is None:
        code = process.exitcode or 0
        cause = signal.Signals(-code).name if code < 0 and -code in signal.valid_signals() \
            else f"exit code {code}"
        return Outcome(path, error=f"not checked: the analysis crashed ({cause})", crashed=True)
    return outcome


def _check_and_send(sender, path, settings, fix, text, write) -> None:
    sender.send(check_one(path, settings, fix, text, write))
    sender.close()


def _size(job: Job) -> int:
    if job.text is not None:
        return len(job.text)
    try:
        return job.path.stat().st_size
    except OSError:
        return 0


def _analyzer(path: Path | None) -> Analyzer:
    """An analyzer reading the project's modules around `path`, keeping no facts
    for hovers (nothing here asks for them)."""
    analyzer = Analyzer(workspace=workspace_for(path)) if path is not None else Analyzer()
    analyzer.keeps_facts = False
    analyzer.reuses_runs = False
    return analyzer


def check_one(path: Path, settings: Settings, fix: bool, text: str | None = None,
              write: bool = True) -> Outcome:
    """Analyse (and with `fix`, fix) one file. Never raises: in a worker process
    an exception would lose the file's outcome, so every failure becomes an error.
    `text`: the file's text, already read (or piped in); `write`: with `fix`,
    write the fixed text to the file (otherwise it is only kept in the outcome)."""
    outcome = Outcome(path)
    analyzer = _analyzer(None)
    try:
        source = None
        if text is None or (fix and write):
            source = read_source(path)
            text = source.text
        if is_notebook(path):
            return _check_notebook(path, text, source, settings, fix, write, outcome)
        if fix:
            # The project's modules, as `check` reads them: the same findings get fixed.
            analyzer = _analyzer(path)
            result = fix_text(text, settings, filename=str(path), analyzer=analyzer, path=str(path))
            if result.applied:
                if write:
                    write_source(source, result.text)
                outcome.fixed = [(applied.finding, applied.fix.title) for applied in result.applied]
                outcome.fixed_text = result.text
                outcome.changes = [(str(path), text, result.text)]
            if result.problem:
                outcome.notes.append(result.problem)
            outcome.findings = list(result.findings)
        else:
            analyzer = _analyzer(path)
            outcome.findings = list(analyzer.analyze(text, settings, path=str(path)))
            outcome.dependencies = set(analyzer.dependencies)
        outcome.unread = list(analyzer.unread)
        _note_internal_errors(outcome, analyzer)
    except SourceError as exc:
        outcome.error = str(exc)
    except Exception as exc:  # one file's analysis failure must not stop the run
        outcome.error = f"internal error while analysing ({describe_error(exc)}); please report it"
        outcome.crashed = True
    return outcome


def _check_notebook(path: Path, text: str, source, settings: Settings, fix: bool, write: bool,
                    outcome: Outcome) -> Outcome:
    """Code cells analysed as one program; with `fix`, fixed cells written back
    into the notebook's JSON, everything else in the file untouched."""
    from autograd_lsp.notebooks import analyze_cells, fix_cells

    try:
        notebook = parse_notebook(text)
    except NotebookError as exc:
        outcome.error = str(exc)
        return outcome
    if notebook.language != "python":
        outcome.notes.append(f"skipped: a {notebook.language} notebook, not Python")
        return outcome
    # The project's modules, for the cells' imports of them.
    analyzer = _analyzer(path)
    if fix:
        result = fix_cells(list(notebook.sources), settings, analyzer, str(path))
        if result.changed:
            outcome.fixed_text = with_sources(notebook, result.changed)
            if write:
                write_source(source, outcome.fixed_text)
            outcome.fixed = [(placed.finding, fix.title) for placed, fix in result.applied]
            outcome.fixed_cells = [placed.cell for placed, _ in result.applied]
            outcome.changes = [(f"{path}:cell {number + 1}", notebook.sources[number], new)
                               for number, new in sorted(result.changed.items())]
        if result.problem:
            outcome.notes.append(result.problem)
        placed = result.findings
    else:
        placed = analyze_cells(list(notebook.sources), settings, analyzer, str(path))
    outcome.findings = [item.finding for item in placed]
    outcome.cells = [item.cell for item in placed]
    _note_internal_errors(outcome, analyzer)
    return outcome


def _note_internal_errors(outcome: Outcome, analyzer: Analyzer) -> None:
    """A failure of the analysis inside one part of the file (the rest was still
    checked) is said, so that it reaches a bug report instead of passing as
    "no problems there"."""
    for message in dict.fromkeys(message for _, message in analyzer.internal_errors):
        outcome.notes.append(f"note: part of this file was not analysed after an internal error "
                             f"({message}); please report it")
