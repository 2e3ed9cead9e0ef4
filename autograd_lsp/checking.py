"""Checking many files: the results cache first, then the rest analysed on all
cores. Outcomes come back keyed by path; the caller prints them sorted, so the
output never depends on which worker finished first.

A process pool costs a fork and some pickling per file, which pays off only
when several files need analysing; small runs stay in this process.
"""
from __future__ import annotations

import os
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from analysis import Analyzer, Finding, Settings
from autograd_lsp.cache import ResultsCache
from autograd_lsp.fixing import fix_text
from autograd_lsp.project import workspace_for
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
                workers: int | None = None) -> list[Outcome]:
    """The outcome of every job, in the order of `jobs`."""
    outcomes: dict[int, Outcome] = {}
    todo: list[int] = []
    for number, job in enumerate(jobs):
        if fix or cache is None:
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
    if workers > 1 and len(todo) >= PARALLEL_MIN_FILES:
        # Largest first, so that one big file does not finish alone at the end.
        todo.sort(key=lambda n: -_size(jobs[n]))
        # Forked workers share the imported modules; frozen, the collector never
        # touches (and so never copies) them in a worker.
        settle()
        with ProcessPoolExecutor(max_workers=min(workers, len(todo))) as pool:
            futures = {pool.submit(check_one, jobs[n].path, jobs[n].settings, fix, jobs[n].text): n
                       for n in todo}
            for future in as_completed(futures):
                outcomes[futures[future]] = future.result()
                on_done()
    else:
        for number in todo:
            job = jobs[number]
            outcomes[number] = check_one(job.path, job.settings, fix, job.text)
            on_done()

    if cache is not None and not fix:
        for number in todo:
            outcome, key = outcomes[number], jobs[number].cache_key
            # Only complete analyses are worth keeping; errors are retried next time. A
            # file whose findings depend on other modules is analysed afresh each time.
            if key is not None and outcome.error is None and not outcome.dependencies:
                cache.put(key, outcome.findings)
    return [outcomes[number] for number in range(len(jobs))]


def _size(job: Job) -> int:
    if job.text is not None:
        return len(job.text)
    try:
        return job.path.stat().st_size
    except OSError:
        return 0


def check_one(path: Path, settings: Settings, fix: bool, text: str | None = None) -> Outcome:
    """Analyse (and with `fix`, fix) one file. Never raises: in a worker process
    an exception would lose the file's outcome, so every failure becomes an error."""
    outcome = Outcome(path)
    try:
        if fix or text is None:
            source = read_source(path)
            text = source.text
        if fix:
            result = fix_text(text, settings, filename=str(path))
            if result.applied:
                write_source(source, result.text)
                outcome.fixed = [(applied.finding, applied.fix.title) for applied in result.applied]
            if result.problem:
                outcome.notes.append(result.problem)
            outcome.findings = list(result.findings)
        else:
            analyzer = Analyzer(workspace=workspace_for(path))
            outcome.findings = list(analyzer.analyze(text, settings, path=str(path)))
            outcome.dependencies = set(analyzer.dependencies)
    except SourceError as exc:
        outcome.error = str(exc)
    except Exception as exc:  # one file's analysis failure must not stop the run
        outcome.error = (f"internal error while analysing ({type(exc).__name__}: {exc}); "
                         "please report it")
    return outcome
