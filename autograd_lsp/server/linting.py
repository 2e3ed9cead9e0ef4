"""Running the core on a document: debounced, one at a time, never stale.

`analyse_now` gives the analysis of the document's current text (reusing it
when neither the text nor the settings changed); `schedule` runs it after the
debounce and publishes the result when the client uses push diagnostics.
"""
from __future__ import annotations

import asyncio
import os
import threading

from autograd_lsp.analysis.engine import AnalysisStopped
from autograd_lsp.server.diagnostics import to_diagnostics
from autograd_lsp.server.documents import (ANALYSIS_TIMEOUT_ENV, ANALYSIS_TIMEOUT_SECONDS,
                                           MAX_DOCUMENT_CHARS, Analysis, path_of)
from autograd_lsp.server.guard import log_to_client, report_exception
from autograd_lsp.server.imports import DEPENDENT_DELAY_SECONDS, workspace_of
from autograd_lsp.server.positions import LineIndex
from lsprotocol import types


def analysis_timeout() -> float:
    try:
        seconds = float(os.environ.get(ANALYSIS_TIMEOUT_ENV, "")) / 1000
    except ValueError:
        return ANALYSIS_TIMEOUT_SECONDS
    return seconds if seconds > 0 else ANALYSIS_TIMEOUT_SECONDS


async def analyse_now(ls, uri: str, with_facts: bool = False) -> Analysis | None:
    """The analysis of `uri` as the client has it now; None when it is not open or
    when the analysis could not be completed (too slow, cancelled): a result
    that was not computed is never passed off as "no problems".
    `with_facts`: also have the document's Analyzer hold this analysis (for hovers),
    re-running it if the Analyzer was dropped to save memory."""
    if ls.workspace.get_notebook_document(cell_uri=uri) is not None:
        from autograd_lsp.server.notebook_sync import analyse_cell
        return await analyse_cell(ls, uri, with_facts)
    state = ls.documents.find(uri)
    if state is None:
        return None
    if not ls.capabilities.watched_files_registration:
        ls.settings.notice_changed_projects()
    state.waiting += 1
    state.max_waiting = max(state.max_waiting, state.waiting)
    async with state.lock:
        state.waiting -= 1
        document = ls.workspace.get_text_document(uri)
        version, text = document.version, document.source
        generation = ls.settings.generation
        if state.is_current(version, generation, text) and (not with_facts or state.analyzer is not None):
            return state.latest
        doc_settings = ls.settings.for_document(uri, path_of(uri))
        _report_settings_problems(ls)
        findings: tuple | None = ()
        if len(text) > MAX_DOCUMENT_CHARS:
            _tell_once(ls, state, "size", f"autograd-lsp: {_name(uri)} is not checked: it has "
                       f"{len(text):,} characters, more than the {MAX_DOCUMENT_CHARS:,} analysed")
        elif doc_settings.enabled and not doc_settings.excluded:
            findings = await _run_analyzer(ls, state, text, doc_settings.settings, path_of(uri))
            if findings is None:
                return None
        analysis = Analysis(version, generation, text, findings, doc_settings,
                            LineIndex(text, ls.workspace.position_encoding))
        if ls.documents.find(uri) is state:
            state.latest = analysis
        return analysis


async def _run_analyzer(ls, state, text, settings, path) -> tuple | None:
    """The findings; None when the analysis was stopped (too slow, or the request
    that wanted it was cancelled). A stopped analysis stops between two chunks,
    so that it never keeps a worker thread from the next document."""
    loop = asyncio.get_running_loop()
    state.analyses += 1
    analyzer = ls.documents.analyzer_for(state, workspace_of(ls, state.uri))
    stop = threading.Event()
    errors_before = len(analyzer.internal_errors)
    future = loop.run_in_executor(ls.analysis_pool, _analyse, analyzer, text, settings, stop,
                                  None if path is None else str(path))
    timeout = analysis_timeout()
    try:
        findings = await asyncio.wait_for(asyncio.shield(future), timeout)
    except asyncio.TimeoutError:
        stop.set()
        ls.documents.drop_analyzer(state)
        _tell_once(ls, state, "time", f"autograd-lsp: {_name(state.uri)} is not checked: its "
                   f"analysis takes more than {timeout:g} s")
        return None
    except asyncio.CancelledError:
        stop.set()
        raise
    except Exception:
        report_exception(ls, f"analysis of {state.uri}")
        ls.documents.drop_analyzer(state)
        return ()
    if findings is None:
        return None
    log_internal_errors(ls, state, [message for _, message in analyzer.internal_errors[errors_before:]])
    state.told.discard("time")
    state.dependencies = frozenset(analyzer.dependencies)
    return tuple(findings)


def _analyse(analyzer, text, settings, stop: threading.Event, path: str | None):
    try:
        return analyzer.analyze(text, settings, path=path, should_stop=stop.is_set)
    except AnalysisStopped:
        return None


def log_internal_errors(ls, state, messages: list) -> None:
    """Part of the document was not analysed (the rest was): each error is logged
    once per document, for a bug report, without a popup on every keystroke."""
    for message in messages:
        if ("internal", message) not in state.told:
            state.told.add(("internal", message))
            log_to_client(ls, f"autograd-lsp: part of {_name(state.uri)} was not analysed after an "
                          f"internal error ({message}); please report it", types.MessageType.Warning)


def _tell_once(ls, state, what: str, message: str) -> None:
    if what in state.told:
        return
    state.told.add(what)
    ls.window_show_message(types.ShowMessageParams(type=types.MessageType.Warning, message=message))


def _name(uri: str) -> str:
    return uri.rstrip("/").rsplit("/", 1)[-1] or uri


def schedule(ls, uri: str, delay: float) -> None:
    """Analyse `uri` after `delay` seconds unless a newer change comes first."""
    if ls.workspace.get_notebook_document(notebook_uri=uri) is not None:
        from autograd_lsp.server.notebook_sync import schedule_notebook
        return schedule_notebook(ls, uri, delay)
    state = ls.documents.find(uri)
    if state is None:
        return
    pending = state.pending
    if pending is not None and not pending.done():
        if state.running:
            # Past the wait, a newer change must not cancel a run that is already in a
            # worker thread: it finishes, keeps its caches, publishes only if current,
            # and then runs once more for the newest version.
            state.rerun_after = delay
            return
        pending.cancel()
    state.pending = asyncio.ensure_future(_debounced(ls, uri, state, delay))


async def _debounced(ls, uri: str, state, delay: float) -> None:
    while True:
        if delay:
            await asyncio.sleep(delay)
        state.running, state.rerun_after = True, None
        try:
            await asyncio.shield(publish(ls, uri))
        finally:
            state.running = False
        if state.rerun_after is None or ls.documents.find(uri) is not state:
            return
        delay = state.rerun_after


async def publish(ls, uri: str) -> None:
    """Push the current diagnostics of `uri` (push clients only)."""
    if ls.capabilities.pull_diagnostics:
        return
    try:
        analysis = await analyse_now(ls, uri)
        state = ls.documents.find(uri)
        if analysis is None or state is None or state.latest is not analysis:
            return
        # Never publish a version the client has moved past.
        if ls.workspace.get_text_document(uri).version != analysis.version:
            return
        if state.published == analysis.result_id:
            return
        ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(
            uri=uri, version=analysis.version, diagnostics=to_diagnostics(analysis)))
        state.published = analysis.result_id
    except Exception:
        report_exception(ls, f"publishing diagnostics of {uri}")


def _report_settings_problems(ls) -> None:
    problems, ls.settings.problems[:] = list(ls.settings.problems), []
    for problem in dict.fromkeys(problems):
        ls.window_show_message(types.ShowMessageParams(
            type=types.MessageType.Warning, message=f"autograd-lsp: {problem}"))


async def reanalyse_open_documents(ls) -> None:
    """After a settings change: push clients get new diagnostics, pull clients a refresh."""
    ls.settings.changed()
    if ls.capabilities.pull_diagnostics:
        if ls.capabilities.diagnostic_refresh:
            try:
                await ls.workspace_diagnostic_refresh_async(None)
            except Exception:
                report_exception(ls, "workspace/diagnostic/refresh")
        return
    for uri in ls.documents.uris():
        schedule(ls, uri, 0)


def refresh_dependents(ls, changed_uri: str, stale: set) -> None:
    """Open documents whose last analysis read a module in `stale` are out of date:
    their cached results and runs are dropped, and they are analysed again (push
    clients) or the client is asked to pull again."""
    if not stale:
        return
    dependents = []
    for uri in ls.documents.uris():
        state = ls.documents.find(uri)
        if uri == changed_uri or state is None or not state.dependencies & stale:
            continue
        if state.analyzer is not None:
            state.analyzer.forget_modules(stale)
        state.latest, state.published = None, None
        dependents.append(uri)
    if not dependents:
        return
    if ls.capabilities.pull_diagnostics:
        if ls.capabilities.diagnostic_refresh:
            asyncio.ensure_future(_refresh(ls))
        return
    for uri in dependents:
        schedule(ls, uri, max(ls.debounce_seconds, DEPENDENT_DELAY_SECONDS))


async def _refresh(ls) -> None:
    try:
        await ls.workspace_diagnostic_refresh_async(None)
    except Exception:
        report_exception(ls, "workspace/diagnostic/refresh")
